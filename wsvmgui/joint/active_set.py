"""A solver specialised to the convex subproblem of the truncated-hinge DCA, and DCA on it.

The subproblem (:mod:`.subproblem`) is a QP whose dual has per-point constraints
(``alpha_ij >= 0``, ``sum_j alpha_ij <= w_i``) and ``K - 1`` equalities (the intercept).
Its answers along the simplex grid, and along the DCA steps at one grid weight, differ
by small changes of the data ``(w, beta)``, so each answer starts from its neighbour's:

* **path** (the default start): the exact answer is followed from the neighbour's data
  to the new data on a fixed face, changing the face by one condition at each event
  (a parametric active-set method, :func:`._active_set_kernel.homotopy`), after a few
  primal-dual active-set steps that often land on the new face at once;
* a cold start (the first grid weight of a chain) runs a few sweeps of coordinate
  descent on the dual (the intercept by the method of multipliers), then a path from
  nearby data that the sweeps' point solves exactly (its margins as targets).

Every answer is checked: its KKT residual (the same quantity as
:func:`.subproblem.kkt_residual`) must be at most ``kkt_tol``, and an answer that misses
it is solved again by the general QP (:func:`.subproblem.solve_subproblem` with
Clarabel), the reference the tests compare against.  The linear and the kernel case are
the same code (features ``Z`` of :mod:`.features`; the kernel ``Z Z'`` is formed once
per problem when it is small enough).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import SolverError
from . import _active_set_kernel as _k
from .dca import KINK_TOL, DCAResult
from .subproblem import ACTIVE_SET, JointProblem, SubproblemSolution, solve_subproblem

__all__ = ["ACTIVE_SET", "Answer", "Arrays", "dca", "fit_point", "solve", "truncated_objective"]

#: Residual below which an answer counts as exact (a warm start for the path).
EXACT_TOL = 1e-7
#: Primal-dual active-set steps tried before the path (they often finish at once).
PATH_ROUNDS = 10
#: Active-set steps after each round of coordinate sweeps.
ROUNDS = 8
#: Most coordinate sweeps of one solve, and of its first round (doubled each round).
MAX_SWEEPS = 3000
FIRST_SWEEPS = 30
#: Kernel matrices ``Z Z'`` are formed when they hold at most this many entries.
GRAM_MAX = 4_000_000
#: Backend of the fallback (and of the reference) solve.
FALLBACK = "clarabel"


@dataclass
class Arrays:
    """The problem's constant arrays, in the layouts of the compiled kernel.

    Attributes
    ----------
    Z : ndarray, shape (n, r)
    zz : ndarray, shape (n,)
        Squared row norms of ``Z``.
    Dm : ndarray, shape (n (K-1), K-1)
        Pair vectors ``D_ij`` (row ``i (K-1) + j``).
    Gk : ndarray, shape (n, n) or (0, 0)
        ``Z Z'`` when small enough.
    rho : float
        Multiplier-method parameter (and the intercept's weight in the face systems).
    mu : float
        Ridge of the face systems.
    """

    Z: np.ndarray
    zz: np.ndarray
    Dm: np.ndarray
    Gk: np.ndarray
    rho: float
    mu: float

    @classmethod
    def of(cls, problem: JointProblem) -> Arrays:
        Z = np.ascontiguousarray(problem.Z, dtype=float)
        n = Z.shape[0]
        zz = np.einsum("ij,ij->i", Z, Z)
        Dm = np.ascontiguousarray(problem.D.reshape(n * (problem.K - 1), problem.K - 1))
        Gk = Z @ Z.T if n * n <= GRAM_MAX else np.zeros((0, 0))
        # rho: the features' scale (1 where they vanish, e.g. a single repeated input)
        rho = float(zz.mean()) if zz.size and zz.mean() > 1e-8 else 1.0
        scale = max(float(zz.max(initial=0.0)), rho)
        return cls(Z, zz, Dm, np.ascontiguousarray(Gk), rho, 1e-11 * scale)


@dataclass
class Answer:
    """One subproblem's answer with what a warm start needs.

    Attributes
    ----------
    alpha : ndarray, shape (n, K-1)
    W : ndarray, shape (r, K-1)
    b : ndarray, shape (K-1,)
    m : ndarray, shape (n, K-1)
        Pair margins of ``(W, b)``.
    bnd, anc, act : face (int8 (n,), int64 (n,), int8 (n, K-1)); see the kernel.
    w : ndarray, shape (n,)
    beta : ndarray, shape (n, K-1)
        The data it answers.
    kkt_residual : float
    objective : float
    gap : float
        Primal minus dual objective.
    exact : bool
        Residual at most :data:`EXACT_TOL` (then a path can start from it).
    """

    alpha: np.ndarray
    W: np.ndarray
    b: np.ndarray
    m: np.ndarray
    bnd: np.ndarray
    anc: np.ndarray
    act: np.ndarray
    w: np.ndarray
    beta: np.ndarray
    kkt_residual: float
    objective: float
    gap: float
    exact: bool
    stats: dict = field(default_factory=dict)

    @property
    def wsq(self) -> float:
        return float(np.sum(self.W * self.W))


def _prm(arrays: Arrays, n: int, start: int) -> np.ndarray:
    prm = np.zeros(_k.P_SIZE)
    prm[_k.P_RHO] = arrays.rho
    prm[_k.P_EPS_CD] = 1e-1
    prm[_k.P_EPS_B] = 1e-1
    prm[_k.P_MAX_EPOCHS] = MAX_SWEEPS
    prm[_k.P_TOL] = EXACT_TOL
    prm[_k.P_START] = start
    prm[_k.P_ROUNDS] = ROUNDS
    prm[_k.P_MU] = arrays.mu
    prm[_k.P_MAX_EVENTS] = 20 * n + 100
    prm[_k.P_PATH_ROUNDS] = PATH_ROUNDS
    prm[_k.P_SWEEPS] = FIRST_SWEEPS
    return prm


def solve(
    problem: JointProblem,
    arrays: Arrays,
    w: np.ndarray,
    beta: np.ndarray,
    start: Answer | None = None,
    kkt_tol: float = 1e-3,
) -> Answer:
    """Solve the subproblem for the data ``(w, beta)``, from a neighbouring answer.

    Parameters
    ----------
    problem : JointProblem
    arrays : Arrays
        ``Arrays.of(problem)``.
    w : ndarray, shape (n,)
        Per-point weights ``C pi_{y_i}``.
    beta : ndarray, shape (n, K-1)
        DCA slopes.
    start : Answer or None
        A neighbouring answer (another ``w`` and/or ``beta``); None starts cold.
    kkt_tol : float
        Largest accepted KKT residual; an answer above it is solved again by the general
        QP, and if that also misses it SolverError is raised.

    Returns
    -------
    Answer
    """
    n, k1 = problem.n, problem.K - 1
    w = np.ascontiguousarray(w, dtype=float)
    beta = np.ascontiguousarray(beta, dtype=float)
    out = np.zeros(_k.O_SIZE)
    W = np.zeros((problem.r, k1))
    s = np.zeros(k1)
    if start is None:
        alpha = np.zeros((n, k1))
        b = np.zeros(k1)
        m = np.zeros((n, k1))
        bnd = np.zeros(n, np.int8)
        anc = np.zeros(n, np.int64)
        act = np.zeros((n, k1), np.int8)
        w0, beta0 = w.copy(), beta.copy()
        mode = _k.START_COLD
    else:
        alpha, b, m = start.alpha.copy(), start.b.copy(), start.m.copy()
        bnd, anc, act = start.bnd.copy(), start.anc.copy(), start.act.copy()
        w0, beta0 = start.w.copy(), start.beta.copy()
        if start.exact:
            mode = _k.START_PATH
        else:
            alpha *= (w / np.maximum(start.w, 1e-300))[:, None]
            mode = _k.START_FACE
    prm = _prm(arrays, n, mode)
    _k.solve(arrays.Z, arrays.Gk, arrays.zz, arrays.Dm, w, alpha, beta, W, s, b, m, bnd, anc,
             act, w0, beta0, prm, out)  # fmt: skip
    stats = {
        "sweeps": int(out[_k.O_EPOCHS]),
        "events": int(out[_k.O_EVENTS]),
        "faces": int(out[_k.O_FACES]),
        "fallback": False,
    }
    resid = float(out[_k.O_KKT])
    if not (np.isfinite(resid) and resid <= kkt_tol):
        return _fallback(problem, arrays, w, beta, kkt_tol, stats)
    return Answer(alpha, W, b, m, bnd, anc, act, w, beta, resid, float(out[_k.O_OBJ]),
                  float(out[_k.O_GAP]), resid <= EXACT_TOL, stats)  # fmt: skip


def _fallback(problem, arrays, w, beta, kkt_tol, stats) -> Answer:
    """The general QP's answer (Clarabel) for data the compiled solver did not settle."""
    n, k1 = problem.n, problem.K - 1
    trunc = beta.max(axis=1) > 0
    jc = np.argmax(beta, axis=1)
    sol: SubproblemSolution = solve_subproblem(problem, w, trunc, jc, FALLBACK, kkt_tol)
    alpha = np.ascontiguousarray(sol.alpha)
    m = np.ascontiguousarray(problem.margins(sol.W, sol.b))
    bnd = np.zeros(n, np.int8)
    anc = np.zeros(n, np.int64)
    act = np.zeros((n, k1), np.int8)
    _k.identify(alpha, m, w, bnd, anc, act, False)
    stats = {**stats, "fallback": True}
    return Answer(alpha, np.ascontiguousarray(sol.W), sol.b.copy(), m, bnd, anc, act, w,
                  beta, sol.kkt_residual, sol.objective, np.nan, False, stats)  # fmt: skip


def truncated_objective(answer: Answer, w: np.ndarray, s: float) -> float:
    """``Q = 1/2 ||W||^2 + sum_i w_i H_T(u_i)`` of an answer's fit at the weights ``w``."""
    return float(_k.truncated_objective(answer.m, w, answer.W, s))


@dataclass
class _Counts:
    n_qp: int = 0
    worst: float = 0.0
    fallbacks: int = 0


def _solve_counted(problem, arrays, w, beta, start, kkt_tol, counts: _Counts) -> Answer:
    a = solve(problem, arrays, w, beta, start, kkt_tol)
    counts.n_qp += 1
    counts.worst = max(counts.worst, a.kkt_residual)
    counts.fallbacks += int(a.stats["fallback"])
    return a


def dca(
    problem: JointProblem,
    arrays: Arrays,
    w: np.ndarray,
    s: float,
    start: Answer,
    kkt_tol: float,
    max_iter: int,
    counts: _Counts,
) -> tuple[Answer, tuple[float, ...], bool, int]:
    """DCA (:func:`.dca.fit_truncated`) from the fit of ``start``, warm-started from it.

    The first convex step linearises at ``start``'s fit; each step's answer starts from
    the previous one (a path in ``beta``; in ``w`` too for the first step when ``start``
    answers another weight).

    Returns
    -------
    answer : Answer
        The last step's answer.
    objectives : tuple of float
        ``Q`` at the start and after every step.
    converged : bool
    n_truncated : int
    """
    n, k1 = problem.n, problem.K - 1
    q0 = truncated_objective(start, w, s)
    objectives = [q0]
    trunc = np.zeros(n, np.int8)
    jc = np.zeros(n, np.int64)
    beta = np.zeros((n, k1))
    _k.truncated_set(start.m, s, trunc, jc, False, KINK_TOL, w, beta, trunc, jc)
    tol = 1e-7 * max(abs(q0), 1.0)
    current = start
    converged = False
    for _ in range(max_iter):
        ans = _solve_counted(problem, arrays, w, beta, current, kkt_tol, counts)
        obj = truncated_objective(ans, w, s)
        slack = tol + (max(ans.gap, 0.0) if np.isfinite(ans.gap) else 0.0)
        if obj > objectives[-1] + slack:
            raise SolverError(
                f"DCA objective rose from {objectives[-1]:.8g} to {obj:.8g}; the subproblem "
                "answer is not accurate enough"
            )
        objectives.append(obj)
        current = ans
        new_trunc = np.empty(n, np.int8)
        new_jc = np.empty(n, np.int64)
        new_beta = np.empty((n, k1))
        changed = _k.truncated_set(
            ans.m, s, trunc, jc, True, KINK_TOL, w, new_beta, new_trunc, new_jc
        )
        if changed == 0:
            converged = True
            break
        trunc, jc, beta = new_trunc, new_jc, new_beta
    return current, tuple(objectives), converged, int(trunc.sum())


@dataclass
class PointFit:
    """One grid weight's fit (:func:`fit_point`) and the answers the next weight starts from."""

    result: DCAResult
    answer: Answer
    hinge: Answer
    restarted: bool
    fallbacks: int


def fit_point(
    problem: JointProblem,
    arrays: Arrays,
    w: np.ndarray,
    s: float,
    neighbour: Answer | None,
    hinge_seed: Answer | None,
    kkt_tol: float,
    max_iter: int,
) -> PointFit:
    """DCA at one grid weight, guarded by the untruncated fit (:func:`.dca.fit_truncated_warm`).

    The untruncated fit at this weight is solved first (from ``hinge_seed``, the
    previous weight's); DCA starts from whichever of it and ``neighbour`` (the previous
    weight's DCA answer) has the lower truncated objective; a neighbour-started DCA that
    ends above the untruncated fit's objective is rerun from the untruncated fit and the
    lower result kept.  ``s = -inf`` (the plain hinge) is the untruncated fit alone.
    """
    n, k1 = problem.n, problem.K - 1
    counts = _Counts()
    h = _solve_counted(problem, arrays, w, np.zeros((n, k1)), hinge_seed, kkt_tol, counts)
    q_h = truncated_objective(h, w, s)
    if not np.isfinite(s):
        res = DCAResult(h.W, h.b, (q_h,), counts.n_qp, counts.worst, True, 0)
        return PointFit(res, h, h, False, counts.fallbacks)
    use_nb = neighbour is not None and truncated_objective(neighbour, w, s) < q_h
    first = neighbour if use_nb else h
    assert first is not None
    ans, objs, conv, ntr = dca(problem, arrays, w, s, first, kkt_tol, max_iter, counts)
    restarted = False
    tol = 1e-7 * max(abs(q_h), 1.0)
    if use_nb and objs[-1] > q_h + tol:
        restarted = True
        alt = dca(problem, arrays, w, s, h, kkt_tol, max_iter, counts)
        if alt[1][-1] < objs[-1]:
            ans, objs, conv, ntr = alt
    res = DCAResult(ans.W, ans.b, objs, counts.n_qp, counts.worst, conv, ntr)
    return PointFit(res, ans, h, restarted, counts.fallbacks)
