"""The path of the active-set solver: parametric active-set steps (compiled;
:mod:`._active_set_kernel`).

From the exact answer for some data ``(w, beta, tgt, sig)`` (:func:`._as_face.face_solve`)
:func:`homotopy` follows the answer, piecewise linear in the data, to new data, changing
the face by one condition at each event.  Warm starts along the simplex grid and along
the DCA steps are such paths; a cold start's nearby point is first made the exact answer
of nearby data by :func:`perturb`.
"""

from __future__ import annotations

import numpy as np

from ..ladder._path_jit import _jit
from ._as_answer import margins, rebuild
from ._as_face import face_core, face_list, fixed_part
from ._as_layout import O_FACES
from ._as_steps import identify

# Events of :func:`homotopy` (the condition that would fail first).
EV_DUAL_ZERO, EV_BOUND_PAIR, EV_SLACK_ZERO, EV_FREE_PAIR, EV_SUM_BOUND = 1, 2, 3, 4, 5


@_jit("int64(F2, B2, int64)")
def largest_active(alpha, act, i):
    """Point i's active pair with the largest dual (a new anchor); -1 if none is active."""
    best = -1
    for j in range(alpha.shape[1]):
        if act[i, j] and (best < 0 or alpha[i, j] > alpha[i, best]):
            best = j
    return best


@_jit("void(F2, F1, B1, I1, I1, I1, I1, int64, F1, F2, F2, F2, F2)")
def face_answer(Z, w1, bnd, anc, fi, fa, fb, nf, t, dvec, W0, a1, W1):
    """The face's answer for the target data from its free duals ``t`` (:func:`face_core`):
    the free points' rows of ``a1`` (fixed part, then the free duals) and ``W1 = W0 +
    sum_f t_f z_i d_f'``."""
    r = Z.shape[1]
    k1 = W0.shape[1]
    for a in range(r):
        for c in range(k1):
            W1[a, c] = W0[a, c]
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


@_jit("float64(F2, F2, F2, F1, F1, F1, F2, F2, F2, F2, F2, F2, B1, I1, B2, I1)")
def first_event(Z, Dm, W1, b1, w0, w1, alpha, a1, m, m1, tgt0, tgt1, bnd, anc, act, ev):
    """The target answer's margins ``m1`` and the first event along ``x(tau) = x0 + tau
    (x1 - x0)``, ``tau`` in (0, 1]: a quantity that is >= 0 at ``tau = 0`` crossing 0
    (an active dual; the sum's room ``w_i - sum_j alpha_ij``; a bound point's slack
    ``xi_i``; an inactive pair's distance from the active level).  Returns ``tau`` and
    writes ``ev`` (point, pair, kind); ``ev[0] = -1`` and ``tau = 1``: no event.  One
    fused pass (the hot loop of the path: no calls inside; per-point calls here, not
    inlined and each passing its arrays, made joint fits ~19% slower).
    """
    n, r = Z.shape
    k1 = W1.shape[1]
    u = np.empty(k1)
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
                    kind = EV_DUAL_ZERO
                else:  # pair stays below the active level: tgt - m <= xi
                    v0 = (m[i, j] - tgt0[i, j]) - (m[i, ja] - tgt0[i, ja])
                    v1 = (m1[i, j] - tgt1[i, j]) - (m1[i, ja] - tgt1[i, ja])
                    kind = EV_BOUND_PAIR
                if v1 < 0.0 and v1 < v0:
                    tt = max(v0, 0.0) / (v0 - v1)
                    if tt < tau:
                        tau, ev_i, ev_j, ev_kind = tt, i, j, kind
            v0 = tgt0[i, ja] - m[i, ja]  # slack xi_i >= 0
            v1 = tgt1[i, ja] - m1[i, ja]
            if v1 < 0.0 and v1 < v0:
                tt = max(v0, 0.0) / (v0 - v1)
                if tt < tau:
                    tau, ev_i, ev_j, ev_kind = tt, i, ja, EV_SLACK_ZERO
        else:
            sa0 = 0.0
            sa1 = 0.0
            for j in range(k1):
                if act[i, j]:
                    v0 = alpha[i, j]
                    v1 = a1[i, j]
                    sa0 += v0
                    sa1 += v1
                    kind = EV_DUAL_ZERO
                else:  # margin stays >= its target
                    v0 = m[i, j] - tgt0[i, j]
                    v1 = m1[i, j] - tgt1[i, j]
                    kind = EV_FREE_PAIR
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
                        tau, ev_i, ev_j, ev_kind = tt, i, -1, EV_SUM_BOUND
    ev[0] = ev_i
    ev[1] = ev_j
    ev[2] = ev_kind
    return tau


@_jit("void(float64, F1, F1, F2, F2, F2, F2, F2, F2, F2, F2, F1, F1, F1, F1)")
def move_to(tau, w0, w1, alpha, a1, beta0, beta1, tgt0, tgt1, m, m1, b, b1, sig0, sig1):
    """Move the answer and the data ``0`` the fraction ``tau`` towards the targets."""
    n, k1 = alpha.shape
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


@_jit("boolean(F2, F2, F1, F2, F2, F2, B1, I1, B2, F2, F1, int64, int64, int64)")
def change_face(Z, Dm, w1, beta1, alpha, a1, bnd, anc, act, W0, s0, i, j, kind):
    """Change point i's statuses by the event ``(i, j, kind)``; its fixed part in ``W0,
    s0`` and its fixed row of ``a1`` follow.  False when a bound point is left with no
    active pair to anchor it."""
    fixed_part(Z, Dm, w1, beta1, bnd, anc, i, i + 1, -1.0, W0, s0)
    if kind == EV_DUAL_ZERO:  # an active dual reached 0: the pair leaves
        alpha[i, j] = 0.0
        act[i, j] = 0
        if bnd[i] and j == anc[i]:
            best = largest_active(alpha, act, i)
            if best < 0:
                return False
            anc[i] = best
    elif kind in (EV_BOUND_PAIR, EV_FREE_PAIR):  # a pair reached the active level
        act[i, j] = 1
    elif kind == EV_SLACK_ZERO:  # a bound point's slack reached 0: it leaves the bound
        bnd[i] = 0
        anc[i] = 0
    else:  # the sum reached w_i: the point joins the bound
        bnd[i] = 1
        best = largest_active(alpha, act, i)
        if best < 0:
            return False
        anc[i] = best
    fixed_part(Z, Dm, w1, beta1, bnd, anc, i, i + 1, 1.0, W0, s0)
    for jj in range(alpha.shape[1]):
        a1[i, jj] = w1[i] if bnd[i] and jj == anc[i] else 0.0
    return True


@_jit(
    "int64(F2, F2, F2, F1, F2, F2, F1, F1, F2, F2, F1, F2, F1, F2, B1, I1, B2, float64, float64,"
    " int64, F1)",
)
def homotopy(Z, Gk, Dm, w0, beta0, tgt0, sig0, w1, beta1, tgt1, sig1, alpha, b, m, bnd, anc,
             act, rho, mu, max_events, out):  # fmt: skip
    """Follow the exact answer from the data ``(w0, beta0, tgt0, sig0)`` to ``(w1, ...)``.

    (Data as :func:`._as_face.face_solve`.)  ``alpha, b, m`` must be the exact answer for
    the data ``0`` on the face ``bnd, anc, act``.  Along the data ``(1 - t) data0 + t
    data1`` the answer on a fixed face is affine in ``t``, so it runs on the segment from
    the current answer to the face's answer for the target data (:func:`face_answer`)
    until the first optimality condition would fail (an event, :func:`first_event`): a
    free dual reaching 0, a sum reaching its bound, a bound point's slack reaching 0, or
    a pair's margin reaching the point's active level.  There the face changes by that
    one condition (:func:`change_face`), and the walk goes on; with no event before the
    target the face's answer is the target's.  The data ``0`` are overwritten (the data
    reached so far).  On success ``alpha, b, m`` and the statuses hold the target's
    answer (``W`` and ``s`` are rebuilt by the caller).  Returns the events met, or -1
    when a face solve fails or ``max_events`` are exceeded (the arrays then hold an
    exact answer for the data reached).  ``out[O_FACES]`` counts the face solves.
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
    fixed_part(Z, Dm, w1, beta1, bnd, anc, 0, n, 1.0, W0, s0)
    for i in range(n):
        if bnd[i]:
            a1[i, anc[i]] = w1[i]
    W1 = np.empty((r, k1))
    b1 = np.empty(k1)
    m1 = np.empty_like(m)
    ev = np.empty(3, np.int64)
    events = 0
    while True:
        out[O_FACES] += 1
        nf = face_list(bnd, anc, act, fi, fa, fb)
        if not face_core(Z, Gk, Dm, tgt1, sig1, fi, fa, fb, nf, W0, s0, rho, mu, dvec, t, b1):
            return -1
        face_answer(Z, w1, bnd, anc, fi, fa, fb, nf, t, dvec, W0, a1, W1)
        tau = first_event(Z, Dm, W1, b1, w0, w1, alpha, a1, m, m1, tgt0, tgt1, bnd, anc, act, ev)
        if ev[0] < 0:  # no event: the face's answer is the target's
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
        move_to(tau, w0, w1, alpha, a1, beta0, beta1, tgt0, tgt1, m, m1, b, b1, sig0, sig1)
        if not change_face(Z, Dm, w1, beta1, alpha, a1, bnd, anc, act, W0, s0, ev[0], ev[1], ev[2]):
            return -1


@_jit("void(F2, F2, F1, F2, F2, F1, F2, B1, I1, B2, F2, F1)")
def perturb(Z, Dm, w, beta, alpha, b, m, bnd, anc, act, tgt, sig):
    """Make a feasible point the exact answer of a nearby problem; the start of a path.

    The point ``alpha`` (feasible for ``w``) with intercept ``b`` is put on its face
    (:func:`identify`, written to ``bnd, anc, act``): inactive duals are set to 0 and a
    bound point's active duals are scaled to sum to ``w_i``.  Then ``m`` is recomputed
    and targets ``tgt`` and the offset ``sig`` are chosen so that the point meets every
    optimality condition of the data ``(w, beta, tgt, sig)`` (:func:`._as_face.face_solve`): an
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
