"""``pair_estimate`` of the multiclass estimator (issue 23, acc-mcwide).

``"fold_mean"``: under the pair schemes' tuning each recalibrated pair's map is applied to
the mean of the raw estimates of its cross-fitting fold fits (the ladders the map was
fitted on) instead of to its final ladder's.  Checked against the definition computed
independently (the fold fits captured from the default's own fit, their raw estimates
averaged by hand, mapped by the default's maps and coupled as the default couples), on
where it applies, on invariants and on bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from wsvmgui.estimators.multiclass import PAIR_ESTIMATES, MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder import recalibration as rc
from wsvmgui.ladder.rules import LadderEstimate

#: A 3 x 2 grid keeps the fits cheap (an explicit grid keeps the pair schemes' 3 folds).
GRID = {"lambdas": [1e-3, 1e-2, 1e-1], "sigmas": [0.5, 2.0]}


def _draw(design: str, n: int, seed: int):
    d = simulate(design, n, seed)
    t = simulate(design, 600, 10_000 + seed)
    mu, sd = d.X.mean(axis=0), d.X.std(axis=0)
    return (d.X - mu) / sd, d.y, (t.X - mu) / sd, t.p


def _captured_default(scheme: str, X, y, monkeypatch):
    """The default (``pair_estimate="full"``) fitted with every fold fit of its
    recalibration captured from :func:`wsvmgui.ladder.recalibration.fold_fits`."""
    fits: list = []
    orig = rc.fold_fits

    def capture(*a, **k):
        for item in orig(*a, **k):
            fits.append(item)
            yield item

    monkeypatch.setattr(rc, "fold_fits", capture)
    est = MulticlassWeightedSVMClassifier(scheme=scheme, **GRID).fit(X, y)
    monkeypatch.setattr(rc, "fold_fits", orig)
    return est, fits


@pytest.mark.parametrize(("scheme", "design", "n"), [("pairwise", "wu2010_ex1", 240),
                                                      ("bp1", "zeng_ex4", 300)])  # fmt: skip
def test_fold_mean_is_the_mapped_mean_of_the_fold_fits(scheme, design, n, monkeypatch):
    X, y, Xt, P = _draw(design, n, 1)
    ref, fits = _captured_default(scheme, X, y, monkeypatch)
    est = MulticlassWeightedSVMClassifier(scheme=scheme, pair_estimate="fold_mean", **GRID)
    est.fit(X, y)
    assert est.fit_info_["pair_estimate"] == "fold_mean"
    assert ref.fit_info_["pair_estimate"] == "full"
    # the same tuning, final ladders, maps and tie pairs: only the estimate mapped differs
    n_pairs = len(ref.calibrations_)
    assert [g.name for g in est.calibrations_] == [g.name for g in ref.calibrations_]
    grid = np.linspace(0.01, 0.99, 25)
    for g, h in zip(est.calibrations_, ref.calibrations_, strict=True):
        np.testing.assert_allclose(g(grid), h(grid), rtol=1e-12)
    if scheme == "bp1":
        assert est.tie_pairs_ is not None and ref.tie_pairs_ is not None
        assert [f.spec.name for f in est.tie_pairs_.fitted] == [
            f.spec.name for f in ref.tie_pairs_.fitted
        ]
    # the definition, by hand: each pair's k fold fits, their raw estimates at Xt averaged
    k = len(fits) // n_pairs
    assert k == 3 and len(fits) == 3 * n_pairs
    assert est.fold_subproblems_ is not None
    np.testing.assert_array_equal(est.fold_owner_, np.repeat(np.arange(n_pairs), 3))
    full = ref.subproblems_.estimates(Xt, ref.rule)
    ests = []
    for i, g in enumerate(ref.calibrations_):
        raw = [
            f.ladder.estimate(f.kernel(Xt, X[f.support]), ref.rule).p
            for f, _, _ in fits[i * k : (i + 1) * k]
        ]
        mean = np.mean(raw, axis=0)
        assert np.max(np.abs(mean - full[i].p)) > 1e-3  # the two estimates differ
        ests.append(LadderEstimate(g(mean), g(mean), g(mean), full[i].monotone))
    want = ref._combine(ests, Xt)["proba"]
    got = est.predict_proba(Xt)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(got - ref.predict_proba(Xt))) > 1e-3
    # valid probabilities, and near the truth
    assert np.all(got >= 0)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-9)
    assert np.mean(np.abs(got - P).sum(axis=1)) < 0.35


def test_fold_fits_are_fitted_on_the_other_folds_only():
    X, y, *_ = _draw("wu2010_ex1", 240, 2)
    est = MulticlassWeightedSVMClassifier(scheme="pairwise", pair_estimate="fold_mean", **GRID)
    est.fit(X, y)
    classes = np.unique(y)
    for f, i in zip(est.fold_subproblems_.fitted, est.fold_owner_, strict=True):
        pair = est.subproblems_.fitted[i]
        assert f.spec == pair.spec and f.sigma == pair.sigma
        rows = np.asarray(f.support)
        a, b = classes[f.spec.positive], classes[f.spec.negative[0]]
        assert np.all(np.isin(y[rows], [a, b]))  # the pair's rows only
        # 2 of 3 folds' rows: fewer training rows than the final fit, the same C
        assert f.n_train < pair.n_train
        np.testing.assert_allclose(f.n_train * f.lam, pair.n_train * pair.lam, rtol=1e-9)


@pytest.mark.parametrize(
    "kw", [{"scheme": "ova"}, {"scheme": "pairwise", "calibration": "none"},
           {"scheme": "pairwise", "pair_tuning": "holdout"}],
)  # fmt: skip
def test_no_effect_outside_the_pair_schemes_recalibrated_tuning(kw):
    X, y, Xt, _ = _draw("wu2010_ex2", 150, 0)
    a = MulticlassWeightedSVMClassifier(**kw, **GRID).fit(X, y)
    b = MulticlassWeightedSVMClassifier(pair_estimate="fold_mean", **kw, **GRID).fit(X, y)
    assert b.fold_subproblems_ is None and b.fold_owner_ is None
    np.testing.assert_allclose(a.predict_proba(Xt), b.predict_proba(Xt), atol=1e-12)
    assert b.fit_info_.get("pair_estimate", "full") == "full"


def test_the_default_is_full_and_values():
    assert MulticlassWeightedSVMClassifier().pair_estimate == "full"
    assert PAIR_ESTIMATES == ("full", "fold_mean")


def test_bad_value_names_the_parameter():
    X, y, *_ = _draw("wu2010_ex2", 60, 0)
    with pytest.raises(InvalidParameterError, match="pair_estimate"):
        MulticlassWeightedSVMClassifier(scheme="pairwise", pair_estimate="folds").fit(X, y)
