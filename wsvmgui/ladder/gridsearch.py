"""The one tuning search of every tuned estimator: cells x folds -> score -> the best cell.

Every tuned scheme chooses its parameters the same way, whatever its model and its score
(the papers differ): fit each candidate *cell* of a grid on each fold's training rows,
score the fold's tuning rows, add the scores over the folds, keep the minimiser, refit.
:func:`grid_search` is that skeleton, once; a scheme supplies the grid, the folds and two
functions.

Adopting it
-----------
A tuning loop ``for cell in grid: for train, test in folds: fit; score`` becomes::

    from wsvmgui.ladder.gridsearch import FoldScore, Grid, grid_search, rescale_lambda

    def fit(job, ctx):  # one cell on one fold's training rows
        return fit_model(X[job.train], y[job.train], lam=job.params["lambda"])

    def score(model, job, ctx):  # its tuning rows: summed loss and their weight
        loss = log_loss_terms(model, X[job.test], y[job.test]).sum()
        return FoldScore(loss, weight=job.test.size)

    result = grid_search(Grid({"lambda": lambdas, "sigma": sigmas}), folds, fit, score,
                         tracker=tracker, score_name="cross_entropy")
    lam = rescale_lambda(result.best_params["lambda"], n_tuned, n_final)  # keep C on refit

``result`` is a :class:`~wsvmgui.ladder.tuning_table.TuningResult`: the score of every
cell, the chosen cell (``best``, ``best_params``), whether it sits on an edge of the grid
(``edge``), the failures, the time.  The estimators store it as ``tuning_`` and put ``edge`` into
``fit_info_["tuning_edge"]``.

Semantics
---------
* Cells are searched in C order of the grid's axes (the last axis fastest); a cell's
  score is the sum over its folds of :attr:`FoldScore.loss` over the sum of
  :attr:`FoldScore.weight` (every tuning row counted once per fold it is tuned in, with
  its sample weight); ``Grid.only`` leaves cells out (they score NaN).
* A fit or score that raises one of ``failures`` (:class:`~wsvmgui.errors.SolverError`)
  makes its cell score inf; the message is kept.  When no cell has a finite score the
  search raises :class:`~wsvmgui.errors.SolverError` with the first message.
* The best cell is the first in grid order whose score is at most the smallest plus
  ``tol`` (ties go to the first cell: order the axes so that the preferred value of a tie,
  e.g. the largest lambda, comes first).
* With ``one_se``, the best cell is the one ``prefer`` ranks first (e.g. the smoothest
  model) among the cells whose score is at most the smallest plus the smallest's
  standard error (Breiman et al. 1984's one-standard-error rule); the standard error of
  a cell is that of the mean of its per-row terms (:attr:`FoldScore.terms`).
* ``pool`` scores a cell from all its folds at once (e.g. a recalibration fitted to the
  estimates of every fold's tuning rows, cross-validated): it receives the cell's
  :class:`FoldScore` of every fold and returns per-row terms whose mean is the score.
* The score is the caller's: the EGKL of a ladder, a cross-entropy, a hinge loss, an
  error rate, a Brier score; :attr:`TuningResult.score_name` names it.

Execution
---------
Every (cell, fold) *job* is a :class:`~wsvmgui.executor.Task` on the executor (threads of
this process, or a Dask cluster): fit and score run in the task, so a model never
travels.  ``shared`` data is placed once where tasks run (:meth:`JobContext.data`);
``group`` keeps the jobs that share a large object (a kernel matrix) together and
``order`` sorts them; ``units`` counts progress per job (a job may step fewer; the rest is
stepped when it fails).  ``fit_all`` replaces the per-job fits by one call that fits
every job at once (e.g. the joint simplex grids, which parallelise their own segments);
scoring then runs here.  :func:`grid_searches` runs several searches (the sub-problems of
a divide-and-conquer scheme) as one batch of tasks.  Results do not depend on where tasks
ran: scores are assembled in grid and fold order.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError, SolverError
from ..executor import Executor, LocalExecutor, Shared, Task, TaskContext, current_executor
from ..progress import ProgressTracker
from .splits import Fold
from .tuning_table import (
    AxisValues,
    Grid,
    TuningResult,
    best_cell,
    grid_edges,
    one_se_cell,
    standard_error,
)

__all__ = [
    "AxisValues",
    "FoldScore",
    "Grid",
    "Job",
    "JobContext",
    "Search",
    "TuningResult",
    "best_cell",
    "grid_edges",
    "grid_search",
    "grid_searches",
    "one_se_cell",
    "one_split_search",
    "rescale_lambda",
]


def rescale_lambda(lam: float, n_tuned: float, n_final: float) -> float:
    """The lambda of a fit on ``n_final`` rows that keeps ``C = 1 / (2 n lambda)`` of a fit
    on ``n_tuned`` rows (the refit rule of every tuned scheme, as scikit-learn's grid
    search over ``SVC(C)`` keeps C).  Row counts are sums of sample weights when weighted.
    """
    return float(lam * n_tuned / n_final)


class FoldScore(NamedTuple):
    """What scoring one cell on one fold's tuning rows gives.

    Attributes
    ----------
    loss : float
        The score's terms summed over the tuning rows (each times its sample weight).
    weight : float
        The rows' total weight (their count when unweighted).
    error : float
        Weight of the rows the model misclassifies (NaN when the score does not say).
    engine : str
        Which engine answered (ladders: ``"path"`` or ``"grid"``), else empty.
    fallback : str
        Why the engine fell back (a path that broke down), else empty.
    terms : ndarray, shape (m,), or None
        The per-row terms summing to ``loss`` (for the one-standard-error rule).
    data : object
        Whatever the search's ``pool`` needs from this fold (e.g. the estimates).
    """

    loss: float
    weight: float
    error: float = float("nan")
    engine: str = ""
    fallback: str = ""
    terms: np.ndarray | None = None
    data: Any = None


@dataclass(frozen=True)
class Job:
    """One cell on one fold.

    Attributes
    ----------
    search : int
        Which search of a batch (:func:`grid_searches`); 0 for :func:`grid_search`.
    cell : tuple of int
        The cell's index in its grid.
    params : dict
        Its axis values (:meth:`Grid.params`).
    fold : int
        Position of the fold in the search's folds.
    train, test : ndarray of int
        The fold's training and tuning rows.
    """

    search: int
    cell: tuple[int, ...]
    params: dict[str, Any]
    fold: int
    train: np.ndarray
    test: np.ndarray


class JobContext:
    """What a job's ``fit`` and ``score`` see: the run's shared data, progress, cancellation."""

    def __init__(self, task: TaskContext, shared: Shared | None) -> None:
        self._task = task
        self._shared = shared
        self.done = 0

    @property
    def data(self) -> Any:
        """The ``shared`` value of the run (None when nothing was shared)."""
        return None if self._shared is None else self._shared.value

    @property
    def token(self) -> str:
        """Names the shared data (e.g. for per-process caches); "" when none."""
        return "" if self._shared is None else self._shared.token

    @property
    def remote(self) -> bool:
        """True on a cluster worker."""
        return self._task.remote

    def step(self, n: int = 1, partial: Any = None) -> None:
        """``n`` progress units done (``partial``: an object for live views)."""
        self.done += int(n)
        self._task.step(n, partial)

    def cancelled(self) -> bool:
        return self._task.cancelled()

    def check(self) -> None:
        """Raise :class:`~wsvmgui.errors.Cancelled` when the run is being stopped."""
        self._task.check()


#: ``fit(job, ctx) -> model``.
FitFn = Callable[[Job, JobContext], Any]
#: ``score(model, job, ctx) -> FoldScore``.
ScoreFn = Callable[[Any, Job, JobContext], FoldScore]


@dataclass(frozen=True)
class Search:
    """One search of a batch: its grid, its folds, and how to name it.

    Attributes
    ----------
    grid : Grid
    folds : sequence of (train, test)
        Rows for this search; every tuning part non-empty.
    name : str
        Names the search in messages ("sub-problem 2|1,2"); empty for "the problem".
    units : int
        Progress units of one job.
    """

    grid: Grid
    folds: Sequence[Fold]
    name: str = ""
    units: int = 1

    @property
    def what(self) -> str:
        return self.name or "the problem"


#: ``pool(fold_scores) -> terms``: per-row terms of a cell from its folds' scores.
PoolFn = Callable[[Sequence[FoldScore]], np.ndarray]
#: ``prefer(params) -> key``: the one-standard-error rule keeps the smallest key.
PreferFn = Callable[[dict[str, Any]], Any]


class _Outcome(NamedTuple):
    score: FoldScore | None
    failure: str | None
    seconds: float


def _run_job(
    ctx: TaskContext,
    shared: Shared | None,
    fit: FitFn,
    score: ScoreFn,
    job: Job,
    units: int,
    failures: tuple[type[BaseException], ...],
) -> _Outcome:
    """Fit and score one job in a task; a failure's message instead of raising it."""
    start = time.perf_counter()
    jctx = JobContext(ctx, shared)
    try:
        out = score(fit(job, jctx), job, jctx)
    except failures as exc:
        if units > jctx.done:
            ctx.step(units - jctx.done)
        return _Outcome(None, str(exc), time.perf_counter() - start)
    return _Outcome(out, None, time.perf_counter() - start)


def _jobs(searches: Sequence[Search]) -> list[Job]:
    return [
        Job(s, cell, search.grid.params(cell), f, np.asarray(tr), np.asarray(te))
        for s, search in enumerate(searches)
        for cell in search.grid.cells()
        for f, (tr, te) in enumerate(search.folds)
    ]


def _run_tasks(
    jobs: list[Job],
    searches: Sequence[Search],
    fit: FitFn,
    score: ScoreFn,
    executor: Executor,
    tracker: ProgressTracker,
    shared: Shared | None,
    group: Callable[[Job], Hashable] | None,
    failures: tuple[type[BaseException], ...],
) -> list[_Outcome]:
    """Every job as a task; outcomes in job order."""
    handle = None if shared is None else executor.share(shared)
    try:
        tasks = [
            Task(
                _run_job,
                (handle, fit, score, job, searches[job.search].units, failures),
                units=searches[job.search].units,
                group=None if group is None else group(job),
            )
            for job in jobs
        ]
        return executor.run(tasks, tracker)
    finally:
        if handle is not None:
            executor.release(handle)


def _fit_all_then_score(
    jobs: list[Job],
    fit_all: Callable[[Sequence[Job]], Sequence[Any]],
    score: ScoreFn,
    tracker: ProgressTracker,
    failures: tuple[type[BaseException], ...],
) -> list[_Outcome]:
    """One call fits every job; each is scored here."""
    start = time.perf_counter()
    models = list(fit_all(jobs))
    if len(models) != len(jobs):
        raise InputError(f"fit_all returned {len(models)} models for {len(jobs)} jobs")
    share = (time.perf_counter() - start) / max(len(jobs), 1)
    ctx = JobContext(_TrackerContext(tracker), None)
    out = []
    for job, model in zip(jobs, models, strict=True):
        begin = time.perf_counter()
        try:
            out.append(_Outcome(score(model, job, ctx), None, share + time.perf_counter() - begin))
        except failures as exc:
            out.append(_Outcome(None, str(exc), share))
    return out


class _TrackerContext(TaskContext):
    """A task context that reports to a tracker (scoring in this process)."""

    def __init__(self, tracker: ProgressTracker) -> None:
        self._tracker = tracker

    def step(self, n: int = 1, partial: Any = None) -> None:
        self._tracker.step(n, partial)

    def cancelled(self) -> bool:
        return self._tracker.cancel_requested()


@dataclass(frozen=True)
class _Choice:
    """How a search chooses its cell from the table (see :func:`grid_searches`)."""

    tol: float = 0.0
    pool: PoolFn | None = None
    one_se: bool = False
    prefer: PreferFn | None = None


def _assemble(
    search: Search,
    jobs: list[Job],
    outcomes: list[_Outcome],
    score_name: str,
    choice: _Choice,
) -> TuningResult:
    """One search's table from its jobs' outcomes (jobs in grid, then fold order)."""
    shape = search.grid.shape
    loss, weight = np.zeros(shape), np.zeros(shape)
    miss = np.zeros(shape)
    per_cell: dict[tuple[int, ...], list[FoldScore]] = {}
    if search.grid.only is not None:
        loss[~search.grid.only] = np.nan
    failures: list[str] = []
    engines: Counter = Counter()
    fallbacks: list[str] = []
    seconds = 0.0
    for job, out in zip(jobs, outcomes, strict=True):
        seconds += out.seconds
        if out.score is None:
            failures.append(str(out.failure))
            loss[job.cell] = np.inf
            continue
        loss[job.cell] += out.score.loss
        weight[job.cell] += out.score.weight
        miss[job.cell] += out.score.error
        per_cell.setdefault(job.cell, []).append(out.score)
        if out.score.engine:
            engines[out.score.engine] += 1
        if out.score.fallback:
            fallbacks.append(out.score.fallback)
    se = _cell_errors(per_cell, loss, weight, choice.pool)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(np.isfinite(loss), loss / weight, loss)
        error = np.where(np.isfinite(score), miss / weight, np.nan)
    if choice.one_se:
        grid = search.grid
        prefer = choice.prefer

        def rank(cell: tuple[int, ...]) -> Any:
            return cell if prefer is None else prefer(grid.params(cell))

        best = one_se_cell(score, se, rank)
    else:
        best = best_cell(score, choice.tol)
    if best is None:
        raise SolverError(
            f"{search.what}: every fit of the tuning grid failed; first failure: "
            + (failures[0] if failures else "unknown")
        )
    return TuningResult(
        axes=search.grid.axes,
        score=score,
        best=best,
        score_name=score_name,
        error=None if np.isnan(error).all() else error,
        edge=grid_edges(search.grid.axes, best),
        failures=failures,
        seconds=seconds,
        engines=dict(engines),
        fallbacks=fallbacks,
        se=None if np.isnan(se).all() else se,
        rule="one_se" if choice.one_se else "min",
    )


def _cell_errors(
    per_cell: dict[tuple[int, ...], list[FoldScore]],
    loss: np.ndarray,
    weight: np.ndarray,
    pool: PoolFn | None,
) -> np.ndarray:
    """Every cell's standard error; with ``pool``, ``loss`` and ``weight`` (changed in
    place) become the pooled terms' sum and count."""
    se = np.full(loss.shape, np.nan)
    for cell, scores in per_cell.items():
        if not np.isfinite(loss[cell]):
            continue
        if pool is not None:
            terms = np.asarray(pool(scores), dtype=float)
            loss[cell], weight[cell] = float(terms.sum()), float(terms.size)
        elif all(s.terms is not None for s in scores):
            terms = np.concatenate([np.asarray(s.terms, dtype=float) for s in scores])
        else:
            continue
        se[cell] = standard_error(terms, float(loss[cell]), float(weight[cell]))
    return se


def grid_searches(
    searches: Sequence[Search],
    fit: FitFn | None,
    score: ScoreFn,
    *,
    tracker: ProgressTracker,
    executor: Executor | None = None,
    score_name: str = "score",
    shared: Shared | None = None,
    group: Callable[[Job], Hashable] | None = None,
    order: Callable[[Job], Any] | None = None,
    fit_all: Callable[[Sequence[Job]], Sequence[Any]] | None = None,
    failures: tuple[type[BaseException], ...] = (SolverError,),
    tol: float = 0.0,
    pool: PoolFn | None = None,
    one_se: bool = False,
    prefer: PreferFn | None = None,
) -> list[TuningResult]:
    """Several searches run as one batch of jobs; one :class:`TuningResult` each.

    Parameters
    ----------
    searches : sequence of Search
    fit : callable or None
        ``fit(job, ctx) -> model`` (None with ``fit_all``).
    score : callable
        ``score(model, job, ctx) -> FoldScore``.
    tracker : ProgressTracker
        Its total grows by ``units`` per job (``fit_all``: by nothing, the caller counts).
    executor : Executor, optional
        Where the jobs run; default :func:`~wsvmgui.executor.current_executor`.
    score_name : str
        What the score is (kept in the results).
    shared : Shared, optional
        Data placed once where the jobs run (``ctx.data``; ``ctx.token`` its token, e.g.
        to drop per-process caches afterwards).
    group : callable, optional
        ``group(job) -> hashable``: locally, groups run one after another.
    order : callable, optional
        ``order(job) -> key``: the order jobs are handed to the executor (default: grid,
        then fold order).
    fit_all : callable, optional
        ``fit_all(jobs) -> models``: fits every job at once, in this process.
    failures : tuple of exception types
        Errors that make a cell score inf instead of stopping the search.
    tol : float
        Scores within ``tol`` of the smallest tie (the first in grid order wins).
    pool : callable, optional
        ``pool(fold_scores) -> terms``: a cell's per-row terms from the
        :class:`FoldScore` of all its folds (in fold order); the score is their mean.
    one_se : bool
        Choose by the one-standard-error rule (``tol`` is then not used).
    prefer : callable, optional
        ``prefer(params) -> key`` ranks the cells for ``one_se`` (smallest first);
        default: grid order.

    Returns
    -------
    list of TuningResult, in the order of ``searches``

    Raises
    ------
    SolverError
        Every fit of some search failed.
    """
    jobs = _jobs(searches)
    if order is not None:
        jobs.sort(key=order)
    if fit_all is None:
        if fit is None:
            raise InputError("grid_search needs fit or fit_all")
        tracker.add_total(sum(searches[j.search].units for j in jobs))
        tracker.check()
        ex = executor or current_executor()
        outcomes = _run_tasks(
            jobs, searches, fit, score, ex, tracker, shared, group, failures
        )  # fmt: skip
    else:
        tracker.check()
        outcomes = _fit_all_then_score(jobs, fit_all, score, tracker, failures)
    results = []
    for s, search in enumerate(searches):
        mine = sorted(
            (i for i, job in enumerate(jobs) if job.search == s),
            key=lambda i: (jobs[i].cell, jobs[i].fold),
        )
        results.append(
            _assemble(
                search,
                [jobs[i] for i in mine],
                [outcomes[i] for i in mine],
                score_name,
                _Choice(tol, pool, one_se, prefer),
            )  # fmt: skip
        )
    return results


def grid_search(
    cells: Grid,
    folds: Sequence[Fold],
    fit: FitFn | None,
    score: ScoreFn,
    *,
    tracker: ProgressTracker,
    executor: Executor | None = None,
    units: int = 1,
    name: str = "",
    **options: Any,
) -> TuningResult:
    """The search of one grid over ``folds`` (see the module docstring).

    Parameters
    ----------
    cells : Grid
    folds : sequence of (train, test)
        Row indices (e.g. :func:`~wsvmgui.ladder.splits.resolve_cv`).
    fit, score, tracker, executor
        As :func:`grid_searches`.
    units : int
        Progress units per job.
    name : str
        Names the search in messages.
    **options
        ``score_name``, ``shared``, ``group``, ``order``, ``fit_all``, ``failures``,
        ``tol``, ``pool``, ``one_se``, ``prefer`` of :func:`grid_searches`.

    Returns
    -------
    TuningResult
    """
    search = Search(cells, folds, name, units)
    return grid_searches(
        [search], fit, score, tracker=tracker, executor=executor, **options
    )[0]  # fmt: skip


def one_split_search(
    grid: Grid,
    fit: FitFn,
    score: ScoreFn,
    score_name: str,
    should_cancel: Callable[[], bool] | None = None,
    tol: float = 0.0,
    failures: tuple[type[BaseException], ...] = (SolverError,),
) -> TuningResult:
    """:func:`grid_search` of ``grid`` on one split whose data ``fit`` and ``score`` hold
    themselves (the job's rows are empty), in this thread (e.g. a scheme that tunes on
    one tuning set given as matrices)."""
    none = np.empty(0, dtype=int)
    return grid_search(
        grid, [(none, none)], fit, score, tracker=ProgressTracker(0, None, should_cancel),
        executor=LocalExecutor(1), score_name=score_name, tol=tol, failures=failures,
    )  # fmt: skip
