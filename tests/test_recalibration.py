"""Monotone recalibration of ladder estimates (wsvmgui.ladder.recalibration)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from wsvmgui.errors import InputError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.recalibration import (
    AUTO_MAPS,
    MAPS,
    SPLINE_PENALTIES,
    choose_map,
    fit_map,
    fit_spline,
    guarded_choice,
    map_scores,
    recalibrated_terms,
)


def _distorted(n: int, seed: int):
    """Labels from p, and an estimate that is a monotone distortion of p (too extreme)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < p).astype(float)
    z = np.log(p / (1 - p))
    return p, y, 1 / (1 + np.exp(-2.5 * z))  # p_hat = expit(2.5 logit p)


@pytest.mark.parametrize("name", MAPS)
def test_maps_are_monotone_and_stay_inside_zero_one(name):
    _, y, q = _distorted(800, 0)
    g = fit_map(name, q, y)
    grid = np.linspace(0, 1, 501)
    out = g(grid)
    assert np.all(np.diff(out) >= -1e-12)
    assert np.all((out > 0) & (out < 1))


@pytest.mark.parametrize("name", MAPS)
def test_maps_undo_a_monotone_distortion(name):
    p, y, q = _distorted(3000, 1)
    p_t, _, q_t = _distorted(2000, 2)
    g = fit_map(name, q, y)
    before = np.abs(q_t - p_t).mean()
    after = np.abs(g(q_t) - p_t).mean()
    assert after < 0.5 * before
    if name == "sigmoid":  # the distortion is in the family: slope near 1 / 2.5
        assert g.coef[1] == pytest.approx(0.4, abs=0.08)


def test_isotonic_end_blocks_are_never_certain():
    q = np.array([0.01, 0.02, 0.03, 0.5, 0.97, 0.98, 0.99])
    y = np.array([0, 0, 0, 1, 1, 1, 1], dtype=float)
    g = fit_map("isotonic", q, y)
    assert 0 < g(np.array([0.0]))[0] <= 0.5 / 4 + 1e-12  # (0 + 1/2) / (3 + 1)
    assert g(np.array([1.0]))[0] < 1


def test_choose_map_picks_the_smallest_cross_validated_loss():
    _, y, q = _distorted(1000, 3)
    scores = map_scores(q, y, seed=0)
    g = choose_map(q, y, seed=0)
    assert g.name == min(AUTO_MAPS, key=lambda m: (scores[m], AUTO_MAPS.index(m)))


def test_auto_never_chooses_beta_even_where_it_scores_best():
    # labels drawn from a beta-calibration curve that no sigmoid in logit(q) fits:
    # g(q) = expit(1 + 3 log q - 0.3 log(1 - q)), far from symmetric in logit(q)
    rng = np.random.default_rng(4)
    q = rng.uniform(0.01, 0.99, 3000)
    y = (rng.uniform(size=q.size) < expit(1 + 3 * np.log(q) - 0.3 * np.log1p(-q))).astype(float)
    scores = map_scores(q, y, seed=0)
    assert min(MAPS, key=scores.get) == "beta"  # beta would win a choice among all maps
    assert choose_map(q, y, seed=0).name in (*AUTO_MAPS, "spline")  # 3000 pairs: guarded
    assert fit_map("beta", q, y).name == "beta"  # still offered by name


def test_bad_inputs():
    with pytest.raises(InputError, match="as many labels"):
        fit_map("sigmoid", np.array([0.2, 0.3]), np.array([1.0]))
    with pytest.raises(InputError, match="0/1 labels"):
        fit_map("sigmoid", np.array([0.2, 0.3]), np.array([1.0, 2.0]))
    with pytest.raises(InputError, match="unknown recalibration map"):
        fit_map("cubic", np.array([0.2, 0.3]), np.array([1.0, 0.0]))
    with pytest.raises(InputError, match="penalty"):
        fit_spline(np.array([0.2, 0.3]), np.array([1.0, 0.0]), -1.0)
    with pytest.raises(InputError, match="penalty"):
        fit_spline(np.array([0.2, 0.3]), np.array([1.0, 0.0]), np.nan)
    with pytest.raises(InputError, match="finite estimates"):
        fit_map("spline", np.array([0.2, np.nan]), np.array([1.0, 0.0]))


def _plateau(q: np.ndarray) -> np.ndarray:
    """A smooth calibration curve no sigmoid in logit(q) fits: flat near 0.15 and 0.85,
    a steep rise between (the shape of the step designs' curves)."""
    return 0.15 + 0.7 * expit(4 * np.log(q / (1 - q)))


def _pairs(curve, m: int, seed: int):
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.01, 0.99, m)
    return q, (rng.random(m) < curve(q)).astype(float)


def _sigmoid_curve(q: np.ndarray) -> np.ndarray:
    return expit(0.3 + 0.7 * np.log(q / (1 - q)))


def test_a_large_spline_penalty_gives_the_sigmoid_map():
    # the penalty ties the slopes together; all slopes equal is the sigmoid in logit(q)
    grid = np.linspace(0, 1, 1001)
    for m, seed in ((200, 0), (2000, 1)):
        q, y = _pairs(_sigmoid_curve, m, seed)
        s, g = fit_map("sigmoid", q, y), fit_spline(q, y, 1e6)
        assert np.max(np.abs(g(grid) - s(grid))) < 1e-3
        np.testing.assert_allclose(g.coef[1:], s.coef[1], rtol=1e-2)
        assert g.x.size >= np.ceil(np.sqrt(m) / 0.75) - 2  # knots grow with the pairs


def test_the_spline_beats_the_sigmoid_on_a_smooth_non_sigmoid_curve():
    """Expected log loss against the true curve on a fine grid of estimates."""
    qt = np.linspace(0.005, 0.995, 2000)
    truth = _plateau(qt)

    def expected(h):
        h = np.clip(h, 1e-12, 1 - 1e-12)
        return float(-np.mean(truth * np.log(h) + (1 - truth) * np.log1p(-h)))

    best = expected(truth)
    for seed in (0, 1, 2):
        q, y = _pairs(_plateau, 1000, seed)
        spline, sigmoid = fit_map("spline", q, y), fit_map("sigmoid", q, y)
        assert spline.name == "spline"
        # the sigmoid's excess over the truth's own loss is several times the spline's
        assert expected(spline(qt)) - best < 0.3 * (expected(sigmoid(qt)) - best)
        assert np.mean(np.abs(spline(qt) - truth)) < 0.5 * np.mean(np.abs(sigmoid(qt) - truth))


def _cv_terms(q, y, seed=0):
    """Per-row out-of-fold log losses of sigmoid, isotonic and the spline at each penalty,
    on the folds of choose_map (5 stratified folds of the seed), computed here from the
    public fits."""
    from sklearn.model_selection import StratifiedKFold

    fits = {m: (lambda a, b, m=m: fit_map(m, a, b)) for m in AUTO_MAPS}
    fits |= {f"spline@{v:g}": (lambda a, b, v=v: fit_spline(a, b, v)) for v in SPLINE_PENALTIES}
    out = {k: np.empty(q.size) for k in fits}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(q[:, None], y):
        for k, fit in fits.items():
            h = np.clip(fit(q[tr], y[tr])(q[te]), 1e-12, 1 - 1e-12)
            out[k][te] = -(y[te] * np.log(h) + (1 - y[te]) * np.log1p(-h))
    return out


def test_auto_takes_the_spline_only_where_it_wins_by_more_than_one_se(monkeypatch):
    """With the guard on (z = 1), on draws from the plateau curve and from a sigmoid curve,
    ``auto`` takes the spline exactly where the out-of-fold losses (computed here) say it
    wins by more than one SE; the plateau's draws are mostly such wins, the sigmoid's
    mostly not: cases each way."""
    from wsvmgui.ladder import recalibration

    monkeypatch.setattr(recalibration, "AUTO_SPLINE_GUARD", 1.0)
    taken = {}
    for curve in (_plateau, _sigmoid_curve):
        for seed in (0, 1, 2, 3):
            q, y = _pairs(curve, 1000, seed)
            T = _cv_terms(q, y)
            ordinary = min(AUTO_MAPS, key=lambda m: T[m].mean())
            spline = min((k for k in T if k.startswith("spline@")), key=lambda k: T[k].mean())
            d = T[spline] - T[ordinary]
            wins = bool(d.mean() < -d.std(ddof=1) / np.sqrt(d.size))
            g = choose_map(q, y, seed=0)
            assert g.name == ("spline" if wins else ordinary)
            # without the guard, auto is the ordinary choice
            assert choose_map(q, y, seed=0, spline=False).name == ordinary
            # the tuning search's view of "auto" scores the same candidate
            terms = recalibrated_terms(q, y, "auto", _log_loss_terms)
            np.testing.assert_allclose(terms, T[spline if wins else ordinary], rtol=1e-9)
            taken[curve.__name__, seed] = wins
    assert sum(taken["_plateau", s] for s in range(4)) >= 3
    assert sum(taken["_sigmoid_curve", s] for s in range(4)) <= 1
    assert set(taken.values()) == {True, False}


def test_without_a_guard_neither_auto_nor_the_tuning_view_takes_the_spline(monkeypatch):
    from wsvmgui.ladder import recalibration

    q, y = _pairs(_plateau, 1000, 1)
    monkeypatch.setattr(recalibration, "AUTO_SPLINE_GUARD", 1.0)
    assert choose_map(q, y, seed=0).name == "spline"
    monkeypatch.setattr(recalibration, "AUTO_SPLINE_GUARD", None)
    T = _cv_terms(q, y)
    ordinary = min(AUTO_MAPS, key=lambda m: T[m].mean())
    assert choose_map(q, y, seed=0).name == ordinary
    terms = recalibrated_terms(q, y, "auto", _log_loss_terms)
    np.testing.assert_allclose(terms, T[ordinary], rtol=1e-9)


def _log_loss_terms(q, y):
    q = np.clip(q, 1e-12, 1 - 1e-12)
    return -(y * np.log(q) + (1 - y) * np.log1p(-q))


def test_guarded_choice_follows_its_definition():
    rng = np.random.default_rng(5)
    base = rng.uniform(0.2, 1.0, 400)
    noise = rng.normal(0, 0.1, 400)  # SE of the paired difference: about 0.1 / 20
    se = noise.std(ddof=1) / 20
    for shift, expected in ((-0.5 * se, "isotonic"), (-2.0 * se, "spline@0.3")):
        terms = {
            "sigmoid": base + 0.01,
            "isotonic": base,
            "spline@0.03": base + noise + shift + 0.001,
            "spline@0.3": base + noise + shift - noise.mean(),
        }
        assert guarded_choice(terms, AUTO_MAPS, 1.0) == expected
        assert guarded_choice(terms, AUTO_MAPS, None) == "isotonic"


def test_binary_estimator_calibration_on_a_step_design():
    """wang2008_ex1 (p = 0.2 / 0.8): the ladder's p_hat varies where p is flat; the
    cross-fitted isotonic map flattens it and lowers the error against the truth."""
    d = simulate("wang2008_ex1", 400, 5)
    t = simulate("wang2008_ex1", 3000, 6)
    kw = dict(lam=1 / (2 * 400 * 1.0), sigma=0.5, n_jobs=1)
    plain = WeightedSVMClassifier(calibration="none", **kw).fit(d.X, d.y)
    recal = WeightedSVMClassifier(calibration="isotonic", **kw).fit(d.X, d.y)
    assert recal.calibration_ is not None and recal.fit_info_["calibration"] == "isotonic"
    assert recal.fit_info_["calibration_points"] == 400  # 3 folds, every row once
    err_plain = np.abs(plain.predict_proba(t.X)[:, 1] - t.p[:, 1]).mean()
    err_recal = np.abs(recal.predict_proba(t.X)[:, 1] - t.p[:, 1]).mean()
    assert err_recal < err_plain
    # the same ladder underneath; the map keeps the ranking and the bracket's order
    np.testing.assert_array_equal(plain.ladder_decision(t.X[:50]), recal.ladder_decision(t.X[:50]))
    lo, hi = recal.predict_bracket(t.X[:200])
    P = recal.predict_proba(t.X[:200])
    assert np.all(lo <= P + 1e-12) and np.all(hi + 1e-12 >= P)


def test_binary_estimator_recalibrates_by_default_and_none_is_the_plain_rule():
    d = simulate("wuliu2011_ex1", 120, 0)
    est = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_jobs=1).fit(d.X, d.y)
    assert est.calibration_ is not None and est.fit_info_["calibration"] in MAPS
    assert est.fit_info_["calibration_points"] == 120
    plain = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_jobs=1, calibration="none")
    plain.fit(d.X, d.y)
    assert plain.calibration_ is None and "calibration" not in plain.fit_info_
    # the same ladder underneath, read through the map
    np.testing.assert_array_equal(est.ladder_decision(d.X), plain.ladder_decision(d.X))
    np.testing.assert_allclose(
        est.predict_proba(d.X)[:, 1], est.calibration_(plain.predict_proba(d.X)[:, 1])
    )


def test_calibrated_fit_round_trips_through_the_model_file():
    from wsvmgui.io.modelfile import FittedModel, model_from_bytes, model_to_bytes
    from wsvmgui.io.preprocessing import Preprocessing

    d = simulate("wuliu2011_ex2", 150, 3)
    pre = Preprocessing.fit(d.X, ["a", "b"])
    X = pre.transform(d.X)
    est = WeightedSVMClassifier(calibration="auto", lam=0.01, sigma=1.0, n_jobs=1).fit(X, d.y)
    back = model_from_bytes(model_to_bytes(FittedModel(est, pre, "y"))).estimator
    new = pre.transform(simulate("wuliu2011_ex2", 40, 4).X)
    np.testing.assert_array_equal(back.predict_proba(new), est.predict_proba(new))
    for a, b in zip(back.predict_interval(new), est.predict_interval(new), strict=True):
        np.testing.assert_array_equal(a, b)


def test_spline_calibrated_fit_round_trips_and_a_bad_spline_is_refused():
    import dataclasses

    from wsvmgui.io import schema
    from wsvmgui.io.modelfile import FittedModel, model_from_bytes, model_to_bytes
    from wsvmgui.io.preprocessing import Preprocessing
    from wsvmgui.io.schema import SchemaError

    MAP_TYPE = "wsvmgui.ladder.recalibration:MonotoneMap"

    d = simulate("wang2008_ex1", 200, 3)
    pre = Preprocessing.fit(d.X, ["a", "b"])
    X = pre.transform(d.X)
    est = WeightedSVMClassifier(calibration="spline", lam=0.01, sigma=1.0, n_jobs=1).fit(X, d.y)
    g = est.calibration_
    assert g is not None and g.name == "spline" and est.fit_info_["calibration"] == "spline"
    assert g.coef.size == g.x.size + 2 and np.all(g.coef[1:] >= 0)
    back = model_from_bytes(model_to_bytes(FittedModel(est, pre, "y"))).estimator
    new = pre.transform(simulate("wang2008_ex1", 40, 4).X)
    np.testing.assert_array_equal(back.predict_proba(new), est.predict_proba(new))
    # the model file's schema refuses a spline that is not a monotone map of this form
    good = dataclasses.asdict(g)
    schema.validate_state(MAP_TYPE, good, "calibration_", str)
    bad = {
        "slopes of a monotone map": {**good, "coef": np.r_[g.coef[:-1], -0.5]},
        "coef": {**good, "coef": g.coef[:-1]},
        "increasing knots": {**good, "x": g.x[::-1].copy()},
        "strictly inside": {**good, "x": np.r_[0.0, g.x[1:]]},
        "y": {**good, "y": np.full(g.x.shape, 0.5)},
    }
    for message, state in bad.items():
        with pytest.raises(SchemaError, match=message):
            schema.validate_state(MAP_TYPE, state, "calibration_", str)


def test_predict_interval_needs_a_calibration_and_a_valid_level():
    d = simulate("wuliu2011_ex1", 120, 0)
    plain = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_jobs=1, calibration="none")
    plain.fit(d.X, d.y)
    with pytest.raises(InputError, match="needs a fit with calibration"):
        plain.predict_interval(d.X[:3])
    est = WeightedSVMClassifier(calibration="sigmoid", lam=0.01, sigma=1.0, n_jobs=1).fit(d.X, d.y)
    with pytest.raises(InputError, match="level"):
        est.predict_interval(d.X[:3], level=1.5)
    lo, hi = est.predict_interval(d.X, level=0.9)
    p = est.predict_proba(d.X)[:, 1]
    assert np.all(lo <= p) and np.all(p <= hi) and np.all((lo >= 0) & (hi <= 1))
    lo8, hi8 = est.predict_interval(d.X, level=0.8)
    assert np.all(hi8 - lo8 <= hi - lo + 1e-12)  # a lower level never widens it


def test_local_interval_covers_the_truth_on_a_step_design():
    """Coverage of the true p at level 0.9 on Wu & Liu Ex. 6 (p = 0.1 / 0.9): near nominal
    (docs/notes/calibration.md)."""
    d = simulate("wuliu2011_ex6", 400, 11)
    t = simulate("wuliu2011_ex6", 3000, 12)
    grid = dict(lambdas=[1 / (2 * 320 * c) for c in (1.0, 10.0)], sigmas=[0.5, 1.0, 2.0])
    est = WeightedSVMClassifier(calibration="auto", n_jobs=1, **grid).fit(d.X, d.y)
    lo, hi = est.predict_interval(t.X, level=0.9)
    cover = np.mean((lo <= t.p[:, 1]) & (t.p[:, 1] <= hi))
    assert cover > 0.8 and np.mean(hi - lo) < 0.3


def test_interval_with_the_fold_spread_covers_a_smooth_steep_p():
    """wuliu2011_ex1 (smooth logistic p, steep): the local Jeffreys interval alone is an
    interval for the mean of p among points alike in p_hat and under-covers; adding the
    cross-fitted fits' jackknife variance brings the 90% interval near nominal (over
    three seeds here: 0.91, 0.91, 0.98 with the spread, widths 0.12-0.16; 0.89, 0.56,
    0.92 without, widths 0.11-0.12)."""
    from wsvmgui.ladder.recalibration import LocalInterval

    with_spread, without = [], []
    for seed in (21, 22, 23):
        d = simulate("wuliu2011_ex1", 300, seed)
        t = simulate("wuliu2011_ex1", 3000, seed + 100)
        est = WeightedSVMClassifier(calibration="sigmoid", lam=1 / (2 * 300), sigma=1.0)
        est.set_params(n_jobs=1).fit(d.X, d.y)
        iv = est.interval_
        assert iv is not None and iv.v is not None and np.all(iv.v >= 0)
        p = t.p[:, 1]
        lo, hi = est.predict_interval(t.X, level=0.9)
        q = est.predict_proba(t.X)[:, 1]
        assert np.all((lo <= q) & (q <= hi)) and np.all((lo >= 0) & (hi <= 1))
        with_spread.append(np.mean((lo <= p) & (p <= hi)))
        plain = LocalInterval(iv.p, iv.y, iv.k)  # the interval without the spread
        raw = est._raw_estimate(t.X).p
        lo0, hi0 = plain(raw, q, 0.9)
        without.append(np.mean((lo0 <= p) & (p <= hi0)))
    assert np.mean(with_spread) > 0.85 and min(with_spread) > 0.8
    assert np.mean(with_spread) > np.mean(without) + 0.05


def test_local_interval_refuses_a_bad_spread():
    p, y = np.array([0.2, 0.4, 0.6, 0.8]), np.array([0.0, 1.0, 0.0, 1.0])
    from wsvmgui.ladder.recalibration import LocalInterval, fold_spread

    with pytest.raises(InputError, match="variance"):
        LocalInterval.fit(p, y, v=np.array([0.1, -0.1, 0.0, 0.0]))
    with pytest.raises(InputError, match="variance"):
        LocalInterval.fit(p, y, v=np.array([0.1, 0.0]))
    g = fit_map("sigmoid", p, y)
    raw = np.array([[0.2, 0.4, 0.6, 0.8], [0.3, 0.4, 0.5, 0.8]])
    v = fold_spread(raw, g)  # two folds: (2 - 1) x the variance over the fits
    np.testing.assert_allclose(v, g(raw).var(axis=0))
    assert v[1] == 0 and v[3] == 0 and v[0] > 0


def test_isotonic_pav_equals_scikit_learns_isotonic_regression():
    from sklearn.isotonic import isotonic_regression

    from wsvmgui._sklearn_compat import isotonic_pav

    rng = np.random.default_rng(3)
    for t in (1, 2, 7, 50):
        values, weights = rng.normal(size=t), rng.uniform(0.1, 3.0, size=t)
        expected = isotonic_regression(values, sample_weight=weights, increasing=True)
        np.testing.assert_allclose(isotonic_pav(values, weights), expected, atol=1e-12)


def test_the_guard_is_on_by_default_above_the_minimum_pair_count_only(monkeypatch):
    """Default: z = 1 on more than AUTO_SPLINE_MIN_PAIRS (500) pairs, off at or below it;
    the same pairs where the guarded spline wins go to the ordinary map once the minimum
    is raised to their count, in choose_map and in the tuning search's view alike."""
    from wsvmgui.ladder import recalibration

    assert recalibration.AUTO_SPLINE_GUARD == 1.0
    assert recalibration.AUTO_SPLINE_MIN_PAIRS == 500
    assert recalibration.auto_guard(501) == 1.0 and recalibration.auto_guard(500) is None
    q, y = _pairs(_plateau, 1000, 1)
    T = _cv_terms(q, y)
    ordinary = min(AUTO_MAPS, key=lambda m: T[m].mean())
    assert choose_map(q, y, seed=0).name == "spline" != ordinary
    monkeypatch.setattr(recalibration, "AUTO_SPLINE_MIN_PAIRS", 1000)
    assert choose_map(q, y, seed=0).name == ordinary
    terms = recalibrated_terms(q, y, "auto", _log_loss_terms)
    np.testing.assert_allclose(terms, T[ordinary], rtol=1e-9)


def _four_pl(m: int, seed: int, lo=0.1, hi=0.85, a=0.3, b=3.0):
    """Estimates q (m,) and labels from g(q) = lo + (hi - lo) expit(a + b logit q)."""
    rng = np.random.default_rng(seed)
    t = rng.normal(0.0, 2.0, m)
    q = expit(t)
    y = (rng.random(m) < lo + (hi - lo) * expit(a + b * t)).astype(float)
    return q, y


def test_plateau_recovers_a_four_parameter_logistic():
    q, y = _four_pl(40_000, 0)
    g = fit_map("plateau", q, y)
    assert g.name == "plateau" and g.x.size == 0 and g.coef[1] == g.coef[2]
    lo, hi = g.y
    assert lo == pytest.approx(0.1, abs=0.02) and hi == pytest.approx(0.85, abs=0.02)
    assert g.coef[0] == pytest.approx(0.3, abs=0.25) and g.coef[1] == pytest.approx(3.0, abs=0.6)
    grid = np.linspace(0.01, 0.99, 99)
    truth = 0.1 + 0.75 * expit(0.3 + 3.0 * np.log(grid / (1 - grid)))
    assert np.max(np.abs(g(grid) - truth)) < 0.03


def test_plateau_is_the_maximum_likelihood_fit_over_floor_and_ceiling():
    """Its log loss on the pairs is no larger than the profile likelihood's minimum over a
    grid of floors and ceilings (each with its best intercept and slope, fitted here by
    Nelder-Mead), and no larger than the sigmoid map's (floor 0, ceiling 1)."""
    from scipy.optimize import minimize
    from scipy.special import logit

    q, y = _four_pl(600, 1, lo=0.2, hi=0.8, a=0.0, b=4.0)
    t = logit(q)

    def loss(lo, hi, a, b):
        p = np.clip(lo + (hi - lo) * expit(a + b * t), 1e-12, 1 - 1e-12)
        return -np.mean(y * np.log(p) + (1 - y) * np.log1p(-p))

    g = fit_map("plateau", q, y)
    fitted = loss(g.y[0], g.y[1], g.coef[0], g.coef[1])
    best = np.inf
    for lo in np.arange(0.0, 0.42, 0.05):
        for hi in np.arange(0.6, 1.001, 0.05):
            r = minimize(lambda w, lo=lo, hi=hi: loss(lo, hi, w[0], abs(w[1])), [0.0, 2.0],
                         method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-9})  # fmt: skip
            best = min(best, r.fun)
    assert fitted <= best + 1e-6
    s = fit_map("sigmoid", q, y)
    assert fitted <= loss(0.0, 1.0, s.coef[0], s.coef[1]) + 1e-9
    # the plateaus are where the truth put them
    assert g.y[0] == pytest.approx(0.2, abs=0.08) and g.y[1] == pytest.approx(0.8, abs=0.08)


def test_plateau_on_sigmoid_data_is_near_the_sigmoid_map():
    p, y, q = _distorted(4000, 3)
    g, s = fit_map("plateau", q, y), fit_map("sigmoid", q, y)
    grid = np.linspace(0.02, 0.98, 49)
    assert np.max(np.abs(g(grid) - s(grid))) < 0.03


def test_plateau_calibrated_fit_round_trips_and_a_bad_plateau_is_refused():
    import dataclasses

    from wsvmgui.io import schema
    from wsvmgui.io.modelfile import FittedModel, model_from_bytes, model_to_bytes
    from wsvmgui.io.preprocessing import Preprocessing
    from wsvmgui.io.schema import SchemaError

    d = simulate("wuliu2011_ex6", 200, 3)
    pre = Preprocessing.fit(d.X, ["a", "b"])
    X = pre.transform(d.X)
    est = WeightedSVMClassifier(calibration="plateau", lam=0.01, sigma=1.0, n_jobs=1).fit(X, d.y)
    g = est.calibration_
    assert g is not None and g.name == "plateau" and est.fit_info_["calibration"] == "plateau"
    back = model_from_bytes(model_to_bytes(FittedModel(est, pre, "y"))).estimator
    new = pre.transform(simulate("wuliu2011_ex6", 40, 4).X)
    np.testing.assert_array_equal(back.predict_proba(new), est.predict_proba(new))
    kind = "wsvmgui.ladder.recalibration:MonotoneMap"
    good = dataclasses.asdict(g)
    schema.validate_state(kind, good, "calibration_", str)
    bad = {
        "floor <= its ceiling": {**good, "y": g.y[::-1].copy()},
        "y": {**good, "y": np.array([0.1, 0.5, 0.9])},
        "slopes": {**good, "coef": np.array([0.0, -1.0, -1.0])},
    }
    for message, state in bad.items():
        with pytest.raises(SchemaError, match=message):
            schema.validate_state(kind, state, "calibration_", str)


def test_auto_plateau_is_the_cross_validated_choice_among_its_maps():
    from wsvmgui.ladder.recalibration import AUTO_PLATEAU_MAPS, fit_calibration

    _, y_d, q_d = _distorted(400, 6)
    for seed, (q, y) in enumerate((_four_pl(400, 5, lo=0.15, hi=0.85, b=6.0), (q_d, y_d))):
        scores = map_scores(q, y, maps=AUTO_PLATEAU_MAPS, seed=seed)
        g = fit_calibration("auto_plateau", q, y, seed=seed)
        want = min(AUTO_PLATEAU_MAPS, key=lambda m: (scores[m], AUTO_PLATEAU_MAPS.index(m)))
        assert g.name == want
        np.testing.assert_array_equal(g(q), fit_map(want, q, y, seed=seed)(q))
    # the plateau data's own map wins there
    q, y = _four_pl(400, 5, lo=0.15, hi=0.85, b=6.0)
    assert fit_calibration("auto_plateau", q, y).name == "plateau"
    # "auto" is unchanged: it never takes the plateau map
    assert choose_map(q, y).name in (*AUTO_MAPS, "spline")


def test_binary_estimator_takes_auto_plateau_by_name():
    from wsvmgui.ladder.recalibration import AUTO_PLATEAU_MAPS

    d = simulate("wuliu2011_ex6", 200, 2)
    est = WeightedSVMClassifier(calibration="auto_plateau", lam=0.01, sigma=1.0, n_jobs=1)
    est.fit(d.X, d.y)
    assert est.fit_info_["calibration"] in AUTO_PLATEAU_MAPS
    P = est.predict_proba(d.X)
    assert np.all((P >= 0) & (P <= 1)) and np.allclose(P.sum(axis=1), 1)


def test_auto_choices_read_the_module_constants_at_each_call(monkeypatch):
    """A study that sets ``recalibration.AUTO_MAPS`` / ``AUTO_PLATEAU_MAPS`` changes what
    ``"auto"`` / ``"auto_plateau"`` choose among, everywhere they are chosen; unpatched,
    the choices are today's (the maps chosen on these fixed cases before the lookup moved
    to call time: main b9e66c5)."""
    import wsvmgui.ladder.recalibration as rc

    q, y = _four_pl(400, 5, lo=0.15, hi=0.85, b=6.0)
    _, y_d, q_d = _distorted(1000, 3)
    assert rc.AUTO_CHOICES == {
        "auto": ("sigmoid", "isotonic"),
        "auto_plateau": ("sigmoid", "isotonic", "plateau"),
    }
    assert rc.CALIBRATIONS[:3] == ("none", "auto", "auto_plateau")
    assert choose_map(q, y, seed=0).name == "isotonic"
    assert rc.fit_calibration("auto", q, y).name == "isotonic"
    assert rc.fit_calibration("auto_plateau", q, y).name == "plateau"
    assert choose_map(q_d, y_d, seed=0).name == "sigmoid"

    def brier(a, b):
        return (a - b) ** 2

    monkeypatch.setattr(rc, "AUTO_MAPS", ("sigmoid",))
    monkeypatch.setattr(rc, "AUTO_PLATEAU_MAPS", ("sigmoid", "isotonic"))
    assert rc.AUTO_CHOICES["auto"] == ("sigmoid",)
    assert choose_map(q, y, seed=0).name == "sigmoid"
    assert rc.fit_calibration("auto", q, y).name == "sigmoid"
    assert rc.fit_calibration("auto_plateau", q, y).name == "isotonic"
    # 400 pairs: no spline guard, so "auto" scores exactly as its one map now
    np.testing.assert_array_equal(
        recalibrated_terms(q, y, "auto", brier), recalibrated_terms(q, y, "sigmoid", brier)
    )
    # the estimator's "auto" (auto_plateau) follows too
    monkeypatch.setattr(rc, "AUTO_PLATEAU_MAPS", ("beta",))
    d = simulate("wuliu2011_ex6", 200, 2)
    est = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_jobs=1).fit(d.X, d.y)
    assert est.fit_info_["calibration"] == "beta"


def test_map_scores_reads_maps_at_each_call(monkeypatch):
    """``map_scores`` without ``maps`` scores :data:`MAPS` as it is at the call (bound at
    import before), so a study that sets ``recalibration.MAPS`` changes what it scores;
    unpatched, it scores every map as naming them does."""
    import wsvmgui.ladder.recalibration as rc

    _, y, q = _distorted(300, 3)
    everything = ("sigmoid", "beta", "isotonic", "spline", "plateau")
    assert everything == rc.MAPS
    assert map_scores(q, y, seed=1) == map_scores(q, y, maps=everything, seed=1)
    monkeypatch.setattr(rc, "MAPS", ("isotonic", "sigmoid"))
    scores = map_scores(q, y, seed=1)
    assert list(scores) == ["isotonic", "sigmoid"]
    assert scores == map_scores(q, y, maps=["isotonic", "sigmoid"], seed=1)
    # too few rows of a class: the fallback scores the patched maps too
    assert map_scores(q[:3], np.array([1.0, 0.0, 0.0])) == {"isotonic": np.inf, "sigmoid": 0.0}
