"""The plateau challenge of the multiclass pairs' ``calibration="auto"`` (acc-mcplateau).

Up to :data:`PAIR_AUTO_ONE_SE_MAX_ROWS` rows a pair of the pair schemes takes the plateau
map instead of the sigmoid only where (1) the plateau fitted on all the pair's rows lowers
their total log loss by more than :data:`PAIR_AUTO_SCREEN` nats and (2) its 5-fold
cross-validated per-row log loss (stratified folds, the estimator's seed) beats the
sigmoid's by more than :data:`PAIR_AUTO_GUARD` standard errors of the paired difference.
Checked against that definition computed here from scikit-learn's folds and the two maps'
own fits, on pairs whose true calibration curve is a step (the plateau's shape) or a
sigmoid, and on a fitted estimator's own cross-fitted rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

import wsvmgui.estimators.multiclass as mc
from wsvmgui.estimators._ladder import TuningPlan
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.recalibration import challenge_map, fit_map
from wsvmgui.solvers.kernels import Kernel


def _plan(n_rows: int) -> TuningPlan:
    rows = np.arange(n_rows)
    folds = [(rows[rows % 3 != k], rows[rows % 3 == k]) for k in range(3)]
    return TuningPlan(folds, rows, Kernel("rbf"), np.array([1.0]))


def _pairs(m: int, step: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """m estimates and labels whose true map is a step (0.15 below 1/2, 0.85 above) or a
    sigmoid of the estimate's logit."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, m)
    truth = np.where(p > 0.5, 0.85, 0.15) if step else 1 / (1 + np.exp(-np.log(p / (1 - p))))
    return p, (rng.uniform(size=m) < truth).astype(float)


def _loss(q: np.ndarray, y: np.ndarray) -> np.ndarray:
    q = np.clip(q, 1e-12, 1 - 1e-12)
    return -(y * np.log(q) + (1 - y) * np.log1p(-q))


def _by_definition(p: np.ndarray, y: np.ndarray, guard: float, screen: float, seed: int) -> str:
    """The map the challenge takes, computed from its definition."""
    sig, plat = fit_map("sigmoid", p, y), fit_map("plateau", p, y)
    if not np.sum(_loss(sig(p), y) - _loss(plat(p), y)) > screen:
        return "sigmoid"
    folds = StratifiedKFold(5, shuffle=True, random_state=seed).split(p[:, None], y)
    d = np.empty(p.size)
    for tr, te in folds:
        a = fit_map("plateau", p[tr], y[tr])(p[te])
        b = fit_map("sigmoid", p[tr], y[tr])(p[te])
        d[te] = _loss(a, y[te]) - _loss(b, y[te])
    se = d.std(ddof=1) / np.sqrt(d.size)
    return "plateau" if d.mean() < -guard * se else "sigmoid"


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("m", "step"), [(150, True), (400, True), (400, False), (60, True)])
def test_the_challenge_takes_the_map_its_definition_takes(m, step, seed):
    p, y = _pairs(m, step, seed)
    for guard, screen in ((2.0, 2.0), (0.0, 0.0), (1.0, 5.0)):
        want = _by_definition(p, y, guard, screen, seed)
        got = challenge_map(p, y, "sigmoid", "plateau", guard=guard, screen=screen, seed=seed)
        assert got.name == want
        ref = fit_map(want, p, y)
        grid = np.linspace(0.01, 0.99, 41)
        np.testing.assert_allclose(got(grid), ref(grid), atol=1e-10)


def test_a_step_takes_the_plateau_and_a_sigmoid_keeps_the_sigmoid():
    # the definition's verdicts on clear cases (so that the test above compares both ways)
    assert challenge_map(*_pairs(400, True), seed=0).name == "plateau"
    assert challenge_map(*_pairs(400, False), seed=0).name == "sigmoid"
    # a class with fewer than two rows: the sigmoid, without cross-validation
    p = np.linspace(0.1, 0.9, 20)
    y = np.zeros(20)
    y[-1] = 1.0
    assert challenge_map(p, y).name == "sigmoid"


def test_the_estimator_challenges_up_to_the_row_limit_only():
    est = MulticlassWeightedSVMClassifier(scheme="bp1", random_state=3)
    est.classes_ = np.arange(5)
    small, large = _plan(mc.PAIR_AUTO_ONE_SE_MAX_ROWS), _plan(mc.PAIR_AUTO_ONE_SE_MAX_ROWS + 1)
    step = _pairs(400, True)
    seed = 3
    want = _by_definition(*step, mc.PAIR_AUTO_GUARD, mc.PAIR_AUTO_SCREEN, seed)
    assert want == "plateau"
    assert est._pair_map(small, *step).name == want
    # above the limit: today's large-n choice (sigmoid or the guarded spline), no plateau
    assert est._pair_map(large, *step).name in ("sigmoid", "spline")
    assert est.set_params(large_n_auto="min_sigmoid")._pair_map(large, *step).name == "sigmoid"
    # an explicit map and One-vs-All are not challenged
    assert est.set_params(calibration="sigmoid")._pair_map(small, *step).name == "sigmoid"
    est.set_params(calibration="auto", scheme="ova")
    assert est._pair_map(small, *step).name != "plateau"


def test_a_fitted_estimators_pair_maps_follow_the_definition(monkeypatch):
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    orig = MulticlassWeightedSVMClassifier._pair_map

    def spy(self, plan, p, y):
        seen.append((np.array(p), np.array(y)))
        return orig(self, plan, p, y)

    monkeypatch.setattr(MulticlassWeightedSVMClassifier, "_pair_map", spy)
    d = simulate("zeng_ex4", 500, 1)  # the record's draw: one pair takes the plateau
    X, y = d.X, d.y
    est = MulticlassWeightedSVMClassifier(scheme="bp1", random_state=0).fit(X, y)  # the record's
    assert len(seen) == len(est.calibrations_) > 0
    for (p, yy), g in zip(seen, est.calibrations_, strict=True):
        want = _by_definition(p, yy, mc.PAIR_AUTO_GUARD, mc.PAIR_AUTO_SCREEN, 0)
        assert g.name == want
    assert [g.name for g in est.calibrations_].count("plateau") == 1
    # without the challenger the same fit keeps every pair's sigmoid
    monkeypatch.setattr(mc, "PAIR_AUTO_CHALLENGER", None)
    seen.clear()
    other = MulticlassWeightedSVMClassifier(scheme="bp1", random_state=0).fit(X, y)
    assert all(g.name == "sigmoid" for g in other.calibrations_)
