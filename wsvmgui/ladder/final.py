"""The final ladders of a ladder scheme, at the (lambda, sigma) its tuning chose.

:func:`fit_ladders` fits one ladder per binary problem (the binary estimator has one; a
divide-and-conquer scheme one per sub-problem) on its part of the final rows, each an
independent task (:mod:`wsvmgui.executor`) grouped by sigma so that one kernel matrix of
the rows is held per distinct sigma (:mod:`wsvmgui.ladder.runs`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..executor import ClusterExecutor, Executor, Shared, Task, TaskContext, current_executor
from ..progress import ProgressTracker
from ..solvers.gram import drop_kernels
from ..solvers.kernels import Kernel
from .engines import DEFAULT_ENGINE, AnyLadder, PathFallbackWarning, fit_binary_ladder
from .grid import FitEvent
from .problems import LadderProblem
from .runs import LadderRun, engine_plan, run_gram
from .tuning import kernel_with_sigma


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
    n_train : float
        Rows of the final fit (the sum of their sample weights when weighted).
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
    n_train: float
    seconds: float = 0.0
    storage: str = ""
    backend: str = field(default="", compare=False)


@dataclass(frozen=True)
class _Final:
    """A final run's tasks' data: every problem's rows, labels and sample weights."""

    parts: list[tuple[np.ndarray, np.ndarray]]
    sample_weight: np.ndarray | None


@dataclass(frozen=True)
class _FinalSpec:
    """What one final task fits beyond its data."""

    lam: float
    sigma: float
    weights: np.ndarray
    engine: str
    solver: str
    qp_solver: str
    inner_jobs: int
    label: str
    context: str
    stage: str


def _final_task(
    ctx: TaskContext, data: Shared, kern: Kernel, i: int, spec: _FinalSpec
) -> FittedLadder:
    """The final ladder of problem ``i`` (compressed to its support)."""
    start = time.perf_counter()
    run: LadderRun = data.value
    final: _Final = run.payload
    r, y = final.parts[i]
    ctx.check()
    gram = run_gram(run, data.token, kern, r)
    X_r = None if ctx.remote else run.X[r]
    sw = None if final.sample_weight is None else final.sample_weight[r]

    def step(_done: int, _total: int, fit: Any) -> None:
        event = None
        if fit is not None and X_r is not None:
            event = FitEvent(spec.stage, fit, X_r, kern, spec.label)
        ctx.step(partial=event)

    ladder = fit_binary_ladder(
        gram, y, spec.weights, spec.lam, engine=spec.engine, solver=spec.solver,
        qp_solver=spec.qp_solver, progress=step, should_cancel=ctx.cancelled,
        n_jobs=spec.inner_jobs, context=spec.context, report_fits=not ctx.remote,
        sample_weight=sw,
    )  # fmt: skip
    compressed, keep = ladder.compress()
    return FittedLadder(
        compressed,
        r[keep],
        kern,
        float(spec.lam),
        spec.sigma,
        int(r.size) if sw is None else float(sw.sum()),
        time.perf_counter() - start,
        run.storage.describe(),
    )


def _context(prob: LadderProblem, lam: float, kernel: Kernel) -> str:
    """Where a ladder belongs, for fallback warnings."""
    where = f"sub-problem {prob.name}, " if prob.name else ""
    return f"{where}lambda {lam:.4g}, {kernel.describe()}"


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
    sample_weight: np.ndarray | None = None,
    stage: str = "final",
) -> list[FittedLadder]:
    """The final ladder of every problem on its part of ``rows``, at its chosen (lambda, sigma).

    One task per problem, grouped by sigma (one kernel matrix of ``rows`` per distinct
    sigma at a time).  A single grid ladder is fitted locally with ``n_jobs`` threads over
    its weights, several problems with one task each.  Every weighted fit of a local
    grid ladder is reported to the tracker with a :class:`~wsvmgui.ladder.grid.FitEvent`
    (stage ``stage``, label the problem's name) for live views, and so is a path's fit
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
    sample_weight : ndarray, shape (n,), optional
        Weight of every data row (multiplies its bound ``C S(y_i)``).
    stage : str
        The stage its fit events report: ``"final"`` for the model's own ladders (live
        views draw them), ``"calibration"`` for a recalibration's fold fits (they are not
        the model's boundaries).

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
    storage, engine_name = engine_plan(
        ex, X, max(r.size for r, _ in sel), max(w.size for w in weights), rows.size,
        rows.size, engine, solver, "the final fit",
    )  # fmt: skip
    assert isinstance(engine_name, str)
    held = None if rows.size == n and np.array_equal(rows, np.arange(n)) else [rows]
    tasks = []
    for i, (lam, sigma) in enumerate(chosen):
        kern = kernel_with_sigma(kernel, sigma)
        sg = float(sigma) if kernel.name == "rbf" else float("nan")
        spec = _FinalSpec(
            float(lam), sg, weights[i], engine_name, solver, qp_solver, inner_jobs,
            problems[i].name, _context(problems[i], lam, kern), stage,
        )  # fmt: skip
        tasks.append((kern, i, spec, "none" if np.isnan(sg) else sg))
    run = Shared.new(LadderRun(X, storage, held, _Final(sel, sample_weight)))
    handle = ex.share(run)
    try:
        fitted = ex.run(
            [Task(_final_task, (handle, k, i, s), s.weights.size, g) for k, i, s, g in tasks],
            tracker,
        )
    finally:
        ex.everywhere(drop_kernels, run.token)
        ex.release(handle)
    if isinstance(ex, ClusterExecutor):  # a worker's warnings stay on the worker
        for f in fitted:
            if f.ladder.fallback:
                warnings.warn(
                    f"{f.ladder.fallback}; the grid ladder answered instead",
                    PathFallbackWarning,
                    2,
                )
    return [replace(f, backend=ex.name) for f in fitted]
