"""WeightedSVMClassifier: scikit-learn's estimator contract and the project's own."""

from __future__ import annotations

import joblib
import numpy as np
import pytest
from sklearn.base import clone

from wsvmgui.errors import Cancelled, InputError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.report import ProbabilityReport
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.splits import with_tuning_set


# ------------------------------------------------------------------ the contract
@pytest.fixture(scope="module")
def data():
    tr = simulate("wuliu2011_ex1", 120, seed=5)
    te = simulate("wuliu2011_ex1", 300, seed=6)
    return tr.X, tr.y, te.X


@pytest.fixture(scope="module")
def fixed_fit(data):
    X, y, _ = data
    return WeightedSVMClassifier(
        engine="grid", n_weights=8, lam=0.005, sigma=1.0, calibration="none"
    ).fit(X, y)


def test_predict_proba_rows_sum_to_one_and_predict_is_argmax(fixed_fit, data):
    _, _, Xt = data
    P = fixed_fit.predict_proba(Xt)
    assert P.shape == (300, 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(P >= 1 / 16 - 1e-12) and np.all(P <= 1 - 1 / 16 + 1e-12)
    np.testing.assert_array_equal(fixed_fit.predict(Xt), fixed_fit.classes_[P.argmax(axis=1)])
    lo, hi = fixed_fit.predict_bracket(Xt)
    assert lo.shape == hi.shape == (300, 2)
    assert np.all(lo <= P) and np.all(hi >= P)
    np.testing.assert_allclose(lo[:, 0], 1 - hi[:, 1])


def test_fixed_parameters_skip_tuning(fixed_fit):
    assert fixed_fit.tuning_ is None
    assert fixed_fit.lambda_ == 0.005 and fixed_fit.sigma_ == 1.0
    assert fixed_fit.fit_info_["n_fits"] == 7  # just the M - 1 ladder fits
    assert fixed_fit.fit_info_["n_train"] == 120
    assert fixed_fit.fit_info_["max_kkt_residual"] <= 1e-2


def test_estimate_is_the_ladder_read_by_its_rule(fixed_fit, data):
    from wsvmgui.ladder.rules import probabilities_from_signs

    _, _, Xt = data
    est = fixed_fit.estimate(Xt)
    signs = fixed_fit.ladder_signs(Xt)
    assert signs.shape == (300, 7)
    np.testing.assert_array_equal(
        est.p, probabilities_from_signs(signs, fixed_fit.weights_, "count").p
    )


def test_string_labels_kept(data):
    X, y, Xt = data
    labels = np.where(y > 0, "spam", "ham")
    est = WeightedSVMClassifier(n_weights=6, lam=0.005, sigma=1.0).fit(X, labels)
    assert list(est.classes_) == ["ham", "spam"]
    assert set(est.predict(Xt)) <= {"ham", "spam"}
    ref = WeightedSVMClassifier(n_weights=6, lam=0.005, sigma=1.0).fit(X, y)
    np.testing.assert_allclose(est.predict_proba(Xt), ref.predict_proba(Xt))
    rep = est.report(Xt[:5])
    assert isinstance(rep, ProbabilityReport)
    cols = rep.columns()
    assert {"label", "p_ham", "p_spam", "lo_spam", "hi_spam", "lo_ham", "hi_ham"} <= set(cols)
    np.testing.assert_allclose(cols["lo_ham"], 1 - cols["hi_spam"])
    np.testing.assert_array_equal(cols["label"], est.predict(Xt[:5]))


def test_joblib_round_trip_predicts_identically(fixed_fit, data, tmp_path, monkeypatch):
    _, _, Xt = data
    path = tmp_path / "model.joblib"
    joblib.dump(fixed_fit, path)
    # Loading must not refit: make any ladder fit explode.
    from wsvmgui.ladder import grid

    def no_fit(*args, **kwargs):
        raise AssertionError("refit after loading")

    monkeypatch.setattr(grid, "solve_weighted_svm", no_fit)
    loaded = joblib.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(Xt), fixed_fit.predict_proba(Xt))
    np.testing.assert_array_equal(loaded.predict(Xt), fixed_fit.predict(Xt))


@pytest.fixture(scope="module")
def small_grid():
    # the ladder's own fits (the recalibration's cross-fits are counted in test_recalibration),
    # chosen by the smallest score (the default's widest-kernel rule: test_tuning_rule_auto)
    return {
        "n_weights": 6, "lambdas": [0.02, 0.002], "sigmas": [0.7, 1.4], "calibration": "none",
        "tuning_rule": "min",
    }  # fmt: skip


def test_refit_true_and_false(data, small_grid):
    X, y, Xt = data
    a = WeightedSVMClassifier(**small_grid, cv=0.3, refit=True, random_state=1)
    b = WeightedSVMClassifier(**small_grid, cv=0.3, refit=False, random_state=1)
    a.fit(X, y)
    b.fit(X, y)
    assert a.fit_info_["n_train"] == 120
    assert b.fit_info_["n_train"] == 84  # 70 % of 120 after the stratified split
    assert a.tuning_ is not None and b.tuning_ is not None
    np.testing.assert_array_equal(a.tuning_.egkl, b.tuning_.egkl)
    assert a.sigma_ == b.sigma_ == a.tuning_.best_sigma
    # The training-only fit keeps the tuned lambda; the refit keeps the tuned
    # C = 1 / (2 n lambda), so its lambda shrinks by 84 / 120.
    assert b.lambda_ == b.tuning_.best_lambda
    assert a.lambda_ == pytest.approx(a.tuning_.best_lambda * 84 / 120)
    # Progress counts every fit: 2 x 2 cells of 5 weights, then the final ladder.
    assert a.fit_info_["n_fits"] == 4 * 5 + 5


def test_cross_validated_tuning(data, small_grid):
    """cv=k scores every training point once over k folds and fits the final model on all."""
    X, y, Xt = data
    est = WeightedSVMClassifier(**small_grid, cv=4, random_state=1)
    calls = []
    est.fit(X, y, progress=lambda d, t, p: calls.append((d, t)))
    assert est.fit_info_["n_train"] == 120
    assert calls[-1][0] == calls[-1][1] == 4 * 4 * 5 + 5  # 4 folds x 4 cells x 5 + final
    best = np.unravel_index(np.argmin(est.tuning_.egkl), est.tuning_.egkl.shape)
    assert est.tuning_.best_lambda == est.tuning_.lambdas[best[0]]
    # Folds train on 90 points: the final fit on 120 keeps C, so lambda scales by 90/120.
    assert est.lambda_ == pytest.approx(est.tuning_.best_lambda * 90 / 120)
    # The default "auto" is 5-fold CV at this size: the same folds as cv=5.
    auto = WeightedSVMClassifier(**small_grid, random_state=1).fit(X, y)
    five = WeightedSVMClassifier(**small_grid, cv=5, random_state=1).fit(X, y)
    np.testing.assert_array_equal(auto.tuning_.egkl, five.tuning_.egkl)
    with pytest.raises(InputError, match="'cv' parameter"):
        WeightedSVMClassifier(**small_grid, cv="bogus").fit(X, y)


def test_tuning_set_given(data, small_grid):
    X, y, Xt = data
    tune = simulate("wuliu2011_ex1", 60, seed=7)
    calls = []
    X_all, y_all, cv = with_tuning_set(X, y, tune.X, tune.y)
    est = WeightedSVMClassifier(**small_grid, cv=cv, refit=False).fit(
        X_all, y_all, progress=lambda d, t, p: calls.append((d, t))
    )
    assert est.fit_info_["n_train"] == 120  # the whole training set; no split
    best = np.unravel_index(np.argmin(est.tuning_.egkl), est.tuning_.egkl.shape)
    assert est.lambda_ == est.tuning_.lambdas[best[0]]
    assert est.sigma_ == est.tuning_.sigmas[best[1]]
    assert calls[-1][0] == calls[-1][1] == est.fit_info_["n_fits"] == 25
    # The tuning score of the chosen cell is the EGKL of the refit=False model itself.
    p = est.predict_proba(tune.X)[:, 1]
    egkl = -np.mean(np.where(tune.y > 0, np.log(p), np.log(1 - p)))
    assert est.tuning_.egkl[best] == pytest.approx(egkl)
    with pytest.raises(InputError, match="different lengths"):
        with_tuning_set(X, y, tune.X, tune.y[:10])
    with pytest.raises(InputError, match="not a training class"):
        with_tuning_set(X, y, tune.X, tune.y * 5)


def test_determinism_given_random_state(data, small_grid):
    X, y, Xt = data
    a = WeightedSVMClassifier(**small_grid, random_state=3).fit(X, y).predict_proba(Xt)
    b = WeightedSVMClassifier(**small_grid, random_state=3).fit(X, y).predict_proba(Xt)
    np.testing.assert_array_equal(a, b)


def test_extreme_and_count_agree_when_signs_monotone(fixed_fit, data):
    _, _, Xt = data
    ext = clone(fixed_fit).set_params(rule="extreme")
    ext.fit(*data[:2])
    mono = fixed_fit.estimate(Xt).monotone
    assert mono.mean() > 0.5
    np.testing.assert_array_equal(ext.predict_proba(Xt)[mono], fixed_fit.predict_proba(Xt)[mono])


def test_progress_and_cancel(data, small_grid):
    X, y, _ = data
    calls = []
    est = WeightedSVMClassifier(**small_grid, cv=0.3).fit(
        X, y, progress=lambda d, t, p: calls.append((d, t))
    )
    assert [d for d, _ in calls] == list(range(1, len(calls) + 1))
    assert calls[-1] == (25, 25) == (est.fit_info_["n_fits"],) * 2
    seen = []
    with pytest.raises(Cancelled):
        WeightedSVMClassifier(**small_grid).fit(
            X, y, progress=lambda d, t, p: seen.append(d), should_cancel=lambda: len(seen) >= 3
        )
    assert len(seen) == 3


@pytest.mark.parametrize(
    "params",
    [
        {"rule": "median"},
        {"solver": "magic"},
        {"lam": -1.0},
        {"sigma": 0.0},
        {"n_weights": 1},
        {"weights": [0.5, 0.2]},
        {"tuning_extend": -1},
        {"tuning_extend": 1.5},
    ],
)
def test_bad_parameters_raise_input_error(data, params):
    X, y, _ = data
    with pytest.raises(InputError):
        WeightedSVMClassifier(**{"lam": 0.01, "sigma": 1.0, **params}).fit(X, y)


def test_bad_data_raise_input_error(data):
    X, y, _ = data
    est = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=4)
    with pytest.raises(InputError, match="one class"):
        est.fit(X, np.ones(120))
    with pytest.raises(InputError, match="Only binary"):
        est.fit(X, np.arange(120) % 3)
    Xn = X.copy()
    Xn[7, 1] = np.nan
    with pytest.raises(InputError, match=r"column 2.*row 8"):
        est.fit(Xn, y)


def test_a_best_cell_past_the_sigma_grid_is_reached_by_extending_it():
    # wuliu2011_ex1's p is logistic in x1 + x2: near-linear, so the tuned width is wide;
    # a grid of narrow widths puts the best cell past its largest sigma
    d = simulate("wuliu2011_ex1", n=200, seed=1)
    test = simulate("wuliu2011_ex1", n=4000, seed=99)
    fits = {}
    for rounds in (0, 2, 6):
        est = WeightedSVMClassifier(
            sigmas=[0.3, 0.45], tuning_extend=rounds, n_weights=20, tuning_rule="min"
        )
        est.fit(d.X, d.y)
        l1 = np.abs(est.predict_proba(test.X) - test.p).sum(axis=1).mean()
        fits[rounds] = (est, l1)
    plain, l1_plain = fits[0]
    assert plain.fit_info_["tuning_edge"].get("sigma") == "max"
    assert plain.fit_info_["tuning_extended"] == {} and plain.tuning_.sigmas.size == 2
    two, l1_two = fits[2]
    # the bound: two rounds, one sigma each, the grid's ratio 1.5 continued
    np.testing.assert_allclose(two.fit_info_["tuning_extended"]["sigma"], [0.675, 1.0125])
    np.testing.assert_allclose(two.tuning_.sigmas, [0.3, 0.45, 0.675, 1.0125])
    assert two.fit_info_["tuning_edge"].get("sigma") == "max"  # still on the (grown) edge
    assert two.sigma_ == pytest.approx(1.0125)
    assert two.tuning_.best_score < plain.tuning_.best_score
    assert l1_two < l1_plain - 0.01  # closer to the true probabilities
    # with room, it stops where the best width is inside the grown grid
    far, l1_far = fits[6]
    grown = far.fit_info_["tuning_extended"]["sigma"]
    assert 2 <= len(grown) < 6 and "sigma" not in far.fit_info_["tuning_edge"]
    assert far.tuning_.best_score <= two.tuning_.best_score and l1_far < l1_plain
