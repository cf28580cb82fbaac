"""What a fit will do, counted before anything is fitted: its stages, fits, rows and memory.

:func:`plan_fit` reads an estimator's parameters and the data's shape (rows, classes,
the tuning folds its ``cv`` makes) and returns a :class:`FitPlan`: one :class:`Stage`
per phase of the fit (screening, tuning, the final ladders; the joint fit's grid fits;
the non-crossing ladder's constrained fits), each with

* ``fits``: the progress units the estimator will report for it (one per weight of a
  ladder's grid, per simplex grid weight, per Probing classifier), the same totals the
  estimators announce to their progress tracker (``tests/test_cost_plan.py`` checks
  that for every scheme);
* ``tasks``: the independent fits that each pay a start-up (a ladder, a grid fit, a
  learner), and ``rows``, the training rows of one of them;
* ``kind`` and ``engine``: what a probe must fit to price one unit
  (:mod:`wsvmgui.estimators.cost_probe`).

Planning also finds, before anything starts, what a fit would stop on later: a class
too small for the tuning split, a split that leaves a sub-problem one class to train on
(the same checks and messages as the fits'); and it sizes the arrays the fit will hold
(ladder coefficients, simplex grid fits), refusing with
:class:`~wsvmgui.errors.MemoryBudgetError` what would not fit in memory before any of
it is allocated (:func:`check_memory`).  Counting is arithmetic on class counts: a plan
costs milliseconds even for a thousand classes.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..errors import InputError, MemoryBudgetError, plain_value
from ..ladder.splits import TuningWarning, resolve_cv
from ..ladder.tuning import DEFAULT_C_GRID, default_n_weights
from ..solvers.kernels import DEFAULT_SIGMA_FACTORS
from ..solvers.memory import SAFETY, available_memory, gb

#: Bytes of one float.
_F8 = 8
#: Engine of a non-crossing ladder fitted at an RBF width an earlier stage of the same fit
#: chooses (the preconditioned SVM's): its probe fits it at that width, found as the fit
#: finds it, or at the grid's narrowest (the slowest) where that search is too long for a
#: probe (:func:`~wsvmgui.estimators.cost_kinds.noncrossing_cell`).
WIDTH_CHOSEN_FIRST = "width chosen first"
#: Engine of non-crossing ladders fitted at every width of the grid, or at the one the
#: fit's own tuning chooses among them (the non-crossing estimator's tuning and final
#: ladder: which width, no probe can know before the tuning ran): priced at the mean over
#: the grid's widths (:func:`~wsvmgui.estimators.cost_kinds.every_width`).  A constrained
#: fit cost 20 times more at the narrowest width than at the others (wuliu2011_ex1, 500
#: rows), and the tuning chose the narrowest on some draws, the widest on others.
EVERY_WIDTH = "every width"
#: Engine of the hinge criterion's tuning: a non-crossing ladder at every width of the
#: grid, each weight fitted at every lambda of the grid (and the one of the smallest
#: weighted hinge loss kept); priced at the mean over the widths, each probe ladder over
#: the whole lambda grid.
HINGE_EVERY_WIDTH = "hinge, every width"


@dataclass(frozen=True)
class Stage:
    """One phase of a fit.

    Attributes
    ----------
    name : str
        For people ("tuning", "final ladder", "grid fits", ...).
    fits : int
        Progress units the estimator reports for it.
    tasks : int
        Independent fits that each pay a start-up (ladders, grid fits, learners).
    rows : int
        Training rows of one task (the largest sub-problem's).
    kind : {"ladder", "noncrossing", "joint", "svm", "map", "estimator"}
        What a probe fits to price it.
    engine : str
        The ladder engine ("path", "auto", "grid"); for kind ``"map"`` the calibration
        fitted (a ``calibration`` value, or :data:`CHOOSE_MAP` and the maps chosen
        among); or the kind again;
        :data:`WIDTH_CHOSEN_FIRST` for a non-crossing ladder fitted at a width an earlier
        stage chooses (priced at that width).
    parallel : int
        Tasks that can run at once (threads beyond it idle).
    at_most : bool
        The fits are an upper bound (the baseline schemes' tie pairs: as many as the fit
        finds classes in contest).
    """

    name: str
    fits: int
    tasks: int
    rows: int
    kind: str
    engine: str
    parallel: int = 1
    at_most: bool = False


@dataclass(frozen=True)
class FitPlan:
    """The stages of one fit, and what it holds in memory.

    Attributes
    ----------
    estimator : str
        The estimator's class name.
    stages : tuple of Stage
    n_rows, n_classes : int
    threads : int
        Threads the fit runs on (``n_jobs``).
    memory : int
        Planned bytes of the largest arrays the fit holds at once (ladder coefficients,
        grid fits), beyond the data and the kernel matrix
        (:func:`~wsvmgui.solvers.memory.ladder_storage` plans that one).
    memory_what : str
        What ``memory`` is made of, naming the parameter that sets it.
    memory_fix : str
        How to make it smaller.
    """

    estimator: str
    stages: tuple[Stage, ...]
    n_rows: int
    n_classes: int
    threads: int = 1
    memory: int = 0
    memory_what: str = ""
    memory_fix: str = ""

    @property
    def fits(self) -> int:
        """Progress units of the whole fit."""
        return int(sum(s.fits for s in self.stages))


# ----------------------------------------------------------------------------- helpers
def _threads(estimator: Any) -> int:
    from joblib import effective_n_jobs

    n_jobs = getattr(estimator, "n_jobs", None)
    return max(int(effective_n_jobs(n_jobs)), 1)


def planning_random_state(estimator: Any) -> Any:
    """The estimator's ``random_state``, copied when it is a generator (planning must not
    draw from the one the fit will use)."""
    rs = getattr(estimator, "random_state", None)
    return copy.deepcopy(rs) if isinstance(rs, np.random.RandomState) else rs


def detached(estimator: Any) -> Any:
    """A shallow copy of ``estimator`` with :func:`planning_random_state`: a probe may run
    its own steps (a split, a width search) without drawing from the fit's generator."""
    est = copy.copy(estimator)
    est.random_state = planning_random_state(estimator)
    return est


def _folds(estimator: Any, labels: np.ndarray, **kwargs: Any) -> list | None:
    """The estimator's tuning folds; None when ``cv="auto"`` finds the data too small to
    tune on (the fit itself warns about that, so the plan stays quiet)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TuningWarning)
        cv = estimator._cv(labels) if hasattr(estimator, "_cv") else estimator.cv
        folds = resolve_cv(cv, labels, planning_random_state(estimator), **kwargs)
    return folds or None


def _count(codes: np.ndarray, rows: np.ndarray, K: int) -> np.ndarray:
    """Rows of every class among ``rows``; shape (K,)."""
    return np.bincount(codes[np.asarray(rows, dtype=int)], minlength=K)


def _grid_size(values: Any) -> int | None:
    return None if values is None else int(np.size(values))


def _n_sigmas(estimator: Any) -> int:
    """Widths tuned over (1 for kernels without one or a fixed width)."""
    if estimator.kernel != "rbf" or estimator.sigma is not None:
        return 1
    return _grid_size(estimator.sigmas) or len(
        getattr(estimator, "_default_sigma_factors", DEFAULT_SIGMA_FACTORS)
    )


def _n_lambdas(estimator: Any) -> int:
    """Lambdas tuned over (the ladder schemes' grid)."""
    if getattr(estimator, "lam", None) is not None:
        return 1
    return _grid_size(estimator.lambdas) or len(
        getattr(estimator, "_default_c_grid", DEFAULT_C_GRID)
    )


def _ladder_size(estimator: Any, rows: np.ndarray) -> np.ndarray:
    """Interior weights (M - 1) of the ladder of each problem with ``rows`` final rows,
    counted without building the grid (an absurd M is refused before it is allocated)."""
    if estimator.weights is not None:
        return np.full(rows.shape, int(np.size(estimator.weights)))
    if estimator.n_weights is not None:
        return np.full(rows.shape, int(estimator.n_weights) - 1)
    return np.array([default_n_weights(int(r)) - 1 for r in np.atleast_1d(rows)])


# ---------------------------------------------------------------------- binary problems
@dataclass(frozen=True)
class _Problems:
    """Binary problems over class indices: ``pos`` against ``neg`` (-1: every other
    class); ``names`` for messages."""

    pos: np.ndarray
    neg: np.ndarray
    names: list[str]

    def rows(self, counts: np.ndarray) -> np.ndarray:
        """Rows of each problem given class counts (K,); shape (P,)."""
        other = np.where(
            self.neg >= 0, counts[np.maximum(self.neg, 0)], counts.sum() - counts[self.pos]
        )
        return counts[self.pos] + other

    def both(self, counts: np.ndarray) -> np.ndarray:
        """Whether each problem has rows of both of its sides; shape (P,) of bool."""
        other = np.where(
            self.neg >= 0, counts[np.maximum(self.neg, 0)], counts.sum() - counts[self.pos]
        )
        return (counts[self.pos] > 0) & (other > 0)

    def what(self, i: int) -> str:
        return f"sub-problem {self.names[i]}" if self.names[i] else "the problem"


def _problems(estimator: Any, codes: np.ndarray, K: int) -> _Problems:
    """The binary ladder problems of a ladder scheme (one for the binary schemes)."""
    scheme = getattr(estimator, "scheme", None)
    classes = estimator.classes_
    if K == 2 and scheme is None:
        return _Problems(np.array([1]), np.array([0]), [""])
    if scheme == "ova":
        return _Problems(np.arange(K), np.full(K, -1), [f"{classes[j]}|rest" for j in range(K)])
    if scheme == "pairwise":
        a, b = np.triu_indices(K, 1)
        names = [f"{classes[j]}|{classes[i]},{classes[j]}" for i, j in zip(a, b, strict=True)]
        return _Problems(b, a, names)
    # baseline schemes: K - 1 pairs with one class; sized with the largest class (the
    # largest pairs; "median_distance" may choose another class, with smaller pairs)
    counts = np.bincount(codes, minlength=K)
    k = int(np.argmax(counts))
    others = np.array([j for j in range(K) if j != k])
    pos, neg = np.maximum(others, k), np.minimum(others, k)
    names = [f"{classes[p]}|{classes[q]},{classes[p]}" for p, q in zip(pos, neg, strict=True)]
    return _Problems(pos, neg, names)


def _check_tuning(problems: _Problems, train_counts: list, test_counts: list) -> np.ndarray:
    """Folds each problem is tuned on, checked as the tuning search checks them.

    Returns
    -------
    ndarray of int, shape (P,)
        Folds with tuning rows of the problem.

    Raises
    ------
    InputError
        A problem without tuning rows, a fold that leaves it one class to train on, or
        tuning rows of one class only (the messages of
        :func:`~wsvmgui.ladder.search.search_ladders`).
    """
    P = problems.pos.size
    folds = np.zeros(P, dtype=int)
    tuned_pos = np.zeros(P, dtype=bool)
    tuned_neg = np.zeros(P, dtype=bool)
    for c_tr, c_te in zip(train_counts, test_counts, strict=True):
        has_test = problems.rows(c_te) > 0
        bad = has_test & ~problems.both(c_tr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{problems.what(i)}: a tuning split leaves no training point of one class"
            )
        folds += has_test
        tuned_pos |= c_te[problems.pos] > 0
        other = np.where(
            problems.neg >= 0,
            c_te[np.maximum(problems.neg, 0)],
            c_te.sum() - c_te[problems.pos],
        )
        tuned_neg |= other > 0
    if (folds == 0).any():
        i = int(np.flatnonzero(folds == 0)[0])
        raise InputError(f"{problems.what(i)} has no point in any tuning part")
    one_sided = ~(tuned_pos & tuned_neg)
    if one_sided.any():
        i = int(np.flatnonzero(one_sided)[0])
        raise InputError(
            f"{problems.what(i)}: the tuning rows hold only one of its classes, so its EGKL "
            "cannot choose lambda and sigma (does the tuning set miss a class?)"
        )
    return folds


def _ladder_tuning(
    estimator: Any,
    problems: _Problems,
    folds: list,
    codes: np.ndarray,
    K: int,
    sizes: np.ndarray,
    kind: str,
    engine: str,
) -> list[Stage]:
    """The stages of the EGKL tuning search (screened or not) of ``problems``."""
    from ..ladder.screening import Screening

    train = [_count(codes, tr, K) for tr, _ in folds]
    test = [_count(codes, te, K) for _, te in folds]
    n_folds = _check_tuning(problems, train, test)
    cells = _n_lambdas(estimator) * _n_sigmas(estimator)
    tr_rows = np.array([problems.rows(c) for c in train])  # (F, P)
    largest = int(tr_rows.max())
    ladders = int(n_folds.sum()) * cells
    units = int((sizes * n_folds).sum()) * cells
    rule: Screening | None = None
    if getattr(estimator, "screen", None) == "auto":
        # the estimator's own threshold (One-vs-All screens from fewer rows); built here,
        # not by its _screening(), which would draw from a random_state generator
        rule = Screening(min_rows=estimator._screen_min_rows)
    grown = _extension_stage(estimator, sizes, n_folds, largest, kind, engine)
    if rule is not None and cells > rule.keep and int(tr_rows.min()) >= rule.min_rows:
        small = max(2, int(round(rule.share * largest)))
        kept = int((sizes * n_folds).sum()) * rule.keep
        return [
            Stage("screening", units, ladders, small, kind, engine, ladders),
            Stage("tuning", kept, int(n_folds.sum()) * rule.keep, largest, kind, engine, ladders),
            *grown,
        ]
    return [Stage("tuning", units, ladders, largest, kind, engine, ladders), *grown]


def _extension_stage(
    estimator: Any, sizes: np.ndarray, n_folds: np.ndarray, rows: int, kind: str, engine: str
) -> list[Stage]:
    """At most: the cells a ``tuning_extend`` of the grid adds
    (:meth:`~wsvmgui.ladder.gridsearch.Extension.max_cells`: 5 per round with lambda and
    sigma both tuned, 1 with one of them), each on every fold at the full folds' size
    (``Stage.at_most``: only where the chosen cell sits on an edge)."""
    from ..ladder.gridsearch import Extension

    rounds = int(getattr(estimator, "tuning_extend", 0) or 0)
    if rounds <= 0:
        return []
    growable = int(_n_lambdas(estimator) > 1) + int(_n_sigmas(estimator) > 1)
    cells = Extension(rounds=rounds).max_cells(growable)
    if cells == 0:
        return []
    ladders = int(n_folds.sum()) * cells
    units = int((sizes * n_folds).sum()) * cells
    return [Stage("grid extension", units, ladders, rows, kind, engine, ladders, True)]


def _calibration_stage(
    estimator: Any, folds: list | None, final_rows: np.ndarray, sizes: np.ndarray, engine: str
) -> Stage | None:
    """The cross-fitted ladders of a ``calibration``: one per fold and problem (the tuning
    folds when k-fold, else 3 stratified folds), each on a fold's training part, priced
    at the final fit's rows (an upper bound that shares the final ladder's probe)."""
    from ..ladder.recalibration import CALIBRATION_FOLDS

    if getattr(estimator, "calibration", "none") == "none":
        return None
    F = len(folds) if folds is not None and len(folds) >= 2 else CALIBRATION_FOLDS
    tasks = F * int(sizes.size)
    rows = int(final_rows.max())
    return Stage(
        "calibration cross-fits", F * int(sizes.sum()), tasks, rows, "ladder", engine, tasks
    )


#: Engine prefix of a map stage whose maps are chosen by
#: :func:`~wsvmgui.ladder.recalibration.choose_map` among the maps named after it
#: (comma-separated): the pair schemes' ``large_n_auto="widest_spline"`` above
#: :data:`~wsvmgui.estimators.multiclass.PAIR_AUTO_ONE_SE_MAX_ROWS` rows.
CHOOSE_MAP = "choose:"


def _map_engine(estimator: Any, fit_rows: int) -> str:
    """What a fit's recalibration fits to each problem's cross-fitted points: the
    ``calibration`` value passed to :func:`~wsvmgui.ladder.recalibration.fit_calibration`
    (the binary estimator's ``"auto"`` is its
    :data:`~wsvmgui.estimators.binary.AUTO_CALIBRATION` choice; the pair
    schemes' ``"auto"`` the sigmoid under their tuning), or :data:`CHOOSE_MAP` and the maps
    of the pair schemes' large-data choice; ``fit_rows`` rows of all classes in the final
    fit."""
    calibration = str(estimator.calibration)
    if hasattr(estimator, "_map_name"):  # the multiclass estimator
        from . import multiclass

        large = estimator._pair_tuning and fit_rows > multiclass.PAIR_AUTO_ONE_SE_MAX_ROWS
        if calibration == "auto" and large and estimator.large_n_auto == "widest_spline":
            return CHOOSE_MAP + ",".join(multiclass.PAIR_LARGE_MAPS)
        return str(estimator._map_name)
    if hasattr(estimator, "_calibration_choice"):  # the binary estimator
        return str(estimator._calibration_choice(calibration))
    return calibration


def _map_stage(
    estimator: Any, calibration: Stage | None, final_rows: np.ndarray, n: int
) -> Stage | None:
    """The recalibration maps fitted after the cross-fits, one per problem (kind
    ``"map"``, no progress units), each to the problem's cross-fitted points (its rows
    of the final fit: every fold's tuning part): ``calibration="auto"``'s choice by
    cross-validated log loss among its maps (80 fits by L-BFGS on the binary default:
    0.04-0.09 s), a single sigmoid (the pair schemes', under a millisecond)."""
    if calibration is None:
        return None
    P = int(final_rows.size)
    engine = _map_engine(estimator, n)
    return Stage("calibration map", 0, P, int(final_rows.max()), "map", engine, P)


# ------------------------------------------------------------------------ the planners
def _ladder_plan(estimator: Any, X: np.ndarray, codes: np.ndarray) -> FitPlan:
    """Binary ladder, divide and conquer: tuning (screened or not), then final ladders."""
    K = int(estimator.classes_.size)
    n = codes.size
    threads = _threads(estimator)
    problems = _problems(estimator, codes, K)
    engine = str(estimator.engine)
    tuned = estimator._needs_tuning()
    folds = None
    if tuned:
        folds = _folds(estimator, estimator.classes_[codes], holdout=estimator._auto_holdout)
    fit_rows = np.arange(n) if (folds is None or estimator.refit) else folds[0][0]
    final_rows = problems.rows(_count(codes, fit_rows, K))
    sizes = _ladder_size(estimator, final_rows)
    final_n = getattr(estimator, "final_n_weights", None)
    final_sizes = sizes if final_n is None else np.full(sizes.shape, int(final_n) - 1)
    stages: list[Stage] = []
    if folds is not None:
        stages += _ladder_tuning(estimator, problems, folds, codes, K, sizes, "ladder", engine)
    P = problems.pos.size
    name = "final ladder" if P == 1 else "final ladders"
    stages.append(
        Stage(name, int(final_sizes.sum()), P, int(final_rows.max()), "ladder", engine, P)
    )
    cross_fits = _calibration_stage(estimator, folds, final_rows, final_sizes, engine)
    for extra in (
        cross_fits,
        _map_stage(estimator, cross_fits, final_rows, int(fit_rows.size)),
        _tie_pairs_stage(estimator, codes, fit_rows, K, engine),
    ):
        if extra is not None:
            stages.append(extra)
    # the final ladders are held until compressed; a tuning ladder per thread (Python
    # integers: an absurd M must not overflow)
    coef = sum(int(m) * int(r) for m, r in zip(final_sizes, final_rows, strict=True)) * _F8
    tune = int(sizes.max()) * int(final_rows.max()) * _F8 * threads if folds else 0
    what = (
        f"{P} ladder{'s' if P > 1 else ''} of {int(final_sizes.max()):,} weights x "
        f"{int(final_rows.max()):,} rows"
    )
    return FitPlan(
        type(estimator).__name__,
        tuple(stages),
        n,
        K,
        threads,
        coef + tune,
        what,
        "use fewer weights (n_weights)" + (" or fewer classes" if P > 1 else ""),
    )


def _tie_pairs_stage(
    estimator: Any, codes: np.ndarray, fit_rows: np.ndarray, K: int, engine: str
) -> Stage | None:
    """At most: a baseline scheme with ``ties="table"`` or ``"pairs"`` fits a ladder for
    each pair of classes in contest at some training point, known only after the fit;
    planned as every pair of classes (``Stage.at_most``)."""
    if getattr(estimator, "scheme", None) not in ("baseline1", "baseline2", "bp1", "bp2"):
        return None
    if K < 3 or getattr(estimator, "ties", None) not in ("table", "pairs"):
        return None
    counts = _count(codes, fit_rows, K)
    a, b = np.triu_indices(K, 1)
    pair_rows = counts[a] + counts[b]
    sizes = _ladder_size(estimator, pair_rows)
    P = a.size
    return Stage("tie pairs", int(sizes.sum()), P, int(pair_rows.max()), "ladder", engine, P, True)


def _noncrossing_plan(estimator: Any, X: np.ndarray, codes: np.ndarray) -> FitPlan:
    """Tuning (EGKL of independent or non-crossing ladders, or hinge per weight), then
    the non-crossing ladder's constrained fits: at the final weights
    (:meth:`~wsvmgui.estimators.noncrossing.NonCrossingLadderClassifier._final_weights`,
    finer than the tuning's on small data), at the width the tuning chooses.  The hinge
    criterion fits a ladder on its training split at every width, each weight at every
    lambda.  Where the width is tuned, the non-crossing stages are priced over the
    grid's widths (:data:`EVERY_WIDTH`, :data:`HINGE_EVERY_WIDTH`)."""
    n = codes.size
    threads = _threads(estimator)
    problems = _problems(estimator, codes, 2)
    tuned = estimator._needs_tuning()
    folds = (
        _folds(estimator, estimator.classes_[codes], holdout=estimator._auto_holdout)
        if tuned
        else None
    )
    rows = np.arange(n) if (folds is None or estimator.refit) else folds[0][0]
    M1 = int(_ladder_size(estimator, np.array([rows.size]))[0])
    # the final ladder's weights: the tuning's, or finer on small data (bounded by
    # FINAL_MAX_INTERVALS when neither n_weights nor weights is given)
    M_final = M1
    if estimator.weights is None and estimator.n_weights is None:
        M_final = int(estimator._final_weights(rows.size).size)
    S = _n_sigmas(estimator)
    width_tuned = folds is not None and S > 1
    nc_engine = EVERY_WIDTH if width_tuned else "noncrossing"
    stages: list[Stage] = []
    final = 1
    if folds is not None and estimator.criterion == "hinge":
        tr, te = folds[0]
        L = _n_lambdas(estimator)
        _check_tuning(problems, [_count(codes, tr, 2)], [_count(codes, te, 2)])
        engine = HINGE_EVERY_WIDTH if S > 1 else "hinge"
        stages.append(Stage("hinge tuning", S * M1 * L, S, tr.size, "noncrossing", engine))
        final = int(estimator.refit)
    elif folds is not None:
        kind = "ladder" if estimator.criterion == "egkl-independent" else "noncrossing"
        engine = str(estimator.engine) if kind == "ladder" else nc_engine
        stages += _ladder_tuning(estimator, problems, folds, codes, 2, np.array([M1]), kind, engine)
    if final:
        stages.append(Stage("non-crossing ladder", M_final, 1, rows.size, "noncrossing", nc_engine))
    M_held = max(M1, M_final if final else 0)
    return FitPlan(
        type(estimator).__name__,
        tuple(stages),
        n,
        2,
        threads,
        2 * M_held * n * _F8,
        f"a ladder of {M_held:,} weights x {n:,} rows",
        "use fewer weights (n_weights)",
    )


def _preconditioned_plan(estimator: Any, X: np.ndarray, codes: np.ndarray) -> FitPlan:
    """The RBF width chosen by plain SVMs over sigma x lambda (no units), the ladder on the
    training split (lambda per weight), every level's SVMs (a unit per level: each over
    the lambda grid, chosen by hinge loss, when tuned), and again on all rows with
    ``refit`` (one SVM per level at its tuned lambda).  The SVM stages are priced by
    plain SVM fits (kind ``"svm"``: engine ``"hinge"``, a level's SVMs over the lambda
    grid; ``"plain"``, one SVM), not by the estimator's first units, which are the
    ladder's.  A non-crossing ladder after a width search is priced at the width that
    search chooses (engine :data:`WIDTH_CHOSEN_FIRST`): its constrained fits cost up to
    25 times more at the narrowest width than at the middle one."""
    n = codes.size
    levels = len(estimator._levels())
    tuned = estimator._needs_tuning()
    folds = (
        _folds(estimator, estimator.classes_[codes], holdout=estimator._auto_holdout)
        if tuned
        else None
    )
    tr = folds[0][0] if folds is not None else np.arange(n)
    refit = bool(folds is not None and estimator.refit)
    M1 = int(_ladder_size(estimator, np.array([n if refit else tr.size]))[0])
    per_weight = _n_lambdas(estimator) if folds is not None else 1
    # the ladder priced as its kind (a non-crossing ladder's constrained fits cost 20 times
    # its first, unconstrained ones: the estimator's first units would price it at a fifth)
    S = _n_sigmas(estimator)
    if estimator.ladder == "noncrossing":
        # at the width the kernel-width stage chooses (the narrowest at n = 1000 on
        # wuliu2011_ex1, where a constrained fit cost 25 times one at the middle width,
        # the probe's width otherwise: estimated 2.5 s, fitted in 100 s)
        tuned_width = folds is not None and S > 1
        kind, engine = "noncrossing", WIDTH_CHOSEN_FIRST if tuned_width else "noncrossing"
    else:
        kind, engine = "ladder", str(estimator.engine)
    stages = []
    if folds is not None and S > 1:  # _choose_kernel: reports no units
        stages.append(Stage("kernel width", 0, S * per_weight, tr.size, "svm", "plain"))
    stages += [
        Stage("ladder", M1 * per_weight, 1, tr.size, kind, engine),
        Stage("SVMs", levels, levels, tr.size, "svm", "hinge" if folds is not None else "plain"),
    ]
    if refit:
        stages += [
            Stage("ladder on all rows", M1, 1, n, kind, engine),
            Stage("SVMs on all rows", levels, levels, n, "svm", "plain"),
        ]
    return FitPlan(
        type(estimator).__name__,
        tuple(stages),
        n,
        2,
        1,
        2 * M1 * n * _F8,
        f"a ladder of {M1:,} weights x {n:,} rows",
        "use fewer weights (n_weights)",
    )


def _probing_plan(estimator: Any, X: np.ndarray, codes: np.ndarray) -> FitPlan:
    """One classifier per threshold and binary problem, per candidate and fold."""
    n = codes.size
    K = int(estimator.classes_.size)
    per_fit = estimator._n_thresholds(n) * (1 if K == 2 else K - 1)
    stages = []
    rows = n
    folds = _folds(estimator, estimator.classes_[codes]) if estimator.param_grid else None
    if folds is not None:
        n_cand = len(estimator._candidates())
        tr = max(f[0].size for f in folds)
        stages.append(
            Stage(
                "tuning",
                per_fit * n_cand * len(folds),
                n_cand * len(folds),
                tr,
                "estimator",
                "probing",
            )
        )
        rows = n if estimator.refit else folds[0][0].size
        final = int(estimator.refit)
    else:
        final = 1
    stages.append(Stage("classifiers", per_fit * final, final, rows, "estimator", "probing"))
    return FitPlan(type(estimator).__name__, tuple(stages), n, K, 1)


def joint_resolution(estimator: Any) -> int:
    """N of a joint estimator's simplex grid: ``1 / d_pi``, its ``N``, or its
    ``n_weights`` (the name that replaces ``N``)."""
    d_pi = getattr(estimator, "d_pi", None)
    if isinstance(d_pi, Real):
        return int(round(1.0 / float(d_pi)))
    N: Any = getattr(estimator, "N", None)
    if not isinstance(N, Integral):  # "deprecated": the resolution is n_weights
        N = estimator.n_weights
    return int(N)


def _joint_plan(estimator: Any, X: np.ndarray, codes: np.ndarray) -> FitPlan:
    """Feature maps and grid fits of every (sigma, lambda, fold), then the refit."""
    from ..joint.simplex_grid import check_resolution, n_grid_points
    from ..joint.tuning import JointScreening

    n, p = X.shape
    K = int(estimator.classes_.size)
    N = joint_resolution(estimator)
    check_resolution(K, N)
    G = int(n_grid_points(K, N))
    threads = _threads(estimator)
    # a fixed penalty: lam, or the deprecated C (its default is the string "deprecated")
    fixed_lam = estimator.lam is not None or isinstance(estimator.C, Real)
    rbf_tuned = estimator.kernel == "rbf" and estimator.sigma is None
    if fixed_lam and not rbf_tuned:
        n_cells, n_folds, rows_tune = 0, 0, 0
        refit, rows_final = 1, n
    else:
        folds = _folds(estimator, estimator.classes_[codes], holdout=True, holdout_share=0.5) or []
        L = 1 if fixed_lam else (_grid_size(estimator.lambdas) or len(_joint_c_grid()))
        S = _n_sigmas(estimator)
        for tr, _ in folds:
            if (_count(codes, tr, K) == 0).any():
                k = int(np.flatnonzero(_count(codes, tr, K) == 0)[0])
                raise InputError(
                    f"class {plain_value(estimator.classes_[k])!r}: a tuning split leaves "
                    "it no training point"
                )
        n_cells, n_folds = L * S, len(folds)
        rows_tune = max((tr.size for tr, _ in folds), default=0)
        refit, rows_final = (int(estimator.refit) if folds else 1), n
    cells = n_cells * n_folds  # (sigma, lambda, fold) grid fits of the tuning
    # grid fits hold W of shape (G, r, K - 1), r features: p, or up to the rows (kernel)
    r_tune = p if estimator.kernel == "linear" else rows_tune
    r = p if estimator.kernel == "linear" else rows_final
    memory = max(cells * G * r_tune, G * r) * (K - 1) * _F8 + G * K * _F8
    stages = []
    screening = JointScreening() if estimator.screen == "auto" else None
    if cells and screening is not None and screening.applies(n_cells, K, N):
        # every cell on a coarser simplex grid, the best few on the full one
        g = int(n_grid_points(K, screening.resolution(K, N)))
        kept = screening.keep * n_folds
        stages.append(
            Stage("screening grid fits", cells * g, cells, rows_tune, "joint", "joint", cells)
        )
        stages.append(Stage("tuning grid fits", kept * G, kept, rows_tune, "joint", "joint", kept))
    elif cells:
        stages.append(
            Stage("tuning grid fits", cells * G, cells, rows_tune, "joint", "joint", cells)
        )
    if refit:
        stages.append(Stage("final grid fit", G, 1, rows_final, "joint", "joint", 1))
    return FitPlan(
        type(estimator).__name__,
        tuple(stages),
        n,
        K,
        threads,
        memory,
        f"{max(cells, 1):,} grid fit{'s' if cells > 1 else ''} of {G:,} simplex weights "
        f"(N = {N}, K = {K}) x {max(r, r_tune):,} features",
        "use a coarser simplex grid (smaller N) or fewer tuning candidates",
    )


def _joint_c_grid() -> tuple[float, ...]:
    from .joint import DEFAULT_C_GRID as JOINT_C_GRID

    return tuple(JOINT_C_GRID)


_PLANNERS = {
    "WeightedSVMClassifier": _ladder_plan,
    "MulticlassWeightedSVMClassifier": _ladder_plan,
    "NonCrossingLadderClassifier": _noncrossing_plan,
    "PreconditionedSVC": _preconditioned_plan,
    "ProbingClassifier": _probing_plan,
    "JointWSVMClassifier": _joint_plan,
}


def plan_fit(estimator: Any, X: np.ndarray, codes: np.ndarray) -> FitPlan:
    """The plan of fitting ``estimator`` (its ``classes_`` set) on validated data.

    Parameters
    ----------
    estimator : BaseProbabilityClassifier
        With ``classes_`` set, as inside ``fit``.
    X : ndarray, shape (n, p)
    codes : ndarray of int, shape (n,)
        Class indices into ``classes_``.

    Returns
    -------
    FitPlan
        A single stage of unknown kind for an estimator this module does not know.

    Raises
    ------
    InputError
        The fit would stop on its tuning split (a class too small for it, a sub-problem
        left one class to train on).
    """
    for cls in type(estimator).__mro__:
        planner = _PLANNERS.get(cls.__name__)
        if planner is not None:
            return planner(estimator, np.asarray(X), np.asarray(codes, dtype=int))
    n = int(np.size(codes))
    return FitPlan(
        type(estimator).__name__,
        (Stage("fit", 0, 1, n, "estimator", "estimator"),),
        n,
        int(np.size(getattr(estimator, "classes_", ()))),
    )


def check_memory(plan: FitPlan, available: int | None = None) -> None:
    """Refuse a plan whose arrays would not fit in memory, before any is allocated.

    Parameters
    ----------
    plan : FitPlan
    available : int, optional
        Bytes available (default: :func:`~wsvmgui.solvers.memory.available_memory`,
        which :func:`~wsvmgui.solvers.memory.memory_limits` can set; unknown: no check).

    Raises
    ------
    MemoryBudgetError
        Naming the arrays, their size, the memory available and the way out.
    """
    room = available_memory() if available is None else available
    if room is None or plan.memory <= SAFETY * room:
        return
    raise MemoryBudgetError(
        f"not enough memory: {plan.estimator}: {plan.memory_what} would need about "
        f"{gb(plan.memory)}, more than the {gb(SAFETY * room)} this machine has available; "
        f"{plan.memory_fix}"
    )
