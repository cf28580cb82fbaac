"""Compiled prediction from a weight path (:meth:`wsvmgui.ladder.path.WeightPath.estimate`).

Compiled like :mod:`wsvmgui.ladder._path_kernel` (``nogil``, cached, explicit
signatures, no ``fastmath``):

* :func:`plan` builds the block plan of a path once: for blocks of G consecutive
  breakpoints ``k0..k1`` the points V whose coefficient is stored or whose set changes in
  the block, the matrix ``Wt`` (k1 - k0 + 1, |V| + 3) of their coefficients, the two
  running-sum factors and the intercept at every breakpoint, and the indicators ``Lind``
  (|V|, 4) of V's positive / negative points left of the elbow at ``k0`` and their
  changes to ``k1`` (see :class:`wsvmgui.ladder.path._Block`).
* :func:`estimate` evaluates the decision values of m points at all breakpoints block by
  block (one ``Wt @ [K(V, x); sums; 1]`` product per block, through BLAS) and reduces
  them at once to the count measure of ``{pi : f > 0}`` and the first and last zeros, so
  the (m, B) matrix is never formed;
* :func:`transpose` copies the cross kernel into the (n, m) layout the blocks read.

Flat plan arrays: block b spans breakpoints ``G b .. min(G (b + 1), B - 1)``; its points
are ``v_idx[v_ptr[b]:v_ptr[b + 1]]`` (in order of first appearance), ``Wt`` is
``w_flat[w_ptr[b]:w_ptr[b + 1]]`` in row-major order and ``Lind`` is
``lind[4 v_ptr[b]:4 v_ptr[b + 1]]`` (row-major, 4 columns).
"""

from __future__ import annotations

import numpy as np

from ._path_jit import _jit
from ._path_kernel import L_SET


@_jit(
    "Tuple((I1, I1, F1, I1, F1))(F1, F1, I1, I1, F1, I1, I1, B1, B1, F1, float64, int64)",
    entry=True,
)
def plan(pis, intercepts, t_ptr, t_idx, t_val, ev_ptr, ev_idx, ev_state, state0, pos, C, G):
    """The block plan of a path: ``(v_ptr, v_idx, w_flat, w_ptr, lind)`` (module docstring).

    ``pos`` (n,) is 1 for positive training points, 0 otherwise; the other arguments are
    the :class:`~wsvmgui.ladder.path.WeightPath` arrays (intp as int64).
    """
    B = pis.size
    n = state0.size
    nblk = (B - 1 + G - 1) // G
    stamp = np.empty(n, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    stamp[:] = -1
    v_ptr = np.zeros(nblk + 1, dtype=np.int64)
    w_ptr = np.zeros(nblk + 1, dtype=np.int64)
    for b in range(nblk):
        k0 = b * G
        k1 = min(k0 + G, B - 1)
        cnt = 0
        for q in range(t_ptr[k0], t_ptr[k1 + 1]):
            if stamp[t_idx[q]] != b:
                stamp[t_idx[q]] = b
                cnt += 1
        for q in range(ev_ptr[k0], ev_ptr[k1 + 1]):
            if stamp[ev_idx[q]] != b:
                stamp[ev_idx[q]] = b
                cnt += 1
        v_ptr[b + 1] = v_ptr[b] + cnt
        w_ptr[b + 1] = w_ptr[b] + (k1 - k0 + 1) * (cnt + 3)
    v_idx = np.empty(v_ptr[nblk], dtype=np.int64)
    w_flat = np.empty(w_ptr[nblk])
    lind = np.zeros(4 * v_ptr[nblk])
    state = state0.copy()
    for q in range(ev_ptr[0], ev_ptr[1]):
        state[ev_idx[q]] = ev_state[q]
    stamp[:] = -1
    for b in range(nblk):
        k0 = b * G
        k1 = min(k0 + G, B - 1)
        a0 = v_ptr[b]
        nv = v_ptr[b + 1] - a0
        cnt = 0
        for q in range(t_ptr[k0], t_ptr[k1 + 1]):
            if stamp[t_idx[q]] != b:
                stamp[t_idx[q]] = b
                v_idx[a0 + cnt] = t_idx[q]
                cnt += 1
        for q in range(ev_ptr[k0], ev_ptr[k1 + 1]):
            if stamp[ev_idx[q]] != b:
                stamp[ev_idx[q]] = b
                v_idx[a0 + cnt] = ev_idx[q]
                cnt += 1
        V = v_idx[a0 : a0 + nv]
        stV = np.empty(nv, dtype=np.int8)
        for i in range(nv):
            where[V[i]] = i
            stV[i] = state[V[i]]
            inL = stV[i] == L_SET
            lind[4 * (a0 + i)] = 1.0 if inL and pos[V[i]] > 0 else 0.0
            lind[4 * (a0 + i) + 1] = 1.0 if inL and pos[V[i]] == 0 else 0.0
        width = nv + 3
        for k in range(k0, k1 + 1):
            if k > k0:
                for q in range(ev_ptr[k], ev_ptr[k + 1]):
                    state[ev_idx[q]] = ev_state[q]
                    stV[where[ev_idx[q]]] = ev_state[q]
            row = w_ptr[b] + (k - k0) * width
            pk = pis[k]
            for i in range(nv):
                w_flat[row + i] = C * (pos[V[i]] - pk) if stV[i] == L_SET else 0.0
            for q in range(t_ptr[k], t_ptr[k + 1]):
                w_flat[row + where[t_idx[q]]] = t_val[q]
            w_flat[row + nv] = C * (1.0 - pk)
            w_flat[row + nv + 1] = -C * pk
            w_flat[row + nv + 2] = intercepts[k]
        for i in range(nv):
            inL = stV[i] == L_SET
            lind[4 * (a0 + i) + 2] = (1.0 if inL and pos[V[i]] > 0 else 0.0) - lind[4 * (a0 + i)]
            lind[4 * (a0 + i) + 3] = (1.0 if inL and pos[V[i]] == 0 else 0.0) - lind[
                4 * (a0 + i) + 1
            ]
    return v_ptr, v_idx, w_flat, w_ptr, lind


@_jit("void(float64[:, :], F2)", entry=True)
def transpose(A, out):
    """``out[:c, :r] = A.T`` for ``A`` (r, c), in 32 x 32 tiles (cache-friendly)."""
    r, c = A.shape
    for i0 in range(0, r, 32):
        i1 = min(i0 + 32, r)
        for j0 in range(0, c, 32):
            for j in range(j0, min(j0 + 32, c)):
                o = out[j]
                for i in range(i0, i1):
                    o[i] = A[i, j]


@_jit("float64(F1, F1, int64)")
def _crossing(f, p, s):
    """Zero of f on segment s (``f(p_s) > 0 >= f(p_{s+1})``); ``p_0`` when s < 0."""
    if s < 0:
        return p[0]
    return p[s] + (p[s + 1] - p[s]) * (f[s] / (f[s] - f[s + 1]))


@_jit("void(F2, F1, int64, F1, F1, F1, I1, I1)")
def _scan(FT, p, k0, measure, lo, hi, first_np, last_pos):
    """Reduce the decision values ``FT`` (m, nb) of one block at breakpoints ``p`` (nb,).

    Per point: the block's share of the measure of ``{f > 0}`` (exact: f is linear on
    every segment), the first zero (once: the first non-positive value), the last zero
    and the index of the last positive value.
    """
    m, nb = FT.shape
    span = p[nb - 1] - p[0]
    for j in range(m):
        f = FT[j]
        npos = 0
        for s in range(nb):
            if f[s] > 0:
                npos += 1
        if npos == nb:
            measure[j] += span
            last_pos[j] = k0 + nb - 1  # its zero lies further on
            continue
        if npos == 0:
            continue
        acc = 0.0
        for s in range(nb - 1):
            a = f[s]
            b = f[s + 1]
            num = max(a, 0.0) + max(b, 0.0)
            den = abs(a) + abs(b)
            acc += (p[s + 1] - p[s]) * (num / (den if den > 0 else 1.0))
        measure[j] += acc
        if first_np[j] < 0:
            kk = 0
            while f[kk] > 0:
                kk += 1
            lo[j] = _crossing(f, p, kk - 1)
            first_np[j] = k0 + kk
        kl = nb - 1
        while not f[kl] > 0:
            kl -= 1
        if kl < nb - 1:
            hi[j] = _crossing(f, p, kl)
        last_pos[j] = k0 + kl


@_jit("void(F2, F1, I1, I1, F1, I1, F1, int64, F2, F1, F1, F1, I1, I1)", entry=True)
def estimate(KT, pis, v_ptr, v_idx, w_flat, w_ptr, lind, G, S, measure, lo, hi, first_np, last_pos):
    """Count measure, first and last zero of f at the points of ``KT`` (n, m), all blocks.

    ``S`` (2, m) holds the kernel sums over the positive / negative training points left
    of the elbow after the events at breakpoint 0 (updated in place); the outputs (m,)
    start as zeros, NaN, NaN, -1, -1.
    """
    B = pis.size
    m = KT.shape[1]
    nblk = v_ptr.size - 1
    for b in range(nblk):
        k0 = b * G
        k1 = min(k0 + G, B - 1)
        nb = k1 - k0 + 1
        a0 = v_ptr[b]
        nv = v_ptr[b + 1] - a0
        buf = np.empty((nv + 3, m))
        corr = np.zeros((4, m))
        for i in range(nv):
            src = KT[v_idx[a0 + i]]
            dst = buf[i]
            for x in range(m):
                dst[x] = src[x]
            for r in range(4):
                c = lind[4 * (a0 + i) + r]
                if c != 0.0:
                    cr = corr[r]
                    for x in range(m):
                        cr[x] += c * src[x]
        for x in range(m):
            buf[nv, x] = S[0, x] - corr[0, x]
            buf[nv + 1, x] = S[1, x] - corr[1, x]
            buf[nv + 2, x] = 1.0
            S[0, x] += corr[2, x]
            S[1, x] += corr[3, x]
        Wt = w_flat[w_ptr[b] : w_ptr[b + 1]].reshape((nb, nv + 3))
        FT = np.dot(buf.T, Wt.T)  # (m, nb): BLAS
        _scan(np.ascontiguousarray(FT), pis[k0 : k1 + 1], k0, measure, lo, hi, first_np, last_pos)
