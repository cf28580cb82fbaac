"""The cost guard of the library and the command line, and the probes that price a plan.

"Long" is decided by construction: the probes' clocks run 1000 times as fast as real time
(``slow_clock``), or a stand-in fit spends a stated CPU time per unit on a fake clock.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from wsvmgui import cli
from wsvmgui.errors import CostLimitError, InputError
from wsvmgui.estimators import cost, cost_probe
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.cost import cost_limit, current_limit, estimate_fit, plan
from wsvmgui.estimators.cost_plan import FitPlan, Stage
from wsvmgui.evaluation.designs import DESIGNS

DATA = DESIGNS["wuliu2011_ex1"].sample(120, 0)
#: 3 x 3 cells x 5 folds + the final ladder, 39 weights each: well within a minute.
SMALL = WeightedSVMClassifier(
    calibration="none", n_weights=40, lambdas=[0.1, 0.01, 0.001], sigmas=[0.5, 1, 2]
)


def _no_fit_but_probes(monkeypatch, cls):
    """Fail if ``cls`` starts fitting outside a probe (the probes fit small problems)."""
    real = cls._fit

    def fit(self, *args, **kwargs):
        if not cost_probe.in_probe():
            pytest.fail("the fit started")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, "_fit", fit)


def test_a_fit_over_the_limit_is_refused_with_its_estimate(slow_clock, monkeypatch):
    est = WeightedSVMClassifier(**SMALL.get_params())
    _no_fit_but_probes(monkeypatch, WeightedSVMClassifier)
    with cost_limit(minutes=0.1), pytest.raises(CostLimitError) as err:
        est.fit(DATA.X, DATA.y)
    message = str(err.value)
    assert "estimated to take" in message and "over the limit of 6.0 s" in message
    assert "cost_limit" in message and "--max-minutes" in message
    assert err.value.cost.fits == plan(SMALL, DATA.X, DATA.y).fits == 46 * 39
    assert err.value.cost.seconds > 6.0 and err.value.limit == 0.1


def test_the_limit_lifted_lets_the_same_fit_run(slow_clock):
    with cost_limit(None):
        est = WeightedSVMClassifier(**SMALL.get_params()).fit(DATA.X, DATA.y)
    np.testing.assert_allclose(est.predict_proba(DATA.X).sum(axis=1), 1.0)


def test_the_limit_from_the_environment(monkeypatch, slow_clock):
    monkeypatch.setenv("WSVMGUI_MAX_MINUTES", "0.1")
    assert current_limit() == 0.1
    with pytest.raises(CostLimitError):
        WeightedSVMClassifier(**SMALL.get_params()).fit(DATA.X, DATA.y)
    monkeypatch.setenv("WSVMGUI_MAX_MINUTES", "none")
    assert current_limit() is None
    monkeypatch.setenv("WSVMGUI_MAX_MINUTES", "0")
    assert current_limit() is None
    monkeypatch.setenv("WSVMGUI_MAX_MINUTES", "soon")
    with pytest.raises(InputError, match="minutes"):
        current_limit()
    monkeypatch.delenv("WSVMGUI_MAX_MINUTES")
    assert current_limit() == cost.DEFAULT_MAX_MINUTES
    with pytest.raises(InputError):
        cost_limit(-1).__enter__()


def test_a_small_fit_is_not_probed(monkeypatch):
    """Far below the limit by a pessimistic count: no probe, nothing added to the fit."""
    monkeypatch.setattr(cost, "price_plan", lambda *a, **k: pytest.fail("probed"))
    est = WeightedSVMClassifier(calibration="none", n_weights=5, lam=0.01, sigma=1.0).fit(
        DATA.X, DATA.y
    )
    assert est.fit_info_["n_fits"] == 4


def test_the_estimate_prices_every_stage_and_leaves_the_estimator_alone():
    est = WeightedSVMClassifier(**SMALL.get_params())
    found = estimate_fit(est, DATA.X, DATA.y, budget=5.0)
    assert [s.name for s in found.stages] == ["tuning", "final ladder"]
    assert all(c > 0 for c in found.priced.cpu) and found.seconds > 0
    assert found.fits == 46 * 39 and found.describe().startswith(("about", "more than"))
    assert not hasattr(est, "classes_")  # probed on clones


_LOADS = """
import sys
from numba.core.dispatcher import Dispatcher
from wsvmgui.estimators import cost_probe
from wsvmgui.estimators.cost_plan import FitPlan, Stage
from wsvmgui.joint.kernels import ENGINE_KERNELS
kind = sys.argv[1]
before = set(sys.modules)
cost_probe._load_compiled(FitPlan("X", (Stage("s", 10, 1, 50, kind, kind),), 50, 3))
loaded = set(sys.modules) - before
for group, load in ENGINE_KERNELS.items():
    modules = load()  # the warm-up's own list (already imported: nothing new)
    kernels = [k for m in modules for k in vars(m).values() if isinstance(k, Dispatcher)]
    print(group, len(kernels), all(m.__name__ in loaded for m in modules),
          all(k.overloads for k in kernels))
"""


@pytest.mark.parametrize(
    ("kind", "groups"),
    [("joint", {"joint"}), ("noncrossing", {"ladder"}), ("ladder", {"ladder"}), ("grid", set())],
)
def test_the_probe_loads_every_kernel_the_warm_up_counts(kind, groups):
    """Before a probe's clock starts, every compiled kernel of the groups a kind of work
    uses is loaded (a fresh process: each module the warm-up's group lists imported by
    the probe, each of its kernels compiled or loaded), by the warm-up's own lists; a grid
    engine's probe loads none. Every group is some kind's."""
    import subprocess
    import sys

    from wsvmgui.joint.kernels import ENGINE_KERNELS

    assert set(ENGINE_KERNELS) == {g for gs in cost_probe.KIND_KERNELS.values() for g in gs}
    out = subprocess.run(
        [sys.executable, "-c", _LOADS, kind],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout.split("\n")
    rows = {line.split()[0]: line.split()[1:] for line in out if line}
    assert set(rows) == set(ENGINE_KERNELS)
    for group, (count, imported, ready) in rows.items():
        assert int(count) >= 10
        if group in groups:
            assert (imported, ready) == ("True", "True"), group
        else:  # not loaded for this kind (its check is moot: listing them loads them)
            assert imported == "False", group


# ------------------------------------------------------------------------------ probes
def _fake_task(cpu, wall, start: float, unit: float, units: int):
    """A stand-in fit on the ``fake_clocks`` (conftest) ``cpu`` and ``wall``: ``start`` CPU
    seconds, then ``units`` of ``unit`` each (a second of wall per CPU second: an idle
    machine), polling its cancel before each unit."""

    def fit(progress, should_cancel):
        cpu.now += start
        wall.now += start
        for k in range(1, units + 1):
            should_cancel()
            cpu.now += unit
            wall.now += unit
            progress(k, units, None)

    return fit


def test_a_probe_recovers_start_and_unit_of_a_task(fake_clocks):
    cpu, wall = fake_clocks

    def body(probe):
        probe.rows = 50
        probe.events(20).run(_fake_task(cpu, wall, 0.3, 0.05, 20))
        probe.task_done()

    price = cost_probe._run_probe(body, soft=1e9, hard=1e9, cancel=None, per_unit=False)
    assert price.start == pytest.approx(0.3) and price.unit == pytest.approx(0.05)
    assert not price.lower_bound
    stage = Stage("tuning", 1000, 25, 100, "ladder", "grid")
    # 25 starts and 1000 units at twice the rows: 2 ** 2 as much
    assert price.cost(stage) == pytest.approx((25 * 0.3 + 1000 * 0.05) * 4)


def test_no_task_is_priced_below_what_the_probe_measured_whatever_the_split(fake_clocks):
    """The load case: the probe's cells split the same kind of task differently (one cell's
    work all before its first event, as a path traced before it reports; another's spread
    over its units), so the medians of start and unit mix two splits and price a task of
    the probe's own four units at half of what the probe measured for one. No stage may
    be priced below the measured tasks of no more units than its own."""
    cpu, wall = fake_clocks
    cells = [(0.6, 0.0), (0.0, 0.15), (0.3, 0.0)]  # (start, unit): 0.6, 0.6, 0.3 per task

    def body(probe):
        probe.rows = 50
        for start, unit in cells:
            probe.events(4).run(_fake_task(cpu, wall, start, unit, 4))
            probe.task_done()

    price = cost_probe._run_probe(body, soft=1e9, hard=1e9, cancel=None, per_unit=False)
    assert (price.start, price.unit) == (pytest.approx(0.3), 0.0)  # the medians: 0.3 a task
    assert price.task_floor(4) == pytest.approx(0.6)  # the median task measured
    assert price.task_floor(1) == pytest.approx(0.3) and price.task_floor(0) == 0.0
    same = Stage("tuning", 40, 10, 50, "ladder", "path")  # ten tasks like the probe's
    assert price.cost(same) == pytest.approx(10 * 0.6)
    one = Stage("exact path", 1, 1, 100, "ladder", "path")  # one unit, twice the rows
    assert price.cost(one) == pytest.approx(0.3 * 2.0**2)
    longer = Stage("final ladder", 80, 1, 50, "ladder", "path")  # beyond the probe: the line
    assert price.cost(longer) == pytest.approx(max(0.3 + 80 * 0.0, 0.6))


def test_a_task_that_reports_no_units_is_priced_at_what_it_took(fake_clocks):
    """A fit that reports no progress (a stage of no units, one task) finished in the probe
    after 0.8 s: it costs that, not the zero start a per-unit probe would read."""
    cpu, wall = fake_clocks

    def body(probe):
        probe.rows = 50

        def fit(progress, should_cancel):
            should_cancel()
            cpu.now += 0.8
            wall.now += 0.8

        probe.events(8).run(fit)
        probe.task_done()

    price = cost_probe._run_probe(body, soft=1e9, hard=1e9, cancel=None, per_unit=True)
    assert price.start == 0.0  # the line alone would price the stage at nothing
    assert price.cost(Stage("fit", 0, 1, 50, "estimator", "estimator")) == pytest.approx(0.8)


def test_a_probe_cut_short_gives_a_lower_bound(fake_clocks):
    """The first unit has not ended at the deadline: at least what it spent, per unit."""
    cpu, wall = fake_clocks

    def body(probe):
        probe.rows = 50
        events = probe.events(10)

        def fit(progress, should_cancel):
            cpu.now += 2.0  # a unit that outlasts the budget
            wall.now += 2.0
            should_cancel()

        events.run(fit)
        probe.task_done()

    price = cost_probe._run_probe(body, soft=1.0, hard=1.0, cancel=None, per_unit=True)
    assert price.lower_bound and price.unit >= 2.0
    fit_plan = FitPlan("X", (Stage("grid fits", 51471, 301, 50, "joint", "joint"),), 50, 3)
    priced = cost_probe._priced(fit_plan, {("joint", "joint"): price}, 1.0)
    assert priced.cpu[0] >= 51471 * 2.0 and priced.lower_bound == (True,)


def test_a_probe_past_its_budget_stops_once_the_fit_is_clearly_long(fake_clocks):
    """Three units of 0.4 s, then one that does not end: past the soft budget the caller
    asks whether the fit is long already, and leaves the probe when it is."""
    cpu, wall = fake_clocks
    seen = []

    def body(probe):
        probe.rows = 50

        def fit(progress, should_cancel):
            for k in (1, 2, 3):
                cpu.now += 0.4
                progress(k, 100, None)
                wall.now += 0.4  # after the event: the caller never sees it half done
            probe.stopped.wait(30.0)  # a unit under way until the caller leaves
            should_cancel()

        probe.events(100).run(fit)
        probe.task_done()

    def enough(partial):
        seen.append(partial)
        return partial.unit * 51471 > 3600

    price = cost_probe._run_probe(body, 1.0, 1e9, None, True, enough)
    assert seen and not price.lower_bound
    assert price.unit == pytest.approx(0.8 / 3)  # the unit under way counted as one more


def test_the_users_cancel_stops_a_probe(fake_clocks):
    from wsvmgui.errors import Cancelled

    cpu, wall = fake_clocks
    with pytest.raises(Cancelled):
        cost_probe._run_probe(
            lambda probe: probe.events(5).run(_fake_task(cpu, wall, 0, 0.1, 5)),
            1e9,
            1e9,
            lambda: True,
            False,
        )


def test_how_busy_the_machine_is_pools_recent_probes(fake_clocks, monkeypatch):
    monkeypatch.setattr(cost_probe, "_busy_log", cost_probe.deque())
    cpu, wall = fake_clocks
    assert cost_probe.machine_busy() == 1.0
    cost_probe.record_busy(wall=4.0, cpu=1.0)
    cost_probe.record_busy(wall=2.0, cpu=1.0)
    assert cost_probe.machine_busy() == pytest.approx(3.0)
    wall.now += cost_probe.BUSY_WINDOW + 1  # forgotten after the window
    assert cost_probe.machine_busy(wall=1.0, cpu=1.0) == 1.0


# --------------------------------------------------------------------------- command line
@pytest.fixture
def table(tmp_path):
    path = tmp_path / "bin.csv"
    lines = ["a,b,label"] + [f"{a},{b},{c}" for (a, b), c in zip(DATA.X, DATA.y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _fit(table, tmp_path, *extra):
    out = tmp_path / "out.csv"
    argv = ["fit", str(table), "--label", "label", "--out", str(out), "--quiet", *extra]
    return cli.main(argv), out


def test_the_command_line_refuses_with_the_estimate_and_the_flag(
    table, tmp_path, capsys, slow_clock
):
    args = ("--weights", "40", "--lambda", "0.1,0.01,0.001", "--sigma", "0.5,1,2")
    code, out = _fit(table, tmp_path, *args, "--max-minutes", "0.1")
    err = capsys.readouterr().err.strip()
    assert code == cli.EXIT_INPUT and not out.exists()
    assert len(err.splitlines()) == 1
    assert "estimated to take" in err and "fits" in err and "over the limit of 0.1 min" in err
    assert "--max-minutes" in err
    code, out = _fit(table, tmp_path, *args, "--max-minutes", "0")  # 0: no limit
    assert code == 0 and out.exists()


def test_the_command_line_refuses_a_grid_too_large_for_memory(table, tmp_path, capsys):
    """Within the settings' own caps, a weight grid whose ladders would not fit in the
    memory there is: refused before a fit, naming the grid."""
    from wsvmgui.solvers.memory import memory_limits

    with memory_limits(available=2**20):
        code, out = _fit(table, tmp_path, "--weights", "90000", "--engine", "grid")
    err = capsys.readouterr().err
    assert code == cli.EXIT_INPUT and not out.exists()
    assert "89,999 weights" in err and "n_weights" in err


@pytest.mark.parametrize("bad", ["-1", "soon", "nan"])
def test_a_bad_max_minutes_is_a_usage_error(table, tmp_path, capsys, bad):
    code, _ = _fit(table, tmp_path, "--max-minutes", bad)
    assert code == cli.EXIT_INPUT and "--max-minutes" in capsys.readouterr().err


# ------------------------------------------------ issue 18 item 7: refused before fitting
def test_a_million_grid_weights_on_the_command_line_is_refused(table, tmp_path, capsys):
    """``--weights 1000000 --engine grid``: over the settings' cap, one line naming it."""
    code, out = _fit(table, tmp_path, "--weights", "1000000", "--engine", "grid")
    err = capsys.readouterr().err.strip()
    assert code == cli.EXIT_INPUT and not out.exists() and len(err.splitlines()) == 1
    assert "--weights" in err and "1000000" in err


def test_a_million_grid_weights_in_the_library_is_refused(monkeypatch, slow_clock):
    """Within memory, a million grid weights is refused by its estimate, before fitting."""
    _no_fit_but_probes(monkeypatch, WeightedSVMClassifier)
    est = WeightedSVMClassifier(
        calibration="none", engine="grid", n_weights=10**6, lam=0.01, sigma=1.0
    )
    with pytest.raises(CostLimitError) as err:
        est.fit(DATA.X, DATA.y)
    assert err.value.cost.fits == 999_999 and "999,999 fits" in str(err.value)


def test_a_39_by_39_settings_file_with_1000_weights_is_refused(table, tmp_path, capsys, slow_clock):
    import json

    from wsvmgui.app.settings import RunSettings

    settings = RunSettings(
        n_weights=1000,
        lambdas=list(np.logspace(-4, 1, 39)),
        sigmas=list(np.logspace(-1, 1, 39)),
        calibration="none",  # the count below: the ladders alone
    )
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(settings.to_dict()))
    code, out = _fit(table, tmp_path, "--settings", str(path))
    err = capsys.readouterr().err.strip()
    assert code == cli.EXIT_INPUT and not out.exists() and len(err.splitlines()) == 1
    # 39 x 39 cells x 5 folds + the final ladder, 999 weights each
    assert f"{(39 * 39 * 5 + 1) * 999:,} fits" in err
    assert "estimated to take" in err and "--max-minutes" in err


def test_ten_classes_on_a_fine_simplex_grid_is_refused_by_its_estimate(monkeypatch, slow_clock):
    """JointWSVMClassifier(n_weights=20), K = 10, where memory would hold it: refused by time."""
    from wsvmgui.estimators.joint import JointWSVMClassifier
    from wsvmgui.joint.simplex_grid import n_grid_points
    from wsvmgui.solvers.memory import memory_limits

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(300, 3)), np.repeat(np.arange(10), 30)
    _no_fit_but_probes(monkeypatch, JointWSVMClassifier)
    with memory_limits(available=2**50), pytest.raises(CostLimitError) as err:
        JointWSVMClassifier(n_weights=20, kernel="rbf", screen=None).fit(X, y)
    assert err.value.cost.fits >= 92_378 * 30 and "cost_limit" in str(err.value)
    # screened (the default): every cell on the N = 10 grid, the best 3 on the full one
    with memory_limits(available=2**50), pytest.raises(CostLimitError) as err:
        JointWSVMClassifier(n_weights=20, kernel="rbf").fit(X, y)
    stages = {s.name: s for s in err.value.cost.priced.plan.stages}
    assert stages["tuning grid fits"].fits == 92_378 * 3 and "cost_limit" in str(err.value)
    rough = stages["screening grid fits"]  # N // 2 = 10, at least K + 1 = 11
    assert rough.tasks >= 30 and rough.fits == rough.tasks * n_grid_points(10, 11)


def test_one_vs_all_with_1000_classes_is_refused(monkeypatch, slow_clock):
    from wsvmgui.errors import MemoryBudgetError
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
    from wsvmgui.solvers.memory import memory_limits

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(10_000, 3)), np.repeat(np.arange(1000), 10)
    _no_fit_but_probes(monkeypatch, MulticlassWeightedSVMClassifier)
    est = MulticlassWeightedSVMClassifier(
        scheme="ova", lam=0.01, sigma=1.0, n_weights=10, calibration="none"
    )
    with memory_limits(available=2**30), pytest.raises(MemoryBudgetError, match="1000 ladders"):
        MulticlassWeightedSVMClassifier(scheme="ova").fit(X, y)
    with memory_limits(available=2**50), pytest.raises(CostLimitError) as err:
        est.fit(X, y)
    assert err.value.cost.fits == 1000 * 9 and "estimated to take" in str(err.value)


def test_a_fixed_fit_at_20000_rows_is_refused_from_a_small_probe(monkeypatch, slow_clock):
    """n = 20,000, p = 20 at one cell: priced by a probe of at most PROBE_ROWS rows (the
    probe must not itself fit 20,000 rows), refused before the fit starts."""
    from wsvmgui.estimators import cost_kinds

    rng = np.random.default_rng(2)
    X = rng.normal(size=(20_000, 20))
    y = (X[:, 0] + rng.normal(size=20_000) > 0).astype(int)
    sizes = []
    real = cost_kinds._binary_rows
    monkeypatch.setattr(
        cost_kinds,
        "_binary_rows",
        lambda *a, **k: sizes.append(real(*a, **k)[0].size) or real(*a, **k),
    )
    _no_fit_but_probes(monkeypatch, WeightedSVMClassifier)
    with cost_limit(minutes=10), pytest.raises(CostLimitError) as err:
        WeightedSVMClassifier(calibration="none", lam=1e-3, sigma=4.0).fit(X, y)
    for thread in threading.enumerate():  # a probe left at its deadline ends by itself
        if thread.name == "wsvmgui-probe":
            thread.join(60.0)
    assert sizes and max(sizes) <= cost_kinds.PROBE_ROWS
    assert err.value.cost.seconds > 600 and "over the limit of 10 min" in str(err.value)


def test_a_probe_without_cpu_time_prices_by_its_wall_seconds(fake_clocks):
    """A busy machine gives the probe no CPU: its first unit has not ended after 4 wall
    seconds. That slowness is the evidence: every unit takes at least that long."""
    cpu, wall = fake_clocks

    def body(probe):
        probe.rows = 50

        def fit(progress, should_cancel):
            wall.now += 4.0  # four wall seconds, no CPU
            should_cancel()

        probe.events(10).run(fit)
        probe.task_done()

    price = cost_probe._run_probe(body, soft=1.0, hard=1.0, cancel=None, per_unit=True)
    assert price.lower_bound and price.unit == 0.0 and price.wall_unit == pytest.approx(4.0)
    fit_plan = FitPlan("X", (Stage("grid fits", 5130, 30, 50, "joint", "joint"),), 50, 3)
    priced = cost_probe._priced(fit_plan, {("joint", "joint"): price}, 1.0)
    assert priced.seconds(cores=2) >= 5130 * 4.0


def test_the_preconditioned_svm_stages_are_priced_by_svm_fits(fake_clocks, monkeypatch):
    """Every plain SVM the preconditioned scheme fits costs 0.01 s on the fake clock and
    nothing else costs anything: each stage of plain SVMs is then priced at its SVMs --
    a level's 7 lambdas chosen by hinge loss, one SVM per level on all rows, 6 x 7 for the
    kernel width -- and not at the estimator's first units, which are its ladder's (the
    old probe priced the levels at the kernel width's SVMs and the ladder's first units)."""
    from wsvmgui.estimators import preconditioned
    from wsvmgui.estimators.preconditioned import PreconditionedSVC
    from wsvmgui.ladder import precondition

    cpu, wall = fake_clocks
    real = precondition.fit_plain_svm

    def timed(*args, **kwargs):
        cpu.now += 0.01
        wall.now += 0.01
        return real(*args, **kwargs)

    monkeypatch.setattr(precondition, "fit_plain_svm", timed)  # the probes' and fit_svm_by_hinge's
    monkeypatch.setattr(preconditioned, "fit_plain_svm", timed)  # the estimator's own
    d = DESIGNS["wuliu2011_ex1"].sample(200, 0)
    est = PreconditionedSVC(n_weights=10)  # 8 levels, 7 lambdas, 6 widths, a 30% hold-out
    found = estimate_fit(est, d.X, d.y, budget=100.0)
    stages = {s.name: (s, c) for s, c in zip(found.plan.stages, found.priced.cpu, strict=True)}
    levels, L, S = len(est._levels()), 7, 6
    (tuning, tuned), (refit, refitted) = stages["SVMs"], stages["SVMs on all rows"]
    assert tuned == pytest.approx(levels * L * 0.01)
    assert refitted == pytest.approx(levels * 0.01)
    assert (tuning.fits, tuning.kind, tuning.engine) == (levels, "svm", "hinge")
    width, chosen = stages["kernel width"]
    assert (width.fits, width.tasks) == (0, S * L)  # the width search reports no units
    assert chosen == pytest.approx(S * L * 0.01 * (width.rows / refit.rows) ** 2)
    assert width.rows == tuning.rows == 140 and refit.rows == 200


def _width_priced_ladders(monkeypatch, cpu, wall):
    """Every unit of a non-crossing ladder costs ``0.001 * (2 / sigma) ** 2`` seconds on the
    fake clocks (the narrow widths dear, as measured), nothing else costs anything; returns
    the list the estimator's own ladders append ``(rows, units, seconds)`` to."""
    from wsvmgui.estimators import noncrossing, preconditioned
    from wsvmgui.ladder import noncrossing as ladder_noncrossing

    real = ladder_noncrossing.fit_noncrossing_ladder
    fitted: list[tuple[int, int, float]] = []

    def priced(X, y, weights, lam, kernel, *, progress=None, **kwargs):
        unit = 0.001 * (2.0 / kernel.sigma) ** 2
        units = [0]

        def step(*args):
            cpu.now += unit
            wall.now += unit
            units[0] += 1
            if progress is not None:
                progress(*args)

        ladder = real(X, y, weights, lam, kernel, progress=step, **kwargs)
        if not cost_probe.in_probe():
            fitted.append((len(X), units[0], units[0] * unit))
        return ladder

    monkeypatch.setattr(preconditioned, "fit_noncrossing_ladder", priced)
    monkeypatch.setattr(noncrossing, "fit_noncrossing_ladder", priced)  # the probe's
    return fitted


def test_the_preconditioned_ladder_is_priced_at_the_width_the_fit_chooses(fake_clocks, monkeypatch):
    """A non-crossing ladder's constrained fits cost up to 25 times more at the narrowest
    width than at the middle one; the preconditioned SVM fits its ladder at the width its
    kernel stage chooses, which the probe used to ignore (middle width: estimated 2.5 s, fitted
    in 100 s at n = 1000).  With each ladder unit priced by its width on the fake clock, the
    plan's ladder stages -- their counts checked against the fit's own ladders -- cost what
    the fit's ladders cost, at the probe's rows scaled by ROW_EXPONENT."""
    from wsvmgui.estimators.cost_kinds import chosen_width
    from wsvmgui.estimators.cost_plan import WIDTH_CHOSEN_FIRST
    from wsvmgui.estimators.preconditioned import PreconditionedSVC

    cpu, wall = fake_clocks
    fitted = _width_priced_ladders(monkeypatch, cpu, wall)
    d = DESIGNS["wuliu2011_ex1"].sample(200, 0)
    est = PreconditionedSVC(n_weights=10)  # 7 lambdas per weight on 140 rows, then 200 rows
    found = estimate_fit(est, d.X, d.y, budget=100.0)
    est.fit(d.X, d.y)
    ladders = [(s, c) for s, c in zip(found.plan.stages, found.priced.cpu, strict=True)
               if s.kind == "noncrossing"]  # fmt: skip
    assert [s.name for s, _ in ladders] == ["ladder", "ladder on all rows"]
    assert all(s.engine == WIDTH_CHOSEN_FIRST for s, _ in ladders)
    # the plan's count of each ladder's units and rows is the fit's own
    assert [(s.rows, s.fits) for s, _ in ladders] == [(r, u) for r, u, _ in fitted]
    assert ladders[0][0].fits == 9 * 7 and ladders[1][0].fits == 9
    # the width the probe prices at is the one the fit chose, not the grid's middle
    prepared, X, codes = cost._prepared(est, d.X, d.y)
    sigmas = np.sort(prepared._plan(X, codes).sigmas)
    assert est.sigma_ != pytest.approx(sigmas[len(sigmas) // 2])
    assert chosen_width(prepared, X, codes) == pytest.approx(est.sigma_)
    probe_rows = ladders[0][0].rows
    for (stage, priced), (_, _, spent) in zip(ladders, fitted, strict=True):
        assert priced == pytest.approx(spent * (stage.rows / probe_rows) ** 2, rel=1e-6)
    # finding the width draws nothing from the estimator's own generator
    prepared, X, codes = cost._prepared(PreconditionedSVC(random_state=3), d.X, d.y)
    prepared.random_state = rs = np.random.RandomState(3)
    state = rs.get_state()[1].copy()
    assert chosen_width(prepared, X, codes) > 0
    assert prepared.random_state is rs and np.array_equal(rs.get_state()[1], state)


def test_the_noncrossing_stages_are_priced_over_the_width_grid(fake_clocks, monkeypatch):
    """The non-crossing estimator fits its hinge tuning at every width of its grid, each
    weight at every lambda, and its final ladder at the width that tuning chooses (the
    old plan: one ladder at one lambda, and the final ladder, both at the middle cell).
    With each unit priced by its width on the fake clock, the hinge stage costs exactly
    what the fit's hinge ladders cost, and the final ladder the mean over the grid's
    widths of what it would cost at each (which width the tuning takes, no probe knows):
    between its cost at the cheapest and at the dearest width."""
    from wsvmgui.estimators.cost_plan import EVERY_WIDTH, HINGE_EVERY_WIDTH
    from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier

    cpu, wall = fake_clocks
    fitted = _width_priced_ladders(monkeypatch, cpu, wall)
    d = DESIGNS["wuliu2011_ex1"].sample(120, 0)
    est = NonCrossingLadderClassifier(criterion="hinge", n_weights=8)
    found = estimate_fit(est, d.X, d.y, budget=100.0)
    est.fit(d.X, d.y)
    stages = {s.name: (s, c) for s, c in zip(found.plan.stages, found.priced.cpu, strict=True)}
    (tuning, tuned), (final, priced) = stages["hinge tuning"], stages["non-crossing ladder"]
    assert (tuning.engine, final.engine) == (HINGE_EVERY_WIDTH, EVERY_WIDTH)
    S, L = 6, 7  # the default widths and lambdas
    assert (tuning.tasks, tuning.fits, final.fits) == (S, S * 7 * L, 7)
    # the fit's ladders: one per width on the 84 training rows, then the final one
    assert [(r, u) for r, u, _ in fitted] == [(84, 7 * L)] * S + [(120, 7)]
    assert tuning.rows == 84 and final.rows == 120
    assert tuned == pytest.approx(sum(s for _, _, s in fitted[:S]), rel=1e-6)
    prepared, X, codes = cost._prepared(est, d.X, d.y)
    sigmas = prepared._plan(X, codes).sigmas
    at = 7 * 0.001 * (2.0 / np.asarray(sigmas)) ** 2  # the final ladder at each width
    assert priced == pytest.approx(at.mean(), rel=1e-6)
    assert fitted[-1][2] == pytest.approx(at[np.argmin(abs(sigmas - est.sigma_))], rel=1e-6)
    assert at.min() < priced < at.max()
