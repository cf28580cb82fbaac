"""The calibration map's price (a stage of its own) and the bare ladder probe.

A fit with a ``calibration`` chooses a map for each problem after its cross-fits (the
binary default: the cross-validated choice among three maps, 80 fits by L-BFGS); the
ladder probe fits bare ladders, as a search's tasks do, not whole estimators whose
checks and bookkeeping each task would pay.  Times are given by construction on fake
clocks, never measured.
"""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.estimators import cost, cost_kinds, cost_probe, multiclass
from wsvmgui.estimators.binary import AUTO_CALIBRATION, WeightedSVMClassifier
from wsvmgui.estimators.cost import plan
from wsvmgui.estimators.cost_plan import CHOOSE_MAP, FitPlan, Stage
from wsvmgui.estimators.multiclass import (
    PAIR_AUTO_MAP,
    PAIR_LARGE_MAPS,
    MulticlassWeightedSVMClassifier,
)
from wsvmgui.evaluation.designs import DESIGNS

BINARY = DESIGNS["wuliu2011_ex1"].sample(120, 0)
THREE = DESIGNS["wu2010_ex1"].sample(150, 0)
CODES = np.unique(BINARY.y, return_inverse=True)[1]


def _stages(est, data) -> dict[str, Stage]:
    return {s.name: s for s in plan(est, data.X, data.y).stages}


def test_the_binary_calibration_map_is_a_stage_after_the_cross_fits():
    est = WeightedSVMClassifier(n_weights=10, lambdas=[0.1, 0.01], sigmas=[1.0])
    counted = plan(est, BINARY.X, BINARY.y)
    names = [s.name for s in counted.stages]
    assert names[-2:] == ["calibration cross-fits", "calibration map"]
    stages = {s.name: s for s in counted.stages}
    chosen = stages["calibration map"]
    # one map, on the cross-fitted points of every row of the final fit; no progress units
    assert (chosen.kind, chosen.fits, chosen.tasks) == ("map", 0, 1)
    assert chosen.rows == stages["final ladder"].rows == 120
    assert chosen.engine == AUTO_CALIBRATION  # "auto": the binary default's choice
    sigmoid = _stages(est.set_params(calibration="sigmoid"), BINARY)["calibration map"]
    assert sigmoid.engine == "sigmoid"
    assert "calibration map" not in _stages(est.set_params(calibration="none"), BINARY)


def test_the_pair_schemes_map_is_one_per_pair_and_the_large_data_choice(monkeypatch):
    est = MulticlassWeightedSVMClassifier(
        scheme="pairwise", n_weights=10, lambdas=[0.1, 0.01], sigmas=[1.0]
    )
    stages = _stages(est, THREE)
    counts = np.bincount(np.unique(THREE.y, return_inverse=True)[1])
    largest_pair = int(np.sort(counts)[-2:].sum())
    chosen = stages["calibration map"]
    assert (chosen.kind, chosen.fits, chosen.tasks) == ("map", 0, 3)
    assert chosen.rows == stages["final ladders"].rows == largest_pair
    assert chosen.engine == PAIR_AUTO_MAP  # "auto" under the pair schemes' tuning
    # above the one-SE limit, "widest_spline" chooses among the large data's maps
    monkeypatch.setattr(multiclass, "PAIR_AUTO_ONE_SE_MAX_ROWS", 100)
    large = _stages(est, THREE)["calibration map"]
    assert large.engine == CHOOSE_MAP + ",".join(PAIR_LARGE_MAPS)
    minimum = _stages(est.set_params(large_n_auto="min_sigmoid"), THREE)["calibration map"]
    assert minimum.engine == PAIR_AUTO_MAP


def test_the_map_probe_prices_each_problems_map_by_its_points(fake_clocks, monkeypatch):
    """Every map fitted costs 0.05 s on the fake clock, and nothing else costs anything:
    the stage of three maps on 5000 points each costs three maps on the probe's
    MAP_ROWS points scaled by the first power of the points."""
    cpu, wall = fake_clocks
    fitted: list[tuple[str, int]] = []

    def fit(engine, p, y):
        cpu.now += 0.05
        wall.now += 0.05
        fitted.append((engine, p.size))

    monkeypatch.setattr(cost_kinds, "fit_stage_map", fit)
    est = WeightedSVMClassifier().set_params()
    est.classes_ = np.array([0, 1])
    stage = Stage("calibration map", 0, 3, 5000, "map", "sigmoid", 3)
    priced = cost_probe.price_plan(
        est, BINARY.X, CODES, FitPlan("X", (stage,), 120, 2), budget=100.0
    )
    assert fitted == [("sigmoid", cost_kinds.MAP_ROWS)] * cost_kinds.MAP_TASKS
    assert priced.cpu[0] == pytest.approx(3 * 0.05 * 5000 / cost_kinds.MAP_ROWS)
    assert not priced.lower_bound[0]
    # a smaller stage is probed at its own points, unscaled
    fitted.clear()
    small = Stage("calibration map", 0, 1, 300, "map", "auto_plateau", 1)
    priced = cost_probe.price_plan(
        est, BINARY.X, CODES, FitPlan("X", (small,), 120, 2), budget=100.0
    )
    assert fitted[0] == ("auto_plateau", 300) and priced.cpu[0] == pytest.approx(0.05)


def test_the_map_probe_fits_the_map_the_fit_would():
    p, y = cost_kinds.map_points(400, 40)
    assert p.shape == y.shape == (400,) and set(np.unique(y)) <= {0, 1}
    assert np.allclose(p * 40, np.round(p * 40))  # count estimates on the weight grid
    assert cost_kinds.fit_stage_map("sigmoid", p, y).name == "sigmoid"
    assert cost_kinds.fit_stage_map(CHOOSE_MAP + "sigmoid", p, y).name in ("sigmoid", "spline")


def test_the_ladder_probe_fits_bare_ladders_not_the_estimator(fake_clocks, monkeypatch):
    """A ladder's start costs 0.01 s and each unit 0.001 s on the fake clock; the
    estimator's ``fit`` (its checks and bookkeeping, once per fit, not per task) is never
    called: a stage of 10 tasks of 39 units costs 10 starts and 390 units."""
    from wsvmgui.ladder import engines

    cpu, wall = fake_clocks
    calls: list[int] = []
    scored: list[tuple[int, int]] = []

    class Ladder:
        def estimate(self, K_cross, rule="count"):
            scored.append(K_cross.shape)

    def ladder(K, y, weights, lam, *, progress=None, should_cancel=None, **kwargs):
        assert K.shape == (y.size, y.size) and set(np.unique(y)) == {-1.0, 1.0}
        calls.append(y.size)
        cpu.now += 0.01
        wall.now += 0.01
        for k in range(1, weights.size + 1):
            should_cancel()
            cpu.now += 0.001
            wall.now += 0.001
            progress(k, weights.size, None)
        return Ladder()

    def whole_fit(*args, **kwargs):
        pytest.fail("the probe fitted a whole estimator")

    monkeypatch.setattr(engines, "fit_binary_ladder", ladder)
    monkeypatch.setattr(WeightedSVMClassifier, "fit", whole_fit)
    est = WeightedSVMClassifier(lambdas=[0.1, 0.01, 0.001], sigmas=[0.5, 1.0, 2.0])
    est.classes_ = np.array([0, 1])
    stage = Stage("tuning", 390, 10, 120, "ladder", "grid", 10)
    priced = cost_probe.price_plan(
        est, BINARY.X, CODES, FitPlan("X", (stage,), 120, 2), budget=100.0
    )
    assert calls and set(calls) == {120}
    # each task then estimates half its rows, as a search's task scores its fold's
    assert scored == [(60, 120)] * len(calls)
    assert priced.cpu[0] == pytest.approx(10 * 0.01 + 390 * 0.001)


def test_the_quick_bound_scales_a_map_by_its_points_not_their_power():
    maps = Stage("calibration map", 0, 2, 10_000, "map", "auto_plateau", 2)
    start, _ = cost._PESSIMISTIC["map"]
    assert cost.quick_bound(FitPlan("X", (maps,), 10_000, 2)) == pytest.approx(2 * start * 100)
    ladders = Stage("final ladder", 39, 1, 10_000, "ladder", "path")
    start, unit = cost._PESSIMISTIC["ladder"]
    assert cost.quick_bound(FitPlan("X", (ladders,), 10_000, 2)) == pytest.approx(
        (start + 39 * unit) * 100**2.5
    )


def test_a_ladder_task_is_priced_at_the_geometric_mean_over_the_probes_cells(
    fake_clocks, monkeypatch
):
    """The probe's fourth cell (the narrowest width) costs four times a unit of the others:
    the stage's task is priced at the geometric mean of the four tasks the probe fitted
    before its CPU target, not their median (the cheap cells alone) nor their mean."""
    from wsvmgui.ladder import engines

    cpu, wall = fake_clocks
    units = [0.001, 0.001, 0.001, 0.004, 0.001]  # per cell, in the probe's order

    class Ladder:
        def estimate(self, K_cross, rule="count"):
            pass

    def ladder(K, y, weights, lam, *, progress=None, should_cancel=None, **kwargs):
        unit = units.pop(0)
        cpu.now += 0.01
        wall.now += 0.01
        for k in range(1, weights.size + 1):
            should_cancel()
            cpu.now += unit
            wall.now += unit
            progress(k, weights.size, None)
        return Ladder()

    monkeypatch.setattr(engines, "fit_binary_ladder", ladder)
    est = WeightedSVMClassifier(lambdas=[0.1, 0.01, 0.001], sigmas=[0.5, 1.0, 2.0])
    est.classes_ = np.array([0, 1])
    stage = Stage("tuning", 390, 10, 120, "ladder", "grid", 10)
    priced = cost_probe.price_plan(
        est, BINARY.X, CODES, FitPlan("X", (stage,), 120, 2), budget=100.0
    )
    tasks = [0.01 + 39 * 0.001] * 3 + [0.01 + 39 * 0.004]  # 0.147 s, then past TARGET_CPU
    assert len(units) == 1  # the fifth cell was not fitted
    geometric = float(np.exp(np.mean(np.log(tasks))))
    assert priced.cpu[0] == pytest.approx(10 * geometric)
    assert 10 * np.median(tasks) < priced.cpu[0] < 10 * np.mean(tasks)
