"""Sample weights: row i counts ``sample_weight[i]`` times in every estimator.

Checked three ways (scikit-learn's own sample-weight checks run in
``tests/test_estimator_contract.py``):

* integer weights give the fit on the rows repeated (with tuning off -- fixed lambda and
  sigma -- since the tuning splits split rows, not repeats), for every estimator;
* the weighted fits solve the weighted problem: each weighted SVM of a ladder equals
  scikit-learn's ``SVC`` with the same per-sample bounds (``C S(y_i) w_i``) to libsvm's
  tolerance, for the grid and the exact path;
* weights change the fit (a weighted class pulls the probabilities its way), zero weights
  drop rows, and bad weights are refused with scikit-learn's messages.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from wsvmgui import (
    JointWSVMClassifier,
    MulticlassWeightedSVMClassifier,
    NonCrossingLadderClassifier,
    PreconditionedSVC,
    ProbingClassifier,
    WeightedSVMClassifier,
)
from wsvmgui.errors import InputError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.solvers.kernels import Kernel, median_between_class_distance

FIXED = dict(lam=0.01, sigma=1.0)
# the recalibration's folds split repeated rows apart: the plain estimate is compared
PLAIN = dict(calibration="none", **FIXED)
CASES = {
    "binary path": (WeightedSVMClassifier(**PLAIN), "wuliu2011_ex1"),
    "binary grid": (WeightedSVMClassifier(engine="grid", n_weights=12, **PLAIN), "wuliu2011_ex1"),
    "one-vs-all": (
        MulticlassWeightedSVMClassifier(n_weights=10, calibration="none", **FIXED),
        "wu2010_ex1",
    ),
    "baseline2": (
        MulticlassWeightedSVMClassifier(
            scheme="baseline2", n_weights=10, calibration="none", **FIXED
        ),
        "wu2010_ex1",
    ),
    "preconditioned": (
        PreconditionedSVC(ladder="independent", n_weights=10, pt=0.2, **FIXED),
        "wuliu2011_ex1",
    ),
    "preconditioned non-crossing": (
        PreconditionedSVC(n_weights=6, pt=0.2, **FIXED),
        "wuliu2011_ex1",
    ),
    "non-crossing": (NonCrossingLadderClassifier(n_weights=6, **FIXED), "wuliu2011_ex1"),
    "joint": (JointWSVMClassifier(n_weights=6, **FIXED), "wu2010_ex1"),
    "probing": (ProbingClassifier(n_thresholds=8), "wu2010_ex1"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_integer_weights_equal_repeated_rows(name):
    est, design = CASES[name]
    d = simulate(design, 60, seed=4)
    w = np.random.default_rng(5).integers(0, 4, size=d.y.size)
    w[:3] = [0, 3, 1]  # a zero, a repeat, a single
    rows = np.repeat(np.arange(d.y.size), w)
    test = simulate(design, 50, seed=6).X
    weighted = type(est)(**est.get_params()).fit(d.X, d.y, sample_weight=w)
    repeated = type(est)(**est.get_params()).fit(d.X[rows], d.y[rows])
    np.testing.assert_allclose(
        weighted.predict_proba(test), repeated.predict_proba(test), rtol=0, atol=1e-6
    )
    assert weighted.fit_info_["n_train"] == pytest.approx(rows.size)
    assert pytest.approx(repeated.C_, nan_ok=True) == weighted.C_


def _svc_decisions(K, y, sw, pis, lam):
    """scikit-learn's SVC on the weighted problem: bounds ``C S(y_i) w_i`` with
    ``C = 1 / (2 lam sum w)`` (the weighted mean loss plus ``lam J(f)``)."""
    C = 1.0 / (2.0 * lam * sw.sum())
    out = []
    for pi in pis:
        svc = SVC(kernel="precomputed", C=C, tol=1e-10, class_weight={1: 1 - pi, -1: pi})
        out.append(svc.fit(K, y, sample_weight=sw).decision_function(K))
    return np.column_stack(out)


@pytest.mark.parametrize("engine", ["grid", "path"])
def test_weighted_ladder_solves_the_weighted_svm_of_sklearn(engine):
    """Every weighted SVM of a weighted ladder is scikit-learn's SVC with the same bounds
    (real weights on the grid; the path takes integer weights as repeated rows)."""
    d = simulate("wuliu2011_ex1", 50, seed=7)
    y = np.where(d.y > 0, 1, -1)
    rng = np.random.default_rng(8)
    sw = rng.uniform(0.2, 3.0, y.size) if engine == "grid" else rng.integers(1, 4, y.size)
    pis = np.array([0.2, 0.35, 0.5, 0.65, 0.8])
    lam = 0.005
    est = WeightedSVMClassifier(engine=engine, weights=pis, lam=lam, sigma=1.0)
    est.fit(d.X, d.y, sample_weight=sw)
    assert est.fit_info_["final_engines"] == {engine: 1}
    K = Kernel("rbf", sigma=1.0)(d.X)
    expected = _svc_decisions(K, y, np.asarray(sw, dtype=float), pis, lam)
    # Decision values agree to the fits' KKT tolerance (libsvm stops at a 1e-3 gap).
    np.testing.assert_allclose(est.ladder_decision(d.X), expected, rtol=0, atol=2e-2)
    agree = np.sign(est.ladder_decision(d.X)) == np.sign(expected)
    assert agree[np.abs(expected) > 0.05].all()


def test_real_weights_on_the_path_engine_fit_the_grid_and_say_so():
    d = simulate("wuliu2011_ex1", 40, seed=9)
    sw = np.random.default_rng(1).uniform(0.5, 2.0, d.y.size)
    est = WeightedSVMClassifier(n_weights=8, **FIXED).fit(d.X, d.y, sample_weight=sw)
    assert est.fit_info_["final_engines"] == {"grid": 1}
    assert "integer sample weights" in est.ladder_.switched


def test_a_heavier_class_pulls_the_probabilities_its_way():
    d = simulate("wuliu2011_ex1", 80, seed=10)
    test = simulate("wuliu2011_ex1", 200, seed=11)
    plain = WeightedSVMClassifier(**PLAIN).fit(d.X, d.y)
    heavy = np.where(d.y == d.classes[1], 3, 1)
    pulled = WeightedSVMClassifier(**PLAIN).fit(d.X, d.y, sample_weight=heavy)
    p0, p1 = plain.predict_proba(test.X)[:, 1], pulled.predict_proba(test.X)[:, 1]
    assert np.mean(p1) > np.mean(p0) + 0.05 and np.all(p1 >= p0 - 0.05)


def test_equal_weights_change_nothing():
    d = simulate("wu2010_ex1", 60, seed=12)
    est = MulticlassWeightedSVMClassifier(n_weights=8, **FIXED)
    a = type(est)(**est.get_params()).fit(d.X, d.y)
    b = type(est)(**est.get_params()).fit(d.X, d.y, sample_weight=np.full(d.y.size, 2.5))
    np.testing.assert_array_equal(a.predict_proba(d.X), b.predict_proba(d.X))


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (np.ones(5), "sample_weight"),  # wrong length (scikit-learn's message)
        (-np.ones(40), "Negative"),
        (np.zeros(40), "non-zero"),
        (np.r_[np.zeros(20), np.ones(20)], "class"),  # one class left
    ],
)
def test_bad_weights_are_refused(weights, match):
    d = simulate("wuliu2011_ex1", 40, seed=13)
    order = np.argsort(d.y, kind="stable")
    with pytest.raises(ValueError, match=match):
        WeightedSVMClassifier(**FIXED).fit(d.X[order], d.y[order], sample_weight=weights)


def test_schemes_on_repeats_take_integer_weights_only():
    d = simulate("wuliu2011_ex1", 40, seed=14)
    halves = np.full(40, 0.5) + (d.y > 0)
    with pytest.raises(InputError, match="integer sample weights"):
        NonCrossingLadderClassifier(**FIXED).fit(d.X, d.y, sample_weight=halves)


def test_weighted_sigma_m_is_the_median_of_the_repeated_rows():
    rng = np.random.default_rng(15)
    for _ in range(20):
        X, y = rng.normal(size=(15, 2)), rng.integers(0, 3, 15)
        w = rng.integers(0, 4, 15)
        if np.unique(y[w > 0]).size < 2:
            continue
        rows = np.repeat(np.arange(15), w)
        assert median_between_class_distance(X, y, sample_weight=w) == pytest.approx(
            median_between_class_distance(X[rows], y[rows]), rel=1e-12
        )
