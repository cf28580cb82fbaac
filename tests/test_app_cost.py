"""Cost estimates by timing the real fit, and progress over a run's phases."""

from __future__ import annotations

import time
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
    phase, fitted = probe_fit(TINY, split.train.X, split.train.y, budget=5.0)
    assert phase.exact and not phase.lower_bound
    assert phase.fits == 4  # M - 1 weights, no tuning
    assert fitted is not None
    again = fit_scheme(TINY, split.train.X, split.train.y)
    np.testing.assert_allclose(
        fitted.predict_proba(split.test.X), again.predict_proba(split.test.X)
    )


def test_a_long_fit_is_stopped_and_extrapolated(split):
    start = time.perf_counter()
    phase, fitted = probe_fit(LONG, split.train.X, split.train.y, budget=0.3)
    probe_time = time.perf_counter() - start
    assert fitted is None and not phase.exact
    assert phase.fits == _announced_total(LONG, split) == (6 * 6 + 1) * 59
    assert probe_time < 5.0  # stopped soon after the budget
    # the projection against the real time of the whole fit, measured in the same run
    t0 = time.perf_counter()
    fit_scheme(LONG, split.train.X, split.train.y)
    actual = time.perf_counter() - t0
    assert actual / 3 < phase.seconds < actual * 3, (phase.seconds, actual)


def test_a_fit_under_its_limit_runs_to_the_end(split):
    phase, fitted = probe_fit(LONG, split.train.X, split.train.y, budget=0.3, stop_over=None)
    assert phase.exact and fitted is not None


def test_estimate_of_a_run_with_the_comparison(split):
    request = RunRequest(replace(LONG, n_weights=10), split, compare=True)
    est = estimate_cost(request, budget=0.2)
    groups = [p.group for p in est.phases]
    assert groups[0] == "main" and groups[-1] == "views" and "comparison" in groups
    assert est.fits == sum(p.fits for p in est.phases) > 0
    assert est.seconds == pytest.approx(sum(p.seconds for p in est.phases))
    assert est.describe().startswith(("about", "more than"))
    assert "comparison" in est.details()


def test_run_checked_asks_before_a_long_run_and_fits_a_short_one_once(split, monkeypatch):
    long_request = RunRequest(LONG, split)
    out = run_checked(long_request, limit=0.05)
    assert isinstance(out, NeedsConfirmation)
    assert out.estimate.needs_confirmation(0.05) and "main" not in out.estimate.fitted

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
