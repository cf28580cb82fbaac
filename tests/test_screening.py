"""Screened tuning (wsvmgui.ladder.screening): every cell on a subsample, the best few on
the full folds; checked against the unscreened search's own scores and the truth."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.app.capabilities import engine_notes
from wsvmgui.app.schemes import make_estimator
from wsvmgui.app.settings import RunSettings
from wsvmgui.cli import build_parser
from wsvmgui.errors import InputError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.gridsearch import Extension
from wsvmgui.ladder.screening import Screening, best_cells, screened_search
from wsvmgui.ladder.search import LadderProblem, search_ladders
from wsvmgui.ladder.splits import holdout_split, kfold_splits
from wsvmgui.ladder.tuning import default_lambda_grid
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.progress import ProgressTracker
from wsvmgui.solvers.kernels import Kernel


def test_best_cells_are_the_lowest_finite_scores_ties_in_grid_order():
    egkl = np.array([[0.3, 0.1, np.inf], [0.1, np.nan, 0.2]])
    np.testing.assert_array_equal(best_cells(egkl, 2), [[False, True, False], [True, False, False]])
    np.testing.assert_array_equal(
        best_cells(egkl, 10), [[True, True, False], [True, False, True]]
    )  # never a failed (inf) or missing (NaN) cell


def test_subsample_cuts_each_training_part_and_keeps_the_tuning_rows():
    folds = kfold_splits(np.repeat([0, 1], 150), 3, seed=0)
    small = Screening(share=0.25, seed=4).subsample(folds)
    for (train, test), (sub, same) in zip(folds, small, strict=True):
        assert sub.size == round(0.25 * train.size) and np.isin(sub, train).all()
        assert np.all(np.diff(sub) > 0)  # sorted, no repeats
        np.testing.assert_array_equal(same, test)
    again = Screening(share=0.25, seed=4).subsample(folds)
    np.testing.assert_array_equal(small[0][0], again[0][0])  # deterministic given the seed
    other = Screening(share=0.25, seed=5).subsample(folds)
    assert not np.array_equal(small[0][0], other[0][0])


def test_screening_applies_only_to_large_folds_and_grids_larger_than_kept():
    X = np.zeros((400, 1))
    prob = LadderProblem(np.arange(400), np.tile([1.0, -1.0], 200))
    folds = [(np.arange(300), np.arange(300, 400))]
    assert Screening(min_rows=300).applies(X, [prob], folds, [7])
    assert not Screening(min_rows=301).applies(X, [prob], folds, [7])
    assert not Screening(min_rows=300, keep=7).applies(X, [prob], folds, [7])


@pytest.fixture(scope="module")
def searched():
    d = simulate("wuliu2011_ex1", 500, 2)
    prob = LadderProblem(np.arange(d.y.size), np.where(d.y == d.classes[1], 1.0, -1.0))
    folds = [holdout_split(d.y, 0.3, seed=0)]
    lambdas = default_lambda_grid(folds[0][0].size)[::2]  # C = 0.1, 1, 10, 100
    sigmas = np.array([0.5, 1.0, 2.0])
    args = (d.X, [prob], folds, Kernel("rbf"), sigmas, [weight_grid(40)], [lambdas])
    full = search_ladders(*args, tracker=ProgressTracker(0))[0]
    screening = Screening(min_rows=200, keep=4, seed=1)
    screened = screened_search(*args, screening=screening, tracker=ProgressTracker(0))[0]
    return full, screened, screening


def test_kept_cells_score_as_in_the_full_search_and_the_best_of_them_wins(searched):
    full, screened, screening = searched
    kept = np.isfinite(screened.egkl)
    # the screening round's best cells, and only they, were fitted on the full folds
    np.testing.assert_array_equal(kept, best_cells(screened.screened, screening.keep))
    assert kept.sum() == screening.keep and np.isnan(screened.egkl[~kept]).all()
    # on the full folds a kept cell is exactly the unscreened search's cell
    np.testing.assert_allclose(screened.egkl[kept], full.egkl[kept], rtol=1e-12)
    li, j = np.unravel_index(np.nanargmin(screened.egkl), screened.egkl.shape)
    assert (screened.best_lambda, screened.best_sigma) == (
        screened.lambdas[li],
        screened.sigmas[j],
    )
    # 12 cells on the subsample plus 4 on the full fold, all answered by the path
    assert screened.engines == {"path": 12 + 4}


def test_screening_keeps_the_meaning_of_c_on_the_subsample(searched):
    full, screened, _ = searched
    # ranks of the subsample's scores follow the full search's (same C, fewer rows):
    # the full search's best cell is among the cells screening kept
    best = np.unravel_index(np.argmin(full.egkl), full.egkl.shape)
    assert np.isfinite(screened.egkl[best])


def test_screened_estimator_is_as_accurate_and_says_so():
    d = simulate("wuliu2011_ex1", 1500, 0)
    test = simulate("wuliu2011_ex1", 3000, 100)
    grids = {"lambdas": default_lambda_grid(1050)[1::2], "sigmas": [0.5, 1.0, 1.5]}
    fits = {
        s: WeightedSVMClassifier(screen=s, n_jobs=2, **grids).fit(d.X, d.y) for s in ("auto", None)
    }
    screened, full = fits["auto"], fits[None]
    assert full.tuning_.screened is None and np.isfinite(full.tuning_.egkl).all()
    assert screened.tuning_.screened is not None
    assert np.isfinite(screened.tuning_.egkl).sum() == 6  # of 9 cells
    assert screened.fit_info_["tuning_screened"] == 1 and full.fit_info_["tuning_screened"] == 0
    assert any("Tuning screened" in t for t in engine_notes(screened.fit_info_))
    assert not any("screened" in t for t in engine_notes(full.fit_info_))
    l1 = {
        s: float(np.mean(np.abs(f.predict_proba(test.X)[:, 1] - test.p[:, 1])))
        for s, f in fits.items()
    }
    assert l1["auto"] <= 1.1 * l1[None] + 0.005, l1
    assert l1["auto"] < 0.05, l1


def test_screen_setting_reaches_the_estimators_and_is_validated():
    for scheme in ("binary", "noncrossing", "ova", "pairwise"):
        k = 3 if scheme in ("ova", "pairwise") else 2
        on = make_estimator(RunSettings(scheme=scheme), k)
        off = make_estimator(RunSettings(scheme=scheme, screen=False), k)
        assert on.get_params()["screen"] == "auto" and off.get_params()["screen"] is None
    with pytest.raises(InputError, match="screen must be true or false"):
        RunSettings(screen="yes").validate()
    with pytest.raises(ValueError, match="screen"):
        WeightedSVMClassifier(screen="always").fit(np.eye(4), [0, 1, 0, 1])
    back = RunSettings.from_json(RunSettings(screen=False).to_json())
    assert back.screen is False


def test_cli_no_screen_flag():
    from wsvmgui.cli.fit_settings import settings_from_args as _settings_from_args

    parser = build_parser()
    args = parser.parse_args(["fit", "train.csv", "--label", "y", "--out", "p.csv", "--no-screen"])
    assert _settings_from_args(args).screen is False
    args = parser.parse_args(["fit", "train.csv", "--label", "y", "--out", "p.csv"])
    assert _settings_from_args(args).screen is True


def test_progress_total_is_announced_before_screening_and_reached_at_the_end():
    d = simulate("wuliu2011_ex1", 300, 3)
    prob = LadderProblem(np.arange(d.y.size), np.where(d.y == d.classes[1], 1.0, -1.0))
    folds = [holdout_split(d.y, 0.3, seed=0)]
    seen = []
    tracker = ProgressTracker(0, lambda done, total, _p=None: seen.append((done, total)))
    screened_search(
        d.X, [prob], folds, Kernel("rbf"), np.array([0.5, 1.0]), [weight_grid(10)],
        [default_lambda_grid(210)[:4]], screening=Screening(min_rows=100, keep=3),
        tracker=tracker,
    )  # fmt: skip
    totals = {t for _, t in seen}
    assert totals == {(8 + 3) * 9}  # 8 cells screened, 3 on the full fold, M - 1 = 9 units
    assert seen[-1][0] == tracker.total == (8 + 3) * 9


def test_a_screened_fit_survives_the_model_file():
    from wsvmgui.io.modelfile import FittedModel, model_from_bytes, model_to_bytes
    from wsvmgui.io.preprocessing import Preprocessing

    d = simulate("wuliu2011_ex1", 1450, 4)
    pre = Preprocessing.fit(d.X, ["x1", "x2"])
    X = pre.transform(d.X)
    settings = RunSettings(lambdas=[1e-3, 1e-4, 1e-5], sigmas=[0.5, 1.0, 2.0], n_jobs=2)
    est = make_estimator(settings, 2).fit(X, d.y)
    assert est.tuning_.screened is not None  # 1015 training rows: screened
    back = model_from_bytes(model_to_bytes(FittedModel(est, pre, "y", settings.to_dict(), {})))
    tuned = back.estimator.tuning_
    np.testing.assert_array_equal(tuned.screened, est.tuning_.screened)
    np.testing.assert_array_equal(np.isnan(tuned.egkl), np.isnan(est.tuning_.egkl))
    np.testing.assert_array_equal(back.estimator.predict_proba(X), est.predict_proba(X))


def test_an_extension_grows_only_the_full_round_and_keeps_the_screening_table():
    d = simulate("wuliu2011_ex1", 500, 2)
    prob = LadderProblem(np.arange(d.y.size), np.where(d.y == d.classes[1], 1.0, -1.0))
    folds = [holdout_split(d.y, 0.3, seed=0)]
    lambdas = default_lambda_grid(folds[0][0].size)[::2]
    sigmas = np.array([0.2, 0.3])  # far too narrow for this near-linear design
    args = (d.X, [prob], folds, Kernel("rbf"), sigmas, [weight_grid(20)], [lambdas])
    screening = Screening(min_rows=200, keep=3, seed=1)
    plain = screened_search(*args, screening=screening, tracker=ProgressTracker(0))[0]
    grown = screened_search(
        *args, screening=screening, tracker=ProgressTracker(0), extend=Extension(rounds=2)
    )[0]
    assert plain.edge.get("sigma") == "max"
    np.testing.assert_allclose(grown.extended["sigma"], [0.45, 0.675])
    assert grown.sigmas.size == 4 and grown.best_score < plain.best_score
    assert "lambda" not in grown.extended  # (C stays inside its grid on this draw)
    # the screening round is the same grid's: placed in the grown table, NaN where it grew
    assert grown.screened.shape == grown.score.shape
    np.testing.assert_array_equal(grown.screened[: lambdas.size, :2], plain.screened)
    assert np.isnan(grown.screened[:, 2:]).all()
    # the cells both searches fitted on the full folds score the same
    both = np.isfinite(plain.score)
    np.testing.assert_allclose(grown.score[: lambdas.size, :2][both], plain.score[both])
