"""Calibration of estimated probabilities: reliability bins and proper scores (no Qt).

For two classes the reliability diagram is that of the second class (the "positive"
class, as in scikit-learn's ``CalibrationDisplay``): in equal-width bins of ``p_hat``, the
mean ``p_hat`` against the share of points of that class.  For K >= 3 it is the top-label
diagram: the largest ``p_hat`` (the confidence of the predicted class) against the share
of points whose label is the predicted class.  The expected calibration error (ECE) is
the bin-size weighted mean gap of the same diagram.

Where the true probabilities are known (simulation designs), each bin also holds the
mean *true* probability of the same event: ``p(positive | x_i)`` for two classes, the
true probability of the predicted class ``p(argmax_k p_hat_k | x_i)`` for K >= 3.  The
observed frequency is a noisy estimate of exactly that mean, so the gap between the
mean ``p_hat`` and it is the miscalibration without the sampling noise of the labels.

Scores (lower is better, except AUC):

``log_loss``
    mean ``-log p_hat(y_i)``, probabilities floored at ``1e-15`` as in
    :mod:`wsvmgui.evaluation.metrics`; ``n_zero`` counts the points with ``p_hat(y_i) = 0``,
    which dominate it.
``brier``
    two classes: mean ``(p_hat(positive) - [y = positive])^2`` (scikit-learn's
    ``brier_score_loss``); K >= 3: mean over points of the sum over classes of
    ``(p_hat_k - [y = k])^2``.
``ece``
    see above, ``DEFAULT_BINS`` equal-width bins.
``auc``
    two classes: ROC AUC of ``p_hat(positive)``; K >= 3: the mean of the K one-vs-rest AUCs
    (NaN when a class is missing from the labels).
``L1`` (true probabilities known only)
    mean over points of ``sum_k |p_hat_k - p_k|``, the Results tab's "L1 to the truth".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..evaluation.metrics import LOG_FLOOR, l1_error

DEFAULT_BINS = 10
SCORE_NAMES = ("log_loss", "brier", "ece", "auc", "error")
SCORE_LABELS = {
    "log_loss": "log loss",
    "brier": "Brier",
    "ece": "ECE",
    "auc": "AUC",
    "error": "error rate",
}


@dataclass(frozen=True)
class Reliability:
    """A reliability diagram.

    Attributes
    ----------
    kind : {"positive", "top-label"}
    label : str
        What the x axis holds, e.g. ``"p_hat(1)"`` or ``"largest p_hat"``.
    edges : ndarray, shape (B + 1,)
    counts : ndarray of int, shape (B,)
    mean_predicted : ndarray, shape (B,)
        NaN in empty bins.
    observed : ndarray, shape (B,)
        Share of positives (or of correct predictions); NaN in empty bins.
    true_mean : ndarray, shape (B,), or None
        Mean true probability of the same event in each bin (positive class, or the
        predicted class for the top-label diagram); NaN in empty bins; None when the
        true probabilities are not known.
    """

    kind: str
    label: str
    edges: np.ndarray
    counts: np.ndarray
    mean_predicted: np.ndarray
    observed: np.ndarray
    true_mean: np.ndarray | None = None

    @property
    def ece(self) -> float:
        n = self.counts.sum()
        if n == 0:
            return float("nan")
        full = self.counts > 0
        gaps = np.abs(self.observed[full] - self.mean_predicted[full])
        return float(np.sum(self.counts[full] * gaps) / n)


def _checked(proba: np.ndarray, y: np.ndarray, classes: np.ndarray):
    proba = np.atleast_2d(np.asarray(proba, dtype=float))
    y = np.asarray(y)
    classes = np.asarray(classes)
    if proba.shape != (y.size, classes.size):
        raise InputError(
            f"probabilities of shape {proba.shape} do not match {y.size} labels and "
            f"{classes.size} classes"
        )
    if y.size == 0:
        raise InputError("no points to measure calibration on")
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, classes.size - 1)
    if not np.all(classes[idx] == y):
        raise InputError("labels contain a class that the probability columns do not")
    return proba, idx, classes


def _checked_truth(p_true: np.ndarray | None, proba: np.ndarray) -> np.ndarray | None:
    if p_true is None:
        return None
    p_true = np.atleast_2d(np.asarray(p_true, dtype=float))
    if p_true.shape != proba.shape:
        raise InputError(
            f"true probabilities of shape {p_true.shape} do not match estimates of shape "
            f"{proba.shape}"
        )
    return p_true


def reliability(
    proba: np.ndarray,
    y: np.ndarray,
    classes: np.ndarray,
    bins: int = DEFAULT_BINS,
    p_true: np.ndarray | None = None,
) -> Reliability:
    """Reliability diagram of probabilities ``proba`` (n, K) against labels ``y`` (n,).

    ``classes`` (K,) are sorted and give the columns' order.  ``p_true`` (n, K), the true
    probabilities when known, adds each bin's mean true probability (``true_mean``).
    """
    proba, idx, classes = _checked(proba, y, classes)
    p_true = _checked_truth(p_true, proba)
    truth: np.ndarray | None = None
    if classes.size == 2:
        score = proba[:, 1]
        hit = (idx == 1).astype(float)
        kind, label = "positive", f"p_hat({classes[1]})"
        lo = 0.0
        if p_true is not None:
            truth = p_true[:, 1]
    else:
        score = proba.max(axis=1)
        predicted = proba.argmax(axis=1)
        hit = (predicted == idx).astype(float)
        kind, label = "top-label", "largest p_hat"
        lo = 0.0
        if p_true is not None:
            truth = p_true[np.arange(idx.size), predicted]
    edges = np.linspace(lo, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, score, side="right") - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    sums = np.bincount(which, weights=score, minlength=bins)
    hits = np.bincount(which, weights=hit, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_pred = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        observed = np.where(counts > 0, hits / np.maximum(counts, 1), np.nan)
        true_mean = None
        if truth is not None:
            true_sums = np.bincount(which, weights=truth, minlength=bins)
            true_mean = np.where(counts > 0, true_sums / np.maximum(counts, 1), np.nan)
    return Reliability(kind, label, edges, counts, mean_pred, observed, true_mean)


def _auc_binary(score: np.ndarray, positive: np.ndarray) -> float:
    """Mann-Whitney ROC AUC (ties count one half); NaN with one class only."""
    pos, neg = score[positive], score[~positive]
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([pos, neg]))
    return float((ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def proper_scores(
    proba: np.ndarray,
    y: np.ndarray,
    classes: np.ndarray,
    bins: int = DEFAULT_BINS,
    p_true: np.ndarray | None = None,
) -> dict[str, float]:
    """Log loss, Brier score, ECE, AUC and error rate (see the module docstring).

    Returns
    -------
    dict
        Keys of :data:`SCORE_NAMES` plus ``n`` and ``n_zero``; plus ``L1`` when the true
        probabilities ``p_true`` (n, K) are given.
    """
    proba, idx, classes = _checked(proba, y, classes)
    p_true = _checked_truth(p_true, proba)
    n = idx.size
    p_true_class = proba[np.arange(n), idx]
    onehot = np.zeros_like(proba)
    onehot[np.arange(n), idx] = 1.0
    if classes.size == 2:
        brier = float(np.mean((proba[:, 1] - onehot[:, 1]) ** 2))
        auc = _auc_binary(proba[:, 1], idx == 1)
    else:
        brier = float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
        aucs = [_auc_binary(proba[:, k], idx == k) for k in range(classes.size)]
        auc = float(np.mean(aucs)) if np.all(np.isfinite(aucs)) else float("nan")
    scores = {
        "log_loss": float(-np.mean(np.log(np.maximum(p_true_class, LOG_FLOOR)))),
        "brier": brier,
        "ece": reliability(proba, classes[idx], classes, bins).ece,
        "auc": auc,
        "error": float(np.mean(proba.argmax(axis=1) != idx)),
        "n": float(n),
        "n_zero": float(np.sum(p_true_class <= 0.0)),
    }
    if p_true is not None:
        scores["L1"] = l1_error(proba, p_true)
    return scores


@dataclass(frozen=True)
class CalibrationEntry:
    """One estimator's calibration on the measured part."""

    name: str
    reliability: Reliability
    scores: dict[str, float]


def calibration_entry(
    name: str,
    proba: np.ndarray,
    y: np.ndarray,
    classes: np.ndarray,
    bins: int = DEFAULT_BINS,
    p_true: np.ndarray | None = None,
) -> CalibrationEntry:
    """Reliability and scores of one estimator's probabilities ``proba`` (n, K); with the
    true probabilities ``p_true`` (n, K), the bins' mean true probability and the L1."""
    return CalibrationEntry(
        name,
        reliability(proba, y, classes, bins, p_true),
        proper_scores(proba, y, classes, bins, p_true),
    )
