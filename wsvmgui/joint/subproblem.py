"""The convex subproblem of one DCA step, its solvers and its optimality check.

Problem (METHODS section 4) for a feature map ``z`` (linear kernel: ``z = x``; other
kernels: ``z`` from the eigendecomposition of the kernel matrix, see :mod:`.features`).
The K decision functions are ``f(x) = (z' W_hat + b_hat) P'`` where ``P`` (K, K-1) is an
orthonormal basis of the sum-to-zero subspace, so ``sum_k f_k = 0`` holds by construction
and ``sum_k ||w_k||^2 = ||W_hat||^2``.  With weights ``w_i = C pi_{y_i}``, pair margins
``m_ij = f_{y_i}(x_i) - f_{k_ij}(x_i)`` over the K - 1 other classes ``k_ij``, and the
DCA linearisation of the concave part (slope ``+w_i`` on the margin of pair ``(i, k_i)``
for each truncated point ``i``), one step solves

    min 1/2 ||W_hat||^2 + sum_i w_i xi_i + sum_{i truncated} w_i m_{i, k_i}
    s.t. xi_i >= 1 - m_ij (all i, j),  xi_i >= 0.

Its dual multipliers ``alpha_ij`` are the paper's ``alpha_ik`` (Section 4.1): ``0 <=
alpha``, ``sum_j alpha_ij <= w_i`` and ``W_hat = sum_ij (alpha_ij - beta_ij) z_i d_ij'``.
Every answer is checked by :func:`kkt_residual` whatever the solver reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import sparse

from ..errors import SolverError
from ..solvers.kkt import hinge_kkt_residual
from ..solvers.qp import solve_qp

#: Largest accepted KKT residual of a subproblem answer, in margin units.
DEFAULT_KKT_TOL = 1e-3
#: The solver specialised to this subproblem (:mod:`wsvmgui.joint.active_set`).
ACTIVE_SET = "active-set"
#: Subproblem solver: :data:`ACTIVE_SET`, or a general QP backend of
#: :func:`wsvmgui.solvers.qp.solve_qp`: "clarabel" (called directly with hand-built sparse
#: matrices; "direct" is an alias; the reference the tests compare against) or a
#: qpsolvers backend name ("quadprog", ...).  The active-set solver was measured 6 to 30
#: times faster on whole grids (benchmarks/results/joint_speed.md).
DEFAULT_QP_SOLVER = ACTIVE_SET


def sum_zero_basis(K: int) -> np.ndarray:
    """Orthonormal basis of ``{v in R^K : sum v = 0}``; shape (K, K-1)."""
    M = np.eye(K) - 1.0 / K
    U, _, _ = np.linalg.svd(M)
    return U[:, : K - 1]


@dataclass
class JointProblem:
    """Data of the weighted K-class problem that do not depend on the weights.

    Built once per training set and kernel and shared by every grid point's fit.  The
    general QP's margin rows (``A``) and the active-set solver's
    arrays (``arrays``) are built on first use.

    Attributes
    ----------
    Z : ndarray, shape (n, r)
        Features of the training points.
    yi : ndarray of int, shape (n,)
        Class indices 0..K-1.
    K : int
    P : ndarray, shape (K, K-1)
        Sum-to-zero basis.
    others : ndarray of int, shape (n, K-1)
        The classes other than ``yi[i]``, in increasing order.
    D : ndarray, shape (n, K-1, K-1)
        Pair vectors ``D[i, j] = P[y_i] - P[others[i, j]]``.
    """

    Z: np.ndarray
    yi: np.ndarray
    K: int
    P: np.ndarray = field(init=False)
    others: np.ndarray = field(init=False)
    D: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        Z = np.asarray(self.Z, dtype=float)
        self.Z = Z
        n = Z.shape[0]
        K = self.K
        self.P = sum_zero_basis(K)
        all_k = np.arange(K)
        self.others = np.array([all_k[all_k != c] for c in self.yi]).reshape(n, K - 1)
        # D[i, j] = P[y_i] - P[k_ij]: margin m_ij = (z_i' W_hat + b_hat) . D[i, j].
        self.D = self.P[self.yi][:, None, :] - self.P[self.others]

    @cached_property
    def A(self) -> np.ndarray:
        """Margin rows: ``m = A theta`` for ``theta = (vec W_hat, b_hat)``; (n (K-1), p)."""
        n, r = self.Z.shape
        rows = n * (self.K - 1)
        Aw = (self.Z[:, None, :, None] * self.D[:, :, None, :]).reshape(rows, r * (self.K - 1))
        return np.hstack([Aw, self.D.reshape(rows, self.K - 1)])

    @cached_property
    def arrays(self):
        """The active-set solver's arrays (:class:`wsvmgui.joint.active_set.Arrays`)."""
        from .active_set import Arrays

        return Arrays.of(self)

    @property
    def n(self) -> int:
        return self.Z.shape[0]

    @property
    def r(self) -> int:
        return self.Z.shape[1]

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Split a primal vector into ``W_hat`` (r, K-1) and ``b_hat`` (K-1,)."""
        p_w = self.r * (self.K - 1)
        return x[:p_w].reshape(self.r, self.K - 1), x[p_w : p_w + self.K - 1]

    def decision(self, W: np.ndarray, b: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        """Decision values ``f`` (m, K) at features ``Z`` (m, r) (default: training)."""
        Z = self.Z if Z is None else Z
        return (Z @ W + b) @ self.P.T

    def margins(self, W: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Pair margins ``m_ij = f_{y_i} - f_{k_ij}`` at the training points; shape (n, K-1)."""
        F = self.decision(W, b)
        n = self.n
        return F[np.arange(n), self.yi][:, None] - F[np.arange(n)[:, None], self.others]

    def beta(self, w: np.ndarray, trunc: np.ndarray, jc: np.ndarray) -> np.ndarray:
        """The DCA slopes ``beta_ij`` (n, K-1): ``w_i`` on the truncated pair, else 0."""
        beta = np.zeros((self.n, self.K - 1))
        idx = np.flatnonzero(trunc)
        beta[idx, jc[idx]] = w[idx]
        return beta


@dataclass(frozen=True)
class SubproblemSolution:
    """Answer of one convex subproblem.

    Attributes
    ----------
    W : ndarray, shape (r, K-1)
    b : ndarray, shape (K-1,)
    alpha : ndarray, shape (n, K-1)
        Dual multipliers of the margin constraints.
    kkt_residual : float
    objective : float
        Value of the convex subproblem's objective.
    """

    W: np.ndarray
    b: np.ndarray
    alpha: np.ndarray
    kkt_residual: float
    objective: float


def kkt_residual(
    problem: JointProblem,
    W: np.ndarray,
    b: np.ndarray,
    alpha: np.ndarray,
    w: np.ndarray,
    beta: np.ndarray,
) -> float:
    """Largest violation of the subproblem's optimality conditions, in margin units.

    Feasibility and complementarity of the pair margins ``m_ij`` with the relative duals
    ``r_ij = alpha_ij / w_i`` (:func:`~wsvmgui.solvers.kkt.hinge_kkt_residual`), and
    stationarity in ``W_hat`` measured by the largest change it makes to any training
    margin, and in ``b_hat`` relative to ``max w``.  Zero exactly at an optimum.

    Parameters
    ----------
    problem : JointProblem
    W : ndarray, shape (r, K-1)
    b : ndarray, shape (K-1,)
    alpha : ndarray, shape (n, K-1)
    w : ndarray, shape (n,)
        Per-point weights ``C pi_{y_i}``.
    beta : ndarray, shape (n, K-1)

    Returns
    -------
    float
    """
    r = alpha / np.maximum(w, 1e-300)[:, None]
    m = problem.margins(W, b)
    base = float(hinge_kkt_residual(m[None], r[None])[0])
    gamma = alpha - beta
    # W_hat from the duals: sum_ij gamma_ij z_i D_ij'.
    W_dual = np.einsum("ij,ia,ijc->ac", gamma, problem.Z, problem.D)
    dm = problem.margins(W - W_dual, np.zeros_like(b))
    stat_w = float(np.max(np.abs(dm)))
    stat_b = float(np.max(np.abs(np.einsum("ij,ijc->c", gamma, problem.D)))) / float(np.max(w))
    return max(base, stat_w, stat_b)


def subproblem_objective(
    problem: JointProblem, W: np.ndarray, b: np.ndarray, w: np.ndarray, beta: np.ndarray
) -> float:
    """Objective of the convex subproblem at ``(W_hat, b_hat)`` with optimal slacks."""
    m = problem.margins(W, b)
    xi = np.maximum(0.0, np.max(1.0 - m, axis=1))
    return float(0.5 * np.sum(W * W) + w @ xi + np.sum(beta * m))


def _pieces(m: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Active piece of each point's loss ``max(0, 1 - m_i1, ..., 1 - m_i,K-1)``.

    Returns the piece (n,) (-1: the zero piece, j: pair j) and whether it is clear, i.e.
    leads the runner-up by at least ``delta`` (n,) bool.
    """
    v = np.concatenate([np.zeros((m.shape[0], 1)), 1.0 - m], axis=1)
    order = np.argsort(-v, axis=1)
    top = v[np.arange(v.shape[0]), order[:, 0]]
    second = v[np.arange(v.shape[0]), order[:, 1]]
    return order[:, 0] - 1, (top - second) >= delta


def _reduced_constraints(A_S: np.ndarray, nS: int, K1: int, dense: bool):
    """The reduced QP's constraint matrix ``[[-A_S, -E], [0, -I]]`` (E sums a point's rows).

    Sparse CSC assembled by hand (no per-call conversions, which cost several times the
    solve at this size), or dense for quadprog.
    """
    rows, p = A_S.shape
    if dense:
        E = np.repeat(np.eye(nS), K1, axis=0)
        return np.block([[-A_S, -E], [np.zeros((nS, p)), -np.eye(nS)]])
    # p dense columns, then one column per slack with K1 + 1 entries.
    dense_idx = np.tile(np.arange(rows), p)
    slack_idx = np.column_stack(
        [np.arange(rows).reshape(nS, K1), rows + np.arange(nS)[:, None]]
    ).ravel()
    indices = np.concatenate([dense_idx, slack_idx])
    data = np.concatenate([-A_S.T.ravel(), -np.ones(nS * (K1 + 1))])
    indptr = np.concatenate([np.arange(p + 1) * rows, p * rows + np.arange(1, nS + 1) * (K1 + 1)])
    return sparse.csc_matrix((data, indices, indptr), shape=(rows + nS, p + nS))


def _solve_reduced(
    problem: JointProblem,
    S: np.ndarray,
    c_theta: np.ndarray,
    w: np.ndarray,
    qp_solver: str,
) -> tuple[np.ndarray, np.ndarray]:
    """QP over theta and the slacks of the points S only; returns theta and alpha_S."""
    K1 = problem.K - 1
    p = problem.A.shape[1]
    p_w = problem.r * K1
    nS = S.size
    rows = nS * K1
    A_S = problem.A.reshape(problem.n, K1, p)[S].reshape(rows, p)
    q = np.concatenate([c_theta, w[S]])
    h = np.concatenate([-np.ones(rows), np.zeros(nS)])
    backend = "clarabel" if qp_solver == "direct" else qp_solver
    dense = backend == "quadprog"  # dense and strictly convex
    G = _reduced_constraints(A_S, nS, K1, dense)
    n_var = p + nS
    if dense:
        Pq = np.diag(np.concatenate([np.ones(p_w), np.zeros(n_var - p_w)]) + 1e-9)
    else:
        pp = np.concatenate([np.arange(p_w + 1), np.full(n_var - p_w, p_w)])
        Pq = sparse.csc_matrix((np.ones(p_w), np.arange(p_w), pp), shape=(n_var, n_var))
    sol = solve_qp(Pq, q, G, h, backend=backend)
    if not sol.converged:
        raise SolverError(f"QP backend {qp_solver!r} stopped with status {sol.status}")
    return sol.x[:p], sol.z[:rows].reshape(nS, K1)


def _solve_working_set(
    problem: JointProblem,
    w: np.ndarray,
    beta: np.ndarray,
    qp_solver: str,
    start: tuple[np.ndarray, np.ndarray] | None,
    delta: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The general QP's answer over a working set (:func:`solve_subproblem`).

    Points whose loss has a clear active piece at ``start`` (lead >= ``delta``) enter
    with that piece only; a violated assumption moves its point into the working set
    and the reduced QP is solved again.  ``start`` None: every point in the set.

    Returns
    -------
    W : ndarray, shape (r, K-1)
    b : ndarray, shape (K-1,)
    alpha : ndarray, shape (n, K-1)
    """
    n, K1 = problem.n, problem.K - 1
    p = problem.A.shape[1]
    c_dca = problem.A.T @ beta.ravel()
    A3 = problem.A.reshape(n, K1, p)
    if start is None:
        fixed = np.zeros(n, bool)
        piece = np.full(n, -1)
    else:
        piece, fixed = _pieces(problem.margins(*start), delta)
    for _ in range(20):
        S = np.flatnonzero(~fixed)
        lin = np.flatnonzero(fixed & (piece >= 0))
        c_theta = c_dca - (w[lin, None] * A3[lin, piece[lin]]).sum(axis=0)
        try:
            theta, alpha_S = _solve_reduced(problem, S, c_theta, w, qp_solver)
        except SolverError:
            if not fixed.any():
                raise
            # A reduced problem can be unbounded (too few slack points to pin the
            # intercept): fall back to the full QP.
            fixed[:] = False
            continue
        W, b = problem.unpack(theta)
        if not fixed.any():
            break
        v = np.concatenate([np.zeros((n, 1)), 1.0 - problem.margins(W, b)], axis=1)
        held = v[np.arange(n), piece + 1] >= v.max(axis=1) - 1e-9
        bad = fixed & ~held
        if not bad.any():
            break
        fixed &= ~bad
    else:  # pragma: no cover - the working set grows every round
        raise SolverError("working-set QP did not settle in 20 rounds")
    alpha = np.zeros((n, K1))
    alpha[S] = alpha_S
    lin = np.flatnonzero(fixed & (piece >= 0))
    alpha[lin, piece[lin]] = w[lin]
    return W, b, alpha


def solve_subproblem(
    problem: JointProblem,
    w: np.ndarray,
    trunc: np.ndarray,
    jc: np.ndarray,
    qp_solver: str = DEFAULT_QP_SOLVER,
    kkt_tol: float = DEFAULT_KKT_TOL,
    start: tuple[np.ndarray, np.ndarray] | None = None,
    delta: float = 0.3,
) -> SubproblemSolution:
    """Solve one convex DCA subproblem and check the answer.

    Warm start (working set): given a nearby fit ``start``, each point whose loss
    ``max(0, 1 - m_i1, ...)`` has a clear active piece there (lead >= ``delta``) enters
    with that affine piece only, and only the other points keep slack variables.  The
    reduced objective is a minorant of the full one (each affine piece is below the max),
    so once its minimiser keeps every assumed piece active (checked; violators join the
    working set and the QP is solved again), it minimises the full subproblem too.  The
    answer is then checked by :func:`kkt_residual` on the full problem.

    Parameters
    ----------
    problem : JointProblem
    w : ndarray, shape (n,)
        ``C pi_{y_i}``.
    trunc : ndarray of bool, shape (n,)
        Points whose generalised margin is below the truncation point ``s``.
    jc : ndarray of int, shape (n,)
        Column (into ``problem.others``) of each truncated point's competing class.
    qp_solver : str
        :data:`ACTIVE_SET` (a cold solve of :func:`wsvmgui.joint.active_set.solve`; its
        warm starts are for the grid fits), "clarabel" (or its alias "direct"), or another
        backend of :func:`wsvmgui.solvers.qp.solve_qp` ("quadprog", ...).
    kkt_tol : float
    start : (W_hat, b_hat) or None
        Nearby fit seeding the general QP's working set; None solves the full QP.
    delta : float
        Lead (margin units) that makes a piece clear.

    Returns
    -------
    SubproblemSolution

    Raises
    ------
    SolverError
        The backend failed or the answer's KKT residual exceeds ``kkt_tol``.
    """
    beta = problem.beta(w, trunc, jc)
    if qp_solver == ACTIVE_SET:
        from .active_set import solve

        ans = solve(problem, problem.arrays, w, beta, None, kkt_tol)
        return SubproblemSolution(ans.W, ans.b, ans.alpha, ans.kkt_residual, ans.objective)
    W, b, alpha = _solve_working_set(problem, w, beta, qp_solver, start, delta)
    resid = kkt_residual(problem, W, b, alpha, w, beta)
    if not np.isfinite(resid) or resid > kkt_tol:
        raise SolverError(
            f"QP backend {qp_solver!r} returned an answer with KKT residual {resid:.3g} > "
            f"tolerance {kkt_tol:.3g}"
        )
    return SubproblemSolution(
        W=W.copy(),
        b=b.copy(),
        alpha=alpha,
        kkt_residual=resid,
        objective=subproblem_objective(problem, W, b, w, beta),
    )


def solve_subproblem_dual(
    problem: JointProblem, w: np.ndarray, trunc: np.ndarray, jc: np.ndarray
) -> SubproblemSolution:
    """Reference solver: the paper's dual QP (quadprog) plus the intercept by an LP (HiGHS).

    Independent of :func:`solve_subproblem` (other formulation, other backends); used to
    cross-check it on small problems.  Dense, so meant for n (K-1) up to a few hundred.
    """
    from qpsolvers import solve_qp
    from scipy.optimize import linprog

    n, K, r = problem.n, problem.K, problem.r
    p_w = r * (K - 1)
    beta = problem.beta(w, trunc, jc)
    Aw = problem.A[:, :p_w]
    Ab = problem.A[:, p_w:]
    beta_v = beta.ravel()
    rows = n * (K - 1)
    H = Aw @ Aw.T + 1e-9 * np.eye(rows)
    c = -(1.0 + Aw @ (Aw.T @ beta_v))
    # sum_j alpha_ij <= w_i
    Sum = np.kron(np.eye(n), np.ones((1, K - 1)))
    alpha = solve_qp(
        H, c, G=Sum, h=w, A=Ab.T, b=Ab.T @ beta_v, lb=np.zeros(rows), solver="quadprog"
    )
    if alpha is None:
        raise SolverError("reference dual QP failed")
    alpha = np.maximum(alpha, 0.0)
    W = (Aw.T @ (alpha - beta_v)).reshape(r, K - 1)
    # Intercept: min sum w_i xi_i + (Ab' beta) . b_hat s.t. xi_i >= 1 - mw_ij - (Ab b)_ij.
    mw = Aw @ W.ravel()
    E = np.kron(np.eye(n), np.ones((K - 1, 1)))
    A_ub = np.hstack([-Ab, -E])
    res = linprog(
        np.concatenate([Ab.T @ beta_v, w]),
        A_ub=A_ub,
        b_ub=-(1.0 - mw),
        bounds=[(None, None)] * (K - 1) + [(0, None)] * n,
        method="highs",
    )
    if not res.success:
        raise SolverError(f"reference intercept LP failed: {res.message}")
    b = res.x[: K - 1]
    alpha = alpha.reshape(n, K - 1)
    return SubproblemSolution(
        W=W,
        b=b,
        alpha=alpha,
        kkt_residual=kkt_residual(problem, W, b, alpha, w, beta),
        objective=subproblem_objective(problem, W, b, w, beta),
    )
