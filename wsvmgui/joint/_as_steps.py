"""Primal-dual active-set steps of the active-set solver (compiled; :mod:`._active_set_kernel`).

:func:`identify` reads the face a point lies on from its duals and margins;
:func:`polish` solves that face (:func:`._as_face.face_solve`), identifies the face of
the answer, and so on: cheap when the steps converge, stopped when they do not.
"""

from __future__ import annotations

import numpy as np

from ..ladder._path_jit import _jit
from ._as_answer import check, clip_feasible, margins, rebuild, take
from ._as_face import face_solve
from ._as_layout import O_FACES, O_GAP, O_KKT, O_OBJ, O_SIZE, O_STAT_B


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
        # the clip leaves an infeasible answer as it is: one fit either way
        feasible = clip_feasible(an, w)
        rebuild(Z, Dm, an, beta, Wc, sc)
        margins(Z, Dm, Wc, bn, mc)
        for i in range(n):
            for j in range(k1):
                ac[i, j] = an[i, j]
        if not feasible:
            continue
        check(mc, w, an, beta, Wc, bn, sc, tmp)
        if not tmp[O_KKT] < current:
            continue
        current = tmp[O_KKT]
        for c in (O_KKT, O_GAP, O_OBJ, O_STAT_B):
            out[c] = tmp[c]
        take(alpha, m, b, bnd, anc, act, an, mc, bn, fb, fa, ft)
        W[:, :] = Wc
        for c in range(k1):
            s[c] = sc[c]
        best = current
        if best <= tol:
            break
    return best
