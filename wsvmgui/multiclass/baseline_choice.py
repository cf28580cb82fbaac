"""Choice of the common baseline class for baseline learning (Zeng section 3.1).

* B1: the largest class of the training data.  Where several classes are equally large
  (balanced data: iris, a balanced digits subset) the rule alone picks none; of the tied
  classes the one of median aggregated distance (B2's criterion, below, among them) is
  taken rather than the first in sorted order, which on iris is the one class separable
  from both others, where baseline learning cannot tell the other two apart (accuracy
  0.69 against 0.98; ``tests/test_multiclass_estimator.py``).
* B2: the class whose aggregated distance
  ``D_agg(j) = (1/K) sum_{j' != j} D_bc(j, j') / D_cp(j)`` is the median of all K values.
  ``D_cp(j)`` is the largest distance from a point of class j to the class medoid, the
  point whose sum of distances to the other points of j is the median of those sums
  (the lower median for an even count); ``D_bc(j, j')`` is the smallest distance between a
  point of j and a point of j'.  For even K the lower of the two middle values is taken.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from ..errors import InputError

BASELINE_METHODS = ("largest", "median_distance")


def largest_class(y_codes: np.ndarray, K: int, X: np.ndarray | None = None) -> int:
    """Index of the largest class; ``y_codes`` (n,) holds class indices 0..K-1.

    Ties: with ``X`` (n, p), the tied class whose aggregated distance (computed among the
    tied classes) is the lower median; without, the first.
    """
    y_codes = np.asarray(y_codes, dtype=int)
    counts = np.bincount(y_codes, minlength=K)
    tied = np.flatnonzero(counts == counts.max())
    if tied.size == 1 or X is None:
        return int(tied[0])
    rows = np.isin(y_codes, tied)
    local = np.searchsorted(tied, y_codes[rows])
    return int(tied[median_distance_class(np.asarray(X)[rows], local, tied.size)])


def compactness(Xj: np.ndarray, chunk: int = 2048) -> float:
    """``D_cp``: largest distance from a point of the class (m, p) to its medoid."""
    m = Xj.shape[0]
    if m == 1:
        return 0.0
    sums = np.empty(m)
    for s in range(0, m, chunk):
        sums[s : s + chunk] = cdist(Xj[s : s + chunk], Xj).sum(axis=1)
    medoid = int(np.argsort(sums, kind="stable")[(m - 1) // 2])
    return float(np.linalg.norm(Xj - Xj[medoid], axis=1).max())


def aggregated_distances(X: np.ndarray, y_codes: np.ndarray, K: int) -> np.ndarray:
    """``D_agg(j)`` for every class; shape (K,).

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y_codes : ndarray of int, shape (n,)
        Class indices 0..K-1; every class must be present.
    K : int
    """
    X = np.asarray(X, dtype=float)
    groups = [X[y_codes == j] for j in range(K)]
    if any(g.shape[0] == 0 for g in groups):
        raise InputError("every class needs at least one point to choose a baseline")
    trees = [cKDTree(g) for g in groups]
    d_bc = np.zeros((K, K))
    for j in range(K):
        for jp in range(j + 1, K):
            small, big = (j, jp) if groups[j].shape[0] <= groups[jp].shape[0] else (jp, j)
            d, _ = trees[big].query(groups[small], k=1)
            d_bc[j, jp] = d_bc[jp, j] = float(d.min())
    d_cp = np.array([compactness(g) for g in groups])
    # A class of coincident points has zero spread: treat it as infinitely compact.
    with np.errstate(divide="ignore", invalid="ignore"):
        agg = np.where(d_cp > 0, d_bc.sum(axis=1) / K / np.where(d_cp > 0, d_cp, 1.0), np.inf)
    return agg


def median_distance_class(X: np.ndarray, y_codes: np.ndarray, K: int) -> int:
    """B2's baseline: the class whose ``D_agg`` is the (lower) median; returns its index."""
    agg = aggregated_distances(X, y_codes, K)
    order = np.argsort(agg, kind="stable")
    return int(order[(K - 1) // 2])


def choose_baseline(method: str, X: np.ndarray, y_codes: np.ndarray, K: int) -> int:
    """Baseline class index by ``method`` in :data:`BASELINE_METHODS`."""
    if method == "largest":
        return largest_class(y_codes, K, X)
    if method == "median_distance":
        return median_distance_class(X, y_codes, K)
    raise InputError(f"unknown baseline method {method!r}; choose one of {BASELINE_METHODS}")
