"""Compiled solver of the convex subproblem of one DCA step (:mod:`.active_set`).

Math (:mod:`.subproblem`): points ``i`` with features ``z_i`` (r,), weights ``w_i``, and
``K1 = K - 1`` pair margins ``m_ij = u_i . D_ij`` with ``u_i = z_i' W + b`` (K1,) and
``D_ij = P[y_i] - P[k_ij]`` (rows ``i * K1 + j`` of ``Dm``).  The duals ``alpha_ij >= 0``
with ``sum_j alpha_ij <= w_i``, the DCA slopes ``beta_ij``, ``gamma = alpha - beta``,
``W = sum_ij gamma_ij z_i D_ij'`` and ``s = sum_ij gamma_ij D_ij``; the intercept's
stationarity is the equality ``s = 0``.  An answer's *face*: which points' sums are at
their bound (``bnd``, with an anchor pair ``anc``) and which pairs are active (``act``).

The solver is built from modules with one job each:

* :mod:`._as_answer`: what a dual point gives (``W``, ``s``, margins, the KKT residual
  every answer reports, :func:`check`; the DCA's truncated objective and set);
* :mod:`._as_face`: the exact optimum on a face, one symmetric linear system (a
  Cholesky factor and a ``K1 x K1`` Schur complement);
* :mod:`._as_steps`: primal-dual active-set steps (:func:`polish`, the face the last
  answer identifies, :func:`identify`): cheap when they converge, stopped when they do
  not;
* :mod:`._as_homotopy`: a parametric active-set method (:func:`homotopy`): from the exact
  answer for some data ``(w, beta)`` it follows the answer, piecewise linear in the
  data, to new data, changing the face by one condition at each event; warm starts
  along the simplex grid and along the DCA steps are such paths;
* :mod:`._as_sweeps`: dual coordinate descent (:func:`sweeps`), which gives a cold start
  a nearby point; :func:`perturb` makes it the exact answer of nearby data (targets and
  an offset), and a path from there finishes;
* this module: the strategy, :func:`solve` (with :func:`rescale`, :func:`settle`,
  :func:`adopt_if_exact`); the layouts of its parameter and result vectors are in
  :mod:`._as_layout`.

:func:`solve` starts from one of three points (``prm[P_START]``):

* ``START_PATH``: ``alpha, b, m`` and the face ``bnd, anc, act`` are the exact answer
  for the data ``(w0, beta0)``.  A few primal-dual active-set steps from that face
  (:func:`polish`) often land on the new answer; otherwise the answer is followed
  from ``(w0, beta0)`` to ``(w, beta)`` (:func:`homotopy`).
* ``START_FACE``: ``alpha`` (feasible for ``w``), ``m`` and the face are a nearby
  answer's; active-set steps from that face (:func:`polish`).
* ``START_COLD``: ``alpha`` feasible for ``w`` and ``b``, nothing else.

What is left unsolved then gets coordinate sweeps (:func:`sweeps`: a loose tolerance
``prm[P_EPS_CD]``, at most ``prm[P_SWEEPS]`` sweeps), active-set steps, and a path from
the problem the sweeps' point solves exactly (:func:`perturb`) to the subproblem;
repeated with ten times tighter and twice as many sweeps until the KKT residual is at
most ``prm[P_TOL]`` or ``prm[P_MAX_EPOCHS]`` sweeps are spent.

All state lives in caller-owned arrays; the functions release the GIL and are compiled
once per machine and cached on disk, with IEEE division (the residual checks catch NaN).
Only the functions :mod:`.active_set` calls have a Python entry point.  Importing this
module compiles (or loads) every kernel of the solver (the warm-up imports it).  numba's
cache does not notice a change to a function in another file that a cached function
calls: after editing one of these modules, clear ``wsvmgui/joint/__pycache__/*.nb[ic]``.
"""

from __future__ import annotations

import numpy as np

from ..ladder._path_jit import _jit
from ._as_answer import (
    check,
    clip_feasible,
    margins,
    rebuild,
    take,
    truncated_objective,
    truncated_set,
)
from ._as_homotopy import homotopy, perturb
from ._as_layout import (
    O_EPOCHS,
    O_EVENTS,
    O_FACES,
    O_GAP,
    O_KKT,
    O_OBJ,
    O_SIZE,
    O_STAT_B,
    P_EPS_B,
    P_EPS_CD,
    P_MAX_EPOCHS,
    P_MAX_EVENTS,
    P_MU,
    P_PATH_ROUNDS,
    P_RHO,
    P_ROUNDS,
    P_SIZE,
    P_START,
    P_SWEEPS,
    P_TOL,
    START_COLD,
    START_FACE,
    START_PATH,
)
from ._as_steps import identify, polish
from ._as_sweeps import block_solve, sweeps

__all__ = [
    "O_EPOCHS", "O_EVENTS", "O_FACES", "O_GAP", "O_KKT", "O_OBJ", "O_SIZE", "O_STAT_B",
    "P_EPS_B", "P_EPS_CD", "P_MAX_EPOCHS", "P_MAX_EVENTS", "P_MU", "P_PATH_ROUNDS", "P_RHO",
    "P_ROUNDS", "P_SIZE", "P_START", "P_SWEEPS", "P_TOL", "START_COLD", "START_FACE",
    "START_PATH", "block_solve", "identify", "solve", "truncated_objective", "truncated_set",
]  # fmt: skip


@_jit("void(F2, F1, F1)")
def rescale(alpha, w, w0):
    """Scale point i's duals by ``w_i / w0_i`` (to 0 where ``w0_i = 0``)."""
    n, k1 = alpha.shape
    for i in range(n):
        f = w[i] / w0[i] if w0[i] > 0.0 else 0.0
        for j in range(k1):
            alpha[i, j] *= f


@_jit("float64(F2, F2, F1, F2, F2, F2, F1, F1, F2, F1)")
def settle(Z, Dm, w, alpha, beta, W, s, b, m, out):
    """``W``, ``s`` and the margins of the duals ``alpha`` and intercept ``b``, and their
    check (:func:`check`, into ``out``); returns the KKT residual."""
    rebuild(Z, Dm, alpha, beta, W, s)
    margins(Z, Dm, W, b, m)
    check(m, w, alpha, beta, W, b, s, out)
    return out[O_KKT]


@_jit(
    "boolean(F2, F2, F1, F2, float64, F2, F2, F1, B1, I1, B2, F2, F2, F1, B1, I1, B2, F2, F1, F1)",
)
def adopt_if_exact(Z, Dm, w, beta, tol, a2, m2, b2, bnd2, anc2, act2, alpha, m, b, bnd, anc,
                   act, W, s, out):  # fmt: skip
    """Take the answer ``a2, b2`` (its margins ``m2`` recomputed, its face ``bnd2, anc2,
    act2``) with its fit ``W, s`` and check when its KKT residual is at most ``tol``;
    True if taken."""
    W2 = np.empty_like(W)
    s2 = np.empty(W.shape[1])
    tmp = np.empty(O_SIZE)
    if not settle(Z, Dm, w, a2, beta, W2, s2, b2, m2, tmp) <= tol:
        return False
    take(alpha, m, b, bnd, anc, act, a2, m2, b2, bnd2, anc2, act2)
    W[:, :] = W2
    s[:] = s2
    for c in (O_KKT, O_GAP, O_OBJ, O_STAT_B):
        out[c] = tmp[c]
    return True


@_jit("void(F2, F2, F1, F2, F1, F2, F2, F2, F1, F1, F2, B1, I1, B2, F1, F2, F1, F1)", entry=True)
def solve(Z, Gk, zz, Dm, w, alpha, beta, W, s, b, m, bnd, anc, act, w0, beta0, prm, out):
    """Solve the convex subproblem for the data ``(w, beta)``.

    The start ``prm[P_START]`` and the strategy: the module docstring.  Arrays written in
    place: ``alpha`` (n, K1), ``W`` (r, K1), ``s``, ``b`` (K1,), ``m`` (n, K1), the face
    ``bnd`` (n,), ``anc`` (n,), ``act`` (n, K1) and ``w0, beta0`` (scratch).  ``Gk`` is
    ``Z Z'`` (n, n) or (0, 0) (:func:`._as_face.face_solve`), ``zz`` the squared norms of
    the rows of ``Z``, ``Dm`` (n K1, K1) the pair vectors.  ``out``: residual, gap,
    objective, sweeps, path events, ``max |s| / max w``, face solves.
    """
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
            a2, m2, b2 = alpha.copy(), m.copy(), b.copy()
            bnd2, anc2, act2 = bnd.copy(), anc.copy(), act.copy()
            rescale(a2, w, w0)
            if polish(Z, Gk, Dm, w, a2, beta, W, m2, s, b2, bnd2, anc2, act2, True, rho, mu,
                      path_rounds, tol, np.inf, out) <= tol:  # fmt: skip
                take(alpha, m, b, bnd, anc, act, a2, m2, b2, bnd2, anc2, act2)
                return
        ev = homotopy(Z, Gk, Dm, w0, beta0, tgt0, sig0, w, beta, one, zero, alpha, b, m, bnd,
                      anc, act, rho, mu, max_events, out)  # fmt: skip
        out[O_EVENTS] = ev
        if ev >= 0 and clip_feasible(alpha, w) and settle(Z, Dm, w, alpha, beta, W, s, b, m,
                                                          out) <= tol:  # fmt: skip
            return
        # an exact answer for the data reached: rescale it to w and go on from its face
        rescale(alpha, w, w0)
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
        a2, m2, b2 = alpha.copy(), m.copy(), b.copy()
        bnd2, anc2, act2 = bnd.copy(), anc.copy(), act.copy()
        w2, beta2 = w.copy(), beta.copy()
        perturb(Z, Dm, w, beta, a2, b2, m2, bnd2, anc2, act2, tgt0, sig0)
        ev = homotopy(Z, Gk, Dm, w2, beta2, tgt0, sig0, w, beta, one, zero, a2, b2, m2, bnd2,
                      anc2, act2, rho, mu, max_events, out)  # fmt: skip
        out[O_EVENTS] = ev
        if ev >= 0 and clip_feasible(a2, w) and adopt_if_exact(
            Z, Dm, w, beta, tol, a2, m2, b2, bnd2, anc2, act2, alpha, m, b, bnd, anc, act, W, s,
            out):  # fmt: skip
            return
        if epochs >= max_epochs:
            return
        eps *= 0.1
        eps_b *= 0.1
