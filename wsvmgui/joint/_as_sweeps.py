"""Dual coordinate descent of the active-set solver (compiled; :mod:`._active_set_kernel`).

One point's ``K1`` duals at a time, exactly: since ``D_ij . D_ij' = 1 + [j = j']`` the
block's Hessian is ``q (I + 11')``, ``q = ||z_i||^2 + rho`` (:func:`block_solve` sorts),
with the intercept by the method of multipliers (effective intercept ``b = lam + rho
s``; ``lam <- b`` after each inner solve) (:func:`sweeps`).  It gives a cold start a
nearby point, which :func:`._as_homotopy.perturb` makes the exact answer of nearby data.
"""

from __future__ import annotations

import numpy as np

from ..ladder._path_jit import _jit

#: Most multiplier updates per call of :func:`sweeps`.
MAX_OUTER = 10


@_jit("void(F1, float64, F1, F1)")
def block_solve(c, w, a, srt):
    """Minimise ``1/2 a'(I + 11')a - c'a`` over ``a >= 0, sum a <= w``; writes ``a``.

    KKT: ``a_j = max(0, c_j - t)`` with ``t = sum a`` when the sum bound is slack, else
    ``sum_j max(0, c_j - t) = w`` (``t >= w``).  Both are monotone in ``t``; the root is
    found on the sorted ``c`` (``srt``, scratch of the same length).
    """
    k1 = c.shape[0]
    for j in range(k1):  # insertion sort, descending
        v = c[j]
        i = j
        while i > 0 and srt[i - 1] < v:
            srt[i] = srt[i - 1]
            i -= 1
        srt[i] = v
    # slack sum bound: t = (sum of the k largest) / (k + 1), valid where it separates
    t = 0.0
    acc = 0.0
    for k in range(k1 + 1):
        t = acc / (k + 1)
        if (k == 0 or srt[k - 1] > t) and (k == k1 or srt[k] <= t):
            break
        if k < k1:
            acc += srt[k]
    if t > w:  # the sum bound binds: sum of the k largest - k t = w
        acc = 0.0
        for k in range(1, k1 + 1):
            acc += srt[k - 1]
            t = (acc - w) / k
            if srt[k - 1] > t and (k == k1 or srt[k] <= t):
                break
    for j in range(k1):
        v = c[j] - t
        a[j] = v if v > 0.0 else 0.0


@_jit("int64(F2, F1, F2, F1, F2, F2, F2, F1, F1, float64, float64, float64, int64)")
def sweeps(Z, zz, Dm, w, alpha, beta, W, s, lam, rho, eps, eps_b, max_epochs):
    """Coordinate sweeps (point blocks, shuffled) with multiplier updates of ``lam``.

    Sweeps until no point's own margin moves by ``eps`` in a sweep, then sets
    ``lam <- lam + rho s`` unless ``max |s| <= eps_b max w``; stops after ``max_epochs``
    sweeps or ``MAX_OUTER`` multiplier updates (an inexact inner solve at a fixed ``eps``
    gives no convergence guarantee for more).  ``W`` and ``s`` must match the duals on
    entry; returns the sweeps made.
    """
    n, r = Z.shape
    k1 = alpha.shape[1]
    u = np.empty(k1)
    cv = np.empty(k1)
    an = np.empty(k1)
    srt = np.empty(k1)
    v = np.empty(k1)
    perm = np.arange(n)
    wmax = 0.0
    for i in range(n):
        if w[i] > wmax:
            wmax = w[i]
    if wmax <= 0.0:
        wmax = 1.0
    state = np.uint64(0x9E3779B97F4A7C15)
    epochs = 0
    outer = 0
    while True:
        while epochs < max_epochs:
            for t in range(n - 1, 0, -1):  # Fisher-Yates with xorshift64 (deterministic)
                state ^= state << np.uint64(13)
                state ^= state >> np.uint64(7)
                state ^= state << np.uint64(17)
                k = int(state % np.uint64(t + 1))
                tmp = perm[t]
                perm[t] = perm[k]
                perm[k] = tmp
            biggest = 0.0
            for t in range(n):
                i = perm[t]
                for c in range(k1):
                    u[c] = lam[c] + rho * s[c]
                for a in range(r):
                    zia = Z[i, a]
                    for c in range(k1):
                        u[c] += zia * W[a, c]
                q = zz[i] + rho
                suma = 0.0
                for j in range(k1):
                    suma += alpha[i, j]
                for j in range(k1):
                    row = i * k1 + j
                    mij = 0.0
                    for c in range(k1):
                        mij += u[c] * Dm[row, c]
                    cv[j] = alpha[i, j] + suma + (1.0 - mij) / q
                block_solve(cv, w[i], an, srt)
                move = 0.0
                for c in range(k1):
                    v[c] = 0.0
                for j in range(k1):
                    d = an[j] - alpha[i, j]
                    if d != 0.0:
                        alpha[i, j] = an[j]
                        row = i * k1 + j
                        for c in range(k1):
                            v[c] += d * Dm[row, c]
                        if abs(d) > move:
                            move = abs(d)
                if move == 0.0:
                    continue
                for c in range(k1):
                    s[c] += v[c]
                for a in range(r):
                    zia = Z[i, a]
                    for c in range(k1):
                        W[a, c] += zia * v[c]
                if q * move > biggest:
                    biggest = q * move
            epochs += 1
            if biggest < eps:
                break
        sb = 0.0
        for c in range(k1):
            if abs(s[c]) > sb:
                sb = abs(s[c])
        outer += 1
        if sb <= eps_b * wmax or epochs >= max_epochs or outer >= MAX_OUTER:
            return epochs
        for c in range(k1):
            lam[c] += rho * s[c]
