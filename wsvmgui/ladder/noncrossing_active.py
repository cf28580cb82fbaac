"""Repair one weighted SVM so that it does not cross its neighbour: an exact active-set method.

METHODS section 3.  The non-crossing ladder built from the exact path
(:mod:`wsvmgui.ladder.noncrossing`) starts every weight from the path's unconstrained
solution; where that solution violates some non-crossing rows
(:class:`~wsvmgui.ladder.noncrossing_qp.CrossingConstraints`, ``R g + r s <= -eps`` with
``g = d f``), this module moves it to the constrained optimum.

The problem, in the dual of the weighted SVM with ``C = 1 / (2 n lambda)`` and bounds
``U_i = C S(y_i)``: training duals ``0 <= a_i <= U_i``, row multipliers ``mu_e >= 0``,
kernel coefficients ``c = y a - d R' mu``, decision values ``f = K c + b`` at the training
points, the free intercept ``b`` and the free scalar ``s`` of the compact rows.  An
optimum satisfies

* every training point: ``y f > 1`` (R, ``a = 0``), ``y f = 1`` (E, ``a`` free), ``y f < 1``
  (L, ``a = U``);
* every row: ``v_e = d (R f)_e + r_e s + eps <= 0`` with ``mu_e v_e = 0``;
* ``sum c = 0`` (the intercept; every row of R sums to 1) and ``sum_e mu_e r_e = 0`` (s).

Method (a dual active-set method in the manner of Goldfarb & Idnani, each step a
homotopy): the path's solution satisfies all of this except some rows.  Take the most
violated row ``e*`` and raise its multiplier ``t = mu_{e*}`` from 0 while every training
point and every already active row keeps its conditions; ``(a_E, mu_A, b, s)`` then move
linearly in ``t`` between *events*, exactly as the weight path moves in pi::

    [Q  h  g] [dz]   [-W'K w*]       W = [y_E e_E, -d R_A'],  w* = -d R_{e*}',
    [h' 0  0] [db] = [   d   ]       Q = W'KW,  h = W'1,  g = [0, -r_A],
    [g' 0  0] [ds]   [ r_e*  ]

Events: an elbow dual reaches 0 or its bound, a point off the elbow reaches the margin,
an active row's multiplier reaches 0 (it leaves), or ``v_{e*}`` reaches 0 (``e*`` joins
the active set; done).  Rows are taken until none is violated.  Every step raises the
dual objective, so the method ends; between rows the values are solved afresh from the
sets (no drift) and the decision values recomputed.  A row whose ``s`` is still free
(no active row involves ``s``) is met by moving ``s`` alone, at no cost.

Each row is met with its own margin ``eps_e`` in ``[eps, 2 eps)`` (:func:`row_margins`):
points on the elbow of both neighbours sit exactly on the previous boundary in feature
space, and equal margins would make many rows tie at every step.  Exact duplicates among
the training points (equal kernel columns, which make every step system singular) are
merged into one point before the method runs and split evenly afterwards.

Anything the method cannot handle exactly (a singular system: dependent rows, an empty
elbow, a kernel of low rank; too many events; an inconsistent start) raises
:class:`RepairFailed`, and the caller solves the constrained QP instead
(:func:`~wsvmgui.ladder.noncrossing_qp.fit_constrained`).  Every answer is checked by the
caller (:func:`repair_check`): KKT residual against the kernel, the duality gap, the
rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from .noncrossing_qp import CrossingConstraints, best_s

#: A dual strictly inside (0, U) by more than this share of U starts on the elbow.
START_TOL = 1e-10
#: Violations below this (decision units, ``eps = 0``) count as none.
VIOLATION_TOL = 1e-9
#: Smallest pivot of the step system, relative to its largest, accepted.
PIVOT_TOL = 1e-13
#: A violated row whose value moves slower than this (times the kernel's scale) per unit
#: of its multiplier depends on the active conditions: the step then moves duals only.
DEPENDENT_TOL = 1e-12
#: Events between full recomputations of the decision values.
REFRESH_EVERY = 32
#: Consecutive zero-length steps accepted (ties are taken one at a time).
MAX_ZERO_STEPS = 200
#: Spreads the rows' margins over [eps, 2 eps) (:func:`row_margins`).
GOLDEN = 0.6180339887498949
#: Largest margin slip of the unconstrained start accepted.
START_SLIP = 1e-6


class RepairFailed(SolverError):
    """The active-set repair could not finish exactly; the caller solves the QP instead."""


@dataclass(frozen=True)
class Repair:
    """A constrained fit found by :func:`repair_fit`.

    Attributes
    ----------
    coef : ndarray, shape (n,)
        Kernel coefficients ``c = y a - d R' mu``.
    intercept : float
    alpha : ndarray, shape (n,)
        Training duals ``a``.
    mu : ndarray, shape (m,)
        Row multipliers.
    s : float
        The compact rows' scalar (0 when unused).
    n_events : int
        Homotopy steps taken.
    n_rows : int
        Rows taken into the active set (counting re-entries).
    n_active : int
        Rows active at the end.
    """

    coef: np.ndarray
    intercept: float
    alpha: np.ndarray
    mu: np.ndarray
    s: float
    n_events: int
    n_rows: int
    n_active: int


def row_points(cons: CrossingConstraints) -> tuple[np.ndarray, np.ndarray]:
    """The rows as point pairs: ``(points (m, 2) int64, -1 for none; weights (m, 2))``."""
    R = cons.R.tocsr()
    counts = np.diff(R.indptr)
    if counts.size and counts.max() > 2:
        raise RepairFailed("a non-crossing row spans more than two points")
    m = R.shape[0]
    pts = np.full((m, 2), -1, dtype=np.int64)
    wts = np.zeros((m, 2))
    first = R.indptr[:-1]
    has1, has2 = counts >= 1, counts == 2
    pts[has1, 0] = R.indices[first[has1]]
    wts[has1, 0] = R.data[first[has1]]
    pts[has2, 1] = R.indices[first[has2] + 1]
    wts[has2, 1] = R.data[first[has2] + 1]
    return pts, wts


def repair_fit(
    K: np.ndarray,
    y: np.ndarray,
    upper: np.ndarray,
    cons: CrossingConstraints,
    c0: np.ndarray,
    b0: float,
    *,
    groups: np.ndarray | None = None,
    max_events: int | None = None,
) -> Repair:
    """The constrained optimum, from the unconstrained optimum ``(c0, b0)``.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        Kernel matrix the unconstrained solution is exact for (with the path's ridge).
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    upper : ndarray, shape (n,)
        Dual bounds ``U_i = C S(y_i)`` at the weight.
    cons : CrossingConstraints
        The rows (at most two points each), met with margins in ``[eps, 2 eps)``.
    c0 : ndarray, shape (n,)
        Kernel coefficients of the unconstrained optimum.
    b0 : float
    groups : ndarray of int, shape (n,), optional
        Representative of each point among exact duplicates (same label and feature
        vector; :func:`~wsvmgui.ladder.path.duplicate_groups`).  Duplicates are merged
        into one point with their summed bound, and identical rows into one, before the
        repair (their kernel columns are equal, which would make every step system
        singular), and split evenly afterwards.
    max_events : int, optional
        Most homotopy steps (default ``20 n + 1000``).

    Returns
    -------
    Repair

    Raises
    ------
    RepairFailed
        When the method cannot finish exactly (see the module docstring).
    """
    y = np.asarray(y, dtype=float)
    U = np.asarray(upper, dtype=float)
    c0 = np.asarray(c0, dtype=float)
    n = y.size
    d = int(cons.direction)
    rpt, rw = row_points(cons)
    r = np.asarray(cons.r, dtype=float)
    reps = np.arange(n) if groups is None else np.asarray(groups)
    keep = np.flatnonzero(reps == np.arange(n))
    merged = keep.size < n
    if merged:
        pos = np.full(n, -1)
        pos[keep] = np.arange(keep.size)
        to = pos[reps]  # each point's representative, in reduced indices
        K_r = K[np.ix_(keep, keep)]
        U_r = np.bincount(to, weights=U, minlength=keep.size)
        c0_r = np.bincount(to, weights=c0, minlength=keep.size)
        rpt_r = np.where(rpt >= 0, to[np.maximum(rpt, 0)], -1)
        key = np.column_stack([rpt_r, rw, r])
        _, first = np.unique(key, axis=0, return_index=True)
        sol = _repair(K_r, y[keep], U_r, d, rpt_r[first], rw[first], r[first], cons.eps,
                      c0_r, b0, max_events)  # fmt: skip
        mult = np.bincount(to, minlength=keep.size).astype(float)
        a = (sol.alpha / mult)[to]
        mu = np.zeros(r.size)
        mu[first] = sol.mu
    else:
        sol = _repair(K, y, U, d, rpt, rw, r, cons.eps, c0, b0, max_events)
        a, mu = sol.alpha, sol.mu
    c = y * a - d * (cons.R.T @ mu)
    return Repair(
        coef=c,
        intercept=sol.intercept,
        alpha=a,
        mu=mu,
        s=sol.s,
        n_events=sol.n_events,
        n_rows=sol.n_rows,
        n_active=sol.n_active,
    )


def _repair(K, y, U, d, rpt, rw, r, eps, c0, b0, max_events) -> Repair:
    """:func:`repair_fit` on distinct points and rows (the compiled method)."""
    from . import _noncrossing_kernel as kern

    K = np.ascontiguousarray(K, dtype=float)
    y = np.ascontiguousarray(y, dtype=float)
    U = np.ascontiguousarray(U, dtype=float)
    rpt = np.ascontiguousarray(rpt, dtype=np.int64)
    rw = np.ascontiguousarray(rw, dtype=float)
    r = np.ascontiguousarray(r, dtype=float)
    n = y.size
    a = np.clip(y * c0, 0.0, U)
    state = np.full(n, kern.R_SET, dtype=np.int8)
    state[a >= (1.0 - START_TOL) * U] = kern.L_SET
    state[(a > START_TOL * U) & (a < (1.0 - START_TOL) * U)] = kern.E_SET
    a = np.where(state == kern.L_SET, U, np.where(state == kern.R_SET, 0.0, a))
    f = K @ (y * a) + float(b0)
    slip = _start_slip(y * f, state)
    if slip > START_SLIP:
        raise RepairFailed(f"the unconstrained start is not optimal (margin slip {slip:.3g})")
    epsv = row_margins(eps, r.size)
    v = np.where(rpt[:, 0] >= 0, rw[:, 0] * f[rpt[:, 0]], 0.0)
    v += np.where(rpt[:, 1] >= 0, rw[:, 1] * f[np.maximum(rpt[:, 1], 0)], 0.0)
    v = d * v + epsv
    s = best_s(v, r) if np.any(r != 0) else 0.0
    mu = np.zeros(r.size)
    active = np.zeros(r.size, dtype=np.int8)
    fs = np.array([float(b0), float(s)])
    iv = np.zeros(2, dtype=np.int64)
    prm = np.zeros(kern.P_SIZE)
    prm[kern.P_D] = d
    prm[kern.P_TOL] = VIOLATION_TOL
    prm[kern.P_DEP_TOL] = DEPENDENT_TOL
    prm[kern.P_PIVOT_TOL] = PIVOT_TOL
    prm[kern.P_MAX_EVENTS] = max_events if max_events is not None else 20 * n + 1000
    prm[kern.P_REFRESH] = REFRESH_EVERY
    prm[kern.P_MAX_ZERO] = MAX_ZERO_STEPS
    prm[kern.P_SCALE] = max(float(np.max(np.abs(np.diag(K)))), 1e-300)
    status = kern.repair(K, y, U, rpt, rw, r, epsv, state, a, mu, active, f, fs, iv, prm)
    if status != kern.ST_OK:
        raise RepairFailed(f"{kern.STATUS_TEXT[status]} after {iv[0]} steps")
    mu = np.where(active.astype(bool), np.maximum(mu, 0.0), 0.0)
    return Repair(
        coef=np.zeros(0),
        intercept=float(fs[0]),
        alpha=a,
        mu=mu,
        s=float(fs[1]),
        n_events=int(iv[0]),
        n_rows=int(iv[1]),
        n_active=int(active.sum()),
    )


def row_margins(eps: float, m: int) -> np.ndarray:
    """Margins ``eps_e = eps (1 + phi_e)`` of the rows, ``phi_e`` in [0, 1); shape (m,).

    Distinct margins keep the repair away from degenerate ties (module docstring); every
    row still holds with at least ``eps``.
    """
    return eps * (1.0 + np.modf(np.arange(m) * GOLDEN)[0])


def _start_slip(margins: np.ndarray, state: np.ndarray) -> float:
    """Largest violation of the unconstrained start's own set conditions (margin units)."""
    return max(
        float(np.max(margins[state == 2] - 1.0, initial=0.0)),
        float(np.max(1.0 - margins[state == 0], initial=0.0)),
        float(np.max(np.abs(margins[state == 1] - 1.0), initial=0.0)),
    )


def repair_check(
    K: np.ndarray,
    y: np.ndarray,
    upper: np.ndarray,
    cons: CrossingConstraints,
    coef: np.ndarray,
    intercept: float,
    alpha: np.ndarray,
    mu: np.ndarray,
    s: float = 0.0,
) -> tuple[float, float, float]:
    """Independent check of a constrained fit against the kernel ``K``.

    Returns
    -------
    kkt : float
        Largest violation of the training points' complementarity and bounds (margin
        units, as :func:`~wsvmgui.solvers.wsvm.kkt_residuals`), of the rows'
        complementarity (``mu_e`` times the row's slack at ``s``, relative to ``C``), and of
        ``sum c = 0`` (relative to ``sum a``).
    gap : float
        Relative duality gap ``(primal - dual) / max(primal, C)``.
    violation : float
        Largest violation of the rows (``<= -eps`` required; 0 when met).
    """
    from ..solvers.kkt import hinge_kkt_residual

    y = np.asarray(y, dtype=float)
    U = np.asarray(upper, dtype=float)
    f = K @ coef + intercept
    margins = y * f
    r = alpha / np.maximum(U, 1e-300)
    kkt = float(hinge_kkt_residual(margins[None, :, None], r[None, :, None])[0])
    C = float(np.max(U)) if U.size else 1.0
    kkt = max(kkt, abs(float(coef.sum())) / max(float(alpha.sum()), 1e-300))
    _, viol = cons.satisfied_by(f)
    if cons.n_rows:
        # Slack of every row at the fit's own s; an active row (mu > 0) must be tight.
        slack = -(cons.direction * (cons.R @ f) + cons.r * s) - cons.eps
        kkt = max(kkt, float(np.max(mu * np.abs(slack))) / max(C, 1e-300))
    xi = np.maximum(1.0 - margins, 0.0)
    quad = float(coef @ (K @ coef))
    primal = float(U @ xi) + 0.5 * quad
    dual = float(alpha.sum()) + cons.eps * float(mu.sum()) - 0.5 * quad
    gap = (primal - dual) / max(primal, C)
    return kkt, float(gap), float(viol)
