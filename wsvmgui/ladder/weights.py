"""Weight grids of a binary ladder: interior weights in (0, 1) (METHODS section 2)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def weight_grid(M: int) -> np.ndarray:
    """Interior weights ``m / M`` for ``m = 1..M-1``; shape (M - 1,)."""
    M = int(M)
    if M < 2:
        raise InputError(f"the weight grid needs M >= 2, got {M}")
    return np.arange(1, M) / M


def check_weights(weights: np.ndarray) -> np.ndarray:
    """Validate an interior weight grid: strictly increasing, inside (0, 1); shape (M - 1,)."""
    w = np.asarray(weights, dtype=float).ravel()
    if w.size < 1:
        raise InputError("the weight grid is empty")
    if not np.all(np.isfinite(w)) or w.min() <= 0 or w.max() >= 1:
        raise InputError("weights must lie strictly between 0 and 1")
    if np.any(np.diff(w) <= 0):
        raise InputError("weights must be strictly increasing")
    return w


def full_grid(weights: np.ndarray) -> np.ndarray:
    """Interior weights with 0 and 1 added at the ends; shape (M + 1,)."""
    return np.concatenate([[0.0], check_weights(weights), [1.0]])
