"""The plane the boundary view draws, and the app's colours (numpy, no Qt).

A plane is a square grid over two features (raw units); with more than two features it is
a slice through a reference point, the other features held at its values
(:func:`plane_grid`).  Its colour is the most probable class's, paler where the classes
are nearly tied (:func:`surface_colors`); crossing points are sorted by the training
hull's cut by the plane (:func:`split_by_hull`).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .datasets import DataSplit

#: Class colours (RGB, 0-255) in class order; cycled for more classes.
CLASS_COLORS = np.array(
    [
        (31, 119, 180),
        (214, 39, 40),
        (44, 160, 44),
        (255, 127, 14),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ],
    dtype=float,
)


#: Grid points per side of a plane.
DEFAULT_GRID = 80


def class_colors(K: int) -> np.ndarray:
    """RGB colours of ``K`` classes; shape (K, 3), values 0-255."""
    return CLASS_COLORS[np.arange(K) % len(CLASS_COLORS)]


def default_reference(split: DataSplit) -> np.ndarray:
    """The feature means of the data set (raw units); shape (p,)."""
    return split.dataset.X.mean(axis=0)


def plane_grid(
    split: DataSplit,
    ix: int,
    iy: int,
    size: int = DEFAULT_GRID,
    reference: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A grid over features ``ix`` and ``iy``, the other features at ``reference``.

    Parameters
    ----------
    split : DataSplit
    ix, iy : int
    size : int
    reference : ndarray, shape (p,), optional
        Raw values of the other features (default: their means).

    Returns
    -------
    xs, ys : ndarray, shape (size,)
        Raw coordinates.
    X_model : ndarray, shape (size * size, p)
        Model inputs, row ``i * size + j`` at ``(xs[j], ys[i])``.
    """
    X = split.dataset.X
    p = X.shape[1]
    if not (0 <= ix < p and 0 <= iy < p):
        raise InputError(f"plane features must lie in 0..{p - 1}, got {ix} and {iy}")
    ref = default_reference(split) if reference is None else np.asarray(reference, float)
    if ref.shape != (p,) or not np.all(np.isfinite(ref)):
        raise InputError(f"the slice needs {p} finite feature values")

    def span(col: np.ndarray) -> np.ndarray:
        lo, hi = float(col.min()), float(col.max())
        pad = 0.05 * (hi - lo) if hi > lo else 1.0
        return np.linspace(lo - pad, hi + pad, size)

    xs, ys = span(X[:, ix]), span(X[:, iy])
    raw = np.tile(ref, (size * size, 1))
    gx, gy = np.meshgrid(xs, ys)
    raw[:, ix] = gx.ravel()
    raw[:, iy] = gy.ravel()
    return xs, ys, split.transform(raw)


#: Strength of the class colour in the p_hat surface at p_hat = 1 (0 = white).
SURFACE_STRENGTH = 0.55


def surface_colors(proba: np.ndarray) -> np.ndarray:
    """Opaque RGB (m, 3) uint8 of probabilities (m, K): the most probable class's colour,
    mixed with white by its margin over 1/K (white where the classes are tied)."""
    K = proba.shape[1]
    colors = class_colors(K)
    top = np.argmax(proba, axis=1)
    strength = np.clip((proba.max(axis=1) - 1.0 / K) / (1.0 - 1.0 / K), 0.0, 1.0)
    s = (SURFACE_STRENGTH * strength)[:, None]
    rgb = 255.0 * (1.0 - s) + colors[top] * s
    return np.clip(np.round(rgb), 0, 255).astype(np.uint8)


def surface_stops(K: int) -> tuple[np.ndarray, np.ndarray]:
    """Colour-bar stops of :func:`surface_colors`: positions (s,) and RGB (s, 3) 0-255.

    Two classes: over ``p_hat`` of the second class, 0 to 1 (exact: the surface is linear
    between the stops).  More classes: over the largest ``p_hat``, 1/K to 1, in grey
    (the hue is the class's).
    """
    if K == 2:
        p = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
        return np.array([0.0, 0.5, 1.0]), surface_colors(p).astype(float)
    grey = 255.0 * (1 - SURFACE_STRENGTH) + 90.0 * SURFACE_STRENGTH
    return np.array([1.0 / K, 1.0]), np.array([[255.0] * 3, [grey] * 3])


def inside_polygon(points: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Whether each point (c, 2) lies in the convex polygon ``ring`` (closed, (h + 1, 2))."""
    if ring.shape[0] < 4:
        return np.zeros(points.shape[0], dtype=bool)
    a, b = ring[:-1], ring[1:]
    cross = (b[:, 0] - a[:, 0])[None, :] * (points[:, 1, None] - a[:, 1][None, :]) - (
        b[:, 1] - a[:, 1]
    )[None, :] * (points[:, 0, None] - a[:, 0][None, :])
    return np.all(cross >= -1e-12, axis=1) | np.all(cross <= 1e-12, axis=1)


def split_by_hull(points: np.ndarray, ring: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Crossing points (c, 2) inside and outside the training hull's cut ``ring``.

    With more than two features the cut is traced by support directions
    (:func:`wsvmgui.app.slices.slice_hull`): a polygon inscribed in the exact cut, whose
    edges lie within a fraction of a percent of it.
    """
    if points.size == 0:
        return points, points
    inside = inside_polygon(points, ring) if ring.size else np.zeros(len(points), dtype=bool)
    return points[inside], points[~inside]
