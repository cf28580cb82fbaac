"""Pieces for cheap joint tuning: scores on any grid, the screening round's choices."""

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.joint.simplex_grid import SimplexGrid
from wsvmgui.joint.tuning import (
    JointScreening,
    coarse_grid,
    cross_entropy,
    scheme_proba,
)


@pytest.mark.parametrize("scheme", ["indirect", "direct"])
def test_score_is_the_estimators_tuning_score(scheme):
    """On one hold-out split the estimator's tuning cross-entropy is ours, and the
    probabilities are the fitted estimator's."""
    d = simulate("wu2010_ex1", 90, 4)
    rng = np.random.default_rng(0)
    te = rng.choice(90, 30, replace=False)
    tr = np.setdiff1d(np.arange(90), te)
    est = JointWSVMClassifier(
        N=8, lambdas=[1 / (2 * 60 * 3.0)], cv=[(tr, te)], refit=False, scheme=scheme
    ).fit(d.X, d.y)
    pred = est.grid_predictions(d.X[te])
    codes = np.searchsorted(est.classes_, d.y[te])
    score = cross_entropy(pred, est.simplex_grid_, codes, scheme, est.h_method_)
    assert score / te.size == pytest.approx(est.tuning_table_[0]["cross_entropy"], rel=1e-12)
    p = scheme_proba(pred, est.simplex_grid_, scheme, est.h_method_)
    np.testing.assert_allclose(p, est.predict_proba(d.X[te]), rtol=1e-12)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    with pytest.raises(InputError, match="unknown scheme"):
        scheme_proba(pred, est.simplex_grid_, "both", est.h_method_)


def test_screening_keeps_the_lowest_scores_and_coarsens_the_grid():
    sc = JointScreening(factor=2, keep=3)
    assert list(sc.survivors([0.5, np.nan, 0.2, 0.2, 0.9, 0.1])) == [2, 3, 5]
    assert list(sc.survivors([np.nan, 1.0])) == [0, 1]  # fewer cells than kept
    assert sc.resolution(3, 20) == 10 and sc.resolution(3, 6) == 4  # at least K + 1
    assert sc.applies(30, 3, 20) and not sc.applies(3, 3, 20) and not sc.applies(30, 3, 4)
    g = coarse_grid(SimplexGrid.build(3, 20), sc)
    assert (g.K, g.N, g.size) == (3, 10, 36)
    for bad in ({"factor": 1}, {"factor": 2.5}, {"keep": 0}):
        with pytest.raises(InputError):
            JointScreening(**bad)
