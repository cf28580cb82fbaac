"""Fit the weighted truncated-hinge SVM at every point of the simplex grid.

The grid is walked in snake order (consecutive points are neighbours) and split into
contiguous segments, one chain of warm-started fits each (the segments depend on
``n_jobs`` only, so the answer does not depend on where they run).  Segments are
independent tasks (:mod:`wsvmgui.executor`): on a pool of ``n_jobs`` threads (the QP
backend and numpy release the interpreter lock for their heavy parts), or on a Dask
cluster, to which each problem's feature matrix is scattered once.
:func:`fit_grids` runs the segments of several grid fits (the cells of a tuning grid)
together.  Progress is reported and cancellation polled after every fit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ..errors import InputError
from ..executor import Executor, Shared, Task, TaskContext, current_executor
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from . import active_set
from .dca import DEFAULT_MAX_DCA, fit_truncated, fit_truncated_warm
from .simplex_grid import SimplexGrid
from .subproblem import ACTIVE_SET, DEFAULT_KKT_TOL, DEFAULT_QP_SOLVER, JointProblem

#: Largest number of floats held at once when predicting over the grid.
_PRED_BLOCK = 20_000_000


@dataclass(frozen=True)
class GridFit:
    """All grid fits of one training set.

    Attributes
    ----------
    grid : SimplexGrid
    W : ndarray, shape (G, r, K-1)
    b : ndarray, shape (G, K-1)
    n_qp : ndarray of int, shape (G,)
        Convex subproblems solved per grid point.
    objectives : list of tuple of float
        DCA objective trace per grid point.
    kkt_residual : ndarray, shape (G,)
    converged : ndarray of bool, shape (G,)
    seconds : float
        Time spent on its segments (summed over them: the wall time with one thread).
    restarts : ndarray of bool, shape (G,)
        Grid points where the warm-start guard reran DCA from the untruncated fit.
    fallbacks : int
        Subproblems the active-set solver left to the general QP (0 with the general QP;
        a plain count, so that model files need no schema for it).
    """

    grid: SimplexGrid
    W: np.ndarray
    b: np.ndarray
    n_qp: np.ndarray
    objectives: list
    kkt_residual: np.ndarray
    converged: np.ndarray
    seconds: float
    restarts: np.ndarray
    fallbacks: int = 0

    def predict_classes(self, Z: np.ndarray, P: np.ndarray) -> np.ndarray:
        """Class index predicted at every grid weight for features Z (m, r); (m, G) int8/16."""
        Z = np.asarray(Z, dtype=float)
        m = Z.shape[0]
        G, _, k1 = self.W.shape
        K = k1 + 1
        dtype = np.int8 if K < 127 else np.int16
        out = np.empty((m, G), dtype=dtype)
        step = max(1, _PRED_BLOCK // max(G * K, 1))
        Wflat = self.W.transpose(1, 0, 2).reshape(Z.shape[1], G * k1)
        bP = self.b @ P.T  # (G, K)
        for lo in range(0, m, step):
            T = (Z[lo : lo + step] @ Wflat).reshape(-1, G, k1)
            F = T @ P.T + bP[None]
            out[lo : lo + step] = np.argmax(F, axis=2)
        return out


def _segments(G: int, n_jobs: int, warm_start: bool) -> list[range]:
    if not warm_start:
        chunk = max(1, int(np.ceil(G / (8 * n_jobs))))
    else:
        n_seg = 1 if n_jobs == 1 else 2 * n_jobs
        chunk = int(np.ceil(G / n_seg))
    return [range(lo, min(lo + chunk, G)) for lo in range(0, G, chunk)]


@dataclass(frozen=True)
class _Segment:
    """The fits of grid points ``lo`` .. ``hi - 1`` of one grid fit."""

    W: np.ndarray
    b: np.ndarray
    n_qp: np.ndarray
    objectives: list
    kkt_residual: np.ndarray
    converged: np.ndarray
    restarts: np.ndarray
    fallbacks: int
    seconds: float


def _segment_task(
    ctx: TaskContext,
    data: Shared,
    C: float,
    s: float,
    lo: int,
    hi: int,
    warm_start: bool,
    qp_solver: str,
    kkt_tol: float,
    max_iter: int,
) -> _Segment:
    """Fit grid points ``lo .. hi - 1`` in order, each warm-started from the one before."""
    problem, weights = data.value
    t0 = time.perf_counter()
    m, r, k1 = hi - lo, problem.r, problem.K - 1
    W, b = np.zeros((m, r, k1)), np.zeros((m, k1))
    n_qp, kkt = np.zeros(m, dtype=int), np.zeros(m)
    conv, restarts = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool)
    fallbacks = 0
    objectives: list = [()] * m
    start = None
    hinge = None
    fast = qp_solver == ACTIVE_SET
    answer: active_set.Answer | None = None  # the active-set solver's warm starts
    hinge_answer: active_set.Answer | None = None
    for k, g in enumerate(range(lo, hi)):
        ctx.check()
        w = C * weights[g][problem.yi]
        if fast:
            pf = active_set.fit_point(
                problem, problem.arrays, w, s, answer, hinge_answer, kkt_tol, max_iter
            )
            res = pf.result
            restarts[k] = pf.restarted
            fallbacks += pf.fallbacks
            if warm_start:
                answer, hinge_answer = pf.answer, pf.hinge
        elif warm_start:
            res, hinge, again = fit_truncated_warm(
                problem, w, s, start, hinge, qp_solver, kkt_tol, max_iter
            )
            restarts[k] = again
            start = (res.W, res.b)
        else:
            res = fit_truncated(problem, w, s, None, qp_solver, kkt_tol, max_iter)
        W[k], b[k] = res.W, res.b
        n_qp[k], kkt[k], conv[k] = res.n_qp, res.kkt_residual, res.converged
        objectives[k] = res.objectives
        ctx.step(1, g)
    seconds = time.perf_counter() - t0
    return _Segment(W, b, n_qp, objectives, kkt, conv, restarts, fallbacks, seconds)


def fit_grids(
    jobs: Sequence[tuple[JointProblem, float]],
    grid: SimplexGrid,
    s: float,
    *,
    warm_start: bool = True,
    n_jobs: int = 1,
    qp_solver: str = DEFAULT_QP_SOLVER,
    kkt_tol: float = DEFAULT_KKT_TOL,
    max_iter: int = DEFAULT_MAX_DCA,
    tracker: ProgressTracker,
    executor: Executor | None = None,
) -> list[GridFit]:
    """Fit every grid point of several (problem, C) jobs, all segments as one batch.

    Parameters
    ----------
    jobs : sequence of (JointProblem, float)
        Each problem with its cost ``C = 1 / (2 n lambda)``; a problem object shared by
        several jobs is sent to a cluster once.
    grid, s, warm_start, n_jobs, qp_solver, kkt_tol, max_iter
        See :func:`fit_grid`.
    tracker : ProgressTracker
        Stepped once per grid point fitted (``partial``: the grid index); its total is
        the caller's.
    executor : Executor, optional
        Default: :func:`~wsvmgui.executor.current_executor` with ``n_jobs`` threads.

    Returns
    -------
    list of GridFit, in the order of ``jobs``; ``seconds`` is the time spent on each
    job's segments (its wall time with one thread).
    """
    for problem, C in jobs:
        if grid.K != problem.K:
            raise InputError(f"grid is for K = {grid.K} classes, the data hold {problem.K}")
        if not (np.isfinite(C) and C > 0):
            raise InputError(f"C must be a positive number, got {C!r}")
    n_jobs = max(int(n_jobs), 1)
    ex = executor or current_executor(n_jobs)
    segs = _segments(grid.size, n_jobs, warm_start)
    shared: dict[int, Shared] = {}
    for problem, _ in jobs:
        if id(problem) not in shared:
            shared[id(problem)] = Shared.new((problem, grid.weights))
    handles = {key: ex.share(value) for key, value in shared.items()}
    tasks = [
        Task(
            _segment_task,
            (
                handles[id(problem)],
                C,
                s,
                seg.start,
                seg.stop,
                warm_start,
                qp_solver,
                kkt_tol,
                max_iter,
            ),
            units=len(seg),
        )  # fmt: skip
        for problem, C in jobs
        for seg in segs
    ]
    tracker.check()
    try:
        # one BLAS thread per task: the active-set solver factors small matrices from
        # several worker threads at once, and BLAS threads on top oversubscribe the cores
        with threadpool_limits(1, user_api="blas"):
            parts = ex.run(tasks, tracker)
    finally:
        for handle in handles.values():
            ex.release(handle)
    out = []
    for j in range(len(jobs)):
        mine: list[_Segment] = parts[j * len(segs) : (j + 1) * len(segs)]
        out.append(
            GridFit(
                grid,
                np.concatenate([p.W for p in mine]),
                np.concatenate([p.b for p in mine]),
                np.concatenate([p.n_qp for p in mine]),
                [o for p in mine for o in p.objectives],
                np.concatenate([p.kkt_residual for p in mine]),
                np.concatenate([p.converged for p in mine]),
                float(sum(p.seconds for p in mine)),
                np.concatenate([p.restarts for p in mine]),
                int(sum(p.fallbacks for p in mine)),
            )
        )
    return out


def fit_grid(
    problem: JointProblem,
    grid: SimplexGrid,
    C: float,
    s: float,
    warm_start: bool = True,
    n_jobs: int = 1,
    qp_solver: str = DEFAULT_QP_SOLVER,
    kkt_tol: float = DEFAULT_KKT_TOL,
    max_iter: int = DEFAULT_MAX_DCA,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
) -> GridFit:
    """Fit every grid point.

    Parameters
    ----------
    problem : JointProblem
    grid : SimplexGrid
        Its K must match the problem's.
    C : float
        Cost ``1 / (2 n lambda)``; point i gets weight ``C pi_{y_i}``.
    s : float
        Truncation point (``-inf`` for the plain hinge).
    warm_start : bool
        True: start each fit's DCA from the previous grid point's solution, guarded by
        the untruncated fit at its own weight (:func:`.dca.fit_truncated_warm`), and seed
        every QP's working set from nearby solutions.  False: every fit starts cold
        from its own untruncated fit with full QPs.
    n_jobs : int
        Worker threads (at least 1; the estimator resolves scikit-learn's None / -1);
        also sets the segments (one with a warm start and one thread).
    qp_solver, kkt_tol, max_iter : see :func:`.dca.fit_truncated`
    progress, should_cancel : see :mod:`wsvmgui.progress`; ``partial`` is the grid
        index just fitted.

    Returns
    -------
    GridFit

    Raises
    ------
    Cancelled
        When ``should_cancel()`` turns True; checked before every fit.
    """
    tracker = ProgressTracker(grid.size, progress, should_cancel)
    return fit_grids(
        [(problem, C)],
        grid,
        s,
        warm_start=warm_start,
        n_jobs=n_jobs,
        qp_solver=qp_solver,
        kkt_tol=kkt_tol,
        max_iter=max_iter,
        tracker=tracker,
    )[0]
