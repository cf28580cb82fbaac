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

With sample weights a point of weight w counts as w points (integer weights give the
choice on the rows repeated): class sizes are summed weights, the medoid's sums and their
median are weighted; points of weight zero take no part.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from ..errors import InputError

BASELINE_METHODS = ("largest", "median_distance")


def largest_class(
    y_codes: np.ndarray,
    K: int,
    X: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
) -> int:
    """Index of the largest class; ``y_codes`` (n,) holds class indices 0..K-1.

    Ties: with ``X`` (n, p), the tied class whose aggregated distance (computed among the
    tied classes) is the lower median; without, the first.
    """
    y_codes = np.asarray(y_codes, dtype=int)
    counts = np.bincount(y_codes, weights=sample_weight, minlength=K)
    tied = np.flatnonzero(counts == counts.max())
    if tied.size == 1 or X is None:
        return int(tied[0])
    rows = np.isin(y_codes, tied)
    local = np.searchsorted(tied, y_codes[rows])
    sw = None if sample_weight is None else sample_weight[rows]
    return int(tied[median_distance_class(np.asarray(X)[rows], local, tied.size, sw)])


def compactness(Xj: np.ndarray, chunk: int = 2048, weights: np.ndarray | None = None) -> float:
    """``D_cp``: largest distance from a point of the class (m, p) to its medoid."""
    m = Xj.shape[0]
    if m == 1:
        return 0.0
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=float)
    sums = np.empty(m)
    for s in range(0, m, chunk):
        d = cdist(Xj[s : s + chunk], Xj)
        sums[s : s + chunk] = d.sum(axis=1) if weights is None else d @ w
    order = np.argsort(sums, kind="stable")
    if weights is None:
        medoid = int(order[(m - 1) // 2])
    else:  # the lower median of the sums with every point counted w times
        cum = np.cumsum(w[order])
        medoid = int(order[np.searchsorted(cum, (cum[-1] - 1) // 2, side="right")])
    return float(np.linalg.norm(Xj - Xj[medoid], axis=1).max())


def aggregated_distances(
    X: np.ndarray, y_codes: np.ndarray, K: int, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """``D_agg(j)`` for every class; shape (K,).

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y_codes : ndarray of int, shape (n,)
        Class indices 0..K-1; every class must be present.
    K : int
    sample_weight : ndarray, shape (n,), optional
        Positive weights (the medoids are weighted).
    """
    X = np.asarray(X, dtype=float)
    groups = [X[y_codes == j] for j in range(K)]
    weights = [None if sample_weight is None else sample_weight[y_codes == j] for j in range(K)]
    if any(g.shape[0] == 0 for g in groups):
        raise InputError("every class needs at least one point to choose a baseline")
    trees = [cKDTree(g) for g in groups]
    d_bc = np.zeros((K, K))
    for j in range(K):
        for jp in range(j + 1, K):
            small, big = (j, jp) if groups[j].shape[0] <= groups[jp].shape[0] else (jp, j)
            d, _ = trees[big].query(groups[small], k=1)
            d_bc[j, jp] = d_bc[jp, j] = float(d.min())
    d_cp = np.array([compactness(g, weights=w) for g, w in zip(groups, weights, strict=True)])
    # A class of coincident points has zero spread: treat it as infinitely compact.
    with np.errstate(divide="ignore", invalid="ignore"):
        agg = np.where(d_cp > 0, d_bc.sum(axis=1) / K / np.where(d_cp > 0, d_cp, 1.0), np.inf)
    return agg


def median_distance_class(
    X: np.ndarray, y_codes: np.ndarray, K: int, sample_weight: np.ndarray | None = None
) -> int:
    """B2's baseline: the class whose ``D_agg`` is the (lower) median; returns its index."""
    agg = aggregated_distances(X, y_codes, K, sample_weight)
    order = np.argsort(agg, kind="stable")
    return int(order[(K - 1) // 2])


def choose_baseline(
    method: str,
    X: np.ndarray,
    y_codes: np.ndarray,
    K: int,
    sample_weight: np.ndarray | None = None,
) -> int:
    """Baseline class index by ``method`` in :data:`BASELINE_METHODS` (``sample_weight``
    (n,) positive, or None)."""
    if method == "largest":
        return largest_class(y_codes, K, X, sample_weight)
    if method == "median_distance":
        return median_distance_class(X, y_codes, K, sample_weight)
    raise InputError(f"unknown baseline method {method!r}; choose one of {BASELINE_METHODS}")
