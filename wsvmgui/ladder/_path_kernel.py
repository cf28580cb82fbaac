"""Compiled inner loop of the weight path (:mod:`wsvmgui.ladder.path`).

One call of :func:`run` advances a tracer through many breakpoints without returning to
Python: the elbow solve and its residual check, the event search over all n points, the
updates of the elbow system's Cholesky factor, the running sums over L and the breakpoint
records.  It returns a status when Python is needed (progress and cancellation every
``YIELD`` steps, a refactorisation, full buffers, the end, a breakdown).  All state lives
in arrays owned by the caller (layouts below), so the functions hold no Python objects
and release the GIL (``nogil``); they are compiled once per machine and cached on disk
(:func:`~wsvmgui.ladder._path_jit._jit`), with ``fastmath`` off: every operation rounds as in numpy.

Math and conventions are those of :mod:`wsvmgui.ladder.path` and
:mod:`wsvmgui.ladder.path_linalg`: ``c = a * y``; ``side`` is +1 in R, -1 in L, 0 on the
elbow and for parked points; ``sy = side * y``; the elbow system is the upper Cholesky
factor ``R`` of ``A = K_EE + eps I + kappa 11' = R'R`` (``eps`` the ridge), a column
appended for a point that joins, Givens rotations of rows for one that leaves.

Array layouts (n points, cap >= elbow size):

* ``K`` (r, n) and ``slot`` (n,) int64: kernel rows; point j's row is ``K[slot[j]]``
  (``slot[j] < 0``: not held).  For a dense matrix ``K`` is the (n, n) matrix and
  ``slot`` the identity; otherwise ``K`` holds the rows of the elbow points and of some
  recent ones, and the caller stores a missing row when :func:`run` asks (``ST_ROW``).
  Only rows of points on the elbow or joining it are read here (and, in
  :func:`recompute_sums`, those of L: a dense matrix only).
* ``pt`` (4, n): ``y``, ``w`` (multiplicities), ``pos`` (1 for y = +1), ``1 / (w C)``.
* ``prm`` (P_SIZE,): constants, indices ``P_*``.
* ``fs`` (F_SIZE,) floats and ``iv`` (I_SIZE,) ints: mutable scalars, indices ``F_*``, ``I_*``.
* ``state`` (n,) int8 set codes; ``sd`` (2, n): ``side``, ``sy``; ``parked`` (n,) int64.
* ``S`` (4, n): ``sum_{j in L, y_j = +1} w_j (K + eps I)[:, j]`` and the same over
  negatives, kept by compensated (Kahan) summation, whose compensations are rows 2 and 3:
  the rounding error then does not grow with the number of updates.
* ``idx`` (cap,) elbow points in factorisation order, ``where`` (n,) their positions
  (int64); ``R`` (cap, cap) upper triangle;
  ``V`` (cap, 2): ``c_E`` and ``dc_E / dpi``; ``FH`` (2, n): ``f`` and ``df / dpi``.
* Records (breakpoints of one direction, in tracing order): ``rec_f`` (R, 2) pi and b,
  ``rec_p`` (R, 2) start offsets into the value and event buffers, ``rec_merged`` (R,)
  int8; values ``t_idx`` (T,) int64, ``t_val`` (T,); events ``ev`` (Q, 3) int64 (point,
  old set, new set).  A record is *open* from the event that creates it until the next
  solve gives its intercept and elbow values; a closed record at the same pi and
  intercept as the previous one is merged into it (values appended, the later ones win).
"""

from __future__ import annotations

import math

import numpy as np

from ._path_jit import _jit

#: Set codes: right of the elbow (c = 0), on the elbow, left of it (c at its bound).
R_SET, E_SET, L_SET = 0, 1, 2

# prm: constants of one tracer.
P_C, P_RIDGE, P_KAPPA, P_RANK_TOL, P_PATH_TOL, P_KMAX, P_WRATIO, P_WMAX = range(8)
P_SGN, P_MAX_STEPS, P_REFINE_TOL, P_REFACTOR_TOL, P_REFACTOR_EVERY = range(8, 13)
P_SUM_REFRESH, P_DUAL_TOL, P_END_TIE, P_END_ABS, P_YIELD, P_MAX_ELBOW = range(13, 19)
P_SIZE = 19
# fs: float scalars.
F_PI, F_B, F_NPOS, F_NNEG, F_MAX_MARGIN, F_MAX_DUAL, F_BETA0, F_BETA1 = range(8)
F_RESID, F_VIOL, F_DUAL, F_END_DEV, F_WORK, F_PEND_T, F_TAU = range(8, 15)
F_SIZE = 15
# iv: int scalars.
I_M, I_UPDATES, I_SUM_UPDATES, I_NPARKED, I_MAX_ELBOW, I_REFINES = range(6)
I_REFACTORED, I_ZERO_RUN, I_STEP, I_NREC, I_NT, I_NEV, I_OPEN, I_SINCE_YIELD = range(6, 14)
I_NEED, I_PENDING, I_PEND_KIND, I_PEND_J = range(14, 18)
I_SIZE = 18

# Statuses of run() and evaluate().
ST_OK, ST_END, ST_YIELD, ST_GROW, ST_GROW_ELBOW, ST_REFACTOR = range(6)
ST_ILL, ST_KKT, ST_CYCLE, ST_MAX_STEPS, ST_NO_JOIN, ST_TOO_LARGE = range(6, 12)
ST_ROW, ST_REFRESH = range(12, 14)


# ----------------------------------------------------------------------------------------
# The elbow system
# ----------------------------------------------------------------------------------------
@_jit("boolean(F2, I1, F1, I1, I1, F2, I1, int64)", entry=True)
def elbow_add(K, slot, prm, idx, where, R, iv, j):
    """Append point j to the elbow (a column of the Cholesky factor); False if dependent.

    The new column ``l`` solves ``R' l = a`` (``a = K[E, j] + kappa``); the pivot
    ``d = alpha - l'l`` (``alpha = K_jj + eps + kappa``) is the Schur complement that adding
    j creates.  Below ``rank_tol * alpha`` the point is dependent and nothing changes.
    """
    m = iv[I_M]
    ridge, kappa = prm[P_RIDGE], prm[P_KAPPA]
    Kj = K[slot[j]]
    alpha = Kj[j] + ridge + kappa
    d = alpha
    if m:
        col = np.empty(m)
        for k in range(m):
            col[k] = Kj[idx[k]] + kappa
        for k in range(m):  # R' col = a, by columns of R' (rows of R)
            Rk = R[k]
            z = col[k] / Rk[k]
            col[k] = z
            d -= z * z
            for i in range(k + 1, m):
                col[i] -= Rk[i] * z
        if not d > prm[P_RANK_TOL] * alpha:
            return False
        for k in range(m):
            R[k, m] = col[k]
    elif not d > 0:
        return False
    R[m, m] = math.sqrt(d)
    idx[m] = j
    where[j] = m
    iv[I_M] = m + 1
    iv[I_UPDATES] += 1
    if m + 1 > iv[I_MAX_ELBOW]:
        iv[I_MAX_ELBOW] = m + 1
    return True


@_jit("void(I1, I1, F2, I1, int64)")
def elbow_remove(idx, where, R, iv, j):
    """Remove point j from the elbow: its column of the factor, then Givens rotations.

    Deleting column p of ``R`` leaves an upper Hessenberg matrix (rows below p gain one
    entry left of the diagonal); rotating rows (k, k + 1) for k = p, ..., m - 2 restores
    an upper triangle with a positive diagonal and empties the last row.  O(m (m - p)),
    on contiguous rows.
    """
    m = iv[I_M]
    p = where[j]
    where[j] = -1
    for r in range(m):
        Rr = R[r]
        for c in range(max(r, p + 1), m):
            Rr[c - 1] = Rr[c]
    for k in range(p, m - 1):
        Rk = R[k]
        Rn = R[k + 1]
        a = Rk[k]
        b = Rn[k]
        h = math.hypot(a, b)
        c = a / h
        s = b / h
        Rk[k] = h
        Rn[k] = 0.0
        for col in range(k + 1, m - 1):
            x = Rk[col]
            z = Rn[col]
            Rk[col] = c * x + s * z
            Rn[col] = c * z - s * x
    for r in range(p + 1, m):
        idx[r - 1] = idx[r]
        where[idx[r - 1]] = r - 1
    iv[I_M] = m - 1
    iv[I_UPDATES] += 1


@_jit("void(F2, int64, F2)")
def _chol_solve3(R, m, X):
    """``X[c, :m] <- A^-1 X[c, :m]`` (c = 0, 1, 2) for ``A = R'R``, one sweep of R each way.

    Forward ``R'z = x`` by columns of ``R'`` (contiguous rows of ``R``), then back
    ``R x = z`` by dot products with the rows; the three right-hand sides share every
    read of ``R`` (O(m^2) memory traffic, the cost on large elbows).
    """
    x0 = X[0]
    x1 = X[1]
    x2 = X[2]
    for k in range(m):
        Rk = R[k]
        d = Rk[k]
        z0 = x0[k] / d
        z1 = x1[k] / d
        z2 = x2[k] / d
        x0[k] = z0
        x1[k] = z1
        x2[k] = z2
        for i in range(k + 1, m):
            r = Rk[i]
            x0[i] -= r * z0
            x1[i] -= r * z1
            x2[i] -= r * z2
    for k in range(m - 1, -1, -1):
        Rk = R[k]
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        i = k + 1
        while i + 1 < m:  # two interleaved partial sums per right-hand side
            r = Rk[i]
            q = Rk[i + 1]
            s0 += r * x0[i]
            s1 += r * x1[i]
            s2 += r * x2[i]
            t0 += q * x0[i + 1]
            t1 += q * x1[i + 1]
            t2 += q * x2[i + 1]
            i += 2
        if i < m:
            r = Rk[i]
            s0 += r * x0[i]
            s1 += r * x1[i]
            s2 += r * x2[i]
        d = Rk[k]
        x0[k] = (x0[k] - (s0 + t0)) / d
        x1[k] = (x1[k] - (s1 + t1)) / d
        x2[k] = (x2[k] - (s2 + t2)) / d


@_jit("void(F2, float64, F2, float64, float64, F2, F1, int64)")
def _solve(R, kappa, B, q0, q1, V, beta, m):
    """Solve ``K_EE v + beta 1 = r, 1'v = q`` for two right-hand sides (``B`` (m, 2)).

    ``v = A^-1 r + gamma A^-1 1``, ``gamma = (q - 1'A^-1 r) / (1'A^-1 1)``, ``beta = kappa q
    - gamma`` (:mod:`wsvmgui.ladder.path_linalg`); ``A^-1 1`` is solved for together with
    ``B`` (it changes with every elbow change).
    """
    X = np.empty((3, m))
    for k in range(m):
        X[0, k] = B[k, 0]
        X[1, k] = B[k, 1]
        X[2, k] = 1.0
    _chol_solve3(R, m, X)
    w0s = 0.0
    w1s = 0.0
    us = 0.0
    for k in range(m):
        w0s += X[0, k]
        w1s += X[1, k]
        us += X[2, k]
    g0 = (q0 - w0s) / us
    g1 = (q1 - w1s) / us
    for k in range(m):
        V[k, 0] = X[0, k] + X[2, k] * g0
        V[k, 1] = X[1, k] + X[2, k] * g1
    beta[0] = kappa * q0 - g0
    beta[1] = kappa * q1 - g1


# ----------------------------------------------------------------------------------------
# Sets and running sums
# ----------------------------------------------------------------------------------------
@_jit("void(F2, I1, F2, F1, B1, F2, F1, I1)", entry=True)
def recompute_sums(K, slot, pt, prm, state, S, fs, iv):
    """Sums over L from scratch, compensations zero (and ``n_pos``, ``n_neg``)."""
    n = state.size
    ridge = prm[P_RIDGE]
    S[:, :] = 0.0
    npos = 0.0
    nneg = 0.0
    for j in range(n):
        if state[j] != L_SET:
            continue
        wj = pt[1, j]
        row = 0 if pt[2, j] > 0 else 1
        if row == 0:
            npos += wj
        else:
            nneg += wj
        Kj = K[slot[j]]
        for i in range(n):
            S[row, i] += wj * Kj[i]
        S[row, j] += ridge * wj
    fs[F_NPOS] = npos
    fs[F_NNEG] = nneg
    iv[I_SUM_UPDATES] = 0


@_jit("void(F2, B1, F2, I1, I1)")
def _unpark(pt, state, sd, parked, iv):
    for p in range(iv[I_NPARKED]):
        j = parked[p]
        s = 1.0 if state[j] == R_SET else -1.0
        sd[0, j] = s
        sd[1, j] = s * pt[0, j]
    iv[I_NPARKED] = 0


@_jit("boolean(F2, I1, F2, F1, B1, F2, I1, F2, I1, I1, F2, F1, I1, int64, int64)", entry=True)
def move(K, slot, pt, prm, state, sd, parked, S, idx, where, R, fs, iv, j, new):
    """Move point j to set ``new``; False (nothing changed) if the elbow refuses it."""
    old = state[j]
    if old == new:
        return True
    if new == E_SET and not elbow_add(K, slot, prm, idx, where, R, iv, j):
        return False
    if old == E_SET:
        elbow_remove(idx, where, R, iv, j)
    if old == L_SET or new == L_SET:  # the running sums over L
        wj = pt[1, j] if new == L_SET else -pt[1, j]
        row = 0 if pt[2, j] > 0 else 1
        Kj = K[slot[j]]
        Sr = S[row]
        Cr = S[row + 2]  # Kahan: what the running sum has lost to rounding
        for i in range(Sr.size):
            v = wj * Kj[i] - Cr[i]
            t = Sr[i] + v
            Cr[i] = (t - Sr[i]) - v
            Sr[i] = t
        Sr[j] += wj * prm[P_RIDGE]
        fs[F_NPOS + row] += wj
        iv[I_SUM_UPDATES] += 1
    state[j] = new
    s = 1.0 if new == R_SET else (-1.0 if new == L_SET else 0.0)
    sd[0, j] = s
    sd[1, j] = s * pt[0, j]
    if iv[I_NPARKED]:
        _unpark(pt, state, sd, parked, iv)
    return True


# ----------------------------------------------------------------------------------------
# The solution at the current pi
# ----------------------------------------------------------------------------------------
@_jit("float64(F2, I1, F2, F2, float64, int64)")
def _elbow_residual(pt, idx, FH, res, hscale, m):
    """Residuals ``y_E - f_E`` and ``-h_E`` of the elbow equations (into res); the max.

    The max is of ``|y_E - f_E|`` and ``|h_E| / hscale``; NaN if any residual is NaN.
    """
    e0 = 0.0
    e1 = 0.0
    for k in range(m):
        e = idx[k]
        res[k, 0] = pt[0, e] - FH[0, e]
        res[k, 1] = -FH[1, e]
        e0 = max(e0, abs(res[k, 0]))
        e1 = max(e1, abs(res[k, 1]))
        if math.isnan(res[k, 0]) or math.isnan(res[k, 1]):
            return math.nan
    return max(e0, e1 / hscale)


@_jit(
    "void(F2, I1, F1, F2, I1, F2, F2, float64, float64, float64, float64, float64, int64, boolean)"
)
def _accumulate(K, slot, prm, S, idx, W, FH, c00, c01, C, b0, b1, m, fresh):
    """``f``, ``h`` at all n points (``fresh``) or their correction by ``(W, b)``.

    ``f = c00 S_0 + c01 S_1 + (K + eps I)(., E) W[:, 0] + b0``, ``h = -C (S_0 + S_1) +
    (K + eps I)(., E) W[:, 1] + b1``; without ``fresh`` only the last two terms are added.
    """
    n = S.shape[1]
    F0 = FH[0]
    F1 = FH[1]
    if fresh:
        S0 = S[0]
        S1 = S[1]
        for i in range(n):
            F0[i] = c00 * S0[i] + c01 * S1[i] + b0
            F1[i] = -C * S0[i] - C * S1[i] + b1
    else:
        for i in range(n):
            F0[i] += b0
            F1[i] += b1
    k = 0
    while k + 3 < m:  # four elbow rows per sweep: a quarter of the traffic on FH
        ra = K[slot[idx[k]]]
        rb = K[slot[idx[k + 1]]]
        rc = K[slot[idx[k + 2]]]
        rd = K[slot[idx[k + 3]]]
        a0, a1 = W[k, 0], W[k, 1]
        z0, z1 = W[k + 1, 0], W[k + 1, 1]
        p0, p1 = W[k + 2, 0], W[k + 2, 1]
        q0, q1 = W[k + 3, 0], W[k + 3, 1]
        for i in range(n):
            F0[i] += (a0 * ra[i] + z0 * rb[i]) + (p0 * rc[i] + q0 * rd[i])
            F1[i] += (a1 * ra[i] + z1 * rb[i]) + (p1 * rc[i] + q1 * rd[i])
        k += 4
    while k < m:
        r = K[slot[idx[k]]]
        a0, a1 = W[k, 0], W[k, 1]
        for i in range(n):
            F0[i] += a0 * r[i]
            F1[i] += a1 * r[i]
        k += 1
    ridge = prm[P_RIDGE]
    if ridge != 0.0:
        for k in range(m):
            F0[idx[k]] += ridge * W[k, 0]
            F1[idx[k]] += ridge * W[k, 1]


@_jit("int64(F2, I1, F2, F1, F2, I1, F2, F2, F2, F1, I1)", entry=True)
def evaluate(K, slot, pt, prm, S, idx, R, V, FH, fs, iv):
    """``c_E``, ``dc_E/dpi`` (V), ``b``, ``db/dpi`` (fs) and ``f``, ``h`` (FH) at the current pi.

    The elbow equations' residual (max of ``|y_E - f_E|`` and ``|h_E| / hscale``) comes with
    the decision values.  Above ``REFINE_TOL`` a step of iterative refinement is taken;
    above ``REFACTOR_TOL`` (at once or after one refinement) the caller must refactorise
    (``ST_REFACTOR``) and call again; after a refactorisation and two refinements, above
    ``path_tol / 10`` it is ``ST_ILL``.  With an empty elbow only ``f`` is computed (``h``
    is NaN).
    """
    n = S.shape[1]
    C = prm[P_C]
    pi = fs[F_PI]
    c00 = C * (1.0 - pi)
    c01 = -C * pi
    m = iv[I_M]
    if m == 0:
        b = fs[F_B]
        for i in range(n):
            FH[0, i] = c00 * S[0, i] + c01 * S[1, i] + b
            FH[1, i] = math.nan
        return ST_OK
    if iv[I_UPDATES] >= prm[P_REFACTOR_EVERY] and iv[I_REFACTORED] == 0:
        return ST_REFACTOR
    npos, nneg = fs[F_NPOS], fs[F_NNEG]
    q0 = -C * ((1.0 - pi) * npos - pi * nneg)
    q1 = C * (npos + nneg)
    kappa = prm[P_KAPPA]
    B = np.empty((m, 2))
    for k in range(m):
        e = idx[k]
        B[k, 0] = pt[0, e] - (c00 * S[0, e] + c01 * S[1, e])
        B[k, 1] = C * S[0, e] + C * S[1, e]
    beta = np.empty(2)
    _solve(R, kappa, B, q0, q1, V, beta, m)
    _accumulate(K, slot, prm, S, idx, V, FH, c00, c01, C, beta[0], beta[1], m, True)
    hscale = 1.0 + C * (npos + nneg + prm[P_WMAX]) * prm[P_KMAX]
    res = B  # reused
    r = _elbow_residual(pt, idx, FH, res, hscale, m)
    dV = np.empty((m, 2))
    dbeta = np.empty(2)
    attempt = 0
    while True:
        if attempt == 0:
            thr = prm[P_REFINE_TOL]
        elif attempt == 1:
            thr = prm[P_REFACTOR_TOL]
        else:
            thr = 0.1 * prm[P_PATH_TOL]
        if r <= thr:
            break
        fs[F_RESID] = r
        if attempt == 2:
            return ST_ILL
        if (attempt == 1 or not r <= prm[P_REFACTOR_TOL]) and iv[I_REFACTORED] == 0:
            return ST_REFACTOR
        _solve(R, kappa, res, 0.0, 0.0, dV, dbeta, m)
        for k in range(m):
            V[k, 0] += dV[k, 0]
            V[k, 1] += dV[k, 1]
        beta[0] += dbeta[0]
        beta[1] += dbeta[1]
        _accumulate(K, slot, prm, S, idx, dV, FH, c00, c01, C, dbeta[0], dbeta[1], m, False)
        iv[I_REFINES] += 1
        r = _elbow_residual(pt, idx, FH, res, hscale, m)
        attempt += 1
    iv[I_REFACTORED] = 0
    fs[F_BETA0] = beta[0]
    fs[F_BETA1] = beta[1]
    return ST_OK


# ----------------------------------------------------------------------------------------
# One step: the next event
# ----------------------------------------------------------------------------------------
@_jit("UniTuple(int64, 2)(F2, F1, B1, F2, I1, I1, F2, F2, F1, I1, F1)")
def _next_event(pt, prm, state, sd, parked, idx, V, FH, fs, iv, out):
    """Step length, kind (0 end, 1 enter, 2 zero, 3 upper) and point of the next event.

    Writes ``out[0] = t`` and returns ``(kind, j)``; records the largest margin violation
    off the elbow (parked points included) and the largest violation of the elbow duals'
    bounds in ``fs``.
    """
    n = state.size
    sgn = prm[P_SGN]
    pi = fs[F_PI]
    C = prm[P_C]
    npos, nneg = fs[F_NPOS], fs[F_NNEG]
    t_end = (1.0 - pi) if sgn > 0 else pi
    m = iv[I_M]
    sdc = 0.0
    for k in range(m):
        sdc += abs(V[k, 1])
    dtol = 1e-12 * (1.0 + prm[P_KMAX] * (C * (npos + nneg) + sdc))
    best_t = t_end
    kind = 0
    jb = -1
    # Points of L and R reaching their margin: the gap g = side (y f - 1) >= 0 closes at
    # rate v; the first (smallest index) of the smallest g / v wins.  g < 0 is a margin
    # violation.  (The product test only skips divisions that cannot win.)
    viol = 0.0
    tmin = math.inf
    jmin = -1
    F0 = FH[0]
    F1 = FH[1]
    side = sd[0]
    sy = sd[1]
    for i in range(n):
        g = sy[i] * F0[i] - side[i]
        if -g > viol:
            viol = -g
        v = -sgn * (sy[i] * F1[i])
        if v > dtol:
            if g < 0.0:
                g = 0.0
            if g <= tmin * v * (1.0 + 1e-12):
                r = g / v
                if r < tmin:
                    tmin = r
                    jmin = i
    for p in range(iv[I_NPARKED]):
        j = parked[p]
        s = 1.0 if state[j] == R_SET else -1.0
        g = s * (pt[0, j] * F0[j] - 1.0)
        if -g > viol:
            viol = -g
    fs[F_VIOL] = viol
    if jmin >= 0 and tmin < best_t:
        best_t, kind, jb = tmin, 1, jmin
    dual = 0.0
    if m:
        etol = 1e-13 * (npos + nneg + 1.0) * prm[P_WRATIO]
        gmin = math.inf
        kmin = -1
        for k in range(m):
            e = idx[k]
            ye = pt[0, e]
            a = V[k, 0] * pt[3, e] * ye  # a and da relative to the largest bound w C
            da = V[k, 1] * pt[3, e] * ye * sgn
            room = pt[2, e] - ye * pi - a  # U / (w C) - a
            if -a > dual:
                dual = -a
            if -room > dual:
                dual = -room
            rate = -da
            if rate > etol:
                g = (a if a > 0.0 else 0.0) / rate
                if g < gmin:
                    gmin = g
                    kmin = 2 * k
            rate = da + sgn * ye  # d(a - U)/dt, relative (dU/dpi = -C w y)
            if rate > etol:
                g = (room if room > 0.0 else 0.0) / rate
                if g < gmin:
                    gmin = g
                    kmin = 2 * k + 1
        if kmin >= 0 and gmin < best_t:
            best_t = gmin
            kind = 3 if kmin % 2 else 2
            jb = idx[kmin // 2]
    fs[F_DUAL] = dual
    # Near either end every margin and every dual vanishes like the distance to it, so
    # they all "hit" together with the end; ties with the end are the end.
    if kind != 0 and (best_t >= t_end * (1.0 - prm[P_END_TIE]) or t_end <= prm[P_END_ABS]):
        best_t, kind, jb = t_end, 0, -1
    out[0] = best_t
    return kind, jb


# ----------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------
@_jit("void(F2, I2, I2, I1, float64, int64, int64, int64)")
def _open(rec_f, rec_p, ev, iv, pi, j, old, new):
    """Open a record at pi with the event (j: old -> new); no event when j < 0."""
    k = iv[I_NREC]
    rec_f[k, 0] = pi
    rec_f[k, 1] = math.nan
    rec_p[k, 0] = iv[I_NT]
    rec_p[k, 1] = iv[I_NEV]
    iv[I_NREC] = k + 1
    iv[I_OPEN] = 1
    if j >= 0:
        q = iv[I_NEV]
        ev[q, 0] = j
        ev[q, 1] = old
        ev[q, 2] = new
        iv[I_NEV] = q + 1


@_jit("void(F2, I2, B1, I1, F1, I1, F2, I1, float64, boolean)")
def _close(rec_f, rec_p, rec_merged, t_idx, t_val, idx, V, iv, b, with_elbow):
    """Close the open record with intercept b (and the elbow values); merge if nothing moved."""
    k = iv[I_NREC] - 1
    rec_f[k, 1] = b
    rec_merged[k] = 0
    if with_elbow:
        q = iv[I_NT]
        for p in range(iv[I_M]):
            t_idx[q + p] = idx[p]
            t_val[q + p] = V[p, 0]
        iv[I_NT] = q + iv[I_M]
    iv[I_OPEN] = 0
    if k >= 1:
        lb = rec_f[k - 1, 1]
        if rec_f[k, 0] == rec_f[k - 1, 0] and abs(b - lb) <= 1e-12 * (1.0 + abs(b)):
            rec_merged[k - 1] = 1  # record k's values and events follow k - 1's
            iv[I_NREC] = k


# ----------------------------------------------------------------------------------------
# Tracing
# ----------------------------------------------------------------------------------------
@_jit("int64(F2, I1, F2, F1, B1, F2, I1, F2, I1, I1, F2, F2, F2, F1, I1, F2, I2, B1, I1, F1, I2)")
def _empty_elbow(
    K, slot, pt, prm, state, sd, parked, S, idx, where, R, V, FH, fs, iv,
    rec_f, rec_p, rec_merged, t_idx, t_val, ev,
):  # fmt: skip
    """Empty elbow: b moves at fixed pi until a point reaches its margin and joins.

    Closes the open record at the intercept where the elbow emptied.  Returns ``ST_ROW``
    (nothing changed that a second call would not repeat identically) when the joining
    point's row is not held, ``ST_NO_JOIN`` when no point can join.
    """
    sgn = prm[P_SGN]
    b_before = fs[F_B]
    if iv[I_OPEN]:
        k = iv[I_NREC] - 1
        if math.isfinite(rec_f[k, 1]):
            b_before = rec_f[k, 1]
        _close(rec_f, rec_p, rec_merged, t_idx, t_val, idx, V, iv, b_before, False)
    fs[F_B] = b_before
    _unpark(pt, state, sd, parked, iv)
    evaluate(K, slot, pt, prm, S, idx, R, V, FH, fs, iv)
    gmin = math.inf
    j = -1
    for i in range(state.size):
        if sd[1, i] == sgn:
            g = sd[1, i] * FH[0, i] - sd[0, i]
            if g < gmin:
                gmin = g
                j = i
    if j < 0 or not math.isfinite(gmin):
        return ST_NO_JOIN
    if slot[j] < 0:
        iv[I_NEED] = j
        return ST_ROW
    fs[F_B] = b_before - sgn * max(gmin, 0.0)
    old = state[j]
    move(K, slot, pt, prm, state, sd, parked, S, idx, where, R, fs, iv, j, E_SET)
    _open(rec_f, rec_p, ev, iv, fs[F_PI], j, old, E_SET)
    return ST_OK


@_jit("void(F1, F2, F1, I1, F2, I2, B1, I1, F1, I2, I1, float64, float64, int64)")
def _finish(prm, V, fs, iv, rec_f, rec_p, rec_merged, t_idx, t_val, ev, idx, b, db, m):
    """The last segment, extended to pi = 0 or 1; its deviation from the limits in fs."""
    sgn = prm[P_SGN]
    end_pi = 1.0 if sgn > 0 else 0.0
    dpi = end_pi - fs[F_PI]
    _open(rec_f, rec_p, ev, iv, end_pi, -1, 0, 0)
    dev = 0.0
    q = iv[I_NT]
    for p in range(m):
        c = V[p, 0] + dpi * V[p, 1]
        t_idx[q + p] = idx[p]
        t_val[q + p] = c
        dev = max(dev, abs(c))
    iv[I_NT] = q + m
    b_end = b + dpi * db
    _close(rec_f, rec_p, rec_merged, t_idx, t_val, idx, V, iv, b_end, False)
    target = 1.0 if end_pi == 0.0 else -1.0
    fs[F_END_DEV] = max(dev / (prm[P_C] * prm[P_WMAX]), abs(b_end - target))
    fs[F_B] = b_end


@_jit(
    "int64(F2, I1, F2, F1, B1, F2, I1, F2, I1, I1, F2, F2, F2, F1, I1, F2, I2, B1, I1, F1, I2)",
    entry=True,
)
def run(
    K, slot, pt, prm, state, sd, parked, S, idx, where, R, V, FH, fs, iv,
    rec_f, rec_p, rec_merged, t_idx, t_val, ev,
):  # fmt: skip
    """Trace towards pi = 1 (``prm[P_SGN] = +1``) or 0 until a status needs the caller.

    ``ST_ROW``: point ``iv[I_NEED]`` joins the elbow and its row is not held; the step is
    kept pending (``iv[I_PENDING]``) and resumes, not solved again, once the row is
    stored.  ``ST_REFRESH``: the sums over L are due to be recomputed from scratch.
    """
    sgn = prm[P_SGN]
    cap = idx.size
    out = np.empty(1)
    while True:
        m = iv[I_M]
        if iv[I_STEP] >= prm[P_MAX_STEPS]:
            return ST_MAX_STEPS
        if m > prm[P_MAX_ELBOW]:
            return ST_TOO_LARGE
        if iv[I_SINCE_YIELD] >= prm[P_YIELD]:
            iv[I_SINCE_YIELD] = 0
            return ST_YIELD
        if iv[I_SUM_UPDATES] > prm[P_SUM_REFRESH]:
            return ST_REFRESH
        if (
            iv[I_NREC] + 4 > rec_f.shape[0]
            or iv[I_NT] + 2 * m + 8 > t_idx.size
            or iv[I_NEV] + 4 > ev.shape[0]
        ):
            return ST_GROW
        if m + 2 > cap:
            return ST_GROW_ELBOW
        if iv[I_PENDING]:
            # Resume the step whose joining point's row was missing: V, FH, b are current.
            iv[I_PENDING] = 0
            kind, j, t = iv[I_PEND_KIND], iv[I_PEND_J], fs[F_PEND_T]
            b, db = fs[F_BETA0], fs[F_BETA1]
        else:
            if m == 0:
                st = _empty_elbow(
                    K, slot, pt, prm, state, sd, parked, S, idx, where, R, V, FH, fs, iv,
                    rec_f, rec_p, rec_merged, t_idx, t_val, ev,
                )  # fmt: skip
                if st != ST_OK:
                    return st
                m = iv[I_M]
            st = evaluate(K, slot, pt, prm, S, idx, R, V, FH, fs, iv)
            if st != ST_OK:
                return st
            fs[F_WORK] += float(m) * (state.size + m)  # the O(n m + m^2) of a step
            b, db = fs[F_BETA0], fs[F_BETA1]
            fs[F_B] = b
            kind, j = _next_event(pt, prm, state, sd, parked, idx, V, FH, fs, iv, out)
            t = out[0]
            viol, dual = fs[F_VIOL], fs[F_DUAL]
            if viol > fs[F_MAX_MARGIN]:
                fs[F_MAX_MARGIN] = viol
            if dual > fs[F_MAX_DUAL]:
                fs[F_MAX_DUAL] = dual
            if viol > prm[P_PATH_TOL] or dual > prm[P_DUAL_TOL]:
                return ST_KKT
            if kind == 1 and slot[j] < 0:
                iv[I_PENDING], iv[I_PEND_KIND], iv[I_PEND_J], iv[I_NEED] = 1, kind, j, j
                fs[F_PEND_T] = t
                return ST_ROW
        if iv[I_OPEN]:
            _close(rec_f, rec_p, rec_merged, t_idx, t_val, idx, V, iv, b, True)
        if kind == 0:
            _finish(prm, V, fs, iv, rec_f, rec_p, rec_merged, t_idx, t_val, ev, idx, b, db, m)
            return ST_END
        pi = fs[F_PI]
        new_pi = min(max(pi + sgn * t, 0.0), 1.0)
        iv[I_ZERO_RUN] = iv[I_ZERO_RUN] + 1 if new_pi == pi else 0
        if iv[I_ZERO_RUN] > 50 + 2 * m:
            return ST_CYCLE
        fs[F_PI] = new_pi
        iv[I_STEP] += 1
        iv[I_SINCE_YIELD] += 1
        if kind == 1:
            old = state[j]
            if not move(K, slot, pt, prm, state, sd, parked, S, idx, where, R, fs, iv, j, E_SET):
                # Dependent on the elbow: its margin cannot move while the elbow is unchanged.
                parked[iv[I_NPARKED]] = j
                iv[I_NPARKED] += 1
                sd[0, j] = 0.0
                sd[1, j] = 0.0
                continue
            _open(rec_f, rec_p, ev, iv, new_pi, j, old, E_SET)
        else:
            new = R_SET if kind == 2 else L_SET
            move(K, slot, pt, prm, state, sd, parked, S, idx, where, R, fs, iv, j, new)
            value = 0.0 if new == R_SET else pt[1, j] * prm[P_C] * (pt[2, j] - new_pi)
            _open(rec_f, rec_p, ev, iv, new_pi, j, E_SET, new)
            t_idx[iv[I_NT]] = j
            t_val[iv[I_NT]] = value
            iv[I_NT] += 1
        if iv[I_M] == 0:
            rec_f[iv[I_NREC] - 1, 1] = b + sgn * t * db  # where the last elbow point left
