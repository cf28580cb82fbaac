"""The exact weight path as a fitted object: storage, coefficients and grid-free estimates.

A :class:`WeightPath` is what :func:`wsvmgui.ladder.path.fit_path` returns: the path's
breakpoints in pi, the intercept there, and per breakpoint only the coefficients of the
points on the elbow and the set changes (every other coefficient follows from its set).
Between breakpoints the solution is linear in pi, so coefficients at any weight and the
decision values' exact zeros at any point follow from it.  The derivation and the
storage layout are in ``docs/notes/path.md``.

Prediction
----------
``f_pi(x)`` is linear in pi between breakpoints, so the estimate at a point needs ``f`` at
the B breakpoints.  They are computed in blocks of G = 32 consecutive breakpoints: the
union V of the block's elbows and changed points is small (about mean|E| + G), the points
of L outside V contribute through two running kernel sums, so a block costs one product
of shape (G + 1, |V| + 3) x (|V| + 3, m) plus a gather of |V| rows of the transposed
cross kernel; only points whose sign changes inside a block need its exact zeros.
Predicting m points costs about ``2 m B (mean|E| + G)`` flops (against ``2 m n B`` for
the naive product) and O(m (G + |V|)) memory beyond the cross kernel: the estimate
streams over the blocks and never holds the (m, B) matrix.  The block plan is built once
per path (O(B mean|E|)); plan and per-block reduction are compiled
(:mod:`wsvmgui.ladder._path_predict`), the products go through BLAS.

:class:`WeightPath` and :class:`_Block` keep ``wsvmgui.ladder.path`` as their module (the
name model files store them under; :mod:`wsvmgui.io.serialize`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from functools import cached_property

import numpy as np

from ..errors import InputError
from ..solvers.wsvm import kkt_residuals, sample_bounds
from .grid import Ladder
from .rules import RULES, LadderEstimate
from .weights import check_weights

#: Set code of the points left of the elbow (c at its bound), as in the tracer.
L_SET = 2
#: Breakpoints per block when evaluating decision values.
BLOCK = 32
#: The module model files name the path's classes by (the package front).
FRONT = "wsvmgui.ladder.path"


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
        """Full coefficient vectors at breakpoints ``ks`` (sorted); shape (len(ks), n).

        The sets are advanced from one requested breakpoint to the next by the events in
        between (each point's last one), so the cost is one pass over the events.
        """
        out = np.empty((ks.size, self.n))
        state = self.state0.copy()
        done = 0  # events applied so far
        for row, k in enumerate(ks.tolist()):
            upto = int(self.ev_ptr[k + 1])
            if upto > done:
                idx = self.ev_idx[done:upto]
                _, first = np.unique(idx[::-1], return_index=True)
                last = idx.size - 1 - first  # each point's last event
                state[idx[last]] = self.ev_state[done:upto][last]
                done = upto
            c = np.where(state == L_SET, self._bound(self.pis[k]), 0.0)
            a, b = self.t_ptr[k], self.t_ptr[k + 1]
            c[self.t_idx[a:b]] = self.t_val[a:b]
            out[row] = c
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


WeightPath.__module__ = FRONT
_Block.__module__ = FRONT
