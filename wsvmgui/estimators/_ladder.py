"""Parameters and tuning plumbing shared by every scheme built on binary weight ladders.

The binary, non-crossing, preconditioned and divide-and-conquer estimators take the same
kernel, grid, penalty and tuning parameters; this module turns them into grids, folds and
searches once.  The tuning semantics, the same in every one of these schemes:

``cv``
    How the rows given to ``fit`` are split for tuning (:mod:`wsvmgui.ladder.splits`):
    ``"auto"`` (default; 5-fold stratified CV up to 500 points, a stratified 30% hold-out
    above; schemes where k folds cost too much or that tune on one split use the
    hold-out at every size and say so), an int (k-fold), a float (hold-out share), a
    splitter such as ``PredefinedSplit`` (a user's own tuning set), or an iterable of
    (train, test) pairs.
``refit``
    True (default): after tuning, fit the final model on all rows given to ``fit``,
    keeping the tuned ``C = 1 / (2 n lambda)`` (lambda is rescaled by the ratio of the
    first fold's training size to the final size), as scikit-learn's grid search over
    ``SVC(C)`` does.  False: the final model is fitted on the first split's training
    rows with the tuned lambda itself (for a hold-out or a tuning set, exactly the model
    that was scored).
``n_jobs``
    Threads, scikit-learn's meaning (None: 1, -1: all cores).
``random_state``
    Seeds the folds, the hold-out and the sigma_M subsample.
``engine``
    How every binary ladder is fitted, in tuning and in the final fits
    (:mod:`wsvmgui.ladder.engines`): ``"path"`` (default; the exact weight path,
    grid-free probabilities, the grid ladder as a fallback where a path breaks down),
    ``"auto"`` (the grid where a path's elbow grows past ``auto_max_elbow``) or
    ``"grid"`` (one weighted SVM per weight of the grid).  ``n_weights`` and
    ``weights`` are what the grid engine fits; for the path they only set the weights at
    which ``ladder_decision`` and the sign-ladder views report.
``screen``
    (binary, non-crossing, divide and conquer) ``"auto"``: where every fold trains on 1000
    rows or more (the binary ladder: 250, One-vs-All: 300), tuning is screened
    (:mod:`wsvmgui.ladder.screening`); None: every cell on the full folds.
Defaults: RBF kernel; lambda over ``1 / (2 n C)`` for C in 0.1 ... 100 (``n`` the first
fold's training rows of the problem); sigma over ``(0.25 .. 1.5) sigma_M`` of all rows;
``M = max(floor(2 sqrt(n)), 40)`` weights for ``n`` final rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._sklearn_compat import StrOptions
from ..ladder.engines import AnyLadder
from ..ladder.gridsearch import Extension, rescale_lambda
from ..ladder.problems import LadderProblem
from ..ladder.screening import Screening, screened_search
from ..ladder.splits import Fold, resolve_cv
from ..ladder.tuning import DEFAULT_C_GRID, TuningResult, default_lambda_grid, default_n_weights
from ..ladder.weights import check_weights, weight_grid
from ..progress import ProgressTracker
from ..solvers.kernels import DEFAULT_SIGMA_FACTORS, Kernel, default_sigma_grid
from ._base import (
    KERNEL_CONSTRAINTS,
    LADDER_CONSTRAINTS,
    PENALTY_CONSTRAINTS,
    TUNING_CONSTRAINTS,
    ParameterError,
    check_finite_positive,
    check_positive_grid,
    n_threads,
    seed_of,
)

#: ``screen`` of the schemes tuned by the EGKL search (:mod:`wsvmgui.ladder.screening`).
SCREEN_CONSTRAINTS: dict[str, list[Any]] = {"screen": [StrOptions({"auto"}), None]}

#: Everything a ladder scheme shares.
LADDER_SCHEME_CONSTRAINTS: dict[str, list[Any]] = {
    **KERNEL_CONSTRAINTS,
    **PENALTY_CONSTRAINTS,
    **LADDER_CONSTRAINTS,
    **TUNING_CONSTRAINTS,
}


#: ``tuning_rule="auto"`` of the binary estimator takes the cell :data:`AUTO_ONE_SE`
#: prefers (the widest kernel, then the largest lambda) within :data:`AUTO_SE_MULTIPLE`
#: standard errors of the smallest score, on any split (:func:`auto_one_se`).
AUTO_ONE_SE = "widest"
AUTO_SE_MULTIPLE = 1.0


def auto_one_se(plan: TuningPlan) -> str | bool:
    """The search's ``one_se`` for the binary ``tuning_rule="auto"``: :data:`AUTO_ONE_SE`
    (the widest kernel, then the largest lambda, within :data:`AUTO_SE_MULTIPLE` standard
    errors of the best score) wherever there is tuning, on k folds or on the hold-out
    (its per-row standard errors); False (the smallest score) with nothing tuned.

    At the papers' size the cross-validated score of 100 rows is too flat and noisy to
    choose among the cells: the minimum picks narrow kernels by chance
    (docs/notes/calibration.md, "Sixth sitting").  Above 500 rows (the 30 % hold-out)
    since the ninth sitting: with the plateau map among the calibration's choices it
    lowered L1 on all four binary designs at n = 2000 on seeds 0-4 and 5-9
    (docs/notes/calibration.md, "Ninth sitting (branch acc-binmap)").
    """
    return AUTO_ONE_SE if plan.folds else False


@dataclass(frozen=True)
class TuningPlan:
    """Folds, rows of the final fits and grids of a ladder scheme's fit.

    Attributes
    ----------
    folds : list of (train, test), or None
        None when nothing is tuned (nothing left open, or ``cv="auto"`` found the data
        too small to tune on).
    fit_rows : ndarray of int
        Rows of the final fits.
    kernel : Kernel
        Template (its RBF width replaced by each sigma).
    sigmas : ndarray, shape (S,)
        Tuning grid, or the fixed width (NaN for kernels without one).
    sample_weight : ndarray, shape (n,), or None
        Weight of every row (None: all equal).
    """

    folds: list[Fold] | None
    fit_rows: np.ndarray
    kernel: Kernel
    sigmas: np.ndarray
    sample_weight: np.ndarray | None = None

    @property
    def tuned(self) -> bool:
        return self.folds is not None

    def size(self, rows: np.ndarray) -> float:
        """How many of ``rows`` there are (their summed weight when weighted)."""
        rows = np.asarray(rows)
        return (
            int(rows.size) if self.sample_weight is None else float(self.sample_weight[rows].sum())
        )


class LadderParams:
    """Parameter checks, grids and the tuning search of the ladder schemes.

    Reads the estimator parameters ``kernel``, ``degree``, ``coef0``, ``poly_gamma``,
    ``lam``, ``sigma``, ``lambdas``, ``sigmas``, ``engine``, ``n_weights``, ``weights``,
    ``rule``, ``cv``, ``refit``, ``n_jobs`` and ``random_state``.
    """

    kernel: str
    engine: str
    degree: int
    coef0: float
    poly_gamma: float
    lam: float | None
    sigma: float | None
    lambdas: Any
    sigmas: Any
    n_weights: int | None
    weights: Any
    rule: str
    cv: Any
    refit: bool
    n_jobs: int | None
    random_state: Any
    classes_: np.ndarray
    #: ``cv="auto"`` means the 30% hold-out at every size (see ladder.splits).
    _auto_holdout = False
    #: ``cv="auto"`` means this many stratified folds where every class has that many
    #: points (None: ladder.splits' rule, with ``_auto_holdout``); see :meth:`_cv`.
    _auto_folds: int | None = None
    #: C grid (``1 / (2 n lambda)``) of the default lambdas and widths (times sigma_M) of
    #: the default sigmas.
    _default_c_grid: tuple[float, ...] = DEFAULT_C_GRID
    _default_sigma_factors: tuple[float, ...] = DEFAULT_SIGMA_FACTORS
    #: The tuning score of the ladder search (:data:`wsvmgui.ladder.search.LADDER_SCORES`).
    _tuning_score = "egkl"
    #: Training rows per fold from which ``screen="auto"`` screens (:class:`Screening`).
    _screen_min_rows = Screening.min_rows

    # ------------------------------------------------------------------ checks
    def _check_ladder_params(self) -> None:
        """Cross-parameter checks: finite values, positive grids, increasing weights."""
        check_finite_positive("lam", self.lam)
        check_finite_positive("sigma", self.sigma)
        check_positive_grid("lambdas", self.lambdas)
        check_positive_grid("sigmas", self.sigmas)
        if self.weights is not None:
            try:
                check_weights(self.weights)
            except ValueError as exc:
                raise ParameterError(f"weights: {exc}") from None

    # ------------------------------------------------------------------ grids
    def _kernel_template(self) -> Kernel:
        return Kernel(
            self.kernel,
            sigma=1.0 if self.sigma is None else float(self.sigma),
            degree=self.degree,
            coef0=self.coef0,
            gamma=self.poly_gamma,
        )

    def _weight_grid(self, n: float) -> np.ndarray:
        """Interior weights for a ladder fitted on ``n`` points; shape (M - 1,)."""
        if self.weights is not None:
            return check_weights(self.weights)
        return weight_grid(default_n_weights(n) if self.n_weights is None else self.n_weights)

    def _lambda_grid(self, n: float) -> np.ndarray:
        """``[lam]``, the given ``lambdas``, or the default grid for ``n`` points; (L,)."""
        if self.lam is not None:
            return np.array([float(self.lam)])
        grid = check_positive_grid("lambdas", self.lambdas)
        return default_lambda_grid(n, self._default_c_grid) if grid is None else grid

    def _fixed_lambda(self, n: float) -> float:
        """Lambda of an untuned fit on ``n`` points: ``lam``, the middle of the given
        ``lambdas``, or C = 1."""
        if self.lam is not None:
            return float(self.lam)
        grid = check_positive_grid("lambdas", self.lambdas)
        return float(grid[grid.size // 2]) if grid is not None else float(default_lambda_grid(n)[2])

    def _needs_tuning(self) -> bool:
        lam_fixed = self.lam is not None or (
            self.lambdas is not None and np.size(self.lambdas) == 1
        )
        sig_fixed = (
            self.kernel != "rbf"
            or self.sigma is not None
            or (self.sigmas is not None and np.size(self.sigmas) == 1)
        )
        return not (lam_fixed and sig_fixed)

    def _sigma_grid(self, X: np.ndarray, codes: np.ndarray, sw: np.ndarray | None) -> np.ndarray:
        """The fixed RBF width, the given ``sigmas``, or ``(0.25 .. 1.5) sigma_M`` of all rows
        (every fold and sub-problem shares it); a single NaN for other kernels."""
        if self.kernel != "rbf":
            return np.array([np.nan])
        if self.sigma is not None:
            return np.array([float(self.sigma)])
        given = check_positive_grid("sigmas", self.sigmas)
        if given is not None:
            return given
        return default_sigma_grid(
            X, codes, self._default_sigma_factors, seed_of(self.random_state), sw
        )

    def _cv(self, y: np.ndarray) -> Any:
        """The ``cv`` to resolve for labels ``y`` (n,): ``cv``, or ``_auto_folds`` for
        ``"auto"`` where that is set and every class has at least that many points (else
        ``"auto"``, which adapts to small classes)."""
        k = self._auto_folds
        if k is None or not (isinstance(self.cv, str) and self.cv == "auto"):
            return self.cv
        return k if np.unique(y, return_counts=True)[1].min() >= k else self.cv

    def _plan(
        self, X: np.ndarray, codes: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> TuningPlan:
        """Folds, final rows and sigma grid for data ``X`` (n, p) with class indices ``codes``.

        Rows of zero weight are dropped from every fold and from the final rows.
        """
        n = codes.size
        kernel = self._kernel_template()
        sigmas = self._sigma_grid(X, codes, sample_weight)
        every = np.arange(n) if sample_weight is None else np.flatnonzero(sample_weight > 0)
        folds = None
        if self._needs_tuning():
            folds = (
                resolve_cv(
                    self._cv(codes),
                    self.classes_[codes],
                    self.random_state,
                    holdout=self._auto_holdout,
                )
                or None
            )
        if folds is not None and sample_weight is not None:
            folds = [(tr[sample_weight[tr] > 0], te[sample_weight[te] > 0]) for tr, te in folds]
        fit_rows = every if folds is None or self.refit else folds[0][0]
        return TuningPlan(folds, fit_rows, kernel, sigmas, sample_weight)

    def _search(
        self,
        X: np.ndarray,
        problems: list[LadderProblem],
        plan: TuningPlan,
        weights: list[np.ndarray],
        tracker: ProgressTracker,
        engine: Any = None,
        strata: np.ndarray | None = None,
    ) -> tuple[list[TuningResult], list[tuple[float, float]]]:
        """Tune every problem; return the tables and the (lambda, sigma) of its final fit.

        ``engine`` (an engine callable) replaces the ``engine`` parameter's; ``strata``
        (n,) stratifies the screening subsample (:meth:`Screening.subsample`).  The final
        lambda keeps the tuned ``C``: :func:`~wsvmgui.ladder.gridsearch.rescale_lambda` of
        the problem's rows in the first fold's training part and in the final fit (their
        summed weights when weighted).
        """
        assert plan.folds is not None
        n, sw = X.shape[0], plan.sample_weight
        n_first = [p.size(plan.folds[0][0], n, sw) for p in problems]
        n_final = [p.size(plan.fit_rows, n, sw) for p in problems]
        tunings = screened_search(
            X,
            problems,
            plan.folds,
            plan.kernel,
            plan.sigmas,
            weights,
            [self._lambda_grid(m) for m in n_first],
            rule=self.rule,
            engine=self.engine if engine is None else engine,
            n_jobs=n_threads(self.n_jobs),
            tracker=tracker,
            screening=self._screening(),
            strata=strata,
            sample_weight=sw,
            **self._tuning_choice(plan),
        )
        chosen = [
            (rescale_lambda(t.best_lambda, a, b), t.best_sigma)
            for t, a, b in zip(tunings, n_first, n_final, strict=True)
        ]
        return tunings, chosen

    def _tuning_choice(self, plan: TuningPlan) -> dict[str, Any]:
        """The search's ``score``, ``calibration``, ``one_se`` and ``extend`` from the
        estimator's ``tuning_score``, ``calibration``, ``tuning_rule`` and
        ``tuning_extend`` (schemes without them: the scheme's own score, on the plain
        estimate, the smallest, on the grid as given).  ``tuning_rule="auto"``:
        :meth:`_auto_one_se` of the ``plan``; ``calibration``: :meth:`_calibration_choice`
        of the estimator's."""
        params = self.get_params()  # type: ignore[attr-defined]
        rounds = int(params.get("tuning_extend") or 0)
        rule = params.get("tuning_rule")
        return {
            "score": params.get("tuning_score", self._tuning_score),
            "calibration": self._calibration_choice(params.get("calibration", "none")),
            "one_se": self._auto_one_se(plan) if rule == "auto" else rule == "one_se",
            "se_multiple": self._auto_se_multiple if rule == "auto" else 1.0,
            "extend": Extension(rounds=rounds) if rounds > 0 else None,
        }

    def _calibration_choice(self, calibration: str) -> str:
        """The name :mod:`wsvmgui.ladder.recalibration` fits for the estimator's
        ``calibration`` (the binary estimator's ``"auto"`` is ``"auto_plateau"``)."""
        return calibration

    #: ``tuning_rule="auto"``: how many standard errors above the smallest score.
    _auto_se_multiple = AUTO_SE_MULTIPLE

    def _auto_one_se(self, plan: TuningPlan) -> str | bool:
        """The search's ``one_se`` for ``tuning_rule="auto"`` (:func:`auto_one_se`; the
        multiclass estimator has its own)."""
        return auto_one_se(plan)

    def _screening(self) -> Screening | None:
        """How tuning is screened (the ``screen`` parameter; schemes without it: never)."""
        if self.get_params().get("screen") != "auto":  # type: ignore[attr-defined]
            return None
        return Screening(min_rows=self._screen_min_rows, seed=seed_of(self.random_state))

    def _untuned(self, problems: list[LadderProblem], plan: TuningPlan, n: int) -> list:
        """(lambda, sigma) of every problem when nothing is tuned (the middle of a sigma
        grid when ``cv="auto"`` found the data too small to tune on)."""
        sigma = float(plan.sigmas[plan.sigmas.size // 2])
        return [
            (self._fixed_lambda(p.size(plan.fit_rows, n, plan.sample_weight)), sigma)
            for p in problems
        ]


def engine_info(
    engine: str, ladders: Sequence[AnyLadder], tunings: Sequence[TuningResult | None]
) -> dict[str, Any]:
    """``fit_info_`` entries on the engines: requested, and which answered what.

    Parameters
    ----------
    engine : str
        The ``engine`` parameter.
    ladders : list
        Final ladders (:class:`~wsvmgui.ladder.grid.Ladder` or
        :class:`~wsvmgui.ladder.engines.PathLadder`).
    tunings : list of TuningResult or None

    Returns
    -------
    dict
        ``engine``; ``final_engines`` and ``tuning_engines`` (engine -> ladders answered);
        ``tuning_screened`` (tuning searches that were screened);
        ``path_fallbacks`` (paths that broke down, the grid answering); ``auto_grid``
        (ladders for which ``"auto"`` stopped the path and chose the grid).
    """
    final = Counter(str(lad.engine) for lad in ladders)
    tuned: Counter = Counter()
    fallbacks = sum(bool(lad.fallback) for lad in ladders)
    switched = sum(bool(lad.switched) for lad in ladders)
    for t in tunings:
        if t is not None:
            tuned.update(t.engines)
            fallbacks += len(t.fallbacks)
            if engine == "auto":  # a grid cell is a breakdown's fallback or auto's choice
                switched += t.engines.get("grid", 0) - len(t.fallbacks)
    return {
        "engine": engine,
        "final_engines": dict(final),
        "tuning_engines": dict(tuned),
        "path_fallbacks": int(fallbacks),
        "tuning_screened": sum(t is not None and t.screened is not None for t in tunings),
        "auto_grid": int(switched),
    }
