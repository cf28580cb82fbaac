"""Planes through data with more than two features, and the training hull in them (no Qt).

With p > 2 features the boundary view shows a *slice*: the plane through a reference point
``r`` (p,) spanned by features ``ix`` and ``iy``, every other feature held at ``r``'s
value.  The convex hull of the training inputs meets that plane in a convex polygon (or
not at all); :func:`slice_hull` traces it by linear programs, one per direction, and
:func:`in_hull` tests points of the plane exactly.  With two features the plane is the
whole space and the polygon is the hull of the training points.

Everything is in raw feature units; the convex hull does not change under the affine
standardisation of the model inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InputError

#: Directions traced around a slice of the hull.
HULL_DIRECTIONS = 48


def _check(X: np.ndarray, reference: np.ndarray, ix: int, iy: int) -> tuple[np.ndarray, ...]:
    X = np.asarray(X, dtype=float)
    reference = np.asarray(reference, dtype=float).ravel()
    if X.ndim != 2 or reference.size != X.shape[1]:
        raise InputError(f"the reference point needs {X.shape[-1]} values, got {reference.size}")
    p = X.shape[1]
    if not (0 <= ix < p and 0 <= iy < p) or ix == iy:
        raise InputError(f"plane features must be two different indices in 0..{p - 1}")
    others = np.array([j for j in range(p) if j not in (ix, iy)], dtype=int)
    return X, reference, others


def _planar_hull(pts: np.ndarray) -> np.ndarray:
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError):
        return np.empty((0, 2))
    ring = pts[hull.vertices]
    return np.vstack([ring, ring[:1]])


def slice_hull(
    X: np.ndarray,
    reference: np.ndarray,
    ix: int,
    iy: int,
    n_directions: int = HULL_DIRECTIONS,
) -> np.ndarray:
    """The training hull's cut by the plane through ``reference`` along features ix, iy.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Training inputs, raw units.
    reference : ndarray, shape (p,)
    ix, iy : int
    n_directions : int
        Support directions traced when p > 2 (the polygon is inscribed in the exact cut).

    Returns
    -------
    ndarray, shape (h + 1, 2)
        Closed outline in the plane's (x_ix, x_iy) coordinates; empty (0, 2) when the plane
        misses the hull.
    """
    X, reference, others = _check(X, reference, ix, iy)
    if others.size == 0:
        return _planar_hull(X[:, [ix, iy]])
    support = _support(X, reference, ix, iy, others)
    P = X[:, [ix, iy]]
    points = []
    for theta in np.linspace(0, 2 * np.pi, n_directions, endpoint=False):
        res = support(theta)
        if res.status == 2:  # infeasible: the plane misses the hull
            return np.empty((0, 2))
        if res.status == 0:
            points.append(P.T @ res.x)
    if not points:
        return np.empty((0, 2))
    pts = np.unique(np.round(np.asarray(points), 12), axis=0)
    if pts.shape[0] < 3:
        return np.vstack([pts, pts[:1]])
    return _planar_hull(pts)


def _support(
    X: np.ndarray, reference: np.ndarray, ix: int, iy: int, others: np.ndarray
) -> Callable[[float], Any]:
    """``support(theta)``: the linear program of the slice's support point in direction
    ``theta`` (weights on the rows of ``X``, summing to 1, meeting the reference's other
    features), scipy's result."""
    from scipy.optimize import linprog

    n = X.shape[0]
    A_eq = np.vstack([X[:, others].T, np.ones((1, n))])
    b_eq = np.concatenate([reference[others], [1.0]])
    P = X[:, [ix, iy]]

    def support(theta: float) -> Any:
        c = -(np.cos(theta) * P[:, 0] + np.sin(theta) * P[:, 1])
        return linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")

    return support


#: CPU seconds of the calling thread (tests replace it to time the hull by construction).
cpu_clock: Callable[[], float] = time.thread_time
#: Linear programs :func:`slice_hull_seconds` times.
HULL_PROBES = 2
#: CPU seconds of the first linear program beyond which :func:`slice_hull_seconds` times
#: no more (a large hull: its price is then the first program's, loading included).
HULL_PROBE_SECONDS = 0.1


def slice_hull_seconds(
    X: np.ndarray,
    reference: np.ndarray,
    ix: int,
    iy: int,
    n_directions: int = HULL_DIRECTIONS,
    probes: int = HULL_PROBES,
) -> float:
    """CPU seconds :func:`slice_hull` will take, timed on the data before it is run.

    With two features the hull is planar (milliseconds): 0.  Otherwise its cost is its
    ``n_directions`` linear programs over the ``n`` rows, each about as long as the
    next: the mean of the first ``probes`` of them (the first directions of
    :func:`slice_hull`, after one that loads the solver), times ``n_directions``; when
    that first one takes longer than :data:`HULL_PROBE_SECONDS`, its time (so that the
    estimate of a large hull stays short).

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Training inputs, raw units.
    reference : ndarray, shape (p,)
    ix, iy : int
    n_directions, probes : int

    Returns
    -------
    float
    """
    X, reference, others = _check(X, reference, ix, iy)
    if others.size == 0:
        return 0.0
    support = _support(X, reference, ix, iy, others)
    thetas = np.linspace(0, 2 * np.pi, n_directions, endpoint=False)[:probes]
    start = cpu_clock()
    support(thetas[0])  # the first call loads the solver: not part of the price
    first = cpu_clock() - start
    if first > HULL_PROBE_SECONDS:
        return first * n_directions
    start = cpu_clock()
    for theta in thetas:
        support(theta)
    return (cpu_clock() - start) / max(len(thetas), 1) * n_directions


def in_hull(points: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Whether each point (m, p) lies in the convex hull of ``X`` (n, p); bool (m,).

    A linear feasibility problem per point (the points are few: crossing points).
    """
    from scipy.optimize import linprog

    X = np.asarray(X, dtype=float)
    points = np.atleast_2d(np.asarray(points, dtype=float))
    out = np.zeros(points.shape[0], dtype=bool)
    if points.size == 0:
        return out
    n = X.shape[0]
    A_eq = np.vstack([X.T, np.ones((1, n))])
    for i, z in enumerate(points):
        res = linprog(
            np.zeros(n),
            A_eq=A_eq,
            b_eq=np.concatenate([z, [1.0]]),
            bounds=(0, None),
            method="highs",
        )
        out[i] = res.status == 0
    return out


def lift(plane_points: np.ndarray, reference: np.ndarray, ix: int, iy: int) -> np.ndarray:
    """Points (m, 2) of the plane as full inputs (m, p): other features at ``reference``."""
    plane_points = np.atleast_2d(np.asarray(plane_points, dtype=float))
    out = np.tile(np.asarray(reference, dtype=float), (plane_points.shape[0], 1))
    out[:, ix] = plane_points[:, 0]
    out[:, iy] = plane_points[:, 1]
    return out


def closeness(
    X: np.ndarray, reference: np.ndarray, ix: int, iy: int, spread: np.ndarray | None = None
) -> np.ndarray:
    """How near each point is to the slice, in (0, 1]; shape (n,).

    ``exp(-d^2 / 2)`` of the root mean square distance ``d`` of the other features from the
    reference, each in units of its standard deviation (``spread``, default from ``X``).
    1 everywhere with two features.
    """
    X, reference, others = _check(X, reference, ix, iy)
    if others.size == 0:
        return np.ones(X.shape[0])
    sd = np.asarray(spread if spread is not None else X.std(axis=0), dtype=float)[others]
    sd = np.where(sd > 0, sd, 1.0)
    d2 = np.mean(((X[:, others] - reference[others]) / sd) ** 2, axis=1)
    return np.exp(-d2 / 2.0)


def describe_cut(outline: np.ndarray) -> str:
    """What the training hull's cut ``outline`` (h + 1, 2) of a slice shows, in a sentence.

    Empty: the plane misses the hull.  Fewer than three distinct vertices: the plane only
    touches it (through a training point on the hull's surface, say), so nothing in the
    plane is inside the training data but that point or segment.
    """
    outline = np.asarray(outline, dtype=float).reshape(-1, 2)
    faded = "faded points lie far from the slice."
    if outline.shape[0] == 0:
        return f"This slice misses the training hull (no dashed outline); {faded}"
    if np.unique(np.round(outline, 9), axis=0).shape[0] < 3:
        return (
            "The training hull meets this slice only at a point or along a segment: the "
            f"whole plane lies outside the training data's hull; {faded}"
        )
    return f"Dashed: the training hull's cut by this slice; {faded}"


def describe_reference(
    reference: np.ndarray, names: list[str], ix: int, iy: int, limit: int = 3
) -> str:
    """``"alcohol = 13.2, malic_acid = 1.9, ... (11 features)"`` for a slice title."""
    others = [j for j in range(len(names)) if j not in (ix, iy)]
    parts = [f"{names[j]} = {reference[j]:.3g}" for j in others[:limit]]
    more = f", \u2026 ({len(others)} features)" if len(others) > limit else ""
    return ", ".join(parts) + more
