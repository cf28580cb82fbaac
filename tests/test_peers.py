"""The SVM peers of the accuracy benchmark (wsvmgui.evaluation.peers)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.isotonic import IsotonicRegression
from sklearn.svm import SVC

from wsvmgui.errors import InputError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.peers import (
    VennAbers,
    fit_calibrated_svc,
    fit_svm_peers,
    grid_edges,
    merge_venn_abers,
    search_svm_peers,
)


def _codes(y):
    return np.unique(y, return_inverse=True)[1]


@pytest.mark.parametrize("design", ["wuliu2011_ex1", "wu2010_ex1"])
@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_calibrated_svc_equals_calibrated_classifier_cv(design, method):
    d = simulate(design, 240, 3)
    codes = _codes(d.y)
    Xt = simulate(design, 150, 4).X
    ours = fit_calibrated_svc(d.X, codes, 3.0, 0.5).predict_proba(method, Xt)
    ref = CalibratedClassifierCV(SVC(C=3.0, gamma=0.5), method=method, cv=5, ensemble=False)
    np.testing.assert_allclose(ours, ref.fit(d.X, codes).predict_proba(Xt), atol=1e-10)


def test_platt_binary_is_close_to_sigmoid_and_rows_sum_to_one():
    d = simulate("wuliu2011_ex1", 300, 0)
    t = simulate("wuliu2011_ex1", 2000, 1)
    cal = fit_calibrated_svc(d.X, _codes(d.y), 1.0, 0.5)
    platt, sig = cal.predict_proba("platt", t.X), cal.predict_proba("sigmoid", t.X)
    np.testing.assert_allclose(platt.sum(axis=1), 1.0)
    # the same sigmoid on the same decision values, up to libsvm's smoothed targets
    assert np.abs(platt - sig).max() < 0.05
    # both estimate the truth (Platt suits this logistic design)
    assert np.abs(platt[:, 1] - t.p[:, 1]).mean() < 0.1


def test_venn_abers_matches_isotonic_with_the_test_point_added():
    rng = np.random.default_rng(0)
    s = np.round(rng.normal(size=80), 1)  # ties on purpose
    y = (rng.random(80) < 1 / (1 + np.exp(-2 * s))).astype(float)
    t = np.concatenate([np.round(rng.normal(size=40), 1), [-9.0, 9.0]])
    p0, p1 = VennAbers(s, y).predict_interval(t)
    for i, ti in enumerate(t):
        for label, got in ((0.0, p0[i]), (1.0, p1[i])):
            iso = IsotonicRegression(out_of_bounds="clip").fit(
                np.append(s, ti), np.append(y, label)
            )
            assert got == pytest.approx(iso.predict([ti])[0], abs=1e-12)
    assert np.all(p0 <= p1)


def test_merge_venn_abers_is_between_the_pairs():
    p0 = np.array([[0.2, 0.5], [0.3, 0.6]])
    p1 = np.array([[0.4, 0.7], [0.35, 0.9]])
    p = merge_venn_abers(p0, p1)
    assert np.all(p >= p0.min(axis=0) - 1e-12) and np.all(p <= p1.max(axis=0) + 1e-12)
    # one predictor: p1 / (1 - p0 + p1)
    assert merge_venn_abers(p0[:1], p1[:1]) == pytest.approx(p1[0] / (1 - p0[0] + p1[0]))


def test_venn_abers_bad_input():
    with pytest.raises(InputError, match="as many labels"):
        VennAbers(np.zeros(3), np.zeros(2))
    with pytest.raises(InputError, match="finite"):
        VennAbers(np.array([0.0, np.nan]), np.array([0, 1]))


def test_search_chooses_each_methods_best_cell_and_reports_edges():
    d = simulate("wuliu2011_ex1", 150, 2)
    codes = _codes(d.y)
    s = search_svm_peers(d.X, codes, C_grid=(0.1, 1.0, 10.0), g_grid=(0.25, 1.0), seed=0)
    for m in ("platt", "sigmoid", "isotonic"):
        i, j = np.unravel_index(np.argmin(s.loss[m]), s.loss[m].shape)
        assert s.best[m] == (s.C[i], s.g[j] / 2)
        assert s.edges[m] == grid_edges(i, j, 3, 2)
    assert s.best["venn_abers"] == s.best["sigmoid"]
    fitted = fit_svm_peers(d.X, codes, s)
    P = fitted["venn_abers"].predict_proba("venn_abers", d.X[:20])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.all((P > 0) & (P < 1))


def test_grid_edges():
    assert grid_edges(0, 6, 7, 7) == ["C min", "g max"]
    assert grid_edges(3, 3, 7, 7) == []
