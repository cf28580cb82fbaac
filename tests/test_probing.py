"""Probing (Langford & Zadrozny): minimax rules, learners, costing, accuracy, contract."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.validation import has_fit_parameter

from wsvmgui.errors import InputError
from wsvmgui.estimators.probing import ProbingClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import l2_error
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.probing.costing import _CostingClassifier
from wsvmgui.probing.learners import LEARNER_NAMES, learner_factory, make_learner
from wsvmgui.probing.reduction import interval_score, kl_coin, minimax_point
from wsvmgui.solvers.kernels import Kernel, median_between_class_distance


def test_cross_entropy_minimax_point_matches_numerical_minimax():
    rng = np.random.default_rng(0)
    intervals = [(0.0, 1.0), (0.0, 0.1), (0.9, 1.0)] + [
        tuple(sorted(rng.uniform(0, 1, 2))) for _ in range(30)
    ]
    for a, b in intervals:
        # Worst-case regret of estimate q over p in [a, b], on a fine grid of p.
        ps = np.linspace(a, b, 401)

        def worst(q, ps=ps):
            return float(np.max(kl_coin(ps, q)))

        num = minimize_scalar(
            worst,
            bounds=(max(a, 1e-12), min(b, 1 - 1e-12)),
            method="bounded",
            options={"xatol": 1e-10},
        )
        q = minimax_point(a, b, "cross_entropy")
        assert a <= q <= b
        assert abs(q - num.x) < 1e-4 * max(1.0, (b - a) * 10)
        assert worst(q) <= num.fun + 1e-9
        # The score is |S| times the worst-case regret, attained at both ends.
        assert interval_score(a, b, 3, "cross_entropy") == pytest.approx(3 * worst(q), rel=1e-6)


def test_squared_minimax_point_is_the_midpoint():
    for a, b in [(0.0, 1.0), (0.2, 0.3), (0.61, 0.99)]:
        num = minimize_scalar(
            lambda q, a=a, b=b: max((q - a) ** 2, (q - b) ** 2),
            bounds=(a, b),
            method="bounded",
            options={"xatol": 1e-12},
        )
        assert minimax_point(a, b, "squared") == pytest.approx(num.x, abs=1e-6)
        assert interval_score(a, b, 5, "squared") == pytest.approx(5 * (b - a))


def test_tree_error_shrinks_as_thresholds_are_added():
    errs = {1: [], 3: [], 15: []}
    for seed in range(2):
        tr, te = simulate("wuliu2011_ex1", 300, seed), simulate("wuliu2011_ex1", 3000, 50 + seed)
        for T in errs:
            m = ProbingClassifier(learner="tree", n_thresholds=T, random_state=seed).fit(tr.X, tr.y)
            errs[T].append(l2_error(m.predict_proba(te.X), te.p))
    e1, e3, e15 = (np.mean(errs[T]) for T in (1, 3, 15))
    assert e15 < e3 < e1
    assert e15 < 0.5 * e1


def test_svm_learner_close_to_weighted_svm_ladder():
    ratios = []
    for seed in range(2):
        tr, te = simulate("wuliu2011_ex1", 200, seed), simulate("wuliu2011_ex1", 3000, 60 + seed)
        sigma = median_between_class_distance(tr.X, tr.y)
        lam = 1 / (2 * 200 * 3.0)
        kern = Kernel("rbf", sigma=sigma)
        lad = fit_ladder(kern(tr.X), np.where(tr.y > 0, 1.0, -1.0), np.arange(1, 20) / 20, lam)
        p = lad.estimate(kern(te.X, tr.X)).p
        m = ProbingClassifier(
            learner="svm", learner_params={"C": 3.0, "gamma": 1 / sigma**2}, n_thresholds=19
        )
        m.fit(tr.X, tr.y)
        ratios.append(
            l2_error(m.predict_proba(te.X), te.p) / l2_error(np.column_stack([1 - p, p]), te.p)
        )
    assert np.mean(ratios) < 1.5


def test_thresholds_intervals_and_report():
    tr = simulate("wang2008_ex1", 150, 1)
    m = ProbingClassifier(learner="logistic", n_thresholds=7, loss="cross_entropy").fit(tr.X, tr.y)
    th = m.thresholds_[0]
    assert th.size == 7 and np.all(np.diff(th) > 0) and th[0] > 0 and th[-1] < 1
    p, lo, hi = m.intervals(tr.X)
    assert np.all((lo <= p) & (p <= hi))
    assert set(np.round(np.unique(lo), 12)) <= set(np.round(np.concatenate([[0], th]), 12))
    cols = m.report(tr.X).columns()
    assert np.allclose(cols["p_1"], p[:, 0])
    assert np.allclose(cols["lo_-1"], 1 - cols["hi_1"])
    # The first threshold of the cross-entropy rule is its minimax point of [0, 1].
    assert m.problems_[0].order[0] == pytest.approx(0.5)


def test_multiclass_one_against_the_rest():
    tr, te = simulate("wu2010_ex1", 300, 2), simulate("wu2010_ex1", 2000, 3)
    m = ProbingClassifier(learner="logistic", n_thresholds=7).fit(tr.X, tr.y)
    assert len(m.problems_) == 2 and list(m.problem_classes_) == [1, 2]
    P = m.predict_proba(te.X)
    assert P.shape == (2000, 3) and np.allclose(P.sum(axis=1), 1) and P.min() >= 0
    prior = np.tile(np.bincount(tr.y - 1, minlength=3) / 300, (2000, 1))
    assert l2_error(P, te.p) < 0.5 * l2_error(prior, te.p)
    lo, hi = m.predict_bracket(te.X)
    assert lo.shape == (2000, 3) and np.all(lo <= hi)
    assert {f"lo_{c}" for c in (1, 2, 3)} <= set(m.report(te.X).columns())


def test_costing_for_learners_without_sample_weight():
    assert not has_fit_parameter(KNeighborsClassifier(), "sample_weight")
    tr, te = simulate("wuliu2011_ex1", 300, 4), simulate("wuliu2011_ex1", 2000, 5)
    m = ProbingClassifier(
        learner=KNeighborsClassifier(n_neighbors=25), n_thresholds=7, n_costing_rounds=5
    ).fit(tr.X, tr.y)
    assert m.costing_
    const = np.tile([0.5, 0.5], (2000, 1))
    assert l2_error(m.predict_proba(te.X), te.p) < 0.3 * l2_error(const, te.p)
    with pytest.raises(InputError, match="sample_weight"):
        ProbingClassifier(learner=KNeighborsClassifier(), costing="never").fit(tr.X, tr.y)


def test_costing_acceptance_follows_the_weights():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(4000, 1))
    y = (rng.random(4000) < 0.5).astype(int)
    w = np.where(y == 1, 1.0, 0.25)
    seen = []

    class Recorder(KNeighborsClassifier):
        def fit(self, X, y):
            seen.append(np.bincount(y, minlength=2))
            return super().fit(X, y)

    _CostingClassifier(Recorder(), n_rounds=3, random_state=0).fit(X, y, sample_weight=w)
    kept = np.sum(seen, axis=0) / 3
    total = np.bincount(y, minlength=2)
    assert kept[1] == total[1]
    assert abs(kept[0] / total[0] - 0.25) < 0.04


def test_learner_names_build_weighted_classifiers():
    for name in LEARNER_NAMES:
        est = make_learner(name, random_state=0)
        assert has_fit_parameter(est, "sample_weight"), name
        assert callable(learner_factory(name))
    assert make_learner("svm", C=7.0).C == 7.0
    with pytest.raises(InputError, match="unknown learner 'knn'"):
        learner_factory("knn")
    with pytest.raises(InputError, match="'learner' parameter.*perceptron"):
        ProbingClassifier(learner="perceptron").fit(np.eye(4), [0, 1, 0, 1])


def test_bad_inputs():
    d = simulate("wuliu2011_ex1", 30, 7)
    with pytest.raises(InputError, match="one class"):
        ProbingClassifier().fit(d.X, np.zeros(30))
    X = d.X.copy()
    X[2, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        ProbingClassifier().fit(X, d.y)
    with pytest.raises(InputError, match="'loss' parameter"):
        ProbingClassifier(loss="hinge").fit(d.X, d.y)
    with pytest.raises(InputError, match="n_thresholds"):
        ProbingClassifier(n_thresholds=0).fit(d.X, d.y)
    with pytest.raises(InputError, match="0 <= a < b <= 1"):
        minimax_point(0.5, 0.5)
