"""Baseline probability estimators: registry, tuning, contract, accuracy, bad inputs."""

import warnings

import numpy as np
import pytest
from sklearn.svm import SVC

from wsvmgui.errors import InputError
from wsvmgui.evaluation.baselines import BASELINES, _PlattSVC, fit_baseline, param_grid
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import l1_error


@pytest.fixture(scope="module")
def data():
    train = simulate("wu2010_ex1", 150, seed=3)
    test = simulate("wu2010_ex1", 600, seed=4)
    names = np.array(["a", "b", "c"])
    return train.X, names[train.y - 1], test


def test_registry_has_the_required_baselines():
    assert set(BASELINES) == {
        "logistic",
        "lda",
        "tree",
        "random_forest",
        "gradient_boosting",
        "svc_platt",
        "svc_calibrated",
    }
    for desc, factory in BASELINES.values():
        assert isinstance(desc, str) and callable(factory)


@pytest.mark.parametrize("name", list(BASELINES))
def test_each_baseline_is_tuned_fitted_and_beats_the_class_frequencies(data, name):
    X, y, test = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the Platt deprecation stays local
        model = fit_baseline(name, X, y, random_state=0)
        p = model.predict_proba(test.X)
    assert list(model.classes_) == ["a", "b", "c"]
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    tuning = model.baseline_tuning_
    assert len(tuning.params) == len(param_grid(name, X, y)) == tuning.log_loss.size
    assert tuning.best == tuning.params[int(np.argmin(tuning.log_loss))]
    # Three well-separated Gaussian classes: every method must clearly beat the
    # input-free class-frequency predictor (L1 about 0.9 here).
    prior = np.tile(np.unique(y, return_counts=True)[1] / y.size, (test.X.shape[0], 1))
    assert l1_error(p, test.p) < 0.5 * l1_error(prior, test.p)


def test_tuning_set_is_used_and_refit_adds_it(data):
    X, y, test = data
    names = np.array(["a", "b", "c"])
    y_tune = names[test.y - 1]
    m = fit_baseline("logistic", X, y, test.X, y_tune, refit=False)
    m2 = fit_baseline("logistic", X, y, test.X, y_tune, refit=True)
    assert m.baseline_tuning_.best == m2.baseline_tuning_.best
    coef = m.named_steps["logisticregression"].coef_
    coef2 = m2.named_steps["logisticregression"].coef_
    assert not np.allclose(coef, coef2)


@pytest.mark.skipif("probability" not in SVC().get_params(), reason="SVC(probability=True) is gone")
@pytest.mark.parametrize("design", ["wu2010_ex1", "wuliu2011_ex1"])
def test_platt_svm_is_comparable_to_libsvm_platt(design):
    """The baseline rebuilds SVC(probability=True) (libsvm's pairwise Platt sigmoids on
    5-fold decision values, coupled) from public parts, since scikit-learn 1.11 removes
    it.  Their folds differ, so the probabilities differ a little: both are about as far
    from the truth, and close to each other."""
    train = simulate(design, 200, seed=1)
    test = simulate(design, 1500, seed=2)
    ours = _PlattSVC(C=3.0, gamma=1.0, random_state=0).fit(train.X, train.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SVC(C=3.0, gamma=1.0, probability=True, random_state=0).fit(train.X, train.y)
        p_ref = ref.predict_proba(test.X)
    p = ours.predict_proba(test.X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.mean(np.abs(p - p_ref)) < 0.03
    assert abs(l1_error(p, test.p) - l1_error(p_ref, test.p)) < 0.03
    # Same classes in the same column order, and the SVMs' decisions underneath agree.
    assert np.mean(ours.predict(test.X) == ref.predict(test.X)) > 0.95


def test_bad_inputs(data):
    X, y, _ = data
    with pytest.raises(InputError, match="unknown baseline"):
        fit_baseline("nope", X, y)
    X_nan = X.copy()
    X_nan[2, 0] = np.nan
    with pytest.raises(InputError, match="row 3"):
        fit_baseline("lda", X_nan, y)
    with pytest.raises(InputError, match="one class"):
        fit_baseline("lda", X, np.full(y.size, "a"))
    with pytest.raises(InputError, match="not a training class"):
        fit_baseline("lda", X, y, X[:10], np.full(10, "z"))
