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
* With ``extend`` (an :class:`Extension`), a chosen cell on an end of an extendable axis
  makes the search add :attr:`Extension.steps` values past that end (the ratio of the
  axis's two end values continued: log spacing for a log grid), fit the new cells near
  the chosen one (:func:`extension_cells`) on the same folds, and choose again from all
  cells; at most :attr:`Extension.rounds` times.  ``TuningResult.extended`` records the
  added values, and ``edge`` is that of the extended grid (still on an edge after the
  last round: the bound was reached).
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

import itertools
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
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
    "Extension",
    "FoldScore",
    "Grid",
    "Job",
    "JobContext",
    "Search",
    "TuningResult",
    "best_cell",
    "extension_cells",
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


@dataclass(frozen=True)
class Extension:
    """How a search extends its grid when the chosen cell sits on an end of an axis.

    Attributes
    ----------
    axes : tuple of str
        The axes that may grow: numeric, positive and finite, at least two values (others
        named here are left alone).
    rounds : int >= 0
        Extensions at most (0: never); each adds ``steps`` values at every end the chosen
        cell sits on, then chooses again.
    steps : int >= 1
        Values added past an end per round, continuing the ratio of the end's two values.
    """

    axes: tuple[str, ...] = ("lambda", "sigma")
    rounds: int = 2
    steps: int = 1

    def __post_init__(self) -> None:
        if self.rounds < 0 or self.steps < 1:
            raise InputError(
                f"a grid extension needs rounds >= 0 and steps >= 1, got {self.rounds}, "
                f"{self.steps}"
            )

    def max_cells(self, n_extendable: int, n_other: int = 0) -> int:
        """Most cells the extensions can add to one search: ``n_extendable`` axes that may
        grow, ``n_other`` numeric axes that may not (their window: three values)."""
        per_round = (self.steps + 2) ** n_extendable - 2**n_extendable
        return self.rounds * per_round * 3**n_other

    def _growable(self, name: str, values: AxisValues) -> bool:
        if name not in self.axes or not isinstance(values, np.ndarray) or values.size < 2:
            return False
        v = values.astype(float)
        return bool(np.all(np.isfinite(v)) and np.all(v > 0) and v[0] != v[1] and v[-1] != v[-2])


def _extended_axes(
    grid: Grid, best: tuple[int, ...], ext: Extension
) -> tuple[dict[str, AxisValues], tuple[int, ...], dict[str, tuple[float, ...]]]:
    """The axes grown at the ends ``best`` sits on, how far each axis's indices shift,
    and the values added (empty when ``best`` is on no growable end)."""
    axes: dict[str, AxisValues] = {}
    shift: list[int] = []
    added: dict[str, tuple[float, ...]] = {}
    for (name, values), i in zip(grid.axes.items(), best, strict=True):
        shift.append(0)
        axes[name] = values
        if not ext._growable(name, values) or 0 < i < len(values) - 1:
            continue
        v = np.asarray(values, dtype=float)
        k = np.arange(1, ext.steps + 1)
        if i == 0:
            new = v[0] * (v[0] / v[1]) ** k[::-1]
            axes[name] = np.concatenate([new, v])
            shift[-1] = ext.steps
        else:
            new = v[-1] * (v[-1] / v[-2]) ** k
            axes[name] = np.concatenate([v, new])
        added[name] = tuple(float(x) for x in new)
    return axes, tuple(shift), added


def extension_cells(
    shape: tuple[int, ...], best: tuple[int, ...], new: dict[int, range]
) -> list[tuple[int, ...]]:
    """The cells an extension fits, in grid order: those within one index of ``best``
    (in the extended grid of ``shape``) on every axis, and within the new values on the
    grown axes, that have at least one new value.

    Parameters
    ----------
    shape : tuple of int
        The extended grid's shape.
    best : tuple of int
        The chosen cell's index in the extended grid.
    new : dict of int to range
        Grown axis position -> indices of its new values.
    """
    windows = []
    for a, (size, b) in enumerate(zip(shape, best, strict=True)):
        lo, hi = max(b - 1, 0), min(b + 1, size - 1)
        if a in new:
            lo, hi = min(lo, new[a].start), max(hi, new[a].stop - 1)
        windows.append(range(lo, hi + 1))
    return [
        cell for cell in itertools.product(*windows) if any(cell[a] in r for a, r in new.items())
    ]


#: ``pool(fold_scores) -> terms``: per-row terms of a cell from its folds' scores, or
#: None to score that cell from its folds' own losses and terms (as without a pool).
PoolFn = Callable[[Sequence[FoldScore]], "np.ndarray | None"]
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
    se_multiple: float = 1.0


def _assemble(
    search: Search,
    jobs: list[Job],
    outcomes: list[_Outcome],
    score_name: str,
    choice: _Choice,
    extended: dict[str, tuple[float, ...]] | None = None,
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

        best = one_se_cell(score, se, rank, choice.se_multiple)
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
        extended=dict(extended or {}),
    )


def _cell_errors(
    per_cell: dict[tuple[int, ...], list[FoldScore]],
    loss: np.ndarray,
    weight: np.ndarray,
    pool: PoolFn | None,
) -> np.ndarray:
    """Every cell's standard error; with ``pool``, ``loss`` and ``weight`` (changed in
    place) become the pooled terms' sum and count (where the pool gives terms)."""
    se = np.full(loss.shape, np.nan)
    for cell, scores in per_cell.items():
        if not np.isfinite(loss[cell]):
            continue
        pooled = None if pool is None else pool(scores)
        if pooled is not None:
            terms = np.asarray(pooled, dtype=float)
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
    extend: Extension | None = None,
    se_multiple: float = 1.0,
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
        A pool may return None for a cell: it is then scored as without a pool.
    one_se : bool
        Choose by the one-standard-error rule (``tol`` is then not used).
    prefer : callable, optional
        ``prefer(params) -> key`` ranks the cells for ``one_se`` (smallest first);
        default: grid order.
    extend : Extension, optional
        Grow a grid whose chosen cell sits on an end of an extendable axis (module
        docstring); the new jobs of every search run as one batch per round.
    se_multiple : float
        ``one_se``: the cells within this many standard errors of the smallest score.

    Returns
    -------
    list of TuningResult, in the order of ``searches``

    Raises
    ------
    SolverError
        Every fit of some search failed.
    """
    searches = list(searches)
    first = [s.grid for s in searches]
    choice = _Choice(tol, pool, one_se, prefer, se_multiple)
    run = _Runner(searches, fit, score, tracker, executor, shared, group, order, fit_all, failures)
    done = run(_jobs(searches))

    def table(s: int) -> TuningResult:
        jobs, outcomes = [j for j, _ in done[s]], [o for _, o in done[s]]
        added = _added(first[s].axes, searches[s].grid.axes)
        return _assemble(searches[s], jobs, outcomes, score_name, choice, added)

    results = [table(s) for s in range(len(searches))]
    for _ in range(0 if extend is None else extend.rounds):
        assert extend is not None
        grown = [
            _grow(s, sr.grid, results[s].best, sr.folds, extend) for s, sr in enumerate(searches)
        ]
        if not any(grown):
            break
        new_jobs: list[Job] = []
        for s, g in enumerate(grown):
            if g is not None:
                searches[s] = replace(searches[s], grid=g[0])
                done[s] = [(replace(j, cell=_shifted(j.cell, g[1])), o) for j, o in done[s]]
                new_jobs += g[2]
        for s, pairs in run(new_jobs).items():
            done[s] = sorted([*done[s], *pairs], key=lambda p: (p[0].cell, p[0].fold))
        results = [
            table(s) if g is not None else r
            for s, (g, r) in enumerate(zip(grown, results, strict=True))
        ]
    return results


def _shifted(cell: tuple[int, ...], shift: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i + d for i, d in zip(cell, shift, strict=True))


def _added(before: dict[str, AxisValues], after: dict[str, AxisValues]) -> dict[str, tuple]:
    """Axis name -> values of ``after`` that ``before`` lacks (axes that grew only)."""
    out = {}
    for name, values in after.items():
        old = set(np.asarray(before[name]).tolist()) if isinstance(values, np.ndarray) else set()
        new = tuple(float(v) for v in np.asarray(values).tolist() if v not in old)
        if new and isinstance(values, np.ndarray):
            out[name] = new
    return out


def _grow(
    s: int, grid: Grid, best: tuple[int, ...], folds: Sequence[Fold], ext: Extension
) -> tuple[Grid, tuple[int, ...], list[Job]] | None:
    """Search ``s``'s grid grown past the ends ``best`` sits on, the shift of the old
    indices, and the jobs of the cells to fit (None when nothing grows)."""
    axes, shift, added = _extended_axes(grid, best, ext)
    if not added:
        return None
    shape = tuple(len(v) for v in axes.values())
    fitted = np.ones(grid.shape, dtype=bool) if grid.only is None else grid.only
    only = np.zeros(shape, dtype=bool)
    only[tuple(slice(d, d + n) for d, n in zip(shift, grid.shape, strict=True))] = fitted
    new = {
        a: range(0, ext.steps) if shift[a] else range(grid.shape[a], shape[a])
        for a, name in enumerate(axes)
        if name in added
    }
    cells = extension_cells(shape, _shifted(best, shift), new)
    for cell in cells:
        only[cell] = True
    bigger = Grid(axes, only)
    jobs = [
        Job(s, cell, bigger.params(cell), f, np.asarray(tr), np.asarray(te))
        for cell in cells
        for f, (tr, te) in enumerate(folds)
    ]
    return bigger, shift, jobs


class _Runner:
    """Runs jobs of a batch of searches (on the executor, or by ``fit_all``); returns
    each search's (job, outcome) pairs in grid, then fold order."""

    def __init__(
        self,
        searches: list[Search],
        fit: FitFn | None,
        score: ScoreFn,
        tracker: ProgressTracker,
        executor: Executor | None,
        shared: Shared | None,
        group: Callable[[Job], Hashable] | None,
        order: Callable[[Job], Any] | None,
        fit_all: Callable[[Sequence[Job]], Sequence[Any]] | None,
        failures: tuple[type[BaseException], ...],
    ) -> None:
        if fit_all is None and fit is None:
            raise InputError("grid_search needs fit or fit_all")
        self.searches, self.fit, self.score, self.tracker = searches, fit, score, tracker
        self.executor, self.shared, self.group, self.order = executor, shared, group, order
        self.fit_all, self.failures = fit_all, failures

    def __call__(self, jobs: list[Job]) -> dict[int, list[tuple[Job, _Outcome]]]:
        if self.order is not None:
            jobs = sorted(jobs, key=self.order)
        if self.fit_all is None:
            assert self.fit is not None
            self.tracker.add_total(sum(self.searches[j.search].units for j in jobs))
            self.tracker.check()
            ex = self.executor or current_executor()
            outcomes = _run_tasks(
                jobs, self.searches, self.fit, self.score, ex, self.tracker, self.shared,
                self.group, self.failures,
            )  # fmt: skip
        else:
            self.tracker.check()
            outcomes = _fit_all_then_score(
                jobs, self.fit_all, self.score, self.tracker, self.failures
            )  # fmt: skip
        out: dict[int, list[tuple[Job, _Outcome]]] = {s: [] for s in range(len(self.searches))}
        for job, outcome in zip(jobs, outcomes, strict=True):
            out[job.search].append((job, outcome))
        for pairs in out.values():
            pairs.sort(key=lambda p: (p[0].cell, p[0].fold))
        return out


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
        ``tol``, ``pool``, ``one_se``, ``prefer``, ``extend`` of :func:`grid_searches`.

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
