"""The one tuning search of every binary ladder, and the final fits at its choices.

METHODS section 2 (Zeng section 6 for the sub-problems): for each (lambda, sigma) of a
grid, fit a ladder on each fold's training rows and score the fold's tuning rows by the
empirical generalised KL ``-(1/m) sum [1{y=+1} log p_hat + 1{y=-1} log(1 - p_hat)]``; keep
the minimiser.  :func:`search_ladders` does this for one or several binary *problems*
(the binary estimator has one; a divide-and-conquer scheme one per sub-problem) over the
same rows, so that a kernel matrix is built once per sigma (and fold, for the path) and
shared by every lambda, weight and problem (see Memory below).

The unit of work is :func:`score_cell`: fit a ladder for one (lambda, sigma) on one
fold's training rows and score that fold's tuning rows.  It is the one call site of the
ladder *engine*: a name of :mod:`wsvmgui.ladder.engines` (``"path"``, the default: the
exact weight path with its grid-free estimate and a grid fallback; ``"grid"``, one
weighted SVM per weight), or any callable with the same signature (the non-crossing
ladder passes its own).  Estimates are floored at :data:`EGKL_FLOOR` before they are
scored (a path's estimate can come arbitrarily close to 0 or 1).

Memory: one dense kernel matrix at a time, built once per process
(:func:`~wsvmgui.solvers.gram.shared_kernel`) and shared read-only by every thread,
problem, lambda and weight.  The grid engine (libsvm) holds the matrix of all rows per
sigma and takes a fold or sub-problem as row indices into it
(:class:`~wsvmgui.solvers.gram.DenseGram`).  The path needs the dense matrix of its own
rows, so for it the tuning search holds the matrix of one fold's training rows per
(sigma, fold), the cells of that fold running together, and the final fits the matrix
of their rows (:class:`~wsvmgui.solvers.gram.HeldGram`); a sub-problem on part of those
rows takes a copy.  Tuning rows are scored a block of kernel rows at a time.  Before
any fit, :func:`~wsvmgui.solvers.memory.ladder_storage` estimates this (the path's own
storage included) against the memory available; when the path's plan does not fit, the
grid engine takes its place (with kernel values made on the fly if need be: libsvm on
the features, never n x n), and the storage says so; when nothing fits the run is
refused in one line.

Execution (:mod:`wsvmgui.executor`): every (sigma, problem, lambda, fold) cell and every
problem's final ladder is an independent task.  Locally they run on ``n_jobs`` threads
(libsvm releases the GIL), one sigma (or sigma and fold) at a time so that one kernel
matrix is held; on a Dask cluster the data are scattered once and workers build their
own kernel matrices.
Results are assembled in task order, so they do not depend on where tasks ran.
Progress is counted in units of the weight grid (M - 1 per ladder, whatever the engine),
reported as a ladder progresses (locally) or when its task ends (cluster); cancellation
is polled between fits (the path polls every few dozen steps).
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..errors import InputError, MemoryBudgetError, SolverError
from ..executor import ClusterExecutor, Executor, Shared, Task, TaskContext, current_executor
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.gram import (
    FLY_CACHE_MB,
    DenseGram,
    Gram,
    HeldGram,
    OnTheFlyGram,
    drop_kernels,
    positions,
    shared_kernel,
)
from ..solvers.kernels import Kernel
from ..solvers.memory import (
    KernelStorage,
    available_memory,
    forced_available,
    ladder_storage,
)
from .engines import (
    DEFAULT_ENGINE,
    AnyLadder,
    PathFallbackWarning,
    fit_binary_ladder,
    make_engine,
)
from .grid import FitEvent
from .rules import LadderEstimate
from .splits import Fold
from .tuning import TuningResult, egkl_binary, kernel_with_sigma


class LadderFit(Protocol):
    """What an engine returns: probabilities at new points."""

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """``(m, n_train)`` kernel rows -> estimates of shape (m,)."""
        ...


#: ``engine(K, X, y, weights, lam, kernel, progress, should_cancel) -> LadderFit``: fit a
#: ladder on the kernel matrix ``K`` of ``kernel`` over training inputs ``X`` (n, p) with
#: labels ``y`` in {-1, +1}; ``progress`` counts the M - 1 units of ``weights``.  ``K`` is
#: a :class:`~wsvmgui.solvers.gram.Gram` (rows of a shared matrix, or values made on the
#: fly); ``np.asarray(K)`` gives the dense (n, n) matrix to an engine that needs one.  An
#: engine with the attribute ``kernel_free = True`` can work on values made on the fly (it
#: never asks for the dense matrix).
Engine = Callable[..., LadderFit]

#: Estimates are clipped to ``[EGKL_FLOOR, 1 - EGKL_FLOOR]`` before the EGKL scores them
#: (every engine).  A path's estimate can come arbitrarily close to 0 or 1, where one
#: confident miss would decide the tuning; a grid ladder's never comes closer than 1/(2M),
#: so for M <= 50 (the default up to n = 625) the floor changes nothing for it.  Chosen by
#: ``benchmarks/path_egkl_floor.py`` (four binary designs, n = 200 and 600, 3 seeds each):
#: floors up to 1e-3 chose the same cell as no floor in all 24 cases; 1e-2 changed it in 5,
#: lowering the mean |p_hat - p| in 4; mean over the designs 0.0722 against 0.0733 at
#: n = 200, 0.0680 against 0.0678 at n = 600.
EGKL_FLOOR = 1e-2


class CellScore(NamedTuple):
    """Score of one tuning cell on one fold (:func:`score_cell`).

    Attributes
    ----------
    loss : float
        Sum over the tuning rows of the EGKL terms.
    misses : float
        Tuning rows misclassified by the estimate's argmax.
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


@dataclass(frozen=True)
class LadderProblem:
    """One binary ladder problem on some rows of the data.

    Attributes
    ----------
    rows : ndarray of int, shape (n_s,)
        Rows of the data that take part.
    y : ndarray, shape (n_s,)
        Their labels in {-1, +1} (+1 is the class whose probability the ladder estimates).
    name : str
        Sub-problem name for messages and progress events (empty for a binary problem).
    """

    rows: np.ndarray
    y: np.ndarray
    name: str = ""

    def select(self, rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Of ``rows`` (indices into data of ``n`` rows), those in this problem, in order,
        with their labels."""
        label = np.zeros(n)
        label[self.rows] = self.y
        keep = rows[label[rows] != 0]
        return keep, label[keep]


def named_engine(name: str, solver: str = "libsvm") -> Engine:
    """:func:`~wsvmgui.ladder.engines.make_engine` of ``name``, marked ``kernel_free``
    when it never needs the dense kernel matrix (the grid engine with libsvm)."""
    engine = make_engine(name, solver=solver)
    engine.kernel_free = name == "grid" and solver == "libsvm"  # type: ignore[attr-defined]
    return engine


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
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    cache_mb: float = FLY_CACHE_MB,
    gram: Gram | None = None,
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
    progress, should_cancel
        Passed to the engine.
    cache_mb : float
        libsvm's kernel cache when values are made on the fly.
    gram : Gram, optional
        The training rows' kernel matrix as the caller holds it (then ``K_all`` is not
        used; e.g. a :class:`~wsvmgui.solvers.gram.HeldGram` of the fold's own matrix).

    Returns
    -------
    CellScore
        The EGKL terms summed over the tuning rows (estimates floored at
        :data:`EGKL_FLOOR`), the rows the estimate's argmax misclassifies, and the engine
        that answered.
    """
    if gram is None:
        gram = (
            DenseGram(K_all, train)
            if K_all is not None
            else OnTheFlyGram(X, kernel, train, cache_mb)
        )
    ladder = engine(gram, X[train], y_train, weights, lam, kernel, progress, should_cancel)
    p = np.concatenate([ladder.estimate(block, rule).p for block in gram.cross_blocks(test)])
    return CellScore(
        egkl_binary(np.clip(p, EGKL_FLOOR, 1.0 - EGKL_FLOOR), y_test) * y_test.size,
        float(np.sum(np.where(p > 0.5, 1.0, -1.0) != y_test)),
        str(getattr(ladder, "engine", "grid")),
        str(getattr(ladder, "fallback", "")),
    )


@dataclass(frozen=True)
class _RunData:
    """What every task of one run reads (scattered once to a cluster).

    ``held`` is None when a dense matrix holds all rows of ``X`` (or none is held);
    else the data rows of each part's own dense matrix (per fold, or the final rows).
    """

    X: np.ndarray
    parts: list  # per problem: fold parts (tuning) or (rows, labels) (final fits)
    storage: KernelStorage
    held: list[np.ndarray] | None = None


def _gram(ctx: TaskContext, data: Shared, kernel: Kernel, rows: np.ndarray, part: int = 0) -> Gram:
    """The kernel matrix of the data rows ``rows`` as this run holds it in this process.

    Dense: rows of the run's shared matrix (of all rows, or of part ``part``'s rows),
    built once per process; else values made on the fly.
    """
    ctx.check()
    run: _RunData = data.value
    if not run.storage.dense:
        return OnTheFlyGram(run.X, kernel, rows, run.storage.cache_mb)
    if run.held is None:
        return DenseGram(shared_kernel(data.token, run.X, kernel), rows)
    held = run.held[part]
    K = shared_kernel(data.token, run.X[held], kernel, part)
    return HeldGram(K, run.X, kernel, held, positions(held, rows))


def _engine_plan(
    executor: Executor,
    X: np.ndarray,
    n_fit: int,
    n_weights: int,
    n_held: int,
    n_shared: int,
    engine: Engine | str,
    solver: str,
    what: str,
) -> tuple[KernelStorage, Engine | str]:
    """The kernel storage of a run, and the engine to run it with.

    An engine that can use rows of one shared matrix in place (the grid with libsvm) is
    planned with that matrix (``n_shared`` rows); others (the path, the QP solver) with
    a matrix of their own rows (``n_held`` rows, and a copy where they are fewer).  If
    the path's plan does not fit, the grid engine takes over (said in the storage's
    note): with the shared matrix, or with kernel values made on the fly.
    """
    if not isinstance(engine, str):
        kernel_free = bool(getattr(engine, "kernel_free", False))
        held = n_shared if kernel_free else n_held
        return plan_storage(
            executor, X, n_fit, n_weights, kernel_free=kernel_free, what=what, n_held=held
        ), engine
    grid_free = solver == "libsvm"
    if engine == "grid":
        held = n_shared if grid_free else n_held
        return plan_storage(
            executor, X, n_fit, n_weights, kernel_free=grid_free, what=what, n_held=held
        ), engine
    try:
        return plan_storage(
            executor, X, n_fit, n_weights, kernel_free=False, what=what, n_held=n_held,
            path=True,
        ), engine  # fmt: skip
    except MemoryBudgetError:
        if not grid_free:
            raise
    storage = plan_storage(
        executor, X, n_fit, n_weights, kernel_free=True, what=what, n_held=n_shared
    )
    note = f"grid ladder of {n_weights} weights instead of the {engine} engine, " + (
        "which needs a dense kernel matrix"
        if not storage.dense
        else "whose matrix and storage would not fit"
    )
    return replace(storage, note=note), "grid"


def plan_storage(
    executor: Executor,
    X: np.ndarray,
    n_fit: int,
    n_weights: int,
    *,
    kernel_free: bool,
    what: str,
    n_held: int | None = None,
    path: bool = False,
) -> KernelStorage:
    """:func:`~wsvmgui.solvers.memory.ladder_storage` for the processes of ``executor``."""
    limit, slots = executor.memory_slots()
    cluster = isinstance(executor, ClusterExecutor)
    forced = forced_available()  # memory_limits() holds for a cluster's workers too
    available = forced if forced is not None else limit if cluster else available_memory()
    return ladder_storage(
        X.shape[0],
        X.shape[1],
        n_fit,
        n_weights,
        slots,
        available,
        kernel_free=kernel_free,
        cluster=cluster,
        what=what,
        n_held=n_held,
        path=path,
    )


def _run(executor: Executor, run: _RunData, make_tasks, tracker: ProgressTracker) -> list:
    """Share ``run``, run the tasks ``make_tasks(shared)`` and drop the run's matrices."""
    shared = Shared.new(run)
    handle = executor.share(shared)
    try:
        return executor.run(make_tasks(handle), tracker)
    finally:
        executor.everywhere(drop_kernels, shared.token)
        executor.release(handle)


def _score_task(
    ctx: TaskContext,
    data: Shared,
    engine: Engine,
    kernel: Kernel,
    i: int,
    f: int,
    fold: int,
    weights: np.ndarray,
    lam: float,
    rule: str,
) -> tuple[CellScore | None, str | None, float]:
    """One tuning cell: its score or the failure's message, and the seconds taken."""
    start = time.perf_counter()
    run: _RunData = data.value
    tr, y_tr, te, y_te = run.parts[i][f]
    gram = _gram(ctx, data, kernel, tr, fold)
    done = [0]

    def step(d: int, _total: int, _fit: Any) -> None:
        done[0] = d
        ctx.step()

    try:
        cell = score_cell(
            engine, None, run.X, kernel, tr, y_tr, te, y_te, weights, lam, rule, step,
            ctx.cancelled, gram=gram,
        )  # fmt: skip
    except SolverError as exc:
        ctx.step(weights.size - done[0])
        return None, str(exc), time.perf_counter() - start
    return cell, None, time.perf_counter() - start


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
) -> list[TuningResult]:
    """EGKL grid search over lambda x sigma of every problem, summed over the folds.

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

    Returns
    -------
    list of TuningResult
        One per problem: ``egkl`` and ``error`` over every tuning row of every fold
        (each row counted once per fold it is tuned in; NaN for cells left out); ties go
        to the first cell in grid order (by default the largest lambda).  ``engines``
        counts which engine answered the cells; a path that broke down counts as
        ``"grid"`` and its reason is kept in ``fallbacks``.  ``storage`` says how the
        kernel was held.

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
    S = sigmas.size
    parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = []
    fold_of: list[list[int]] = []
    for prob in problems:
        mine, where = [], []
        for f, (train, test) in enumerate(folds):
            tr, y_tr = prob.select(np.asarray(train), n)
            te, y_te = prob.select(np.asarray(test), n)
            if te.size == 0:
                continue
            if not ((y_tr > 0).any() and (y_tr < 0).any()):
                raise InputError(
                    f"{_what(prob)}: a tuning split leaves no training point of one class"
                )
            mine.append((tr, y_tr, te, y_te))
            where.append(f)
        if not mine:
            raise InputError(f"{_what(prob)} has no point in any tuning part")
        tuned = np.concatenate([part[3] for part in mine])
        if not ((tuned > 0).any() and (tuned < 0).any()):
            raise InputError(
                f"{_what(prob)}: the tuning rows hold only one of its classes, so its EGKL "
                "cannot choose lambda and sigma (does the tuning set miss a class?)"
            )
        parts.append(mine)
        fold_of.append(where)
    ex = executor or current_executor(n_jobs)
    held = [np.asarray(train) for train, _ in folds]
    storage, engine = _engine_plan(
        ex,
        X,
        max(part[0].size for mine in parts for part in mine),
        max(w.size for w in weights),
        max(h.size for h in held),
        n,
        engine,
        "libsvm",
        "tuning",
    )
    engine_fn = named_engine(engine) if isinstance(engine, str) else engine
    per_fold = storage.dense and storage.held_rows < n  # the engine's own rows' matrices
    kernels = [kernel_with_sigma(kernel, sg) for sg in sigmas]
    cells = [
        (j, i, li, f)
        for j in range(S)
        for i in range(len(problems))
        for li in range(lambdas[i].size)
        for f in range(len(parts[i]))
        if only is None or only[i][li, j]
    ]
    if per_fold:  # one fold's matrix at a time: its cells run together
        cells.sort(key=lambda c: (c[0], fold_of[c[1]][c[3]]))
    tracker.add_total(sum(weights[i].size for _, i, _, _ in cells))
    tracker.check()

    def tasks(data: Any) -> list[Task]:
        return [
            Task(
                _score_task,
                (
                    data,
                    engine_fn,
                    kernels[j],
                    i,
                    f,
                    fold_of[i][f],
                    weights[i],
                    float(lambdas[i][li]),
                    rule,
                ),  # fmt: skip
                units=weights[i].size,
                group=(j, fold_of[i][f]) if per_fold else j,
            )
            for j, i, li, f in cells
        ]

    outcomes = _run(ex, _RunData(X, parts, storage, held if per_fold else None), tasks, tracker)
    loss = [np.zeros((g.size, S)) for g in lambdas]
    for i, fitted in enumerate(only or []):  # cells left out score NaN
        loss[i][~np.asarray(fitted, dtype=bool)] = np.nan
    miss = [np.zeros((g.size, S)) for g in lambdas]
    failures: list[list[str]] = [[] for _ in problems]
    engines: list[Counter] = [Counter() for _ in problems]
    fallbacks: list[list[str]] = [[] for _ in problems]
    seconds = [0.0] * len(problems)
    for (j, i, li, _), (cell, failure, secs) in zip(cells, outcomes, strict=True):
        seconds[i] += secs
        if cell is None:
            failures[i].append(failure)
            loss[i][li, j] = np.inf
            continue
        loss[i][li, j] += cell.loss
        miss[i][li, j] += cell.misses
        engines[i][cell.engine] += 1
        if cell.fallback:
            fallbacks[i].append(cell.fallback)
    if isinstance(ex, ClusterExecutor):  # a worker's warnings stay on the worker
        for why in (w for fb in fallbacks for w in fb):
            warnings.warn(f"{why}; the grid ladder answered instead", PathFallbackWarning, 2)
    n_test = [sum(p[2].size for p in mine) for mine in parts]
    results = []
    for i, prob in enumerate(problems):
        scores = loss[i] / n_test[i]
        if not np.isfinite(scores).any():
            raise SolverError(
                f"{_what(prob)}: every fit of the tuning grid failed; first failure: "
                + (failures[i][0] if failures[i] else "unknown")
            )
        best = np.flatnonzero(scores.ravel() == np.nanmin(scores))[0]
        li, j = np.unravel_index(best, scores.shape)
        results.append(
            TuningResult(
                lambdas=np.asarray(lambdas[i], dtype=float),
                sigmas=sigmas,
                egkl=scores,
                error=np.where(np.isfinite(scores), miss[i] / n_test[i], np.nan),
                best_lambda=float(lambdas[i][li]),
                best_sigma=float(sigmas[j]),
                failures=failures[i],
                seconds=seconds[i],
                engines=dict(engines[i]),
                fallbacks=fallbacks[i],
                storage=storage.describe(),
            )
        )
    return results


def _what(prob: LadderProblem) -> str:
    return f"sub-problem {prob.name}" if prob.name else "the problem"


def _context(prob: LadderProblem, lam: float, kernel: Kernel) -> str:
    """Where a ladder belongs, for fallback warnings."""
    where = f"sub-problem {prob.name}, " if prob.name else ""
    return f"{where}lambda {lam:.4g}, {kernel.describe()}"


@dataclass(frozen=True)
class FittedLadder:
    """A final ladder of one problem.

    Attributes
    ----------
    ladder : Ladder or PathLadder
        Compressed: its coefficients follow ``support``.
    support : ndarray of int, shape (s,)
        Rows of the data the ladder uses.
    kernel : Kernel
    lam, sigma : float
    n_train : int
        Rows of the final fit.
    seconds : float
        Time of the final fit.
    storage : str
        How the kernel was held (:meth:`~wsvmgui.solvers.memory.KernelStorage.describe`).
    backend : str
        Where it was fitted (:attr:`~wsvmgui.executor.Executor.name`).
    """

    ladder: AnyLadder
    support: np.ndarray
    kernel: Kernel
    lam: float
    sigma: float
    n_train: int
    seconds: float = 0.0
    storage: str = ""
    backend: str = field(default="", compare=False)


def _final_task(
    ctx: TaskContext,
    data: Shared,
    kern: Kernel,
    i: int,
    lam: float,
    sigma: float,
    weights: np.ndarray,
    engine: str,
    solver: str,
    qp_solver: str,
    inner_jobs: int,
    label: str,
    context: str,
) -> FittedLadder:
    """The final ladder of problem ``i`` (compressed to its support)."""
    start = time.perf_counter()
    run: _RunData = data.value
    r, y = run.parts[i]
    gram = _gram(ctx, data, kern, r)
    X_r = None if ctx.remote else run.X[r]

    def step(_done: int, _total: int, fit: Any) -> None:
        event = None if fit is None or X_r is None else FitEvent("final", fit, X_r, kern, label)
        ctx.step(partial=event)

    ladder = fit_binary_ladder(
        gram, y, weights, lam, engine=engine, solver=solver, qp_solver=qp_solver,
        progress=step, should_cancel=ctx.cancelled, n_jobs=inner_jobs, context=context,
        report_fits=not ctx.remote,
    )  # fmt: skip
    compressed, keep = ladder.compress()
    return FittedLadder(
        compressed,
        r[keep],
        kern,
        float(lam),
        sigma,
        int(r.size),
        time.perf_counter() - start,
        run.storage.describe(),
    )


def fit_ladders(
    X: np.ndarray,
    problems: Sequence[LadderProblem],
    rows: np.ndarray,
    kernel: Kernel,
    chosen: Sequence[tuple[float, float]],
    weights: Sequence[np.ndarray],
    *,
    engine: str = DEFAULT_ENGINE,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    n_jobs: int = 1,
    tracker: ProgressTracker,
    executor: Executor | None = None,
) -> list[FittedLadder]:
    """The final ladder of every problem on its part of ``rows``, at its chosen (lambda, sigma).

    One task per problem, grouped by sigma (one kernel matrix of ``rows`` per distinct
    sigma at a time).  A single grid ladder is fitted locally with ``n_jobs`` threads over
    its weights, several problems with one task each.  Every weighted fit of a local
    grid ladder is reported to the tracker with a :class:`~wsvmgui.ladder.grid.FitEvent`
    (stage ``"final"``, label the problem's name) for live views, and so is a path's fit
    at every other weight once it is traced; a cluster reports each ladder when it is
    done.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    problems : sequence of LadderProblem
    rows : ndarray of int
        Rows of the final fits (all rows, or the first fold's training part).
    kernel : Kernel
    chosen : sequence of (lambda, sigma)
    weights : sequence of ndarray
        Weight grids (the path's drawing weights).
    engine : str
        See :mod:`wsvmgui.ladder.engines`.  A path that would not fit in memory with its
        dense matrix gives way to the grid engine with kernel values made on the fly
        (said in ``storage``).
    solver, qp_solver : str
        Solver of grid ladders.
    n_jobs : int
    tracker : ProgressTracker
    executor : Executor, optional
        Default: :func:`~wsvmgui.executor.current_executor`.

    Returns
    -------
    list of FittedLadder, in the order of ``problems``

    Raises
    ------
    MemoryBudgetError
        The fits would not fit in memory.
    """
    n = X.shape[0]
    rows = np.asarray(rows)
    sel = [prob.select(rows, n) for prob in problems]
    ex = executor or current_executor(n_jobs)
    inner_jobs = n_jobs if len(problems) == 1 and not isinstance(ex, ClusterExecutor) else 1
    storage, engine_name = _engine_plan(
        ex,
        X,
        max(r.size for r, _ in sel),
        max(w.size for w in weights),
        rows.size,
        rows.size,
        engine,
        solver,
        "the final fit",
    )
    assert isinstance(engine_name, str)
    held = None if rows.size == n and np.array_equal(rows, np.arange(n)) else [rows]

    def tasks(data: Any) -> list[Task]:
        out = []
        for i, (lam, sigma) in enumerate(chosen):
            sg = float(sigma) if kernel.name == "rbf" else float("nan")
            kern = kernel_with_sigma(kernel, sigma)
            out.append(
                Task(
                    _final_task,
                    (
                        data,
                        kern,
                        i,
                        float(lam),
                        sg,
                        weights[i],
                        engine_name,
                        solver,
                        qp_solver,
                        inner_jobs,
                        problems[i].name,
                        _context(problems[i], lam, kern),
                    ),  # fmt: skip
                    units=weights[i].size,
                    group="none" if np.isnan(sg) else sg,
                )
            )
        return out

    fitted = _run(ex, _RunData(X, sel, storage, held), tasks, tracker)
    if isinstance(ex, ClusterExecutor):  # a worker's warnings stay on the worker
        for f in fitted:
            if getattr(f.ladder, "fallback", ""):
                warnings.warn(
                    f"{f.ladder.fallback}; the grid ladder answered instead",
                    PathFallbackWarning,
                    2,
                )
    return [replace(f, backend=ex.name) for f in fitted]
