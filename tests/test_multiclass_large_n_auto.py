"""``large_n_auto`` of the multiclass estimator (issue 23, acc-mc2000).

Above :data:`PAIR_AUTO_ONE_SE_MAX_ROWS` rows the pair schemes' ``tuning_rule="auto"`` and
``calibration="auto"`` are, under ``"widest_spline"`` (the default), the widest cell within
half a standard error and the sigmoid map or the spline where the guarded cross-validated
choice takes it; ``"min_sigmoid"`` keeps the smallest EGKL and the sigmoid map.  Up to the
limit both values fit the same.
Checked on the rule's definition (the tuning tables, the constants it stands for), on the
probabilities' invariants, against the default on the same draws, and on bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import wsvmgui.estimators.multiclass as mc
from wsvmgui.estimators._ladder import TuningPlan
from wsvmgui.estimators.multiclass import (
    PAIR_AUTO_ONE_SE_MAX_ROWS,
    PAIR_AUTO_SE_MULTIPLE,
    MulticlassWeightedSVMClassifier,
)
from wsvmgui.evaluation.designs import simulate
from wsvmgui.solvers.kernels import Kernel


def _plan(n_rows: int, n_folds: int = 3) -> TuningPlan:
    rows = np.arange(n_rows)
    folds = [(rows[rows % n_folds != k], rows[rows % n_folds == k]) for k in range(n_folds)]
    return TuningPlan(folds, rows, Kernel("rbf"), np.array([1.0]))


def _pairs(m: int, curved: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """m cross-fitted estimates and labels whose true map is a sigmoid of the estimate's
    logit, or (``curved``) a step: flat at 0.2 below 1/2, at 0.9 above."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, m)
    truth = np.where(p > 0.5, 0.9, 0.2) if curved else 1 / (1 + np.exp(-1.5 * np.log(p / (1 - p))))
    return p, (rng.uniform(size=m) < truth).astype(float)


@pytest.mark.parametrize("value", ["min_sigmoid", "widest_spline"])
def test_up_to_the_limit_both_values_choose_alike(value):
    est = MulticlassWeightedSVMClassifier(scheme="bp1", large_n_auto=value)
    est.classes_ = np.arange(5)
    small, large = _plan(PAIR_AUTO_ONE_SE_MAX_ROWS), _plan(PAIR_AUTO_ONE_SE_MAX_ROWS + 1)
    widest = value == "widest_spline"
    assert est._auto_one_se(small) == "widest"
    assert est._auto_one_se(large) == ("widest" if widest else False)
    # the map: the sigmoid, but for a step-shaped distortion on many pairs above the limit
    step, line = _pairs(1500, curved=True), _pairs(1500, curved=False)
    assert est._pair_map(small, *step).name == "sigmoid"
    assert est._pair_map(large, *step).name == ("spline" if widest else "sigmoid")
    assert est._pair_map(large, *line).name == "sigmoid"
    assert est._pair_map(large, *_pairs(400, curved=True)).name == "sigmoid"  # no guard
    # an explicit map, One-vs-All and two classes are not the pair schemes' "auto"
    assert est.set_params(calibration="isotonic")._pair_map(large, *step).name == "isotonic"
    est.set_params(calibration="auto", scheme="ova")
    assert est._auto_one_se(large) is False
    assert est._pair_map(large, *step).name in ("isotonic", "spline")  # the binary choice
    est.set_params(scheme="pairwise")
    est.classes_ = np.arange(2)
    assert est._auto_one_se(large) is False


def test_the_default_is_widest_spline():
    assert MulticlassWeightedSVMClassifier().large_n_auto == "widest_spline"


def test_up_to_the_limit_the_fit_is_the_defaults():
    d = simulate("zeng_ex4", 200, 1)
    fits = [
        MulticlassWeightedSVMClassifier(scheme="bp1", large_n_auto=v).fit(d.X, d.y)
        for v in ("min_sigmoid", "widest_spline")
    ]
    t = simulate("zeng_ex4", 500, 10_001)
    np.testing.assert_allclose(fits[0].predict_proba(t.X), fits[1].predict_proba(t.X), atol=1e-12)
    assert all("large_n_auto" not in f.fit_info_ for f in fits)


@pytest.fixture(scope="module")
def large_fits():
    """wu2010_ex2 (K = 3, pairwise), 1050 rows: above the limit.  A 3 x 3 grid keeps it
    cheap (an explicit grid keeps the pair schemes' 3 folds).  On this draw two pairs'
    widest half-SE cells are not their minimum and one pair's map is the spline."""
    d = simulate("wu2010_ex2", PAIR_AUTO_ONE_SE_MAX_ROWS + 50, 0)
    mu, sd = d.X.mean(axis=0), d.X.std(axis=0)
    X = (d.X - mu) / sd
    kw = {"scheme": "pairwise", "lambdas": [1e-4, 1e-3, 1e-2], "sigmas": [0.3, 1.0, 3.0]}
    out = {
        v: MulticlassWeightedSVMClassifier(large_n_auto=v, **kw).fit(X, d.y)
        for v in ("min_sigmoid", "widest_spline")
    }
    t = simulate("wu2010_ex2", 4000, 10_000)
    return out, (t.X - mu) / sd, t.p, X, d.y, kw


def test_widest_auto_takes_the_widest_cell_within_half_a_standard_error(large_fits):
    fits, *_ = large_fits
    est = fits["widest_spline"]
    assert est.fit_info_["large_n_auto"] == "widest_spline"
    assert fits["min_sigmoid"].fit_info_["large_n_auto"] == "min_sigmoid"
    moved = 0
    for name, t in est.tuning_.items():
        assert t.rule == "one_se"
        i0, j0 = np.unravel_index(np.nanargmin(t.score), t.score.shape)
        bound = t.score[i0, j0] + PAIR_AUTO_SE_MULTIPLE * t.se[i0, j0]
        close = [c for c in np.ndindex(*t.score.shape) if t.score[c] <= bound]
        assert tuple(t.best) == max(close, key=lambda c: (t.sigmas[c[1]], t.lambdas[c[0]]))
        t_min = fits["min_sigmoid"].tuning_[name]
        assert t_min.rule == "min"
        assert tuple(t_min.best) == (i0, j0)
        np.testing.assert_allclose(t_min.score, t.score, rtol=1e-9)
        moved += tuple(t.best) != (i0, j0)
    assert moved >= 1  # the rule matters on this draw
    assert {g.name for g in fits["min_sigmoid"].calibrations_} == {"sigmoid"}
    assert {g.name for g in est.calibrations_} - {"sigmoid"}  # and so does the map


def test_widest_auto_is_the_limit_lifted_with_the_cross_validated_map(large_fits, monkeypatch):
    """The same fit as the default with the row limit lifted and ``PAIR_AUTO_MAP = "auto"``:
    the two constants the value stands for."""
    fits, Xt, _, X, y, kw = large_fits
    monkeypatch.setattr(mc, "PAIR_AUTO_ONE_SE_MAX_ROWS", 10**9)
    monkeypatch.setattr(mc, "PAIR_AUTO_MAP", "auto")
    ref = MulticlassWeightedSVMClassifier(large_n_auto="min_sigmoid", **kw).fit(X, y)
    names = [g.name for g in fits["widest_spline"].calibrations_]
    assert [g.name for g in ref.calibrations_] == names
    np.testing.assert_allclose(
        ref.predict_proba(Xt), fits["widest_spline"].predict_proba(Xt), rtol=1e-9, atol=1e-12
    )


def test_probabilities_are_valid_and_near_the_truth(large_fits):
    fits, Xt, P, *_ = large_fits
    for est in fits.values():
        p = est.predict_proba(Xt)
        assert p.shape == P.shape and np.all(p >= 0)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
        # wu2010_ex2 at n = 1050 on this grid: L1 0.096 (min_sigmoid), 0.095 (widest_auto)
        assert np.mean(np.abs(p - P).sum(axis=1)) < 0.12


def test_bad_value_names_the_parameter():
    d = simulate("wu2010_ex2", 60, 0)
    with pytest.raises(InvalidParameterError, match="large_n_auto"):
        MulticlassWeightedSVMClassifier(scheme="pairwise", large_n_auto="widest").fit(d.X, d.y)
