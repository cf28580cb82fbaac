"""The divide-and-conquer estimator: K = 2 agreement, contract, accuracy, bad inputs."""

import numpy as np
import pytest

from wsvmgui.errors import Cancelled, InputError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.multiclass import SCHEME_INFO, SCHEMES, MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import l1_error
from wsvmgui.ladder.search import EGKL_FLOOR
from wsvmgui.ladder.splits import TuningWarning, with_tuning_set
from wsvmgui.multiclass import coupling
from wsvmgui.multiclass.baseline_choice import largest_class, median_distance_class

SMALL = dict(lambdas=[1e-2, 1e-3], sigmas=[0.6, 1.2], n_weights=8)


@pytest.fixture(scope="module")
def binary_data():
    return simulate("wuliu2011_ex1", 90, seed=4), simulate("wuliu2011_ex1", 300, seed=5)


@pytest.fixture(scope="module")
def three_class():
    d = simulate("wu2010_ex1", 150, seed=7)
    names = np.array(["cat", "dog", "emu"])
    return d.X, names[d.y - 1], simulate("wu2010_ex1", 200, seed=8)


def test_scheme_info_lists_every_scheme():
    assert set(SCHEME_INFO) == {"pairwise", "baseline1", "baseline2", "bp1", "bp2", "ova"}
    assert all(isinstance(v, str) and v for v in SCHEME_INFO.values())


@pytest.mark.parametrize("scheme", SCHEMES)
def test_two_classes_agree_with_the_binary_engine(binary_data, scheme):
    # Default sigma grid and weight grid; two lambdas (all defaults for One-vs-All).
    train, test = binary_data
    kw = {} if scheme == "ova" else {"lambdas": [3e-3, 3e-4]}
    # auto: 5-fold; the multiclass searches take the smallest score
    ref = WeightedSVMClassifier(random_state=3, calibration="none", tuning_rule="min", **kw)
    ref.fit(train.X, train.y)
    est = MulticlassWeightedSVMClassifier(
        scheme=scheme, random_state=3, n_jobs=2, cv=5, calibration="none", **kw
    )  # the binary ladder's plain estimate
    est.fit(train.X, train.y)
    np.testing.assert_allclose(est.predict_proba(test.X), ref.predict_proba(test.X), atol=1e-9)
    np.testing.assert_array_equal(est.predict(test.X), ref.predict(test.X))
    fitted = est.subproblems_.fitted
    assert fitted[-1].lam == ref.lambda_ and fitted[-1].sigma == ref.sigma_
    if scheme == "ova":  # the ladder of class +1 against the rest is the binary ladder
        np.testing.assert_array_equal(est.raw_ova(test.X)[:, 1], ref.estimate(test.X).p)


def test_two_classes_agree_with_a_tuning_set(binary_data):
    train, test = binary_data
    tune = simulate("wuliu2011_ex1", 60, seed=6)
    X, y, cv = with_tuning_set(train.X, train.y, tune.X, tune.y)
    kw = dict(lambdas=[1e-2, 1e-3], sigmas=[0.5, 1.0, 2.0], cv=cv)
    # on one split the multiclass search takes the smallest score; the binary "auto" would
    # take the widest one-SE cell
    ref = WeightedSVMClassifier(calibration="none", tuning_rule="min", **kw).fit(X, y)
    est = MulticlassWeightedSVMClassifier(scheme="bp2", calibration="none", **kw).fit(X, y)
    np.testing.assert_allclose(est.predict_proba(test.X), ref.predict_proba(test.X), atol=1e-9)
    assert est.subproblems_.fitted[0].lam == ref.lambda_


def test_two_classes_agree_without_refit_and_with_the_extreme_rule(binary_data):
    train, test = binary_data
    kw = dict(random_state=1, refit=False, rule="extreme", cv=0.4, lambdas=[1e-2, 1e-3])
    ref = WeightedSVMClassifier(calibration="none", tuning_rule="min", **kw)
    ref.fit(train.X, train.y)
    est = MulticlassWeightedSVMClassifier(scheme="pairwise", calibration="none", **kw)
    est.fit(train.X, train.y)
    np.testing.assert_allclose(est.predict_proba(test.X), ref.predict_proba(test.X), atol=1e-9)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_rows_sum_to_one_and_string_labels_are_kept(three_class, scheme):
    X, y, test = three_class
    est = MulticlassWeightedSVMClassifier(scheme=scheme, n_jobs=1, **SMALL).fit(X, y)
    assert list(est.classes_) == ["cat", "dog", "emu"]
    p = est.predict_proba(test.X)
    assert p.shape == (200, 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert set(est.predict(test.X)) <= {"cat", "dog", "emu"}
    rep = est.report(test.X)
    np.testing.assert_array_equal(rep.label, est.predict(test.X))
    views = est.subproblem_ladders(test.X[:10])
    n_sub = {"pairwise": 3, "ova": 3}.get(scheme, 2)
    assert len(views) == n_sub
    for v in views:
        assert v.signs.shape == (10, v.weights.size) and v.signs.dtype == bool
        assert np.all(v.lo <= v.hi)
        assert f"lo_{v.label}" in rep.extra and f"hi_{v.label}" in rep.extra
    if scheme == "ova":
        assert {"raw_cat", "raw_dog", "raw_emu"} <= set(rep.extra)
    if scheme in ("pairwise", "bp1", "bp2"):
        votes = est.predict_vote(test.X)
        np.testing.assert_array_equal(rep.extra["vote_label"], votes)
    else:
        with pytest.raises(InputError):
            est.predict_vote(test.X)


def test_bp_probabilities_equal_baseline_and_derive_from_the_pairwise_fit(three_class):
    X, y, test = three_class
    # ties="key": the baseline pairs alone (ties="pairs" is checked in test_multiclass_ties)
    fits = {
        s: MulticlassWeightedSVMClassifier(
            scheme=s, n_jobs=2, **SMALL, **({} if s == "pairwise" else {"ties": "key"})
        ).fit(X, y)
        for s in ("pairwise", "baseline1", "bp1", "baseline2")
    }
    np.testing.assert_allclose(
        fits["bp1"].predict_proba(test.X), fits["baseline1"].predict_proba(test.X), atol=1e-12
    )
    # The baseline schemes' sub-problems are the pairwise scheme's pairs against k*.
    codes = np.searchsorted(fits["pairwise"].classes_, y)
    Q = fits["pairwise"].pairwise_table(test.X)
    for scheme, k in (
        ("baseline1", largest_class(codes, 3)),
        ("baseline2", median_distance_class(X, codes, 3)),
    ):
        assert fits[scheme].baseline_index_ == k
        np.testing.assert_allclose(
            fits[scheme].predict_proba(test.X),
            coupling.couple_baseline(coupling.saturate(Q[:, :, k], EGKL_FLOOR), k),
            atol=1e-12,
        )


def test_parallel_fit_equals_serial_fit(three_class):
    X, y, test = three_class
    a = MulticlassWeightedSVMClassifier(scheme="pairwise", n_jobs=1, **SMALL).fit(X, y)
    b = MulticlassWeightedSVMClassifier(scheme="pairwise", n_jobs=3, **SMALL).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(test.X), b.predict_proba(test.X))


def test_progress_reaches_the_total_and_cancellation_stops_between_fits(three_class):
    X, y, _ = three_class
    seen = []
    est = MulticlassWeightedSVMClassifier(scheme="ova", n_jobs=2, calibration="none", **SMALL)
    est.fit(X, y, progress=lambda done, total, _p: seen.append((done, total)))
    # Without recalibration (its cross-fits add to both):
    # 3 ladders x (2 lambdas x 2 sigmas + 1 final) x 7 weights.
    assert seen[-1] == (3 * 5 * 7, 3 * 5 * 7) == (est.fit_info_["n_fits"], seen[-1][1])
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 20

    with pytest.raises(Cancelled):
        MulticlassWeightedSVMClassifier(scheme="pairwise", n_jobs=2, **SMALL).fit(
            X, y, should_cancel=stop
        )


def test_tuning_set_is_used_and_checked(three_class):
    X, y, test = three_class
    names = np.array(["cat", "dog", "emu"])
    y_tune = names[test.y - 1]
    X_all, y_all, cv = with_tuning_set(X, y, test.X, y_tune)
    est = MulticlassWeightedSVMClassifier(scheme="ova", n_jobs=2, cv=cv, **SMALL)
    est.fit(X_all, y_all)
    assert est.fit_info_["n_train"] == X.shape[0] + test.X.shape[0]
    with pytest.raises(InputError, match="not a training class"):
        with_tuning_set(X, y, test.X, np.where(y_tune == "cat", "cow", y_tune))
    # A tuning set without one class cannot tune the sub-problems that involve it.
    keep = y_tune != "emu"
    X_all, y_all, cv = with_tuning_set(X, y, test.X[keep], y_tune[keep])
    with pytest.raises(InputError, match="sub-problem emu.*only one of its classes"):
        MulticlassWeightedSVMClassifier(scheme="pairwise", cv=cv, **SMALL).fit(X_all, y_all)


def test_bad_inputs_raise_input_error(three_class):
    X, y, _ = three_class
    est = MulticlassWeightedSVMClassifier(scheme="pairwise", **SMALL)
    with pytest.raises(InputError, match="one class"):
        est.fit(X, np.full(len(y), "cat"))
    y_few = y.copy()
    y_few[0] = "yak"  # a class with a single point cannot be split for tuning: no tuning
    with (
        pytest.warns(TuningWarning, match="'yak' has only 1 point.*no tuning"),
        pytest.warns(TuningWarning, match="no recalibration"),
    ):
        est.fit(X, y_few)
    assert est.tuning_ is None and "yak" in est.classes_ and est.calibrations_ is None
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)
    X_nan = X.copy()
    X_nan[5, 1] = np.nan
    with pytest.raises(InputError, match="row 6"):
        est.fit(X_nan, y)
    with pytest.raises(InputError, match="scheme"):
        MulticlassWeightedSVMClassifier(scheme="nope").fit(X, y)
    with pytest.raises(InputError, match="rule"):
        MulticlassWeightedSVMClassifier(rule="nope").fit(X, y)
    fitted = MulticlassWeightedSVMClassifier(scheme="ova", **SMALL).fit(X, y)
    with pytest.raises(InputError):
        fitted.predict_proba(X_nan)


def test_reduced_accuracy_on_zeng_example_3():
    """OVA and P-SVM on Zeng's Example 3 with 600 labelled points, against the true p.

    Bounds: the class-frequency predictor (no inputs) has L1 about 1.28 here; the paper
    reports 0.152 (OVA) and 0.189 (P-SVM) with 500 training plus 500 tuning points, and
    our full reproduction (benchmarks/results/zeng_reproduction.md) about 0.18 and 0.22.
    With 420 training and 180 tuning points, a 3 x 3 grid and M = 20 the bounds 0.25 (OVA) and
    0.31 (P-SVM) leave room for the smaller sample (L1 grows roughly like n^(-1/3)) and
    one seed, and still fail for an estimator that ignores the inputs, couples wrongly or
    mixes up the class columns (each of which costs well over 0.3).
    """
    bound = {"ova": 0.25, "pairwise": 0.31}
    train = simulate("zeng_ex3", 600, seed=11)
    test = simulate("zeng_ex3", 2000, seed=12)
    prior = np.bincount(train.y - 1, minlength=5) / train.y.size
    l1_prior = l1_error(np.tile(prior, (2000, 1)), test.p)
    assert l1_prior > 0.8
    # A 3 x 3 grid around the cells the full grid picks on this design (C 3..100 on the
    # sub-problem's size, sigma 0.5..1.25 sigma_M) keeps the test fast.
    sig = 5.4 * np.array([0.5, 0.75, 1.25])
    for scheme in ("ova", "pairwise"):
        n_sub = 420 if scheme == "ova" else 170
        lambdas = 1.0 / (2 * n_sub * np.array([3.0, 30.0, 100.0]))
        est = MulticlassWeightedSVMClassifier(
            scheme=scheme, n_jobs=2, random_state=0, lambdas=lambdas, sigmas=sig, n_weights=20
        )
        p = est.fit(train.X, train.y).predict_proba(test.X)
        assert l1_error(p, test.p) < bound[scheme] < 0.25 * l1_prior, scheme


def test_least_squares_coupling_of_the_pairwise_table(three_class):
    """``coupling="least_squares"`` couples P-SVM's own table by Wu, Lin & Weng's method
    (the same fitted pairs as the papers' coupling), and on wu2010_ex1 (n = 150) it is no
    further from the truth than the papers' coupling: 6 of 6 draws of the diagnosis
    (benchmarks/results/multiclass_diagnosis.json, n = 100 and 400) had it 0-6% closer."""
    X, y, test = three_class
    base = MulticlassWeightedSVMClassifier(
        scheme="pairwise", coupling="baseline", random_state=0, **SMALL
    ).fit(X, y)
    ls = MulticlassWeightedSVMClassifier(
        scheme="pairwise", coupling="least_squares", random_state=0, **SMALL
    ).fit(X, y)
    Q = base.pairwise_table(test.X)
    np.testing.assert_allclose(ls.pairwise_table(test.X), Q)  # the same pairs
    P = ls.predict_proba(test.X)
    np.testing.assert_allclose(P, coupling.couple_least_squares(Q), atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    l1_ls, l1_base = l1_error(P, test.p), l1_error(base.predict_proba(test.X), test.p)
    assert abs(P - base.predict_proba(test.X)).max() > 1e-3  # the option does something
    assert l1_ls <= 1.02 * l1_base < 0.6, (l1_ls, l1_base)
    # The baseline schemes' rebuilt tables are consistent: without the table of tie pairs
    # (ties="pairs" shares the contest by the tie pairs alone) the option changes nothing.
    b = [
        MulticlassWeightedSVMClassifier(
            scheme="bp1", coupling=c, ties="pairs", random_state=0, **SMALL
        )
        .fit(X, y)
        .predict_proba(test.X)
        for c in ("baseline", "least_squares")
    ]
    np.testing.assert_allclose(b[0], b[1])
