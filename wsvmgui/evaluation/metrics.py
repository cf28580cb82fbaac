"""Accuracy measures of METHODS section 7.

All functions take probability matrices of shape (n, K) whose columns follow the same
class order.  For a binary problem pass both columns; L1 and L2 then count each point's
error twice (once per class), exactly as the K-class formulas do.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

#: Floor applied to estimated probabilities inside logarithms, so that a baseline that
#: outputs an exact 0 gives a large finite loss instead of inf.
LOG_FLOOR = 1e-15


def _pair(p_hat: np.ndarray, p_true: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p_hat = np.atleast_2d(np.asarray(p_hat, dtype=float))
    p_true = np.atleast_2d(np.asarray(p_true, dtype=float))
    if p_hat.shape != p_true.shape:
        raise InputError(f"probability shapes differ: {p_hat.shape} vs {p_true.shape}")
    return p_hat, p_true


def _xlogy_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """p log(p / q) with 0 log 0 = 0 and q floored at LOG_FLOOR."""
    q = np.maximum(q, LOG_FLOOR)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0)
    return out


def l1_error(p_hat: np.ndarray, p_true: np.ndarray) -> float:
    """L1 = (1/n) sum_i sum_k |p_hat_ik - p_ik|."""
    p_hat, p_true = _pair(p_hat, p_true)
    return float(np.abs(p_hat - p_true).sum(axis=1).mean())


def l2_error(p_hat: np.ndarray, p_true: np.ndarray) -> float:
    """L2 = (1/n) sum_i sum_k (p_hat_ik - p_ik)^2."""
    p_hat, p_true = _pair(p_hat, p_true)
    return float(((p_hat - p_true) ** 2).sum(axis=1).mean())


def egkl(p_hat: np.ndarray, p_true: np.ndarray) -> float:
    """EGKL = (1/n) sum_i sum_k p_ik log(p_ik / p_hat_ik) (Kullback-Leibler to the truth)."""
    p_hat, p_true = _pair(p_hat, p_true)
    return float(_xlogy_ratio(p_true, p_hat).sum(axis=1).mean())


def gkl(p_hat: np.ndarray, p_true: np.ndarray) -> float:
    """Zeng's GKL: sum over classes of the two-sided binary KL divergences, averaged."""
    p_hat, p_true = _pair(p_hat, p_true)
    return float(
        (_xlogy_ratio(p_true, p_hat) + _xlogy_ratio(1 - p_true, 1 - p_hat)).sum(axis=1).mean()
    )


def _label_index(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    classes = np.asarray(classes)
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, classes.size - 1)
    if not np.all(classes[idx] == y):
        raise InputError("labels contain a class that the probability columns do not")
    return idx


def log_likelihood(p_hat: np.ndarray, y: np.ndarray, classes: np.ndarray) -> float:
    """Test log-likelihood sum_i log p_hat_{y_i}(x_i) (classes sorted, shape (K,))."""
    p_hat = np.atleast_2d(np.asarray(p_hat, dtype=float))
    idx = _label_index(np.asarray(y), classes)
    return float(np.log(np.maximum(p_hat[np.arange(idx.size), idx], LOG_FLOOR)).sum())


def cross_entropy(p_hat: np.ndarray, y: np.ndarray, classes: np.ndarray) -> float:
    """Mean negative log-likelihood; for tuning this is the empirical GKL (EGKL of Wang 2008)."""
    return -log_likelihood(p_hat, y, classes) / len(y)


def error_rate(p_hat: np.ndarray, y: np.ndarray, classes: np.ndarray) -> float:
    """Misclassification rate of the argmax of ``p_hat``."""
    p_hat = np.atleast_2d(np.asarray(p_hat, dtype=float))
    return float(np.mean(np.asarray(classes)[np.argmax(p_hat, axis=1)] != np.asarray(y)))


def truth_metrics(p_hat: np.ndarray, p_true: np.ndarray) -> dict[str, float]:
    """L1, L2, EGKL and GKL against known probabilities."""
    return {
        "L1": l1_error(p_hat, p_true),
        "L2": l2_error(p_hat, p_true),
        "EGKL": egkl(p_hat, p_true),
        "GKL": gkl(p_hat, p_true),
    }


def label_metrics(p_hat: np.ndarray, y: np.ndarray, classes: np.ndarray) -> dict[str, float]:
    """Log-likelihood, cross-entropy and error rate against observed labels."""
    return {
        "log_likelihood": log_likelihood(p_hat, y, classes),
        "cross_entropy": cross_entropy(p_hat, y, classes),
        "error": error_rate(p_hat, y, classes),
    }
