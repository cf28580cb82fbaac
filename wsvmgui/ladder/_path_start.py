"""Compiled start of the weight path at pi = 0 (:mod:`wsvmgui.ladder.path_start`).

At ``pi -> 0`` every negative point is left of the elbow with ``c_j = -C pi w_j`` and the
positives' coefficients are ``c_i = C pi alpha_i`` with ``alpha`` the solution of

    min_alpha  1/2 alpha' A alpha - s' alpha   subject to  alpha >= 0,  1' alpha = N_-,

over the positive points (``A = K_PP + eps I``, ``s_i = sum_{j negative} w_j K_ij``,
``N_-`` the negatives' total multiplicity; derivation in ``docs/notes/path.md``).
:func:`limit_start` solves it exactly by following its solution as the total
``tau = 1' alpha`` grows from 0 to ``N_-``: ``alpha(tau)`` is piecewise linear, and on a
piece the support ``E`` solves ``A_EE alpha_E + beta 1 = s_E``, ``1' alpha_E = tau``: the
elbow system of the path (:mod:`wsvmgui.ladder.path_linalg`), on the same updated
Cholesky factor.  A support point leaves when its ``alpha`` reaches 0; a positive point
joins when its residual ``d_i = (A alpha)_i + beta - s_i`` (>= 0 off the support)
reaches 0.  At ``tau = N_-`` the tracer holds the path's sets at ``pi = 0`` (E the
support, L the negatives, R the other positives), from which it traces towards 1.

The function works on the tracer's arrays (layouts in :mod:`wsvmgui.ladder._path_kernel`)
and returns a status when Python is needed, as :func:`~wsvmgui.ladder._path_kernel.run`
does: ``ST_ROW`` (a joining point's kernel row is not held; nothing has changed),
``ST_YIELD``, ``ST_GROW_ELBOW``, ``ST_REFACTOR``; ``ST_END`` when done.  Scratch: ``FH``
holds the residuals ``d`` at the current tau and their slopes.
"""

from __future__ import annotations

import math

import numpy as np

from ._path_jit import _jit
from ._path_kernel import (
    E_SET,
    F_BETA0,
    F_NNEG,
    F_RESID,
    F_TAU,
    F_VIOL,
    F_WORK,
    I_M,
    I_NEED,
    I_NPARKED,
    I_REFACTORED,
    I_SINCE_YIELD,
    I_STEP,
    I_ZERO_RUN,
    P_KAPPA,
    P_KMAX,
    P_MAX_ELBOW,
    P_MAX_STEPS,
    P_PATH_TOL,
    P_REFACTOR_TOL,
    P_REFINE_TOL,
    P_RIDGE,
    P_YIELD,
    R_SET,
    ST_CYCLE,
    ST_END,
    ST_GROW_ELBOW,
    ST_ILL,
    ST_MAX_STEPS,
    ST_OK,
    ST_REFACTOR,
    ST_ROW,
    ST_TOO_LARGE,
    ST_YIELD,
    _solve,
    move,
)


@_jit("float64(F2, I1, F1, F2, I1, F2, F2, F1, int64)")
def _residuals(K, slot, prm, S, idx, W, FH, beta, m):
    """``FH[0] = A(., E) W[:, 0] + beta[0] - s``, ``FH[1] = A(., E) W[:, 1] + beta[1]``.

    Returns the largest elbow residual (``|FH[:, E]|``, relative to ``1 + kmax N_-`` and
    ``1 + kmax``), which is zero in exact arithmetic.
    """
    n = S.shape[1]
    F0 = FH[0]
    F1 = FH[1]
    s = S[1]
    for i in range(n):
        F0[i] = beta[0] - s[i]
        F1[i] = beta[1]
    for k in range(m):
        r = K[slot[idx[k]]]
        a0 = W[k, 0]
        a1 = W[k, 1]
        for i in range(n):
            F0[i] += a0 * r[i]
            F1[i] += a1 * r[i]
    ridge = prm[P_RIDGE]
    e0 = 0.0
    e1 = 0.0
    for k in range(m):
        e = idx[k]
        F0[e] += ridge * W[k, 0]
        F1[e] += ridge * W[k, 1]
        e0 = max(e0, abs(F0[e]))
        e1 = max(e1, abs(F1[e]))
    return max(e0, e1)


@_jit("int64(F2, I1, F1, F2, I1, F2, F2, F2, F1, I1, float64)")
def _solve_tau(K, slot, prm, S, idx, R, V, FH, fs, iv, scale):
    """``alpha_E = V[:, 0] + tau V[:, 1]``, ``beta`` in fs, residuals ``d`` in FH; checked.

    One step of iterative refinement when the elbow residual exceeds ``REFINE_TOL``
    (relative to ``scale``); ``ST_REFACTOR`` (once) and then ``ST_ILL`` when it stays above
    ``REFACTOR_TOL`` and ``path_tol / 10``, as :func:`~wsvmgui.ladder._path_kernel.evaluate`.
    """
    m = iv[I_M]
    kappa = prm[P_KAPPA]
    B = np.empty((m, 2))
    for k in range(m):
        B[k, 0] = S[1, idx[k]]
        B[k, 1] = 0.0
    beta = np.empty(2)
    _solve(R, kappa, B, 0.0, 1.0, V, beta, m)
    r = _residuals(K, slot, prm, S, idx, V, FH, beta, m) / scale
    if r > prm[P_REFINE_TOL]:
        dV = np.empty((m, 2))
        dbeta = np.empty(2)
        for k in range(m):
            B[k, 0] = -FH[0, idx[k]]
            B[k, 1] = -FH[1, idx[k]]
        _solve(R, kappa, B, 0.0, 0.0, dV, dbeta, m)
        for k in range(m):
            V[k, 0] += dV[k, 0]
            V[k, 1] += dV[k, 1]
        beta[0] += dbeta[0]
        beta[1] += dbeta[1]
        r = _residuals(K, slot, prm, S, idx, V, FH, beta, m) / scale
    fs[F_RESID] = r
    if r > prm[P_REFACTOR_TOL] and iv[I_REFACTORED] == 0:
        return ST_REFACTOR
    if r > 0.1 * prm[P_PATH_TOL] or math.isnan(r):
        return ST_ILL
    iv[I_REFACTORED] = 0
    fs[F_BETA0] = beta[0]
    return ST_OK


@_jit("int64(F2, I1, F2, F1, B1, F2, I1, F2, I1, I1, F2, F2, F2, F1, I1)", entry=True)
def limit_start(K, slot, pt, prm, state, sd, parked, S, idx, where, R, V, FH, fs, iv):
    """Follow the limit problem's solution in tau up to ``N_-`` (module docstring).

    Expects the tracer at pi = 0, every negative in L, every positive in R or (earlier
    calls) on the elbow, ``fs[F_TAU]`` the current tau; keeps the largest violation met
    (``-min d`` off the elbow, relative to ``1 + kmax N_-``) in ``fs[F_VIOL]``.
    """
    n = state.size
    total = fs[F_NNEG]
    kmax = prm[P_KMAX]
    scale = 1.0 + kmax * total
    dtol = 1e-12 * scale
    atol = 1e-13 * (1.0 + total)
    cap = idx.size
    while True:
        m = iv[I_M]
        if iv[I_STEP] >= prm[P_MAX_STEPS]:
            return ST_MAX_STEPS
        if m > prm[P_MAX_ELBOW]:
            return ST_TOO_LARGE
        if m + 2 > cap:
            return ST_GROW_ELBOW
        if iv[I_SINCE_YIELD] >= prm[P_YIELD]:
            iv[I_SINCE_YIELD] = 0
            return ST_YIELD
        tau = fs[F_TAU]
        if m == 0:
            # tau = 0: the positive point with the largest kernel sum to the negatives.
            j = -1
            best = -math.inf
            for i in range(n):
                if pt[2, i] > 0 and state[i] == R_SET and S[1, i] > best:
                    best = S[1, i]
                    j = i
            if j < 0:
                return ST_ILL
            if slot[j] < 0:
                iv[I_NEED] = j
                return ST_ROW
            if not move(K, slot, pt, prm, state, sd, parked, S, idx, where, R, fs, iv, j, E_SET):
                return ST_ILL
            continue
        st = _solve_tau(K, slot, prm, S, idx, R, V, FH, fs, iv, scale)
        if st != ST_OK:
            return st
        fs[F_WORK] += float(m) * (n + m)
        # The next event as tau grows from its current value.
        best_t = total - tau
        kind = 0
        jb = -1
        viol = 0.0
        for k in range(m):
            a = V[k, 0] + tau * V[k, 1]
            if -a / (1.0 + total) > viol:
                viol = -a / (1.0 + total)
            if V[k, 1] < -atol:
                t = max(a, 0.0) / -V[k, 1]
                if t < best_t:
                    best_t, kind, jb = t, 2, idx[k]
        F0 = FH[0]
        F1 = FH[1]
        for i in range(n):
            if pt[2, i] <= 0 or state[i] != R_SET or sd[0, i] == 0.0:
                continue
            d = F0[i] + tau * F1[i]
            if -d / scale > viol:
                viol = -d / scale
            if F1[i] < -dtol:
                t = max(d, 0.0) / -F1[i]
                if t < best_t:
                    best_t, kind, jb = t, 1, i
        if viol > fs[F_VIOL]:
            fs[F_VIOL] = viol
        if kind != 0 and best_t >= (total - tau) * (1.0 - 1e-12):
            kind = 0
        if kind == 0:
            fs[F_TAU] = total
            for p in range(iv[I_NPARKED]):  # back to R, as they are
                sd[0, parked[p]], sd[1, parked[p]] = 1.0, pt[0, parked[p]]
            iv[I_NPARKED] = 0
            return ST_END
        if kind == 1 and slot[jb] < 0:
            iv[I_NEED] = jb
            return ST_ROW  # nothing has changed: the next call finds the same event
        iv[I_ZERO_RUN] = iv[I_ZERO_RUN] + 1 if best_t == 0.0 else 0
        if iv[I_ZERO_RUN] > 50 + 2 * m:
            return ST_CYCLE
        fs[F_TAU] = tau + best_t
        iv[I_STEP] += 1
        iv[I_SINCE_YIELD] += 1
        if kind == 2:
            move(K, slot, pt, prm, state, sd, parked, S, idx, where, R, fs, iv, jb, R_SET)
        elif not move(K, slot, pt, prm, state, sd, parked, S, idx, where, R, fs, iv, jb, E_SET):
            # Dependent on the support: its residual cannot change while the support does not.
            parked[iv[I_NPARKED]] = jb
            iv[I_NPARKED] += 1
            sd[0, jb], sd[1, jb] = 0.0, 0.0
    return ST_OK  # pragma: no cover - the loop only returns
