"""Relabelling and hinge-tuned plain SVMs of the preconditioned SVM (Wu & Liu 2011).

METHODS section 3; the estimator is
:class:`wsvmgui.estimators.preconditioned.PreconditionedSVC`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..solvers.wsvm import WeightedFit, fit_weighted_svm

#: The levels of Wu & Liu's tables, with 0 (the plain SVM).
DEFAULT_PT_GRID = (0.0, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40)
LADDERS = ("noncrossing", "independent")


def check_level(pt: float) -> float:
    """Validate a preconditioning level: a number in [0, 0.5)."""
    try:
        value = float(pt)
    except (TypeError, ValueError):
        raise InputError(
            f"preconditioning level must be a number in [0, 0.5), got {pt!r}"
        ) from None
    if not (np.isfinite(value) and 0.0 <= value < 0.5):
        raise InputError(f"preconditioning level must lie in [0, 0.5), got {pt!r}")
    return value


def precondition_labels(y: np.ndarray, p_hat: np.ndarray, pt: float) -> np.ndarray:
    """Relabel likely outliers.

    Parameters
    ----------
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    p_hat : ndarray, shape (n,)
        Estimated ``P(Y = +1 | x_i)``.
    pt : float
        Level in [0, 0.5).

    Returns
    -------
    ndarray, shape (n,)
        ``-1`` where ``p_hat < pt``, ``+1`` where ``p_hat > 1 - pt``, ``y`` otherwise.
    """
    pt = check_level(pt)
    y = np.asarray(y, dtype=float)
    p_hat = np.asarray(p_hat, dtype=float)
    if y.shape != p_hat.shape:
        raise InputError(f"labels {y.shape} and probabilities {p_hat.shape} differ in shape")
    out = y.copy()
    out[p_hat < pt] = -1.0
    out[p_hat > 1.0 - pt] = 1.0
    return out


def weighted_hinge(f: np.ndarray, y: np.ndarray, pi: float = 0.5) -> float:
    """Mean weighted hinge loss ``S(y) (1 - y f)_+`` (class +1 weight ``1 - pi``)."""
    S = np.where(y > 0, 1.0 - pi, pi)
    return float(np.mean(S * np.maximum(1.0 - y * f, 0.0)))


def fit_svm_by_hinge(
    K: np.ndarray,
    y: np.ndarray,
    K_tune: np.ndarray | None,
    y_tune: np.ndarray | None,
    lambdas: np.ndarray,
) -> tuple[WeightedFit, float]:
    """Plain SVM with lambda minimising the hinge loss on the tuning set.

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)
        Labels in {-1, +1}; if only one class is present the "SVM" is that constant.
    K_tune : ndarray, shape (m, n), or None
    y_tune : ndarray, shape (m,), or None
    lambdas : ndarray, shape (L,)

    Returns
    -------
    fit : WeightedFit
    score : float
        Tuning hinge loss (NaN without a tuning set).
    """
    grid = np.ravel(lambdas)
    if K_tune is None or y_tune is None:
        return fit_plain_svm(K, y, float(grid[0])), float("nan")
    fits = [fit_plain_svm(K, y, float(lam)) for lam in grid]
    scores = [weighted_hinge(fit.decision(K_tune), y_tune) for fit in fits]
    # The first of the (numerically) best, as the grid is ordered from large lambda down.
    best = int(np.flatnonzero(np.asarray(scores) <= min(scores) + 1e-12)[0])
    return fits[best], float(scores[best])


def fit_plain_svm(K: np.ndarray, y: np.ndarray, lam: float) -> WeightedFit:
    """The plain SVM (weight 1/2) on kernel ``K`` (n, n), labels ``y`` (n,) in {-1, +1}."""
    if np.all(y > 0) or np.all(y < 0):
        # Relabelling made one class: the SVM minimiser is the constant of that class.
        n = y.size
        sign = float(y[0])
        return WeightedFit(0.5, lam, 1.0 / (2 * n * lam), np.zeros(n), np.zeros(n), sign, 0.0)
    return fit_weighted_svm(K, y, 0.5, lam)
