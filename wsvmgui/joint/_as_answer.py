"""What a dual point of the active-set solver gives (compiled; :mod:`._active_set_kernel`).

Notation as :mod:`._active_set_kernel`: from the duals ``alpha`` (n, K1) and the DCA
slopes ``beta`` the fit ``W = sum_ij gamma_ij z_i D_ij'`` and ``s = sum_ij gamma_ij D_ij``
(:func:`rebuild`), the pair margins (:func:`margins`), the KKT residual, duality gap and
objective (:func:`check`), the truncated objective and truncated set of the DCA
(:func:`truncated_objective`, :func:`truncated_set`), and the clip of round-off into the
feasible set (:func:`clip_feasible`); :func:`take` copies one answer over another.
"""

from __future__ import annotations

import numpy as np

from ..ladder._path_jit import _jit
from ._as_layout import O_GAP, O_KKT, O_OBJ, O_STAT_B


@_jit("void(F2, F2, F2, F2, F2, F1)")
def rebuild(Z, Dm, alpha, beta, W, s):
    """``W = sum_ij gamma_ij z_i D_ij'`` and ``s = sum_ij gamma_ij D_ij`` from the duals."""
    n, r = Z.shape
    k1 = alpha.shape[1]
    v = np.empty(k1)
    W[:, :] = 0.0
    s[:] = 0.0
    for i in range(n):
        v[:] = 0.0
        nz = False
        for j in range(k1):
            g = alpha[i, j] - beta[i, j]
            if g != 0.0:
                nz = True
                row = i * k1 + j
                for c in range(k1):
                    v[c] += g * Dm[row, c]
        if not nz:
            continue
        for c in range(k1):
            s[c] += v[c]
        for a in range(r):
            zia = Z[i, a]
            if zia != 0.0:
                for c in range(k1):
                    W[a, c] += zia * v[c]


@_jit("void(F2, F2, F2, F1, F2)")
def margins(Z, Dm, W, b, m):
    """Pair margins ``m_ij = (z_i' W + b) . D_ij``; writes ``m`` (n, K1)."""
    n, r = Z.shape
    k1 = W.shape[1]
    u = np.empty(k1)
    for i in range(n):
        for c in range(k1):
            u[c] = b[c]
        for a in range(r):
            zia = Z[i, a]
            for c in range(k1):
                u[c] += zia * W[a, c]
        for j in range(k1):
            row = i * k1 + j
            acc = 0.0
            for c in range(k1):
                acc += u[c] * Dm[row, c]
            m[i, j] = acc


@_jit("float64(F2, F1, F2, float64)", entry=True)
def truncated_objective(m, w, W, s_trunc):
    """``1/2 ||W||^2 + sum_i w_i min((1 - u_i)_+, 1 - s)``, ``u_i = min_j m_ij``, from the
    margins (``s_trunc = -inf``: the plain hinge)."""
    n, k1 = m.shape
    cap = 1.0 - s_trunc
    tot = 0.0
    r_ = W.shape[0]
    for a in range(r_):
        for c in range(k1):
            tot += 0.5 * W[a, c] * W[a, c]
    for i in range(n):
        u = m[i, 0]
        for j in range(1, k1):
            if m[i, j] < u:
                u = m[i, j]
        loss = 1.0 - u
        if loss < 0.0:
            loss = 0.0
        if loss > cap:
            loss = cap
        tot += w[i] * loss
    return tot


@_jit("int64(F2, float64, B1, I1, boolean, float64, F1, F2, B1, I1)", entry=True)
def truncated_set(m, s_trunc, trunc0, jc0, previous, tol, w, beta, trunc, jc):
    """Points with ``u_i = min_j m_ij < s`` and their competing pair; the DCA slopes.

    As :func:`wsvmgui.joint.dca.truncated_set`: given the ``previous`` set
    (``trunc0, jc0``), points within ``tol`` of the kink ``u_i = s`` keep their previous
    status, and a truncated point keeps its previous pair while that pair ties the
    smallest margin within ``tol``.  Writes ``trunc`` (int8), ``jc`` and the slopes
    ``beta`` (``w_i`` on the truncated pair); returns the number of points whose status
    differs from ``trunc0`` (when ``previous``).
    """
    n, k1 = m.shape
    changed = 0
    for i in range(n):
        j = 0
        for c in range(1, k1):
            if m[i, c] < m[i, j]:
                j = c
        u = m[i, j]
        t = u < s_trunc
        if previous:
            if abs(u - s_trunc) <= tol:
                t = trunc0[i] != 0
            if t and trunc0[i] and m[i, jc0[i]] <= u + tol:
                j = jc0[i]
            if t != (trunc0[i] != 0):
                changed += 1
        trunc[i] = 1 if t else 0
        jc[i] = j if t else 0
        for c in range(k1):
            beta[i, c] = 0.0
        if t:
            beta[i, j] = w[i]
    return changed


@_jit("void(F2, F1, F2, F2, F2, F1, F1, F1)")
def check(m, w, alpha, beta, W, b, s, out):
    """The answer's KKT residual, duality gap and objective; writes ``out[O_KKT..]``.

    The residual is :func:`wsvmgui.joint.subproblem.kkt_residual` (feasibility and
    complementarity of ``r = alpha / w``, the equality ``s = 0`` relative to ``max w``;
    stationarity in ``W`` holds by construction, ``W`` being rebuilt from the duals).
    The gap ``sum_i w_i [sum_j r_ij (m_ij - 1 + xi_i) + (1 - sum_j r_ij) xi_i] - b . s``
    is the primal minus the dual objective.
    """
    n, k1 = m.shape
    r_, _ = W.shape
    wmax = 0.0
    for i in range(n):
        if w[i] > wmax:
            wmax = w[i]
    resid = 0.0
    gap = 0.0
    obj = 0.0
    for a in range(r_):
        for c in range(k1):
            obj += 0.5 * W[a, c] * W[a, c]
    for i in range(n):
        wi = w[i] if w[i] > 1e-300 else 1e-300
        xi = 0.0
        for j in range(k1):
            v = 1.0 - m[i, j]
            if v > xi:
                xi = v
        rs = 0.0
        for j in range(k1):
            rij = alpha[i, j] / wi
            rs += rij
            if -rij > resid:
                resid = -rij
            rc = min(max(rij, 0.0), 1.0)
            comp = rc * (xi - 1.0 + m[i, j])
            if comp > resid:
                resid = comp
            gap += w[i] * comp
            obj += beta[i, j] * m[i, j]
        if rs - 1.0 > resid:
            resid = rs - 1.0
        box = min(max(1.0 - rs, 0.0), 1.0) * xi
        if box > resid:
            resid = box
        gap += w[i] * box
        obj += w[i] * xi
    sb = 0.0
    for c in range(k1):
        gap -= b[c] * s[c]
        if abs(s[c]) > sb:
            sb = abs(s[c])
    sb /= wmax if wmax > 0.0 else 1.0
    if sb > resid:
        resid = sb
    out[O_KKT] = resid
    out[O_GAP] = gap
    out[O_OBJ] = obj
    out[O_STAT_B] = sb


@_jit("void(F2, F2, F1, B1, I1, B2, F2, F2, F1, B1, I1, B2)")
def take(alpha, m, b, bnd, anc, act, a2, m2, b2, bnd2, anc2, act2):
    """Copy the answer ``a2, m2, b2`` on the face ``bnd2, anc2, act2`` over the first."""
    n, k1 = alpha.shape
    for i in range(n):
        bnd[i] = bnd2[i]
        anc[i] = anc2[i]
        for j in range(k1):
            alpha[i, j] = a2[i, j]
            m[i, j] = m2[i, j]
            act[i, j] = act2[i, j]
    for c in range(k1):
        b[c] = b2[c]


@_jit("boolean(F2, F1)")
def clip_feasible(a, w):
    """Clip round-off (``1e-9 w_i``) into ``a >= 0, sum a <= w``; False (``a`` untouched) if
    more is needed."""
    n, k1 = a.shape
    for i in range(n):
        tol = 1e-9 * w[i]
        sa = 0.0
        for j in range(k1):
            if a[i, j] < -tol:
                return False
            sa += max(a[i, j], 0.0)
        if sa > w[i] + tol:
            return False
    for i in range(n):
        sa = 0.0
        for j in range(k1):
            if a[i, j] < 0.0:
                a[i, j] = 0.0
            sa += a[i, j]
        if sa > w[i]:
            for j in range(k1):
                a[i, j] *= w[i] / sa
    return True
