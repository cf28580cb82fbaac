"""Edges and vertices of the convex hull of the training inputs (METHODS section 3).

The non-crossing constraints of Wu & Liu (2011) sit where the previous boundary cuts the
edges of the training inputs' convex hull.  In low dimension (``p < n``, ``p`` small) the
edges are the vertex pairs that share a facet of :class:`scipy.spatial.ConvexHull`; with
triangulated facets (Qhull's default for non-simplicial facets) a few facet diagonals
come along, which only add constraints at points inside the hull and so change nothing.
In higher dimension, or when the hull is degenerate, this module reports that no hull is
available and the caller falls back to all pairs of training points.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.spatial import ConvexHull, QhullError

#: Largest input dimension for which the hull is computed; Qhull's facet count grows
#: like n^(p/2) and the pairwise fallback is exact anyway.
MAX_HULL_DIM = 6


@dataclass(frozen=True)
class HullEdges:
    """Vertices and edges of a convex hull.

    Attributes
    ----------
    vertices : ndarray of int, shape (v,)
        Indices of the training points that are hull vertices.
    edges : ndarray of int, shape (E, 2)
        Index pairs ``(i, j)``, ``i < j``, of hull edges (and facet diagonals).
    """

    vertices: np.ndarray
    edges: np.ndarray


def hull_edges(X: np.ndarray, max_dim: int = MAX_HULL_DIM) -> tuple[HullEdges | None, str]:
    """Edges of the convex hull of the rows of ``X``, when Qhull can give them.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    max_dim : int
        Largest ``p`` for which the hull is attempted.

    Returns
    -------
    hull : HullEdges or None
        None when ``p > max_dim``, ``n <= p + 1``, ``p < 2`` or the points are degenerate.
    reason : str
        Empty when the hull was computed, otherwise why not (for diagnostics).
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    if p < 2:
        # On a line the hull is a segment: its two ends, one edge.
        lo, hi = int(np.argmin(X[:, 0])), int(np.argmax(X[:, 0]))
        if lo == hi:
            return None, "all training inputs coincide"
        edge = np.array([[min(lo, hi), max(lo, hi)]])
        return HullEdges(np.unique(edge), edge), ""
    if p > max_dim:
        return None, f"input dimension {p} > {max_dim}: hull edges not enumerated"
    if n <= p + 1:
        return None, f"only {n} points in dimension {p}: every pair is a hull edge"
    try:
        hull = ConvexHull(X)
    except QhullError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "degenerate"
        return None, f"Qhull could not build the hull ({first})"
    pairs: set[tuple[int, int]] = set()
    for simplex in hull.simplices:
        for i, j in combinations(sorted(int(v) for v in simplex), 2):
            pairs.add((i, j))
    edges = np.array(sorted(pairs), dtype=int).reshape(-1, 2)
    return HullEdges(np.asarray(hull.vertices, dtype=int), edges), ""
