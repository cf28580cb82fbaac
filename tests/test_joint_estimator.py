"""JointWSVMClassifier: scikit-learn contract, GUI accessors, bad inputs, accuracy."""

import numpy as np
import pytest
from sklearn.base import clone

from wsvmgui.errors import InputError
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import truth_metrics
from wsvmgui.ladder.splits import with_tuning_set


@pytest.fixture(scope="module")
def fitted():
    d = simulate("wu2010_ex1", 90, 5)
    labels = np.array(["a", "b", "c"])[d.y - 1]
    est = JointWSVMClassifier(
        n_weights=8, kernel="linear", lam=1 / (2 * 90 * 3.0), scheme="direct", n_jobs=2
    ).fit(d.X, labels)
    return est, d


def test_sklearn_contract_and_labels_kept(fitted):
    est, d = fitted
    assert list(est.classes_) == ["a", "b", "c"]
    p = est.predict_proba(d.X[:20])
    assert p.shape == (20, 3) and np.all(p > 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.predict(d.X[:20]), est.classes_[p.argmax(axis=1)])
    params = clone(est).get_params()
    assert params["n_weights"] == 8 and params["scheme"] == "direct"
    assert JointWSVMClassifier(**{"n_weights": 10, "scheme": "indirect"}).n_weights == 10
    assert est.kkt_residual_ < 1e-3 and est.grid_.shape == (21, 3)
    assert np.isclose(est.C_, 3.0) and np.isnan(est.sigma_) and est.tuning_ is None


def test_deprecated_names_warn_and_fit_the_same(fitted):
    """N, d_pi and C (the duplicates of n_weights and lam), lam_ and tuning_table_ still
    work, with a FutureWarning each."""
    est, d = fitted
    labels = np.array(["a", "b", "c"])[d.y - 1]
    for old in ({"N": 8, "C": 3.0}, {"d_pi": 0.125, "C": 3.0}):
        with pytest.warns(FutureWarning, match="deprecated") as seen:
            same = JointWSVMClassifier(kernel="linear", scheme="direct", n_jobs=2, **old).fit(
                d.X, labels
            )
        assert len(seen) == 2
        np.testing.assert_allclose(same.predict_proba(d.X), est.predict_proba(d.X), atol=1e-9)
        with pytest.warns(FutureWarning, match="lambda_"):
            assert same.lam_ == same.lambda_ == pytest.approx(est.lambda_)
    with pytest.warns(FutureWarning, match="tuning_.rows"):
        assert est.tuning_table_ == []


def test_gui_accessors_and_report(fitted):
    est, d = fitted
    X = d.X[:15]
    pred = est.grid_predictions(X)
    assert pred.shape == (15, est.grid_.shape[0]) and set(np.unique(pred)) <= {0, 1, 2}
    border = est.border_weights(X)
    np.testing.assert_allclose(border.sum(axis=1), 1.0)
    cells = est.direct_cells(X)
    assert len(cells) == 15
    for c, row in zip(cells, pred, strict=True):
        for cell in c:  # every cell used has K distinct predicted classes
            assert sorted(row[cell]) == [0, 1, 2]
    rep = est.report(X)
    cols = rep.columns()
    for c in ("a", "b", "c"):
        assert f"p_{c}" in cols and f"share_{c}" in cols and f"border_{c}" in cols
    shares = np.column_stack([cols[f"share_{c}"] for c in "abc"])
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    np.testing.assert_allclose(shares, est.class_shares(X))
    found = cols["direct_found"] > 0
    # direct scheme: where a cell exists, p follows the border weight by Proposition 3
    r = 1 / border[found]
    np.testing.assert_allclose(rep.proba[found], r / r.sum(axis=1, keepdims=True), atol=1e-5)


@pytest.mark.parametrize(
    "kwargs,X,y",
    [
        ({}, np.zeros((5, 2)), np.ones(5)),  # one class
        ({}, np.array([[0, 1], [np.nan, 2], [1, 1], [2, 2]]), np.array([1, 2, 3, 1])),
        ({"n_weights": 3}, np.arange(12.0).reshape(6, 2), np.array([1, 2, 3, 1, 2, 3])),
        ({"d_pi": 0.3}, np.arange(12.0).reshape(6, 2), np.array([1, 2, 3, 1, 2, 3])),
        ({"scheme": "bogus"}, np.arange(12.0).reshape(6, 2), np.array([1, 2, 3, 1, 2, 3])),
        ({"truncation": 0.5}, np.arange(12.0).reshape(6, 2), np.array([1, 2, 3, 1, 2, 3])),
    ],
)
@pytest.mark.filterwarnings("ignore:JointWSVMClassifier.*deprecated:FutureWarning")
def test_bad_inputs_raise_input_error(kwargs, X, y):
    with pytest.raises(InputError):
        JointWSVMClassifier(lam=0.01, kernel="linear", **kwargs).fit(X, y)


@pytest.mark.parametrize("refit", [False, True])
def test_tuning_picks_the_best_tuning_likelihood(refit):
    tr = simulate("wu2010_ex1", 80, 11)
    tu = simulate("wu2010_ex1", 80, 12)
    X, y, cv = with_tuning_set(tr.X, tr.y, tu.X, tu.y)
    est = JointWSVMClassifier(
        n_weights=6, kernel="linear", lambdas=[0.05, 0.001], n_jobs=2, cv=cv, refit=refit
    )
    seen = []
    est.fit(X, y, progress=lambda d, t, p: seen.append(t))
    table = est.tuning_.rows()
    G = est.grid_.shape[0]
    assert len(table) == 2 and seen[-1] == (2 + refit) * G
    best = min(table, key=lambda r: r["cross_entropy"])
    assert est.tuning_.best_params["lambda"] == best["lambda"]
    assert est.fit_info_["tuning_edge"] == {"lambda": "max" if best["lambda"] == 0.05 else "min"}
    # The refit on training plus tuning rows keeps the tuned C = 1 / (2 n lambda).
    assert est.lambda_ == pytest.approx(best["lambda"] * (80 / 160 if refit else 1.0))
    assert est.fit_info_["n_train"] == (160 if refit else 80)
    if not refit:  # the model is the one that was scored
        p = est.predict_proba(tu.X)
        ce = -np.mean(np.log(p[np.arange(80), tu.y - 1]))
        assert ce == pytest.approx(best["cross_entropy"])


@pytest.mark.parametrize("seed", range(6))
def test_uncentred_features_fit_as_centred_ones(seed):
    """Features near 100 once made the subproblem QPs miss the KKT tolerance (SolverError
    on most seeds).  The feature map now centres them, an exact reparametrisation: the
    probabilities are those of the centred data."""
    d = simulate("wu2010_ex1", 100, seed)
    te = simulate("wu2010_ex1", 300, 50 + seed)
    kw = dict(n_weights=8, kernel="linear", random_state=seed)
    kw["lambdas"] = [1 / (2 * 70 * 100.0), 1 / (2 * 70 * 3.0)]
    far = JointWSVMClassifier(**kw).fit(d.X + 100.0, d.y)
    near = JointWSVMClassifier(**kw).fit(d.X, d.y)
    assert far.kkt_residual_ < 1e-3
    assert far.lambda_ == near.lambda_
    np.testing.assert_allclose(far.predict_proba(te.X + 100.0), near.predict_proba(te.X), atol=1e-6)


def test_reduced_accuracy_wu2010_ex1():
    """n = 200, d_pi = 0.05 (the paper's Ex.1 uses n = 400, d_pi = 0.02).

    Bound L1 < 0.20, EGKL < 0.10 (the uniform guess 1/3 scores L1 ~ 0.98 here).
    Reasoning: with d_pi = 0.05 the grid alone limits a point with border weight pi~ to
    |p_hat_k - p_k| <= p_k Delta/(1 - Delta), Delta = (4/3)/(20 min_j pi~_j)
    (tests/test_joint_schemes.py), up to about 0.1 in L1 for typical Ex.1 points; the
    paper (Section 5.2, Table 5) reports that accuracy degrades at coarse d_pi and
    levels off below 0.04, and at half the paper's n the estimation error adds about as
    much again.  Measured: L1 ~ 0.11 (both schemes).
    """
    tr = simulate("wu2010_ex1", 200, 21)
    te = simulate("wu2010_ex1", 600, 22)
    uniform = truth_metrics(np.full(te.p.shape, 1 / 3), te.p)
    for scheme in ("indirect", "direct"):
        est = JointWSVMClassifier(
            n_weights=20, kernel="linear", lam=1 / (2 * 200 * 3.0), scheme=scheme, n_jobs=2
        ).fit(tr.X, tr.y)
        m = truth_metrics(est.predict_proba(te.X), te.p)
        assert m["L1"] < 0.20 and m["L1"] < 0.25 * uniform["L1"]
        assert m["EGKL"] < 0.10


@pytest.mark.parametrize("kernel,extra", [("rbf", {"sigma": 1.0}), ("poly", {"degree": 2})])
def test_kernel_fits_classify_and_give_probabilities(kernel, extra):
    tr = simulate("wu2010_ex2", 80, 31)
    te = simulate("wu2010_ex2", 300, 32)
    lam = 1 / (2 * 80 * 3.0)
    est = JointWSVMClassifier(n_weights=6, kernel=kernel, lam=lam, n_jobs=2, **extra)
    est.fit(tr.X, tr.y)
    p = est.predict_proba(te.X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert est.kkt_residual_ < 1e-3
    # better than the uniform guess, and labels better than chance (Bayes rate ~ 0.72)
    uniform = truth_metrics(np.full(te.p.shape, 1 / 3), te.p)["L1"]
    assert truth_metrics(p, te.p)["L1"] < 0.8 * uniform
    assert np.mean(est.predict(te.X) == te.y) > 0.5
