"""The view capabilities: which estimator shows what, and that each method works.

The app used to find views by ``hasattr`` probes, some for methods nothing defined
(``subproblem_decision``); the capabilities are now declared classes."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui import (
    JointWSVMClassifier,
    MulticlassWeightedSVMClassifier,
    NonCrossingLadderClassifier,
    PreconditionedSVC,
    ProbingClassifier,
    WeightedSVMClassifier,
)
from wsvmgui.estimators.views import LadderView, LadderViews, SimplexViews, SubproblemViews
from wsvmgui.evaluation.designs import simulate

CAPABILITIES = {
    WeightedSVMClassifier: {LadderViews},
    NonCrossingLadderClassifier: {LadderViews},
    MulticlassWeightedSVMClassifier: {SubproblemViews},
    JointWSVMClassifier: {SimplexViews},
    PreconditionedSVC: set(),
    ProbingClassifier: set(),
}


@pytest.mark.parametrize("cls", list(CAPABILITIES), ids=lambda c: c.__name__)
def test_each_estimator_declares_its_views(cls):
    est = cls()
    have = {v for v in (LadderViews, SubproblemViews, SimplexViews) if isinstance(est, v)}
    assert have == CAPABILITIES[cls]
    for view in have - {LadderViews}:  # LadderViews implements its methods itself
        for name in [n for n in vars(view) if not n.startswith("_") and callable(vars(view)[n])]:
            assert getattr(cls, name) is not getattr(view, name), (cls.__name__, name)


@pytest.mark.parametrize("cls", [WeightedSVMClassifier, NonCrossingLadderClassifier])
def test_ladder_views(cls):
    d = simulate("wuliu2011_ex1", 60, seed=3)
    est = cls(n_weights=6, lam=0.01, sigma=1.0).fit(d.X, d.y)
    D = est.ladder_decision(d.X[:10])
    assert est.weights_.size == 5 and D.shape == (10, 5)
    np.testing.assert_array_equal(est.ladder_signs(d.X[:10]), D > 0)
    est_p = est.estimate(d.X[:10])
    np.testing.assert_allclose(est.predict_proba(d.X[:10])[:, 1], est_p.p)
    assert np.all(est_p.lo <= est_p.p) and np.all(est_p.p <= est_p.hi)


def test_subproblem_views_match_the_report():
    d = simulate("wu2010_ex1", 90, seed=4)
    # the plain estimate: with a calibration the report's brackets are the recalibrated ones
    est = MulticlassWeightedSVMClassifier(
        scheme="pairwise", n_weights=5, lam=0.01, sigma=1.0, calibration="none"
    )
    est.fit(d.X, d.y)
    X = d.X[:12]
    views = est.subproblem_ladders(X)
    decisions = est.subproblem_decisions(X)
    cols = est.report(X).columns()
    assert len(views) == len(decisions) == 3
    for view, D in zip(views, decisions, strict=True):
        assert isinstance(view, LadderView)
        assert D.shape == (12, view.weights.size)
        np.testing.assert_array_equal(view.signs, D > 0)
        np.testing.assert_array_equal(view.lo, cols[f"lo_{view.label}"])
        np.testing.assert_array_equal(view.hi, cols[f"hi_{view.label}"])


def test_simplex_views():
    d = simulate("wu2010_ex1", 90, seed=5)
    est = JointWSVMClassifier(N=6, C=1.0).fit(d.X, d.y)
    X = d.X[:8]
    pred = est.grid_predictions(X)
    assert pred.shape == (8, est.grid_.shape[0]) and pred.dtype == np.int64
    np.testing.assert_allclose(est.class_shares(X).sum(axis=1), 1.0)
    np.testing.assert_allclose(est.border_weights(X).sum(axis=1), 1.0)
