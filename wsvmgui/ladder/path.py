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
  decision values and slopes at all n points cost one pass over the rows ``K[E, :]``,
  and the sums ``s`` over L are kept as running vectors, so a step costs
  O(n |E| + |E|^2).  The steps run compiled (:mod:`wsvmgui.ladder._path_kernel`, numba,
  without the GIL); Python sets up, starts, polishes, refactorises, checks and stores.
* The elbow system is kept as an updated Cholesky factor
  (:mod:`wsvmgui.ladder.path_linalg`), O(|E|^2) per point that enters or leaves, whose
  solves are backward stable.  The residuals of the elbow equations come free with the
  decision values at every step; above ``REFINE_TOL`` one step of iterative refinement
  is taken, and the factor is recomputed from scratch when that is not enough or after
  ``REFACTOR_EVERY`` updates.
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
block plan is built once per path (O(B mean|E|)); plan and per-block reduction are
compiled (:mod:`wsvmgui.ladder._path_predict`), the products go through BLAS.  Measured
(n = 5000, 10,000 new points): ``benchmarks/results/path_speed.md``.

Cost of fitting
---------------
About ``2.4 n`` breakpoints on smooth problems, each O(n |E| + |E|^2) arithmetic
(:attr:`WeightPath.work` counts it), compiled: ~30 us a step at n = 2000.  Beyond the
steps: the libsvm start, the duplicate check (one n x n product) and the independent
KKT check (``2 n_checks n^2`` flops).  The first path in a process loads the compiled
kernels (~1 s: numba and its cache); the first ever compiles them (~20 s, cached on
disk; see :mod:`wsvmgui.ladder._path_kernel` for where).  Measured, with the grid ladder
and ``SVC(probability=True)`` side by side: ``benchmarks/results/path_speed.md``.  Where
the probability is piecewise flat, hundreds of points sit on the elbow near the ends
(smooth kernels; the ridge retrace) and the path costs 1-2x the grid ladder
(``wang2008_ex1``, n = 1000-2000, growing with n); ``max_elbow`` /
:func:`auto_max_elbow` stop such paths early so that callers can take the grid instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from types import ModuleType

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
from .path_linalg import DEFAULT_RANK_TOL, elbow_cholesky
from .rules import RULES, LadderEstimate
from .weights import check_weights

#: Set codes: right of the elbow (c = 0), on the elbow, left of it (c at its bound)
#: (the same in :mod:`wsvmgui.ladder._path_kernel`).
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
#: Steps of the compiled loop between returns to Python (progress, cancellation).
YIELD_EVERY = 64
#: Elbow size (fraction of n) past which the grid ladder is expected cheaper (auto_max_elbow).
AUTO_ELBOW_FRACTION = 0.2
#: Units of the progress callback: permille of (0, 1) covered.
PROGRESS_UNITS = 1000


class PathBreakdown(SolverError):
    """The solution path could not be traced or failed its checks; use the grid ladder."""


class PathTooCostly(PathBreakdown):
    """The elbow grew beyond ``max_elbow`` (:func:`fit_path`): the grid is expected cheaper."""


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
    # |K_ij| <= max K_ii for a PSD kernel, so the offset keeps the labels apart (the
    # exact test below checks labels anyway).
    fp = K @ r + 1e3 * y * (float(np.abs(np.diag(K)).max()) * np.abs(r).sum() + 1.0)
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
def _kernel() -> ModuleType:
    """The compiled kernel, imported (and numba with it) on the first path only."""
    from . import _path_kernel

    return _path_kernel


@dataclass(frozen=True)
class _Records:
    """Breakpoints of one direction in tracing order (see :mod:`._path_kernel`).

    ``pis``, ``bs`` (R,); values ``t_idx``, ``t_val`` of record k at
    ``t_ptr[k]:t_ptr[k+1]`` (a point may repeat in a merged record: the last value holds);
    events ``ev`` (Q, 3) (point, old set, new set) at ``ev_ptr[k]:ev_ptr[k+1]``.
    """

    pis: np.ndarray
    bs: np.ndarray
    t_ptr: np.ndarray
    t_idx: np.ndarray
    t_val: np.ndarray
    ev_ptr: np.ndarray
    ev: np.ndarray


class _Tracer:
    """State of the path at the current pi: sets, running sums, the elbow system.

    Works on the merged problem: point j stands for ``w[j]`` identical training points.
    The state is a set of arrays (layouts in :mod:`wsvmgui.ladder._path_kernel`) that the
    compiled kernel advances; this class sets them up, grows them, refactorises the
    elbow system and turns the kernel's statuses into breakdowns.
    """

    idx: np.ndarray  # (cap,) elbow points in factorisation order
    R: np.ndarray  # (cap, cap) upper Cholesky factor of the elbow matrix
    V: np.ndarray  # (cap, 2) c_E and dc_E / dpi

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
        pk = _kernel()
        self.pk = pk
        n = y.size
        self.K, self.y, self.w, self.C, self.lam = K, y, w, C, lam
        self.n = n
        self.ridge = ridge
        self.path_tol = path_tol
        self.rank_tol = rank_tol
        diag = np.diag(K)
        self.kappa = float(diag.mean()) if diag.mean() > 0 else 1.0
        self.pt = np.ascontiguousarray(np.vstack([y, w, (y > 0).astype(float), 1.0 / (w * C)]))
        prm = np.zeros(pk.P_SIZE)
        prm[pk.P_C], prm[pk.P_RIDGE], prm[pk.P_KAPPA] = C, ridge, self.kappa
        prm[pk.P_RANK_TOL], prm[pk.P_PATH_TOL] = rank_tol, path_tol
        prm[pk.P_KMAX] = float(np.abs(diag).max())
        prm[pk.P_WRATIO], prm[pk.P_WMAX] = float(w.max() / w.min()), float(w.max())
        prm[pk.P_SGN], prm[pk.P_MAX_STEPS] = 1.0, 0.0
        prm[pk.P_REFINE_TOL], prm[pk.P_REFACTOR_TOL] = REFINE_TOL, REFACTOR_TOL
        prm[pk.P_REFACTOR_EVERY], prm[pk.P_SUM_REFRESH] = REFACTOR_EVERY, SUM_REFRESH
        prm[pk.P_DUAL_TOL], prm[pk.P_END_TIE], prm[pk.P_END_ABS] = DUAL_TOL, END_TIE, END_ABS
        prm[pk.P_YIELD] = YIELD_EVERY
        prm[pk.P_MAX_ELBOW] = np.inf
        self.prm = prm
        self.fs = np.zeros(pk.F_SIZE)
        self.fs[pk.F_PI], self.fs[pk.F_B] = 0.5, np.nan
        self.iv = np.zeros(pk.I_SIZE, dtype=np.int64)
        self.state = np.zeros(n, dtype=np.int8)
        self.sd = np.ascontiguousarray(np.vstack([np.ones(n), y]))  # side, side * y
        self.parked = np.empty(n, dtype=np.int64)
        self.S = np.zeros((2, n))
        self.FH = np.zeros((2, n))
        self.where = np.full(n, -1, dtype=np.int64)
        self._alloc_elbow(64)
        self.n_refactors = 0

    # -- scalars ---------------------------------------------------------------------------
    @property
    def pi(self) -> float:
        return float(self.fs[self.pk.F_PI])

    @pi.setter
    def pi(self, value: float) -> None:
        self.fs[self.pk.F_PI] = value

    @property
    def b(self) -> float:
        return float(self.fs[self.pk.F_B])

    @b.setter
    def b(self, value: float) -> None:
        self.fs[self.pk.F_B] = value

    @property
    def m(self) -> int:
        """Elbow size."""
        return int(self.iv[self.pk.I_M])

    @property
    def members(self) -> np.ndarray:
        """Elbow points in factorisation order; shape (m,) (a view)."""
        return self.idx[: self.m]

    @property
    def side(self) -> np.ndarray:
        """+1 in R, -1 in L, 0 on the elbow and for parked points; shape (n,) (a view)."""
        return self.sd[0]

    @property
    def n_pos(self) -> float:
        """Sum of the multiplicities of the positive points of L."""
        return float(self.fs[self.pk.F_NPOS])

    @property
    def n_neg(self) -> float:
        return float(self.fs[self.pk.F_NNEG])

    @property
    def max_margin(self) -> float:
        return float(self.fs[self.pk.F_MAX_MARGIN])

    @property
    def max_dual(self) -> float:
        return float(self.fs[self.pk.F_MAX_DUAL])

    @property
    def max_elbow(self) -> int:
        return int(self.iv[self.pk.I_MAX_ELBOW])

    # -- storage ---------------------------------------------------------------------------
    def _alloc_elbow(self, cap: int) -> None:
        m = self.m
        idx = np.empty(cap, dtype=np.int64)
        R = np.zeros((cap, cap))
        if m:
            idx[:m] = self.idx[:m]
            R[:m, :m] = self.R[:m, :m]
        self.idx, self.R = idx, R
        self.V = np.zeros((cap, 2))

    def _room(self, extra: int) -> None:
        """Make room for ``extra`` more elbow points."""
        if self.m + extra > self.idx.size:
            self._alloc_elbow(max(2 * self.idx.size, self.m + extra))

    # -- sets ------------------------------------------------------------------------------
    def set_state(self, state: np.ndarray, order: np.ndarray) -> list[int]:
        """Install sets; elbow points are added in ``order``; returns the refused ones (now R)."""
        pk, iv = self.pk, self.iv
        self.state[:] = state.astype(np.int8)
        iv[pk.I_M] = iv[pk.I_UPDATES] = iv[pk.I_NPARKED] = 0
        self.where[:] = -1
        self._room(int(order.size) + 2)
        refused = []
        for j in order.tolist():
            if self.state[j] == E_SET and not pk.elbow_add(
                self.K, self.prm, self.idx, self.where, self.R, iv, j
            ):
                refused.append(j)
                self.state[j] = R_SET
        side = np.where(self.state == R_SET, 1.0, np.where(self.state == L_SET, -1.0, 0.0))
        self.sd[0] = side
        self.sd[1] = side * self.y
        pk.recompute_sums(self.K, self.pt, self.prm, self.state, self.S, self.fs, iv)
        return refused

    def move(self, j: int, new: int) -> bool:
        """Move point j to set ``new``; False if the elbow refused it (dependent)."""
        self._room(2)
        return bool(
            self.pk.move(
                self.K,
                self.pt,
                self.prm,
                self.state,
                self.sd,
                self.parked,
                self.S,
                self.idx,
                self.where,
                self.R,
                self.fs,
                self.iv,
                j,
                new,
            )  # fmt: skip
        )

    # -- solution at the current pi --------------------------------------------------------
    def refactor(self) -> None:
        """Recompute the elbow factor from scratch; a breakdown if the system is singular."""
        pk, m = self.pk, self.m
        if m:
            R = elbow_cholesky(self.K, self.members, self.kappa, self.ridge)
            if R is None:
                raise _breakdown(f"the elbow system ({m} points) is singular", self.pi, self.lam)
            self.R[:m, :m] = R
        self.iv[pk.I_UPDATES] = 0
        self.iv[pk.I_REFACTORED] = 1
        self.n_refactors += 1

    def _evaluate_status(self, status: int) -> None:
        pk = self.pk
        if status == pk.ST_REFACTOR:
            self.refactor()
        elif status == pk.ST_ILL:
            raise _breakdown(
                f"the elbow system ({self.m} points) is too ill-conditioned (residual "
                f"{self.fs[pk.F_RESID]:.2g} after refinement and refactorising)",
                self.pi,
                self.lam,
            )

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

        See :func:`wsvmgui.ladder._path_kernel.evaluate` for the residual checks.
        """
        pk = self.pk
        while True:
            status = pk.evaluate(
                self.K, self.pt, self.prm, self.S, self.idx, self.R, self.V,
                self.FH, self.fs, self.iv,
            )  # fmt: skip
            if status == pk.ST_OK:
                break
            self._evaluate_status(status)
        m = self.m
        if m == 0:
            return np.empty((0, 2)), np.array([self.b, np.nan]), self.FH.copy()
        beta = np.array([self.fs[pk.F_BETA0], self.fs[pk.F_BETA1]])
        return self.V[:m].copy(), beta, self.FH.copy()

    def dual_violation(self, cE: np.ndarray) -> float:
        """Largest violation of ``0 <= a_i <= U_i`` on the elbow, relative to ``w_i C``."""
        if not self.m:
            return 0.0
        E = self.members
        a = self.y[E] * cE / (self.w[E] * self.C)
        U = np.where(self.y[E] > 0, 1.0 - self.pi, self.pi)
        return max(0.0, float((-a).max()), float((a - U).max()))

    def margin_violation(self, f: np.ndarray) -> float:
        """Largest margin violation of a point of L or R, parked ones included."""
        viol = -float((self.sd[1] * f - self.sd[0]).min())
        for j in self.parked[: self.iv[self.pk.I_NPARKED]].tolist():
            s = 1.0 if self.state[j] == R_SET else -1.0
            viol = max(viol, -s * (self.y[j] * f[j] - 1.0))
        return max(viol, 0.0)

    # -- tracing ---------------------------------------------------------------------------
    def trace(
        self,
        sgn: float,
        max_steps: int,
        report: _Progress,
        covered_other: float,
        pi0: float,
        limits: _Limits,
    ) -> _Records:
        """Trace from the current (polished) solution towards pi = 1 (sgn = +1) or 0 (-1).

        The work of the steps (:attr:`WeightPath.work`) is added to ``limits.work``; an
        elbow larger than ``limits.max_elbow`` stops the trace with :class:`PathTooCostly`.
        """
        pk = self.pk
        self.prm[pk.P_SGN], self.prm[pk.P_MAX_STEPS] = sgn, max_steps
        self.prm[pk.P_MAX_ELBOW] = limits.max_elbow
        self.fs[pk.F_WORK] = limits.work
        try:
            return self._trace(max_steps, report, covered_other, pi0)
        finally:
            limits.work = float(self.fs[pk.F_WORK])

    def _trace(
        self, max_steps: int, report: _Progress, covered_other: float, pi0: float
    ) -> _Records:
        pk, iv = self.pk, self.iv
        sgn = float(self.prm[pk.P_SGN])
        iv[pk.I_STEP] = iv[pk.I_ZERO_RUN] = iv[pk.I_SINCE_YIELD] = 0
        cap = 4 * self.n + 64
        rec_f, rec_p = np.empty((cap, 2)), np.empty((cap, 2), dtype=np.int64)
        rec_merged = np.zeros(cap, dtype=np.int8)
        t_idx, t_val = np.empty(8 * cap, dtype=np.int64), np.empty(8 * cap)
        ev = np.empty((2 * cap, 3), dtype=np.int64)
        # The start: a record at pi0, closed by the first solve.
        rec_f[0], rec_p[0] = (self.pi, np.nan), (0, 0)
        iv[pk.I_NREC], iv[pk.I_NT], iv[pk.I_NEV], iv[pk.I_OPEN] = 1, 0, 0, 1
        report(covered_other)
        while True:
            status = self._run(rec_f, rec_p, rec_merged, t_idx, t_val, ev)
            if status == pk.ST_END:
                break
            if status == pk.ST_YIELD:
                report(covered_other + abs(self.pi - pi0))
            elif status == pk.ST_GROW:
                rec_f, rec_p, rec_merged = _grown(rec_f), _grown(rec_p), _grown(rec_merged)
                t_idx, t_val, ev = _grown(t_idx), _grown(t_val), _grown(ev)
            elif status == pk.ST_GROW_ELBOW:
                self._room(self.idx.size + 1)
            elif status in (pk.ST_REFACTOR, pk.ST_ILL):
                self._evaluate_status(status)
            else:
                raise self._failure(status, max_steps)
        self._check_end(1.0 if sgn > 0 else 0.0)
        nr, nt, ne = int(iv[pk.I_NREC]), int(iv[pk.I_NT]), int(iv[pk.I_NEV])
        return _Records(
            pis=rec_f[:nr, 0].copy(),
            bs=rec_f[:nr, 1].copy(),
            t_ptr=np.append(rec_p[:nr, 0], nt),
            t_idx=t_idx[:nt].copy(),
            t_val=t_val[:nt].copy(),
            ev_ptr=np.append(rec_p[:nr, 1], ne),
            ev=ev[:ne].copy(),
        )

    def _run(self, *records: np.ndarray) -> int:
        """One call of the compiled loop (``records``: the buffers of :meth:`trace`)."""
        self._room(2)
        return int(
            self.pk.run(
                self.K,
                self.pt,
                self.prm,
                self.state,
                self.sd,
                self.parked,
                self.S,
                self.idx,
                self.where,
                self.R,
                self.V,
                self.FH,
                self.fs,
                self.iv,
                *records,
            )  # fmt: skip
        )

    def _failure(self, status: int, max_steps: int) -> PathBreakdown:
        pk, fs = self.pk, self.fs
        if status == pk.ST_KKT:
            why = (
                f"KKT violation inside the path (margin {fs[pk.F_VIOL]:.3g}, tolerance "
                f"{self.path_tol:.3g}; dual bound {fs[pk.F_DUAL]:.3g}, tolerance "
                f"{DUAL_TOL:.3g})"
            )
        elif status == pk.ST_CYCLE:
            why = (
                f"{int(self.iv[pk.I_ZERO_RUN])} consecutive zero-length steps (cycling among "
                "degenerate points)"
            )
        elif status == pk.ST_MAX_STEPS:
            why = f"more than {max_steps} steps"
        elif status == pk.ST_NO_JOIN:
            why = "empty elbow and no point can join it"
        elif status == pk.ST_TOO_LARGE:
            return PathTooCostly(
                f"solution path at pi={self.pi:.6g}, lambda={self.lam:.4g}: the elbow grew to "
                f"{self.m} points (max_elbow={self.prm[pk.P_MAX_ELBOW]:g}, ridge "
                f"{self.ridge:.3g}); the grid ladder is expected to be cheaper"
            )
        else:  # pragma: no cover - every status is handled above
            why = f"unexpected kernel status {status}"
        return _breakdown(why, self.pi, self.lam)

    def _check_end(self, end_pi: float) -> None:
        """The breakpoint at pi = 0 or 1 against the limits c = 0, b = +-1."""
        # At pi = 0 the negatives' bound is 0 and L may hold only negatives (their c -> 0);
        # a positive in L would keep c = C w.  Symmetrically at pi = 1.
        stuck = self.n_pos if end_pi == 0.0 else self.n_neg
        dev = float(self.fs[self.pk.F_END_DEV])
        if stuck > 0 or not dev <= END_TOL:
            raise _breakdown(
                f"the path does not reach its limit at pi={end_pi:g} (coefficient/intercept "
                f"deviation {dev:.3g}, {stuck:g} points of the heavy class left of the elbow)",
                self.pi,
                self.lam,
            )


def _grown(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` with twice the rows."""
    out = np.zeros((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


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
        if tr.m:
            tr.b = float(beta[0])
        margin = y * f - 1.0
        bad_pts = -(tr.side * margin)  # > 0: R below or L above its margin
        moves: list[tuple[float, int, int]] = []
        for i in np.flatnonzero(bad_pts > tol).tolist():
            moves.append((float(bad_pts[i]), i, E_SET))
        E = tr.members.copy()
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
    starts: dict[float, tuple[np.ndarray, float]] | None = None,
) -> _Tracer:
    """A tracer holding the exact solution at ``pi``: libsvm, then :func:`_polish`.

    ``starts`` keeps libsvm's answer per ``pi`` for another attempt (with a ridge: libsvm
    does not see it).
    """
    tr = _Tracer(K, y, w, C, lam, rank_tol, path_tol, ridge)
    upper = w * C * np.where(y > 0, 1.0 - pi, pi)
    cached = None if starts is None else starts.get(pi)
    alpha, b = cached if cached is not None else _libsvm_start(K, y, upper, C)
    if starts is not None:
        starts[pi] = (alpha.copy(), b)
    _polish(tr, pi, alpha, b)
    V, _, FH = tr.evaluate()
    viol, dual = tr.margin_violation(FH[0]), tr.dual_violation(V[:, 0])
    if viol > path_tol or dual > DUAL_TOL:
        raise _breakdown(f"the polished start violates the KKT conditions by {viol:.3g}", pi, lam)
    return tr


def _clone(tr: _Tracer) -> _Tracer:
    """A second tracer at the same solution (for the other direction)."""
    other = _Tracer(tr.K, tr.y, tr.w, tr.C, tr.lam, tr.rank_tol, tr.path_tol, tr.ridge)
    other.pi, other.b = tr.pi, tr.b
    refused = other.set_state(tr.state, tr.members.copy())
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


def _assemble(down: _Records, up: _Records, state_at_zero: np.ndarray, n: int) -> _Flat:
    """Join the two traced directions into one list of breakpoints in increasing pi.

    ``down`` runs from the start to pi = 0; its records are reversed and so are its events
    (old -> new going down: the state after them, in increasing pi, is the old one).  The
    first records of both directions are the same start and merge (up's values win).
    Within a breakpoint the values are sorted by point, the last one traced winning.
    """
    Rd, Ru = down.pis.size, up.pis.size
    # Output position of every record: down k -> Rd - 1 - k (k >= 1), both starts -> Rd - 1.
    out_d = Rd - 1 - np.arange(Rd)
    out_u = Rd - 1 + np.arange(Ru)
    B = Rd + Ru - 1
    pis = np.empty(B)
    bs = np.empty(B)
    pis[out_d], bs[out_d] = down.pis, down.bs
    pis[out_u], bs[out_u] = up.pis, up.bs

    def rec_of(ptr: np.ndarray) -> np.ndarray:
        return np.repeat(np.arange(ptr.size - 1), np.diff(ptr))

    # Values: down's entries first, each direction in tracing order; keep the last per
    # (breakpoint, point).
    t_rec = np.concatenate([out_d[rec_of(down.t_ptr)], out_u[rec_of(up.t_ptr)]])
    t_idx = np.concatenate([down.t_idx, up.t_idx])
    t_val = np.concatenate([down.t_val, up.t_val])
    key = t_rec * n + t_idx
    order = np.argsort(key, kind="stable")
    key = key[order]
    last = np.append(key[1:] != key[:-1], True) if key.size else np.empty(0, dtype=bool)
    keep = order[last]
    t_counts = np.bincount(t_rec[keep], minlength=B)
    # Events: down's reversed within each breakpoint, as (point, old); up's as (point, new).
    ev_rec_d = out_d[rec_of(down.ev_ptr)]
    ev_rec_u = out_u[rec_of(up.ev_ptr)]
    ev_rec = np.concatenate([ev_rec_d, ev_rec_u])
    second = np.concatenate([np.zeros(ev_rec_d.size), np.ones(ev_rec_u.size)])
    third = np.concatenate([-np.arange(ev_rec_d.size), np.arange(ev_rec_u.size)])
    ev_order = np.lexsort((third, second, ev_rec))
    ev_pt = np.concatenate([down.ev[:, 0], up.ev[:, 0]])[ev_order]
    ev_state = np.concatenate([down.ev[:, 1], up.ev[:, 2]])[ev_order]
    ev_counts = np.bincount(ev_rec, minlength=B)
    return _Flat(
        pis=pis,
        intercepts=bs,
        t_ptr=np.concatenate([[0], np.cumsum(t_counts)]),
        t_idx=t_idx[keep].astype(np.intp),
        t_val=t_val[keep],
        ev_ptr=np.concatenate([[0], np.cumsum(ev_counts)]),
        ev_idx=ev_pt.astype(np.intp),
        ev_state=ev_state.astype(np.int8),
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
    # The compiled steps take writeable arrays: a read-only K (a memory map, a shared
    # matrix frozen by its owner) is copied once here.
    K = _kernel_arg(K, np.float64)
    if K.shape != (y.size, y.size):
        raise InputError(f"kernel matrix has shape {K.shape}, expected ({y.size}, {y.size})")
    if not np.isfinite(K.sum()) and not np.all(np.isfinite(K)):  # (the sum: no n x n temporary)
        raise InputError("kernel matrix has NaN or infinite entries")
    return K, y, penalty_to_C(lam, y.size)


def auto_max_elbow(n: int) -> int:
    """Elbow size beyond which the grid ladder is expected to be cheaper than the path.

    ``AUTO_ELBOW_FRACTION * n`` (at least 50).  Measured (``benchmarks/results/
    path_speed.md``, CPU, RBF with sigma_M): paths whose largest elbow stays below 0.2 n
    cost 0.1-0.75 of the default grid ladder; those above (``wang2008_ex1``, elbows up to
    0.4 n near the ends, probabilities flat at 0.2 / 0.8) 1.05-2 of it, and they pass
    0.2 n after only 13-21 % of their work, so stopping there wastes little.

    Parameters
    ----------
    n : int
        Number of training points.
    """
    return max(50, int(AUTO_ELBOW_FRACTION * n))


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
    max_elbow: int | None = None,
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
        Polled every ``YIELD_EVERY`` steps; True raises :class:`~wsvmgui.errors.Cancelled`.
    max_elbow : int, optional
        Stop with :class:`PathTooCostly` as soon as more points than this sit on the elbow
        (after merging duplicates).  The cost of a step grows with the elbow, and large
        elbows (smooth kernels, piecewise flat probabilities) make the path slower than the
        grid ladder; :func:`auto_max_elbow` is the limit measured to separate the two (for
        an "auto" engine that falls back to the grid).  Deterministic (no timing).

    Returns
    -------
    WeightPath

    Raises
    ------
    PathBreakdown
        Too many steps, cycling, an elbow system that cannot be solved accurately, a
        failed limit at pi = 0 or 1, or a KKT check that fails; the message names why,
        pi and lambda.  :class:`PathTooCostly` (a subclass) when ``max_elbow`` is exceeded.
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
    limits = _Limits(max_elbow=np.inf if max_elbow is None else float(max_elbow))
    prob = _Problem(
        Ku, yu, w, C, float(lam), float(start), steps, rank_tol, path_tol, report, limits
    )
    scale = float(np.abs(np.diag(K)).max())
    if ridge is not None:
        flat, info = _trace_both(prob, float(ridge) * scale)
    else:
        try:
            flat, info = _trace_both(prob, 0.0)
        except PathTooCostly:
            raise
        except PathBreakdown as exact_failure:
            try:
                flat, info = _trace_both(prob, DEFAULT_RIDGE * scale)
            except PathTooCostly:
                raise
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
        work=limits.work,
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
    limits: _Limits
    starts: dict[float, tuple[np.ndarray, float]] = field(default_factory=dict)


@dataclass
class _Limits:
    """Largest elbow allowed, and the work of a whole fit (all attempts) so far."""

    max_elbow: float = np.inf
    work: float = 0.0


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
                prob.K, prob.y, prob.w, prob.C, prob.lam, pi0, prob.rank_tol, prob.path_tol, eps,
                prob.starts,
            )  # fmt: skip
            break
        except PathBreakdown as exc:
            error = exc
    else:
        assert error is not None
        raise error
    tr_down = _clone(tr_up)
    up = tr_up.trace(1.0, prob.steps, prob.report, 0.0, pi0, prob.limits)
    down = tr_down.trace(-1.0, prob.steps, prob.report, 1.0 - pi0, pi0, prob.limits)
    info = _TraceInfo(
        path_residual=max(tr_up.max_margin, tr_down.max_margin),
        dual_residual=max(tr_up.max_dual, tr_down.max_dual),
        max_elbow=max(tr_up.max_elbow, tr_down.max_elbow),
        ridge=eps,
    )
    return _assemble(down, up, tr_down.state, prob.y.size), info


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


def _kernel_arg(a: np.ndarray, dtype: type) -> np.ndarray:
    """``a`` as a C-contiguous, writeable array of ``dtype`` (a copy only if needed).

    The compiled kernels have explicit signatures for writeable arrays; a path read back
    from a model file or a read-only memory map holds read-only ones.
    """
    return np.require(a, dtype=dtype, requirements=("C", "W"))


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
    work : float
        Work of all traced steps (both attempts when the exact path broke down), in
        multiply-adds of their O(n |E| + |E|^2) passes: ``sum (n + |E|) |E|``.
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
    work: float = 0.0

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
    def _plan(self) -> tuple[np.ndarray, ...]:
        """Flat block plan ``(v_ptr, v_idx, w_flat, w_ptr, lind)`` (:mod:`._path_predict`)."""
        from . import _path_predict

        i64 = np.int64
        return tuple(
            _path_predict.plan(
                _kernel_arg(self.pis, dtype=float),
                _kernel_arg(self.intercepts, dtype=float),
                _kernel_arg(self.t_ptr, dtype=i64),
                _kernel_arg(self.t_idx, dtype=i64),
                _kernel_arg(self.t_val, dtype=float),
                _kernel_arg(self.ev_ptr, dtype=i64),
                _kernel_arg(self.ev_idx, dtype=i64),
                _kernel_arg(self.ev_state, dtype=np.int8),
                _kernel_arg(self.state0, dtype=np.int8),
                (self.y > 0).astype(float),
                float(self.C),
                BLOCK,
            )
        )

    @cached_property
    def _blocks(self) -> list[_Block]:
        """The plan as one :class:`_Block` per block of ``BLOCK`` breakpoints (views)."""
        v_ptr, v_idx, w_flat, w_ptr, lind = self._plan
        B = self.n_breakpoints
        blocks = []
        for b in range(v_ptr.size - 1):
            k0, k1 = b * BLOCK, min((b + 1) * BLOCK, B - 1)
            a0, a1 = int(v_ptr[b]), int(v_ptr[b + 1])
            blocks.append(
                _Block(
                    k0,
                    k1,
                    v_idx[a0:a1],
                    w_flat[w_ptr[b] : w_ptr[b + 1]].reshape(k1 - k0 + 1, a1 - a0 + 3),
                    lind[4 * a0 : 4 * a1].reshape(a1 - a0, 4),
                )
            )
        return blocks

    def _initial_left(self) -> np.ndarray:
        """Indicators (n, 2) of positive / negative L points after the events at k = 0."""
        state = self.state0.copy()
        a, b = self.ev_ptr[0], self.ev_ptr[1]
        state[self.ev_idx[a:b]] = self.ev_state[a:b]
        inL = state == L_SET
        pos = self.y > 0
        return np.column_stack([inL & pos, inL & ~pos]).astype(float)

    def _iter_blocks(self, KT: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(k0, F)``, F of shape (k1 - k0 + 1, m): decision values at breakpoints.

        ``KT`` is the transposed cross kernel, shape (n, m), C-contiguous.  Per block: the
        rows ``KT[V]``, the two running L sums (less V's share) and a row of ones are
        stacked and multiplied by ``Wt`` in one product (as
        :func:`wsvmgui.ladder._path_predict.estimate` does, compiled).
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

    def _chunks(self, K_cross: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        """``(r0, KT)``: the transposed cross kernel in chunks of rows, shape (n, rows).

        Chunks hold about 8e6 values (64 MB); the transposes share one buffer.
        """
        from . import _path_predict

        K_cross = np.asarray(K_cross, dtype=float)
        if K_cross.ndim != 2 or K_cross.shape[1] != self.n:
            raise InputError(f"cross kernel has shape {K_cross.shape}, expected (m, {self.n})")
        m = K_cross.shape[0]
        rows = min(int(np.clip(8_000_000 // max(self.n, 1), 256, 8192)), max(m, 1))
        buf = np.empty((self.n, rows))
        for r0 in range(0, m, rows):
            part = K_cross[r0 : r0 + rows]
            KT = buf if part.shape[0] == rows else np.empty((self.n, part.shape[0]))
            _path_predict.transpose(_kernel_arg(part, float), KT)
            yield r0, KT

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

    def _estimate_chunk(
        self, KT: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Count measure, first and last zero of f at the points of ``KT`` (n, m).

        Compiled (:func:`wsvmgui.ladder._path_predict.estimate`): per block one product
        for the decision values at its breakpoints, reduced at once; only points whose sign
        changes inside a block need its exact zeros.
        """
        from . import _path_predict

        m = KT.shape[1]
        measure = np.zeros(m)
        lo = np.full(m, np.nan)
        hi = np.full(m, np.nan)
        first_np = np.full(m, -1, dtype=np.int64)
        last_pos = np.full(m, -1, dtype=np.int64)
        S = np.ascontiguousarray(self._initial_left().T @ KT)  # (2, m): kernel sums over L
        v_ptr, v_idx, w_flat, w_ptr, lind = self._plan
        _path_predict.estimate(
            KT, _kernel_arg(self.pis, dtype=float), v_ptr, v_idx, w_flat, w_ptr,
            lind, BLOCK, S, measure, lo, hi, first_np, last_pos,
        )  # fmt: skip
        mono = last_pos < first_np
        out = np.clip(measure, lo, hi)
        out[mono] = lo[mono]
        hi[mono] = lo[mono]
        return out, lo, hi, mono
