"""Joint multiclass weighted SVM over the weight simplex (Wu, Zhang & Liu 2010).

One weighted K-class truncated-hinge SVM per interior grid weight ``pi = m / N``;
probabilities from where on the simplex each point's predicted class changes, by the
direct or the indirect scheme (METHODS section 4).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from .._sklearn_compat import Hidden, Interval, StrOptions
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
from ..joint.tuning import JointScreening, coarse_grid, scheme_proba
from ..ladder.gridsearch import FoldScore, Grid, Job, JobContext, grid_search, rescale_lambda
from ..ladder.splits import Fold, resolve_cv
from ..ladder.tuning import TuningResult
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


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"JointWSVMClassifier: {old} is deprecated and will be removed; use {new}",
        FutureWarning,
        stacklevel=5,
    )


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
    n_weights : int >= 3, default=50
        Grid resolution N: weights ``m / N`` with every ``m_k >= 1`` (``C(N-1, K-1)``
        fits), as ``n_weights`` is M of the ladders' weights ``m / M``.
    N, d_pi : deprecated
        Former names of the resolution (``N = n_weights``, ``d_pi = 1 / n_weights``);
        a FutureWarning says so.
    kernel : {"rbf", "linear", "poly"}, default="rbf"
        As every other scheme; ``"linear"`` is the paper's main setting and costs less
        per grid point (an RBF fit needs an eigendecomposition of the kernel).
    lam : float or None
        Penalty lambda (``C = 1 / (2 n lambda)``); None tunes it over ``lambdas``.
    C : deprecated
        Former alternative to ``lam`` (``lam = 1 / (2 n C)``); a FutureWarning says so.
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
        With a class of fewer than two points it fits untuned, with a warning
        (:func:`~wsvmgui.ladder.splits.auto_cv`).
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
    screen : {"auto"} or None, default="auto"
        Screened tuning (:mod:`wsvmgui.joint.tuning`): ``"auto"`` fits every (sigma,
        lambda) cell on a grid of half the resolution (``N // 2``) first and only the 3
        best of them on the full grid, where more than 3 cells are tuned; None fits every
        cell on the full grid.
    random_state : int, RandomState or None, default=0
        Seeds the tuning splits and the sigma_M subsample.

    Attributes
    ----------
    classes_ : ndarray, shape (K,)
    lambda_ : float
        Penalty of the final fit.
    sigma_ : float
        RBF width (NaN for other kernels).
    C_ : float
        ``1 / (2 n lambda_)`` of the final fit.
    tuning_ : TuningResult or None
        The tuning cross-entropy over sigma x lambda (None when nothing was tuned).
    grid_ : ndarray, shape (G, K)
        The simplex grid weights.
    fit_info_ : dict
        Fits made, rows and QPs of the final grid, its largest KKT residual, wall time,
        where the fits ran (``"backend"``: threads, or a Dask cluster) and the axes on
        which the tuned cell sits at the grid's edge (``"tuning_edge"``).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        **PENALTY_CONSTRAINTS,
        **TUNING_CONSTRAINTS,
        "n_weights": [Interval(Integral, 3, None, closed="left")],
        "N": [Interval(Integral, 3, None, closed="left"), Hidden(StrOptions({"deprecated"}))],
        "d_pi": [Interval(Real, 0, 1, closed="neither"), Hidden(StrOptions({"deprecated"}))],
        "C": [Interval(Real, 0, None, closed="neither"), Hidden(StrOptions({"deprecated"}))],
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
        "screen": [StrOptions({"auto"}), None],
    }

    def __init__(
        self,
        *,
        n_weights: int = 50,
        kernel: str = "rbf",
        lam: float | None = None,
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
        screen: str | None = "auto",
        random_state=0,
        N: Any = "deprecated",
        d_pi: Any = "deprecated",
        C: Any = "deprecated",
    ) -> None:
        self.n_weights = n_weights
        self.kernel = kernel
        self.lam = lam
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
        self.screen = screen
        self.random_state = random_state
        self.N = N
        self.d_pi = d_pi
        self.C = C

    # ----------------------------------------------------------------- parameters
    def _check_params(self) -> None:
        for name in ("lam", "sigma"):
            check_finite_positive(name, getattr(self, name))
        for old, new in (("N", "n_weights"), ("d_pi", "n_weights = 1 / d_pi"),
                         ("C", "lam = 1 / (2 n C)")):  # fmt: skip
            if getattr(self, old) != "deprecated":
                _deprecated(old, new)
        if self.C != "deprecated":
            check_finite_positive("C", self.C)
        check_positive_grid("lambdas", self.lambdas)
        check_positive_grid("sigmas", self.sigmas)
        self._resolution()

    def _resolution(self) -> int:
        """The grid resolution: ``n_weights``, or the deprecated ``N`` / ``d_pi``."""
        if self.d_pi != "deprecated":
            N = round(1.0 / float(self.d_pi))
            if abs(N * float(self.d_pi) - 1.0) > 1e-6:
                raise ParameterError(f"1/d_pi must be an integer, got d_pi = {self.d_pi!r}")
            return int(N)
        if self.N != "deprecated":
            return int(self.N)
        return int(self.n_weights)

    def _fixed_lambda(self, n: int) -> float | None:
        """``lam``, or the deprecated ``C`` as ``1 / (2 n C)``; None when tuned."""
        if self.lam is not None:
            return float(self.lam)
        if self.C != "deprecated":
            return 1.0 / (2.0 * n * float(self.C))
        return None

    def _kernel_for(self, sigma: float | None) -> Kernel | None:
        if self.kernel == "linear":
            return None
        if self.kernel == "rbf":
            return Kernel("rbf", sigma=float(sigma))  # type: ignore[arg-type]
        return Kernel(
            "poly", degree=int(self.degree), coef0=float(self.coef0), gamma=float(self.poly_gamma)
        )

    # ----------------------------------------------------------------- fitting
    def _fit_many(self, jobs, tracker, grid: SimplexGrid | None = None) -> list[GridFit]:
        """Grid fits of (class indices, lambda, feature map) jobs, all at once, on
        ``grid`` (default: the estimator's simplex grid)."""
        problems: dict[int, JointProblem] = {}  # one problem per feature map
        for yi, _, fmap in jobs:
            if id(fmap) not in problems:
                problems[id(fmap)] = JointProblem(fmap.Z_train, yi, self.classes_.size)
        return fit_grids(
            [(problems[id(fmap)], 1.0 / (2.0 * yi.size * lam)) for yi, lam, fmap in jobs],
            self.simplex_grid_ if grid is None else grid,
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
        fixed_lam = self._fixed_lambda(n)
        folds: list[Fold] = []
        if fixed_lam is None or (self.kernel == "rbf" and self.sigma is None):
            folds = resolve_cv(
                self.cv, self.classes_[codes], self.random_state, holdout=True, holdout_share=0.5
            )
        lams, sigmas = self._grids(X, codes, fixed_lam, folds[0][0].size if folds else n)
        if not folds:  # nothing left open, or too few points to tune on
            lam, sigma = lams[len(lams) // 2], sigmas[len(sigmas) // 2]
            tracker = ProgressTracker(grid.size, progress, should_cancel)
            fmap = FeatureMap.fit(X, self._kernel_for(sigma))
            gf = self._fit_one(codes, lam, fmap, tracker)
            return self._finish(fmap, gf, lam, sigma, n, None, tracker)
        tracker = ProgressTracker(
            self._tuning_fits(len(lams) * len(sigmas), len(folds)) + grid.size * int(self.refit),
            progress,
            should_cancel,
        )
        tuning, (fmap, gf) = self._tune(X, codes, folds, lams, sigmas, tracker)
        lam_b = float(tuning.best_params["lambda"])
        sigma_b = float(tuning.best_params["sigma"])
        n_fit = folds[0][0].size
        if self.refit:  # keep C = 1 / (2 n lambda): lambda scales with the rows fitted
            lam_b = rescale_lambda(lam_b, n_fit, n)
            fmap = FeatureMap.fit(X, self._kernel_for(sigma_b))
            gf = self._fit_one(codes, lam_b, fmap, tracker)
            n_fit = n
        return self._finish(fmap, gf, lam_b, sigma_b, n_fit, tuning, tracker)

    def _grids(
        self, X: np.ndarray, codes: np.ndarray, fixed_lam: float | None, n_first: int
    ) -> tuple[list[float], list[float]]:
        """The lambda and sigma candidates (a single NaN sigma for other kernels)."""
        given = check_positive_grid("lambdas", self.lambdas)
        if fixed_lam is not None:
            lams = [float(fixed_lam)]
        elif given is not None:
            lams = [float(v) for v in given]
        else:
            lams = [float(v) for v in 1.0 / (2.0 * n_first * np.asarray(DEFAULT_C_GRID))]
        if self.kernel != "rbf":
            return lams, [float("nan")]
        grid_s = check_positive_grid("sigmas", self.sigmas if self.sigma is None else [self.sigma])
        if grid_s is None:
            grid_s = default_sigma_grid(X, codes, seed=seed_of(self.random_state))
        return lams, [float(v) for v in grid_s]

    def _screening(self, n_cells: int) -> JointScreening | None:
        """The screening of a tuning over ``n_cells`` cells (None: every cell in full)."""
        if self.screen != "auto":
            return None
        screening = JointScreening()
        grid = self.simplex_grid_
        return screening if screening.applies(n_cells, grid.K, grid.N) else None

    def _tuning_fits(self, n_cells: int, n_folds: int) -> int:
        """Grid fits of the tuning (screened or not), for the progress total."""
        grid = self.simplex_grid_
        screening = self._screening(n_cells)
        if screening is None:
            return grid.size * n_cells * n_folds
        coarse = coarse_grid(grid, screening).size
        return (coarse * n_cells + grid.size * screening.keep) * n_folds

    def _tune(self, X, codes, folds, lams, sigmas, tracker) -> tuple[TuningResult, tuple]:
        """Cross-entropy of the tuning labels over sigma x lambda; the table and the first
        fold's fit of the chosen cell (kept for ``refit=False``).

        Screened (:meth:`_screening`): every cell is scored on the coarser grid first, and
        the survivors on the full grid; the result's ``score`` holds the full grid's
        scores (NaN for the cells screened out) and ``screened`` the coarse round's.
        """
        fmaps = [[FeatureMap.fit(X[tr], self._kernel_for(sg)) for tr, _ in folds] for sg in sigmas]
        models: dict[tuple[tuple[int, ...], int], GridFit] = {}
        full = self.simplex_grid_

        def search(cells: Grid, grid: SimplexGrid) -> TuningResult:
            def fit_all(jobs: Sequence[Job]) -> list[GridFit]:
                # Every (sigma, lambda, fold) grid fit is independent: one batch (on
                # threads or a cluster) whose segments fit_grids parallelises.
                fits = self._fit_many(
                    [(codes[j.train], float(j.params["lambda"]), fmaps[j.cell[0]][j.fold])
                     for j in jobs],
                    tracker,
                    grid,
                )  # fmt: skip
                if grid is full:
                    models.update({(j.cell, j.fold): f for j, f in zip(jobs, fits, strict=True)})
                return fits

            def score(model: object, job: Job, ctx: JobContext) -> FoldScore:
                assert isinstance(model, GridFit)
                te = job.test
                pred = self._grid_pred(fmaps[job.cell[0]][job.fold], model, X[te])
                p = scheme_proba(pred, grid, self.scheme, self.h_method_)
                loss = -float(np.sum(np.log(p[np.arange(te.size), codes[te]])))
                return FoldScore(loss, float(te.size))

            return grid_search(
                cells, folds, None, score, tracker=tracker, fit_all=fit_all,
                score_name="cross_entropy",
            )  # fmt: skip

        cells = Grid({"sigma": np.asarray(sigmas), "lambda": np.asarray(lams)})
        screening = self._screening(len(lams) * len(sigmas))
        if screening is None:
            tuning = search(cells, full)
        else:
            rough = search(cells, coarse_grid(full, screening))
            only = np.zeros(cells.shape, dtype=bool)
            only.flat[screening.survivors(rough.score.ravel())] = True
            tuning = replace(search(Grid(cells.axes, only=only), full), screened=rough.score)
        return tuning, (fmaps[tuning.best[0]][0], models[(tuning.best, 0)])

    def _finish(self, fmap, gf, lam, sigma, n_fit, tuning, tracker) -> dict[str, Any]:
        self.features_, self.fit_ = fmap, gf
        self.lambda_ = float(lam)
        self.sigma_ = float(sigma) if self.kernel == "rbf" else float("nan")
        self.C_ = 1.0 / (2.0 * n_fit * self.lambda_)
        self.tuning_ = tuning
        self.n_qp_ = gf.n_qp
        self.fit_seconds_ = gf.seconds
        self.kkt_residual_ = float(gf.kkt_residual.max())
        return {
            "n_fits": tracker.done,
            "n_train": int(n_fit),
            "n_qp": int(np.sum(gf.n_qp)),
            "max_kkt_residual": self.kkt_residual_,
            "backend": current_executor(n_threads(self.n_jobs)).name,
            "tuning_edge": {} if tuning is None else dict(tuning.edge),
        }

    def _n_weights_fitted(self) -> Any:
        return int(self.simplex_grid_.N)

    # ----------------------------------------------------------------- deprecated names
    @property
    def lam_(self) -> float:
        """Deprecated: ``lambda_``."""
        _deprecated("lam_", "lambda_")
        return self.lambda_

    @property
    def tuning_table_(self) -> list[dict[str, Any]]:
        """Deprecated: ``tuning_.rows()`` (here with the former keys ``lam``, ``sigma``
        (None for other kernels) and ``cross_entropy``)."""
        _deprecated("tuning_table_", "tuning_.rows()")
        if self.tuning_ is None:
            return []
        return [
            {
                "lam": r["lambda"],
                "sigma": r["sigma"] if self.kernel == "rbf" else None,
                "cross_entropy": r["cross_entropy"],
            }
            for r in self.tuning_.rows()
        ]

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
