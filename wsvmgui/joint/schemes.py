"""Probability recovery from the classes predicted over the weight grid (METHODS sec. 4).

Input: ``pred`` (n, G), the class index each grid weight's classifier predicts at each
point.  Direct scheme: the cells of K mutually adjacent grid points whose predictions are
K distinct classes; the border weight is the mean of the qualifying cells' centres and
``p_k = (1 / pi_k) / sum_j (1 / pi_j)``.  Indirect scheme: the share of grid points that
predict each class, inverted through ``h`` (:mod:`.volumes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .simplex_grid import SimplexGrid
from .volumes import invert_shares, shares_from_counts

H_METHODS = ("count", "continuous")


def border_to_proba(pi: np.ndarray) -> np.ndarray:
    """``p_k = (1 / pi_k) / sum_j (1 / pi_j)``; pi (n, K) positive -> (n, K)."""
    r = 1.0 / np.asarray(pi, dtype=float)
    return r / r.sum(axis=1, keepdims=True)


def proba_to_border(p: np.ndarray) -> np.ndarray:
    """The border weight of ``p`` (n, K): ``pi_k proportional to 1 / p_k``."""
    return border_to_proba(np.maximum(np.asarray(p, dtype=float), 1e-300))


def class_counts(pred: np.ndarray, K: int) -> np.ndarray:
    """Grid points predicting each class; pred (n, G) -> (n, K) int."""
    out = np.zeros((pred.shape[0], K), dtype=np.int64)
    for k in range(K):
        out[:, k] = (pred == k).sum(axis=1)
    return out


@dataclass(frozen=True)
class DirectEstimate:
    """Direct-scheme result.

    Attributes
    ----------
    border : ndarray, shape (n, K)
        Estimated border weight (NaN rows where no cell qualified).
    found : ndarray of bool, shape (n,)
        Whether at least one cell had K distinct classes.
    n_cells : ndarray of int, shape (n,)
        Number of qualifying cells.
    """

    border: np.ndarray
    found: np.ndarray
    n_cells: np.ndarray


def qualifying_cells(pred: np.ndarray, grid: SimplexGrid, block: int = 20_000_000) -> np.ndarray:
    """Which cells have K distinct predicted classes; pred (n, G) -> (n, n_cells) bool."""
    vertices, _ = grid.cells
    n = pred.shape[0]
    K = grid.K
    full = (1 << K) - 1
    out = np.zeros((n, vertices.shape[0]), dtype=bool)
    step = max(1, block // max(vertices.size, 1))
    bits = np.int64(1) << np.arange(K, dtype=np.int64)
    for lo in range(0, n, step):
        cls = pred[lo : lo + step][:, vertices].astype(np.int64)  # (m, cells, K)
        mask = np.bitwise_or.reduce(bits[cls], axis=2)
        out[lo : lo + step] = mask == full
    return out


def direct_scheme(pred: np.ndarray, grid: SimplexGrid) -> DirectEstimate:
    """Border weights by the direct scheme (up and down cells, averaged when several qualify).

    Parameters
    ----------
    pred : ndarray of int, shape (n, G)
    grid : SimplexGrid

    Returns
    -------
    DirectEstimate
    """
    _, centres = grid.cells
    q = qualifying_cells(pred, grid)
    n_cells = q.sum(axis=1)
    found = n_cells > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        border = (q.astype(float) @ centres) / n_cells[:, None]
    border[~found] = np.nan
    return DirectEstimate(border, found, n_cells)


def indirect_scheme(
    pred: np.ndarray, grid: SimplexGrid, h_method: str = "count"
) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities by the indirect scheme.

    Parameters
    ----------
    pred : ndarray of int, shape (n, G)
    grid : SimplexGrid
    h_method : {"count", "continuous"}

    Returns
    -------
    proba : ndarray, shape (n, K)
    shares : ndarray, shape (n, K)
        Raw share of grid points predicting each class.
    """
    if h_method not in H_METHODS:
        raise ValueError(f"unknown h method {h_method!r}; choose one of {', '.join(H_METHODS)}")
    counts = class_counts(pred, grid.K)
    shares = counts / grid.size
    proba = invert_shares(shares_from_counts(counts), h_method, grid.weights)
    return proba, shares
