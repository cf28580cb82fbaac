"""Fit plans counted before fitting: the estimators' own totals, unworkable splits refused
before anything is fitted, and memory caps that refuse before allocating."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.errors import InputError, MemoryBudgetError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.cost import cost_limit, plan
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier
from wsvmgui.estimators.preconditioned import PreconditionedSVC
from wsvmgui.estimators.probing import ProbingClassifier
from wsvmgui.evaluation.designs import DESIGNS
from wsvmgui.solvers.memory import memory_limits

TWO = DESIGNS["wuliu2011_ex1"].sample(120, 0)
THREE = DESIGNS["wu2010_ex1"].sample(120, 0)
L2, S1 = [0.1, 0.01], [1.0]

MC, NC = MulticlassWeightedSVMClassifier, NonCrossingLadderClassifier
CASES = [
    ("binary, 5-fold", WeightedSVMClassifier(n_weights=6, lambdas=L2, sigmas=[0.5, 1.0]), TWO),
    ("binary, fixed", WeightedSVMClassifier(n_weights=6, lam=0.01, sigma=1.0), TWO),
    ("binary, grid", WeightedSVMClassifier(engine="grid", lambdas=L2, sigmas=S1, cv=0.3), TWO),
    ("binary, calibrated", WeightedSVMClassifier(n_weights=6, lambdas=L2, calibration="auto"), TWO),
    (
        "binary, hold-out, calibrated",
        WeightedSVMClassifier(n_weights=6, lambdas=L2, sigmas=S1, cv=0.3, calibration="auto"),
        TWO,
    ),
    (  # sigma past the grid's top: the extension runs to its bound
        "binary, extended",
        WeightedSVMClassifier(n_weights=6, lambdas=L2, sigmas=[0.2, 0.3], tuning_extend=2),
        TWO,
    ),
    (
        "binary, extension unused",
        WeightedSVMClassifier(n_weights=6, lam=0.01, tuning_extend=2),
        TWO,
    ),
    (
        "pairwise",
        MC(scheme="pairwise", n_weights=5, lambdas=L2, sigmas=S1, calibration="none"),
        THREE,
    ),
    (
        "ova, 3-fold",
        MC(scheme="ova", n_weights=5, lambdas=L2, sigmas=S1, cv=3, calibration="none"),
        THREE,
    ),
    ("baseline1", MC(scheme="baseline1", lambdas=L2, sigmas=S1, final_n_weights=9), THREE),
    ("bp2", MC(scheme="bp2", n_weights=5, lambdas=L2, sigmas=S1, calibration="none"), THREE),
    ("non-crossing", NC(n_weights=6, lambdas=L2, sigmas=S1), TWO),
    ("non-crossing hinge", NC(n_weights=6, lambdas=L2, sigmas=S1, criterion="hinge"), TWO),
    ("non-crossing egkl", NC(n_weights=6, lambdas=L2, sigmas=S1, criterion="egkl", cv=3), TWO),
    ("preconditioned", PreconditionedSVC(n_weights=6, lambdas=L2, sigmas=S1), TWO),
    ("preconditioned, fixed", PreconditionedSVC(n_weights=6, lam=0.01, sigma=1.0, pt=0.1), TWO),
    ("probing", ProbingClassifier(n_thresholds=5), THREE),
    ("probing, tuned", ProbingClassifier(n_thresholds=4, param_grid={"max_depth": [2]}, cv=3), TWO),
    ("joint, tuned", JointWSVMClassifier(n_weights=6, lambdas=[0.01, 0.001], kernel="rbf"), THREE),
    ("joint, fixed", JointWSVMClassifier(n_weights=6, lam=0.01), THREE),
    ("joint, width tuned", JointWSVMClassifier(n_weights=6, lam=0.01, kernel="rbf"), THREE),
]


@pytest.mark.parametrize("name, est, data", CASES, ids=[c[0] for c in CASES])
def test_the_plan_counts_the_fits_the_estimator_reports(name, est, data):
    counted = plan(est, data.X, data.y)
    totals: list[int] = []
    est.fit(data.X, data.y, progress=lambda done, total, partial=None: totals.append(total))
    done = est.fit_info_.get("n_fits", est.fit_info_.get("n_classifiers"))
    at_most = sum(s.fits for s in counted.stages if s.at_most)
    assert done == totals[-1]
    # the baseline schemes' tie pairs are found by the fit: planned as every pair; a
    # grid extension only where the chosen cell sits on an edge: planned as its bound
    assert counted.fits - at_most <= done <= counted.fits
    pairs = est.fit_info_.get("tie_pairs", 0)
    grown = bool(est.fit_info_.get("tuning_extended"))
    assert (done > counted.fits - at_most) == (pairs > 0 or grown)
    assert pairs <= sum(s.tasks for s in counted.stages if s.at_most)
    assert all(s.fits >= 0 and s.tasks >= 1 and s.rows >= 1 for s in counted.stages)
    assert counted.n_rows == data.y.size and counted.n_classes == np.unique(data.y).size


def test_an_extension_is_planned_at_its_bound_and_reached_there():
    est = WeightedSVMClassifier(n_weights=6, lambdas=L2, sigmas=[0.2, 0.3], tuning_extend=2)
    counted = plan(est, TWO.X, TWO.y)
    grown = [s for s in counted.stages if s.name == "grid extension"]
    # two rounds of at most 5 cells (a corner), on each of the 5 folds, 5 weights each
    assert len(grown) == 1 and grown[0].at_most and grown[0].tasks == 2 * 5 * 5
    assert grown[0].fits == 2 * 5 * 5 * 5
    est.fit(TWO.X, TWO.y)
    extra = est.fit_info_["n_fits"] - (counted.fits - grown[0].fits)
    assert 0 < extra <= grown[0].fits  # sigma grew (one edge: 3 cells a round)
    assert len(est.fit_info_["tuning_extended"]["sigma"]) == 2


def test_screened_tuning_is_planned_as_its_two_rounds():
    data = DESIGNS["wuliu2011_ex1"].sample(1500, 1)
    est = WeightedSVMClassifier(
        engine="grid", n_weights=3, lambdas=[1, 0.1, 0.01, 0.001], sigmas=[0.5, 1.0], cv=0.3,
        calibration="none", tuning_extend=0,
    )  # fmt: skip
    counted = plan(est, data.X, data.y)
    assert [s.name for s in counted.stages] == ["screening", "tuning", "final ladder"]
    screening, tuning, _ = counted.stages
    assert screening.rows == pytest.approx(tuning.rows / 3, abs=1)  # a third of the rows
    assert tuning.tasks == 6  # the six best cells on the full fold
    totals: list[int] = []
    est.fit(data.X, data.y, progress=lambda d, t, p=None: totals.append(t))
    assert counted.fits == totals[-1] == est.fit_info_["n_fits"]


def _three_classes_one_tiny(rng, tiny: int = 3):
    X = rng.normal(size=(60 + tiny, 2))
    y = np.array(["a"] * 30 + ["b"] * 30 + ["tiny"] * tiny)
    return X, y


@pytest.mark.parametrize(
    "est",
    [
        MulticlassWeightedSVMClassifier(scheme="pairwise", n_weights=4, lambdas=[0.1], cv=5),
        JointWSVMClassifier(n_weights=6, lambdas=[0.1, 0.01], cv=5),
        ProbingClassifier(n_thresholds=3, param_grid={"max_depth": [2]}, cv=5),
    ],
    ids=["pairwise", "joint", "probing"],
)
def test_a_class_too_small_for_the_split_is_refused_before_fitting(est, monkeypatch):
    X, y = _three_classes_one_tiny(np.random.default_rng(0))

    monkeypatch.setattr(type(est), "_fit", lambda *a, **k: pytest.fail("the fit started"))
    with pytest.raises(InputError, match="'tiny' has only 3 point"):
        plan(est, X, y)
    with pytest.raises(InputError, match="'tiny' has only 3 point"):
        est.fit(X, y)


def test_a_tuning_set_without_a_class_is_refused_before_fitting(monkeypatch):
    """The sub-problem 'b vs c' has no tuning row of c: said by the plan, not the search."""
    from sklearn.model_selection import PredefinedSplit

    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 2))
    y = np.repeat(["a", "b", "c"], 30)
    fold = np.full(90, -1)
    fold[[0, 1, 30, 31]] = 0  # tuning rows of a and b only
    est = MulticlassWeightedSVMClassifier(
        scheme="pairwise", n_weights=4, lambdas=[0.1, 0.01], cv=PredefinedSplit(fold)
    )
    monkeypatch.setattr(type(est), "_fit", lambda *a, **k: pytest.fail("the fit started"))
    with pytest.raises(InputError, match="no point in any tuning part|only one of its classes"):
        est.fit(X, y)


def test_an_absurd_weight_grid_is_refused_before_it_is_allocated(monkeypatch):
    import wsvmgui.ladder.weights as weights

    monkeypatch.setattr(weights, "weight_grid", lambda M: pytest.fail(f"built M = {M}"))
    est = WeightedSVMClassifier(engine="grid", n_weights=10**12, lam=0.01, sigma=1.0)
    with pytest.raises(MemoryBudgetError, match=r"999,999,999,999 weights.*n_weights"):
        est.fit(TWO.X, TWO.y)


def test_a_simplex_grid_for_ten_classes_is_refused_by_memory():
    """JointWSVMClassifier(n_weights=20) with K = 10: C(19, 9) = 92,378 grid weights for each of
    30 tuning candidates, the RBF features as many as the rows."""
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(300, 3)), np.repeat(np.arange(10), 30)
    est = JointWSVMClassifier(n_weights=20, kernel="rbf")
    with memory_limits(available=8 * 2**30), pytest.raises(MemoryBudgetError) as err:
        est.fit(X, y)
    assert "92,378 simplex weights (N = 20, K = 10)" in str(err.value)
    assert "coarser simplex grid" in str(err.value)


def test_memory_caps_hold_even_without_a_time_limit():
    est = WeightedSVMClassifier(engine="grid", n_weights=10**10, lam=0.01, sigma=1.0)
    with cost_limit(None), memory_limits(available=2**30), pytest.raises(MemoryBudgetError):
        est.fit(TWO.X, TWO.y)


def test_a_random_state_generator_is_not_drawn_by_planning():
    """The guard plans inside ``fit``: the folds the fit draws stay those it drew before."""
    from wsvmgui.estimators.cost_plan import plan_fit

    est = WeightedSVMClassifier(n_weights=5, lambdas=L2, sigmas=S1)
    est.set_params(random_state=np.random.RandomState(3))
    est.classes_ = np.unique(TWO.y)
    plan_fit(est, TWO.X, np.searchsorted(est.classes_, TWO.y))
    assert est.random_state.randint(10**6) == np.random.RandomState(3).randint(10**6)


def test_one_vs_all_is_planned_with_its_own_screening_threshold():
    """The plan reads the estimator's threshold (One-vs-All screens from 300 rows per
    fold, the other schemes from 1000): 600 rows on a 30% hold-out, 420 per fold."""
    data = DESIGNS["wu2010_ex1"].sample(600, 0)
    grids = {"n_weights": 5, "lambdas": [1, 0.1, 0.01, 0.001], "sigmas": [0.5, 1.0], "cv": 0.3}
    ova, pairwise = MC(scheme="ova", **grids), MC(scheme="pairwise", **grids)
    assert ova._screen_min_rows == 300 < 420 < pairwise._screen_min_rows
    assert [s.name for s in plan(ova, data.X, data.y).stages][:2] == ["screening", "tuning"]
    assert "screening" not in [s.name for s in plan(pairwise, data.X, data.y).stages]


@pytest.mark.parametrize(
    "est",
    [
        NC(),  # the defaults: EGKL of independent ladders, then the finer final ladder
        NC(criterion="hinge"),  # a ladder per width on the split, each weight at 7 lambdas
        NC(criterion="egkl", lambdas=L2, sigmas=[0.5, 1.0], cv=3),
        NC(criterion="hinge", refit=False, lambdas=L2),
    ],
    ids=["defaults", "hinge", "egkl", "hinge, no refit"],
)
def test_the_noncrossing_plan_counts_each_stage_as_the_fit_does(est, monkeypatch):
    """Every non-crossing ladder the fit makes, counted by wrapping the estimator's own
    ``_ladder``: the hinge tuning's (one per width, ``weights x lambdas`` fits each, on the
    training split) and the final one (the finer final grid on small data, on every row)
    are the plan's stages, fits, tasks and rows; the stages add up to the fit's total."""
    made: list[tuple[int, int, bool]] = []  # (rows, fits, hinge) per ladder
    real = NC._ladder

    def counted(self, X, y, weights, *args, **kwargs):
        grid = kwargs.get("lam_grid")
        made.append((len(X), np.size(weights) * (1 if grid is None else np.size(grid)),
                     grid is not None))  # fmt: skip
        return real(self, X, y, weights, *args, **kwargs)

    monkeypatch.setattr(NC, "_ladder", counted)
    data = TWO
    stages = {s.name: s for s in plan(est, data.X, data.y).stages}
    est.fit(data.X, data.y)
    hinge = [(r, f) for r, f, h in made if h]
    final = [(r, f) for r, f, h in made if not h]
    if est.criterion == "hinge":
        s = stages["hinge tuning"]
        assert len(hinge) == s.tasks == np.size(est.tuning_.sigmas) == 6  # the default widths
        assert sum(f for _, f in hinge) == s.fits and {r for r, _ in hinge} == {s.rows}
    else:
        assert not hinge and "hinge tuning" not in stages
    if est.refit:
        s = stages["non-crossing ladder"]
        assert final == [(s.rows, s.fits)] == [(data.y.size, est.weights_.size)]
        if est.n_weights is None:  # the finer final grid: FINAL_BUDGET // 120 = 133 intervals
            assert s.fits == 132
    else:
        assert not final and "non-crossing ladder" not in stages
    assert sum(s.fits for s in stages.values()) == est.fit_info_["n_fits"]
