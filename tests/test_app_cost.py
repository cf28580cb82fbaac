"""The app's cost estimate (fits counted, a few timed), the question before a long run, and
progress and time left over a run's phases."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from wsvmgui.app import analysis
from wsvmgui.app import cost as app_cost
from wsvmgui.app.analysis import NeedsConfirmation, RunRequest, RunResult, run_checked
from wsvmgui.app.cost import estimate_cost, plan_request
from wsvmgui.app.datasets import Dataset, load_builtin, split_dataset
from wsvmgui.app.phases import CostEstimate, Phase, PhasedProgress, format_seconds, time_left
from wsvmgui.app.settings import RunSettings
from wsvmgui.errors import InputError

TINY = RunSettings(n_weights=5, lambdas=[0.005], sigmas=[0.5], n_jobs=1)
#: (6 tuning cells + the final fit) x 59 weights on the grid: a second or so.
LONG = RunSettings(
    n_weights=60,
    lambdas=[0.1, 0.03, 0.01, 0.003, 0.001, 0.0003],
    tuning="split",
    n_jobs=1,
    engine="grid",
    calibration="none",  # the counts below: the ladder's own estimate, the grid as given
    tuning_extend=0,
)


@pytest.fixture(scope="module")
def split():
    return split_dataset(load_builtin("demo"), 0.0, 0.3, 0, standardise=True)


def test_the_estimate_has_a_phase_per_stage_of_every_fit(split):
    est = estimate_cost(RunRequest(replace(LONG, n_weights=10), split, compare=True))
    names = [p.name for p in est.phases]
    assert names == [
        "tuning",
        "final ladder",
        "comparison tuning",
        "comparison non-crossing ladder",
        "exact path",  # a binary ladder on the grid: its exact path is traced after
        "views",
    ]
    groups = [p.group for p in est.phases]
    assert groups == ["main", "main", "comparison", "comparison", "path", "views"]
    # the main fit: 6 sigmas of the default grid x 1 split x the lambdas, and the final
    assert est.phases[0].fits == 6 * 6 * 9 and est.phases[1].fits == 9
    assert all(p.seconds > 0 for p in est.phases)
    assert est.seconds == pytest.approx(sum(p.seconds for p in est.phases))
    assert est.probe_seconds > 0 and est.cpu_seconds > 0 and est.busy >= 1.0
    assert "comparison tuning" in est.details() and est.describe().startswith(("about", "more"))


def test_the_calibration_and_a_grid_extension_are_phases_of_the_main_fit(split):
    settings = replace(LONG, n_weights=10, calibration="auto", tuning_extend=2)
    est = estimate_cost(RunRequest(settings, split))
    main = [p for p in est.phases if p.group == "main"]
    assert [p.name for p in main] == [
        "tuning",
        "grid extension",  # at most 2 rounds of 5 cells, where the chosen cell is on an edge
        "final ladder",
        "calibration cross-fits",  # one ladder per fold of 3 (tuning holds one split out)
        "calibration map",  # the map chosen on the cross-fitted points: no progress units
    ]
    assert [p.fits for p in main] == [6 * 6 * 9, 2 * 5 * 9, 9, 3 * 9, 0]
    assert all(p.seconds > 0 for p in main)
    # priced like the rest: the extension as its cells of the tuning, the cross-fits as
    # ladders on at most the final rows
    per_fit = main[0].seconds / main[0].fits
    assert main[1].seconds == pytest.approx(per_fit * main[1].fits, rel=0.5)


def test_a_long_run_asks_before_anything_is_fitted(split, monkeypatch, slow_clock):
    monkeypatch.setattr(analysis, "fit_scheme", lambda *a, **k: pytest.fail("fitted"))
    # Its fits look 1000 times as long; the probes, cut 1000 times as early, give a noisy
    # lower bound (77 s to days in 15 tries): a 6 s limit keeps a wide margin under it.
    out = run_checked(RunRequest(LONG, split), limit=6.0)
    assert isinstance(out, NeedsConfirmation)
    assert out.estimate.needs_confirmation(6.0) and out.estimate.fits == (6 * 6 + 1) * 59


def _scaled(factor: float, source):
    """``source`` run ``factor`` times as fast (from now)."""
    t0 = source()
    return lambda: factor * (source() - t0)


def test_a_long_run_asks_on_a_busy_machine(split, monkeypatch):
    """The probes get a twentieth of the wall time as CPU (a machine 20 times
    oversubscribed): the estimate counts it, and the run asks before fitting.

    CPU runs 500 times as fast, so that the request is long on any machine: its real
    estimate (a second or so of CPU, less on a fast idle machine) becomes minutes."""
    from wsvmgui.estimators import cost_probe

    monkeypatch.setattr(cost_probe, "_busy_log", cost_probe.deque())
    monkeypatch.setattr(cost_probe, "cpu_clock", _scaled(500.0, time.process_time))
    monkeypatch.setattr(cost_probe, "wall_clock", _scaled(10000.0, time.perf_counter))
    # the window over which probes are pooled is in the scaled wall seconds: scaled with
    # them it stays 180 real seconds (unscaled it was 18 ms, and on a loaded machine the
    # probes' records expired before the estimate read them: busy 1, about 50 s, no ask)
    monkeypatch.setattr(cost_probe, "BUSY_WINDOW", cost_probe.BUSY_WINDOW * 10000.0)
    monkeypatch.setattr(analysis, "fit_scheme", lambda *a, **k: pytest.fail("fitted"))
    out = run_checked(RunRequest(LONG, split), limit=60.0)
    assert isinstance(out, NeedsConfirmation) and out.estimate.busy > 1.0


@pytest.mark.parametrize("scheme", ["joint-indirect", "joint-direct"])
def test_a_first_fit_that_never_ends_is_the_evidence(monkeypatch, scheme):
    """The thorough preset's joint fit on the K = 3 design, on a machine so busy that the
    probe's first grid fit gets no CPU time at all: the probe is left at its deadline
    (the fit still under way), and the wall seconds it waited, times the 16,101 fits,
    make the run ask (it never stays on "estimating the cost")."""
    import threading

    from wsvmgui.app.presets import preset_settings
    from wsvmgui.estimators import cost_kinds, cost_probe

    monkeypatch.setattr(cost_probe, "wall_clock", _scaled(1000.0, time.perf_counter))
    left = []

    def never_ends(estimator, X, codes, K, stage, probe):
        probe.rows = stage.rows
        events = probe.events(4)

        def fit(progress, should_cancel):
            left.append(probe.stopped.wait(60.0))  # True: the caller left it
            should_cancel()

        events.run(fit)
        probe.task_done()

    monkeypatch.setitem(cost_kinds.PROBES, "joint", (never_ends, True))
    monkeypatch.setattr(analysis, "fit_scheme", lambda *a, **k: pytest.fail("fitted"))
    k3 = split_dataset(load_builtin("design:wu2010_ex1"), 0.0, 0.3, 0, standardise=True)
    settings = preset_settings("thorough", scheme, k3.train.X, k3.train.y)
    out = run_checked(RunRequest(settings, k3), limit=60.0)
    for thread in threading.enumerate():
        if thread.name == "wsvmgui-probe":
            thread.join(60.0)
    assert left == [True]  # left by the estimate at its deadline, not after 60 s
    assert isinstance(out, NeedsConfirmation)
    assert (
        out.estimate.lower_bound and out.estimate.fits == 16101
    )  # screened: see test_cost_questions
    assert out.estimate.seconds > 60.0 and out.estimate.cpu_seconds < 60.0  # by the wall
    assert out.estimate.describe().startswith("more than")


def test_a_short_run_fits_once_and_counts_the_estimate_in_its_time(split, monkeypatch):
    class Clock:
        """The estimate's clock: 7 s pass while it estimates."""

        calls = 0

        def __call__(self):
            self.calls += 1
            return 100.0 + 7.0 * (self.calls > 1)

    monkeypatch.setattr(app_cost, "clock", Clock())
    calls = []
    real = analysis.fit_scheme
    monkeypatch.setattr(analysis, "fit_scheme", lambda *a, **k: calls.append(1) or real(*a, **k))
    result = run_checked(RunRequest(TINY, split), limit=60.0)
    assert isinstance(result, RunResult) and len(calls) == 1
    assert result.estimator.weights_.size == 4
    assert result.seconds >= 7.0  # "Finished in" counts the estimate


def test_planning_refuses_a_run_that_cannot_work_without_fitting(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 2))
    y = np.array(["a"] * 30 + ["b"] * 30 + ["c"] * 4)
    ds = Dataset("tiny class", X, y, ["x1", "x2"], None, "")
    split = split_dataset(ds, 0.0, 0.0, 0, standardise=True)
    settings = RunSettings(scheme="pairwise", tuning="cv", cv_folds=5, n_weights=5)
    monkeypatch.setattr(analysis, "fit_scheme", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(InputError, match="class 'c' has only 4 point"):
        plan_request(RunRequest(settings, split))


def test_phased_progress_follows_a_fits_stages_by_its_units():
    plan = [
        Phase("tuning", 100, 2.0),
        Phase("non-crossing ladder", 10, 6.0),
        Phase("comparison tuning", 50, 1.0, group="comparison"),
        Phase("views", 0, 1.0, group="views"),
    ]
    p = PhasedProgress(plan)
    assert p.update(50, 110) == pytest.approx(0.1)
    assert p.name == "tuning"
    assert p.update(100, 110) == pytest.approx(0.2)
    # the fit's units go on counting: unit 101 is the first of its next stage
    assert p.update(101, 110) == pytest.approx(0.2 + 0.6 * 0.1)
    assert p.name == "non-crossing ladder"
    assert p.update(110, 110) == pytest.approx(0.8)
    p.update(105, 110)  # never backwards
    assert p.fraction == pytest.approx(0.8)
    p.begin("comparison")
    assert p.update(25, 50) == pytest.approx(0.85)
    p.begin("views")
    assert p.update(2, 4) == pytest.approx(0.95)
    assert p.update(4, 4) == pytest.approx(1.0)


def test_a_fits_last_stage_without_units_is_weighted_until_the_next_phase_begins():
    """The calibration map is chosen after the fit's last unit: its share of the bar is
    not done when the units are, only when the views begin."""
    plan = [
        Phase("tuning", 90, 4.0),
        Phase("calibration cross-fits", 10, 2.0),
        Phase("calibration map", 0, 3.0),
        Phase("views", 0, 1.0, group="views"),
    ]
    p = PhasedProgress(plan)
    assert p.update(90, 100) == pytest.approx(0.4)
    assert p.update(100, 100) == pytest.approx(0.6)  # the cross-fits done, the map not
    assert p.name == "calibration map"
    assert p.update(100, 100) == pytest.approx(0.6)
    p.begin("views")
    assert p.fraction == pytest.approx(0.9)
    assert p.update(1, 1) == pytest.approx(1.0)


def test_a_stage_without_units_between_stages_with_units_is_passed_over():
    plan = [
        Phase("final ladders", 10, 1.0),
        Phase("calibration map", 0, 1.0),
        Phase("tie pairs", 10, 2.0),
    ]
    p = PhasedProgress(plan)
    assert p.update(15, 20) == pytest.approx(0.5 + 0.5 * 0.5)
    assert p.name == "tie pairs"


def test_time_left_starts_from_the_estimate_and_follows_the_pace():
    assert time_left(100.0, 0.0, 0.0) == pytest.approx(100.0)
    assert time_left(100.0, 10.0, 0.1) == pytest.approx(90.0)  # on plan
    # twice as slow, a quarter done: the rest at that pace
    assert time_left(100.0, 50.0, 0.25) == pytest.approx(0.75 * 100 * 2)
    # far behind early on: more than planned, and never nothing before the end
    assert time_left(100.0, 30.0, 0.01) > 90.0 and time_left(100.0, 500.0, 0.5) > 0
    assert time_left(100.0, 80.0, 1.0) == 0.0


def test_formatting():
    assert format_seconds(0.42) == "0.4 s"
    assert format_seconds(42) == "42 s"
    assert format_seconds(35 * 60) == "35 min"
    assert format_seconds(3 * 3600) == "3.0 h"
    assert format_seconds(5 * 86400) == "5.0 days"
    est = CostEstimate((Phase("fit", 12600, 2100.0),))
    assert est.describe() == "about 35 min, 12,600 fits"
    assert est.needs_confirmation()
    assert not CostEstimate((Phase("fit", 1, 3.0),)).needs_confirmation()
    bound = CostEstimate((Phase("fit", 9, 120.0, lower_bound=True),), busy=3.0)
    assert bound.describe().startswith("more than") and "(at least)" in bound.details()
    assert "3.0 times slower" in bound.details()


def test_the_views_are_priced_by_their_work(split):
    """The views' price: a fixed part, each boundary drawn, each evaluation of a fitted
    decision function (a row or grid point against a training row of its ladder), and
    the hull's slice; counted from the settings and the data's shape."""
    work = app_cost.ViewWork(boundaries=10, evaluations=2e6, hull=0.25)
    assert app_cost.view_seconds(work) == pytest.approx(
        app_cost.VIEW_SECONDS
        + 10 * app_cost.VIEW_SECONDS_PER_BOUNDARY
        + 2e6 * app_cost.VIEW_SECONDS_PER_EVALUATION
        + 0.25
    )
    points = split.X_all.shape[0] + 80**2  # the rows and the default plane grid
    rows = split.train.size  # no tuning part: the training rows are fitted
    # two features: the hull is the planar hull, not priced
    assert app_cost.view_work(RunRequest(TINY, split)) == (4, points * rows, 0.0)
    # the non-crossing comparison: another ladder of 4 boundaries on the same rows
    assert app_cost.view_work(RunRequest(TINY, split, compare=True)) == (8, 2 * points * rows, 0.0)
    three = split_dataset(load_builtin("design:wu2010_ex1"), 0.0, 0.3, 0, standardise=True)
    pairwise = replace(TINY, scheme="pairwise")
    # 3 pairs of 4 boundaries; each pair's ladder on its 2 of the 3 classes' rows
    work = app_cost.view_work(RunRequest(pairwise, three, grid_size=20))
    assert work == (12, (three.X_all.shape[0] + 400) * three.train.size * 2, 0.0)


def test_the_views_phase_is_their_price_as_busy_as_the_machine(split, monkeypatch):
    work = app_cost.ViewWork(boundaries=7, evaluations=3e6, hull=0.1)
    monkeypatch.setattr(app_cost, "view_work", lambda request: work)
    est = estimate_cost(RunRequest(TINY, split))
    views = est.phases[-1]
    assert views.name == "views"
    assert views.seconds == pytest.approx(app_cost.view_seconds(work) * est.busy)


def test_the_hull_probe_prices_the_slice_by_its_linear_programs(monkeypatch):
    """With more than two features the slice costs its 48 linear programs: the probe
    times two of them (after one that loads the solver) and prices the 48 at their
    mean; a clock that advances 4 ms per program makes the price 48 x 4 ms, what the
    slice itself takes by that clock."""
    import scipy.optimize

    from wsvmgui.app import slices

    solved = []
    real = scipy.optimize.linprog
    monkeypatch.setattr(
        scipy.optimize, "linprog", lambda *a, **k: solved.append(1) or real(*a, **k)
    )
    monkeypatch.setattr(slices, "cpu_clock", lambda: 0.004 * len(solved))
    X = np.random.default_rng(0).normal(size=(60, 4))
    price = slices.slice_hull_seconds(X, X.mean(axis=0), 0, 1)
    assert price == pytest.approx(slices.HULL_DIRECTIONS * 0.004)
    assert len(solved) == slices.HULL_PROBES + 1
    before = slices.cpu_clock()
    assert slices.slice_hull(X, X.mean(axis=0), 0, 1).shape[0] > 3
    assert slices.cpu_clock() - before == pytest.approx(price)
    # two features: the planar hull, no program
    assert slices.slice_hull_seconds(X[:, :2], X[0, :2], 0, 1) == 0.0
    # a first program longer than the probe's limit: priced by it alone, no more timed
    monkeypatch.setattr(slices, "cpu_clock", lambda: 0.5 * len(solved))
    solved.clear()
    price = slices.slice_hull_seconds(X, X.mean(axis=0), 0, 1)
    assert price == pytest.approx(slices.HULL_DIRECTIONS * 0.5) and len(solved) == 1
