"""Presets: complete, valid settings sized to the data, for every scheme."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.app.datasets import load_builtin, split_dataset
from wsvmgui.app.presets import (
    QUICK_C,
    QUICK_M,
    default_scheme,
    lambda_for,
    preset_settings,
    sigma_scale,
)
from wsvmgui.app.schemes import SCHEMES, make_estimator
from wsvmgui.app.settings import RunSettings
from wsvmgui.errors import InputError


@pytest.fixture(scope="module")
def demo():
    return split_dataset(load_builtin("demo"), 0.0, 0.3, 0, standardise=True)


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_quick_preset_is_valid_for_every_scheme(demo, scheme):
    s = preset_settings("quick", scheme, demo.train.X, demo.train.y)
    assert s.scheme == scheme
    make_estimator(s, 2)  # builds: options and parameters accepted
    if scheme.startswith("joint"):
        assert s.joint_n == 10 and len(s.lambdas) == 1 and len(s.sigmas) == 1
    else:
        # M >= 40: estimates on a 1/40 grid, not the 0.05 / 0.95 ends of M = 10
        assert s.n_weights >= 40 and s.tuning == "split"
        n_fit = round(demo.train.size * (1 - s.tune_fraction))
        assert s.lambdas == [lambda_for(C, n_fit) for C in QUICK_C]
        assert len(s.sigmas) == 3


def test_widths_follow_the_scale_of_the_data(demo):
    s1 = preset_settings("quick", "binary", demo.train.X, demo.train.y)
    s10 = preset_settings("quick", "binary", 10 * demo.train.X, demo.train.y)
    np.testing.assert_allclose(s10.sigmas, 10 * np.asarray(s1.sigmas), rtol=0.02)
    assert sigma_scale(demo.train.X, demo.train.y) == pytest.approx(s1.sigmas[1], rel=0.01)


def test_joint_grid_shrinks_with_more_classes():
    for name, N in (("design:wu2010_ex1", 10), ("design:wu2010_ex4", 7)):
        sp = split_dataset(load_builtin(name, n=150), 0.0, 0.3, 0)
        s = preset_settings("quick", "joint-direct", sp.train.X, sp.train.y)
        assert s.joint_n == N


def test_standard_and_thorough_are_the_library_defaults_and_more(demo):
    std = preset_settings("standard", "binary", demo.train.X, demo.train.y)
    assert std == RunSettings(scheme="binary")
    th = preset_settings("thorough", "binary", demo.train.X, demo.train.y)
    assert th.n_weights == 80 and th.tuning == "cv" and th.cv_folds == 10


def test_kept_settings_and_dropped_options(demo):
    base = RunSettings(
        scheme="probing", seed=7, n_jobs=2, options={"learner": "svm"}, scheduler="tcp://h:8786"
    )
    same = preset_settings("quick", "probing", demo.train.X, demo.train.y, base)
    assert same.seed == 7 and same.n_jobs == 2 and same.options == {"learner": "svm"}
    assert same.scheduler == "tcp://h:8786"  # where the fits run is not the preset's business
    other = preset_settings("quick", "binary", demo.train.X, demo.train.y, base)
    assert other.options == {}  # the binary ladder takes no "learner"


def test_default_scheme_by_classes():
    assert [default_scheme(k) for k in (2, 3, 4, 5, 9)] == [
        "binary",
        "pairwise",
        "pairwise",
        "bp1",
        "bp1",
    ]


def test_unknown_names_are_refused(demo):
    with pytest.raises(InputError, match="preset"):
        preset_settings("fast", "binary", demo.train.X, demo.train.y)
    with pytest.raises(InputError, match="scheme"):
        preset_settings("quick", "nope", demo.train.X, demo.train.y)


@pytest.mark.parametrize("preset", ["quick", "standard", "thorough"])
@pytest.mark.parametrize(
    ("scheme", "kernel"), [("pairwise", "rbf"), ("bp1", "linear"), ("ova", "rbf")]
)
def test_what_pair_tuning_decides_is_what_it_changes_in_the_estimator(preset, scheme, kernel):
    """pair_tuning_decides (the settings panel's note, and whether its field is enabled)
    names exactly the parts of the tuning plan that differ between pair_tuning "folds" and
    "holdout" in the estimator each preset's settings build: the quick and standard
    presets leave it all on three classes (the estimator's own pair tuning); thorough
    sets the folds; One-vs-All has none."""
    from dataclasses import replace

    from wsvmgui.app.schemes import pair_tuning_decides
    from wsvmgui.evaluation.designs import simulate

    d = simulate("wu2010_ex1", 150, seed=1)
    codes = np.unique(d.y, return_inverse=True)[1]
    base = RunSettings(kernel=kernel)
    s = preset_settings(preset, scheme, d.X, d.y, base=base)
    seen = {}
    for choice in ("folds", "holdout"):
        est = make_estimator(replace(s, pair_tuning=choice), 3)
        est.classes_ = np.unique(d.y)
        plan = est._plan(d.X, codes)
        seen[choice] = {
            "split": len(plan.folds),
            "lambda grid": tuple(est._lambda_grid(100)),
            "sigma grid": tuple(plan.sigmas) if kernel == "rbf" else (),
        }
    changed = {k for k in seen["folds"] if seen["folds"][k] != seen["holdout"][k]}
    assert changed == set(pair_tuning_decides(s, 3))
    if scheme == "ova":
        assert pair_tuning_decides(s, 3) == ()
    elif preset != "thorough":
        assert "split" in pair_tuning_decides(s, 3) and "lambda grid" in pair_tuning_decides(s, 3)
    assert pair_tuning_decides(s, 2) == ()  # two classes: the binary ladder


@pytest.mark.parametrize("scheme", ["pairwise", "bp1"])
def test_quick_preset_keeps_the_pair_schemes_own_tuning_on_three_classes(scheme):
    """On three or more classes the quick preset leaves the pair schemes' tuning to the
    estimator: the same 3 folds, 4 x 4 grid and tuning rule as the library's default
    (only M is the preset's), so the first multiclass view shows the default; on two
    classes (the binary ladder) and for One-vs-All it keeps its 3 x 3 hold-out."""
    from wsvmgui.estimators.multiclass import PAIR_C_GRID, PAIR_SIGMA_FACTORS
    from wsvmgui.evaluation.designs import simulate

    d = simulate("wu2010_ex1", 150, seed=1)
    s = preset_settings("quick", scheme, d.X, d.y)
    assert (s.tuning, s.lambdas, s.sigmas, s.n_weights) == ("auto", None, None, QUICK_M)
    quick = make_estimator(s, 3)
    default = make_estimator(RunSettings(scheme=scheme), 3)
    mine = quick.get_params()
    theirs = default.get_params()
    assert {k for k in mine if mine[k] != theirs[k]} == {"n_weights"}
    est = quick.set_params(n_jobs=1).fit(d.X, d.y)
    # every pair (3, or BP1's 2 baseline pairs) tuned on the default's coarse grid, by its rule
    assert len(est.tuning_) == (3 if scheme == "pairwise" else 2)
    for t in est.tuning_.values():
        assert t.axes["sigma"].size == len(PAIR_SIGMA_FACTORS)
        assert t.axes["lambda"].size == len(PAIR_C_GRID)
        assert t.rule == "one_se"  # tuning_rule "auto" on folds (the minimum on a hold-out)
    ova = preset_settings("quick", "ova", d.X, d.y)
    assert ova.tuning == "split" and len(ova.lambdas) == len(QUICK_C)
    two = simulate("wuliu2011_ex1", 100, seed=0)
    assert preset_settings("quick", scheme, two.X, two.y).tuning == "split"
