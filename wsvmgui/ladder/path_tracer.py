"""The tracer of the weight path: sets, running sums and the elbow system at the current pi.

One :class:`_Tracer` holds the state of the path at one weight (layouts in
:mod:`wsvmgui.ladder._path_kernel`, which advances it compiled) and traces it towards
pi = 1 or 0, recording the breakpoints.  This module sets the arrays up, grows them,
refactorises the elbow system, serves the kernel rows the compiled loop asks for
(:mod:`wsvmgui.ladder.path_rows`) and turns the loop's statuses into breakdowns.  The
mathematics (elbow system, events, ends, ridge) is derived in ``docs/notes/path.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from ..errors import Cancelled, SolverError
from ..progress import CancelCheck, ProgressCallback
from .path_linalg import elbow_cholesky
from .path_rows import ElbowRowsExceeded, KernelRows

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
#: Largest violation of an elbow dual's bounds, relative to C (see ``rank_tol``).
DUAL_TOL = 1e-3
#: Running-sum updates after which the sums over L are recomputed exactly (a dense matrix).
SUM_REFRESH = 4096
#: The same for kernel rows made on the fly, where a recomputation costs n |L| kernel
#: values: the sums are compensated (Kahan), so their error does not grow with updates.
FLY_SUM_REFRESH = 1 << 20
#: Steps of the compiled loop between returns to Python (progress, cancellation).
YIELD_EVERY = 64
#: Units of the progress callback: permille of (0, 1) covered.
PROGRESS_UNITS = 1000


class PathBreakdown(SolverError):
    """The solution path could not be traced or failed its checks; use the grid ladder."""


class PathTooCostly(PathBreakdown):
    """The elbow grew beyond ``max_elbow`` (:func:`~wsvmgui.ladder.path.fit_path`) or
    beyond the rows the memory budget allows: the grid is expected cheaper."""


def _breakdown(why: str, pi: float, lam: float) -> PathBreakdown:
    return PathBreakdown(f"solution path at pi={pi:.6g}, lambda={lam:.4g}: {why}")


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

    @classmethod
    def single(cls, pi: float, b: float) -> _Records:
        """One record at ``pi`` with intercept ``b``, no values and no events."""
        zero = np.zeros(2, dtype=np.int64)
        return cls(
            np.array([pi]), np.array([b]), zero, np.empty(0, dtype=np.int64), np.empty(0),
            zero.copy(), np.empty((0, 3), dtype=np.int64),
        )  # fmt: skip


@dataclass
class _Limits:
    """Largest elbow allowed, and the work of a whole fit (all attempts) so far."""

    max_elbow: float = np.inf
    work: float = 0.0


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
        rows: KernelRows,
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
        self.rows, self.y, self.w, self.C, self.lam = rows, y, w, C, lam
        self.n = n
        self.ridge = ridge
        self.path_tol = path_tol
        self.rank_tol = rank_tol
        diag = rows.diag
        self.kappa = float(diag.mean()) if diag.mean() > 0 else 1.0
        self.pt = np.ascontiguousarray(np.vstack([y, w, (y > 0).astype(float), 1.0 / (w * C)]))
        prm = np.zeros(pk.P_SIZE)
        prm[pk.P_C], prm[pk.P_RIDGE], prm[pk.P_KAPPA] = C, ridge, self.kappa
        prm[pk.P_RANK_TOL], prm[pk.P_PATH_TOL] = rank_tol, path_tol
        prm[pk.P_KMAX] = float(np.abs(diag).max())
        prm[pk.P_WRATIO], prm[pk.P_WMAX] = float(w.max() / w.min()), float(w.max())
        prm[pk.P_SGN], prm[pk.P_MAX_STEPS] = 1.0, 0.0
        prm[pk.P_REFINE_TOL], prm[pk.P_REFACTOR_TOL] = REFINE_TOL, REFACTOR_TOL
        prm[pk.P_REFACTOR_EVERY] = REFACTOR_EVERY
        prm[pk.P_SUM_REFRESH] = SUM_REFRESH if rows.dense else FLY_SUM_REFRESH
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
        self.S = np.zeros((4, n))
        self.FH = np.zeros((2, n))
        self.where = np.full(n, -1, dtype=np.int64)
        self._alloc_elbow(64)
        self.n_refactors = 0

    # -- scalars ---------------------------------------------------------------------------
    @property
    def K(self) -> np.ndarray:
        """The kernel row store (layout in :mod:`wsvmgui.ladder._path_kernel`)."""
        return self.rows.K

    @property
    def slot(self) -> np.ndarray:
        return self.rows.slot

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
        V = np.zeros((cap, 2))
        if m:
            idx[:m] = self.idx[:m]
            R[:m, :m] = self.R[:m, :m]
            V[:m] = self.V[:m]  # a pending step resumes with these values
        self.idx, self.R, self.V = idx, R, V

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
            if self.state[j] != E_SET:
                continue
            self.fetch(j)
            if not pk.elbow_add(self.K, self.slot, self.prm, self.idx, self.where, self.R, iv, j):
                refused.append(j)
                self.state[j] = R_SET
        side = np.where(self.state == R_SET, 1.0, np.where(self.state == L_SET, -1.0, 0.0))
        self.sd[0] = side
        self.sd[1] = side * self.y
        self.recompute_sums()
        return refused

    def fetch(self, j: int) -> None:
        """Hold point j's kernel row (the elbow's rows stay held)."""
        try:
            self.rows.ensure(j, self.where)
        except ElbowRowsExceeded as exc:
            raise PathTooCostly(
                f"solution path at pi={self.pi:.6g}, lambda={self.lam:.4g}: {exc} (the memory "
                "budget of the path's kernel rows); the grid ladder is expected to be cheaper"
            ) from None

    def recompute_sums(self) -> None:
        """The kernel sums over L from scratch (and the classes' totals in L)."""
        pk, iv = self.pk, self.iv
        if self.rows.dense:
            pk.recompute_sums(self.K, self.slot, self.pt, self.prm, self.state, self.S, self.fs, iv)
            return
        pos = self.y > 0
        self.S[:2] = self.rows.left_sums(self.state, self.w, pos)
        self.S[2:] = 0.0
        inL = self.state == L_SET
        if self.ridge:
            self.S[0, inL & pos] += self.ridge * self.w[inL & pos]
            self.S[1, inL & ~pos] += self.ridge * self.w[inL & ~pos]
        self.fs[pk.F_NPOS] = float(self.w[inL & pos].sum())
        self.fs[pk.F_NNEG] = float(self.w[inL & ~pos].sum())
        iv[pk.I_SUM_UPDATES] = 0

    def move(self, j: int, new: int) -> bool:
        """Move point j to set ``new``; False if the elbow refused it (dependent)."""
        self._room(2)
        old = int(self.state[j])
        if new == E_SET or (L_SET in (old, new) and old != new):
            self.fetch(j)
        done = bool(
            self.pk.move(
                self.K,
                self.slot,
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
        if self.iv[self.pk.I_SUM_UPDATES] > self.prm[self.pk.P_SUM_REFRESH]:
            self.recompute_sums()
        return done

    # -- solution at the current pi --------------------------------------------------------
    def refactor(self) -> None:
        """Recompute the elbow factor from scratch; a breakdown if the system is singular."""
        pk, m = self.pk, self.m
        if m:
            R = elbow_cholesky(self.rows.block(self.members), self.kappa, self.ridge)
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
                self.K, self.slot, self.pt, self.prm, self.S, self.idx, self.R, self.V,
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
            elif not self.serve(status):
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

    def serve(self, status: int) -> bool:
        """Do what a status common to the compiled loops asks; False if it is a failure.

        A missing kernel row, sums due from scratch, a full elbow buffer or a system to
        refactorise (a breakdown if that cannot help).
        """
        pk = self.pk
        if status == pk.ST_ROW:
            self.fetch(int(self.iv[pk.I_NEED]))
        elif status == pk.ST_REFRESH:
            self.recompute_sums()
        elif status == pk.ST_GROW_ELBOW:
            self._room(self.idx.size + 1)
        elif status in (pk.ST_REFACTOR, pk.ST_ILL):
            self._evaluate_status(status)
        else:
            return False
        return True

    def _run(self, *records: np.ndarray) -> int:
        """One call of the compiled loop (``records``: the buffers of :meth:`trace`)."""
        self._room(2)
        return int(
            self.pk.run(
                self.K,
                self.slot,
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
