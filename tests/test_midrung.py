"""The binary ``calibration="auto"`` (by name ``"auto_midrung"``): the middle rung's
sigmoid where the count measure saturates (wsvmgui/ladder/midrung.py;
docs/notes/calibration.md, tenth sitting)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.io.modelfile import FittedModel, model_from_bytes, model_to_bytes
from wsvmgui.io.preprocessing import Preprocessing
from wsvmgui.ladder.grid import Ladder
from wsvmgui.ladder.midrung import (
    SATURATION_SHARE,
    middle_decision,
    saturated,
    saturated_share,
)


def _blobs(n: int, gap: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian classes in 4 dimensions, centres ``gap`` apart on the first axis."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 4))
    X[:, 0] += gap * (y - 0.5)
    return X, y


def _fit(calibration: str, gap: float, seed: int = 0) -> tuple[WeightedSVMClassifier, np.ndarray]:
    """Separated classes (gap 6) at a small penalty: most points change label outside the
    end weights; overlapping ones (gap 1) at a larger penalty: none does."""
    X, y = _blobs(120, gap, seed)
    lam = 1e-3 if gap > 3 else 1e-2
    est = WeightedSVMClassifier(lam=lam, sigma=2.0, calibration=calibration, n_jobs=1)
    return est.fit(X, y), X


def test_saturated_share_is_the_share_outside_the_end_weights():
    w = np.array([0.1, 0.5, 0.9])
    p = np.array([0.05, 0.1, 0.5, 0.9, 0.95, 0.99, 0.0, 0.3])
    # strictly outside [0.1, 0.9]: 0.05, 0.95, 0.99, 0.0
    assert saturated_share(p, w) == pytest.approx(4 / 8)
    assert not saturated(p, w, share=0.5)
    assert saturated(p, w, share=0.49)
    assert saturated_share(np.zeros(0), w) == 0.0


def test_saturated_reads_the_share_at_each_call(monkeypatch):
    """Without ``share``, :data:`SATURATION_SHARE` as it is at the call (bound at import
    before): a study that sets ``midrung.SATURATION_SHARE`` changes the answer."""
    import wsvmgui.ladder.midrung as mr

    w = np.array([0.1, 0.5, 0.9])
    p = np.array([0.05, 0.1, 0.5, 0.9, 0.95, 0.99, 0.0, 0.3])  # 4 of 8 outside
    assert SATURATION_SHARE == 0.5
    assert not saturated(p, w)  # 1/2 is not more than 1/2
    monkeypatch.setattr(mr, "SATURATION_SHARE", 0.49)
    assert saturated(p, w)
    assert not saturated(p, w, share=0.5)  # an explicit share still wins


def test_middle_decision_of_a_grid_ladder_is_its_value_at_one_half_or_the_line_between():
    rng = np.random.default_rng(1)
    coef = rng.normal(size=(3, 5))
    b = rng.normal(size=3)
    K = rng.normal(size=(7, 5))
    on = Ladder(np.array([0.25, 0.5, 0.75]), 0.1, coef, b, np.zeros(3))
    np.testing.assert_allclose(middle_decision(on, K), K @ coef[1] + b[1])
    off = Ladder(np.array([0.2, 0.4, 0.8]), 0.1, coef, b, np.zeros(3))
    f04, f08 = K @ coef[1] + b[1], K @ coef[2] + b[2]
    np.testing.assert_allclose(middle_decision(off, K), f04 + (0.5 - 0.4) / 0.4 * (f08 - f04))


def test_middle_decision_of_the_path_is_the_path_at_one_half():
    est, X = _fit("auto_midrung", 6.0)
    K = est.kernel_(X[:9], est.X_support_)
    expected = est.ladder_.path.decision_at(K, np.array([0.5]))[:, 0]
    np.testing.assert_allclose(middle_decision(est.ladder_, K), expected)
    # and it is the unweighted SVM's value: between the grid's two rungs around 1/2
    grid = est.ladder_.decision(K)
    k = int(np.searchsorted(est.weights_, 0.5))
    if est.weights_[k] == 0.5:
        np.testing.assert_allclose(middle_decision(est.ladder_, K), grid[:, k], atol=1e-10)


def test_separable_classes_saturate_and_take_the_middle_rung_sigmoid():
    est, X = _fit("auto_midrung", 6.0)
    assert est.fit_info_["saturated_share"] > SATURATION_SHARE
    assert est.calibration_input_ == "midrung"
    assert est.fit_info_["calibration_input"] == "midrung"
    g = est.calibration_
    assert g.name == "sigmoid"
    c, a, _ = g.coef
    assert a >= 0
    Xn, _ = _blobs(200, 6.0, 5)
    d = est.ladder_.path.decision_at(est.kernel_(Xn, est.X_support_), np.array([0.5]))[:, 0]
    P = est.predict_proba(Xn)
    # the definition: Platt's sigmoid in f_1/2 within the map's final bounds
    np.testing.assert_allclose(P[:, 1], np.clip(expit(c + a * d), g.lo, g.hi), atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.predict(Xn), est.classes_[P.argmax(axis=1)])
    # monotone in the middle rung's value
    order = np.argsort(d)
    assert np.all(np.diff(P[order, 1]) >= -1e-15)
    # the bracket of a middle-rung estimate is the point
    e = est.estimate(Xn)
    np.testing.assert_allclose(e.lo, e.p)
    np.testing.assert_allclose(e.hi, e.p)
    lo, hi = est.predict_interval(Xn)
    assert np.all(lo <= P[:, 1] + 1e-12) and np.all(P[:, 1] <= hi + 1e-12)


def test_overlapping_classes_keep_the_count_and_the_default_map():
    ours, X = _fit("auto_midrung", 1.0)
    assert ours.fit_info_["saturated_share"] <= SATURATION_SHARE
    assert ours.calibration_input_ == "count"
    default, _ = _fit("auto_plateau", 1.0)
    Xn, _ = _blobs(200, 1.0, 5)
    np.testing.assert_array_equal(ours.predict_proba(Xn), default.predict_proba(Xn))
    assert ours.calibration_.name == default.calibration_.name


def test_the_count_share_decides_not_the_labels():
    """The rule reads the cross-fitted estimates' share outside the end weights, the
    count's own saturation: the same fit without the rule (``"auto_plateau"``, the count's
    maps only) has that share too."""
    count, _ = _fit("auto_plateau", 6.0)
    ours, _ = _fit("auto_midrung", 6.0)
    assert count.fit_info_["saturated_share"] == ours.fit_info_["saturated_share"]
    assert count.calibration_input_ == "count"


def test_the_default_auto_is_the_middle_rung_rule():
    """Since the tenth sitting the binary default ``"auto"`` is ``"auto_midrung"``: the same
    probabilities on separable data (the middle rung) and on overlapping data (the count)."""
    for gap in (6.0, 1.0):
        default, _ = _fit("auto", gap)
        named, _ = _fit("auto_midrung", gap)
        Xn, _ = _blobs(200, gap, 5)
        assert default.calibration_input_ == named.calibration_input_
        np.testing.assert_array_equal(default.predict_proba(Xn), named.predict_proba(Xn))
    assert WeightedSVMClassifier().calibration == "auto"


def test_a_middle_rung_fit_survives_the_model_file():
    X, y = _blobs(120, 6.0, 0)
    names = [f"x{j}" for j in range(X.shape[1])]
    pre = Preprocessing.fit(X, names)
    est = WeightedSVMClassifier(lam=1e-3, sigma=2.0, calibration="auto_midrung", n_jobs=1)
    est.fit(pre.transform(X), y.astype(str))
    assert est.calibration_input_ == "midrung"
    back = model_from_bytes(model_to_bytes(FittedModel(est, pre, "label", {"kernel": "rbf"}, {})))
    Xn = pre.transform(_blobs(50, 6.0, 9)[0])
    np.testing.assert_array_equal(back.estimator.predict_proba(Xn), est.predict_proba(Xn))
    assert back.estimator.calibration_input_ == "midrung"


def test_the_estimator_reads_the_saturation_share_at_fit_time(monkeypatch):
    """A study that sets ``midrung.SATURATION_SHARE`` reaches the binary estimator."""
    import wsvmgui.ladder.midrung as midrung

    monkeypatch.setattr(midrung, "SATURATION_SHARE", 1.0)
    est, _ = _fit("auto", 6.0)
    assert est.fit_info_["saturated_share"] > 0.5
    assert est.calibration_input_ == "count"


def test_the_run_notes_say_when_the_middle_rung_was_used():
    from wsvmgui.app.capabilities import calibration_notes, fit_notes

    est, _ = _fit("auto", 6.0)
    (note,) = calibration_notes(est.fit_info_)
    share = est.fit_info_["saturated_share"]
    assert "middle rung" in note and f"{share:.0%}" in note
    assert note in fit_notes(est.fit_info_)
    count, _ = _fit("auto", 1.0)
    assert count.calibration_input_ == "count"
    assert calibration_notes(count.fit_info_) == [] and calibration_notes(None) == []
