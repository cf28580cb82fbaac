"""Measures of METHODS section 7 against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.evaluation.metrics import (
    cross_entropy,
    egkl,
    error_rate,
    gkl,
    l1_error,
    l2_error,
    label_metrics,
    log_likelihood,
    truth_metrics,
)

P_TRUE = np.array([[0.2, 0.8], [0.5, 0.5]])
P_HAT = np.array([[0.4, 0.6], [0.5, 0.5]])


def test_l1_l2_by_hand():
    # Point 1: |0.4-0.2| + |0.6-0.8| = 0.4; point 2: 0.  Mean 0.2.
    assert l1_error(P_HAT, P_TRUE) == pytest.approx(0.2)
    # Point 1: 0.04 + 0.04 = 0.08; mean 0.04.
    assert l2_error(P_HAT, P_TRUE) == pytest.approx(0.04)


def test_egkl_by_hand():
    kl1 = 0.2 * math.log(0.2 / 0.4) + 0.8 * math.log(0.8 / 0.6)
    assert egkl(P_HAT, P_TRUE) == pytest.approx(kl1 / 2)
    assert egkl(P_TRUE, P_TRUE) == pytest.approx(0.0, abs=1e-15)


def test_gkl_by_hand():
    def two_sided(p, q):
        return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))

    point1 = two_sided(0.2, 0.4) + two_sided(0.8, 0.6)
    assert gkl(P_HAT, P_TRUE) == pytest.approx(point1 / 2)


def test_three_class_by_hand():
    p = np.array([[0.2, 0.3, 0.5]])
    q = np.array([[0.1, 0.3, 0.6]])
    assert l1_error(q, p) == pytest.approx(0.2)
    assert l2_error(q, p) == pytest.approx(0.02)
    assert egkl(q, p) == pytest.approx(0.2 * math.log(2) + 0.5 * math.log(0.5 / 0.6))
    m = truth_metrics(q, p)
    assert set(m) == {"L1", "L2", "EGKL", "GKL"}
    assert m["L1"] == pytest.approx(0.2)


def test_zero_true_probability_and_zero_estimate():
    p = np.array([[0.0, 1.0]])
    q = np.array([[0.5, 0.5]])
    assert egkl(q, p) == pytest.approx(math.log(2))  # 0 log 0 = 0
    # An estimate of exactly 0 where p > 0 gives a large finite loss, not inf.
    value = egkl(np.array([[1.0, 0.0]]), p)
    assert np.isfinite(value) and value > 30


def test_label_metrics_by_hand():
    classes = np.array(["a", "b", "c"])
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    y = np.array(["a", "c", "a"])
    ll = math.log(0.7) + math.log(0.8) + math.log(0.3)
    assert log_likelihood(P, y, classes) == pytest.approx(ll)
    assert cross_entropy(P, y, classes) == pytest.approx(-ll / 3)
    assert error_rate(P, y, classes) == pytest.approx(1 / 3)  # third point predicted "b"
    m = label_metrics(P, y, classes)
    assert m == pytest.approx({"log_likelihood": ll, "cross_entropy": -ll / 3, "error": 1 / 3})


def test_unknown_label_and_shape_mismatch_raise():
    with pytest.raises(InputError):
        log_likelihood(P_HAT, np.array([0, 7]), np.array([0, 1]))
    with pytest.raises(InputError):
        l1_error(P_HAT, np.ones((3, 2)) / 2)
