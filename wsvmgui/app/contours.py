"""Zero contours of a function sampled on a grid (marching squares, numpy only).

Used to draw the boundaries ``{f_pi = 0}`` of every weighted fit.  The worker thread
computes the segments; the GUI thread only hands them to a plot item.
"""

from __future__ import annotations

import numpy as np


def zero_contour(xs: np.ndarray, ys: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Line segments of ``{Z = 0}`` by marching squares.

    A value counts as positive when ``> 0`` (zero is negative, as in the ladder).

    Parameters
    ----------
    xs : ndarray, shape (nx,)
        Increasing grid coordinates along the first axis of the plot.
    ys : ndarray, shape (ny,)
    Z : ndarray, shape (ny, nx)
        ``Z[i, j]`` is the value at ``(xs[j], ys[i])``.

    Returns
    -------
    ndarray, shape (s, 2, 2)
        Segment ``k`` runs from ``(x, y) = out[k, 0]`` to ``out[k, 1]``.
    """
    Z = np.asarray(Z, dtype=float)
    xs = np.asarray(xs, dtype=float)
    ys = np.asarray(ys, dtype=float)
    if Z.shape != (ys.size, xs.size):
        raise ValueError(f"Z has shape {Z.shape}, expected {(ys.size, xs.size)}")
    if Z.shape[0] < 2 or Z.shape[1] < 2:
        return np.empty((0, 2, 2))
    pos = Z > 0
    z00, z01 = Z[:-1, :-1], Z[:-1, 1:]  # bottom-left, bottom-right
    z10, z11 = Z[1:, :-1], Z[1:, 1:]  # top-left, top-right
    p00, p01, p10, p11 = pos[:-1, :-1], pos[:-1, 1:], pos[1:, :-1], pos[1:, 1:]
    x0, x1 = xs[None, :-1], xs[None, 1:]
    y0, y1 = ys[:-1, None], ys[1:, None]

    def frac(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = a - b
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(d != 0, a / d, 0.5)
        return np.clip(t, 0.0, 1.0)

    shape = z00.shape
    # Crossing points on the four edges: bottom, right, top, left; each (ny-1, nx-1, 2).
    tb = frac(z00, z01)
    bottom = np.stack([x0 + tb * (x1 - x0), np.broadcast_to(y0, shape)], axis=-1)
    tr = frac(z01, z11)
    right = np.stack([np.broadcast_to(x1, shape), y0 + tr * (y1 - y0)], axis=-1)
    tt = frac(z10, z11)
    top = np.stack([x0 + tt * (x1 - x0), np.broadcast_to(y1, shape)], axis=-1)
    tl = frac(z00, z10)
    left = np.stack([np.broadcast_to(x0, shape), y0 + tl * (y1 - y0)], axis=-1)
    points = np.stack([bottom, right, top, left], axis=2)  # (ny-1, nx-1, 4, 2)
    cut = np.stack([p00 != p01, p01 != p11, p10 != p11, p00 != p10], axis=2)
    n_cut = cut.sum(axis=2)

    segments = []
    two = n_cut == 2
    if two.any():
        pts = points[two]  # (c, 4, 2)
        c = cut[two]
        order = np.argsort(~c, axis=1, kind="stable")[:, :2]  # the two cut edges
        rows = np.arange(pts.shape[0])[:, None]
        segments.append(pts[rows, order])
    four = n_cut == 4
    if four.any():
        pts = points[four]
        centre = 0.25 * (z00 + z01 + z10 + z11)[four]
        same = (centre > 0) == p00[four]
        # Centre like the bottom-left corner: that corner joins the centre, so the
        # contour cuts it off from the others: pair (bottom, right) and (top, left).
        first = np.where(same[:, None, None], pts[:, [0, 1]], pts[:, [0, 3]])
        second = np.where(same[:, None, None], pts[:, [2, 3]], pts[:, [2, 1]])
        segments += [first, second]
    if not segments:
        return np.empty((0, 2, 2))
    return np.concatenate(segments, axis=0)


def segments_to_xy(segments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flatten segments (s, 2, 2) to x and y arrays of length 2 s for ``connect="pairs"``."""
    flat = np.asarray(segments, dtype=float).reshape(-1, 2)
    return flat[:, 0], flat[:, 1]


def _cell_segments(xs: np.ndarray, ys: np.ndarray, Z: np.ndarray):
    """The single zero segment of each grid cell with exactly two cut edges.

    Returns
    -------
    start, end : ndarray, shape (ny - 1, nx - 1, 2)
    valid : ndarray of bool, shape (ny - 1, nx - 1)
    """
    pos = Z > 0
    p00, p01, p10, p11 = pos[:-1, :-1], pos[:-1, 1:], pos[1:, :-1], pos[1:, 1:]
    z00, z01, z10, z11 = Z[:-1, :-1], Z[:-1, 1:], Z[1:, :-1], Z[1:, 1:]
    x0, x1 = xs[None, :-1], xs[None, 1:]
    y0, y1 = ys[:-1, None], ys[1:, None]
    shape = z00.shape

    def frac(a, b):
        d = a - b
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.clip(np.where(d != 0, a / d, 0.5), 0.0, 1.0)

    tb, tr, tt, tl = frac(z00, z01), frac(z01, z11), frac(z10, z11), frac(z00, z10)
    points = np.stack(
        [
            np.stack([x0 + tb * (x1 - x0), np.broadcast_to(y0, shape)], axis=-1),
            np.stack([np.broadcast_to(x1, shape), y0 + tr * (y1 - y0)], axis=-1),
            np.stack([x0 + tt * (x1 - x0), np.broadcast_to(y1, shape)], axis=-1),
            np.stack([np.broadcast_to(x0, shape), y0 + tl * (y1 - y0)], axis=-1),
        ],
        axis=2,
    )
    cut = np.stack([p00 != p01, p01 != p11, p10 != p11, p00 != p10], axis=2)
    valid = cut.sum(axis=2) == 2
    order = np.argsort(~cut, axis=2, kind="stable")[..., :2]
    pair = np.take_along_axis(points, order[..., None], axis=2)
    return pair[..., 0, :], pair[..., 1, :], valid


def contour_crossings(xs: np.ndarray, ys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Points where the zero contours of different functions on one grid cross.

    Contours are straight within a grid cell, so two of them can only cross inside a cell
    both pass through; the crossing is the intersection of their two segments there.

    Parameters
    ----------
    xs : ndarray, shape (nx,)
    ys : ndarray, shape (ny,)
    values : ndarray, shape (ny * nx, m)
        Column j holds function j on the grid, row ``i * nx + j`` at ``(xs[j], ys[i])``.

    Returns
    -------
    ndarray, shape (c, 2)
        One point per crossing of a pair of contours (each pair counted once per cell).
    """
    values = np.asarray(values, dtype=float)
    ny, nx = ys.size, xs.size
    cells = [_cell_segments(xs, ys, values[:, j].reshape(ny, nx)) for j in range(values.shape[1])]
    found = []
    for a in range(len(cells)):
        sa, ea, va = cells[a]
        for b in range(a + 1, len(cells)):
            sb, eb, vb = cells[b]
            both = va & vb
            if not both.any():
                continue
            p, r = sa[both], ea[both] - sa[both]
            q, s = sb[both], eb[both] - sb[both]
            denom = r[:, 0] * s[:, 1] - r[:, 1] * s[:, 0]
            qp = q - p
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (qp[:, 0] * s[:, 1] - qp[:, 1] * s[:, 0]) / denom
                u = (qp[:, 0] * r[:, 1] - qp[:, 1] * r[:, 0]) / denom
            hit = (denom != 0) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
            if hit.any():
                found.append(p[hit] + t[hit, None] * r[hit])
    return np.concatenate(found) if found else np.empty((0, 2))
