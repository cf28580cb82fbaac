"""Cost estimates by timing the real fit, and progress over a run's phases."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from wsvmgui.app import analysis
from wsvmgui.app.analysis import NeedsConfirmation, RunRequest, RunResult, run_checked
from wsvmgui.app.cost import (
    CostEstimate,
    Phase,
    PhasedProgress,
    estimate_cost,
    format_seconds,
    probe_fit,
)
from wsvmgui.app.datasets import load_builtin, split_dataset
from wsvmgui.app.schemes import fit_scheme
from wsvmgui.app.settings import RunSettings
from wsvmgui.errors import Cancelled

TINY = RunSettings(n_weights=5, lambdas=[0.005], sigmas=[0.5], n_jobs=1)
#: (6 x 6 tuning cells + the final fit) x 59 weights = 2183 fits on the grid: seconds
#: (the exact path, the default engine, fits the same in a fraction of a second).
LONG = RunSettings(
    n_weights=60,
    lambdas=[0.1, 0.03, 0.01, 0.003, 0.001, 0.0003],
    tuning="split",
    n_jobs=1,
    engine="grid",
)
#: 8 lambdas x 6 sigmas x 5 folds + the final ladder, 199 weights each: 47,959 grid fits.
HEAVY = RunSettings(
    n_weights=200,
    lambdas=[1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003],
    sigmas=[0.25, 0.5, 1, 2, 4, 8],
    tuning="cv",
    cv_folds=5,
    n_jobs=1,
    engine="grid",
)


@pytest.fixture(scope="module")
def split():
    return split_dataset(load_builtin("demo"), 0.0, 0.3, 0, standardise=True)


def _announced_total(settings, split) -> int:
    """The fits the estimator announces in its first progress call."""
    seen = []

    class Stop(Exception):
        pass

    def progress(done, total, _partial=None):
        seen.append(total)
        raise Stop

    with pytest.raises(Stop):
        fit_scheme(settings, split.train.X, split.train.y, progress=progress)
    return seen[0]


def test_a_fit_within_the_budget_is_timed_exactly_and_kept(split):
    phase, fitted = probe_fit(TINY, split.train.X, split.train.y, budget=60.0)
    assert phase.exact and not phase.lower_bound
    assert phase.fits == 4  # M - 1 weights, no tuning
    assert fitted is not None
    again = fit_scheme(TINY, split.train.X, split.train.y)
    np.testing.assert_allclose(
        fitted.predict_proba(split.test.X), again.predict_proba(split.test.X)
    )


class FakeClock:
    """Seconds that pass only when a fake fit says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _fake_fit(clock: FakeClock, stages: list[int], seconds_per_fit: float, done: list):
    """A stand-in for ``fit_scheme`` whose fits cost ``seconds_per_fit`` on ``clock``:
    stages of fits (a tuning stage, a final ladder), progress after each fit, the
    cancellation check before each, as the estimators do."""

    def fit(settings, X, y, X_tune=None, y_tune=None, progress=None, should_cancel=None):
        for total in stages:
            for k in range(1, total + 1):
                if should_cancel():
                    raise Cancelled("stopped")
                clock.now += seconds_per_fit
                done.append(1)
                progress(k, total, None)
        return "the fitted estimator"

    return fit


def test_a_long_fit_is_stopped_and_extrapolated(split, monkeypatch):
    clock, done = FakeClock(), []
    monkeypatch.setattr("wsvmgui.app.cost.clock", clock)
    monkeypatch.setattr("wsvmgui.app.cost.fit_scheme", _fake_fit(clock, [2183, 59], 0.01, done))
    phase, fitted = probe_fit(LONG, split.train.X, split.train.y, budget=0.3)
    assert fitted is None and not phase.exact and not phase.lower_bound
    # stopped soon after the budget: 0.3 s of 0.01 s fits, and the two fits the
    # projection needs
    assert len(done) <= 0.3 / 0.01 + 3
    # the stage announced so far (2183 fits), projected from the fits' own cost
    assert phase.fits == 2183
    assert phase.seconds == pytest.approx(2183 * 0.01)


def test_a_fit_within_the_budget_is_timed_exactly(split, monkeypatch):
    clock, done = FakeClock(), []
    monkeypatch.setattr("wsvmgui.app.cost.clock", clock)
    monkeypatch.setattr("wsvmgui.app.cost.fit_scheme", _fake_fit(clock, [20, 4], 0.01, done))
    phase, fitted = probe_fit(LONG, split.train.X, split.train.y, budget=0.3)
    assert fitted == "the fitted estimator" and phase.exact
    assert phase.fits == 24 and phase.seconds == pytest.approx(0.24)


def test_a_fit_under_its_limit_runs_to_the_end(split, monkeypatch):
    clock, done = FakeClock(), []
    monkeypatch.setattr("wsvmgui.app.cost.clock", clock)
    monkeypatch.setattr("wsvmgui.app.cost.fit_scheme", _fake_fit(clock, [2183, 59], 0.01, done))
    phase, fitted = probe_fit(LONG, split.train.X, split.train.y, budget=0.3, stop_over=None)
    assert phase.exact and fitted == "the fitted estimator" and len(done) == 2183 + 59
    assert phase.seconds == pytest.approx((2183 + 59) * 0.01)
    # a limit above the projection lets it finish too; one below stops it
    done.clear()
    phase, fitted = probe_fit(LONG, split.train.X, split.train.y, budget=0.3, stop_over=30.0)
    assert phase.exact and fitted is not None
    done.clear()
    phase, fitted = probe_fit(LONG, split.train.X, split.train.y, budget=0.3, stop_over=20.0)
    assert fitted is None and len(done) < 2183


def test_a_genuinely_heavy_real_fit_is_stopped(split):
    """End to end with the real clock and the real fit: about 48,000 grid fits (12 s of
    CPU on a 2-core machine of 2026; at least a few seconds on any machine), stopped
    after a 0.3 s budget.  Only generous bounds: the machine may be loaded."""
    phase, fitted = probe_fit(HEAVY, split.train.X, split.train.y, budget=0.3)
    assert fitted is None and not phase.exact
    assert phase.fits == _announced_total(HEAVY, split) == (8 * 6 * 5 + 1) * 199
    assert phase.seconds > 1.0  # far above the budget: it would have asked


def test_estimate_of_a_run_with_the_comparison(split):
    request = RunRequest(replace(LONG, n_weights=10), split, compare=True)
    est = estimate_cost(request, budget=0.2)
    groups = [p.group for p in est.phases]
    assert groups[0] == "main" and groups[-1] == "views" and "comparison" in groups
    assert est.fits == sum(p.fits for p in est.phases) > 0
    assert est.seconds == pytest.approx(sum(p.seconds for p in est.phases))
    assert est.describe().startswith(("about", "more than"))
    assert "comparison" in est.details()


def test_run_checked_asks_before_a_long_run_and_fits_a_short_one_once(
    split, monkeypatch, slow_clock
):
    long_request = RunRequest(LONG, split)  # 1000 times as long on the slow clock
    out = run_checked(long_request, limit=0.05)
    assert isinstance(out, NeedsConfirmation)
    assert out.estimate.needs_confirmation(0.05) and "main" not in out.estimate.fitted

    slow_clock.factor = 1.0  # real time: the tiny run is well within a minute
    calls = []
    real = analysis.fit_scheme

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("wsvmgui.app.cost.fit_scheme", counting)
    monkeypatch.setattr(analysis, "fit_scheme", counting)
    result = run_checked(RunRequest(TINY, split), limit=60.0)
    assert isinstance(result, RunResult)
    assert len(calls) == 1  # the probe's fit is the run's fit
    assert result.estimator.weights_.size == 4


def test_phased_progress_moves_forward_over_stages_and_phases():
    plan = [
        Phase("tuning", 100, 2.0),
        Phase("non-crossing ladder", 10, 6.0),
        Phase("comparison fit", 50, 1.0, group="comparison"),
        Phase("views", 0, 1.0, group="views"),
    ]
    p = PhasedProgress(plan)
    assert p.update(50, 100) == pytest.approx(0.1)
    assert p.update(100, 100) == pytest.approx(0.2)
    # the estimator's next stage (a new total) is the next planned phase of the same fit
    assert p.update(1, 10) == pytest.approx(0.2 + 0.6 * 0.1)
    assert p.name == "non-crossing ladder"
    assert p.update(10, 10) == pytest.approx(0.8)
    # an unplanned stage of the same fit does not jump into the comparison
    p.update(1, 7)
    assert p.name == "non-crossing ladder" and p.fraction == pytest.approx(0.8)
    p.begin("comparison")
    assert p.update(25, 50) == pytest.approx(0.85)
    p.begin("views")
    assert p.update(1, 1) == pytest.approx(1.0)
    assert p.remaining(10.0) == pytest.approx(0.0)


def test_formatting():
    assert format_seconds(0.42) == "0.4 s"
    assert format_seconds(42) == "42 s"
    assert format_seconds(35 * 60) == "35 min"
    assert format_seconds(3 * 3600) == "3.0 h"
    est = CostEstimate((Phase("fit", 12600, 2100.0),))
    assert est.describe() == "about 35 min, 12,600 fits"
    assert (
        est.needs_confirmation() and not CostEstimate((Phase("fit", 1, 3.0),)).needs_confirmation()
    )
