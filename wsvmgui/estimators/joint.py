"""Joint multiclass weighted SVM over the weight simplex (Wu, Zhang & Liu 2010).

One weighted K-class truncated-hinge SVM per interior grid weight ``pi = m / N``;
probabilities from where on the simplex each point's predicted class changes, by the
direct or the indirect scheme (METHODS section 4).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError
from ..joint.dca import minimal_truncation
from ..joint.features import FeatureMap
from ..joint.grid_fit import GridFit, fit_grid
from ..joint.schemes import (
    H_METHODS,
    border_to_proba,
    class_counts,
    direct_scheme,
    indirect_scheme,
    proba_to_border,
    qualifying_cells,
)
from ..joint.simplex_grid import SimplexGrid, check_resolution
from ..joint.subproblem import DEFAULT_KKT_TOL, DEFAULT_QP_SOLVER, JointProblem
from ..ladder.tuning import stratified_split
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import KERNELS, Kernel, default_sigma_grid
from ._validation import validate_fit_data, validate_predict_data
from .report import ProbabilityReport

SCHEMES = ("indirect", "direct")
#: Default tuning grid of C = 1 / (2 n lambda): every value tuning chose on Wu 2010 Ex.1
#: lay in 3..30 (benchmarks/results/joint_accuracy.md); one grid per value is costly,
#: so the grid is shorter than the binary ladder's.
DEFAULT_C_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
#: Default h for the indirect scheme.  With an oracle classifier the exact grid count
#: recovers p better (tests/test_joint_schemes.py), but on fitted grids (Wu 2010 Ex.1,
#: three tuned seeds) the continuous volume share was more accurate (L1 0.108 vs 0.119,
#: EGKL 0.030 vs 0.035; benchmarks/results/joint_accuracy.md) and is far cheaper, so it
#: is the default; "count" stays selectable.
DEFAULT_H_METHOD = "continuous"
#: Floor on returned probabilities (keeps log-likelihoods finite).
PROBA_FLOOR = 1e-6


def _resolve_truncation(truncation, K: int) -> float:
    if truncation is None or (isinstance(truncation, str) and truncation == "minimal"):
        return minimal_truncation(K)
    if truncation is False or (isinstance(truncation, str) and truncation == "none"):
        return -np.inf
    try:
        s = float(truncation)
    except (TypeError, ValueError):
        raise InputError(
            f"truncation must be 'minimal', 'none' or a number <= 0, got {truncation!r}"
        ) from None
    if not s <= 0:
        raise InputError(f"truncation point s must be <= 0, got {s!r}")
    return s


class JointWSVMClassifier(ClassifierMixin, BaseEstimator):
    """Joint K-class weighted SVM on the simplex of class weights.

    Parameters
    ----------
    N : int
        Grid resolution: weights ``m / N`` with every ``m_k >= 1`` (``C(N-1, K-1)`` fits).
    d_pi : float or None
        Grid spacing; when given it overrides ``N`` (``N = 1 / d_pi``, an integer).
    kernel : {"linear", "rbf", "poly"}
    lam : float or None
        Penalty lambda (``C = 1 / (2 n lambda)``); None (with ``C`` None) tunes it.
    C : float or None
        Alternative to ``lam`` (``lam`` wins when both are given).
    sigma : float or None
        RBF width; None tunes it over ``sigmas`` (default (1/4 .. 3/2) sigma_M).
    degree, coef0, poly_gamma : polynomial kernel ``(poly_gamma x'x' + coef0)^degree``.
    scheme : {"indirect", "direct"}
    h_method : {"count", "continuous"} or None
        The ``h`` the indirect scheme inverts (None: ``DEFAULT_H_METHOD``).
    truncation : "minimal", "none", or float <= 0
        Truncation point ``s`` of the hinge (default ``-1/(K-1)``).
    lambdas, sigmas : sequences or None
        Tuning grids (defaults: lambda from ``DEFAULT_C_GRID`` and
        :func:`wsvmgui.solvers.kernels.default_sigma_grid`).
    tune_fraction : float
        Share held out for tuning when no tuning set is given (then refit on all data).
    warm_start : bool
        Start each grid fit's DCA (and its working set) from the neighbouring solution.
    n_jobs : int
        Worker threads for the grid (-1: all cores).
    qp_solver : str
        "direct" (Clarabel), or a qpsolvers backend ("clarabel", "quadprog").
    kkt_tol : float
        Largest accepted subproblem KKT residual (margin units).
    random_state : int or None
        Seed of the tuning split.
    """

    def __init__(
        self,
        N: int = 50,
        d_pi: float | None = None,
        kernel: str = "linear",
        lam: float | None = None,
        C: float | None = None,
        sigma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        poly_gamma: float = 1.0,
        scheme: str = "indirect",
        h_method: str | None = None,
        truncation="minimal",
        lambdas=None,
        sigmas=None,
        tune_fraction: float = 0.5,
        warm_start: bool = True,
        n_jobs: int | None = 1,
        qp_solver: str = DEFAULT_QP_SOLVER,
        kkt_tol: float = DEFAULT_KKT_TOL,
        random_state: int | None = None,
    ) -> None:
        self.N = N
        self.d_pi = d_pi
        self.kernel = kernel
        self.lam = lam
        self.C = C
        self.sigma = sigma
        self.degree = degree
        self.coef0 = coef0
        self.poly_gamma = poly_gamma
        self.scheme = scheme
        self.h_method = h_method
        self.truncation = truncation
        self.lambdas = lambdas
        self.sigmas = sigmas
        self.tune_fraction = tune_fraction
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.qp_solver = qp_solver
        self.kkt_tol = kkt_tol
        self.random_state = random_state

    # ----------------------------------------------------------------- parameters
    def _resolution(self) -> int:
        if self.d_pi is not None:
            d = float(self.d_pi)
            if not (np.isfinite(d) and 0 < d < 1):
                raise InputError(f"d_pi must lie strictly between 0 and 1, got {self.d_pi!r}")
            N = round(1.0 / d)
            if abs(N * d - 1.0) > 1e-6:
                raise InputError(f"1/d_pi must be an integer, got d_pi = {self.d_pi!r}")
            return int(N)
        if not isinstance(self.N, (int, np.integer)) and not float(self.N).is_integer():
            raise InputError(f"N must be an integer, got {self.N!r}")
        return int(self.N)

    def _check_params(self) -> None:
        if self.kernel not in KERNELS:
            raise InputError(f"unknown kernel {self.kernel!r}; choose one of {', '.join(KERNELS)}")
        if self.scheme not in SCHEMES:
            raise InputError(f"unknown scheme {self.scheme!r}; choose one of {', '.join(SCHEMES)}")
        if self.h_method is not None and self.h_method not in H_METHODS:
            raise InputError(
                f"unknown h method {self.h_method!r}; choose one of {', '.join(H_METHODS)}"
            )
        for name in ("lam", "C", "sigma"):
            v = getattr(self, name)
            if v is not None and not (np.isfinite(v) and v > 0):
                raise InputError(f"{name} must be a positive number, got {v!r}")

    def _kernel_for(self, sigma: float | None) -> Kernel | None:
        if self.kernel == "linear":
            return None
        if self.kernel == "rbf":
            return Kernel("rbf", sigma=float(sigma))
        return Kernel(
            "poly", degree=int(self.degree), coef0=float(self.coef0), gamma=float(self.poly_gamma)
        )

    # ----------------------------------------------------------------- fitting
    def _fit_one(
        self, X, yi, K, grid, lam, sigma, s, tracker, should_cancel
    ) -> tuple[FeatureMap, GridFit]:
        fmap = FeatureMap.fit(X, self._kernel_for(sigma))
        problem = JointProblem(fmap.Z_train, yi, K)
        C = 1.0 / (2.0 * X.shape[0] * lam)

        def step(done, total, partial):
            tracker.step(1, partial)

        gf = fit_grid(
            problem,
            grid,
            C,
            s,
            warm_start=self.warm_start,
            n_jobs=self.n_jobs,
            qp_solver=self.qp_solver,
            kkt_tol=self.kkt_tol,
            progress=step,
            should_cancel=should_cancel,
        )
        return fmap, gf

    def fit(
        self,
        X,
        y,
        *,
        X_tune=None,
        y_tune=None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ):
        """Fit the grid (tuning lambda, and sigma for RBF, unless fixed).

        Parameters
        ----------
        X : array-like, shape (n, p)
        y : array-like, shape (n,)
        X_tune, y_tune : array-like, optional
            Independent tuning set; otherwise ``tune_fraction`` of the data is held out
            for tuning and the chosen parameters are refitted on all data.
        progress, should_cancel : see :mod:`wsvmgui.progress` (one unit per fit).

        Returns
        -------
        self
        """
        self._check_params()
        X, y = validate_fit_data(self, X, y)
        classes, yi = np.unique(y, return_inverse=True)
        K = classes.size
        N = self._resolution()
        check_resolution(K, N)
        s = _resolve_truncation(self.truncation, K)
        grid = SimplexGrid.build(K, N)
        self.classes_ = classes
        self.simplex_grid_ = grid
        self.grid_ = grid.weights
        self.truncation_ = s
        self.h_method_ = self.h_method or DEFAULT_H_METHOD
        n = X.shape[0]
        fixed_lam = (
            self.lam
            if self.lam is not None
            else (1.0 / (2.0 * n * self.C) if self.C is not None else None)
        )
        need_sigma = self.kernel == "rbf" and self.sigma is None
        if fixed_lam is not None and not need_sigma:
            tracker = ProgressTracker(grid.size, progress, should_cancel)
            sigma = self.sigma
            self.features_, self.fit_ = self._fit_one(
                X, yi, K, grid, fixed_lam, sigma, s, tracker, should_cancel
            )
            self.lam_, self.sigma_ = float(fixed_lam), sigma
            self.tuning_table_ = []
            return self._finish(n)
        # ---- tuning by the tuning-set log-likelihood (paper Section 4.3)
        if X_tune is not None:
            Xt, yt = validate_fit_data(self, X_tune, y_tune, reset=False)
            unknown = ~np.isin(yt, classes)
            if unknown.any():
                raise InputError(f"tuning label {yt[unknown][0]!r} is not a training class")
            X_fit, y_fit = X, y
        else:
            X_fit, Xt, y_fit, yt = stratified_split(X, y, self.tune_fraction, self.random_state)
            if np.unique(y_fit).size != K:
                raise InputError("the tuning split left a class without training points")
        yi_fit = np.searchsorted(classes, y_fit)
        yi_t = np.searchsorted(classes, yt)
        lams = (
            [fixed_lam]
            if fixed_lam is not None
            else list(
                self.lambdas
                if self.lambdas is not None
                else 1.0 / (2.0 * X_fit.shape[0] * np.asarray(DEFAULT_C_GRID))
            )
        )
        if self.kernel == "rbf":
            sigmas = (
                [self.sigma]
                if self.sigma is not None
                else list(
                    self.sigmas if self.sigmas is not None else default_sigma_grid(X_fit, y_fit)
                )
            )
        else:
            sigmas = [None]
        n_cand = len(lams) * len(sigmas)
        total = grid.size * (n_cand + (1 if X_tune is None else 0))
        tracker = ProgressTracker(total, progress, should_cancel)
        table, best = [], None
        for sg in sigmas:
            for lm in lams:
                fmap, gf = self._fit_one(
                    X_fit, yi_fit, K, grid, float(lm), sg, s, tracker, should_cancel
                )
                self.features_, self.fit_ = fmap, gf
                p = self._proba_from_pred(self._grid_pred(Xt))
                score = float(-np.mean(np.log(p[np.arange(yi_t.size), yi_t])))
                table.append({"lam": float(lm), "sigma": sg, "cross_entropy": score})
                if best is None or score < best[0]:
                    best = (score, float(lm), sg, fmap, gf)
        self.tuning_table_ = table
        _, lam_b, sigma_b, fmap, gf = best
        self.lam_, self.sigma_ = lam_b, sigma_b
        if X_tune is None:
            lam_full = lam_b * X_fit.shape[0] / n  # keep C = 1/(2 n lambda) per point
            self.features_, self.fit_ = self._fit_one(
                X, yi, K, grid, lam_full, sigma_b, s, tracker, should_cancel
            )
            self.lam_ = lam_full
        else:
            self.features_, self.fit_ = fmap, gf
        return self._finish(n)

    def _finish(self, n: int):
        self.C_ = 1.0 / (2.0 * n * self.lam_)
        if self.kernel == "rbf" and self.sigma_ is None:  # pragma: no cover - guarded above
            raise InputError("RBF kernel needs sigma")
        gf = self.fit_
        self.n_qp_ = gf.n_qp
        self.fit_seconds_ = gf.seconds
        self.kkt_residual_ = float(gf.kkt_residual.max())
        return self

    # ----------------------------------------------------------------- prediction
    def _grid_pred(self, X: np.ndarray) -> np.ndarray:
        Z = self.features_.transform(X)
        from ..joint.subproblem import sum_zero_basis

        return self.fit_.predict_classes(Z, sum_zero_basis(self.classes_.size))

    def _direct(self, pred: np.ndarray):
        de = direct_scheme(pred, self.simplex_grid_)
        p_ind, _ = indirect_scheme(pred, self.simplex_grid_, self.h_method_)
        border = np.where(de.found[:, None], de.border, proba_to_border(p_ind))
        return border, de

    def _proba_from_pred(self, pred: np.ndarray) -> np.ndarray:
        if self.scheme == "direct":
            border, _ = self._direct(pred)
            p = border_to_proba(border)
        else:
            p, _ = indirect_scheme(pred, self.simplex_grid_, self.h_method_)
        p = np.maximum(p, PROBA_FLOOR)
        return p / p.sum(axis=1, keepdims=True)

    def grid_predictions(self, X) -> np.ndarray:
        """Class index (into ``classes_``) predicted at every grid weight ``grid_``.

        Returns
        -------
        ndarray of int, shape (n, G)
        """
        check_is_fitted(self)
        return self._grid_pred(validate_predict_data(self, X)).astype(np.int64)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; shape (n, K), columns in ``classes_`` order."""
        check_is_fitted(self)
        return self._proba_from_pred(self._grid_pred(validate_predict_data(self, X)))

    def predict(self, X) -> np.ndarray:
        """``classes_[argmax predict_proba]``; shape (n,)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def class_shares(self, X) -> np.ndarray:
        """Share of grid weights predicting each class (indirect scheme input); (n, K)."""
        pred = self.grid_predictions(X)
        return class_counts(pred, self.classes_.size) / self.simplex_grid_.size

    def border_weights(self, X) -> np.ndarray:
        """Estimated border weight per point by the chosen scheme; shape (n, K).

        Direct scheme: mean centre of the qualifying cells (points with none fall back to
        the indirect estimate); indirect: ``pi_k proportional to 1 / p_hat_k``.
        """
        pred = self.grid_predictions(X)
        if self.scheme == "direct":
            return self._direct(pred)[0]
        return proba_to_border(self._proba_from_pred(pred))

    def direct_cells(self, X) -> list[np.ndarray]:
        """Cells the direct scheme used, per point: grid indices, each (n_used, K)."""
        pred = self.grid_predictions(X)
        vertices, _ = self.simplex_grid_.cells
        q = qualifying_cells(pred, self.simplex_grid_)
        return [vertices[row] for row in q]

    def report(self, X) -> ProbabilityReport:
        """Probabilities with extra columns ``share_<class>``, ``border_<class>`` and
        ``direct_found`` (1 where a cell of K distinct classes exists)."""
        check_is_fitted(self)
        X = validate_predict_data(self, X)
        pred = self._grid_pred(X)
        K = self.classes_.size
        p = self._proba_from_pred(pred)
        shares = class_counts(pred, K) / self.simplex_grid_.size
        de = direct_scheme(pred, self.simplex_grid_)
        border = self._direct(pred)[0] if self.scheme == "direct" else proba_to_border(p)
        extra: dict[str, np.ndarray] = {}
        for k, c in enumerate(self.classes_):
            extra[f"share_{c}"] = shares[:, k]
        for k, c in enumerate(self.classes_):
            extra[f"border_{c}"] = border[:, k]
        extra["direct_found"] = de.found.astype(float)
        return ProbabilityReport.from_proba(self.classes_, p, extra)
