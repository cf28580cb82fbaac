"""Preconditioned SVM (Wu & Liu 2011, section 4)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from wsvmgui.errors import InputError
from wsvmgui.estimators.preconditioned import PreconditionedSVC
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.precondition import check_level, precondition_labels
from wsvmgui.ladder.splits import with_tuning_set


def test_precondition_labels_follows_the_rule():
    y = np.array([1, 1, -1, -1, 1, -1], dtype=float)
    p = np.array([0.05, 0.5, 0.95, 0.5, 0.24, 0.76])
    assert precondition_labels(y, p, 0.0).tolist() == y.tolist()
    assert precondition_labels(y, p, 0.1).tolist() == [-1, 1, 1, -1, 1, -1]
    assert precondition_labels(y, p, 0.25).tolist() == [-1, 1, 1, -1, -1, 1]
    # Points already on the right side never change.
    assert precondition_labels(-np.ones(6), np.zeros(6), 0.4).tolist() == [-1] * 6


@pytest.mark.parametrize("bad", [-0.1, 0.5, 0.7, np.nan, "high", None])
def test_level_out_of_range_raises(bad):
    with pytest.raises(InputError, match=r"\[0, 0.5\)"):
        check_level(bad)


def test_level_zero_is_the_plain_svm_of_scikit_learn():
    d = simulate("wuliu2011_ex6", 80, 1)
    lam, sigma = 0.004, 0.7
    est = PreconditionedSVC(pt=0.0, lam=lam, sigma=sigma, n_weights=10).fit(d.X, d.y)
    C = 1 / (2 * 80 * lam)
    svc = SVC(C=C, gamma=1 / sigma**2, tol=1e-6).fit(d.X, d.y, sample_weight=np.full(80, 0.5))
    te = simulate("wuliu2011_ex6", 500, 2)
    assert np.max(np.abs(est.svm_decision(te.X) - svc.decision_function(te.X))) < 2e-2
    assert np.mean(est.predict(te.X) == svc.predict(te.X)) > 0.99
    assert est.relabeled_.size == 0


def test_planted_outliers_are_relabelled():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(120, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    far = np.flatnonzero(np.abs(X[:, 0]) > 0.6)[:6]
    y[far] *= -1
    est = PreconditionedSVC(pt=0.3, kernel="linear", lam=0.01, n_weights=10).fit(X, y)
    assert set(far) <= set(est.relabeled_.tolist())
    assert est.relabeled_.size <= 12
    # The relabelled labels of the planted points are the clean ones again.
    assert np.all(np.where(est.p_train_[far] > 0.5, 1, -1) == -y[far])


def test_contract_and_level_tuning():
    tr, tu = simulate("wuliu2011_ex2", 100, 4), simulate("wuliu2011_ex2", 100, 5)
    labels = np.where(tr.y > 0, "B", "A")
    X, y, cv = with_tuning_set(tr.X, labels, tu.X, np.where(tu.y > 0, "B", "A"))
    est = PreconditionedSVC(kernel="linear", n_weights=10, pt_grid=(0.0, 0.2, 0.3), cv=cv)
    est.fit(X, y)
    assert est.pt_ in (0.0, 0.2, 0.3)
    assert est.level_errors_[est.pt_] == min(est.level_errors_.values())
    te = simulate("wuliu2011_ex2", 1000, 6)
    P = est.predict_proba(te.X)
    assert np.allclose(P.sum(axis=1), 1)
    pred = est.predict(te.X)
    assert np.array_equal(pred, est.classes_[np.argmax(P, axis=1)])
    # predict is the final SVM's sign, and so is decision_function's.
    assert np.array_equal(pred, np.where(est.svm_decision(te.X) > 0, "B", "A"))
    assert np.array_equal(pred, np.where(est.decision_function(te.X) > 0, "B", "A"))
    cols = est.report(te.X).columns()
    assert np.all(cols["lo_B"] <= cols["p_B"] + 1e-12)
    assert np.all(cols["p_B"] <= cols["hi_B"] + 1e-12)
    assert {"svm_decision", "ladder_p", "lo_A", "hi_A"} <= set(cols)
    # The refit on training plus tuning rows keeps the tuned C of the final SVM.
    assert est.fit_info_["n_train"] == 200 and est.X_train_.shape == (200, 2)


def test_decision_function_ranks_as_predict_proba():
    """decision_function and predict_proba order the points the same way (it did not:
    the SVM's decision values disagree with the ladder's probabilities), ties included."""
    from scipy.stats import rankdata

    tr = simulate("wuliu2011_ex6", 120, 3)
    est = PreconditionedSVC(n_weights=8, lambdas=[0.01, 0.001], sigmas=[0.5, 1.0]).fit(tr.X, tr.y)
    te = simulate("wuliu2011_ex6", 800, 4)
    d, p = est.decision_function(te.X), est.predict_proba(te.X)[:, 1]
    np.testing.assert_array_equal(rankdata(d), rankdata(p))
    # The SVM's own decision values rank differently, which is why they are separate.
    assert not np.array_equal(rankdata(est.svm_decision(te.X)), rankdata(p))


@pytest.mark.parametrize(
    ("design", "kernel", "sigma", "C"),
    [("wuliu2011_ex2", "linear", None, 1.0), ("wuliu2011_ex6", "rbf", 0.7, 10.0)],
)
def test_preconditioning_lowers_test_error_on_average(design, kernel, sigma, C):
    """Reduced Wu & Liu Tables 2 and 6 (5 seeds, fixed lambda and sigma): the better of
    the levels 0.2 and 0.3 has a lower mean test error than the plain SVM."""
    diffs = []
    for seed in range(5):
        tr, tu = simulate(design, 100, seed), simulate(design, 100, 100 + seed)
        te = simulate(design, 4000, 200 + seed)
        X, y, cv = with_tuning_set(tr.X, tr.y, tu.X, tu.y)
        est = PreconditionedSVC(
            kernel=kernel, lam=1 / (2 * 100 * C), sigma=sigma, n_weights=20,
            pt_grid=(0.0, 0.2, 0.3), cv=cv, refit=False,
        )  # fmt: skip
        est.fit(X, y)
        err = {
            pt: np.mean(np.where(est.svm_decision(te.X, pt) > 0, 1, -1) != te.y)
            for pt in est.level_svms_
        }
        diffs.append([err[0.2] - err[0.0], err[0.3] - err[0.0]])
    assert min(np.mean(diffs, axis=0)) < 0


def test_bad_inputs():
    d = simulate("wuliu2011_ex2", 40, 7)
    with pytest.raises(InputError, match="one class"):
        PreconditionedSVC(pt=0.2, lam=0.01, kernel="linear").fit(d.X, np.ones(40))
    X = d.X.copy()
    X[0, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        PreconditionedSVC(pt=0.2, lam=0.01, kernel="linear").fit(X, d.y)
    with pytest.raises(InputError, match=r"'pt' parameter.*\[0.0, 0.5\)"):
        PreconditionedSVC(pt=0.6, lam=0.01, kernel="linear").fit(d.X, d.y)
    with pytest.raises(InputError, match=r"\[0, 0.5\)"):
        PreconditionedSVC(pt_grid=(0.1, 0.7), lam=0.01, kernel="linear").fit(d.X, d.y)
    with pytest.raises(InputError, match="ladder"):
        PreconditionedSVC(pt=0.2, lam=0.01, ladder="bagged").fit(d.X, d.y)
