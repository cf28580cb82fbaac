"""Zero contours of a function sampled on a grid (marching squares, numpy only).

Used to draw the boundaries ``{f_pi = 0}`` of every weighted fit.  The worker thread
computes the segments; the GUI thread only hands them to a plot item.
"""

from __future__ import annotations

import numpy as np


def _cut_cells(xs: np.ndarray, ys: np.ndarray, Z: np.ndarray):
    """The grid cells ``{Z = 0}`` passes through, and where it cuts their edges.

    Only those cells (a contour crosses a few of the (ny - 1)(nx - 1) cells) are computed.

    Returns
    -------
    rows, cols : ndarray of int, shape (c,)
        The cells (cell (i, j) spans xs[j:j+2] x ys[i:i+2]).
    points : ndarray, shape (c, 4, 2)
        Crossing points on the bottom, right, top and left edges.
    cut : ndarray of bool, shape (c, 4)
        Which edges the contour cuts.
    centre_pos, corner_pos : ndarray of bool, shape (c,)
        Sign of the cell's mean value and of its bottom-left corner (for saddles).
    """
    pos = Z > 0
    p00, p01, p10, p11 = pos[:-1, :-1], pos[:-1, 1:], pos[1:, :-1], pos[1:, 1:]
    rows, cols = np.nonzero((p00 != p01) | (p01 != p11) | (p10 != p11) | (p00 != p10))
    z00, z01 = Z[rows, cols], Z[rows, cols + 1]
    z10, z11 = Z[rows + 1, cols], Z[rows + 1, cols + 1]
    x0, x1 = xs[cols], xs[cols + 1]
    y0, y1 = ys[rows], ys[rows + 1]

    def frac(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = a - b
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(d != 0, a / d, 0.5)
        return np.clip(t, 0.0, 1.0)

    tb, tr, tt, tl = frac(z00, z01), frac(z01, z11), frac(z10, z11), frac(z00, z10)
    points = np.stack(
        [
            np.column_stack([x0 + tb * (x1 - x0), y0]),
            np.column_stack([x1, y0 + tr * (y1 - y0)]),
            np.column_stack([x0 + tt * (x1 - x0), y1]),
            np.column_stack([x0, y0 + tl * (y1 - y0)]),
        ],
        axis=1,
    )
    q00, q01 = p00[rows, cols], p01[rows, cols]
    q10, q11 = p10[rows, cols], p11[rows, cols]
    cut = np.column_stack([q00 != q01, q01 != q11, q10 != q11, q00 != q10])
    centre = 0.25 * (z00 + z01 + z10 + z11) > 0
    return rows, cols, points, cut, centre, q00


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
    _rows, _cols, points, cut, centre, corner = _cut_cells(xs, ys, Z)
    n_cut = cut.sum(axis=1)
    segments = []
    two = n_cut == 2
    if two.any():
        order = np.argsort(~cut[two], axis=1, kind="stable")[:, :2]  # the two cut edges
        pts = points[two]
        segments.append(pts[np.arange(pts.shape[0])[:, None], order])
    four = n_cut == 4
    if four.any():
        pts = points[four]
        same = centre[four] == corner[four]
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


def contour_crossings(
    xs: np.ndarray, ys: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Points where the zero contours of a ladder's boundaries really cross.

    Contours are straight within a grid cell, so two of them can only cross inside a cell
    both pass through (cells with exactly two cut edges; saddle cells are left out); the
    crossing is the intersection of their two segments there.  It is kept only when a
    corner of that cell *witnesses* it, as the whole-hull check
    (:func:`wsvmgui.ladder.crossing.crossing_from_values`) counts crossings: the smaller
    weight's value is not positive where the larger one's is (``f_j <= 0 < f_k``,
    ``j < k``), so the signs are not monotone there.  Two contours that nearly coincide
    (touching boundaries, which the non-crossing constraints allow) cut each other's
    straight pieces without any such corner: they are not crossings.

    Parameters
    ----------
    xs : ndarray, shape (nx,)
    ys : ndarray, shape (ny,)
    values : ndarray, shape (ny * nx, m)
        Column j holds boundary j's function on the grid, row ``i * nx + j`` at
        ``(xs[j], ys[i])``; columns in increasing order of weight.

    Returns
    -------
    points : ndarray, shape (c, 2)
        One point per crossing of a pair of contours (each pair counted once per cell).
    pairs : ndarray of int, shape (c, 2)
        The columns ``(j, k)``, ``j < k``, of each crossing.
    """
    values = np.asarray(values, dtype=float)
    xs = np.asarray(xs, dtype=float)
    ys = np.asarray(ys, dtype=float)
    ny, nx = ys.size, xs.size
    m = values.shape[1]
    none = (np.empty((0, 2)), np.empty((0, 2), dtype=int))
    if m < 2 or ny < 2 or nx < 2:
        return none
    ids, starts, ends, owner = [], [], [], []
    for j in range(m):
        rows, cols, points, cut, _c, _k = _cut_cells(xs, ys, values[:, j].reshape(ny, nx))
        two = cut.sum(axis=1) == 2
        order = np.argsort(~cut[two], axis=1, kind="stable")[:, :2]
        pts = points[two]
        seg = pts[np.arange(pts.shape[0])[:, None], order]
        ids.append(rows[two] * (nx - 1) + cols[two])
        starts.append(seg[:, 0])
        ends.append(seg[:, 1])
        owner.append(np.full(seg.shape[0], j))
    cell = np.concatenate(ids)
    start, end, who = np.concatenate(starts), np.concatenate(ends), np.concatenate(owner)
    # Only cells that two or more contours pass through can hold a crossing: few of them,
    # grouped by how many contours pass (a handful of distinct counts).
    order = np.lexsort((who, cell))
    cell, start, end, who = cell[order], start[order], end[order], who[order]
    uniq, first, counts = np.unique(cell, return_index=True, return_counts=True)
    a_idx, b_idx = [], []
    for k in np.unique(counts[counts >= 2]):
        base = first[counts == k]  # where each such cell's entries begin
        ia, ib = np.triu_indices(int(k), 1)
        a_idx.append((base[:, None] + ia[None, :]).ravel())
        b_idx.append((base[:, None] + ib[None, :]).ravel())
    if not a_idx:
        return none
    a, b = np.concatenate(a_idx), np.concatenate(b_idx)  # who[a] < who[b] (sorted)
    p, r = start[a], end[a] - start[a]
    q, s = start[b], end[b] - start[b]
    denom = r[:, 0] * s[:, 1] - r[:, 1] * s[:, 0]
    qp = q - p
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (qp[:, 0] * s[:, 1] - qp[:, 1] * s[:, 0]) / denom
        u = (qp[:, 0] * r[:, 1] - qp[:, 1] * r[:, 0]) / denom
    hit = (denom != 0) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
    a, b, t = a[hit], b[hit], t[hit]
    # the cell's four corners (grid rows of ``values``) witness the pair (j, k)
    i, c = np.divmod(cell[a], nx - 1)
    corners = np.stack([i * nx + c, i * nx + c + 1, (i + 1) * nx + c, (i + 1) * nx + c + 1])
    fj, fk = values[corners, who[a]], values[corners, who[b]]
    real = np.any((fj <= 0) & (fk > 0), axis=0)
    a, b, t = a[real], b[real], t[real]
    points = start[a] + t[:, None] * (end[a] - start[a])
    return points, np.column_stack([who[a], who[b]]).astype(int)


def one_per_cell(
    points: np.ndarray, xs: np.ndarray, ys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The first of ``points`` (c, 2) in each grid cell, and the index of each kept one.

    Where many boundaries of nearby weights cross in one place, every pair crosses in the
    same cell; a mark per cell shows the place once.
    """
    if points.shape[0] == 0:
        return points, np.empty(0, dtype=int)
    col = np.clip(np.searchsorted(xs, points[:, 0], side="right") - 1, 0, xs.size - 2)
    row = np.clip(np.searchsorted(ys, points[:, 1], side="right") - 1, 0, ys.size - 2)
    _, keep = np.unique(row * (xs.size - 1) + col, return_index=True)
    keep = np.sort(keep)
    return points[keep], keep
