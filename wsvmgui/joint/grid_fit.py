"""Fit the weighted truncated-hinge SVM at every point of the simplex grid.

The grid is walked in snake order (consecutive points are neighbours) and split into
contiguous segments, one chain of warm-started fits each; segments run on a thread pool
of ``n_jobs`` workers (the QP backend and numpy release the interpreter lock for their
heavy parts).  Progress is reported and cancellation polled after every fit.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..errors import Cancelled, InputError
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from .dca import DEFAULT_MAX_DCA, fit_truncated, fit_truncated_warm
from .simplex_grid import SimplexGrid
from .subproblem import DEFAULT_KKT_TOL, DEFAULT_QP_SOLVER, JointProblem

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
        Wall time of the whole grid.
    restarts : ndarray of bool, shape (G,)
        Grid points where the warm-start guard reran DCA from the untruncated fit.
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
        Worker threads (at least 1; the estimator resolves scikit-learn's None / -1).
    qp_solver, kkt_tol, max_iter : see :func:`.dca.fit_truncated`
    progress, should_cancel : see :mod:`wsvmgui.progress`; ``partial`` is the grid
        index just fitted.

    Returns
    -------
    GridFit

    Raises
    ------
    Cancelled
        When ``should_cancel()`` turns True; checked after every fit.
    """
    if grid.K != problem.K:
        raise InputError(f"grid is for K = {grid.K} classes, the data hold {problem.K}")
    if not (np.isfinite(C) and C > 0):
        raise InputError(f"C must be a positive number, got {C!r}")
    n_jobs = max(int(n_jobs), 1)
    G, r, k1 = grid.size, problem.r, problem.K - 1
    W = np.zeros((G, r, k1))
    b = np.zeros((G, k1))
    n_qp = np.zeros(G, dtype=int)
    kkt = np.zeros(G)
    conv = np.zeros(G, dtype=bool)
    objectives: list = [()] * G
    restarts = np.zeros(G, dtype=bool)
    weights = grid.weights
    stop = threading.Event()
    base_cancel = should_cancel

    def cancel() -> bool:
        return stop.is_set() or bool(base_cancel and base_cancel())

    tracker = ProgressTracker(G, progress, cancel)

    def run(seg: range) -> None:
        start = None
        hinge = None
        for g in seg:
            if cancel():
                raise Cancelled("cancelled by the user")
            w = C * weights[g][problem.yi]
            if warm_start:
                res, hinge, again = fit_truncated_warm(
                    problem, w, s, start, hinge, qp_solver, kkt_tol, max_iter
                )
                restarts[g] = again
                start = (res.W, res.b)
            else:
                res = fit_truncated(problem, w, s, None, qp_solver, kkt_tol, max_iter)
            W[g], b[g] = res.W, res.b
            n_qp[g], kkt[g], conv[g] = res.n_qp, res.kkt_residual, res.converged
            objectives[g] = res.objectives
            tracker.step(1, g)

    t0 = time.perf_counter()
    segs = _segments(G, n_jobs, warm_start)
    tracker.check()
    if n_jobs == 1:
        for seg in segs:
            run(seg)
    else:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            futures = [pool.submit(run, seg) for seg in segs]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                stop.set()
                for f in futures:
                    f.cancel()
                raise
    return GridFit(grid, W, b, n_qp, objectives, kkt, conv, time.perf_counter() - t0, restarts)
