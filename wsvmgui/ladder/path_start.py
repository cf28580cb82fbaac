"""Starting solutions of the weight path: exact at pi = 0, or libsvm polished at a weight.

:func:`limit_start` (the default) needs no solver: at ``pi -> 0`` every negative point is
left of the elbow and the positives' coefficients are ``C pi`` times the solution of a
small quadratic problem over the positive points only (the projection of the negatives'
kernel mean onto the positives' scaled convex hull), which the compiled
:func:`wsvmgui.ladder._path_start.limit_start` solves exactly by a homotopy on the
path's own elbow system.  Its cost is that of a few elbow steps per point of the final
support, independent of C; the tracer then starts at pi = 0 and traces to pi = 1.
Derivation: ``docs/notes/path.md``.

:func:`libsvm_start` is the earlier start, kept as the fallback: libsvm at a weight at a
tight tolerance (``START_TOL``), then *polished*: the sets are read off the approximate
solution and the elbow system is solved exactly, moving points that violate their set's
conditions until none does.  libsvm crawls there on numerically rank-deficient kernels
and at large C (millions of iterations), which is why it is no longer the first choice.
"""

from __future__ import annotations

import numpy as np

from .path_rows import KernelRows
from .path_tracer import (
    DUAL_TOL,
    E_SET,
    L_SET,
    R_SET,
    _breakdown,
    _Limits,
    _Progress,
    _Tracer,
)

#: libsvm's stopping tolerance for the fallback start (polished afterwards).
START_TOL = 1e-8


def limit_start(
    rows: KernelRows,
    y: np.ndarray,
    w: np.ndarray,
    C: float,
    lam: float,
    rank_tol: float,
    path_tol: float,
    ridge: float,
    report: _Progress,
    limits: _Limits,
    max_steps: int,
) -> _Tracer:
    """A tracer holding the exact solution at pi = 0 (and its slopes), ready to trace up.

    Every negative point in L, the support of the limit problem on the elbow, the other
    positives in R; ``c = 0`` and ``b = 1`` there.  The homotopy's work counts in
    ``limits.work``; an elbow beyond ``limits.max_elbow`` raises
    :class:`~wsvmgui.ladder.path_tracer.PathTooCostly`.

    Raises
    ------
    PathBreakdown
        The limit problem's systems could not be solved accurately, or cycling.
    """
    from . import _path_start

    tr = _Tracer(rows, y, w, C, lam, rank_tol, path_tol, ridge)
    pk, fs, iv, prm = tr.pk, tr.fs, tr.iv, tr.prm
    tr.pi, tr.b = 0.0, 1.0
    tr.set_state(np.where(y < 0, L_SET, R_SET).astype(np.int8), np.empty(0, dtype=np.intp))
    prm[pk.P_MAX_STEPS], prm[pk.P_MAX_ELBOW] = max_steps, limits.max_elbow
    fs[pk.F_TAU], fs[pk.F_WORK], fs[pk.F_VIOL] = 0.0, limits.work, 0.0
    iv[pk.I_STEP] = iv[pk.I_ZERO_RUN] = iv[pk.I_SINCE_YIELD] = 0
    try:
        while True:
            tr._room(2)
            status = _path_start.limit_start(
                tr.K, tr.slot, tr.pt, prm, tr.state, tr.sd, tr.parked, tr.S, tr.idx,
                tr.where, tr.R, tr.V, tr.FH, fs, iv,
            )  # fmt: skip
            if status == pk.ST_END:
                break
            if status == pk.ST_YIELD:
                report(0.0)
            elif not tr.serve(status):
                raise tr._failure(status, max_steps)
    finally:
        limits.work = float(fs[pk.F_WORK])
    tr.pi, tr.b = 0.0, 1.0
    return tr


def _polish(tr: _Tracer, pi: float, alpha: np.ndarray, b: float, max_iter: int = 60) -> None:
    """Turn an approximate dual solution at ``pi`` into an exact one (sets and elbow system).

    The sets are read off ``alpha`` (E strictly inside its box); the elbow system is then
    solved exactly and points that violate their set's conditions are moved (all at once
    in the first rounds, then the worst one at a time) until none does.
    """
    y, w, C = tr.y, tr.w, tr.C
    U = w * C * np.where(y > 0, 1.0 - pi, pi)
    r = alpha / U
    state = np.where(r >= 1.0 - 1e-8, L_SET, np.where(r <= 1e-8, R_SET, E_SET)).astype(np.int8)
    order = np.argsort(-np.minimum(r, 1.0 - r), kind="stable")
    tr.pi, tr.b = pi, b
    for i in tr.set_state(state, order[state[order] == E_SET]):
        if r[i] > 0.5:
            tr.move(i, L_SET)
    tol = 1e-9
    for it in range(max_iter):
        V, beta, FH = tr.evaluate()
        cE, f = V[:, 0], FH[0]
        if tr.m:
            tr.b = float(beta[0])
        margin = y * f - 1.0
        bad_pts = -(tr.side * margin)  # > 0: R below or L above its margin
        moves: list[tuple[float, int, int]] = []
        for i in np.flatnonzero(bad_pts > tol).tolist():
            moves.append((float(bad_pts[i]), i, E_SET))
        E = tr.members.copy()
        if E.size:
            a = y[E] * cE
            scale = w[E] * C
            low, high = -a / scale, (a - U[E]) / scale
            for k in np.flatnonzero(low > tol):
                moves.append((float(low[k]), int(E[k]), R_SET))
            for k in np.flatnonzero(high > tol):
                moves.append((float(high[k]), int(E[k]), L_SET))
        elif abs(C * ((1.0 - pi) * tr.n_pos - pi * tr.n_neg)) > tol * C:
            # sum c = 0 fails with an empty elbow: the point nearest its margin must join.
            j = int(np.argmin(np.abs(margin)))
            moves.append((1.0, j, E_SET))
        if not moves:
            return
        moves.sort(key=lambda m: (-m[0], m[1]))
        if it >= 3:
            moves = moves[:1]
        for _, j, new in moves:
            tr.move(j, new)
    raise _breakdown(f"the start could not be polished in {max_iter} rounds", pi, tr.lam)


def _libsvm_start(
    rows: KernelRows, y: np.ndarray, upper: np.ndarray, C: float
) -> tuple[np.ndarray, float]:
    """libsvm at a tight tolerance (``START_TOL``), so that polishing has little to fix."""
    alpha, b = rows.libsvm(y, upper, C, START_TOL)
    return np.minimum(alpha, upper), b


def libsvm_start(
    rows: KernelRows,
    y: np.ndarray,
    w: np.ndarray,
    C: float,
    lam: float,
    pi: float,
    rank_tol: float,
    path_tol: float,
    ridge: float,
    starts: dict[float, tuple[np.ndarray, float]] | None = None,
) -> _Tracer:
    """A tracer holding the exact solution at ``pi``: libsvm, then :func:`_polish`.

    ``starts`` keeps libsvm's answer per ``pi`` for another attempt (with a ridge: libsvm
    does not see it).
    """
    tr = _Tracer(rows, y, w, C, lam, rank_tol, path_tol, ridge)
    upper = w * C * np.where(y > 0, 1.0 - pi, pi)
    cached = None if starts is None else starts.get(pi)
    alpha, b = cached if cached is not None else _libsvm_start(rows, y, upper, C)
    if starts is not None:
        starts[pi] = (alpha.copy(), b)
    _polish(tr, pi, alpha, b)
    V, _, FH = tr.evaluate()
    viol, dual = tr.margin_violation(FH[0]), tr.dual_violation(V[:, 0])
    if viol > path_tol or dual > DUAL_TOL:
        raise _breakdown(f"the polished start violates the KKT conditions by {viol:.3g}", pi, lam)
    return tr


def clone(tr: _Tracer) -> _Tracer:
    """A second tracer at the same solution (for the other direction)."""
    other = _Tracer(tr.rows, tr.y, tr.w, tr.C, tr.lam, tr.rank_tol, tr.path_tol, tr.ridge)
    other.pi, other.b = tr.pi, tr.b
    refused = other.set_state(tr.state, tr.members.copy())
    if refused:  # pragma: no cover - the same additions in the same order cannot differ
        raise _breakdown("could not rebuild the start", tr.pi, tr.lam)
    return other
