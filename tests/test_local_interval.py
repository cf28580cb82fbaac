"""Per-point intervals for p(x) (ladder.recalibration.LocalInterval, predict_interval).

The coverage tests score against the simulation designs' true p; the bands come from
benchmarks/results/interval_coverage_tenth.md with margin (fixed seeds, no timing).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.stats import norm

from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.recalibration import INTERVAL_JEFFREYS_SHARE, LocalInterval


def _pairs(m: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, m)
    y = (rng.random(m) < p).astype(float)
    v = rng.uniform(0.0, 0.004, m)
    return p, y, v


@pytest.mark.parametrize(
    ("m", "k", "kj"), [(10, 7, 2), (100, 20, 10), (400, 40, 40), (2000, 90, 200)]
)
def test_the_windows_grow_like_sqrt_m_and_m(m, k, kj):
    """The spread's window is ceil(2 sqrt(m)) pairs, the Jeffreys term's ceil(m / 10)
    (at least 2)."""
    assert INTERVAL_JEFFREYS_SHARE == 10
    p, y, v = _pairs(m)
    iv = LocalInterval.fit(p, y, v=v)
    assert (iv.k, iv.kj) == (k, kj)


def test_the_half_width_is_z_times_the_root_of_jeffreys_plus_spread():
    """At a point of estimate t: the labels of the kj pairs nearest in rank give the
    Jeffreys Beta(h + 1/2, kj - h + 1/2) posterior variance, the k nearest pairs' mean
    spread is added, and the interval is the estimate +- z sqrt(sum), z the normal
    quantile of the level; computed here from the definition, pair by pair."""
    p, y, v = _pairs(300, 1)
    iv = LocalInterval.fit(p, y, v=v, kj=25)
    order = np.argsort(p, kind="stable")
    ps, ys, vs = p[order], y[order], v[order]
    t = np.array([0.1, 0.33, 0.5, 0.71, 0.9])
    est = np.full(t.shape, 0.5)
    for level in (0.8, 0.9):
        lo, hi = iv(t, est, level)
        for i, ti in enumerate(t):
            pos = int(np.sum(ps < ti))  # pairs below t: t's rank among them
            sj = min(max(pos - 25 // 2, 0), ps.size - 25)
            sk = min(max(pos - iv.k // 2, 0), ps.size - iv.k)
            h = ys[sj : sj + 25].sum()
            a, b = h + 0.5, 25 - h + 0.5
            jeffreys = a * b / ((a + b) ** 2 * (a + b + 1))
            half = norm.ppf(0.5 + level / 2) * np.sqrt(jeffreys + vs[sk : sk + iv.k].mean())
            assert lo[i] == pytest.approx(0.5 - half, abs=1e-12)
            assert hi[i] == pytest.approx(0.5 + half, abs=1e-12)


def test_a_model_saved_before_the_jeffreys_window_keeps_its_interval():
    """kj=None (a LocalInterval built before the field existed) is the former interval:
    the Jeffreys term over the spread's window k."""
    p, y, v = _pairs(500, 2)
    new = LocalInterval.fit(p, y, v=v)
    old = dataclasses.replace(new, kj=None)
    same = dataclasses.replace(new, kj=new.k)
    t = np.linspace(0.01, 0.99, 50)
    np.testing.assert_array_equal(np.column_stack(old(t, t)), np.column_stack(same(t, t)))
    assert not np.array_equal(old(t, t)[0], new(t, t)[0])


def test_the_interval_holds_the_estimate_lies_in_zero_one_and_nests_in_the_level():
    d = simulate("wuliu2011_ex2", 300, 41)
    t = simulate("wuliu2011_ex2", 2000, 42)
    est = WeightedSVMClassifier(n_jobs=1).fit(d.X, d.y)
    q = est.predict_proba(t.X)[:, 1]
    bounds = [est.predict_interval(t.X, level) for level in (0.5, 0.8, 0.9, 0.99)]
    for lo, hi in bounds:
        assert np.all((lo >= 0) & (hi <= 1))
        assert np.all((lo <= q + 1e-12) & (q <= hi + 1e-12))
    for (lo_a, hi_a), (lo_b, hi_b) in zip(bounds, bounds[1:], strict=False):
        assert np.all(lo_b <= lo_a + 1e-12) and np.all(hi_a <= hi_b + 1e-12)
    assert np.mean(bounds[-1][1] - bounds[-1][0]) > np.mean(bounds[0][1] - bounds[0][0])


def _coverage(design: str, seed: int) -> tuple[float, float]:
    d = simulate(design, 1000, seed)
    t = simulate(design, 4000, seed + 1000)
    est = WeightedSVMClassifier(n_jobs=1).fit(d.X, d.y)
    lo, hi = est.predict_interval(t.X, level=0.9)
    p = t.p[:, 1]
    return float(np.mean((lo <= p + 1e-12) & (p <= hi + 1e-12))), float(np.mean(hi - lo))


def test_coverage_of_a_smooth_p_is_near_the_level():
    """wuliu2011_ex1 (p = logistic(4 (x1 + x2))), n = 1000, the default estimator: the 90%
    interval covers the true p at 0.911 of 4000 test points (width 0.099).  Without the
    spread it covers 0.77, with the 80% or 99% quantile in place of the 90% one 0.846 or
    0.978: the band fails all three."""
    cover, width = _coverage("wuliu2011_ex1", 51)
    assert 0.86 <= cover <= 0.97
    assert width < 0.15


def test_coverage_of_a_step_p_is_at_least_the_level_and_the_interval_is_narrow():
    """wuliu2011_ex6 (p = 0.1 / 0.9), n = 1000: coverage 0.985 (the points the interval
    misses are those next to the step, where no interval centred on a smooth estimate
    reaches the truth), mean width 0.156 (the former Jeffreys window of 2 sqrt(m) pairs:
    0.174; a Jeffreys window of 2 sqrt(m) pairs at n = 2000 gave widths 0.12-0.17)."""
    cover, width = _coverage("wuliu2011_ex6", 51)
    assert cover >= 0.9
    assert width < 0.2
