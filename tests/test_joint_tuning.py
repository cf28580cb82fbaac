"""Pieces for cheap joint tuning: scores on any grid, the screening round's choices."""

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import truth_metrics
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
        n_weights=8,
        kernel="linear",
        lambdas=[1 / (2 * 60 * 3.0)],
        cv=[(tr, te)],
        refit=False,
        scheme=scheme,
    ).fit(d.X, d.y)
    pred = est.grid_predictions(d.X[te])
    codes = np.searchsorted(est.classes_, d.y[te])
    score = cross_entropy(pred, est.simplex_grid_, codes, scheme, est.h_method_)
    assert score / te.size == pytest.approx(est.tuning_.rows()[0]["cross_entropy"], rel=1e-12)
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


def test_screened_estimator_tunes_the_survivors_on_the_full_grid():
    """screen="auto": every cell scored on the coarse grid, the 3 best on the full one,
    the best of those chosen; the progress total is the fits made; the unscreened search
    scores the same survivors identically (same folds, same fits)."""
    tr = simulate("wu2010_ex1", 90, 11)
    te = simulate("wu2010_ex1", 600, 12)
    lams = [1 / (2 * 45 * C) for C in (0.3, 3.0, 30.0, 300.0)]
    kw = dict(n_weights=8, kernel="linear", lambdas=lams, random_state=3)
    seen: list = []
    est = JointWSVMClassifier(**kw).fit(tr.X, tr.y, progress=lambda d, t, p: seen.append(d))
    full = JointWSVMClassifier(screen=None, **kw).fit(tr.X, tr.y)
    t, G = est.tuning_, est.simplex_grid_.size
    assert t.screened is not None and t.screened.shape == (1, 4) and full.tuning_.screened is None
    kept = np.isfinite(t.score)
    assert kept.sum() == 3
    # the survivors are the 3 lowest coarse scores, and the choice is the lowest of them
    np.testing.assert_array_equal(np.sort(np.argsort(t.screened.ravel())[:3]),
                                  np.flatnonzero(kept.ravel()))  # fmt: skip
    assert t.best == np.unravel_index(np.nanargmin(t.score), t.score.shape)
    np.testing.assert_allclose(t.score[kept], full.tuning_.score[kept], rtol=1e-12)
    coarse = coarse_grid(est.simplex_grid_, JointScreening()).size
    assert seen[-1] == est.fit_info_["n_fits"] == 4 * coarse + 3 * G + G
    if full.tuning_.best in [tuple(c) for c in np.argwhere(kept)]:
        np.testing.assert_allclose(est.predict_proba(te.X), full.predict_proba(te.X))
    # probabilities: rows sum to 1 and are far better than the uniform guess
    p = est.predict_proba(te.X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    uniform = truth_metrics(np.full(te.p.shape, 1 / 3), te.p)["L1"]
    assert truth_metrics(p, te.p)["L1"] < 0.5 * uniform


def test_screening_is_skipped_where_it_would_drop_nothing():
    d = simulate("wu2010_ex1", 60, 2)
    est = JointWSVMClassifier(
        n_weights=8, kernel="linear", lambdas=[0.01, 0.001], random_state=0
    ).fit(d.X, d.y)
    assert est.tuning_.screened is None and np.isfinite(est.tuning_.score).all()
    with pytest.raises(Exception, match="screen"):
        JointWSVMClassifier(screen="always").fit(d.X, d.y)
