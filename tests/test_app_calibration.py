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
