"""Joint multiclass weighted SVM over the weight simplex (Wu, Zhang & Liu 2010).

One weighted K-class truncated-hinge SVM per interior grid weight ``pi = m / N``;
probabilities from where on the simplex each point's predicted class changes, by the
direct or the indirect scheme (METHODS section 4).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..executor import current_executor
from ..joint.dca import minimal_truncation
from ..joint.features import FeatureMap
from ..joint.grid_fit import GridFit, fit_grids
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
from ..joint.subproblem import (
    DEFAULT_KKT_TOL,
    DEFAULT_QP_SOLVER,
    JointProblem,
    sum_zero_basis,
)
from ..ladder.splits import resolve_cv
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel, default_sigma_grid
from ._base import (
    KERNEL_CONSTRAINTS,
    PENALTY_CONSTRAINTS,
    TUNING_CONSTRAINTS,
    BaseProbabilityClassifier,
    ParameterError,
    check_finite_positive,
    check_positive_grid,
    n_threads,
    seed_of,
)
from .report import ProbabilityReport
from .views import SimplexViews

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
    """The truncation point ``s``: "minimal" (or None) is ``-1/(K-1)``, "none" is ``-inf``."""
    if truncation is None or (isinstance(truncation, str) and truncation == "minimal"):
        return minimal_truncation(K)
    if isinstance(truncation, str) and truncation == "none":
        return -np.inf
    return float(truncation)


class JointWSVMClassifier(SimplexViews, BaseProbabilityClassifier):
    """Joint K-class weighted SVM on the simplex of class weights.

    Parameters
    ----------
    N : int >= 3, default=50
        Grid resolution: weights ``m / N`` with every ``m_k >= 1`` (``C(N-1, K-1)`` fits).
    d_pi : float or None
        Grid spacing; when given it overrides ``N`` (``N = 1 / d_pi``, an integer).
    kernel : {"linear", "rbf", "poly"}, default="linear"
        Unlike the ladder schemes the default is linear (the paper's main setting; an RBF
        fit needs an eigendecomposition of the kernel and costs more per grid point).
    lam : float or None
        Penalty lambda (``C = 1 / (2 n lambda)``); None (with ``C`` None) tunes it.
    C : float or None
        Alternative to ``lam`` (``lam`` wins when both are given).
    sigma : float or None
        RBF width; None tunes it over ``sigmas`` (default (1/4 .. 3/2) sigma_M of all rows).
    degree, coef0, poly_gamma : polynomial kernel ``(poly_gamma x'x' + coef0)^degree``.
    scheme : {"indirect", "direct"}
    h_method : {"count", "continuous"} or None
        The ``h`` the indirect scheme inverts (None: ``DEFAULT_H_METHOD``).
    truncation : "minimal", "none", or float <= 0
        Truncation point ``s`` of the hinge (default ``-1/(K-1)``).
    lambdas : array-like or None
        Lambda grid; None: ``1 / (2 n C)`` for C in :data:`DEFAULT_C_GRID` (1 ... 100,
        shorter than the ladders' 0.1 ... 100: each value costs a whole simplex grid).
    sigmas : array-like or None
        Sigma grid (default :func:`wsvmgui.solvers.kernels.default_sigma_grid`).
    cv : "auto", int, float, splitter or iterable, default="auto"
        Tuning splits, scored by the cross-entropy of the tuning labels.  ``"auto"`` is a
        stratified 50% hold-out at every size: each candidate costs a whole grid, so
        k-fold CV costs k times as much (pass an int for it), and this fit's tuning is
        noisy enough that half the points held out did better than 30% (Wu 2010 Ex. 1,
        n = 200, 3 x 3 seeds: mean L1 0.131 against 0.136; benchmarks/core_regression.py).
    refit : bool, default=True
        Fit the chosen parameters again on all rows, keeping the tuned
        ``C = 1 / (2 n lambda)``; False keeps the fit on the first split's training rows.
    warm_start : bool
        Start each grid fit's DCA (and its working set) from the neighbouring solution.
    n_jobs : int or None
        Threads over the grid (None: 1, -1: all cores).
    qp_solver : str, default="active-set"
        Subproblem solver: "active-set" (specialised to this subproblem,
        :mod:`wsvmgui.joint.active_set`), or a general QP: "clarabel" (called directly;
        "direct" is an alias) or a qpsolvers backend ("quadprog", ...).
    kkt_tol : float
        Largest accepted subproblem KKT residual (margin units).
    random_state : int, RandomState or None, default=0
        Seeds the tuning splits and the sigma_M subsample.

    Attributes
    ----------
    classes_ : ndarray, shape (K,)
    grid_ : ndarray, shape (G, K)
        The simplex grid weights.
    lam_, C_ : float
        Penalty of the final fit.
    sigma_ : float or None
        RBF width (None for other kernels).
    tuning_table_ : list of dict
        ``lam``, ``sigma`` and tuning ``cross_entropy`` of every candidate.
    fit_info_ : dict
        Fits made, rows and QPs of the final grid, its largest KKT residual, wall time,
        and where the fits ran (``"backend"``: threads, or a Dask cluster).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        **PENALTY_CONSTRAINTS,
        **TUNING_CONSTRAINTS,
        "N": [Interval(Integral, 3, None, closed="left")],
        "d_pi": [Interval(Real, 0, 1, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "scheme": [StrOptions(set(SCHEMES))],
        "h_method": [StrOptions(set(H_METHODS)), None],
        "truncation": [
            StrOptions({"minimal", "none"}),
            Interval(Real, None, 0, closed="right"),
            None,
        ],
        "warm_start": ["boolean"],
        "qp_solver": [str],
        "kkt_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
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
        cv="auto",
        refit: bool = True,
        warm_start: bool = True,
        n_jobs: int | None = None,
        qp_solver: str = DEFAULT_QP_SOLVER,
        kkt_tol: float = DEFAULT_KKT_TOL,
        random_state=0,
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
        self.cv = cv
        self.refit = refit
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.qp_solver = qp_solver
        self.kkt_tol = kkt_tol
        self.random_state = random_state

    # ----------------------------------------------------------------- parameters
    def _check_params(self) -> None:
        for name in ("lam", "C", "sigma"):
            check_finite_positive(name, getattr(self, name))
        check_positive_grid("lambdas", self.lambdas)
        check_positive_grid("sigmas", self.sigmas)
        self._resolution()

    def _resolution(self) -> int:
        if self.d_pi is None:
            return int(self.N)
        N = round(1.0 / float(self.d_pi))
        if abs(N * float(self.d_pi) - 1.0) > 1e-6:
            raise ParameterError(f"1/d_pi must be an integer, got d_pi = {self.d_pi!r}")
        return int(N)

    def _kernel_for(self, sigma: float | None) -> Kernel | None:
        if self.kernel == "linear":
            return None
        if self.kernel == "rbf":
            return Kernel("rbf", sigma=float(sigma))  # type: ignore[arg-type]
        return Kernel(
            "poly", degree=int(self.degree), coef0=float(self.coef0), gamma=float(self.poly_gamma)
        )

    # ----------------------------------------------------------------- fitting
    def _fit_many(self, jobs, tracker) -> list[GridFit]:
        """Grid fits of (class indices, lambda, feature map) jobs, all at once."""
        problems: dict[int, JointProblem] = {}  # one problem per feature map
        for yi, _, fmap in jobs:
            if id(fmap) not in problems:
                problems[id(fmap)] = JointProblem(fmap.Z_train, yi, self.classes_.size)
        return fit_grids(
            [(problems[id(fmap)], 1.0 / (2.0 * yi.size * lam)) for yi, lam, fmap in jobs],
            self.simplex_grid_,
            self.truncation_,
            warm_start=self.warm_start,
            n_jobs=n_threads(self.n_jobs),
            qp_solver=self.qp_solver,
            kkt_tol=self.kkt_tol,
            tracker=tracker,
        )

    def _fit_one(self, yi, lam, fmap, tracker) -> GridFit:
        return self._fit_many([(yi, lam, fmap)], tracker)[0]

    def _fit(
        self,
        X: np.ndarray,
        codes: np.ndarray,
        progress: ProgressCallback | None,
        should_cancel: CancelCheck | None,
    ) -> dict[str, Any]:
        K = self.classes_.size
        N = self._resolution()
        check_resolution(K, N)
        grid = SimplexGrid.build(K, N)
        self.simplex_grid_ = grid
        self.grid_ = grid.weights
        self.truncation_ = _resolve_truncation(self.truncation, K)
        self.h_method_ = self.h_method or DEFAULT_H_METHOD
        n = codes.size
        fixed_lam = (
            self.lam
            if self.lam is not None
            else (1.0 / (2.0 * n * self.C) if self.C is not None else None)
        )
        if fixed_lam is not None and not (self.kernel == "rbf" and self.sigma is None):
            tracker = ProgressTracker(grid.size, progress, should_cancel)
            fmap = FeatureMap.fit(X, self._kernel_for(self.sigma))
            gf = self._fit_one(codes, float(fixed_lam), fmap, tracker)
            return self._finish(fmap, gf, float(fixed_lam), self.sigma, n, [], tracker)
        # ---- tuning by the tuning rows' cross-entropy (paper Section 4.3)
        folds = resolve_cv(
            self.cv, self.classes_[codes], self.random_state, holdout=True, holdout_share=0.5
        )
        n_first = folds[0][0].size
        given = check_positive_grid("lambdas", self.lambdas)
        if fixed_lam is not None:
            lams = [float(fixed_lam)]
        elif given is not None:
            lams = [float(v) for v in given]
        else:
            lams = [float(v) for v in 1.0 / (2.0 * n_first * np.asarray(DEFAULT_C_GRID))]
        sigmas: list[Any] = [None]
        if self.kernel == "rbf":
            grid_s = check_positive_grid(
                "sigmas", self.sigmas if self.sigma is None else [self.sigma]
            )
            if grid_s is None:
                grid_s = default_sigma_grid(X, codes, seed=seed_of(self.random_state))
            sigmas = [float(v) for v in grid_s]
        tracker = ProgressTracker(
            grid.size * (len(lams) * len(sigmas) * len(folds) + int(self.refit)),
            progress,
            should_cancel,
        )
        n_test = sum(te.size for _, te in folds)
        # Every (sigma, lambda, fold) grid fit is independent: all run as one batch (on
        # threads or a cluster), then are scored in grid order.
        fmaps = [[FeatureMap.fit(X[tr], self._kernel_for(sg)) for tr, _ in folds] for sg in sigmas]
        cells = [(si, lm, f) for si in range(len(sigmas)) for lm in lams for f in range(len(folds))]
        fitted = self._fit_many(
            [(codes[folds[f][0]], float(lm), fmaps[si][f]) for si, lm, f in cells],
            tracker,
        )
        table: list[dict[str, Any]] = []
        best: tuple[float, float, Any, tuple[FeatureMap, GridFit]] | None = None
        for c in range(0, len(cells), len(folds)):
            si, lm, _ = cells[c]
            loss = 0.0
            for f, (_, te) in enumerate(folds):
                gf = fitted[c + f]
                p = self._proba_from_pred(self._grid_pred(fmaps[si][f], gf, X[te]))
                loss -= float(np.sum(np.log(p[np.arange(te.size), codes[te]])))
            first = (fmaps[si][0], fitted[c])  # kept for refit=False
            score = loss / n_test
            sg = sigmas[si]
            table.append({"lam": float(lm), "sigma": sg, "cross_entropy": score})
            if best is None or score < best[0]:
                best = (score, float(lm), sg, first)
        assert best is not None
        _, lam_b, sigma_b, (fmap, gf) = best
        if self.refit:  # keep C = 1 / (2 n lambda): lambda scales with the rows fitted
            lam_b = lam_b * n_first / n
            fmap = FeatureMap.fit(X, self._kernel_for(sigma_b))
            gf = self._fit_one(codes, lam_b, fmap, tracker)
            n_fit = n
        else:
            n_fit = n_first
        return self._finish(fmap, gf, lam_b, sigma_b, n_fit, table, tracker)

    def _finish(self, fmap, gf, lam, sigma, n_fit, table, tracker) -> dict[str, Any]:
        self.features_, self.fit_ = fmap, gf
        self.lam_, self.sigma_ = float(lam), sigma
        self.C_ = 1.0 / (2.0 * n_fit * self.lam_)
        self.tuning_table_ = table
        self.n_qp_ = gf.n_qp
        self.fit_seconds_ = gf.seconds
        self.kkt_residual_ = float(gf.kkt_residual.max())
        return {
            "n_fits": tracker.done,
            "n_train": int(n_fit),
            "n_qp": int(np.sum(gf.n_qp)),
            "max_kkt_residual": self.kkt_residual_,
            "backend": current_executor(n_threads(self.n_jobs)).name,
        }

    # ----------------------------------------------------------------- prediction
    def _grid_pred(self, fmap: FeatureMap, gf: GridFit, X: np.ndarray) -> np.ndarray:
        return gf.predict_classes(fmap.transform(X), sum_zero_basis(self.classes_.size))

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

    def _pred(self, X: np.ndarray) -> np.ndarray:
        return self._grid_pred(self.features_, self.fit_, X)

    def _proba(self, X: np.ndarray) -> np.ndarray:
        return self._proba_from_pred(self._pred(X))

    def grid_predictions(self, X) -> np.ndarray:
        """Class index (into ``classes_``) predicted at every grid weight ``grid_``.

        Returns
        -------
        ndarray of int, shape (n, G)
        """
        return self._pred(self._check_X(X)).astype(np.int64)

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

    def _report(self, X: np.ndarray) -> ProbabilityReport:
        """Probabilities with extra columns ``share_<class>``, ``border_<class>`` and
        ``direct_found`` (1 where a cell of K distinct classes exists)."""
        pred = self._pred(X)
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
