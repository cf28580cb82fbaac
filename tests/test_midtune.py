"""Regime-consistent tuning: ``calibration="auto_midtune"`` and ``search_ladders(midrung=True)``
(eleventh sitting, acc-midtune; docs/notes/calibration.md).

A cell whose pooled cross-validated count estimates are saturated (more than
``SATURATION_SHARE`` outside the grid's end weights) is scored on the middle rung's sigmoid
cross-validated on the tuning rows, as ``calibration="auto"`` would return it there; any
other cell as without the switch.  Checked against the definitions: the weighted SVM is
scikit-learn's ``SVC`` with per-sample weights ``1 - pi`` (class +1) and ``pi`` (class -1)
and ``C = 1 / (2 n lambda)`` (METHODS section 1); the count estimate is the midpoint of the
bracket between the ``c``-th and ``(c+1)``-th weights, ``c`` the weights at which the
decision is positive (section 2); the middle rung is the fit at ``pi = 1/2``.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.ladder.midrung import SATURATION_SHARE
from wsvmgui.ladder.problems import LadderProblem
from wsvmgui.ladder.recalibration import fit_map
from wsvmgui.ladder.search import EGKL_FLOOR, search_ladders
from wsvmgui.progress import ProgressTracker
from wsvmgui.solvers.kernels import Kernel

WEIGHTS = np.arange(1, 10) / 10.0  # M = 10, 1/2 among them
SIGMA = 2.0


def _blobs(n: int, gap: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian classes in 3 dimensions, centres ``gap`` apart on the first axis;
    labels in {-1, +1}."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, -1.0, 1.0)
    X = rng.normal(size=(n, 3))
    X[:, 0] += gap * y / 2
    return X, y


def _folds(y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    return list(StratifiedKFold(3, shuffle=True, random_state=4).split(y[:, None], y))


def _svc(X, y, pi, lam):
    """The weighted SVM at weight ``pi`` by its definition (scikit-learn's SVC)."""
    C = 1.0 / (2.0 * y.size * lam)
    sw = np.where(y > 0, 1.0 - pi, pi)
    return SVC(C=C, gamma=1.0 / SIGMA**2, tol=1e-8).fit(X, y, sample_weight=sw)


def _by_definition(X, y, lam):
    """Every fold's tuning rows: count estimates, middle-rung values, labels (pooled)."""
    grid = np.concatenate([[0.0], WEIGHTS, [1.0]])
    p, d, lab = [], [], []
    for tr, te in _folds(y):
        F = np.column_stack([_svc(X[tr], y[tr], w, lam).decision_function(X[te]) for w in WEIGHTS])
        c = (F > 0).sum(axis=1)
        p.append((grid[c] + grid[c + 1]) / 2)
        d.append(F[:, list(WEIGHTS).index(0.5)])
        lab.append(y[te])
    return np.concatenate(p), np.concatenate(d), (np.concatenate(lab) > 0).astype(float)


def _egkl(q, y01):
    q = np.clip(q, EGKL_FLOOR, 1 - EGKL_FLOOR)
    return -np.mean(np.where(y01 > 0, np.log(q), np.log1p(-q)))


def _midrung_cv(d, y01):
    """The sigmoid map on expit(f_1/2) cross-validated on the pooled rows (5 stratified
    folds, seed 0, as ``recalibration_terms``), scored by the EGKL."""
    s = 1.0 / (1.0 + np.exp(-d))
    q = np.empty(s.size)
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(s[:, None], y01):
        q[te] = fit_map("sigmoid", s[tr], y01[tr])(s[te])
    return _egkl(q, y01)


def _search(X, y, lam, midrung):
    return search_ladders(
        X, [LadderProblem(np.arange(y.size), y)], _folds(y), Kernel("rbf", sigma=SIGMA),
        np.array([SIGMA]), [WEIGHTS], [np.array([lam])], engine="grid", n_jobs=1,
        tracker=ProgressTracker(0), calibration="auto_plateau", midrung=midrung,
    )[0]  # fmt: skip


def test_a_saturated_cell_is_scored_on_the_middle_rungs_cross_validated_sigmoid():
    X, y = _blobs(120, 6.0, 0)
    lam = 1e-3
    p, d, y01 = _by_definition(X, y, lam)
    share = np.mean((p < WEIGHTS[0]) | (p > WEIGHTS[-1]))
    assert share > SATURATION_SHARE  # the premise: separable classes saturate the count
    today = _search(X, y, lam, midrung=False)
    tuned = _search(X, y, lam, midrung=True)
    # today's score: the EGKL of the raw count estimate
    assert today.score[0, 0] == pytest.approx(_egkl(p, y01), rel=1e-6)
    # under the switch: the EGKL of the middle rung's sigmoid, cross-validated
    assert tuned.score[0, 0] == pytest.approx(_midrung_cv(d, y01), rel=1e-3)
    assert tuned.score[0, 0] != pytest.approx(today.score[0, 0], rel=1e-3)
    assert "middle rung" in tuned.score_name


def test_an_overlapping_cell_keeps_todays_score_bit_for_bit():
    X, y = _blobs(120, 1.0, 1)
    lam = 1e-2
    p, _, y01 = _by_definition(X, y, lam)
    assert np.mean((p < WEIGHTS[0]) | (p > WEIGHTS[-1])) <= SATURATION_SHARE
    today = _search(X, y, lam, midrung=False)
    tuned = _search(X, y, lam, midrung=True)
    np.testing.assert_array_equal(tuned.score, today.score)
    np.testing.assert_array_equal(tuned.se, today.se)
    assert tuned.score[0, 0] == pytest.approx(_egkl(p, y01), rel=1e-6)


def _fit(calibration: str, gap: float) -> tuple[WeightedSVMClassifier, np.ndarray]:
    X, y = _blobs(120, gap, 2)
    est = WeightedSVMClassifier(
        lambdas=[1e-3, 1e-2, 1e-1], sigmas=[1.0, SIGMA], calibration=calibration, n_jobs=1
    )
    return est.fit(X, y), _blobs(200, gap, 7)[0]


def test_overlapping_data_fit_as_the_default():
    ours, Xn = _fit("auto_midtune", 1.0)
    default, _ = _fit("auto", 1.0)
    np.testing.assert_array_equal(ours.tuning_.score, default.tuning_.score)
    assert (ours.lambda_, ours.sigma_) == (default.lambda_, default.sigma_)
    np.testing.assert_array_equal(ours.predict_proba(Xn), default.predict_proba(Xn))


def test_separable_data_tune_on_the_middle_rung_and_return_it():
    ours, Xn = _fit("auto_midtune", 6.0)
    default, _ = _fit("auto", 6.0)
    assert "middle rung" in ours.tuning_.score_name
    assert "middle rung" not in default.tuning_.score_name
    # some cell saturates, so the two searches score the grid differently
    assert not np.array_equal(ours.tuning_.score, default.tuning_.score)
    assert ours.calibration_input_ == "midrung"
    P = ours.predict_proba(Xn)
    assert np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(ours.predict(Xn), ours.classes_[P.argmax(axis=1)])


def test_only_auto_midtune_switches_the_search():
    X, y = _blobs(60, 1.0, 3)
    for name, expected in (("auto_midtune", True), ("auto", False), ("auto_midrung", False)):
        est = WeightedSVMClassifier(calibration=name)
        est.classes_ = np.array([-1.0, 1.0])
        plan = est._plan(X, (y > 0).astype(int))
        assert est._tuning_choice(plan).get("midrung", False) is expected
