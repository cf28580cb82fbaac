"""One weighted SVM fit constrained not to cross a neighbouring boundary (Wu & Liu 2011).

METHODS section 3.  Write ``g = d * f`` with ``d = +1`` when the new weight is larger than
the previous one and ``d = -1`` when it is smaller, and ``g_prev = d * f_prev``.  The new
fit must satisfy ``g <= -eps`` on the part ``{g_prev <= 0}`` of the convex hull of the
training inputs; then ``f_prev(x) <= 0`` implies ``f(x) < 0`` (weight growing) or
``f_prev(x) > 0`` implies ``f(x) > 0`` (weight shrinking) everywhere in the hull, so every
point's signs stay monotone.  That set is a polytope; its vertices are

* the hull vertices with ``g_prev <= 0`` ("vertex" constraints), and
* the points where ``{g_prev = 0}`` cuts a hull edge ``(a, b)`` with ``g_prev(a) > 0 >=
  g_prev(b)``: ``z = x_a + t (x_b - x_a)``, ``t = g_prev(a) / (g_prev(a) - g_prev(b))``,
  where the constraint is ``(1 - t) g(x_a) + t g(x_b) <= -eps`` ("edge" constraints).

The paper states only the edge constraints, which keep the boundaries from meeting; the
vertex constraints (at most n) also stop a new positive region from appearing inside
the hull away from the old boundary, which the monotone sign ladder needs.  ``eps`` (default
1e-7, in decision units) is a safety margin so that solver round-off cannot undo the
strict inequality.

Three constraint sets, all with the same feasible set of fits:

``"hull"``
    edges of :func:`~wsvmgui.ladder.hull_edges.hull_edges` (linear kernel, low dimension);
``"pairs"``
    every pair ``(a, b)`` that the previous boundary separates (the kernel case, where the
    kernel rows of the training points are all hull vertices and every pair is an edge);
``"compact"``
    the same pairwise constraints in O(n) rows: dividing the pair constraint by
    ``g_prev(a) (-g_prev(b))`` gives ``u_a + w_b <= 0`` with ``u_a = (g_a + eps) / g_prev(a)``
    and ``w_b = (g_b + eps) / (-g_prev(b))``; all pairs hold iff ``max u + max w <= 0`` iff some
    scalar ``s`` has ``g_a + eps <= s g_prev(a)`` and ``g_b + eps <= s g_prev(b)``.  One extra
    variable replaces ``n_pos * n_neg`` rows exactly, so the guarantee at the training points
    and on all their pairwise segments is kept.

The fit is a QP in the primal, in the variables ``(u, b, xi, f[, s])`` with ``f = Phi u + b``
and penalty ``u' Pen u``: ``Phi = X``, ``Pen = I`` for the linear kernel; for a kernel either
``Phi = K``, ``Pen = K``, or (as the ladder does, several times faster) a pivoted Cholesky
factor ``K ~ L L'`` (:func:`pivoted_cholesky`, exact to 1e-12 relative) with ``Phi = L``,
``Pen = I``.  It is solved by Clarabel (:func:`wsvmgui.solvers.qp.solve_qp`) with sparse
constraint matrices,
and checked by its duality gap, computed here from the returned multipliers against the
full kernel matrix (the solver's status is not trusted), and by the constraint violation
at the returned fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..errors import InputError, SolverError
from ..solvers.qp import solve_qp
from .hull_edges import HullEdges

CONSTRAINT_MODES = ("hull", "pairs", "compact")
#: Safety margin of the non-crossing constraints, in decision-value units.
DEFAULT_EPS = 1e-7
#: Largest accepted relative duality gap of a constrained fit.
DEFAULT_GAP_TOL = 1e-5
#: Clarabel tolerances (tighter than its defaults of 1e-8).
CLARABEL_SETTINGS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 400}
#: Clarabel's linear solvers, fastest first: the supernodal "faer" factorisation is about
#: 6x faster than the default "qdldl" on the dense kernel blocks (n = 400, same answers);
#: "qdldl" is the fallback for builds without faer.
DIRECT_SOLVE_METHODS = ("faer", "qdldl")


@dataclass(frozen=True)
class CrossingConstraints:
    """Non-crossing constraints ``R g + r s <= -eps`` on the new fit ``g = d f``.

    Attributes
    ----------
    direction : int
        ``d``: +1 when the new weight is larger than the previous one, -1 when smaller.
    R : scipy.sparse.csr_matrix, shape (E, n)
        Rows over the training points' values (two entries for an edge, one for a vertex).
    r : ndarray, shape (E,)
        Coefficients of the extra scalar ``s`` (all zero unless ``mode == "compact"``).
    mode : str
        ``"hull"``, ``"pairs"`` or ``"compact"``.
    n_edges : int
        Number of edges/pairs the previous boundary cuts (before any compaction).
    n_vertex : int
        Number of vertex constraints.
    eps : float
    """

    direction: int
    R: sparse.csr_matrix
    r: np.ndarray
    mode: str
    n_edges: int
    n_vertex: int
    eps: float

    @property
    def n_rows(self) -> int:
        """Number of constraint rows handed to the solver."""
        return int(self.R.shape[0])

    @property
    def uses_s(self) -> bool:
        """Whether the rows involve the extra scalar ``s``."""
        return bool(np.any(self.r != 0))

    def satisfied_by(self, f: np.ndarray, slack: float = 0.0) -> tuple[bool, float]:
        """Whether training values ``f`` (n,) meet the constraints for some ``s``.

        Returns the verdict and the largest violation of ``R g (+ r s) <= -eps`` (0 when
        met), with ``s`` chosen optimally in the compact form; ``slack`` loosens the test.
        """
        g = self.direction * np.asarray(f, dtype=float)
        if self.n_rows == 0:
            return True, 0.0
        lhs = self.R @ g + self.eps
        if not self.uses_s:
            viol = float(max(lhs.max(), 0.0))
            return viol <= slack, viol
        s = best_s(lhs, self.r)
        viol = float(max((lhs + self.r * s).max(), 0.0))
        return viol <= slack, viol


def best_s(lhs: np.ndarray, r: np.ndarray) -> float:
    """The scalar ``s`` minimising ``max_e (lhs_e + r_e s)``.

    Rows with ``r > 0`` rise with ``s`` and rows with ``r < 0`` fall; the optimum is where
    the two upper envelopes cross (found by bisection).  Rows with ``r = 0`` do not move.
    """
    pos, neg = r > 0, r < 0
    if not pos.any() and not neg.any():
        return 0.0
    if not neg.any():
        return -1e12
    if not pos.any():
        return 1e12

    def rise_minus_fall(s: float) -> float:
        return float(np.max(lhs[pos] + r[pos] * s) - np.max(lhs[neg] + r[neg] * s))

    lo, hi = -1.0, 1.0
    while rise_minus_fall(lo) > 0 and lo > -1e15:
        lo *= 2.0
    while rise_minus_fall(hi) < 0 and hi < 1e15:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if rise_minus_fall(mid) > 0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-15 * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


def build_constraints(
    f_prev: np.ndarray,
    direction: int,
    mode: str,
    hull: HullEdges | None = None,
    max_rows: int = 2_000,
    eps: float = DEFAULT_EPS,
    vertex: bool = True,
) -> tuple[CrossingConstraints, str]:
    """Constraints that keep the new fit from crossing the previous one.

    Parameters
    ----------
    f_prev : ndarray, shape (n,)
        The previous fit's values at the training points.
    direction : {+1, -1}
        +1 when the new weight is larger than the previous one.
    mode : {"hull", "pairs", "compact"}
        Requested constraint set; "hull" needs ``hull``.
    hull : HullEdges, optional
    max_rows : int
        Largest number of explicit pair rows; above it "pairs" becomes "compact".
    eps : float
    vertex : bool
        Include the vertex constraints (default).  Without them the set is the paper's
        (the boundary alone), which keeps boundaries from meeting but lets a new
        positive region appear away from the old boundary.

    Returns
    -------
    constraints : CrossingConstraints
    note : str
        Empty, or why the requested mode was replaced (for the diagnostics).
    """
    if direction not in (1, -1):
        raise InputError("direction must be +1 or -1")
    if mode not in CONSTRAINT_MODES:
        raise InputError(f"unknown constraint mode {mode!r}; choose {', '.join(CONSTRAINT_MODES)}")
    g = direction * np.asarray(f_prev, dtype=float)
    n = g.size
    note = ""
    if mode == "hull" and hull is None:
        mode, note = "pairs", "no convex hull available: using all separated pairs"
    if mode == "hull":
        assert hull is not None
        vert = hull.vertices[(g[hull.vertices] <= 0) if vertex else (g[hull.vertices] == 0)]
        a, b = hull.edges[:, 0], hull.edges[:, 1]
        # Orient each cut edge as (positive end, non-positive end).
        cut_ab = (g[a] > 0) & (g[b] <= 0)
        cut_ba = (g[b] > 0) & (g[a] <= 0)
        pa = np.concatenate([a[cut_ab], b[cut_ba]])
        nb = np.concatenate([b[cut_ab], a[cut_ba]])
        keep = g[nb] < 0  # an end with g_prev = 0 is itself a vertex constraint
        pa, nb = pa[keep], nb[keep]
        return _explicit(g, pa, nb, vert, direction, "hull", eps), note
    pos = np.flatnonzero(g > 0)
    neg_all = np.flatnonzero(g <= 0)
    neg = np.flatnonzero(g < 0)
    vert = neg_all if vertex else np.flatnonzero(g == 0)
    n_pairs = pos.size * neg.size
    if mode == "pairs" and n_pairs + vert.size > max_rows:
        mode = "compact"
        note = (
            f"{n_pairs} separated pairs exceed max_constraints={max_rows}: using the exact "
            "compact form (one extra variable, O(n) rows; same feasible set)"
        )
    if mode == "pairs":
        pa = np.repeat(pos, neg.size)
        nb = np.tile(neg, pos.size)
        return _explicit(g, pa, nb, vert, direction, "pairs", eps), note
    # Compact: rows g_a - s g_prev(a) <= -eps (a positive), g_b - s g_prev(b) <= -eps and
    # g_b <= -eps (b non-positive).
    rows_idx, r = [], []
    if pos.size and neg.size:
        rows_idx += [pos, neg]
        r += [-g[pos], -g[neg]]
    rows_idx.append(vert)
    r.append(np.zeros(vert.size))
    idx = np.concatenate(rows_idx) if rows_idx else np.zeros(0, int)
    rr = np.concatenate(r) if r else np.zeros(0)
    R = sparse.csr_matrix((np.ones(idx.size), (np.arange(idx.size), idx)), shape=(idx.size, n))
    return CrossingConstraints(direction, R, rr, "compact", n_pairs, vert.size, eps), note


def _explicit(g, pa, nb, vert, direction, mode, eps) -> CrossingConstraints:
    n = g.size
    t = g[pa] / (g[pa] - g[nb])
    E, V = pa.size, vert.size
    rows = np.concatenate([np.arange(E), np.arange(E), E + np.arange(V)])
    cols = np.concatenate([pa, nb, vert])
    vals = np.concatenate([1.0 - t, t, np.ones(V)])
    R = sparse.csr_matrix((vals, (rows, cols)), shape=(E + V, n))
    return CrossingConstraints(direction, R, np.zeros(E + V), mode, E, V, eps)


@dataclass(frozen=True)
class ConstrainedFit:
    """A constrained weighted SVM.

    Attributes
    ----------
    coef : ndarray, shape (d,)
        ``w`` (linear, d = p) or kernel coefficients ``theta`` (kernel, d = n).
    intercept : float
    f_train : ndarray, shape (n,)
        Fit values at the training points, recomputed from ``coef`` and ``intercept``.
    objective : float
        ``sum_i S_i xi_i + n lambda J`` at the returned fit.
    gap : float
        Relative duality gap ``(primal - dual) / max(primal, 1)``.
    dual_residual : float
        Relative violation of the dual's equality constraints.
    violation : float
        Largest violation of the non-crossing rows at the returned fit (0 when met).
    n_active : int
        Constraint rows whose multiplier is non-negligible.
    """

    coef: np.ndarray
    intercept: float
    f_train: np.ndarray
    objective: float
    gap: float
    dual_residual: float
    violation: float
    n_active: int


def pivoted_cholesky(K: np.ndarray, rel_tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Greedy pivoted Cholesky factor of a kernel matrix.

    Stops when the largest remaining diagonal of ``K - L L'`` is below ``rel_tol`` times the
    largest diagonal of ``K``, so ``|K - L L'|`` is below that everywhere (K is PSD).

    Parameters
    ----------
    K : ndarray, shape (n, n)
    rel_tol : float

    Returns
    -------
    pivots : ndarray of int, shape (r,)
    L : ndarray, shape (n, r)
        ``L = K[:, pivots] R^{-1}`` with ``R'R = K[pivots][:, pivots]``; the span of the
        kernel functions at the pivots holds every fit the QP can return.
    """
    n = K.shape[0]
    diag = np.diag(K).astype(float).copy()
    stop = rel_tol * max(float(diag.max()), 1e-300)
    L = np.zeros((n, n))
    pivots: list[int] = []
    for j in range(n):
        i = int(np.argmax(diag))
        if diag[i] <= stop:
            break
        pivots.append(i)
        col = (K[:, i] - L[:, :j] @ L[i, :j]) / np.sqrt(diag[i])
        col[pivots[:-1]] = 0.0  # exact zeros above the diagonal of L[pivots]
        L[:, j] = col
        diag -= col**2
        diag[pivots] = 0.0
    return np.array(pivots, dtype=int), L[:, : len(pivots)]


def weighted_objective(
    f: np.ndarray, y: np.ndarray, S: np.ndarray, penalty: float, lam: float
) -> float:
    """``sum_i S_i (1 - y_i f_i)_+ + n lambda J`` with ``J = penalty``."""
    return float(S @ np.maximum(1.0 - y * f, 0.0) + y.size * lam * penalty)


def fit_constrained(
    Phi: np.ndarray,
    Pen: np.ndarray,
    K_lin: np.ndarray,
    y: np.ndarray,
    pi: float,
    lam: float,
    cons: CrossingConstraints,
    gap_tol: float = DEFAULT_GAP_TOL,
) -> ConstrainedFit:
    """Solve ``min sum_i S_i xi_i + n lambda u'Pen u`` under the hinge and non-crossing rows.

    Parameters
    ----------
    Phi : ndarray, shape (n, d)
        Training features: ``X`` (linear kernel), ``K``, or a factor ``L`` with ``K ~ L L'``.
    Pen : ndarray, shape (d, d)
        Penalty matrix: identity (``X`` or ``L``), or ``K``.
    K_lin : ndarray, shape (n, n)
        The kernel matrix (``X X'`` in the linear case), used by the duality-gap check.
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    pi : float
        Weight: class -1 gets ``pi``, class +1 gets ``1 - pi``.
    lam : float
    cons : CrossingConstraints
    gap_tol : float
        Largest accepted relative duality gap and violation.

    Returns
    -------
    ConstrainedFit

    Raises
    ------
    SolverError
        The solver failed, or its answer fails the duality-gap or feasibility check.
    """
    n, d = Phi.shape
    S = np.where(y > 0, 1.0 - pi, pi)
    where = f"non-crossing fit at pi={pi:.4g}, lambda={lam:.4g}"
    try:
        sol = solve_qp(
            *_qp_problem(Phi, Pen, y, S, lam, cons),
            settings=CLARABEL_SETTINGS,
            linear_solvers=DIRECT_SOLVE_METHODS,
        )
    except SolverError as exc:
        raise SolverError(f"{where}: {exc}") from exc
    x = sol.x
    u, beta = x[:d], float(x[d])
    f = Phi @ u + beta
    penalty = float(u @ Pen @ u)
    primal = weighted_objective(f, y, S, penalty, lam)
    gap, dual_res, n_active = _dual_check(sol.z, K_lin, y, S, lam, cons, primal)
    _, viol = cons.satisfied_by(f)
    if not (np.isfinite(gap) and abs(gap) <= gap_tol and dual_res <= gap_tol):
        raise SolverError(
            f"{where}: clarabel's answer fails the check (relative duality gap {gap:.3g}, "
            f"dual residual {dual_res:.3g}; tolerance {gap_tol:.3g})"
        )
    if viol > 0.5 * cons.eps:
        raise SolverError(
            f"{where}: clarabel's answer violates a non-crossing constraint by {viol:.3g} "
            f"(safety margin {cons.eps:.3g})"
        )
    return ConstrainedFit(
        coef=u,
        intercept=beta,
        f_train=f,
        objective=primal,
        gap=float(gap),
        dual_residual=float(dual_res),
        violation=float(viol),
        n_active=n_active,
    )


def _qp_problem(
    Phi: np.ndarray,
    Pen: np.ndarray,
    y: np.ndarray,
    S: np.ndarray,
    lam: float,
    cons: CrossingConstraints,
) -> tuple[
    sparse.csc_matrix, np.ndarray, sparse.csc_matrix, np.ndarray, sparse.csc_matrix, np.ndarray
]:
    """``(P, q, G, h, A, b)`` of :func:`fit_constrained`'s QP ``min 1/2 x'Px + q'x``,
    ``Gx <= h``, ``Ax = b`` in ``x = (u (d,), b, xi (n,), f (n,)[, s])``; ``S`` (n,) the
    points' weights."""
    n, d = Phi.shape
    use_s = cons.uses_s
    nv = d + 1 + n + n + int(use_s)
    ixi = d + 1
    # Objective 1/2 x'Px + q'x with P = 2 n lambda Pen on u (a tiny ridge keeps a
    # numerically semidefinite kernel matrix acceptable to the solver).
    Pu = 2.0 * n * lam * (Pen + 1e-10 * max(float(np.max(np.diag(Pen))), 1.0) * np.eye(d))
    P = sparse.block_diag(
        [sparse.csc_matrix(Pu), sparse.csc_matrix((nv - d, nv - d))], format="csc"
    )
    q = np.zeros(nv)
    q[ixi : ixi + n] = S
    # Equality f - Phi u - b 1 = 0.
    A = sparse.hstack(
        [
            sparse.csr_matrix(-Phi),
            sparse.csr_matrix(-np.ones((n, 1))),
            sparse.csr_matrix((n, n)),
            sparse.identity(n, format="csr"),
            sparse.csr_matrix((n, int(use_s))),
        ],
        format="csc",
    )
    b = np.zeros(n)
    # Inequalities: hinge -y f - xi <= -1; -xi <= 0; d R f + r s <= -eps.
    Iy = sparse.diags(-y)
    In = sparse.identity(n, format="csr")
    Z = sparse.csr_matrix
    hinge = sparse.hstack([Z((n, d + 1)), -In, Iy, Z((n, int(use_s)))])
    xipos = sparse.hstack([Z((n, d + 1)), -In, Z((n, n)), Z((n, int(use_s)))])
    blocks = [hinge, xipos]
    h_parts = [-np.ones(n), np.zeros(n)]
    E = cons.n_rows
    if E:
        rows = [Z((E, d + 1 + n)), cons.direction * cons.R]
        if use_s:
            rows.append(Z(cons.r[:, None]))
        blocks.append(sparse.hstack(rows))
        h_parts.append(np.full(E, -cons.eps))
    G = sparse.vstack(blocks, format="csc")
    h = np.concatenate(h_parts)
    return P, q, G, h, A, b


def _dual_check(
    z: np.ndarray,
    K_lin: np.ndarray,
    y: np.ndarray,
    S: np.ndarray,
    lam: float,
    cons: CrossingConstraints,
    primal: float,
) -> tuple[float, float, int]:
    """Relative duality gap, dual residual and number of active non-crossing rows of the
    QP's answer, from its inequality multipliers ``z`` (2 n + rows,)."""
    n = y.size
    E = cons.n_rows
    # Dual from the multipliers: a on the hinge rows, mu on the non-crossing rows;
    # nu = a y - d R'mu; dual = sum a + eps sum mu - nu'K nu / (4 n lambda).
    a = np.minimum(z[:n], S)
    mu = z[2 * n :]
    nu = a * y - (cons.direction * (cons.R.T @ mu) if E else 0.0)
    dual = float(a.sum() + cons.eps * mu.sum() - nu @ K_lin @ nu / (4.0 * n * lam))
    gap = (primal - dual) / max(primal, 1.0)
    scale = max(float(a.sum()), 1.0)
    dual_res = abs(float(nu.sum())) / scale
    if cons.uses_s:
        dual_res = max(dual_res, abs(float(cons.r @ mu)) / max(float(np.abs(cons.r) @ mu), scale))
    n_active = int(np.sum(mu > 1e-6 * max(float(S.max()), 1e-12))) if E else 0
    return float(gap), float(dual_res), n_active
