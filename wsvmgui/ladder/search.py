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
close to 0 or 1).

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
from .engines import DEFAULT_ENGINE, PathFallbackWarning
from .gridsearch import Fold, FoldScore, Grid, Job, JobContext, Search, grid_searches
from .problems import LadderProblem
from .rules import LadderEstimate
from .runs import Engine, LadderRun, engine_plan, named_engine, run_gram
from .tuning import TuningResult, egkl_binary, kernel_with_sigma

__all__ = [
    "EGKL_FLOOR",
    "LADDER_SCORES",
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


def egkl_loss(p: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """EGKL terms of estimates ``p`` (floored at :data:`EGKL_FLOOR`) summed over the rows."""
    p = np.clip(p, EGKL_FLOOR, 1.0 - EGKL_FLOOR)
    if sample_weight is None:
        return egkl_binary(p, y) * y.size
    return float(-np.sum(sample_weight * np.where(y > 0, np.log(p), np.log(1.0 - p))))


def brier_loss(p: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Squared errors ``(p - 1{y = +1})^2`` summed over the rows."""
    terms = (p - (y > 0)) ** 2
    return float(terms.sum() if sample_weight is None else np.sum(sample_weight * terms))


#: Tuning scores of the ladder search by name.
LADDER_SCORES: dict[str, LadderScore] = {"egkl": egkl_loss, "brier": brier_loss}


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


def _scored(
    ladder: Any,
    gram: Gram,
    test: np.ndarray,
    y_test: np.ndarray,
    rule: str,
    score: LadderScore,
    sw_test: np.ndarray | None,
) -> CellScore:
    p = np.concatenate([ladder.estimate(block, rule).p for block in gram.cross_blocks(test)])
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
    kernels: list[Kernel]  # per sigma
    fold_ids: list[list[int]]  # per problem: the fold number of each of its folds
    engine: Engine
    rule: str
    score: LadderScore
    sample_weight: np.ndarray | None


def _fit_cell(job: Job, ctx: JobContext) -> tuple[Any, Gram]:
    """The ladder of ``job``'s cell on its fold's training rows (and their kernel)."""
    run: LadderRun = ctx.data
    t: _Tuning = run.payload
    i, tr = job.search, job.train
    kernel = t.kernels[job.cell[1]]
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


def _score_cell(model: tuple[Any, Gram], job: Job, ctx: JobContext) -> FoldScore:
    """The fold's tuning rows scored by ``model``'s estimate."""
    t: _Tuning = ctx.data.payload
    te = job.test
    sw = None if t.sample_weight is None else t.sample_weight[te]
    cell = _scored(*model, te, t.labels[job.search][te], t.rule, t.score, sw)
    weight = float(te.size if sw is None else sw.sum())
    return FoldScore(cell.loss, weight, cell.misses, cell.engine, cell.fallback)


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
        Threads, one (sigma, problem, lambda, fold) cell each.  The grid engine holds one
        matrix of all rows per sigma; engines that need the dense matrix of their own
        rows (the path) one matrix of a fold's training rows per (sigma, fold).
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
    held = [np.asarray(train) for train, _ in folds]
    storage, engine = engine_plan(
        ex, X, max(tr.size for mine, _ in parts for tr, _ in mine), max(w.size for w in weights),
        max(h.size for h in held), n, engine, "libsvm", "tuning",
    )  # fmt: skip
    per_fold = storage.dense and storage.held_rows < n  # the engine's own rows' matrices
    name, score_fn = _score_fn(score)
    fold_ids = [where for _, where in parts]
    searches = _searches(problems, parts, lambdas, sigmas, weights, only)
    payload = _Tuning(
        [_labels(p, n) for p in problems], list(weights),
        [kernel_with_sigma(kernel, sg) for sg in sigmas], fold_ids,
        named_engine(engine) if isinstance(engine, str) else engine, rule, score_fn,
        sample_weight,
    )  # fmt: skip
    run = Shared.new(LadderRun(X, storage, held if per_fold else None, payload))
    results = _run_searches(searches, run, ex, tracker, name, fold_ids, per_fold)
    return [replace(r, storage=storage.describe()) for r in results]


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
            score_name=score_name, shared=run, group=group, order=order,
        )  # fmt: skip
    finally:
        ex.everywhere(drop_kernels, run.token)
    if isinstance(ex, ClusterExecutor):  # a worker's warnings stay on the worker
        for why in (w for r in results for w in r.fallbacks):
            warnings.warn(f"{why}; the grid ladder answered instead", PathFallbackWarning, 3)
    return results
