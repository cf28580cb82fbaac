"""The weighted truncated-hinge K-class SVM solved by the difference-convex algorithm.

Loss (METHODS section 4): ``H_T(u) = min((1 - u)_+, 1 - s) = H_1(u) - H_s(u)`` of the
generalised margin ``u_i = f_{y_i}(x_i) - max_{k != y_i} f_k(x_i)``; ``s = -1/(K-1)`` is the
minimal truncation that keeps weighted Fisher consistency and ``s = -inf`` is the plain
hinge.  Objective ``Q = 1/2 sum_k ||w_k||^2 + C sum_i pi_{y_i} H_T(u_i)``.  Each DCA step
linearises ``-C sum_i pi_{y_i} H_s(u_i)`` at the current fit and solves the convex
subproblem of :mod:`.subproblem`; it stops when the set of truncated points stops
changing (their competing classes are updated at every step but do not hold it up).
The objective is recorded at every step and never rises (up to the subproblem
tolerance; a rise raises SolverError).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from .subproblem import DEFAULT_KKT_TOL, DEFAULT_QP_SOLVER, JointProblem, solve_subproblem

#: Most DCA steps per fit.
DEFAULT_MAX_DCA = 30


def minimal_truncation(K: int) -> float:
    """``s = -1 / (K - 1)``, the smallest truncation with weighted Fisher consistency."""
    return -1.0 / (K - 1)


def truncated_objective(
    problem: JointProblem, W: np.ndarray, b: np.ndarray, w: np.ndarray, s: float
) -> float:
    """``Q = 1/2 ||W_hat||^2 + sum_i w_i H_T(u_i)`` with truncation point ``s``."""
    u = problem.margins(W, b).min(axis=1)
    loss = np.maximum(1.0 - u, 0.0)
    if np.isfinite(s):
        loss = np.minimum(loss, 1.0 - s)
    return float(0.5 * np.sum(W * W) + w @ loss)


#: Margin band around the kinks inside which a point keeps its previous DCA slope.
KINK_TOL = 1e-5


def truncated_set(
    problem: JointProblem,
    W: np.ndarray,
    b: np.ndarray,
    s: float,
    previous: tuple[np.ndarray, np.ndarray] | None = None,
    tol: float = KINK_TOL,
) -> tuple[np.ndarray, np.ndarray]:
    """Points with ``u_i < s`` (n,) bool and their competing class column (n,) int.

    A convex subproblem's answer often puts points exactly on the kink ``u_i = s`` (or
    on a tie between two competing classes), where either slope is a valid
    linearisation.  Given the ``previous`` set, such points (within ``tol``) keep their
    previous slope, so round-off cannot make the set flip back and forth.
    """
    m = problem.margins(W, b)
    n = m.shape[0]
    jc = np.argmin(m, axis=1)
    u = m[np.arange(n), jc]
    if not np.isfinite(s):
        return np.zeros(n, bool), np.zeros(n, int)
    trunc = u < s
    if previous is not None:
        old_trunc, old_jc = previous
        trunc = np.where(np.abs(u - s) <= tol, old_trunc, trunc)
        tie = m[np.arange(n), old_jc] <= u + tol
        jc = np.where(trunc & old_trunc & tie, old_jc, jc)
    return trunc, np.where(trunc, jc, 0)


@dataclass(frozen=True)
class DCAResult:
    """One weighted truncated-hinge fit.

    Attributes
    ----------
    W : ndarray, shape (r, K-1)
    b : ndarray, shape (K-1,)
    objectives : tuple of float
        ``Q`` at the starting point and after every subproblem.
    n_qp : int
        Convex subproblems solved (including the untruncated start, if any).
    kkt_residual : float
        Largest subproblem KKT residual met.
    converged : bool
        True when the truncated set stopped changing within ``max_iter`` steps.
    n_truncated : int
    """

    W: np.ndarray
    b: np.ndarray
    objectives: tuple[float, ...]
    n_qp: int
    kkt_residual: float
    converged: bool
    n_truncated: int


def fit_truncated(
    problem: JointProblem,
    w: np.ndarray,
    s: float,
    start: tuple[np.ndarray, np.ndarray] | None = None,
    qp_solver: str = DEFAULT_QP_SOLVER,
    kkt_tol: float = DEFAULT_KKT_TOL,
    max_iter: int = DEFAULT_MAX_DCA,
) -> DCAResult:
    """Minimise the weighted truncated-hinge objective by DCA.

    Parameters
    ----------
    problem : JointProblem
    w : ndarray, shape (n,)
        Per-point weights ``C pi_{y_i}``.
    s : float
        Truncation point (``-inf``: plain hinge, one convex QP).
    start : (W_hat, b_hat) or None
        Starting fit, e.g. a neighbouring grid point's solution; None starts from the
        untruncated (plain hinge) fit.
    qp_solver, kkt_tol : see :func:`.subproblem.solve_subproblem`
    max_iter : int
        Most DCA steps.

    Returns
    -------
    DCAResult
    """
    n = problem.n
    n_qp = 0
    worst = 0.0
    if start is None or not np.isfinite(s):
        # untruncated start (or the plain hinge itself: one convex QP, seeded by start)
        sol = solve_subproblem(
            problem, w, np.zeros(n, bool), np.zeros(n, int), qp_solver, kkt_tol, start=start
        )
        W, b = sol.W, sol.b
        n_qp, worst = 1, sol.kkt_residual
    else:
        W, b = start
    objectives = [truncated_objective(problem, W, b, w, s)]
    if not np.isfinite(s):
        return DCAResult(W, b, tuple(objectives), n_qp, worst, True, 0)
    trunc, jc = truncated_set(problem, W, b, s)
    converged = False
    tol = 1e-7 * max(abs(objectives[0]), 1.0)
    for _ in range(max_iter):
        sol = solve_subproblem(problem, w, trunc, jc, qp_solver, kkt_tol, start=(W, b))
        n_qp += 1
        worst = max(worst, sol.kkt_residual)
        obj = truncated_objective(problem, sol.W, sol.b, w, s)
        if obj > objectives[-1] + tol:
            raise SolverError(
                f"DCA objective rose from {objectives[-1]:.8g} to {obj:.8g}; the subproblem "
                "answer is not accurate enough"
            )
        objectives.append(obj)
        W, b = sol.W, sol.b
        new_trunc, new_jc = truncated_set(problem, W, b, s, previous=(trunc, jc))
        if np.array_equal(new_trunc, trunc):
            converged = True
            break
        trunc, jc = new_trunc, new_jc
    return DCAResult(W, b, tuple(objectives), n_qp, worst, converged, int(trunc.sum()))


def fit_truncated_warm(
    problem: JointProblem,
    w: np.ndarray,
    s: float,
    neighbour: tuple[np.ndarray, np.ndarray] | None,
    hinge_seed: tuple[np.ndarray, np.ndarray] | None = None,
    qp_solver: str = DEFAULT_QP_SOLVER,
    kkt_tol: float = DEFAULT_KKT_TOL,
    max_iter: int = DEFAULT_MAX_DCA,
) -> tuple[DCAResult, tuple[np.ndarray, np.ndarray], bool]:
    """DCA warm-started from a neighbouring grid point, guarded by the untruncated fit.

    A non-convex fit carried along the grid can stay in a poor local minimum (e.g. a
    class whose points are all truncated stops pulling on the fit, at every later
    weight).  The untruncated (plain hinge) fit at this weight is unique, so it is the
    guard: it is solved first (one QP, its working set seeded by ``hinge_seed``);
    DCA starts from whichever of it and ``neighbour`` has the lower truncated
    objective; and if a neighbour-started DCA ends above the hinge fit's objective,
    DCA is rerun from the hinge fit and the lower result kept.

    Returns
    -------
    result : DCAResult
        ``n_qp`` counts every QP solved here, the hinge fit included.
    hinge : (W_hat, b_hat)
        The untruncated fit (seed for the next grid point's hinge fit).
    restarted : bool
        Whether the guard reran DCA from the hinge fit.
    """
    n = problem.n
    h = solve_subproblem(
        problem, w, np.zeros(n, bool), np.zeros(n, int), qp_solver, kkt_tol, start=hinge_seed
    )
    hinge = (h.W, h.b)
    if not np.isfinite(s):
        res = DCAResult(
            h.W, h.b, (truncated_objective(problem, h.W, h.b, w, s),), 1, h.kkt_residual, True, 0
        )
        return res, hinge, False
    q_h = truncated_objective(problem, h.W, h.b, w, s)
    use_nb = neighbour is not None and (truncated_objective(problem, *neighbour, w, s) < q_h)
    res = fit_truncated(problem, w, s, neighbour if use_nb else hinge, qp_solver, kkt_tol, max_iter)
    n_qp = res.n_qp + 1
    restarted = False
    tol = 1e-7 * max(abs(q_h), 1.0)
    if use_nb and res.objectives[-1] > q_h + tol:
        restarted = True
        alt = fit_truncated(problem, w, s, hinge, qp_solver, kkt_tol, max_iter)
        n_qp += alt.n_qp
        if alt.objectives[-1] < res.objectives[-1]:
            res = alt
    res = DCAResult(
        res.W,
        res.b,
        res.objectives,
        n_qp,
        max(res.kkt_residual, h.kkt_residual),
        res.converged,
        res.n_truncated,
    )
    return res, hinge, restarted
