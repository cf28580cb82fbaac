"""Reliability bins and proper scores against scikit-learn and known cases."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from wsvmgui.app.calibration import proper_scores, reliability
from wsvmgui.errors import InputError


def _binary(n=400, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = np.where(rng.uniform(size=n) < p, "b", "a")
    return np.column_stack([1 - p, p]), y, np.array(["a", "b"])


def test_binary_scores_match_scikit_learn():
    proba, y, classes = _binary()
    s = proper_scores(proba, y, classes)
    assert s["log_loss"] == pytest.approx(log_loss(y, proba, labels=classes))
    assert s["brier"] == pytest.approx(brier_score_loss(y == "b", proba[:, 1]))
    assert s["auc"] == pytest.approx(roc_auc_score(y == "b", proba[:, 1]))
    assert s["error"] == pytest.approx(np.mean((proba[:, 1] > 0.5) != (y == "b")))
    assert s["n"] == 400 and s["n_zero"] == 0


def test_binary_reliability_matches_calibration_curve():
    proba, y, classes = _binary(2000, 1)
    rel = reliability(proba, y, classes, bins=10)
    frac, mean = calibration_curve(y == "b", proba[:, 1], n_bins=10)
    full = rel.counts > 0
    np.testing.assert_allclose(rel.observed[full], frac)
    np.testing.assert_allclose(rel.mean_predicted[full], mean)
    assert rel.counts.sum() == 2000 and rel.kind == "positive"
    # calibrated by construction: small gaps
    assert rel.ece < 0.05


def test_ece_of_an_overconfident_estimator():
    """Every point gets p_hat = 0.9 for class b, but half are a: ECE = 0.4."""
    y = np.array(["a", "b"] * 50)
    proba = np.tile([0.1, 0.9], (100, 1))
    rel = reliability(proba, y, np.array(["a", "b"]))
    assert rel.counts.tolist() == [0] * 9 + [100]
    assert rel.ece == pytest.approx(0.4)
    assert proper_scores(proba, y, np.array(["a", "b"]))["ece"] == pytest.approx(0.4)


def test_multiclass_scores_and_top_label_diagram():
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(300, 3)) * 2
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=p) for p in proba])
    classes = np.arange(3)
    s = proper_scores(proba, y, classes)
    assert s["log_loss"] == pytest.approx(log_loss(y, proba))
    onehot = np.eye(3)[y]
    assert s["brier"] == pytest.approx(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
    assert s["auc"] == pytest.approx(roc_auc_score(y, proba, multi_class="ovr"))
    rel = reliability(proba, y, classes)
    assert rel.kind == "top-label"
    assert np.nanmin(rel.mean_predicted) >= 1 / 3 - 1e-12


def test_zero_probability_for_the_label_is_counted_not_infinite():
    y = np.array([0, 1, 1])
    proba = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    s = proper_scores(proba, y, np.array([0, 1]))
    assert s["n_zero"] == 1 and np.isfinite(s["log_loss"])


def test_bad_inputs_are_refused():
    with pytest.raises(InputError, match="do not match"):
        proper_scores(np.ones((3, 2)) / 2, np.array([0, 1]), np.array([0, 1]))
    with pytest.raises(InputError, match="class"):
        proper_scores(np.ones((2, 2)) / 2, np.array([0, 5]), np.array([0, 1]))
    with pytest.raises(InputError, match="no points"):
        reliability(np.empty((0, 2)), np.array([]), np.array([0, 1]))


def test_binary_true_probability_per_bin_by_hand():
    """Four points, bins of width 0.5: p_hat(b) = 0.1, 0.3 (bin 0), 0.6, 0.9 (bin 1).

    True p(b) = 0.2, 0.4, 0.5, 0.7: bin 0 holds (0.2 + 0.4) / 2 = 0.3, bin 1
    (0.5 + 0.7) / 2 = 0.6.  L1 = mean of 2 |p_hat(b) - p(b)| = 2 (0.1 + 0.1 + 0.1 + 0.2) / 4.
    """
    p_hat = np.array([0.1, 0.3, 0.6, 0.9])
    p = np.array([0.2, 0.4, 0.5, 0.7])
    proba, truth = np.column_stack([1 - p_hat, p_hat]), np.column_stack([1 - p, p])
    y, classes = np.array(["a", "b", "a", "b"]), np.array(["a", "b"])
    rel = reliability(proba, y, classes, bins=2, p_true=truth)
    np.testing.assert_allclose(rel.true_mean, [0.3, 0.6])
    np.testing.assert_allclose(rel.observed, [0.5, 0.5])
    np.testing.assert_allclose(rel.mean_predicted, [0.2, 0.75])
    s = proper_scores(proba, y, classes, bins=2, p_true=truth)
    assert s["L1"] == pytest.approx(2 * 0.5 / 4)
    assert "L1" not in proper_scores(proba, y, classes, bins=2)
    assert reliability(proba, y, classes, bins=2).true_mean is None


def test_top_label_true_probability_is_that_of_the_predicted_class():
    """Three classes, two bins: the predicted class's true probability, not the largest."""
    proba = np.array([[0.4, 0.35, 0.25], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]])
    truth = np.array([[0.2, 0.6, 0.2], [0.3, 0.5, 0.2], [0.0, 0.1, 0.9]])
    y = np.array([1, 1, 2])
    rel = reliability(proba, y, np.arange(3), bins=2, p_true=truth)
    # bin [0, 0.5): point 0, predicted class 0, true p 0.2 (not the largest true p 0.6);
    # bin [0.5, 1]: points 1 and 2, true p of classes 1 and 2: (0.5 + 0.9) / 2
    assert rel.counts.tolist() == [1, 2]
    np.testing.assert_allclose(rel.true_mean, [0.2, 0.7])
    np.testing.assert_allclose(rel.observed, [0.0, 1.0])
    s = proper_scores(proba, y, np.arange(3), p_true=truth)
    # |0.4-0.2| + |0.35-0.6| + |0.25-0.2| = 0.5; 0.1 + 0.2 + 0.1 = 0.4; 0.1 + 0 + 0.1 = 0.2
    assert s["L1"] == pytest.approx((0.5 + 0.4 + 0.2) / 3)


def test_true_probabilities_of_the_wrong_shape_are_refused():
    with pytest.raises(InputError, match="true probabilities"):
        reliability(np.ones((2, 2)) / 2, np.array([0, 1]), np.array([0, 1]), p_true=np.ones((2, 3)))
