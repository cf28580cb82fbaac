"""Compiled loop of the non-crossing repair (:mod:`wsvmgui.ladder.noncrossing_active`).

One call of :func:`repair` runs the whole active-set method for one weight: the choice of
the most violated row, the homotopy in its multiplier with its events, the solves of the
small step system and the decision-value updates, without returning to Python.  Math,
notation and set codes are those of :mod:`wsvmgui.ladder.noncrossing_active`.  Compiled
once per machine and cached on disk where a writable cache exists (as the path's kernels,
:mod:`wsvmgui.ladder._path_kernel`), ``nogil`` and without ``fastmath``.

Array layouts (n points, m rows; every row has one or two points):

* ``K`` (n, n): the kernel matrix (with the path's ridge); ``y``, ``U`` (n,): labels and
  dual bounds.
* ``rpt`` (m, 2) int64: the row's points (-1 for none); ``rw`` (m, 2): their coefficients
  (sum 1); ``r`` (m,): the coefficient of ``s``; ``eps`` (m,): the row's margin.
* ``state`` (n,) int8 set codes; ``a`` (n,) duals; ``mu`` (m,) multipliers; ``active``
  (m,) int8; ``f`` (n,) decision values.
* ``fs`` floats ``[b, s]``; ``iv`` ints ``[events, rows taken]``; ``prm``: constants
  ``P_*``.
"""

from __future__ import annotations

import numpy as np

from ._path_jit import _jit

R_SET, E_SET, L_SET = 0, 1, 2

# prm: constants.
P_D, P_TOL, P_DEP_TOL, P_PIVOT_TOL, P_MAX_EVENTS, P_REFRESH, P_MAX_ZERO, P_SCALE = range(8)
P_SIZE = 8
# fs, iv.
F_B, F_S = 0, 1
I_EVENTS, I_ROWS = 0, 1

# Statuses.
ST_OK, ST_SINGULAR, ST_NO_EVENT, ST_MAX_EVENTS, ST_ZERO_STEPS = range(5)
STATUS_TEXT = {
    ST_SINGULAR: "the step system is singular (dependent rows or a kernel of low rank)",
    ST_NO_EVENT: "the homotopy has no event (unbounded step)",
    ST_MAX_EVENTS: "too many steps",
    ST_ZERO_STEPS: "too many consecutive zero-length steps (cycling)",
}


@_jit("float64(F2, F1)")
def _lu_solve(M, rhs):
    """Solve ``M x = rhs`` in place (Gaussian elimination, partial pivoting); rhs (k, w).

    ``M`` is overwritten; ``rhs`` holds the solutions on return.  Returns the smallest
    pivot over the largest (0 when singular).
    """
    w = M.shape[0]
    big = 0.0
    small = np.inf
    k_rhs = rhs.size // w if w else 0
    for col in range(w):
        p = col
        best = abs(M[col, col])
        for i in range(col + 1, w):
            v = abs(M[i, col])
            if v > best:
                best, p = v, i
        if best == 0.0:
            return 0.0
        big = max(big, best)
        small = min(small, best)
        if p != col:
            for j in range(w):
                M[col, j], M[p, j] = M[p, j], M[col, j]
            for q in range(k_rhs):
                rhs[q * w + col], rhs[q * w + p] = rhs[q * w + p], rhs[q * w + col]
        piv = M[col, col]
        for i in range(col + 1, w):
            fct = M[i, col] / piv
            if fct != 0.0:
                for j in range(col + 1, w):
                    M[i, j] -= fct * M[col, j]
                for q in range(k_rhs):
                    rhs[q * w + i] -= fct * rhs[q * w + col]
    for q in range(k_rhs):
        for i in range(w - 1, -1, -1):
            acc = rhs[q * w + i]
            for j in range(i + 1, w):
                acc -= M[i, j] * rhs[q * w + j]
            rhs[q * w + i] = acc / M[i, i]
    return small / big if big > 0 else 0.0


@_jit("void(F1, I2, F2, F1, B1, float64, F1, F1)")
def _coef(y, rpt, rw, a, active, d, mu, c):
    """Kernel coefficients ``c = y a - d R' mu`` (n,)."""
    n = y.size
    for i in range(n):
        c[i] = y[i] * a[i]
    for e in range(active.size):
        if active[e] and mu[e] != 0.0:
            for q in range(2):
                p = rpt[e, q]
                if p >= 0:
                    c[p] -= d * rw[e, q] * mu[e]


@_jit("void(F2, F1, float64, F1)")
def _decision(K, c, b, f):
    """``f = K c + b`` over the nonzero coefficients."""
    n = c.size
    for i in range(n):
        f[i] = b
    for j in range(n):
        cj = c[j]
        if cj != 0.0:
            Kj = K[j]  # K symmetric: column j is row j
            for i in range(n):
                f[i] += cj * Kj[i]


@_jit("float64(I2, F2, F1, F1, float64, float64, int64)")
def _row_value(rpt, rw, r, f, d, s, e):
    """``d (R f)_e + r_e s`` (the row's value without its margin)."""
    v = 0.0
    for q in range(2):
        p = rpt[e, q]
        if p >= 0:
            v += rw[e, q] * f[p]
    return d * v + r[e] * s


@_jit("float64(F2, F1, F1, B1, F1)")
def _l_part(K, y, U, state, kcl):
    """``kcl = K c_L`` (n,), the kernel times the L points' coefficients; returns their sum."""
    n = y.size
    for j in range(n):
        if state[j] == L_SET:
            cj = y[j] * U[j]
            Kj = K[j]
            for i in range(n):
                kcl[i] += cj * Kj[i]
    sum_cl = 0.0
    for j in range(n):
        if state[j] == L_SET:
            sum_cl += y[j] * U[j]
    return sum_cl


@_jit("int64(B1, B1)")
def _n_columns(state, active):
    """Columns of the step system: the E points and the active rows."""
    w = 0
    for i in range(state.size):
        if state[i] == E_SET:
            w += 1
    for e in range(active.size):
        if active[e]:
            w += 1
    return w


@_jit("void(F1, I2, F2, B1, B1, float64, int64, I1, I1, I2, F2)")
def _columns(y, rpt, rw, state, active, d, star, cols, kind, cp, cc):
    """Fill the columns (w,): the E point or active row ``cols``, ``kind`` (0 point, 1 row),
    and each column as up to two (point ``cp``, coefficient ``cc``) pairs (w + 1, 2), the
    driving row's last."""
    n = y.size
    w = cols.size
    k = 0
    for i in range(n):
        if state[i] == E_SET:
            cols[k] = i
            kind[k] = 0
            k += 1
    for e in range(active.size):
        if active[e]:
            cols[k] = e
            kind[k] = 1
            k += 1
    for k in range(w):
        if kind[k] == 0:
            cp[k, 0] = cols[k]
            cc[k, 0] = y[cols[k]]
        else:
            e = cols[k]
            for q in range(2):
                if rpt[e, q] >= 0:
                    cp[k, q] = rpt[e, q]
                    cc[k, q] = -d * rw[e, q]
    for q in range(2):  # the driving row's column, last
        if rpt[star, q] >= 0:
            cp[w, q] = rpt[star, q]
            cc[w, q] = -d * rw[star, q]


@_jit("void(F2, F1, F1, F1, float64, float64, float64, int64, boolean, I1, I1, I2, F2, F2, F1)")
def _step_system(K, r, eps, kcl, sum_cl, d, t, star, s_on, cols, kind, cp, cc, M, rhs):
    """The step system ``M`` (size, size) and its two right-hand sides ``rhs`` (2 size,):
    the values at ``t``, then the direction."""
    w = cols.size
    size = M.shape[0]
    for k in range(w + 1):
        for l in range(k, w + 1):
            acc = 0.0
            for q in range(2):
                pk = cp[k, q]
                if pk < 0:
                    continue
                Kp = K[pk]
                for u in range(2):
                    pl = cp[l, u]
                    if pl >= 0:
                        acc += cc[k, q] * cc[l, u] * Kp[pl]
            if l < w:
                M[k, l] = acc
                M[l, k] = acc
            elif k < w:
                # W'K w*: the driving column's coupling.
                rhs[k] -= t * acc
                rhs[size + k] = -acc
    for k in range(w):
        h = cc[k, 0] + cc[k, 1]
        M[k, w] = h
        M[w, k] = h
        kc = 0.0
        for q in range(2):
            if cp[k, q] >= 0:
                kc += cc[k, q] * kcl[cp[k, q]]
        rhs[k] += (1.0 if kind[k] == 0 else eps[cols[k]]) - kc
        if s_on:
            g = 0.0 if kind[k] == 0 else -r[cols[k]]
            M[k, w + 1] = g
            M[w + 1, k] = g
    rhs[w] = -sum_cl + d * t
    rhs[size + w] = d
    if s_on:
        rhs[w + 1] = r[star] * t
        rhs[size + w + 1] = r[star]


@_jit("void(F1, I1, I1, boolean, F1, F1, F1)")
def _take_values(rhs, cols, kind, s_on, a, mu, fs):
    """The solved values into ``a``, ``mu`` and ``fs`` (``b``, and ``s`` when on)."""
    w = cols.size
    for k in range(w):
        if kind[k] == 0:
            a[cols[k]] = rhs[k]
        else:
            mu[cols[k]] = rhs[k]
    fs[F_B] = rhs[w]
    if s_on:
        fs[F_S] = rhs[w + 1]


@_jit("void(F2, I2, F2, F1, int64, float64, F1)")
def _direction(K, cp, cc, rhs, size, db, df):
    """Decision values' direction ``df`` (n,) from the solved direction (``rhs[size:]``)."""
    n = df.size
    w = cp.shape[0] - 1
    for i in range(n):
        df[i] = db
    for k in range(w + 1):
        coef = rhs[size + k] if k < w else 1.0
        if coef == 0.0:
            continue
        for q in range(2):
            p = cp[k, q]
            if p >= 0:
                z = coef * cc[k, q]
                Kp = K[p]
                for i in range(n):
                    df[i] += z * Kp[i]


@_jit(
    "Tuple((float64, int64, int64))"
    "(F1, F1, B1, F1, F1, F1, F1, I1, I1, F1, int64, float64, float64, float64, int64)"
)
def _next_event(y, U, state, a, mu, f, df, cols, kind, rhs, size, v_star, dv_star, dep_tol, star):
    """The first event along the direction: (step, kind, index); kind 0 the driving row
    holds, 1 an E point reaches a bound, 2 a point reaches its margin, 3 an active row's
    multiplier reaches 0; kind -1 when none."""
    w = cols.size
    best = np.inf
    ev_kind = -1
    ev_idx = -1
    if dv_star < -dep_tol:
        best = max(v_star, 0.0) / -dv_star
        ev_kind = 0
        ev_idx = star
    for k in range(w):
        dz = rhs[size + k]
        if kind[k] == 0:
            i = cols[k]
            if dz < 0.0:
                step = max(a[i], 0.0) / -dz
            elif dz > 0.0:
                step = max(U[i] - a[i], 0.0) / dz
            else:
                continue
            if step < best:
                best, ev_kind, ev_idx = step, 1, i
        elif dz < 0.0:
            e = cols[k]
            step = max(mu[e], 0.0) / -dz
            if step < best:
                best, ev_kind, ev_idx = step, 3, e
    for i in range(y.size):
        st = state[i]
        if st == E_SET:
            continue
        mg = y[i] * f[i]
        dm = y[i] * df[i]
        if st == L_SET and dm > 0.0:
            step = max(1.0 - mg, 0.0) / dm
        elif st == R_SET and dm < 0.0:
            step = max(mg - 1.0, 0.0) / -dm
        else:
            continue
        if step < best:
            best, ev_kind, ev_idx = step, 2, i
    return best, ev_kind, ev_idx


@_jit("void(F1, int64, I1, I1, float64, F1, F1, F1, F1)")
def _move(rhs, size, cols, kind, step, df, a, mu, f):
    """Move ``a``, ``mu`` and ``f`` by ``step`` along the direction."""
    for k in range(cols.size):
        dz = rhs[size + k]
        if kind[k] == 0:
            a[cols[k]] += step * dz
        else:
            mu[cols[k]] += step * dz
    for i in range(f.size):
        f[i] += step * df[i]


@_jit("float64(F2, F1, F1, B1, F1, F1, B1, F1, float64, int64, int64)")
def _take_event(K, y, U, state, a, mu, active, kcl, sum_cl, ev_kind, ev_idx):
    """Change the sets at an event of kind 1 to 3 (:func:`_next_event`); keeps ``kcl``
    and returns the new sum of the L coefficients."""
    n = y.size
    if ev_kind == 1:
        i = ev_idx
        to_l = a[i] >= 0.5 * U[i]
        if to_l:
            a[i] = U[i]
            state[i] = L_SET
            cj = y[i] * U[i]
            Kj = K[i]
            for q in range(n):
                kcl[q] += cj * Kj[q]
            sum_cl += cj
        else:
            a[i] = 0.0
            state[i] = R_SET
    elif ev_kind == 2:
        i = ev_idx
        if state[i] == L_SET:
            cj = y[i] * U[i]
            Kj = K[i]
            for q in range(n):
                kcl[q] -= cj * Kj[q]
            sum_cl -= cj
        state[i] = E_SET
    else:
        mu[ev_idx] = 0.0
        active[ev_idx] = 0
    return sum_cl


@_jit("int64(F2, F1, F1, I2, F2, F1, F1, B1, F1, F1, B1, F1, F1, I1, F1, int64)")
def _homotopy(K, y, U, rpt, rw, r, eps, state, a, mu, active, f, fs, iv, prm, star):
    """Raise ``mu[star]`` from 0 until row ``star`` holds (module docstring of
    :mod:`wsvmgui.ladder.noncrossing_active`); returns a status."""
    n = y.size
    d = prm[P_D]
    dep_tol = prm[P_DEP_TOL] * prm[P_SCALE]
    max_events = int(prm[P_MAX_EVENTS])
    refresh = int(prm[P_REFRESH])
    max_zero = int(prm[P_MAX_ZERO])
    t = 0.0
    zero_run = 0
    since = 0
    c = np.empty(n)
    df = np.empty(n)
    # K times the L part of c, kept up to date as points enter and leave L.
    kcl = np.zeros(n)
    sum_cl = _l_part(K, y, U, state, kcl)
    while True:
        b = fs[F_B]
        s = fs[F_S]
        # s free: no active row involves it.
        pinned = False
        for e in range(r.size):
            if active[e] and r[e] != 0.0:
                pinned = True
                break
        if r[star] != 0.0 and not pinned:
            mu[star] = t
            active[star] = 1
            _coef(y, rpt, rw, a, active, d, mu, c)
            _decision(K, c, b, f)
            v = _row_value(rpt, rw, r, f, d, s, star) + eps[star]
            fs[F_S] = s - v / r[star]
            return ST_OK
        s_on = pinned or r[star] != 0.0
        w = _n_columns(state, active)
        size = w + 1 + (1 if s_on else 0)
        cols = np.empty(w, dtype=np.int64)  # the E point or the active row
        kind = np.empty(w, dtype=np.int64)  # 0 point, 1 row
        cp = np.full((w + 1, 2), -1, dtype=np.int64)
        cc = np.zeros((w + 1, 2))
        _columns(y, rpt, rw, state, active, d, star, cols, kind, cp, cc)
        M = np.zeros((size, size))
        rhs = np.zeros(2 * size)  # values, then direction
        _step_system(K, r, eps, kcl, sum_cl, d, t, star, s_on, cols, kind, cp, cc, M, rhs)
        ratio = _lu_solve(M, rhs)
        if not (ratio > prm[P_PIVOT_TOL]):
            return ST_SINGULAR
        for x in rhs:
            if not np.isfinite(x):
                return ST_SINGULAR
        # Values afresh.
        _take_values(rhs, cols, kind, s_on, a, mu, fs)
        b = fs[F_B]
        s = fs[F_S]
        mu[star] = t
        since += 1
        if since >= refresh:
            active[star] = 1
            _coef(y, rpt, rw, a, active, d, mu, c)
            active[star] = 0
            _decision(K, c, b, f)
            since = 0
        # Direction.
        db = rhs[size + w]
        ds = rhs[size + w + 1] if s_on else 0.0
        _direction(K, cp, cc, rhs, size, db, df)
        v_star = _row_value(rpt, rw, r, f, d, s, star) + eps[star]
        dv_star = _row_value(rpt, rw, r, df, d, ds, star)
        best, ev_kind, ev_idx = _next_event(
            y, U, state, a, mu, f, df, cols, kind, rhs, size, v_star, dv_star, dep_tol, star
        )
        if ev_kind < 0 or not np.isfinite(best):
            return ST_NO_EVENT
        iv[I_EVENTS] += 1
        zero_run = zero_run + 1 if best == 0.0 else 0
        if iv[I_EVENTS] > max_events:
            return ST_MAX_EVENTS
        if zero_run > max_zero:
            return ST_ZERO_STEPS
        # Move.
        _move(rhs, size, cols, kind, best, df, a, mu, f)
        t += best
        mu[star] = t
        fs[F_B] = b + best * db
        fs[F_S] = s + best * ds
        if ev_kind == 0:
            active[star] = 1
            return ST_OK
        sum_cl = _take_event(K, y, U, state, a, mu, active, kcl, sum_cl, ev_kind, ev_idx)


@_jit("int64(F2, F1, F1, I2, F2, F1, F1, B1, F1, F1, B1, F1, F1, I1, F1)", entry=True)
def repair(K, y, U, rpt, rw, r, eps, state, a, mu, active, f, fs, iv, prm):
    """Take the most violated row until none is violated; returns a status.

    On entry ``state``, ``a``, ``fs`` hold the unconstrained optimum with ``mu = 0``,
    ``active = 0`` and ``f`` its decision values.  On return (``ST_OK``) they hold the
    constrained optimum (rows ``d (R f)_e + r_e s + eps_e <= 0``) and ``f`` is recomputed.
    """
    n = y.size
    m = r.size
    d = prm[P_D]
    tol = prm[P_TOL]
    c = np.empty(n)
    while True:
        s = fs[F_S]
        star = -1
        worst = tol
        for e in range(m):
            if active[e]:
                continue
            v = _row_value(rpt, rw, r, f, d, s, e) + eps[e]
            if v > worst:
                worst, star = v, e
        if star < 0:
            return ST_OK
        iv[I_ROWS] += 1
        status = _homotopy(K, y, U, rpt, rw, r, eps, state, a, mu, active, f, fs, iv, prm, star)
        if status != ST_OK:
            return status
        for e in range(m):
            if not active[e] or mu[e] < 0.0:
                mu[e] = 0.0
        _coef(y, rpt, rw, a, active, d, mu, c)
        _decision(K, c, fs[F_B], f)
