"""Linear algebra of a face of the active-set solver (compiled; :mod:`._active_set_kernel`).

A *face* fixes which points' sums are at their bound (``bnd``, with an anchor pair
``anc``) and which pairs are active (``act``); on it the optimality conditions are one
symmetric linear system in the free duals and the intercept.  :func:`face_list` lists
the free duals, :func:`fixed_part` adds points' fixed duals to the fit, and
:func:`face_core` (directions, matrix, right side, then a Cholesky factor and a ``K1 x
K1`` Schur complement) solves the system; :func:`face_solve` is the whole step from the
statuses to the duals.
"""

from __future__ import annotations

import numpy as np

from ..ladder._path_jit import _jit


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


@_jit("void(F2, F2, F1, F2, B1, I1, int64, int64, float64, F2, F1)")
def fixed_part(Z, Dm, w, beta, bnd, anc, lo, hi, sign, W0, s0):
    """Add ``sign`` times the fixed parts of the points ``lo <= i < hi`` to ``W0, s0``:
    ``w_i`` on a bound point's anchor pair, minus the slopes ``beta_i``.  One pass, no
    call or allocation per point (all points at every face solve: a hot loop)."""
    r = Z.shape[1]
    k1 = beta.shape[1]
    v = np.empty(k1)
    for i in range(lo, hi):
        v[:] = 0.0
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
            continue
        for c in range(k1):
            s0[c] += v[c]
        for a in range(r):
            zia = Z[i, a]
            for c in range(k1):
                W0[a, c] += zia * v[c]


@_jit("void(F2, I1, I1, I1, int64, F2)")
def face_directions(Dm, fi, fa, fb, nf, dvec):
    """Each free dual's direction ``D_{i fa}`` (minus the anchor's ``D_{i fb}`` for a
    bound point); writes the first ``nf`` rows of ``dvec`` (>= nf, K1)."""
    k1 = Dm.shape[1]
    for f in range(nf):
        ra = fi[f] * k1 + fa[f]
        for c in range(k1):
            dvec[f, c] = Dm[ra, c]
        if fb[f] >= 0:
            rb = fi[f] * k1 + fb[f]
            for c in range(k1):
                dvec[f, c] -= Dm[rb, c]


@_jit("void(F2, F2, I1, int64, F2, float64, F2)")
def face_matrix(Z, Gk, fi, nf, dvec, rho, H):
    """The block ``H + rho G G'`` of :func:`face_core`: ``(z_i . z_k + rho) (d_f . d_g)``
    for the free duals f (point i) and g (point k); writes ``H`` (nf, nf)."""
    n, r = Z.shape
    k1 = dvec.shape[1]
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


@_jit("void(F2, F2, F2, F1, I1, I1, I1, int64, F2, F1, float64, F2, F1)")
def face_rhs(Z, Dm, tgt, sig, fi, fa, fb, nf, W0, s0, rho, dvec, t):
    """The first block row's right side of :func:`face_core`: along each free direction,
    the targets minus the fixed part's margins, minus ``rho d_f . (s0 - sig)``; writes
    ``t[:nf]``."""
    r = Z.shape[1]
    k1 = W0.shape[1]
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


@_jit("float64(F2, F2, int64, F1, F1, F1, F2, F2, F1)")
def schur_complement(L, dvec, nf, s0, sig, t, HG, S, bnew):
    """The Schur complement of :func:`face_core`'s system, from the factor ``L`` of ``H``.

    With ``G = dvec[:nf]`` (nf, K1): writes ``HG = (H^-1 G)'`` (K1, nf), ``t[:nf] <-
    H^-1 t``, ``S = G' H^-1 G`` (K1, K1, exactly symmetric) and ``bnew = G' t + s0 -
    sig``, the right side of ``S b = bnew``; returns the largest diagonal entry of ``S``.
    """
    k1 = dvec.shape[1]
    for c in range(k1):
        for f in range(nf):
            HG[c, f] = dvec[f, c]
        chol_solve(L, HG[c])
    chol_solve(L, t[:nf])
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
    return smax


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
    plus ``rho``, positive definite on a regular face, :func:`face_matrix`;
    :func:`face_rhs`), and the system is solved by a Cholesky factor of that block and
    its Schur complement (:func:`schur_complement`).  A ridge ``mu`` keeps a degenerate
    face (more free duals than the fit has degrees of freedom) solvable; it moves the
    margins by ``mu t``.  ``Gk`` is ``Z Z'`` (n, n), or shape (0, 0) to compute its
    entries from ``Z``.  Returns False when there is no free dual or a factor fails.
    """
    k1 = W0.shape[1]
    if nf == 0:
        return False
    face_directions(Dm, fi, fa, fb, nf, dvec)
    H = np.empty((nf, nf))
    face_matrix(Z, Gk, fi, nf, dvec, rho, H)
    face_rhs(Z, Dm, tgt, sig, fi, fa, fb, nf, W0, s0, rho, dvec, t)
    if not cholesky(H, mu):
        return False
    # Schur complement: (G' H^-1 G) b = G' H^-1 rhs + s0 - sig, then t = H^-1 (rhs - G b)
    HG = np.empty((k1, nf))
    S = np.empty((k1, k1))
    smax = schur_complement(H, dvec, nf, s0, sig, t, HG, S, bnew)
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
    point solves exactly (:func:`._as_homotopy.perturb`), the start of a path to the subproblem.
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
    fixed_part(Z, Dm, w, beta, bnd, anc, 0, n, 1.0, W0, s0)
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
