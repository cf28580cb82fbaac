"""The one tuning search of every binary ladder, and the final fits at its choices.

METHODS section 2 (Zeng section 6 for the sub-problems): for each (lambda, sigma) of a
grid, fit a ladder on each fold's training rows and score the fold's tuning rows by the
empirical generalised KL ``-(1/m) sum [1{y=+1} log p_hat + 1{y=-1} log(1 - p_hat)]``; keep
the minimiser.  :func:`search_ladders` does this for one or several binary *problems*
(the binary estimator has one; a divide-and-conquer scheme one per sub-problem) over the
same rows, so that the kernel matrix of all rows is built once per sigma and shared by
every fold, lambda, weight and problem (each takes a submatrix).

The unit of work is :func:`score_cell`: fit a ladder for one (lambda, sigma) on one
fold's training rows and score that fold's tuning rows.  It is the one call site of the
ladder *engine*: ``"grid"`` (:func:`~wsvmgui.ladder.grid.fit_ladder`, one weighted SVM
per weight), or any callable with the same signature (the non-crossing ladder passes its
own); an exact-path engine plugs in here.

Memory: one kernel matrix of all rows per sigma, built once per process
(:func:`~wsvmgui.solvers.gram.shared_kernel`) and shared read-only by every thread, fold,
problem, lambda and weight; a fold or sub-problem is a set of row indices into it
(:class:`~wsvmgui.solvers.gram.DenseGram`), tuning rows are scored a block at a time.
Before any fit, :func:`~wsvmgui.solvers.memory.ladder_storage` checks that this fits in
memory, else computes kernel values on the fly (engines that can) or refuses.

Execution (:mod:`wsvmgui.executor`): every (sigma, problem, lambda, fold) cell and every
problem's final ladder is an independent task.  Locally they run on ``n_jobs`` threads
(libsvm releases the GIL), one sigma at a time so that one kernel matrix is held; on a
Dask cluster the data are scattered once and workers build their own kernel matrices.
Results are assembled in task order, so they do not depend on where tasks ran.
Progress is reported after every weighted fit (locally) or task (cluster); cancellation
is polled between fits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from ..errors import InputError, SolverError
from ..executor import ClusterExecutor, Executor, Shared, Task, TaskContext, current_executor
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.gram import (
    FLY_CACHE_MB,
    DenseGram,
    Gram,
    OnTheFlyGram,
    drop_kernels,
    shared_kernel,
)
from ..solvers.kernels import Kernel
from ..solvers.memory import (
    KernelStorage,
    available_memory,
    forced_available,
    ladder_storage,
)
from .grid import FitEvent, Ladder, fit_ladder
from .rules import estimate_from_decision
from .splits import Fold
from .tuning import TuningResult, egkl_binary, kernel_with_sigma


class LadderFit(Protocol):
    """What an engine returns: decision values of every weight at new points."""

    def decision(self, K_cross: np.ndarray) -> np.ndarray:
        """``(m, n_train)`` kernel rows -> ``(m, M - 1)`` decision values."""
        ...


#: ``engine(K, X, y, weights, lam, kernel, progress, should_cancel) -> LadderFit``: fit a
#: ladder on the kernel matrix ``K`` of ``kernel`` over training inputs ``X`` (n, p) with
#: labels ``y`` in {-1, +1}.  ``K`` is a :class:`~wsvmgui.solvers.gram.Gram` (rows of a
#: shared matrix, or values made on the fly); ``np.asarray(K)`` gives the dense (n, n)
#: matrix to an engine that needs one.  An engine with the attribute ``kernel_free = True``
#: can work on values made on the fly (it never asks for the dense matrix).
Engine = Callable[..., LadderFit]


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


def grid_engine(solver: str = "libsvm", qp_solver: str = "quadprog", n_jobs: int = 1) -> Engine:
    """The grid engine: one weighted SVM per weight (:func:`fit_ladder`)."""

    def engine(K, X, y, weights, lam, kernel, progress=None, should_cancel=None) -> Ladder:
        return fit_ladder(
            K,
            y,
            weights,
            lam,
            solver,
            qp_solver,
            progress=progress,
            should_cancel=should_cancel,
            n_jobs=n_jobs,
        )

    engine.kernel_free = solver == "libsvm"  # type: ignore[attr-defined]
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
) -> tuple[float, float]:
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

    Returns
    -------
    loss, misses : float
        Sum over the tuning rows of the EGKL terms, and the number misclassified by the
        estimate's argmax.
    """
    gram: Gram = (
        DenseGram(K_all, train) if K_all is not None else OnTheFlyGram(X, kernel, train, cache_mb)
    )
    ladder = engine(gram, X[train], y_train, weights, lam, kernel, progress, should_cancel)
    decision = np.vstack([ladder.decision(block) for block in gram.cross_blocks(test)])
    p = estimate_from_decision(decision, weights, rule).p
    return (
        egkl_binary(p, y_test) * y_test.size,
        float(np.sum(np.where(p > 0.5, 1.0, -1.0) != y_test)),
    )


@dataclass(frozen=True)
class _RunData:
    """What every task of one run reads (scattered once to a cluster)."""

    X: np.ndarray
    parts: list  # per problem: fold parts (tuning) or (rows, labels) (final fits)
    storage: KernelStorage


def _shared_matrix(ctx: TaskContext, data: Shared, kernel: Kernel) -> np.ndarray | None:
    """The run's dense kernel matrix in this process (built once), or None (on the fly)."""
    ctx.check()
    run: _RunData = data.value
    return shared_kernel(data.token, run.X, kernel) if run.storage.dense else None


def plan_storage(
    executor: Executor,
    n_rows: int,
    n_features: int,
    n_fit: int,
    n_weights: int,
    *,
    kernel_free: bool,
    what: str,
) -> KernelStorage:
    """:func:`~wsvmgui.solvers.memory.ladder_storage` for the processes of ``executor``."""
    limit, slots = executor.memory_slots()
    cluster = isinstance(executor, ClusterExecutor)
    forced = forced_available()  # memory_limits() holds for a cluster's workers too
    available = forced if forced is not None else limit if cluster else available_memory()
    return ladder_storage(
        n_rows,
        n_features,
        n_fit,
        n_weights,
        slots,
        available,
        kernel_free=kernel_free,
        cluster=cluster,
        what=what,
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
    weights: np.ndarray,
    lam: float,
    rule: str,
) -> tuple[tuple[float, float] | None, str | None, float]:
    """One tuning cell: (loss, misses) or the failure's message, and the seconds taken."""
    start = time.perf_counter()
    run: _RunData = data.value
    tr, y_tr, te, y_te = run.parts[i][f]
    K_all = _shared_matrix(ctx, data, kernel)
    done = [0]

    def step(d: int, _total: int, _fit: Any) -> None:
        done[0] = d
        ctx.step()

    try:
        cell = score_cell(
            engine, K_all, run.X, kernel, tr, y_tr, te, y_te, weights, lam, rule, step,
            ctx.cancelled, run.storage.cache_mb,
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
    engine: Engine | None = None,
    n_jobs: int = 1,
    tracker: ProgressTracker,
    executor: Executor | None = None,
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
    engine : Engine, optional
        Default: :func:`grid_engine` with libsvm.
    n_jobs : int
        Threads, one (sigma, problem, lambda, fold) cell each, one sigma at a time.
    tracker : ProgressTracker
        Its total grows by the number of weighted fits, each reported when done.
    executor : Executor, optional
        Where the cells run; default :func:`~wsvmgui.executor.current_executor`.

    Returns
    -------
    list of TuningResult
        One per problem: ``egkl`` and ``error`` over every tuning row of every fold
        (each row counted once per fold it is tuned in); ties go to the first cell in
        grid order (by default the largest lambda).

    Raises
    ------
    InputError
        A problem with no tuning rows, or a fold leaving it one class to train on.
    MemoryBudgetError
        The run would not fit in memory, even with kernel values made on the fly.
    SolverError
        Every fit of some problem's grid failed.
    """
    engine = engine or grid_engine()
    n = X.shape[0]
    sigmas = np.asarray(sigmas, dtype=float)
    S = sigmas.size
    parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = []
    for prob in problems:
        mine = []
        for train, test in folds:
            tr, y_tr = prob.select(np.asarray(train), n)
            te, y_te = prob.select(np.asarray(test), n)
            if te.size == 0:
                continue
            if not ((y_tr > 0).any() and (y_tr < 0).any()):
                raise InputError(
                    f"{_what(prob)}: a tuning split leaves no training point of one class"
                )
            mine.append((tr, y_tr, te, y_te))
        if not mine:
            raise InputError(f"{_what(prob)} has no point in any tuning part")
        tuned = np.concatenate([part[3] for part in mine])
        if not ((tuned > 0).any() and (tuned < 0).any()):
            raise InputError(
                f"{_what(prob)}: the tuning rows hold only one of its classes, so its EGKL "
                "cannot choose lambda and sigma (does the tuning set miss a class?)"
            )
        parts.append(mine)
    ex = executor or current_executor(n_jobs)
    storage = plan_storage(
        ex,
        n,
        X.shape[1],
        max(part[0].size for mine in parts for part in mine),
        max(w.size for w in weights),
        kernel_free=bool(getattr(engine, "kernel_free", False)),
        what="tuning",
    )
    kernels = [kernel_with_sigma(kernel, sg) for sg in sigmas]
    cells = [
        (j, i, li, f)
        for j in range(S)
        for i in range(len(problems))
        for li in range(lambdas[i].size)
        for f in range(len(parts[i]))
    ]
    tracker.add_total(sum(weights[i].size for _, i, _, _ in cells))
    tracker.check()

    def tasks(data: Any) -> list[Task]:
        return [
            Task(
                _score_task,
                (data, engine, kernels[j], i, f, weights[i], float(lambdas[i][li]), rule),
                units=weights[i].size,
                group=j,
            )
            for j, i, li, f in cells
        ]

    outcomes = _run(ex, _RunData(X, parts, storage), tasks, tracker)
    loss = [np.zeros((g.size, S)) for g in lambdas]
    miss = [np.zeros((g.size, S)) for g in lambdas]
    failures: list[list[str]] = [[] for _ in problems]
    seconds = [0.0] * len(problems)
    for (j, i, li, _), (cell, failure, secs) in zip(cells, outcomes, strict=True):
        seconds[i] += secs
        if cell is None:
            failures[i].append(failure)
            loss[i][li, j] = np.inf
        else:
            loss[i][li, j] += cell[0]
            miss[i][li, j] += cell[1]
    n_test = [sum(p[2].size for p in mine) for mine in parts]
    results = []
    for i, prob in enumerate(problems):
        scores = loss[i] / n_test[i]
        if not np.isfinite(scores).any():
            raise SolverError(
                f"{_what(prob)}: every fit of the tuning grid failed; first failure: "
                + (failures[i][0] if failures[i] else "unknown")
            )
        best = np.flatnonzero(scores.ravel() == scores.min())[0]
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
            )
        )
    return results


def _what(prob: LadderProblem) -> str:
    return f"sub-problem {prob.name}" if prob.name else "the problem"


@dataclass(frozen=True)
class FittedLadder:
    """A final ladder of one problem.

    Attributes
    ----------
    ladder : Ladder
        Compressed: its coefficient columns follow ``support``.
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

    ladder: Ladder
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
    solver: str,
    qp_solver: str,
    inner_jobs: int,
    label: str,
) -> FittedLadder:
    """The final ladder of problem ``i`` (compressed to its support)."""
    start = time.perf_counter()
    run: _RunData = data.value
    r, y = run.parts[i]
    K_all = _shared_matrix(ctx, data, kern)
    gram: Gram = (
        DenseGram(K_all, r)
        if K_all is not None
        else OnTheFlyGram(run.X, kern, r, run.storage.cache_mb)
    )
    X_r = None if ctx.remote else run.X[r]

    def step(_done: int, _total: int, fit: Any) -> None:
        ctx.step(partial=None if X_r is None else FitEvent("final", fit, X_r, kern, label))

    ladder = fit_ladder(
        gram, y, weights, lam, solver, qp_solver,
        progress=step, should_cancel=ctx.cancelled, n_jobs=inner_jobs,
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
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    n_jobs: int = 1,
    tracker: ProgressTracker,
    executor: Executor | None = None,
) -> list[FittedLadder]:
    """The final ladder of every problem on its part of ``rows``, at its chosen (lambda, sigma).

    One task per problem, grouped by sigma (one kernel matrix per distinct sigma at a
    time).  A single problem is fitted locally with ``n_jobs`` threads over its weights,
    several with one thread each.  Every fit of a local run is reported to the tracker
    with a :class:`~wsvmgui.ladder.grid.FitEvent` (stage ``"final"``, label the problem's
    name) for live views; a cluster reports each ladder when it is done.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    problems : sequence of LadderProblem
    rows : ndarray of int
        Rows of the final fits (all rows, or the first fold's training part).
    kernel : Kernel
    chosen : sequence of (lambda, sigma)
    weights : sequence of ndarray
    solver, qp_solver : str
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
    storage = plan_storage(
        ex,
        n,
        X.shape[1],
        max(r.size for r, _ in sel),
        max(w.size for w in weights),
        kernel_free=solver == "libsvm",
        what="the final fit",
    )

    def tasks(data: Any) -> list[Task]:
        out = []
        for i, (lam, sigma) in enumerate(chosen):
            sg = float(sigma) if kernel.name == "rbf" else float("nan")
            out.append(
                Task(
                    _final_task,
                    (
                        data,
                        kernel_with_sigma(kernel, sigma),
                        i,
                        float(lam),
                        sg,
                        weights[i],
                        solver,
                        qp_solver,
                        inner_jobs,
                        problems[i].name,
                    ),  # fmt: skip
                    units=weights[i].size,
                    group="none" if np.isnan(sg) else sg,
                )
            )
        return out

    fitted = _run(ex, _RunData(X, sel, storage), tasks, tracker)
    return [replace(f, backend=ex.name) for f in fitted]
