"""The exact solution path of the binary weighted SVM in the weight pi (Wang, Shen & Liu 2008).

METHODS sections 1 and 2.  For one kernel matrix ``K`` and penalty ``lambda`` (``C = 1/(2 n
lambda)``) the dual of::

    min_f (1/n) sum_i S(y_i) (1 - y_i f(x_i))_+ + lambda c'Kc,  S(+1) = 1 - pi, S(-1) = pi,

is solved for every ``pi`` in (0, 1) at once.  In the coefficients ``c = a * y`` the box
``0 <= a_i <= C S(y_i)`` reads ``c_i`` between 0 and ``u_i(pi) = C ((1 + y_i)/2 - pi)``,
and ``du_i / dpi = -C`` for both classes.  With the elbow ``E`` (``y f = 1``), left ``L``
(``y f < 1``, ``c = u``) and right ``R`` (``y f > 1``, ``c = 0``) sets fixed, the elbow
conditions ``f(x_i) = y_i`` (i in E) and ``sum c = 0`` are linear, so ``c_E`` and ``b``
move linearly in pi::

    K_EE dc_E + db 1 = C s_E,   1'dc_E = C |L|,    s = sum_{j in L} K(., x_j),

and ``df/dpi = K(., E) dc_E + db - C s``.  A breakpoint is the first ``pi`` at which an
elbow ``c_i`` reaches 0 or ``u_i`` (it leaves for R or L) or a point of L or R reaches
``y f = 1`` (it joins the elbow).

Algorithm (:func:`fit_path`)
----------------------------
* Exact duplicates (same label, same feature vector) are merged into one point with a
  multiplicity before tracing and split evenly afterwards; duplicates otherwise make the
  elbow system exactly singular.
* Start: libsvm at ``pi = 1/2`` at a tight tolerance (``START_TOL``), then *polished*:
  E/L/R are read off the approximate solution and the elbow system is solved exactly;
  points that violate their set's conditions are moved and the system re-solved until
  none do (two nearby start weights are tried if that fails).
* Trace up to ``pi = 1`` and down to ``pi = 0``.  At every breakpoint ``(c_E, b)`` and
  their slopes are solved afresh from the current sets (no integration drift); the
  decision values and slopes at all n points cost one (n, |E|) x (|E|, 2) product on a
  contiguous copy of ``K[E, :]``, and the sums ``s`` over L are kept as running vectors,
  so a step costs O(n |E| + |E|^2).
* The elbow system is kept as an updated inverse (:mod:`wsvmgui.ladder.path_linalg`),
  O(|E|^2) per point that enters or leaves.  The residuals of the elbow equations come
  free with the decision values at every step; above ``REFINE_TOL`` one step of
  iterative refinement is taken, and the inverse is recomputed from scratch (Cholesky)
  when that is not enough or after ``REFACTOR_EVERY`` updates.
* Singular and ill-conditioned systems: smooth kernels (RBF with sigma near the data's
  scale) are numerically low-rank, and near the ends of the path hundreds of points can
  sit on the elbow, far more than that rank.  The path is therefore traced exactly for
  the kernel ``K + eps I`` with ``eps = ridge * max K_ii`` (default ``1e-6``), whose
  elbow systems have eigenvalues ``>= eps``; by default only when tracing ``K`` itself
  has broken down (see ``ridge`` in :func:`fit_path`).  Proof that this stays a path of the
  original problem to within ``eps C``: at every pi the returned ``(a, b)`` satisfies the
  KKT conditions for ``K + eps I`` exactly (to ~1e-10); its margins under ``K`` differ by
  ``eps y_i c_i`` with ``|c_i| <= C``, feasibility (bounds, ``sum a y = 0``) does not
  involve K, so the KKT residual for ``K`` exceeds the one for ``K + eps I`` by at most
  ``eps C``, which the independent check against ``K`` confirms.  With ``ridge=0``, a
  point whose augmented feature vector depends on the elbow's (relative pivot below
  ``rank_tol``) is not added but *parked*: while the elbow is unchanged its margin cannot
  move, so it waits off the elbow, and its margin stays in the per-step KKT check.
* Exact duplicates are merged first in any case (see above).
* Empty elbow: with E empty, ``sum c = 0`` (all ``c`` at bounds, moving at rate
  ``-C |L|``) holds at one pi only, so pi cannot move; instead b moves at fixed pi (down
  when tracing up, up when tracing down) until a point reaches its margin and joins the
  elbow.  The path stores this as two breakpoints at the same pi with different
  intercepts: ``b`` is not unique there and the decision function jumps.
* Ends: near ``pi = 0`` every negative point is in L with ``c = -C pi -> 0`` and the
  positives' ``c`` vanish with them, so ``f -> +1``; near ``pi = 1``, ``f -> -1``.  There
  every margin and every dual shrinks like the distance to the end, so all of them
  "hit" together with the end; events within a relative ``END_TIE`` of the end, or closer
  than ``END_ABS`` to it, count as the end.  The last segment is extended to the end
  exactly (the motion is linear) and its end values are checked against ``c = 0,
  b = +-1``: the conventions ``f_0 > 0``, ``f_1 < 0`` hold by construction.
* Ties and degenerate points are processed one at a time by zero-length steps;
  consecutive zero-length steps are capped (cycling), as are the total steps.
* Every path is checked before it is returned: the KKT conditions at every point after
  every step (internally, against ``path_tol``), and independently with
  :func:`~wsvmgui.solvers.wsvm.kkt_residuals` (dense products with the original ``K``) at
  ``n_checks`` weights (fixed ones plus breakpoints) against ``kkt_tol``.  Any failure
  raises :class:`PathBreakdown` naming why, pi and lambda; callers fall back to the grid
  ladder.

Storage (:class:`WeightPath`)
-----------------------------
Breakpoints ``0 = p_0 <= p_1 <= ... <= p_{B-1} = 1`` (equal values only at intercept jumps),
intercepts ``b_k``, and per breakpoint the coefficients of the points on the elbow on
either side of it (``T_k``, values at ``p_k``) and the set changes at ``p_k``; every other
``c_j(p_k)`` follows from its set (``u_j(p_k)`` in L, 0 in R).  Size: ``2B`` floats,
``n`` set codes, about ``sum_k |T_k| ~ B * mean|E|`` (index, value) pairs and ``B`` events,
i.e. O(n + B (1 + mean|E|)), instead of the dense O(n B).

Prediction
----------
``f_pi(x)`` is linear in pi between breakpoints (``c`` and ``b`` are), so the estimate at
a point needs ``f`` at the B breakpoints.  They are computed in blocks of G = 32
consecutive breakpoints: the union V of the block's elbows and changed points is small
(about mean|E| + G), the points of L outside V contribute through two running kernel
sums, so a block costs one product of shape (G + 1, |V| + 3) x (|V| + 3, m) plus a gather
of |V| rows of the transposed cross kernel; only points whose sign changes inside a block
need its exact zeros.  Predicting m points costs about ``2 m B (mean|E| + G)`` flops
(against ``2 m n B`` for the naive product) and O(m (G + |V|)) memory beyond the cross
kernel: the estimate streams over the blocks and never holds the (m, B) matrix.  The
block plan is built once per path (O(B mean|E|)).  Measured (n = 5000, B = 12,534,
10,000 new points): see ``benchmarks/results/path_speed.md``.

Cost of fitting
---------------
About ``2.4 n`` breakpoints on smooth problems, each O(n |E| + |E|^2) arithmetic plus ~100
numpy calls; with small elbows the calls dominate (~0.3 ms a step on the benchmark
machine).  Measured (``benchmarks/results/path_speed.md``, RBF, C = 1, CPU seconds): the
path costs 1.2x the default grid ladder at n = 2000 and 0.4x at n = 5000, but 5-17x one
``SVC(probability=True)`` fit (n = 10,000 ... 500); the issue's target (no more than that
fit at n = 2000) is missed by about 10x.  A compiled inner loop would remove most of the
per-step overhead.  Where the probability is piecewise flat (hundreds of points on the
elbow near the ends) the O(|E|^2) updates dominate and the path is far slower than the
grid ladder (20x at n = 1000 on ``wang2008_ex1``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields, replace
from functools import cached_property

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from ..errors import Cancelled, InputError, SolverError
from ..progress import CancelCheck, ProgressCallback
from ..solvers.wsvm import (
    DEFAULT_KKT_TOL,
    kkt_residuals,
    penalty_to_C,
    sample_bounds,
)
from .grid import Ladder
from .path_linalg import DEFAULT_RANK_TOL, ElbowSystem
from .rules import RULES, LadderEstimate
from .weights import check_weights

#: Set codes: right of the elbow (c = 0), on the elbow, left of it (c at its bound).
R_SET, E_SET, L_SET = 0, 1, 2
#: Largest violation of the KKT conditions accepted inside the path (margin units).
DEFAULT_PATH_TOL = 1e-6
#: Events within this fraction of the distance to pi = 0 or 1 are ties with the end.
END_TIE = 1e-6
#: Within this distance of pi = 0 or 1 the rest of the path is one segment.
END_ABS = 1e-8
#: Largest deviation of the extrapolated end values from c = 0 (relative to C), b = +-1.
END_TOL = 1e-4
#: Elbow residual (margin units) above which one step of iterative refinement is taken.
REFINE_TOL = 1e-11
#: Residual after refinement above which the inverse is recomputed from scratch.
REFACTOR_TOL = 1e-9
#: Bordering updates after which the inverse is recomputed anyway.
REFACTOR_EVERY = 256
#: Default ridge, relative to the largest kernel diagonal entry (see :func:`fit_path`).
DEFAULT_RIDGE = 1e-6
#: Largest violation of an elbow dual's bounds, relative to C (see ``rank_tol``).
DUAL_TOL = 1e-3
#: Breakpoints per block when evaluating decision values.
BLOCK = 32
#: libsvm's stopping tolerance for the starting solution (polished afterwards).
START_TOL = 1e-8
#: Running-sum updates after which the sums over L are recomputed exactly.
SUM_REFRESH = 4096
#: Units of the progress callback: permille of (0, 1) covered.
PROGRESS_UNITS = 1000


class PathBreakdown(SolverError):
    """The solution path could not be traced or failed its checks; use the grid ladder."""


# ----------------------------------------------------------------------------------------
# Duplicates
# ----------------------------------------------------------------------------------------
def duplicate_groups(K: np.ndarray, y: np.ndarray, tol: float = 1e-13) -> np.ndarray:
    """Representative of each point: the first point with the same label and feature vector.

    Points ``i, j`` coincide when ``K_ii + K_jj - 2 K_ij <= tol (K_ii + K_jj)``.  Candidates
    are found by sorting a random projection of the kernel rows (O(n^2) once).

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)

    Returns
    -------
    ndarray of intp, shape (n,)
        ``rep[i] <= i``; ``rep[i] == i`` for the first point of each group.
    """
    n = y.size
    rep = np.arange(n)
    r = np.random.default_rng(20081).standard_normal(n)
    fp = K @ r + 1e3 * y * (np.abs(K).max() * np.abs(r).sum() + 1.0)
    order = np.lexsort((np.arange(n), fp))
    fs = fp[order]
    close = np.diff(fs) <= 1e-10 * (np.abs(fs[:-1]) + 1.0)
    if not close.any():
        return rep
    diag = np.diag(K)
    # Runs of consecutive close fingerprints; check pairs inside each run.
    starts = np.flatnonzero(np.diff(np.concatenate([[0], close.astype(int), [0]])) == 1)
    ends = np.flatnonzero(np.diff(np.concatenate([[0], close.astype(int), [0]])) == -1)
    for s, e in zip(starts, ends, strict=True):
        run = np.sort(order[s : e + 1])
        for a_pos, i in enumerate(run):
            if rep[i] != i:
                continue
            js = run[a_pos + 1 :]
            js = js[(rep[js] == js) & (y[js] == y[i])]
            if js.size == 0:
                continue
            d = diag[i] + diag[js] - 2.0 * K[i, js]
            same = js[d <= tol * (diag[i] + diag[js])]
            rep[same] = i
    return rep


# ----------------------------------------------------------------------------------------
# Tracing
# ----------------------------------------------------------------------------------------
@dataclass
class _Record:
    """One breakpoint while tracing: values of c at ``pi`` (in parts) and the set changes."""

    pi: float
    b: float
    parts: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    events: list[tuple[int, int, int]] = field(default_factory=list)  # (point, old, new)
    merged: bool = False

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices (sorted when merged) and values of the stored coefficients."""
        if not self.parts:
            return np.empty(0, np.intp), np.empty(0)
        idx = np.concatenate([p[0] for p in self.parts])
        val = np.concatenate([p[1] for p in self.parts])
        if self.merged:
            idx, first = np.unique(idx, return_index=True)
            val = val[first]
        return idx, val


class _Tracer:
    """State of the path at the current pi: sets, running sums, the elbow system.

    Works on the merged problem: point j stands for ``w[j]`` identical training points.
    ``side`` is +1 in R, -1 in L and 0 on the elbow (and for parked points, which wait
    for the elbow to change); ``sy = side * y``.  ``S[0]``, ``S[1]`` are the running sums
    ``sum_{j in L, y_j = +1} w_j K[:, j]`` and the same over the negatives.
    """

    def __init__(
        self,
        K: np.ndarray,
        y: np.ndarray,
        w: np.ndarray,
        C: float,
        lam: float,
        rank_tol: float,
        path_tol: float,
        ridge: float,
    ) -> None:
        n = y.size
        self.K, self.y, self.w, self.C, self.lam = K, y, w, C, lam
        self.ridge = ridge
        self.n = n
        self.pos = (y > 0).astype(float)
        self.path_tol = path_tol
        diag = np.diag(K)
        self.kmax = float(np.abs(diag).max())
        self.wratio = float(w.max() / w.min())
        self.wmax = float(w.max())
        kappa = float(diag.mean()) if diag.mean() > 0 else 1.0
        # Carried along by the elbow system: y, 1 / (w C), and 1 for the positives.
        self.aux = np.column_stack([y, 1.0 / (w * C), self.pos])
        self.sys = ElbowSystem(K, kappa, rank_tol, ridge=ridge, aux=self.aux)
        self.state = np.zeros(n, dtype=np.int8)
        self.side = np.ones(n)
        self.sy = y.copy()
        self.parked: list[int] = []
        self.S = np.zeros((2, n))
        self.n_pos = 0.0  # sum of w over L, y = +1
        self.n_neg = 0.0
        self.n_sum_updates = 0
        self.pi = 0.5
        self.b = float("nan")
        self.max_margin = 0.0
        self.max_dual = 0.0
        self.max_elbow = 0
        self.n_refactors = 0
        self.n_refines = 0

    # -- sets ----------------------------------------------------------------------------
    def set_state(self, state: np.ndarray, order: np.ndarray) -> list[int]:
        """Install sets; elbow points are added in ``order``; returns the refused ones (now R)."""
        self.state = state.astype(np.int8).copy()
        self.sys = ElbowSystem(
            self.K, self.sys.kappa, self.sys.rank_tol, ridge=self.ridge, aux=self.aux
        )
        refused = []
        for j in order:
            if self.state[j] == E_SET and not self.sys.add(int(j)):
                refused.append(int(j))
                self.state[j] = R_SET
        self.max_elbow = max(self.max_elbow, self.sys.m)
        self.side = np.where(self.state == R_SET, 1.0, np.where(self.state == L_SET, -1.0, 0.0))
        self.sy = self.side * self.y
        self.parked = []
        self.recompute_sums()
        return refused

    def park(self, j: int) -> None:
        """Keep point j (dependent on the elbow) out of the events until the elbow changes."""
        self.parked.append(j)
        self.side[j] = 0.0
        self.sy[j] = 0.0

    def unpark(self) -> None:
        for j in self.parked:
            s = 1.0 if self.state[j] == R_SET else -1.0
            self.side[j] = s
            self.sy[j] = s * self.y[j]
        self.parked = []

    def recompute_sums(self) -> None:
        inL = self.state == L_SET
        wp = np.where(inL, self.w * self.pos, 0.0)
        wn = np.where(inL, self.w * (1.0 - self.pos), 0.0)
        self.S = np.ascontiguousarray((self.K @ np.column_stack([wp, wn])).T)
        self.S[0] += self.ridge * wp
        self.S[1] += self.ridge * wn
        self.n_pos, self.n_neg = float(wp.sum()), float(wn.sum())
        self.n_sum_updates = 0

    def _l_change(self, j: int, sign: float) -> None:
        wj = sign * self.w[j]
        row = 0 if self.pos[j] else 1
        self.S[row] += wj * self.K[j]
        self.S[row, j] += wj * self.ridge
        if row == 0:
            self.n_pos += wj
        else:
            self.n_neg += wj
        self.n_sum_updates += 1

    def bound_value(self, j: int, pi: float) -> float:
        """``c_j`` at its upper bound: ``w_j C ((1 + y_j)/2 - pi)``."""
        return float(self.w[j] * self.C * (self.pos[j] - pi))

    def move(self, j: int, new: int) -> bool:
        """Move point j to set ``new``; False if the elbow refused it (dependent)."""
        old = int(self.state[j])
        if old == new:
            return True
        if new == E_SET:
            if not self.sys.add(j):
                return False
            self.max_elbow = max(self.max_elbow, self.sys.m)
        if old == E_SET:
            self.sys.remove(j)
        if old == L_SET:
            self._l_change(j, -1.0)
        if new == L_SET:
            self._l_change(j, 1.0)
        self.state[j] = new
        s = 1.0 if new == R_SET else (-1.0 if new == L_SET else 0.0)
        self.side[j] = s
        self.sy[j] = s * self.y[j]
        if self.parked:
            self.unpark()
        if self.n_sum_updates > SUM_REFRESH:  # after the state change, not before
            self.recompute_sums()
        return True

    # -- solution at the current pi ------------------------------------------------------
    def _rhs(self) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients of S in (f, h) and the equality right-hand sides (position, slope)."""
        C, pi = self.C, self.pi
        coefS = np.array([[C * (1.0 - pi), -C * pi], [-C, -C]])
        q = np.array(
            [-C * ((1.0 - pi) * self.n_pos - pi * self.n_neg), C * (self.n_pos + self.n_neg)]
        )
        return coefS, q

    def evaluate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Elbow coefficients, intercept and decision values at the current pi, checked.

        Returns
        -------
        V : ndarray, shape (m, 2)
            ``c_E`` and ``dc_E / dpi``.
        beta : ndarray, shape (2,)
            ``b`` and ``db / dpi`` (NaN slope with an empty elbow).
        FH : ndarray, shape (2, n)
            ``f`` and ``h = df / dpi`` at every point.

        The elbow equations' residuals (``f_E - y_E``, ``h_E`` and the equality) come with
        the decision values; above ``REFINE_TOL`` one step of iterative refinement is
        taken (after recomputing the inverse if it is above ``REFACTOR_TOL``); above
        ``REFACTOR_TOL`` after it, the inverse is recomputed and refinement repeated; a
        residual above ``path_tol / 10`` after that is a breakdown.
        """
        coefS, q = self._rhs()
        FH = coefS @ self.S
        m = self.sys.m
        if m == 0:
            FH[0] += self.b
            FH[1] = np.nan
            return np.empty((0, 2)), np.array([self.b, np.nan]), FH
        if self.sys.n_updates >= REFACTOR_EVERY:
            self._refactor()
        E = self.sys.members
        yE = self.sys.elbow_aux[:m, 0]
        rhs = -FH[:, E].T
        rhs[:, 0] += yE
        V, beta = self.sys.solve(rhs, q)
        FH += V.T @ self.sys.rows[:m]
        FH += beta[:, None]
        hscale = 1.0 + self.C * (self.n_pos + self.n_neg + self.wmax) * self.kmax
        for attempt in range(3):
            # (The equality 1'c_E = q holds to rounding by construction of the solve.)
            res = -FH[:, E].T
            res[:, 0] += yE
            err = np.abs(res).max(axis=0)
            resid = max(float(err[0]), float(err[1]) / hscale)
            if resid <= (REFINE_TOL, REFACTOR_TOL, 0.1 * self.path_tol)[attempt]:
                return V, beta, FH
            if attempt == 2:
                break
            if attempt == 1 or resid > REFACTOR_TOL:
                self._refactor()
            dV, dbeta = self.sys.solve(res, np.zeros(2))
            V += dV
            beta += dbeta
            FH += dV.T @ self.sys.rows[:m]
            FH += dbeta[:, None]
            self.n_refines += 1
        raise _breakdown(
            f"the elbow system ({m} points) is too ill-conditioned (residual {resid:.2g} after "
            "refinement and refactorising)",
            self.pi,
            self.lam,
        )

    def _refactor(self) -> None:
        if not self.sys.refactor():
            raise _breakdown(
                f"the elbow system ({self.sys.m} points) is singular", self.pi, self.lam
            )
        self.n_refactors += 1

    def dual_violation(self, cE: np.ndarray) -> float:
        """Largest violation of ``0 <= a_i <= U_i`` on the elbow, relative to ``w_i C``."""
        if not self.sys.m:
            return 0.0
        E = self.sys.members
        a = self.y[E] * cE / (self.w[E] * self.C)
        U = np.where(self.pos[E] > 0, 1.0 - self.pi, self.pi)
        return max(0.0, float((-a).max()), float((a - U).max()))

    def margin_violation(self, f: np.ndarray, gs: np.ndarray | None = None) -> float:
        """Largest margin violation of a point of L or R, parked ones included."""
        if gs is None:
            gs = self.sy * f - self.side
        viol = -float(gs.min())
        for j in self.parked:
            s = 1.0 if self.state[j] == R_SET else -1.0
            viol = max(viol, -s * (self.y[j] * f[j] - 1.0))
        return max(viol, 0.0)


def _step(tr: _Tracer, sgn: float, V: np.ndarray, FH: np.ndarray):
    """Next step and event, with the current KKT violations: ``(t, kind, j, margin, dual)``.

    ``kind`` is "end", "enter" (point j of L or R reaches its margin), "zero" (elbow point
    j reaches c = 0) or "upper" (elbow point j reaches its bound).
    """
    pi = tr.pi
    f, h = FH[0], FH[1]
    t_end = (1.0 - pi) if sgn > 0 else pi
    gs = tr.sy * f - tr.side  # side * (y f - 1) >= 0 off the elbow
    viol = tr.margin_violation(f, gs)
    v = tr.sy * h
    v *= -sgn  # rate at which gs decreases
    dtol = 1e-12 * (1.0 + tr.kmax * (tr.C * (tr.n_pos + tr.n_neg) + float(np.abs(V[:, 1]).sum())))
    np.maximum(gs, 0.0, out=gs)
    with np.errstate(divide="ignore", invalid="ignore"):
        gs /= v
    np.putmask(gs, v <= dtol, np.inf)
    j_pt = int(np.argmin(gs))
    best = (t_end, "end", -1)
    if gs[j_pt] < best[0]:
        best = (float(gs[j_pt]), "enter", j_pt)
    m = tr.sys.m
    dual = 0.0
    if m:
        aux = tr.sys.elbow_aux[:m]
        yE = aux[:, 0]
        AD = V * aux[:, 1:2]  # a y and da y relative to the largest bound w C
        AD *= yE[:, None]
        a, da = AD[:, 0], AD[:, 1]
        da *= sgn
        room = aux[:, 2] - yE * pi  # U / (w C): 1 - pi for positives, pi for negatives
        room -= a
        dual = max(0.0, -float(a.min()), -float(room.min()))
        # Gaps to the two bounds (a >= 0, room >= 0) and the rates at which they close.
        gap = np.empty((m, 2))
        gap[:, 0] = a
        gap[:, 1] = room
        rate = np.empty((m, 2))
        rate[:, 0] = -da
        rate[:, 1] = da + sgn * yE  # d(a - U)/dt, relative (dU/dpi = -C w y)
        etol = 1e-13 * (tr.n_pos + tr.n_neg + 1.0) * tr.wratio
        np.maximum(gap, 0.0, out=gap)
        with np.errstate(divide="ignore", invalid="ignore"):
            gap /= rate
        np.putmask(gap, rate <= etol, np.inf)
        k = int(np.argmin(gap))
        if gap.flat[k] < best[0]:
            best = (float(gap.flat[k]), "upper" if k % 2 else "zero", int(tr.sys.idx[k // 2]))
    # Near either end every margin and every dual vanishes like the distance to it, so
    # they all "hit" together with the end; ties with the end are the end.
    if best[1] != "end" and (best[0] >= t_end * (1.0 - END_TIE) or t_end <= END_ABS):
        best = (t_end, "end", -1)
    return (*best, viol, dual)


class _Progress:
    """Forwards the share of (0, 1) covered and polls cancellation."""

    def __init__(self, progress: ProgressCallback | None, should_cancel: CancelCheck | None):
        self.progress = progress
        self.should_cancel = should_cancel
        self.done = -1

    def __call__(self, covered: float) -> None:
        if self.should_cancel is not None and self.should_cancel():
            raise Cancelled("cancelled by the user")
        done = int(min(max(covered, 0.0), 1.0) * PROGRESS_UNITS)
        if self.progress is not None and done > self.done:  # monotone, even on a retry
            self.done = done
            self.progress(done, PROGRESS_UNITS, None)


def _breakdown(why: str, pi: float, lam: float) -> PathBreakdown:
    return PathBreakdown(f"solution path at pi={pi:.6g}, lambda={lam:.4g}: {why}")


def _trace(
    tr: _Tracer,
    sgn: float,
    max_steps: int,
    report: _Progress,
    covered_other: float,
    pi0: float,
) -> list[_Record]:
    """Trace from the current (polished) solution towards pi = 1 (sgn = +1) or 0 (-1)."""
    records: list[_Record] = []
    pending: _Record | None = _Record(tr.pi, np.nan)
    zero_run = 0
    for step in range(max_steps):
        if tr.sys.m == 0:
            pending = _jump(tr, sgn, records, pending)
        V, beta, FH = tr.evaluate()
        b, db = float(beta[0]), float(beta[1])
        tr.b = b
        t, kind, j, viol, dual = _step(tr, sgn, V, FH)
        tr.max_margin = max(tr.max_margin, viol)
        tr.max_dual = max(tr.max_dual, dual)
        if viol > tr.path_tol or dual > DUAL_TOL:
            raise _breakdown(
                f"KKT violation inside the path (margin {viol:.3g}, tolerance "
                f"{tr.path_tol:.3g}; dual bound {dual:.3g}, tolerance {DUAL_TOL:.3g})",
                tr.pi,
                tr.lam,
            )
        if pending is not None:
            pending.b = b
            pending.parts.insert(0, (tr.sys.members.copy(), V[:, 0].copy()))
            _push(records, pending)
            pending = None
        if kind == "end":
            end_pi = 1.0 if sgn > 0 else 0.0
            dpi = end_pi - tr.pi
            _push(records, _end_record(tr, end_pi, V[:, 0] + dpi * V[:, 1], b + dpi * db))
            return records
        new_pi = min(max(tr.pi + sgn * t, 0.0), 1.0)
        zero_run = zero_run + 1 if new_pi == tr.pi else 0
        if zero_run > 50 + 2 * tr.sys.m:
            raise _breakdown(
                f"{zero_run} consecutive zero-length steps (cycling among degenerate points)",
                tr.pi,
                tr.lam,
            )
        tr.pi = new_pi
        if step % 32 == 0:
            report(covered_other + abs(tr.pi - pi0))
        if kind == "enter":
            old = int(tr.state[j])
            if not tr.move(j, E_SET):
                tr.park(j)  # dependent on the elbow: its margin cannot move now
                continue
            pending = _Record(tr.pi, np.nan, events=[(j, old, E_SET)])
        else:
            new = R_SET if kind == "zero" else L_SET
            tr.move(j, new)
            value = 0.0 if new == R_SET else tr.bound_value(j, tr.pi)
            pending = _Record(
                tr.pi, np.nan, [(np.array([j]), np.array([value]))], [(j, E_SET, new)]
            )
        if tr.sys.m == 0:
            pending.b = b + sgn * t * db  # the intercept where the last elbow point left
    raise _breakdown(f"more than {max_steps} steps", tr.pi, tr.lam)


def _jump(tr: _Tracer, sgn: float, records: list[_Record], pending: _Record | None) -> _Record:
    """Empty elbow: move b at fixed pi until a point reaches its margin; it joins the elbow.

    Tracing up, ``sum c`` would fall below 0 (rate ``-C |L|``), so a point whose ``c`` can
    grow must join: a positive point of R (``f`` down to 1) or a negative point of L
    (``f`` down to -1): b decreases.  Tracing down, b increases symmetrically.
    """
    b0 = pending.b if pending is not None and np.isfinite(pending.b) else tr.b
    if pending is not None:
        pending.b = b0
        _push(records, pending)
    tr.b = b0
    tr.unpark()
    f = tr.evaluate()[2][0]
    # Candidates: R points with y = sgn and L points with y = -sgn (y * side == sgn); the
    # gap to their margin is side * (y f - 1) >= 0.
    gap = np.where(tr.sy == sgn, tr.sy * f - tr.side, np.inf)
    j = int(np.argmin(gap))
    if not np.isfinite(gap[j]):
        raise _breakdown("empty elbow and no point can join it", tr.pi, tr.lam)
    tr.b = b0 - sgn * max(float(gap[j]), 0.0)
    old = int(tr.state[j])
    tr.move(j, E_SET)
    return _Record(tr.pi, np.nan, events=[(j, old, E_SET)])


def _end_record(tr: _Tracer, end_pi: float, cE: np.ndarray, b: float) -> _Record:
    """The breakpoint at pi = 0 or 1, checked against the limits c = 0, b = +-1."""
    target = 1.0 if end_pi == 0.0 else -1.0
    # At pi = 0 the negatives' bound is 0 and L may hold only negatives (their c -> 0);
    # a positive in L would keep c = C w.  Symmetrically at pi = 1.
    stuck = tr.n_pos if end_pi == 0.0 else tr.n_neg
    scale = tr.C * float(tr.w.max())
    dev = max(float(np.abs(cE).max()) / scale if cE.size else 0.0, abs(b - target))
    if stuck > 0 or dev > END_TOL:
        raise _breakdown(
            f"the path does not reach its limit at pi={end_pi:g} (coefficient/intercept "
            f"deviation {dev:.3g}, {stuck:g} points of the heavy class left of the elbow)",
            tr.pi,
            tr.lam,
        )
    return _Record(end_pi, b, [(tr.sys.members.copy(), cE.copy())])


def _push(records: list[_Record], rec: _Record) -> None:
    """Append a breakpoint, merging it into the previous one when nothing moved between."""
    if records:
        last = records[-1]
        if rec.pi == last.pi and abs(rec.b - last.b) <= 1e-12 * (1.0 + abs(rec.b)):
            last.parts = rec.parts + last.parts  # the later values first (unique keeps them)
            last.events.extend(rec.events)
            last.merged = True
            return
    records.append(rec)


def _polish(tr: _Tracer, pi: float, alpha: np.ndarray, b: float, max_iter: int = 60) -> None:
    """Turn an approximate dual solution at ``pi`` into an exact one (sets and elbow system).

    The sets are read off ``alpha`` (E strictly inside its box); the elbow system is then
    solved exactly and points that violate their set's conditions are moved (all at once
    in the first rounds, then the worst one at a time) until none does.
    """
    y, w, C = tr.y, tr.w, tr.C
    U = w * C * np.where(y > 0, 1.0 - pi, pi)
    r = alpha / U
    state = np.where(r >= 1.0 - 1e-8, L_SET, np.where(r <= 1e-8, R_SET, E_SET)).astype(np.int8)
    order = np.argsort(-np.minimum(r, 1.0 - r), kind="stable")
    tr.pi, tr.b = pi, b
    for i in tr.set_state(state, order[state[order] == E_SET]):
        if r[i] > 0.5:
            tr.move(i, L_SET)
    tol = 1e-9
    for it in range(max_iter):
        V, beta, FH = tr.evaluate()
        cE, f = V[:, 0], FH[0]
        if tr.sys.m:
            tr.b = float(beta[0])
        margin = y * f - 1.0
        bad_pts = -(tr.side * margin)  # > 0: R below or L above its margin
        moves: list[tuple[float, int, int]] = []
        for i in np.flatnonzero(bad_pts > tol).tolist():
            moves.append((float(bad_pts[i]), i, E_SET))
        E = tr.sys.members.copy()
        if E.size:
            a = y[E] * cE
            scale = w[E] * C
            low, high = -a / scale, (a - U[E]) / scale
            for k in np.flatnonzero(low > tol):
                moves.append((float(low[k]), int(E[k]), R_SET))
            for k in np.flatnonzero(high > tol):
                moves.append((float(high[k]), int(E[k]), L_SET))
        elif abs(C * ((1.0 - pi) * tr.n_pos - pi * tr.n_neg)) > tol * C:
            # sum c = 0 fails with an empty elbow: the point nearest its margin must join.
            j = int(np.argmin(np.abs(margin)))
            moves.append((1.0, j, E_SET))
        if not moves:
            return
        moves.sort(key=lambda m: (-m[0], m[1]))
        if it >= 3:
            moves = moves[:1]
        for _, j, new in moves:
            tr.move(j, new)
    raise _breakdown(f"the start could not be polished in {max_iter} rounds", pi, tr.lam)


def _libsvm_start(
    K: np.ndarray, y: np.ndarray, upper: np.ndarray, C: float
) -> tuple[np.ndarray, float]:
    """libsvm at a tight tolerance (``START_TOL``), so that polishing has little to fix."""
    clf = SVC(kernel="precomputed", C=C, tol=START_TOL, cache_size=200, max_iter=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(K, y, sample_weight=upper / C)
    alpha = np.zeros(y.size)
    alpha[clf.support_] = np.abs(clf.dual_coef_[0])
    return np.minimum(alpha, upper), float(clf.intercept_[0])


def _start(
    K: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    C: float,
    lam: float,
    pi: float,
    rank_tol: float,
    path_tol: float,
    ridge: float,
) -> _Tracer:
    """A tracer holding the exact solution at ``pi``: libsvm, then :func:`_polish`."""
    tr = _Tracer(K, y, w, C, lam, rank_tol, path_tol, ridge)
    upper = w * C * np.where(y > 0, 1.0 - pi, pi)
    alpha, b = _libsvm_start(K, y, upper, C)
    _polish(tr, pi, alpha, b)
    V, _, FH = tr.evaluate()
    viol, dual = tr.margin_violation(FH[0]), tr.dual_violation(V[:, 0])
    if viol > path_tol or dual > DUAL_TOL:
        raise _breakdown(f"the polished start violates the KKT conditions by {viol:.3g}", pi, lam)
    return tr


def _clone(tr: _Tracer) -> _Tracer:
    """A second tracer at the same solution (for the other direction)."""
    other = _Tracer(tr.K, tr.y, tr.w, tr.C, tr.lam, tr.sys.rank_tol, tr.path_tol, tr.ridge)
    other.pi, other.b = tr.pi, tr.b
    refused = other.set_state(tr.state, tr.sys.members.copy())
    if refused:  # pragma: no cover - the same additions in the same order cannot differ
        raise _breakdown("could not rebuild the start", tr.pi, tr.lam)
    return other


@dataclass(frozen=True)
class _Flat:
    """Breakpoints in increasing pi as flat arrays (see :class:`WeightPath`)."""

    pis: np.ndarray
    intercepts: np.ndarray
    t_ptr: np.ndarray
    t_idx: np.ndarray
    t_val: np.ndarray
    ev_ptr: np.ndarray
    ev_idx: np.ndarray
    ev_state: np.ndarray
    state0: np.ndarray


def _assemble(down: list[_Record], up: list[_Record], state_at_zero: np.ndarray) -> _Flat:
    """Join the two traced directions into one list of breakpoints in increasing pi.

    ``down`` runs from the start to pi = 0; its events (old -> new going down) are
    reversed.  Its first record and ``up``'s first record are the same start and merge.
    """
    recs: list[tuple[float, float, np.ndarray, np.ndarray, list[tuple[int, int]]]] = []
    for rec in reversed(down[1:]):
        idx, val = rec.values()
        recs.append((rec.pi, rec.b, idx, val, [(j, o) for j, o, _ in reversed(rec.events)]))
    d0, u0 = down[0], up[0]
    start = _Record(u0.pi, u0.b, u0.parts + d0.parts, merged=True)
    idx, val = start.values()
    start_events = [(j, o) for j, o, _ in reversed(d0.events)] + [(j, n) for j, _, n in u0.events]
    recs.append((u0.pi, u0.b, idx, val, start_events))
    for rec in up[1:]:
        idx, val = rec.values()
        recs.append((rec.pi, rec.b, idx, val, [(j, n) for j, _, n in rec.events]))
    t_counts = np.array([r[2].size for r in recs])
    ev_counts = np.array([len(r[4]) for r in recs])
    evs = [e for r in recs for e in r[4]]
    return _Flat(
        pis=np.array([r[0] for r in recs]),
        intercepts=np.array([r[1] for r in recs]),
        t_ptr=np.concatenate([[0], np.cumsum(t_counts)]),
        t_idx=np.concatenate([r[2] for r in recs]).astype(np.intp),
        t_val=np.concatenate([r[3] for r in recs]).astype(float),
        ev_ptr=np.concatenate([[0], np.cumsum(ev_counts)]),
        ev_idx=np.array([e[0] for e in evs], dtype=np.intp),
        ev_state=np.array([e[1] for e in evs], dtype=np.int8),
        state0=state_at_zero.astype(np.int8).copy(),
    )


def _expand(flat: _Flat, rep: np.ndarray, reps: np.ndarray, mult: np.ndarray) -> _Flat:
    """From merged duplicates back to the original points (coefficients split evenly)."""
    n = rep.size
    group = np.searchsorted(reps, rep)  # merged index of every original point
    order = np.argsort(group, kind="stable")
    gptr = np.concatenate([[0], np.cumsum(mult)])

    def spread(idx: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        counts = mult[idx]
        cum = np.concatenate([[0], np.cumsum(counts)])
        offsets = np.arange(cum[-1]) - np.repeat(cum[:-1], counts)
        members = order[np.repeat(gptr[idx], counts) + offsets]
        return members, np.repeat(np.arange(idx.size), counts), cum[ptr]

    t_idx, t_from, t_ptr = spread(flat.t_idx, flat.t_ptr)
    ev_idx, ev_from, ev_ptr = spread(flat.ev_idx, flat.ev_ptr)
    del n
    return _Flat(
        pis=flat.pis,
        intercepts=flat.intercepts,
        t_ptr=t_ptr,
        t_idx=t_idx,
        t_val=(flat.t_val / mult[flat.t_idx])[t_from],
        ev_ptr=ev_ptr,
        ev_idx=ev_idx,
        ev_state=flat.ev_state[ev_from],
        state0=flat.state0[group],
    )


def _check_inputs(K: np.ndarray, y: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, float]:
    y = np.asarray(y, dtype=float).ravel()
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise InputError("weighted SVM labels must be -1 and +1")
    if not ((y > 0).any() and (y < 0).any()):
        raise InputError("the weighted SVM needs points of both classes")
    K = np.ascontiguousarray(K, dtype=np.float64)
    if K.shape != (y.size, y.size):
        raise InputError(f"kernel matrix has shape {K.shape}, expected ({y.size}, {y.size})")
    if not np.all(np.isfinite(K)):
        raise InputError("kernel matrix has NaN or infinite entries")
    return K, y, penalty_to_C(lam, y.size)


def fit_path(
    K: np.ndarray,
    y: np.ndarray,
    lam: float,
    *,
    kkt_tol: float = DEFAULT_KKT_TOL,
    path_tol: float = DEFAULT_PATH_TOL,
    n_checks: int = 16,
    max_steps: int | None = None,
    start: float = 0.5,
    rank_tol: float = DEFAULT_RANK_TOL,
    ridge: float | None = None,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
) -> WeightPath:
    """The exact solution path of the weighted SVM over pi in (0, 1), checked.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        Kernel matrix of the training inputs (symmetric positive semi-definite).
    y : ndarray, shape (n,)
        Labels in {-1, +1}, both present.
    lam : float
        Penalty lambda > 0; ``C = 1 / (2 n lambda)``.
    kkt_tol : float
        Largest KKT residual (:func:`~wsvmgui.solvers.wsvm.kkt_residuals`, margin units)
        accepted at the independent checkpoints.
    path_tol : float
        Largest KKT violation accepted at any step inside the path.
    n_checks : int
        Number of independent checkpoints: seven fixed weights (0.01 ... 0.99) and the
        rest spread over the breakpoints.  Costs ``2 n_checks n^2`` flops.
    max_steps : int, optional
        Most steps per direction (default ``50 n + 1000``).
    start : float
        Weight of the starting solution (libsvm, then polished); two nearby weights are
        tried if polishing fails there.
    rank_tol : float
        Relative pivot below which a point counts as dependent on the elbow.
    ridge : float or None
        ``None`` (default): trace the exact path of ``K``; if that breaks down (elbow
        systems too ill-conditioned, typically a smooth kernel with a large elbow), trace
        again for ``K + eps I`` with ``eps = DEFAULT_RIDGE * max K_ii``.  A number: use
        ``eps = ridge * max K_ii`` directly (0 for the exact path only).  The KKT residual
        for ``K`` of a path traced with ``eps`` is at most ``eps C`` above the exact one
        (module docstring); the independent check always uses ``K``.
    progress : callable, optional
        ``progress(done, 1000, None)``, ``done`` the permille of (0, 1) covered so far.
    should_cancel : callable, optional
        Polled every 32 steps; True raises :class:`~wsvmgui.errors.Cancelled`.

    Returns
    -------
    WeightPath

    Raises
    ------
    PathBreakdown
        Too many steps, cycling, an elbow system that cannot be solved accurately, a
        failed limit at pi = 0 or 1, or a KKT check that fails; the message names why,
        pi and lambda.
    """
    K, y, C = _check_inputs(K, y, lam)
    n = y.size
    report = _Progress(progress, should_cancel)
    report(0.0)
    rep = duplicate_groups(K, y)
    reps = np.flatnonzero(rep == np.arange(n))
    mult = np.bincount(rep, minlength=n)[reps]
    Ku = K if reps.size == n else np.ascontiguousarray(K[np.ix_(reps, reps)])
    yu, w = y[reps], mult.astype(float)
    steps = int(max_steps) if max_steps is not None else 50 * n + 1000
    prob = _Problem(Ku, yu, w, C, float(lam), float(start), steps, rank_tol, path_tol, report)
    scale = float(np.abs(np.diag(K)).max())
    if ridge is not None:
        flat, info = _trace_both(prob, float(ridge) * scale)
    else:
        try:
            flat, info = _trace_both(prob, 0.0)
        except PathBreakdown as exact_failure:
            try:
                flat, info = _trace_both(prob, DEFAULT_RIDGE * scale)
            except PathBreakdown as exc:
                raise PathBreakdown(f"{exc} (exact path failed first: {exact_failure})") from exc
    if reps.size < n:
        flat = _expand(flat, rep, reps, mult)
    path = WeightPath(
        lam=float(lam),
        C=C,
        y=y.copy(),
        **{f.name: getattr(flat, f.name) for f in fields(flat)},
        kkt_residual=float("nan"),
        n_duplicates=int(n - reps.size),
        path_residual=info.path_residual,
        dual_residual=info.dual_residual,
        max_elbow=info.max_elbow,
        ridge=info.ridge,
    )
    resid = _verify(path, K, n_checks, kkt_tol)
    report(1.0)
    return replace(path, kkt_residual=resid)


@dataclass(frozen=True)
class _Problem:
    """The merged problem and the tracing settings shared by both attempts (exact, ridge)."""

    K: np.ndarray
    y: np.ndarray
    w: np.ndarray
    C: float
    lam: float
    start: float
    steps: int
    rank_tol: float
    path_tol: float
    report: _Progress


@dataclass(frozen=True)
class _TraceInfo:
    """Diagnostics of a traced path (see :class:`WeightPath`)."""

    path_residual: float
    dual_residual: float
    max_elbow: int
    ridge: float


def _trace_both(prob: _Problem, eps: float) -> tuple[_Flat, _TraceInfo]:
    """Start (libsvm, polished) and trace both directions with ridge ``eps``."""
    error: PathBreakdown | None = None
    for pi0 in (prob.start, prob.start - 0.0371, prob.start + 0.0433):
        try:
            tr_up = _start(
                prob.K, prob.y, prob.w, prob.C, prob.lam, pi0, prob.rank_tol, prob.path_tol, eps
            )
            break
        except PathBreakdown as exc:
            error = exc
    else:
        assert error is not None
        raise error
    tr_down = _clone(tr_up)
    up = _trace(tr_up, 1.0, prob.steps, prob.report, 0.0, pi0)
    down = _trace(tr_down, -1.0, prob.steps, prob.report, 1.0 - pi0, pi0)
    info = _TraceInfo(
        path_residual=max(tr_up.max_margin, tr_down.max_margin),
        dual_residual=max(tr_up.max_dual, tr_down.max_dual),
        max_elbow=max(tr_up.max_elbow, tr_down.max_elbow),
        ridge=eps,
    )
    return _assemble(down, up, tr_down.state), info


def _verify(path: WeightPath, K: np.ndarray, n_checks: int, kkt_tol: float) -> float:
    """Independent KKT check at fixed weights and at breakpoints; returns the largest residual."""
    fixed = np.array([0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99])
    inner = path.pis[(path.pis > 0) & (path.pis < 1)]
    n_bp = max(int(n_checks) - fixed.size, 0)
    if inner.size and n_bp:
        picks = inner[np.unique(np.linspace(0, inner.size - 1, n_bp).round().astype(int))]
    else:
        picks = np.empty(0)
    pis = np.unique(np.concatenate([fixed, picks]))
    coef, b = path.coef_matrix(pis)
    y = path.y
    upper = np.vstack([sample_bounds(y, p, path.C) for p in pis])
    resid = kkt_residuals(K, y, coef * y, b, upper)
    worst = int(np.argmax(resid))
    if not np.isfinite(resid[worst]) or resid[worst] > kkt_tol:
        raise _breakdown(
            f"KKT check failed: residual {resid[worst]:.3g} > tolerance {kkt_tol:.3g}",
            float(pis[worst]),
            path.lam,
        )
    return float(resid.max())


# ----------------------------------------------------------------------------------------
# The path
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Block:
    """Breakpoints ``k0..k1`` for evaluation: points V and two coefficient matrices.

    ``Wt`` (k1 - k0 + 1, |V| + 3): row k holds ``c_V(p_k)``, then the factors of the two
    running L sums (``C (1 - p_k)``, ``-C p_k``) and ``b_k``.  ``Lind`` (|V|, 4): the
    indicators of the positive / negative L points of V at ``k0`` and their changes to
    ``k1``.
    """

    k0: int
    k1: int
    V: np.ndarray
    Wt: np.ndarray
    Lind: np.ndarray


@dataclass(frozen=True)
class WeightPath:
    """The exact solution path of the weighted SVM in pi for one kernel and lambda.

    Breakpoints ``p_0 = 0 <= p_1 <= ... <= p_{B-1} = 1``; between consecutive breakpoints
    the coefficients ``c`` and the intercept are linear in pi.  Two breakpoints share a
    pi where the elbow was empty and the intercept jumps; values *at* such a pi are the
    right limits.

    Storage is O(n + B (1 + mean|E|)): per breakpoint its pi and intercept, the
    coefficients of the points on the elbow on either side (``t_*``, CSR by breakpoint) and
    the set changes there (``ev_*``); every other coefficient follows from the point's
    set (``C ((1 + y)/2 - pi)`` left of the elbow, 0 right of it).

    Attributes
    ----------
    lam, C : float
        Penalty and ``1 / (2 n lambda)``.
    y : ndarray, shape (n,)
        Training labels in {-1, +1}.
    pis, intercepts : ndarray, shape (B,)
    t_ptr : ndarray, shape (B + 1,)
    t_idx, t_val : ndarray, shape (nnz,)
        Coefficients ``c_j(p_k)`` of the points ``t_idx[t_ptr[k]:t_ptr[k+1]]``.
    ev_ptr : ndarray, shape (B + 1,)
    ev_idx, ev_state : ndarray, shape (n_events,)
        At breakpoint k the points ``ev_idx[ev_ptr[k]:ev_ptr[k+1]]`` move to the sets
        ``ev_state`` (0 right, 1 elbow, 2 left), in order.
    state0 : ndarray of int8, shape (n,)
        Sets before the events at breakpoint 0.
    kkt_residual : float
        Largest residual of the independent KKT check.
    path_residual : float
        Largest margin violation (margin units) at any step while tracing.
    dual_residual : float
        Largest violation of an elbow dual's bounds (relative to C) while tracing.
    max_elbow : int
        Largest elbow size while tracing.
    n_duplicates : int
        Training points merged into an identical one while tracing.
    ridge : float
        ``eps`` of the kernel ``K + eps I`` the path was traced for (0: exact for ``K``).
    """

    lam: float
    C: float
    y: np.ndarray
    pis: np.ndarray
    intercepts: np.ndarray
    t_ptr: np.ndarray
    t_idx: np.ndarray
    t_val: np.ndarray
    ev_ptr: np.ndarray
    ev_idx: np.ndarray
    ev_state: np.ndarray
    state0: np.ndarray
    kkt_residual: float
    path_residual: float
    dual_residual: float
    max_elbow: int
    n_duplicates: int = 0
    ridge: float = 0.0

    # -- basic facts ---------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of training points."""
        return int(self.y.size)

    @property
    def n_breakpoints(self) -> int:
        """B, including pi = 0, pi = 1 and repeated pis at intercept jumps."""
        return int(self.pis.size)

    @property
    def nbytes(self) -> int:
        """Bytes held by the path's arrays."""
        arrays = (getattr(self, f.name) for f in fields(self))
        return int(sum(a.nbytes for a in arrays if isinstance(a, np.ndarray)))

    def _bound(self, pi: float) -> np.ndarray:
        return self.C * ((self.y > 0) - pi)

    # -- coefficients --------------------------------------------------------------------
    def _coef_at_breakpoints(self, ks: np.ndarray) -> np.ndarray:
        """Full coefficient vectors at breakpoints ``ks`` (sorted); shape (len(ks), n)."""
        out = np.empty((ks.size, self.n))
        state = self.state0.copy()
        want = np.zeros(self.n_breakpoints, dtype=bool)
        want[ks] = True
        row = 0
        for k in range(int(ks[-1]) + 1 if ks.size else 0):
            a, b = self.ev_ptr[k], self.ev_ptr[k + 1]
            if b > a:
                state[self.ev_idx[a:b]] = self.ev_state[a:b]
            while want[k] and row < ks.size and ks[row] == k:
                c = np.where(state == L_SET, self._bound(self.pis[k]), 0.0)
                a, b = self.t_ptr[k], self.t_ptr[k + 1]
                c[self.t_idx[a:b]] = self.t_val[a:b]
                out[row] = c
                row += 1
        return out

    def coef_matrix(self, pis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients and intercepts at arbitrary weights (exact: linear interpolation).

        Parameters
        ----------
        pis : ndarray, shape (Q,)
            Weights in [0, 1], any order.

        Returns
        -------
        coef : ndarray, shape (Q, n)
        intercept : ndarray, shape (Q,)
        """
        q = np.asarray(pis, dtype=float).ravel()
        if q.size and (not np.all(np.isfinite(q)) or q.min() < 0 or q.max() > 1):
            raise InputError("weights must lie in [0, 1]")
        B = self.n_breakpoints
        k = np.clip(np.searchsorted(self.pis, q, side="right") - 1, 0, B - 2)
        p0, p1 = self.pis[k], self.pis[k + 1]
        t = np.where(p1 > p0, (q - p0) / np.where(p1 > p0, p1 - p0, 1.0), 0.0)
        t = np.clip(t, 0.0, 1.0)
        ks = np.unique(np.concatenate([k, k + 1]))
        vals = self._coef_at_breakpoints(ks)
        lo, hi = vals[np.searchsorted(ks, k)], vals[np.searchsorted(ks, k + 1)]
        coef = (1.0 - t)[:, None] * lo + t[:, None] * hi
        b = (1.0 - t) * self.intercepts[k] + t * self.intercepts[k + 1]
        return coef, b

    def coef_at(self, pi: float) -> np.ndarray:
        """Kernel expansion coefficients ``c = a * y`` at weight ``pi``; shape (n,)."""
        return self.coef_matrix(np.array([pi]))[0][0]

    def intercept_at(self, pi: float) -> float:
        """Intercept at weight ``pi`` (the right limit where it jumps)."""
        return float(self.coef_matrix(np.array([pi]))[1][0])

    def decision_at(self, K_cross: np.ndarray, pis: np.ndarray) -> np.ndarray:
        """Decision values at arbitrary weights.

        Parameters
        ----------
        K_cross : ndarray, shape (m, n)
        pis : ndarray, shape (Q,)

        Returns
        -------
        ndarray, shape (m, Q)
        """
        coef, b = self.coef_matrix(pis)
        return np.asarray(K_cross) @ coef.T + b[None, :]

    def to_ladder(self, weights: np.ndarray, K: np.ndarray | None = None) -> Ladder:
        """The grid :class:`~wsvmgui.ladder.grid.Ladder` at ``weights`` (shape (M - 1,)).

        Its ``kkt_residual`` is computed against ``K`` (n, n) when given, otherwise it is
        the path's checked residual for every weight.
        """
        w = check_weights(weights)
        coef, b = self.coef_matrix(w)
        if K is not None:
            upper = np.vstack([sample_bounds(self.y, p, self.C) for p in w])
            resid = kkt_residuals(np.asarray(K, dtype=float), self.y, coef * self.y, b, upper)
        else:
            resid = np.full(w.size, self.kkt_residual)
        return Ladder(weights=w, lam=self.lam, coef=coef, intercept=b, kkt_residual=resid)

    def compress(self) -> tuple[WeightPath, np.ndarray]:
        """Drop training points whose coefficient is 0 along the whole path.

        Returns
        -------
        WeightPath
            The path over the kept points (``K_cross`` then has only their columns).
        ndarray of intp
            Indices of the kept training points.
        """
        used = self.state0 == L_SET
        used[self.t_idx[self.t_val != 0]] = True
        used[self.ev_idx[self.ev_state == L_SET]] = True
        keep = np.flatnonzero(used)
        remap = np.full(self.n, -1, dtype=np.intp)
        remap[keep] = np.arange(keep.size)
        B = self.n_breakpoints

        def sub(ptr: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            bp = np.repeat(np.arange(B), np.diff(ptr))
            mask = used[idx]
            counts = np.bincount(bp[mask], minlength=B)
            return np.concatenate([[0], np.cumsum(counts)]), mask

        t_ptr, tm = sub(self.t_ptr, self.t_idx)
        ev_ptr, em = sub(self.ev_ptr, self.ev_idx)
        path = replace(
            self,
            y=self.y[keep],
            t_ptr=t_ptr,
            t_idx=remap[self.t_idx[tm]],
            t_val=self.t_val[tm],
            ev_ptr=ev_ptr,
            ev_idx=remap[self.ev_idx[em]],
            ev_state=self.ev_state[em],
            state0=self.state0[keep],
        )
        return path, keep

    # -- decision values at the breakpoints, in blocks -------------------------------------
    @cached_property
    def _blocks(self) -> list[_Block]:
        blocks: list[_Block] = []
        B = self.n_breakpoints
        pos = self.y > 0
        state = self.state0.copy()
        a, b = self.ev_ptr[0], self.ev_ptr[1]
        state[self.ev_idx[a:b]] = self.ev_state[a:b]
        k0 = 0
        while k0 < B - 1:
            k1 = min(k0 + BLOCK, B - 1)
            V = np.unique(
                np.concatenate(
                    [
                        self.t_idx[self.t_ptr[k0] : self.t_ptr[k1 + 1]],
                        self.ev_idx[self.ev_ptr[k0] : self.ev_ptr[k1 + 1]],
                    ]
                )
            )
            nb = k1 - k0 + 1
            Wt = np.empty((nb, V.size + 3))
            stV = state[V].copy()
            posV = pos[V]
            Lind = np.zeros((V.size, 4))
            Lind[:, 0] = (stV == L_SET) & posV
            Lind[:, 1] = (stV == L_SET) & ~posV
            for k in range(k0, k1 + 1):
                if k > k0:
                    a, b = self.ev_ptr[k], self.ev_ptr[k + 1]
                    if b > a:
                        stV[np.searchsorted(V, self.ev_idx[a:b])] = self.ev_state[a:b]
                        state[self.ev_idx[a:b]] = self.ev_state[a:b]
                row = Wt[k - k0]
                row[: V.size] = np.where(stV == L_SET, self.C * (posV - self.pis[k]), 0.0)
                a, b = self.t_ptr[k], self.t_ptr[k + 1]
                row[np.searchsorted(V, self.t_idx[a:b])] = self.t_val[a:b]
            p = self.pis[k0 : k1 + 1]
            Wt[:, V.size] = self.C * (1.0 - p)
            Wt[:, V.size + 1] = -self.C * p
            Wt[:, V.size + 2] = self.intercepts[k0 : k1 + 1]
            L1 = stV == L_SET
            Lind[:, 2] = (L1 & posV).astype(float) - Lind[:, 0]
            Lind[:, 3] = (L1 & ~posV).astype(float) - Lind[:, 1]
            blocks.append(_Block(k0, k1, V, Wt, Lind))
            k0 = k1
        return blocks

    def _initial_left(self) -> np.ndarray:
        """Indicators (n, 2) of positive / negative L points after the events at k = 0."""
        state = self.state0.copy()
        a, b = self.ev_ptr[0], self.ev_ptr[1]
        state[self.ev_idx[a:b]] = self.ev_state[a:b]
        inL = state == L_SET
        pos = self.y > 0
        return np.column_stack([inL & pos, inL & ~pos]).astype(float)

    def _iter_blocks(self, KT: np.ndarray):
        """Yield ``(k0, F)``, F of shape (k1 - k0 + 1, m): decision values at breakpoints.

        ``KT`` is the transposed cross kernel, shape (n, m), C-contiguous.  Per block: the
        rows ``KT[V]``, the two running L sums (less V's share) and a row of ones are
        stacked and multiplied by ``Wt`` in one product.
        """
        S = self._initial_left().T @ KT  # (2, m): kernel sums over L
        m = KT.shape[1]
        for blk in self._blocks:
            nv = blk.V.size
            buf = np.empty((nv + 3, m))
            np.take(KT, blk.V, axis=0, out=buf[:nv])
            corr = blk.Lind.T @ buf[:nv]
            np.subtract(S, corr[:2], out=buf[nv : nv + 2])
            buf[nv + 2] = 1.0
            S += corr[2:]
            yield blk.k0, blk.Wt @ buf

    def _chunks(self, K_cross: np.ndarray):
        K_cross = np.asarray(K_cross, dtype=float)
        if K_cross.ndim != 2 or K_cross.shape[1] != self.n:
            raise InputError(f"cross kernel has shape {K_cross.shape}, expected (m, {self.n})")
        rows = int(np.clip(8_000_000 // max(self.n, 1), 256, 8192))
        for r0 in range(0, K_cross.shape[0], rows):
            yield r0, np.ascontiguousarray(K_cross[r0 : r0 + rows].T)

    def decision(self, K_cross: np.ndarray) -> np.ndarray:
        """Decision values at every breakpoint.

        Parameters
        ----------
        K_cross : ndarray, shape (m, n)
            Kernel between new points and the training points.

        Returns
        -------
        ndarray, shape (m, B)
            Memory ``8 m B`` bytes; :meth:`estimate` streams instead.
        """
        m = np.shape(K_cross)[0]
        out = np.empty((m, self.n_breakpoints))
        for r0, KT in self._chunks(K_cross):
            for k0, F in self._iter_blocks(KT):
                out[r0 : r0 + KT.shape[1], k0 : k0 + F.shape[0]] = F.T
        return out

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """Probabilities ``P(Y = +1 | x)`` and brackets from the path.

        With ``f_pi(x)`` piecewise linear in pi (exact zeros on every segment):

        * ``lo`` = first zero (inf of pi with ``f <= 0``), ``hi`` = last zero (sup of pi
          with ``f > 0``); ``monotone`` when ``lo == hi`` (one sign change, + then -);
        * ``rule="count"``: ``p`` = Lebesgue measure of ``{pi in (0, 1): f_pi(x) > 0}``,
          which lies in ``[lo, hi]`` and equals the crossing when monotone;
        * ``rule="extreme"``: ``p = (lo + hi) / 2``.

        Parameters
        ----------
        K_cross : ndarray, shape (m, n)
        rule : {"count", "extreme"}

        Returns
        -------
        LadderEstimate
            Arrays of shape (m,).  Cost about ``2 m B (mean|E| + 32)`` flops.
        """
        if rule not in RULES:
            raise InputError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")
        m = np.shape(K_cross)[0]
        parts = [self._estimate_chunk(KT) for _, KT in self._chunks(K_cross)]
        if parts:
            p, lo, hi, mono = (np.concatenate(x) for x in zip(*parts, strict=True))
        else:
            p = lo = hi = np.empty(0)
            mono = np.empty(0, dtype=bool)
        if rule == "extreme":
            p = 0.5 * (lo + hi)
            p[mono] = lo[mono]
        assert p.size == m
        return LadderEstimate(p=p, lo=lo, hi=hi, monotone=mono)

    def _estimate_chunk(self, KT: np.ndarray):
        """Count measure, first and last zero of f at the points of ``KT`` (n, m).

        Per block only the points whose sign changes inside it need the exact zeros;
        the others add the block's length to the measure when positive throughout.
        """
        m = KT.shape[1]
        measure = np.zeros(m)
        lo = np.full(m, np.nan)
        hi = np.full(m, np.nan)
        first_np = np.full(m, -1)
        last_pos = np.full(m, -1)
        for k0, F in self._iter_blocks(KT):
            nb = F.shape[0]
            p = self.pis[k0 : k0 + nb]
            pos = F > 0
            npos = np.count_nonzero(pos, axis=0)
            allpos = npos == nb
            measure += (p[-1] - p[0]) * allpos
            np.putmask(last_pos, allpos, k0 + nb - 1)  # its zero lies further on
            mixed = np.flatnonzero(npos % nb != 0)
            if mixed.size:
                self._mixed(
                    F[:, mixed], pos[:, mixed], p, k0, mixed, measure, lo, hi, first_np, last_pos
                )
        mono = last_pos < first_np
        out = np.clip(measure, lo, hi)
        out[mono] = lo[mono]
        hi[mono] = lo[mono]
        return out, lo, hi, mono

    def _mixed(self, F, pos, p, k0, cols, measure, lo, hi, first_np, last_pos) -> None:
        """Exact zeros on a block for the points ``cols`` whose sign changes in it."""
        nb = F.shape[0]
        P = np.maximum(F, 0.0)
        A = np.abs(F)
        num = P[:-1] + P[1:]
        den = A[:-1] + A[1:]
        measure[cols] += np.diff(p) @ (num / np.where(den > 0, den, 1.0))
        need = first_np[cols] < 0
        if need.any():
            kk = np.argmax(~pos[:, need], axis=0)  # every mixed column has a non-positive
            sub = np.flatnonzero(need)
            lo[cols[sub]] = self._crossing(F, p, kk - 1, sub)
            first_np[cols[sub]] = k0 + kk
        kl = nb - 1 - np.argmax(pos[::-1], axis=0)  # last positive (exists: mixed)
        done = kl < nb - 1
        hi[cols[done]] = self._crossing(F, p, kl[done], np.flatnonzero(done))
        last_pos[cols] = k0 + kl

    @staticmethod
    def _crossing(F: np.ndarray, p: np.ndarray, s: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Zero of f on segment ``s`` (``f(p_s) > 0 >= f(p_{s+1})``); ``p_0`` where s < 0."""
        out = np.empty(cols.size)
        first = s < 0
        out[first] = p[0]
        s, c = s[~first], cols[~first]
        f0, f1 = F[s, c], F[s + 1, c]
        out[~first] = p[s] + (p[s + 1] - p[s]) * (f0 / (f0 - f1))
        return out
