"""Compiled solver of the convex subproblem of one DCA step (:mod:`.active_set`).

Math (:mod:`.subproblem`): points ``i`` with features ``z_i`` (r,), weights ``w_i``, and
``K1 = K - 1`` pair margins ``m_ij = u_i . D_ij`` with ``u_i = z_i' W + b`` (K1,) and
``D_ij = P[y_i] - P[k_ij]`` (rows ``i * K1 + j`` of ``Dm``).  The duals ``alpha_ij >= 0``
with ``sum_j alpha_ij <= w_i``, the DCA slopes ``beta_ij``, ``gamma = alpha - beta``,
``W = sum_ij gamma_ij z_i D_ij'`` and ``s = sum_ij gamma_ij D_ij``; the intercept's
stationarity is the equality ``s = 0``.  An answer's *face*: which points' sums are at
their bound (``bnd``, with an anchor pair ``anc``) and which pairs are active (``act``).

* :func:`face_core` / :func:`face_solve`: the exact optimum on a face, one symmetric
  linear system (a Cholesky factor and a ``K1 x K1`` Schur complement).
* :func:`homotopy`: a parametric active-set method.  From the exact answer for some
  data ``(w, beta)`` it follows the answer, piecewise linear in the data, to new data,
  changing the face by one condition at each event.  Warm starts along the simplex grid
  and along the DCA steps are such paths.
* :func:`polish`: primal-dual active-set steps (the face the last answer identifies,
  :func:`identify`); cheap when they converge, stopped when they do not.
* :func:`sweeps`: dual coordinate descent, one point's ``K1`` duals at a time, exactly
  (since ``D_ij . D_ij' = 1 + [j = j']`` the block's Hessian is ``q (I + 11')``,
  ``q = ||z_i||^2 + rho``; :func:`block_solve` sorts), with the intercept by the method
  of multipliers (effective intercept ``b = lam + rho s``; ``lam <- b`` after each inner
  solve).  It gives a cold start a nearby point, which :func:`perturb` makes the exact
  answer of nearby data (targets and an offset), and a path from there finishes.
* :func:`solve`: the strategy; :func:`check` the KKT residual every answer reports.

All state lives in caller-owned arrays; the functions release the GIL and are compiled
once per machine and cached on disk, with IEEE division (the residual checks catch NaN).
Only the functions :mod:`.active_set` calls have a Python entry point.
"""

from __future__ import annotations

import numpy as np

from ..ladder._path_jit import _jit

# prm: constants of one solve.
P_RHO, P_EPS_CD, P_EPS_B, P_MAX_EPOCHS, P_TOL, P_START, P_ROUNDS, P_MU, P_MAX_EVENTS = range(9)
P_PATH_ROUNDS, P_SWEEPS = 9, 10
P_SIZE = 11
#: Most multiplier updates per call of :func:`sweeps`.
MAX_OUTER = 10
# Starts of :func:`solve`.
START_COLD, START_FACE, START_PATH = range(3)
# out: results of one solve.
O_KKT, O_GAP, O_OBJ, O_EPOCHS, O_EVENTS, O_STAT_B, O_FACES = range(7)
O_SIZE = 7


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


@_jit("boolean(F2, float64)")
def cholesky(A, ridge):
    """Lower Cholesky factor of the symmetric ``A + ridge I``, in place; False if not PD."""
    m = A.shape[0]
    for j in range(m):
        A[j, j] += ridge
    try:
        L = np.linalg.cholesky(A)
    except Exception:  # numpy.linalg.LinAlgError: not positive definite
        return False
    A[:, :] = L
    ok = True
    for j in range(m):
        ok = ok and L[j, j] > 0.0  # False for NaN
    return ok


@_jit("void(F2, F1)")
def chol_solve(L, x):
    """Solve ``L L' y = x`` in place (``L`` from :func:`cholesky`)."""
    m = L.shape[0]
    for i in range(m):
        v = x[i]
        for k in range(i):
            v -= L[i, k] * x[k]
        x[i] = v / L[i, i]
    for i in range(m - 1, -1, -1):
        v = x[i]
        for k in range(i + 1, m):
            v -= L[k, i] * x[k]
        x[i] = v / L[i, i]


@_jit("int64(F2, F2, F1, B1, I1, B2, boolean)", entry=True)
def identify(ac, mc, w, bnd, anc, act, face):
    """The face a point lies on, by a primal-dual active-set rule; writes the statuses.

    Each constraint's dual slack is compared with its primal complement: the sum bound
    binds where ``(w_i - sum_j a_ij) / w_i < xi_i``, pair j is active where
    ``a_ij / w_i > xi_i - 1 + m_ij``.  For a point that is not a face solution
    (``face`` False) ``xi_i = max(0, max_j 1 - m_ij)``; for a face solution (``face``
    True, its statuses in ``bnd`` and ``anc``) it is that face's own slack, ``1 - m_ij``
    of the anchor pair of a bound point and 0 otherwise, which can be negative and so
    flags a violated margin.  (``ac`` may be infeasible: a negative dual is inactive, a
    sum above ``w_i`` binds.)  Statuses: ``bnd`` 1 where the sum bound binds, ``anc``
    its anchor pair, ``act`` 1 for the active pairs (the anchor included).  Returns the
    number of points whose statuses changed.
    """
    n, k1 = ac.shape
    changed = 0
    for i in range(n):
        was_b = bnd[i]
        was_a = anc[i]
        diff = False
        wi = w[i] if w[i] > 1e-300 else 1e-300
        top = 0
        sa = 0.0
        for j in range(k1):
            sa += ac[i, j]
            if mc[i, j] < mc[i, top]:
                top = j
        xi_face = 1.0 - mc[i, anc[i]] if bnd[i] else 0.0
        xi = xi_face if face else max(0.0, 1.0 - mc[i, top])
        bound = (wi - sa) / wi < xi
        anchor = -1
        for j in range(k1):
            on = ac[i, j] / wi > xi - 1.0 + mc[i, j]
            if (act[i, j] != 0) != on:
                diff = True
            act[i, j] = 1 if on else 0
            if on and anchor < 0:
                anchor = j
        if bound and anchor < 0:
            anchor = top
            if not act[i, top]:
                diff = True
            act[i, top] = 1
        bnd[i] = 1 if bound else 0
        anc[i] = anchor if bound else 0
        if diff or bnd[i] != was_b or (bound and anc[i] != was_a):
            changed += 1
    return changed


@_jit("int64(B1, I1, B2, I1, I1, I1)")
def face_list(bnd, anc, act, fi, fa, fb):
    """The face's free duals: point ``fi``, pair ``fa``, anchor ``fb`` (-1 inside the bound).

    Free: the active pairs of points inside the bound, and of bound points (whose sum is
    fixed at ``w_i``, the anchor pair taking the rest) all but the anchor.  Returns their
    number.
    """
    n, k1 = act.shape
    nf = 0
    for i in range(n):
        for j in range(k1):
            if act[i, j] and not (bnd[i] and j == anc[i]):
                fi[nf] = i
                fa[nf] = j
                fb[nf] = anc[i] if bnd[i] else -1
                nf += 1
    return nf


@_jit("void(F2, F2, F1, F2, B1, I1, int64, float64, F2, F1)")
def fixed_part(Z, Dm, w, beta, bnd, anc, i, sign, W0, s0):
    """Add ``sign`` times point i's fixed part to ``W0, s0``: ``w_i`` on a bound point's
    anchor pair, minus the slopes ``beta_i``."""
    n, r = Z.shape
    k1 = beta.shape[1]
    v = np.zeros(k1)
    nz = False
    for j in range(k1):
        g = -beta[i, j]
        if bnd[i] and j == anc[i]:
            g += w[i]
        if g != 0.0:
            nz = True
            row = i * k1 + j
            for c in range(k1):
                v[c] += sign * g * Dm[row, c]
    if not nz:
        return
    for c in range(k1):
        s0[c] += v[c]
    for a in range(r):
        zia = Z[i, a]
        for c in range(k1):
            W0[a, c] += zia * v[c]


@_jit("boolean(F2, F2, F2, F2, F1, I1, I1, I1, int64, F2, F1, float64, float64, F2, F1, F1)")
def face_core(Z, Gk, Dm, tgt, sig, fi, fa, fb, nf, W0, s0, rho, mu, dvec, t, bnew):
    """Solve the face system for the free duals ``t`` (nf,) and the intercept ``bnew``.

    Free duals from :func:`face_list`; ``W0, s0`` the fixed part (:func:`fixed_part`);
    ``dvec`` (>= nf, K1) scratch.  The optimality conditions on the face with the
    equality ``s = sig`` are the symmetric system ``[[H, G], [G', 0]] [t; b] =
    [rhs; sig - s0]`` (``rhs``: the targets ``tgt`` minus the fixed part's margins,
    along each free direction).  ``H`` alone is singular whenever the face has more
    free duals than the kernel has rank (the linear case), so the first block row is
    replaced by itself plus ``rho G`` times the second (``H + rho G G'``: the kernel
    plus ``rho``, positive definite on a regular face), and the system is solved by a
    Cholesky factor of that block and its Schur complement.  A ridge ``mu`` keeps a
    degenerate face (more free duals than the fit has degrees of freedom) solvable; it
    moves the margins by ``mu t``.  ``Gk`` is ``Z Z'`` (n, n), or shape (0, 0) to
    compute its entries from ``Z``.  Returns False when there is no free dual or a
    factor fails.
    """
    n, r = Z.shape
    k1 = W0.shape[1]
    if nf == 0:
        return False
    for f in range(nf):
        ra = fi[f] * k1 + fa[f]
        for c in range(k1):
            dvec[f, c] = Dm[ra, c]
        if fb[f] >= 0:
            rb = fi[f] * k1 + fb[f]
            for c in range(k1):
                dvec[f, c] -= Dm[rb, c]
    H = np.empty((nf, nf))
    use_g = Gk.shape[0] == n
    for f in range(nf):
        i = fi[f]
        for g in range(f + 1):
            k = fi[g]
            if use_g:
                kik = Gk[i, k]
            else:
                kik = 0.0
                for a in range(r):
                    kik += Z[i, a] * Z[k, a]
            dd = 0.0
            for c in range(k1):
                dd += dvec[f, c] * dvec[g, c]
            H[f, g] = (kik + rho) * dd
            H[g, f] = H[f, g]
    u = np.empty(k1)
    for f in range(nf):
        i = fi[f]
        for c in range(k1):
            u[c] = 0.0
        for a in range(r):
            zia = Z[i, a]
            for c in range(k1):
                u[c] += zia * W0[a, c]
        ma = 0.0
        ra = i * k1 + fa[f]
        for c in range(k1):
            ma += u[c] * Dm[ra, c]
        if fb[f] < 0:
            t[f] = tgt[i, fa[f]] - ma
        else:
            mb = 0.0
            rb = i * k1 + fb[f]
            for c in range(k1):
                mb += u[c] * Dm[rb, c]
            t[f] = (tgt[i, fa[f]] - ma) - (tgt[i, fb[f]] - mb)
        for c in range(k1):
            t[f] -= rho * dvec[f, c] * (s0[c] - sig[c])
    if not cholesky(H, mu):
        return False
    # Schur complement: (G' H^-1 G) b = G' H^-1 rhs + s0 - sig, then t = H^-1 (rhs - G b)
    HG = np.empty((k1, nf))
    for c in range(k1):
        for f in range(nf):
            HG[c, f] = dvec[f, c]
        chol_solve(H, HG[c])
    chol_solve(H, t[:nf])
    S = np.empty((k1, k1))
    smax = 0.0
    for c in range(k1):
        acc = s0[c] - sig[c]
        for f in range(nf):
            acc += dvec[f, c] * t[f]
        bnew[c] = acc
        for e in range(k1):
            v = 0.0
            for f in range(nf):
                v += dvec[f, c] * HG[e, f]
            S[c, e] = v
        if S[c, c] > smax:
            smax = S[c, c]
    for c in range(k1):  # exactly symmetric
        for e in range(c):
            S[c, e] = S[e, c] = 0.5 * (S[c, e] + S[e, c])
    if not smax > 0.0 or not cholesky(S, 1e-13 * smax):
        return False
    chol_solve(S, bnew)
    for f in range(nf):
        v = t[f]
        for c in range(k1):
            v -= HG[c, f] * bnew[c]
        t[f] = v
    return True


@_jit("boolean(F2, F2, F2, F1, F2, F2, F1, B1, I1, B2, float64, float64, F2, F1)")
def face_solve(Z, Gk, Dm, w, beta, tgt, sig, bnd, anc, act, rho, mu, anew, bnew):
    """The dual optimum on a face for the data ``(w, beta, tgt, sig)``; writes ``anew, bnew``.

    ``tgt`` (n, K1) are the margin targets (1 in the subproblem: the dual's linear term
    is ``sum tgt_ij alpha_ij``) and ``sig`` (K1,) the right side of the equality
    ``s = sig`` (0 in the subproblem); other values pose a nearby problem that a given
    point solves exactly (:func:`perturb`), the start of a path to the subproblem.
    The system is :func:`face_core`'s.  Returns False when the face has no free dual,
    clearly more than the fit's degrees of freedom, or a factor fails (nothing written);
    the answer ``anew`` may be infeasible (the caller checks).
    """
    n, r = Z.shape
    k1 = beta.shape[1]
    nk = n * k1
    fi = np.empty(nk, np.int64)
    fa = np.empty(nk, np.int64)
    fb = np.empty(nk, np.int64)
    nf = face_list(bnd, anc, act, fi, fa, fb)
    if nf > (r + 2) * k1:
        # more free duals than the fit has degrees of freedom ((r + 1) (K - 1)): a
        # degenerate face, whose ridged answer is unreliable (and, from active-set steps
        # that diverge, can be large and costly to factor)
        return False
    W0 = np.zeros((r, k1))
    s0 = np.zeros(k1)
    for i in range(n):
        fixed_part(Z, Dm, w, beta, bnd, anc, i, 1.0, W0, s0)
    dvec = np.empty((max(nf, 1), k1))
    t = np.empty(max(nf, 1))
    bn = np.empty(k1)
    if not face_core(Z, Gk, Dm, tgt, sig, fi, fa, fb, nf, W0, s0, rho, mu, dvec, t, bn):
        return False
    for i in range(n):
        for j in range(k1):
            anew[i, j] = w[i] if bnd[i] and j == anc[i] else 0.0
    for f in range(nf):
        anew[fi[f], fa[f]] += t[f]
        if fb[f] >= 0:
            anew[fi[f], fb[f]] -= t[f]
    for c in range(k1):
        bnew[c] = bn[c]
    return True


@_jit("boolean(F2, F1)")
def clip_feasible(a, w):
    """Clip round-off (``1e-9 w_i``) into ``a >= 0, sum a <= w``; False if more is needed."""
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


@_jit(
    "float64(F2, F2, F2, F1, F2, F2, F2, F2, F1, F1, B1, I1, B2, boolean, float64, float64, int64,"
    " float64, float64, F1)",
)
def polish(Z, Gk, Dm, w, alpha, beta, W, m, s, b, bnd, anc, act, face, rho, mu, rounds, tol,
           current, out):  # fmt: skip
    """Primal-dual active-set steps (:func:`identify`, :func:`face_solve`).

    The first step solves the face of the current ``alpha`` and margins ``m`` (read as a
    face solution with the statuses ``bnd, anc`` when ``face``); each further step the
    face that the previous step's answer identifies.  An answer that is feasible (up to
    round-off) and whose KKT residual is below ``current`` (the current point's) replaces
    the duals, ``W``, ``s``, ``b``, ``m`` and the statuses (``out`` then holds its check,
    :func:`check`), and the steps stop once that residual is at most ``tol``; at most
    ``rounds`` steps.  Returns the residual of the last answer taken, ``inf`` if none.
    """
    n, r = Z.shape
    k1 = alpha.shape[1]
    ac = alpha.copy()
    mc = m.copy()
    an = np.empty_like(alpha)
    bn = np.empty(k1)
    Wc = np.empty_like(W)
    sc = np.empty(k1)
    fb = bnd.copy()
    fa = anc.copy()
    ft = act.copy()
    tmp = np.empty(O_SIZE)
    one = np.ones_like(alpha)
    zero = np.zeros(k1)
    best = np.inf
    last = 0
    rising = False
    for k in range(rounds):
        changed = identify(ac, mc, w, fb, fa, ft, face or k > 0)
        if k > 0 and changed == 0:
            break  # the same face again: stuck
        if k > 1 and changed > last:
            if rising:
                break  # more changes twice in a row: diverging
            rising = True
        elif k > 1:
            rising = False
        last = changed
        out[O_FACES] += 1
        if not face_solve(Z, Gk, Dm, w, beta, one, zero, fb, fa, ft, rho, mu, an, bn):
            break
        rebuild(Z, Dm, an, beta, Wc, sc)
        margins(Z, Dm, Wc, bn, mc)
        for i in range(n):
            for j in range(k1):
                ac[i, j] = an[i, j]
        if not clip_feasible(an, w):
            continue
        rebuild(Z, Dm, an, beta, Wc, sc)
        margins(Z, Dm, Wc, bn, mc)
        check(mc, w, an, beta, Wc, bn, sc, tmp)
        for i in range(n):
            for j in range(k1):
                ac[i, j] = an[i, j]
        if not tmp[O_KKT] < current:
            continue
        current = tmp[O_KKT]
        for c in (O_KKT, O_GAP, O_OBJ, O_STAT_B):
            out[c] = tmp[c]
        for i in range(n):
            bnd[i] = fb[i]
            anc[i] = fa[i]
            for j in range(k1):
                act[i, j] = ft[i, j]
                alpha[i, j] = an[i, j]
                m[i, j] = mc[i, j]
                ac[i, j] = an[i, j]
        W[:, :] = Wc
        for c in range(k1):
            s[c] = sc[c]
            b[c] = bn[c]
        best = current
        if best <= tol:
            break
    return best


@_jit(
    "int64(F2, F2, F2, F1, F2, F2, F1, F1, F2, F2, F1, F2, F1, F2, B1, I1, B2, float64, float64,"
    " int64, F1)",
)
def homotopy(Z, Gk, Dm, w0, beta0, tgt0, sig0, w1, beta1, tgt1, sig1, alpha, b, m, bnd, anc,
             act, rho, mu, max_events, out):  # fmt: skip
    """Follow the exact answer from the data ``(w0, beta0, tgt0, sig0)`` to ``(w1, ...)``.

    (Data as :func:`face_solve`.)  ``alpha, b, m`` must be the exact answer for the data
    ``0`` on the face ``bnd, anc, act``.  Along the data ``(1 - t) data0 + t data1`` the answer
    on a fixed face is affine in ``t``, so it runs on the segment from the current answer
    to the face's answer for the target data (:func:`face_solve`) until the first
    optimality condition would fail (an event): a free dual reaching 0, a sum reaching
    its bound, a bound point's slack reaching 0, or a pair's margin reaching the point's
    active level.  There the face changes by that one condition, and the walk goes on;
    with no event before the target the face's answer is the target's.  The data ``0``
    are overwritten (the data reached so far).  On success ``alpha, b, m`` and
    the statuses hold the target's answer and ``out`` its check (:func:`check`; ``W``
    and ``s`` are rebuilt by the caller).  Returns the events met, or -1 when a face
    solve fails or ``max_events`` are exceeded (the arrays then hold an exact answer for
    the data reached).
    """
    n, r = Z.shape
    k1 = alpha.shape[1]
    nk = n * k1
    fi = np.empty(nk, np.int64)
    fa = np.empty(nk, np.int64)
    fb = np.empty(nk, np.int64)
    dvec = np.empty((nk, k1))
    t = np.empty(nk)
    W0 = np.zeros((r, k1))
    s0 = np.zeros(k1)
    a1 = np.zeros_like(alpha)  # the face's answer for the target data
    for i in range(n):
        fixed_part(Z, Dm, w1, beta1, bnd, anc, i, 1.0, W0, s0)
        if bnd[i]:
            a1[i, anc[i]] = w1[i]
    W1 = np.empty((r, k1))
    b1 = np.empty(k1)
    m1 = np.empty_like(m)
    u = np.empty(k1)
    events = 0
    while True:
        out[O_FACES] += 1
        nf = face_list(bnd, anc, act, fi, fa, fb)
        if not face_core(Z, Gk, Dm, tgt1, sig1, fi, fa, fb, nf, W0, s0, rho, mu, dvec, t, b1):
            return -1
        W1[:, :] = W0
        for f in range(nf):  # the free points' rows: fixed part, then the free duals
            i = fi[f]
            for j in range(k1):
                a1[i, j] = w1[i] if bnd[i] and j == anc[i] else 0.0
        for f in range(nf):
            i = fi[f]
            a1[i, fa[f]] += t[f]
            if fb[f] >= 0:
                a1[i, fb[f]] -= t[f]
            for a in range(r):
                zt = Z[i, a] * t[f]
                for c in range(k1):
                    W1[a, c] += zt * dvec[f, c]
        # the target answer's margins, and the first event along
        # x(tau) = x0 + tau (x1 - x0), tau in (0, 1]
        tau = 1.0
        ev_i = -1
        ev_j = -1
        ev_kind = 0
        for i in range(n):
            for c in range(k1):
                u[c] = b1[c]
            for a in range(r):
                zia = Z[i, a]
                for c in range(k1):
                    u[c] += zia * W1[a, c]
            for j in range(k1):
                row = i * k1 + j
                acc = 0.0
                for c in range(k1):
                    acc += u[c] * Dm[row, c]
                m1[i, j] = acc
            if bnd[i]:
                ja = anc[i]
                for j in range(k1):
                    if act[i, j]:  # dual stays >= 0
                        v0 = alpha[i, j]
                        v1 = a1[i, j]
                        kind = 1
                    else:  # pair stays below the active level: tgt - m <= xi
                        v0 = (m[i, j] - tgt0[i, j]) - (m[i, ja] - tgt0[i, ja])
                        v1 = (m1[i, j] - tgt1[i, j]) - (m1[i, ja] - tgt1[i, ja])
                        kind = 2
                    if v1 < 0.0 and v1 < v0:
                        tt = max(v0, 0.0) / (v0 - v1)
                        if tt < tau:
                            tau, ev_i, ev_j, ev_kind = tt, i, j, kind
                v0 = tgt0[i, ja] - m[i, ja]  # slack xi_i >= 0
                v1 = tgt1[i, ja] - m1[i, ja]
                if v1 < 0.0 and v1 < v0:
                    tt = max(v0, 0.0) / (v0 - v1)
                    if tt < tau:
                        tau, ev_i, ev_j, ev_kind = tt, i, ja, 3
            else:
                sa0 = 0.0
                sa1 = 0.0
                for j in range(k1):
                    if act[i, j]:
                        v0 = alpha[i, j]
                        v1 = a1[i, j]
                        sa0 += v0
                        sa1 += v1
                        kind = 1
                    else:  # margin stays >= its target
                        v0 = m[i, j] - tgt0[i, j]
                        v1 = m1[i, j] - tgt1[i, j]
                        kind = 4
                    if v1 < 0.0 and v1 < v0:
                        tt = max(v0, 0.0) / (v0 - v1)
                        if tt < tau:
                            tau, ev_i, ev_j, ev_kind = tt, i, j, kind
                if sa1 > 0.0:
                    v0 = w0[i] - sa0  # sum stays <= w_i
                    v1 = w1[i] - sa1
                    if v1 < 0.0 and v1 < v0:
                        tt = max(v0, 0.0) / (v0 - v1)
                        if tt < tau:
                            tau, ev_i, ev_j, ev_kind = tt, i, -1, 5
        if ev_i < 0:  # no event: the face's answer is the target's
            for i in range(n):
                for j in range(k1):
                    alpha[i, j] = a1[i, j]
                    m[i, j] = m1[i, j]
            for c in range(k1):
                b[c] = b1[c]
            return events
        events += 1
        if events > max_events:
            return -1
        # move to the event
        for i in range(n):
            w0[i] += tau * (w1[i] - w0[i])
            for j in range(k1):
                alpha[i, j] += tau * (a1[i, j] - alpha[i, j])
                beta0[i, j] += tau * (beta1[i, j] - beta0[i, j])
                tgt0[i, j] += tau * (tgt1[i, j] - tgt0[i, j])
                m[i, j] += tau * (m1[i, j] - m[i, j])
        for c in range(k1):
            b[c] += tau * (b1[c] - b[c])
            sig0[c] += tau * (sig1[c] - sig0[c])
        # change the face by the event; point i's fixed part and target row follow
        i = ev_i
        fixed_part(Z, Dm, w1, beta1, bnd, anc, i, -1.0, W0, s0)
        if ev_kind == 1:  # an active dual reached 0: the pair leaves
            alpha[i, ev_j] = 0.0
            act[i, ev_j] = 0
            if bnd[i] and ev_j == anc[i]:
                best = -1
                for j in range(k1):
                    if act[i, j] and (best < 0 or alpha[i, j] > alpha[i, best]):
                        best = j
                if best < 0:
                    return -1
                anc[i] = best
        elif ev_kind == 2 or ev_kind == 4:  # a pair reached the active level: it joins
            act[i, ev_j] = 1
        elif ev_kind == 3:  # a bound point's slack reached 0: it leaves the bound
            bnd[i] = 0
            anc[i] = 0
        else:  # the sum reached w_i: the point joins the bound
            bnd[i] = 1
            best = -1
            for j in range(k1):
                if act[i, j] and (best < 0 or alpha[i, j] > alpha[i, best]):
                    best = j
            if best < 0:
                return -1
            anc[i] = best
        fixed_part(Z, Dm, w1, beta1, bnd, anc, i, 1.0, W0, s0)
        for j in range(k1):
            a1[i, j] = w1[i] if bnd[i] and j == anc[i] else 0.0


@_jit("void(F2, F2, F1, F2, F2, F1, F2, B1, I1, B2, F2, F1)")
def perturb(Z, Dm, w, beta, alpha, b, m, bnd, anc, act, tgt, sig):
    """Make a feasible point the exact answer of a nearby problem; the start of a path.

    The point ``alpha`` (feasible for ``w``) with intercept ``b`` is put on its face
    (:func:`identify`, written to ``bnd, anc, act``): inactive duals are set to 0 and a
    bound point's active duals are scaled to sum to ``w_i``.  Then ``m`` is recomputed
    and targets ``tgt`` and the offset ``sig`` are chosen so that the point meets every
    optimality condition of the data ``(w, beta, tgt, sig)`` (:func:`face_solve`): an
    active pair of a point inside the bound gets its margin as target, the active pairs
    of a bound point targets that give them one common slack ``xi_i >= 0``, an inactive
    pair ``min(1, its margin)`` (of a bound point: ``min(1, m_ij + xi_i)``), and
    ``sig = s``.  A path (:func:`homotopy`) from there to targets 1 and ``sig = 0`` ends at
    the subproblem's answer.
    """
    n, r = Z.shape
    k1 = alpha.shape[1]
    identify(alpha, m, w, bnd, anc, act, False)
    for i in range(n):
        sa = 0.0
        for j in range(k1):
            if not act[i, j]:
                alpha[i, j] = 0.0
            sa += alpha[i, j]
        if bnd[i]:
            if sa > 0.0:
                for j in range(k1):
                    alpha[i, j] *= w[i] / sa
            else:
                alpha[i, anc[i]] = w[i]
    W = np.empty((r, k1))
    rebuild(Z, Dm, alpha, beta, W, sig)
    margins(Z, Dm, W, b, m)
    for i in range(n):
        if bnd[i]:
            xi = 0.0
            for j in range(k1):
                if act[i, j] and 1.0 - m[i, j] > xi:
                    xi = 1.0 - m[i, j]
            for j in range(k1):
                tgt[i, j] = m[i, j] + xi if act[i, j] else min(1.0, m[i, j] + xi)
        else:
            for j in range(k1):
                tgt[i, j] = m[i, j] if act[i, j] else min(1.0, m[i, j])


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


@_jit("void(F2, F2, F1, F2, F1, F2, F2, F2, F1, F1, F2, B1, I1, B2, F1, F2, F1, F1)", entry=True)
def solve(Z, Gk, zz, Dm, w, alpha, beta, W, s, b, m, bnd, anc, act, w0, beta0, prm, out):
    """Solve the convex subproblem for the data ``(w, beta)``.

    Starts (``prm[P_START]``):

    * ``START_PATH``: ``alpha, b, m`` and the face ``bnd, anc, act`` are the exact answer
      for the data ``(w0, beta0)``.  A few primal-dual active-set steps from that face
      (:func:`polish`) often land on the new answer; otherwise the answer is followed
      from ``(w0, beta0)`` to ``(w, beta)`` (:func:`homotopy`).
    * ``START_FACE``: ``alpha`` (feasible for ``w``), ``m`` and the face are a nearby
      answer's; active-set steps from that face.
    * ``START_COLD``: ``alpha`` feasible for ``w`` and ``b``, nothing else.

    What is left unsolved then gets coordinate sweeps (:func:`sweeps`: a loose
    tolerance ``prm[P_EPS_CD]``, at most ``prm[P_SWEEPS]`` sweeps), active-set steps,
    and a path from the problem the sweeps' point solves exactly (:func:`perturb`) to
    the subproblem; repeated with ten times tighter and twice as many sweeps until the
    KKT residual is at most ``prm[P_TOL]`` or ``prm[P_MAX_EPOCHS]`` sweeps are spent.

    Arrays written in place: ``alpha`` (n, K1), ``W`` (r, K1), ``s``, ``b`` (K1,), ``m``
    (n, K1), the face ``bnd`` (n,), ``anc`` (n,), ``act`` (n, K1) and ``w0, beta0``
    (scratch).  ``Gk`` is ``Z Z'`` (n, n) or (0, 0) (:func:`face_solve`), ``zz`` the
    squared norms of the rows of ``Z``, ``Dm`` (n K1, K1) the pair vectors.  ``out``:
    residual, gap, objective, sweeps, path events, ``max |s| / max w``, face solves.
    """
    n = alpha.shape[0]
    k1 = alpha.shape[1]
    rho, eps_b, tol, mu = prm[P_RHO], prm[P_EPS_B], prm[P_TOL], prm[P_MU]
    max_epochs = int(prm[P_MAX_EPOCHS])
    max_events = int(prm[P_MAX_EVENTS])
    rounds = int(prm[P_ROUNDS])
    start = int(prm[P_START])
    lam = np.empty(k1)
    one = np.ones_like(alpha)
    zero = np.zeros(k1)
    tgt0 = np.ones_like(alpha)
    sig0 = np.zeros(k1)
    epochs = 0
    out[O_FACES] = 0
    out[O_EVENTS] = 0
    if start == START_PATH:
        # active-set steps first (cheap when the face moves little), on a copy
        path_rounds = int(prm[P_PATH_ROUNDS])
        if path_rounds > 0:
            a2 = alpha.copy()
            m2 = m.copy()
            b2 = b.copy()
            bnd2 = bnd.copy()
            anc2 = anc.copy()
            act2 = act.copy()
            for i in range(n):
                f = w[i] / w0[i] if w0[i] > 0.0 else 0.0
                for j in range(k1):
                    a2[i, j] *= f
            if polish(Z, Gk, Dm, w, a2, beta, W, m2, s, b2, bnd2, anc2, act2, True, rho, mu,
                      path_rounds, tol, np.inf, out) <= tol:  # fmt: skip
                alpha[:, :] = a2
                m[:, :] = m2
                b[:] = b2
                bnd[:] = bnd2
                anc[:] = anc2
                act[:, :] = act2
                return
        ev = homotopy(Z, Gk, Dm, w0, beta0, tgt0, sig0, w, beta, one, zero, alpha, b, m, bnd,
                      anc, act, rho, mu, max_events, out)  # fmt: skip
        out[O_EVENTS] = ev
        if ev >= 0 and clip_feasible(alpha, w):
            rebuild(Z, Dm, alpha, beta, W, s)
            margins(Z, Dm, W, b, m)
            check(m, w, alpha, beta, W, b, s, out)
            if out[O_KKT] <= tol:
                return
        # an exact answer for the data reached: rescale it to w and go on from its face
        for i in range(n):
            f = w[i] / w0[i] if w0[i] > 0.0 else 0.0
            for j in range(k1):
                alpha[i, j] *= f
        clip_feasible(alpha, w)
        start = START_FACE
    if start == START_FACE and polish(Z, Gk, Dm, w, alpha, beta, W, m, s, b, bnd, anc, act,
                                      True, rho, mu, rounds, tol, np.inf, out) <= tol:  # fmt: skip
        return
    rebuild(Z, Dm, alpha, beta, W, s)
    eps = prm[P_EPS_CD]
    budget = int(prm[P_SWEEPS])
    while True:
        for c in range(k1):
            lam[c] = b[c] - rho * s[c]  # the effective intercept starts at b
        epochs += sweeps(Z, zz, Dm, w, alpha, beta, W, s, lam, rho, eps, eps_b,
                         min(budget, max_epochs - epochs))  # fmt: skip
        budget *= 2
        out[O_EPOCHS] = epochs
        rebuild(Z, Dm, alpha, beta, W, s)
        for c in range(k1):
            b[c] = lam[c] + rho * s[c]
        margins(Z, Dm, W, b, m)
        check(m, w, alpha, beta, W, b, s, out)
        identify(alpha, m, w, bnd, anc, act, False)
        if out[O_KKT] <= tol:
            return
        if polish(Z, Gk, Dm, w, alpha, beta, W, m, s, b, bnd, anc, act, False, rho, mu, rounds,
                  tol, out[O_KKT], out) <= tol:  # fmt: skip
            return
        # a path from the problem this point solves exactly
        a2 = alpha.copy()
        m2 = m.copy()
        b2 = b.copy()
        bnd2 = bnd.copy()
        anc2 = anc.copy()
        act2 = act.copy()
        w2 = w.copy()
        beta2 = beta.copy()
        perturb(Z, Dm, w, beta, a2, b2, m2, bnd2, anc2, act2, tgt0, sig0)
        ev = homotopy(Z, Gk, Dm, w2, beta2, tgt0, sig0, w, beta, one, zero, a2, b2, m2, bnd2,
                      anc2, act2, rho, mu, max_events, out)  # fmt: skip
        out[O_EVENTS] = ev
        if ev >= 0 and clip_feasible(a2, w):
            W2 = np.empty_like(W)
            s2 = np.empty(k1)
            rebuild(Z, Dm, a2, beta, W2, s2)
            margins(Z, Dm, W2, b2, m2)
            tmp = np.empty(O_SIZE)
            check(m2, w, a2, beta, W2, b2, s2, tmp)
            if tmp[O_KKT] <= tol:
                alpha[:, :] = a2
                m[:, :] = m2
                b[:] = b2
                bnd[:] = bnd2
                anc[:] = anc2
                act[:, :] = act2
                W[:, :] = W2
                s[:] = s2
                for c in (O_KKT, O_GAP, O_OBJ, O_STAT_B):
                    out[c] = tmp[c]
                return
        if epochs >= max_epochs:
            return
        eps *= 0.1
        eps_b *= 0.1
