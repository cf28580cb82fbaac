"""One-vs-All's shared tuning: one split, one kernel matrix per (sigma, fold) and one
class-stratified screening round for all K sub-problems (wsvmgui.multiclass.ova).

Checked against the same search run one sub-problem at a time (the same cells and
scores), against the unscreened search and the truth of a K = 3 design, by the
estimator's invariants, and on a class too small for an unstratified subsample.
"""

from __future__ import annotations

import numpy as np
import pytest

import wsvmgui.solvers.gram as gram_module
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import l1_error
from wsvmgui.ladder.screening import Screening, screened_search
from wsvmgui.ladder.splits import holdout_split, kfold_splits
from wsvmgui.ladder.tuning import default_lambda_grid
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.multiclass.ova import OVA_SCREEN_MIN_ROWS
from wsvmgui.multiclass.subproblems import as_ladder_problem, rest_problem
from wsvmgui.progress import ProgressTracker
from wsvmgui.solvers.kernels import Kernel


def test_stratified_subsample_keeps_every_class_at_its_share():
    codes = np.repeat([0, 1, 2], [300, 60, 3])
    folds = kfold_splits(codes, 3, seed=0)
    small = Screening(share=1 / 3, seed=2).subsample(folds, codes)
    for (train, test), (sub, same) in zip(folds, small, strict=True):
        assert np.isin(sub, train).all() and np.all(np.diff(sub) > 0)
        np.testing.assert_array_equal(same, test)
        for k in range(3):
            have, kept = np.sum(codes[train] == k), np.sum(codes[sub] == k)
            assert kept == min(have, max(2, round(have / 3))), (k, have, kept)
    again = Screening(share=1 / 3, seed=2).subsample(folds, codes)
    np.testing.assert_array_equal(small[1][0], again[1][0])  # deterministic given the seed


def test_ova_screening_is_the_binary_one_from_smaller_folds():
    base = MulticlassWeightedSVMClassifier(scheme="pairwise", random_state=5)._screening()
    ova = MulticlassWeightedSVMClassifier(scheme="ova", random_state=5)._screening()
    assert base is not None and ova is not None
    assert ova.min_rows == OVA_SCREEN_MIN_ROWS < base.min_rows
    assert (ova.share, ova.keep, ova.seed) == (base.share, base.keep, base.seed)


@pytest.fixture(scope="module")
def k3_design():
    return simulate("wu2010_ex1", 500, seed=3), simulate("wu2010_ex1", 2000, seed=4)


def test_sharing_the_round_changes_no_cell_and_builds_one_kernel_per_sigma(k3_design):
    """The K sub-problems searched as one batch score exactly as each searched alone (the
    same stratified subsample, cells kept and choice), building K times fewer matrices."""
    train, _ = k3_design
    codes = train.y - 1
    problems = [as_ladder_problem(rest_problem(j, np.arange(3)), codes) for j in range(3)]
    folds = [holdout_split(codes, 0.3, seed=0)]
    sigmas = np.array([0.6, 1.2, 2.4])
    lambdas = default_lambda_grid(folds[0][0].size)[::3]  # C = 0.1, 3, 100
    screening = Screening(min_rows=200, keep=3, seed=1)

    def search(probs):
        before = gram_module.build_count["built"]
        found = screened_search(
            train.X, probs, folds, Kernel("rbf"), sigmas, [weight_grid(20)] * len(probs),
            [lambdas] * len(probs), screening=screening, strata=codes,
            tracker=ProgressTracker(0),
        )  # fmt: skip
        return found, gram_module.build_count["built"] - before

    shared, built = search(problems)
    assert built == 2 * sigmas.size  # one matrix per sigma in each round, for all three
    alone_built = 0
    for prob, mine in zip(problems, shared, strict=True):
        (alone,), b = search([prob])
        alone_built += b
        np.testing.assert_allclose(mine.screened, alone.screened, rtol=1e-10)
        np.testing.assert_allclose(mine.egkl, alone.egkl, rtol=1e-10)  # NaN where not kept
        assert (mine.best_lambda, mine.best_sigma) == (alone.best_lambda, alone.best_sigma)
        assert np.isfinite(mine.egkl).sum() == screening.keep
    assert alone_built > built


def test_default_ova_screens_and_stays_as_accurate_as_the_full_search(k3_design):
    """K = 3 design, n = 500 (350 rows per training part, so the screening applies).

    Bounds: 0.15 is under a quarter of the class-frequency predictor's L1 (asserted), so
    an estimator that ignores the inputs or mixes up the class columns fails; the screened
    search may choose other cells than the full one, within 0.02 of its L1
    (benchmarks/results/scheme_speed.md: at n = 800 the screened L1 was 0.079 against
    0.086).
    """
    train, test = k3_design
    screened = MulticlassWeightedSVMClassifier(scheme="ova", random_state=0).fit(train.X, train.y)
    full = MulticlassWeightedSVMClassifier(scheme="ova", random_state=0, screen=None)
    full.fit(train.X, train.y)
    assert screened.fit_info_["tuning_screened"] == 3
    assert full.fit_info_["tuning_screened"] == 0
    P, P_full = screened.predict_proba(test.X), full.predict_proba(test.X)
    prior = np.bincount(train.y - 1, minlength=3) / train.y.size
    l1_prior = l1_error(np.tile(prior, (test.y.size, 1)), test.p)
    l1, l1_full = l1_error(P, test.p), l1_error(P_full, test.p)
    assert l1 < 0.15 < 0.25 * l1_prior
    assert l1 <= l1_full + 0.02
    # each sub-problem's choice is a kept cell of its own table, and the best of them
    for f in screened.subproblems_.fitted:
        t = screened.tuning_[f.spec.name]
        assert np.isfinite(t.egkl).sum() == Screening().keep
        assert t.egkl[np.isfinite(t.egkl)].min() == np.nanmin(t.egkl)
        assert f.sigma == t.best_sigma
    # invariants: rows sum to one, every raw value inside its sub-problem's bracket
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert (P >= 0).all() and (P <= 1).all()
    rep = screened.report(test.X[:300])
    raw = screened.raw_ova(test.X[:300])
    for k, f in enumerate(screened.subproblems_.fitted):
        lo, hi = rep.extra[f"lo_{f.spec.name}"], rep.extra[f"hi_{f.spec.name}"]
        assert np.all((lo <= raw[:, k] + 1e-12) & (raw[:, k] <= hi + 1e-12))


def test_a_class_of_four_survives_the_screening_subsample():
    """An unstratified third of the training part would often hold none of a class of
    three rows, leaving its One-vs-All sub-problem one class to train on."""
    d = simulate("wu2010_ex1", 500, seed=9)
    y = d.y.copy()
    y[np.flatnonzero(y == 3)[4:]] = 1  # class 3 keeps 4 rows: 3 train, 1 tune
    est = MulticlassWeightedSVMClassifier(
        scheme="ova", random_state=0, lambdas=default_lambda_grid(350)[::2], n_weights=10
    ).fit(d.X, y)
    assert est.fit_info_["tuning_screened"] == 3
    P = est.predict_proba(d.X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # the rare class is still told apart where it was seen
    assert P[y == 3, 2].mean() > P[y != 3, 2].mean()
