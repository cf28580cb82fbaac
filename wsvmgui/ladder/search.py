"""The tuning search of every binary ladder: EGKL over lambda x sigma, on the generic search.

METHODS section 2 (Zeng section 6 for the sub-problems): for each (lambda, sigma) of a
grid, fit a ladder on each fold's training rows and score the fold's tuning rows by the
empirical generalised KL ``-(1/m) sum [1{y=+1} log p_hat + 1{y=-1} log(1 - p_hat)]``; keep
the minimiser.  :func:`search_ladders` does this for one or several binary *problems*
(the binary estimator has one; a divide-and-conquer scheme one per sub-problem) over the
same rows as one batch of :func:`~wsvmgui.ladder.gridsearch.grid_searches`, so that a
kernel matrix is built once per sigma (and fold, for the path) and shared by every
lambda, weight and problem (:mod:`wsvmgui.ladder.runs`).

The unit of work fits a ladder for one (lambda, sigma) on one fold's training rows and
scores that fold's tuning rows (:func:`score_cell`).  It is the one call site of the
ladder *engine*: a name of :mod:`wsvmgui.ladder.engines` (``"path"``, the default: the
exact weight path with its grid-free estimate and a grid fallback; ``"grid"``, one
weighted SVM per weight), or any callable with the same signature (the non-crossing
ladder passes its own).  The score is pluggable (``score``): the EGKL by default, any
name of :data:`LADDER_SCORES` or a callable.  Estimates are floored at
:data:`EGKL_FLOOR` before the EGKL scores them (a path's estimate can come arbitrarily
close to 0 or 1).  With a ``calibration`` (not ``"none"``) and a proper score
(``"brier"`` or ``"log_loss"``), a cell is scored on the estimate the estimator returns:
its cross-validated estimates of every tuning row are recalibrated by a map fitted on the
other rows (:func:`~wsvmgui.ladder.recalibration.recalibrated_terms`) before scoring.
With ``midrung`` (the binary estimator's ``calibration="auto_midtune"``), a cell whose
cross-validated estimates are saturated (:func:`~wsvmgui.ladder.midrung.saturated`
against the problem's weight grid) is scored as the binary ``calibration="auto"`` would
return it there: the middle rung's decision value at every tuning row, mapped by Platt's
sigmoid cross-validated on those rows (:func:`_midrung_pool`); other cells as without it.
``one_se`` chooses the smoothest cell (largest lambda, then largest sigma) within one
standard error of the best score instead of the best; ``"widest"`` the cell of the widest
kernel (largest sigma, then largest lambda) within that standard error.

Execution (:mod:`wsvmgui.executor`): every (sigma, problem, lambda, fold) cell is an
independent task.  Locally they run on ``n_jobs`` threads (libsvm releases the GIL), one
sigma (or sigma and fold) at a time so that one kernel matrix is held; on a Dask cluster
the data are scattered once and workers build their own kernel matrices.  Progress is
counted in units of the weight grid (M - 1 per ladder, whatever the engine), reported as
a ladder progresses (locally) or when its task ends (cluster); cancellation is polled
between fits (the path polls every few dozen steps).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..errors import InputError
from ..executor import ClusterExecutor, Executor, Shared, current_executor
from ..progress import ProgressTracker
from ..solvers.gram import FLY_CACHE_MB, DenseGram, Gram, OnTheFlyGram, drop_kernels
from ..solvers.kernels import Kernel
from ..solvers.memory import KernelStorage
from .engines import DEFAULT_ENGINE, PathFallbackWarning
from .gridsearch import (
    Extension,
    Fold,
    FoldScore,
    Grid,
    Job,
    JobContext,
    PoolFn,
    Search,
    grid_searches,
)
from .midrung import middle_decision, midrung_score, saturated
from .problems import LadderProblem
from .recalibration import recalibrated_terms
from .rules import LadderEstimate
from .runs import Engine, LadderRun, engine_plan, named_engine, run_gram
from .tuning import TuningResult, kernel_with_sigma

__all__ = [
    "EGKL_FLOOR",
    "LADDER_SCORES",
    "LADDER_TERMS",
    "ONE_SE_PREFERENCES",
    "PROPER_SCORES",
    "CellScore",
    "LadderProblem",
    "score_cell",
    "search_ladders",
]


class LadderFit(Protocol):
    """What an engine returns: probabilities at new points."""

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """``(m, n_train)`` kernel rows -> estimates of shape (m,)."""
        ...


#: Estimates are clipped to ``[EGKL_FLOOR, 1 - EGKL_FLOOR]`` before the EGKL scores them
#: (every engine).  A path's estimate can come arbitrarily close to 0 or 1, where one
#: confident miss would decide the tuning; a grid ladder's never comes closer than 1/(2M),
#: so for M <= 50 (the default up to n = 625) the floor changes nothing for it.  Chosen by
#: ``benchmarks/path_egkl_floor.py`` (four binary designs, n = 200 and 600, 3 seeds each):
#: floors up to 1e-3 chose the same cell as no floor in all 24 cases; 1e-2 changed it in 5,
#: lowering the mean |p_hat - p| in 4; mean over the designs 0.0722 against 0.0733 at
#: n = 200, 0.0680 against 0.0678 at n = 600.
EGKL_FLOOR = 1e-2

#: ``score(p, y, sample_weight) -> loss`` summed over tuning rows: ``p`` (m,) the estimate
#: of ``P(y = +1)``, ``y`` (m,) in {-1, +1}, ``sample_weight`` (m,) or None.
LadderScore = Callable[[np.ndarray, np.ndarray, "np.ndarray | None"], float]


#: Estimates are clipped to ``[LOG_LOSS_FLOOR, 1 - LOG_LOSS_FLOOR]`` by the log loss.
LOG_LOSS_FLOOR = 1e-6

#: ``terms(p, y01) -> (m,)``: per-row losses of estimates ``p`` (m,), labels ``y01`` in {0, 1}.
LadderTerms = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _log_terms(p: np.ndarray, y01: np.ndarray, floor: float) -> np.ndarray:
    p = np.clip(p, floor, 1.0 - floor)
    return -np.where(y01 > 0, np.log(p), np.log1p(-p))


def egkl_terms(p: np.ndarray, y01: np.ndarray) -> np.ndarray:
    """EGKL terms of estimates ``p`` (m,) floored at :data:`EGKL_FLOOR`; shape (m,)."""
    return _log_terms(p, y01, EGKL_FLOOR)


def log_loss_terms(p: np.ndarray, y01: np.ndarray) -> np.ndarray:
    """Log-loss terms of ``p`` (m,), clipped only at :data:`LOG_LOSS_FLOOR`; shape (m,)."""
    return _log_terms(p, y01, LOG_LOSS_FLOOR)


def brier_terms(p: np.ndarray, y01: np.ndarray) -> np.ndarray:
    """Squared errors ``(p - y01)^2``; shape (m,)."""
    return (np.asarray(p, dtype=float) - y01) ** 2


#: Per-row terms of the named tuning scores.
LADDER_TERMS: dict[str, LadderTerms] = {
    "egkl": egkl_terms,
    "brier": brier_terms,
    "log_loss": log_loss_terms,
}
#: The scores that judge the estimate the estimator returns (recalibrated, when it is).
PROPER_SCORES = ("brier", "log_loss")


def _summed(terms: LadderTerms) -> LadderScore:
    def loss(p: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        t = terms(p, (np.asarray(y) > 0).astype(float))
        return float(t.sum() if sample_weight is None else np.sum(sample_weight * t))

    loss.__name__ = terms.__name__.replace("_terms", "_loss")
    return loss


egkl_loss = _summed(egkl_terms)
brier_loss = _summed(brier_terms)
log_loss_loss = _summed(log_loss_terms)

#: Tuning scores of the ladder search by name (the terms summed, times sample weights).
LADDER_SCORES: dict[str, LadderScore] = {
    "egkl": egkl_loss,
    "brier": brier_loss,
    "log_loss": log_loss_loss,
}


def _score_fn(score: str | LadderScore) -> tuple[str, LadderScore]:
    if callable(score):
        return str(getattr(score, "__name__", "score")), score
    if score not in LADDER_SCORES:
        raise InputError(
            f"unknown tuning score {score!r}; choose one of {', '.join(LADDER_SCORES)}"
        )
    return score, LADDER_SCORES[score]


class CellScore(NamedTuple):
    """Score of one tuning cell on one fold (:func:`score_cell`).

    Attributes
    ----------
    loss : float
        Sum over the tuning rows of the score's terms (EGKL by default).
    misses : float
        Tuning rows (their weight) misclassified by the estimate's argmax.
    engine : str
        Engine that answered (``"path"`` or ``"grid"``; a custom engine's ladder may
        say otherwise).
    fallback : str
        Why a path broke down and the grid answered, else empty.
    """

    loss: float
    misses: float
    engine: str = "grid"
    fallback: str = ""


def _estimates(ladder: Any, gram: Gram, test: np.ndarray, rule: str) -> np.ndarray:
    """The ladder's estimates of rows ``test``; shape (m,)."""
    return np.concatenate([ladder.estimate(block, rule).p for block in gram.cross_blocks(test)])


def _scored(
    ladder: Any,
    gram: Gram,
    test: np.ndarray,
    y_test: np.ndarray,
    rule: str,
    score: LadderScore,
    sw_test: np.ndarray | None,
    p: np.ndarray | None = None,
) -> CellScore:
    p = _estimates(ladder, gram, test, rule) if p is None else p
    wrong = np.where(p > 0.5, 1.0, -1.0) != y_test
    return CellScore(
        score(p, y_test, sw_test),
        float(np.sum(wrong) if sw_test is None else np.sum(sw_test[wrong])),
        str(getattr(ladder, "engine", "grid")),
        str(getattr(ladder, "fallback", "")),
    )


def score_cell(
    engine: Engine,
    K_all: np.ndarray | None,
    X: np.ndarray,
    kernel: Kernel,
    train: np.ndarray,
    y_train: np.ndarray,
    test: np.ndarray,
    y_test: np.ndarray,
    weights: np.ndarray,
    lam: float,
    rule: str,
    cache_mb: float = FLY_CACHE_MB,
) -> CellScore:
    """Fit a ladder for one (lambda, sigma) on one fold's training rows; score its tuning rows.

    Parameters
    ----------
    engine : Engine
    K_all : ndarray, shape (n, n), or None
        Kernel of all rows at this sigma, used in place (the fold's rows are indices
        into it); None: kernel values are made on the fly from ``X``.
    X : ndarray, shape (n, p)
    kernel : Kernel
        The kernel of ``K_all``.
    train, test : ndarray of int
        Rows of the fold's training and tuning parts.
    y_train, y_test : ndarray
        Their labels in {-1, +1}.
    weights : ndarray, shape (M - 1,)
    lam : float
    rule : str
        How the ladder becomes a probability (:mod:`wsvmgui.ladder.rules`).
    cache_mb : float
        libsvm's kernel cache when values are made on the fly.

    Returns
    -------
    CellScore
        The EGKL terms summed over the tuning rows (estimates floored at
        :data:`EGKL_FLOOR`), the rows the estimate's argmax misclassifies, and the engine
        that answered.
    """
    gram = (
        DenseGram(K_all, train) if K_all is not None else OnTheFlyGram(X, kernel, train, cache_mb)
    )
    ladder = engine(gram, X[train], y_train, weights, lam, kernel, None, None)
    return _scored(ladder, gram, test, y_test, rule, egkl_loss, None)


@dataclass(frozen=True)
class _Tuning:
    """What every tuning task reads beyond the data (part of the shared run)."""

    labels: list[np.ndarray]  # per problem: label of every data row (0: not in it)
    weights: list[np.ndarray]  # per problem: the weight grid
    kernel: Kernel  # the template; each cell's sigma is put in (the grid may grow)
    fold_ids: list[list[int]]  # per problem: the fold number of each of its folds
    engine: Engine
    rule: str
    score: LadderScore
    sample_weight: np.ndarray | None
    terms: LadderTerms | None = None  # per-row terms of a named score
    keep_estimates: bool = False  # hand every fold's estimates to the pool
    midrung: bool = False  # with them, the middle rung's decision values (_midrung_pool)


def _fit_cell(job: Job, ctx: JobContext) -> tuple[Any, Gram]:
    """The ladder of ``job``'s cell on its fold's training rows (and their kernel)."""
    run: LadderRun = ctx.data
    t: _Tuning = run.payload
    i, tr = job.search, job.train
    kernel = kernel_with_sigma(t.kernel, float(job.params["sigma"]))
    ctx.check()
    gram = run_gram(run, ctx.token, kernel, tr, t.fold_ids[i][job.fold])

    def step(_d: int, _total: int, _fit: Any) -> None:
        ctx.step()

    extra = {} if t.sample_weight is None else {"sample_weight": t.sample_weight[tr]}
    ladder = t.engine(
        gram, run.X[tr], t.labels[i][tr], t.weights[i], float(job.params["lambda"]), kernel,
        step, ctx.cancelled, **extra,
    )  # fmt: skip
    return ladder, gram


def _estimates_and_middle(
    ladder: Any, gram: Gram, test: np.ndarray, rule: str
) -> tuple[np.ndarray, np.ndarray]:
    """The ladder's estimates of rows ``test`` and its middle rung's decision values there
    (:func:`~wsvmgui.ladder.midrung.middle_decision`); two arrays of shape (m,)."""
    p, d = [], []
    for block in gram.cross_blocks(test):
        p.append(ladder.estimate(block, rule).p)
        d.append(middle_decision(ladder, block))
    return np.concatenate(p), np.concatenate(d)


def _score_cell(model: tuple[Any, Gram], job: Job, ctx: JobContext) -> FoldScore:
    """The fold's tuning rows scored by ``model``'s estimate."""
    t: _Tuning = ctx.data.payload
    te = job.test
    sw = None if t.sample_weight is None else t.sample_weight[te]
    y = t.labels[job.search][te]
    d = None
    if t.midrung:
        p, d = _estimates_and_middle(*model, te, t.rule)
    else:
        p = _estimates(*model, te, t.rule)
    cell = _scored(*model, te, y, t.rule, t.score, sw, p)
    weight = float(te.size if sw is None else sw.sum())
    y01 = (y > 0).astype(float)
    terms = None
    if t.terms is not None:
        terms = t.terms(p, y01) if sw is None else sw * t.terms(p, y01)
    data: Any = (p, y01) if t.keep_estimates else None
    if d is not None:
        data = (p, y01, d, t.weights[job.search])
    return FoldScore(cell.loss, weight, cell.misses, cell.engine, cell.fallback, terms, data)


def _recalibrated_pool(calibration: str, terms: LadderTerms) -> PoolFn:
    """A cell's per-row terms after a recalibration cross-validated on its folds' estimates."""

    def pool(scores: Sequence[FoldScore]) -> np.ndarray:
        p = np.concatenate([s.data[0] for s in scores])
        y = np.concatenate([s.data[1] for s in scores])
        return recalibrated_terms(p, y, calibration, terms)

    return pool


def _midrung_pool(base: PoolFn | None, terms: LadderTerms) -> PoolFn:
    """A cell's per-row terms as the binary ``calibration="auto"`` would return its estimate.

    Where more than :data:`~wsvmgui.ladder.midrung.SATURATION_SHARE` of the cell's
    cross-validated estimates (every fold's tuning rows) lie outside the problem's end
    weights, ``terms`` of Platt's sigmoid on the middle rung's decision values
    (:func:`~wsvmgui.ladder.midrung.midrung_score`), the map cross-validated on those rows
    (:func:`~wsvmgui.ladder.recalibration.recalibrated_terms`, ``"sigmoid"``; sample
    weights not used); elsewhere ``base`` (None: the cell is scored as without a pool).
    Each fold's ``data`` is ``(p, y01, d, weights)``: estimates, 0/1 labels, middle-rung
    decision values (each (m_f,)) and the problem's weight grid (M - 1,).
    """

    def pool(scores: Sequence[FoldScore]) -> np.ndarray | None:
        p = np.concatenate([s.data[0] for s in scores])
        if not saturated(p, scores[0].data[3]):
            return None if base is None else base(scores)
        y = np.concatenate([s.data[1] for s in scores])
        d = np.concatenate([s.data[2] for s in scores])
        return recalibrated_terms(midrung_score(d), y, "sigmoid", terms)

    return pool


def _width(params: dict[str, Any]) -> float:
    sigma = params.get("sigma")
    return float(sigma) if sigma is not None and np.isfinite(sigma) else 0.0


def _smoothest(params: dict[str, Any]) -> tuple[float, float]:
    """Ranks cells for the one-standard-error rule: largest lambda, then largest sigma."""
    return (-float(params["lambda"]), -_width(params))


def _widest(params: dict[str, Any]) -> tuple[float, float]:
    """Ranks cells for ``one_se="widest"``: largest sigma, then largest lambda."""
    return (-_width(params), -float(params["lambda"]))


#: How ``one_se`` ranks the cells within one standard error of the best (first wins).
ONE_SE_PREFERENCES = {"smoothest": _smoothest, "widest": _widest}


def _problem_folds(
    prob: LadderProblem, folds: Sequence[Fold], n: int
) -> tuple[list[Fold], list[int]]:
    """The problem's own rows of every fold that tunes it, and those folds' numbers."""
    mine: list[Fold] = []
    where: list[int] = []
    for f, (train, test) in enumerate(folds):
        tr, y_tr = prob.select(np.asarray(train), n)
        te, _ = prob.select(np.asarray(test), n)
        if te.size == 0:
            continue
        if not ((y_tr > 0).any() and (y_tr < 0).any()):
            raise InputError(f"{prob.what}: a tuning split leaves no training point of one class")
        mine.append((tr, te))
        where.append(f)
    if not mine:
        raise InputError(f"{prob.what} has no point in any tuning part")
    tuned = prob.select(np.concatenate([te for _, te in mine]), n)[1]
    if not ((tuned > 0).any() and (tuned < 0).any()):
        raise InputError(
            f"{prob.what}: the tuning rows hold only one of its classes, so its EGKL "
            "cannot choose lambda and sigma (does the tuning set miss a class?)"
        )
    return mine, where


def _labels(prob: LadderProblem, n: int) -> np.ndarray:
    label = np.zeros(n)
    label[prob.rows] = prob.y
    return label


def search_ladders(
    X: np.ndarray,
    problems: Sequence[LadderProblem],
    folds: Sequence[Fold],
    kernel: Kernel,
    sigmas: np.ndarray,
    weights: Sequence[np.ndarray],
    lambdas: Sequence[np.ndarray],
    *,
    rule: str = "count",
    engine: Engine | str = DEFAULT_ENGINE,
    n_jobs: int = 1,
    tracker: ProgressTracker,
    executor: Executor | None = None,
    only: Sequence[np.ndarray] | None = None,
    score: str | LadderScore = "egkl",
    sample_weight: np.ndarray | None = None,
    calibration: str = "none",
    one_se: bool | str = False,
    extend: Extension | None = None,
    se_multiple: float = 1.0,
    midrung: bool = False,
) -> list[TuningResult]:
    """The tuning score over lambda x sigma of every problem, summed over the folds.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    problems : sequence of LadderProblem
    folds : sequence of (train, test)
        Row indices into ``X``; each problem uses its own rows of every part.
    kernel : Kernel
        Template; for RBF its width is replaced by each value of ``sigmas``.
    sigmas : ndarray, shape (S,)
        RBF widths (a single NaN for kernels without one).
    weights : sequence of ndarray, shape (M_i - 1,)
        Weight grid of each problem.
    lambdas : sequence of ndarray, shape (L_i,)
        Lambda grid of each problem.
    rule : str
        Probability rule scored (:mod:`wsvmgui.ladder.rules`).
    engine : str or Engine
        A name of :data:`~wsvmgui.ladder.engines.ENGINES` (libsvm for grid ladders) or
        an engine callable.
    n_jobs : int
        Threads, one (sigma, problem, lambda, fold) cell each (the matrices they hold:
        :func:`_kernel_plan`).
    tracker : ProgressTracker
        Its total grows by M - 1 units per ladder, reported as the ladder progresses.
    executor : Executor, optional
        Where the cells run; default :func:`~wsvmgui.executor.current_executor`.
    only : sequence of ndarray of bool, shape (L_i, S), optional
        Per problem, the cells to fit (the others are left out and score NaN; see
        :mod:`wsvmgui.ladder.screening`); default every cell.
    score : str or callable
        The tuning score (:data:`LADDER_SCORES`, default the EGKL).
    sample_weight : ndarray, shape (n,), optional
        Weight of every data row: multiplies its bound in the fits and its term in the
        score.
    calibration : str
        The estimator's ``calibration``: with a map and a score of
        :data:`PROPER_SCORES`, cells are scored after the recalibration (module
        docstring; sample weights are then not used in the score).
    one_se : bool or {"smoothest", "widest"}
        The one-standard-error rule (module docstring): True or ``"smoothest"`` toward
        the largest lambda, then sigma; ``"widest"`` toward the largest sigma, then
        lambda.  False: the cell of the smallest score.
    se_multiple : float
        ``one_se``: how many standard errors above the smallest score a cell may be
        (default 1).
    midrung : bool
        Score a cell whose cross-validated estimates are saturated on the middle rung's
        sigmoid, as the binary ``calibration="auto"`` returns it there (module docstring;
        a named ``score`` only).  Default False.
    extend : Extension, optional
        Grow lambda and sigma past an end the chosen cell sits on
        (:class:`~wsvmgui.ladder.gridsearch.Extension`; the new cells are fitted on the
        same folds); the tables then have the grown shape.

    Returns
    -------
    list of TuningResult
        One per problem: ``score`` (``egkl``) and ``error`` over every tuning row of every
        fold (each row counted once per fold it is tuned in; NaN for cells left out);
        ties go to the first cell in grid order (by default the largest lambda).
        ``engines`` counts which engine answered the cells; a path that broke down
        counts as ``"grid"`` and its reason is kept in ``fallbacks``.  ``storage`` says
        how the kernel was held.

    Raises
    ------
    InputError
        A problem with no tuning rows, or a fold leaving it one class to train on.
    MemoryBudgetError
        The run would not fit in memory, even with kernel values made on the fly.
    SolverError
        Every fit of some problem's grid failed.
    """
    n = X.shape[0]
    sigmas = np.asarray(sigmas, dtype=float)
    parts = [_problem_folds(prob, folds, n) for prob in problems]
    ex = executor or current_executor(n_jobs)
    storage, engine, held = _kernel_plan(ex, X, parts, folds, weights, engine)
    name, score_fn, terms, pool = _scoring(score, calibration, midrung)
    fold_ids = [where for _, where in parts]
    searches = _searches(problems, parts, lambdas, sigmas, weights, only)
    payload = _Tuning(
        [_labels(p, n) for p in problems], list(weights),
        kernel, fold_ids,
        named_engine(engine) if isinstance(engine, str) else engine, rule, score_fn,
        sample_weight, terms, pool is not None, midrung,
    )  # fmt: skip
    run = Shared.new(LadderRun(X, storage, held, payload))
    preference = "smoothest" if one_se is True or one_se is False else one_se
    if preference not in ONE_SE_PREFERENCES:
        raise InputError(
            f"unknown one_se preference {one_se!r}; choose one of {', '.join(ONE_SE_PREFERENCES)}"
        )
    prefer = ONE_SE_PREFERENCES[preference]
    choice = {
        "pool": pool, "one_se": bool(one_se), "prefer": prefer, "extend": extend,
        "se_multiple": se_multiple,
    }  # fmt: skip
    results = _run_searches(searches, run, ex, tracker, name, fold_ids, held is not None, choice)
    return [replace(r, storage=storage.describe()) for r in results]


def _scoring(
    score: str | LadderScore, calibration: str, midrung: bool = False
) -> tuple[str, LadderScore, LadderTerms | None, PoolFn | None]:
    """How :func:`search_ladders` scores a cell: the score's name and function, its
    per-row terms (a named score), and the pool that recalibrates the estimates first
    (with a map and a score of :data:`PROPER_SCORES`; with ``midrung``, the middle rung's
    sigmoid on saturated cells, :func:`_midrung_pool`)."""
    name, score_fn = _score_fn(score)
    terms = LADDER_TERMS.get(name) if isinstance(score, str) else None
    pool = None
    if terms is not None and calibration != "none" and name in PROPER_SCORES:
        pool = _recalibrated_pool(calibration, terms)
        name = f"{name} (recalibrated: {calibration})"
    if midrung:
        if terms is None:
            raise InputError("midrung tuning needs a named tuning score")
        pool = _midrung_pool(pool, terms)
        name = f"{name} (saturated cells: middle rung, sigmoid)"
    return name, score_fn, terms, pool


def _kernel_plan(
    ex: Executor,
    X: np.ndarray,
    parts: list[tuple[list[Fold], list[int]]],
    folds: Sequence[Fold],
    weights: Sequence[np.ndarray],
    engine: Engine | str,
) -> tuple[KernelStorage, Engine | str, list[np.ndarray] | None]:
    """How the kernel is held while tuning, the engine, and the folds' training rows when
    each holds its own matrix (else None).

    The grid engine holds one matrix of all rows per sigma; engines that need the dense
    matrix of their own rows (the path) one matrix of a fold's training rows per (sigma,
    fold).
    """
    n = X.shape[0]
    held = [np.asarray(train) for train, _ in folds]
    storage, engine = engine_plan(
        ex, X, max(tr.size for mine, _ in parts for tr, _ in mine), max(w.size for w in weights),
        max(h.size for h in held), n, engine, "libsvm", "tuning",
    )  # fmt: skip
    per_fold = storage.dense and storage.held_rows < n  # the engine's own rows' matrices
    return storage, engine, held if per_fold else None


def _searches(
    problems: Sequence[LadderProblem],
    parts: list[tuple[list[Fold], list[int]]],
    lambdas: Sequence[np.ndarray],
    sigmas: np.ndarray,
    weights: Sequence[np.ndarray],
    only: Sequence[np.ndarray] | None,
) -> list[Search]:
    """One search per problem: its lambda x sigma grid over its own folds."""
    return [
        Search(
            Grid(
                {"lambda": np.asarray(lambdas[i], dtype=float), "sigma": sigmas},
                None if only is None else only[i],
            ),
            mine,
            prob.name and f"sub-problem {prob.name}",
            int(weights[i].size),
        )
        for i, (prob, (mine, _)) in enumerate(zip(problems, parts, strict=True))
    ]


def _run_searches(
    searches: list[Search],
    run: Shared,
    ex: Executor,
    tracker: ProgressTracker,
    score_name: str,
    fold_ids: list[list[int]],
    per_fold: bool,
    choice: dict[str, Any],
) -> list[TuningResult]:
    """The searches as one batch: one sigma (and fold, when each fold's training rows
    hold their own matrix) at a time; the run's matrices dropped afterwards."""

    def group(job: Job) -> Any:
        return (job.cell[1], fold_ids[job.search][job.fold]) if per_fold else job.cell[1]

    def order(job: Job) -> Any:  # one sigma (and fold) at a time, then grid order
        fold = fold_ids[job.search][job.fold] if per_fold else 0
        return (job.cell[1], fold, job.search, job.cell, job.fold)

    try:
        results = grid_searches(
            searches, _fit_cell, _score_cell, tracker=tracker, executor=ex,
            score_name=score_name, shared=run, group=group, order=order, **choice,
        )  # fmt: skip
    finally:
        ex.everywhere(drop_kernels, run.token)
    if isinstance(ex, ClusterExecutor):  # a worker's warnings stay on the worker
        for why in (w for r in results for w in r.fallbacks):
            warnings.warn(f"{why}; the grid ladder answered instead", PathFallbackWarning, 3)
    return results
