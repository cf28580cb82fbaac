"""The ladder engines at the estimator level: the exact path as the default, its agreement
with the grid, the fallback to the grid, tuning through the path, and the settings."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import wsvmgui.ladder.engines as engines
from wsvmgui.app.capabilities import engine_notes
from wsvmgui.app.schemes import SCHEMES, make_estimator
from wsvmgui.app.settings import RunSettings
from wsvmgui.errors import InputError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.estimators.preconditioned import PreconditionedSVC
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.engines import (
    DEFAULT_ENGINE,
    PathFallbackWarning,
    PathLadder,
    fit_binary_ladder,
)
from wsvmgui.ladder.grid import Ladder
from wsvmgui.ladder.path import PathBreakdown, fit_path
from wsvmgui.ladder.search import EGKL_FLOOR, LadderProblem, search_ladders
from wsvmgui.ladder.splits import kfold_splits
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.progress import ProgressTracker
from wsvmgui.solvers.kernels import Kernel
from wsvmgui.solvers.wsvm import DEFAULT_KKT_TOL

FIXED = {"lam": 0.005, "sigma": 1.0}


@pytest.fixture(scope="module")
def data():
    tr = simulate("wuliu2011_ex1", 120, seed=5)
    te = simulate("wuliu2011_ex1", 400, seed=6)
    return tr.X, tr.y, te.X


def _break(*_args, **_kwargs):
    raise PathBreakdown("forced breakdown for the test at pi = 0.5")


# ------------------------------------------------------------------ the default
def test_default_engine_is_the_path_in_every_ladder_estimator(data):
    X, y, Xt = data
    est = WeightedSVMClassifier(calibration="none", **FIXED).fit(X, y)
    assert est.engine == DEFAULT_ENGINE
    assert isinstance(est.ladder_, PathLadder)
    assert est.fit_info_["final_engines"] == {"path": 1}
    assert est.fit_info_["path_fallbacks"] == 0
    # Grid-free: the estimate is not quantised to the drawing grid's bins.
    M = est.weights_.size + 1
    p = est.predict_proba(Xt)[:, 1]
    assert np.unique(np.round(p * 2 * M, 6)).size > 4 * M
    # ...and is the path's own measure of {pi : f_pi(x) > 0}.
    path = fit_path(Kernel("rbf", sigma=1.0)(X), np.where(y == est.classes_[1], 1.0, -1.0), 0.005)
    np.testing.assert_allclose(p, path.estimate(Kernel("rbf", sigma=1.0)(Xt, X)).p, atol=1e-9)
    pre = PreconditionedSVC(ladder="independent", pt=0.1, **FIXED).fit(X, y)
    assert isinstance(pre.ladder_, PathLadder) and pre.fit_info_["final_engines"] == {"path": 1}


def test_tuned_fit_runs_every_cell_through_the_path(data):
    X, y, _ = data
    est = WeightedSVMClassifier(
        calibration="none", lambdas=[0.02, 0.002], sigmas=[0.7, 1.4], cv=3
    ).fit(X, y)
    assert est.fit_info_["tuning_engines"] == {"path": 2 * 2 * 3}
    assert est.fit_info_["final_engines"] == {"path": 1}
    assert est.tuning_.engines == {"path": 12} and est.tuning_.fallbacks == []


def test_engine_parameter_is_validated(data):
    X, y, _ = data
    with pytest.raises(InputError, match="engine"):
        WeightedSVMClassifier(calibration="none", engine="exact", **FIXED).fit(X, y)
    with pytest.raises(InputError, match="engine"):
        fit_binary_ladder(np.eye(4), np.array([1.0, -1, 1, -1]), weight_grid(4), 0.1, engine="x")


# ------------------------------------------------------------------ path vs grid
def test_path_and_grid_agree_within_the_grid_resolution(data):
    X, y, Xt = data
    M = 40
    path = WeightedSVMClassifier(calibration="none", n_weights=M, **FIXED).fit(X, y)
    grid = WeightedSVMClassifier(calibration="none", engine="grid", n_weights=M, **FIXED).fit(X, y)
    ep, eg = path.estimate(Xt), grid.estimate(Xt)
    both = ep.monotone & eg.monotone
    assert both.mean() > 0.95
    # The exact crossing lies in the grid's bracket, up to the grid solver's tolerance
    # (libsvm's default tolerance moves crossings by up to ~5e-3; path_speed.md).
    inside = (ep.p[both] >= eg.lo[both] - 2e-3) & (ep.p[both] <= eg.hi[both] + 2e-3)
    assert inside.mean() >= 0.99
    assert np.max(np.abs(ep.p[both] - eg.p[both])) <= 1.0 / M
    # Decision values at the drawing weights are the grid's own fits (same problems).
    D_path, D_grid = path.ladder_decision(Xt), grid.ladder_decision(Xt)
    assert D_path.shape == D_grid.shape == (Xt.shape[0], M - 1)
    assert np.mean(np.sign(D_path) == np.sign(D_grid)) > 0.995


# ------------------------------------------------------------------ the fallback
def test_a_broken_path_falls_back_to_the_checked_grid_with_a_warning(data, monkeypatch, caplog):
    X, y, Xt = data
    monkeypatch.setattr(engines, "fit_path", _break)
    with (
        caplog.at_level(logging.WARNING, logger="wsvmgui.ladder.engines"),
        pytest.warns(PathFallbackWarning, match="forced breakdown"),
    ):
        est = WeightedSVMClassifier(calibration="none", n_weights=10, **FIXED).fit(X, y)
    assert any("forced breakdown" in r.getMessage() for r in caplog.records)
    assert isinstance(est.ladder_, Ladder) and "forced breakdown" in est.ladder_.fallback
    assert est.fit_info_["final_engines"] == {"grid": 1}
    assert est.fit_info_["path_fallbacks"] == 1
    assert est.fit_info_["max_kkt_residual"] <= DEFAULT_KKT_TOL
    grid = WeightedSVMClassifier(calibration="none", engine="grid", n_weights=10, **FIXED).fit(X, y)
    np.testing.assert_array_equal(est.predict_proba(Xt), grid.predict_proba(Xt))


def test_fallback_in_tuning_is_counted_and_reported(data, monkeypatch):
    X, y, _ = data
    real = engines.fit_path
    calls = []

    def flaky(K, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            _break()
        return real(K, *args, **kwargs)

    monkeypatch.setattr(engines, "fit_path", flaky)
    with pytest.warns(PathFallbackWarning):
        est = WeightedSVMClassifier(calibration="none", lambdas=[0.02, 0.002], sigma=1.0, cv=2).fit(
            X, y
        )
    assert est.tuning_.engines == {"path": 3, "grid": 1}
    assert len(est.tuning_.fallbacks) == 1 and "forced" in est.tuning_.fallbacks[0]
    assert est.fit_info_["path_fallbacks"] == 1


# ------------------------------------------------------------------ auto
def test_auto_gives_costly_paths_to_the_grid_without_a_warning(data, monkeypatch, caplog):
    X, y, Xt = data
    # An elbow limit of one point: every path of this data stops (PathTooCostly).
    monkeypatch.setattr(engines, "auto_max_elbow", lambda n: 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PathFallbackWarning)
        with caplog.at_level(logging.INFO, logger="wsvmgui.ladder.engines"):
            est = WeightedSVMClassifier(
                engine="auto", lambdas=[0.02, 0.002], sigma=1.0, cv=2, n_weights=10,
                calibration="none",  # the 5 ladders counted: tuning and final only
            ).fit(X, y)  # fmt: skip
    assert isinstance(est.ladder_, Ladder) and "elbow" in est.ladder_.switched
    assert est.ladder_.fallback == ""
    info = est.fit_info_
    assert info["tuning_engines"] == {"grid": 4} and info["final_engines"] == {"grid": 1}
    assert info["auto_grid"] == 5 and info["path_fallbacks"] == 0
    notes = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert sum("auto: grid ladder" in m for m in notes) == 5
    grid = WeightedSVMClassifier(
        engine="grid", lambdas=[0.02, 0.002], sigma=1.0, cv=2, n_weights=10, calibration="none"
    ).fit(X, y)
    np.testing.assert_array_equal(est.predict_proba(Xt), grid.predict_proba(Xt))
    assert engine_notes(info) == [
        "Engine auto: the grid ladder for 5 of 5 ladders (large elbows), the exact path "
        "for the rest."
    ]


def test_auto_keeps_paths_with_small_elbows_and_still_falls_back_on_breakdown(data, monkeypatch):
    X, y, Xt = data
    auto = WeightedSVMClassifier(calibration="none", engine="auto", **FIXED).fit(X, y)
    path = WeightedSVMClassifier(calibration="none", engine="path", **FIXED).fit(X, y)
    assert auto.ladder_.path.max_elbow <= engines.auto_max_elbow(y.size)
    assert auto.fit_info_["final_engines"] == {"path": 1} and auto.fit_info_["auto_grid"] == 0
    np.testing.assert_array_equal(auto.predict_proba(Xt), path.predict_proba(Xt))
    assert engine_notes(auto.fit_info_) == []
    monkeypatch.setattr(engines, "fit_path", _break)
    with pytest.warns(PathFallbackWarning, match="forced breakdown"):
        est = WeightedSVMClassifier(calibration="none", engine="auto", n_weights=10, **FIXED).fit(
            X, y
        )
    assert est.fit_info_["path_fallbacks"] == 1 and est.fit_info_["auto_grid"] == 0
    assert engine_notes(est.fit_info_) == [
        "Weight path broke down for 1 of 1 ladders; the grid ladder answered for them "
        "(reasons in the log)."
    ]


def _recorder(seen):
    return lambda done, _total, _partial: seen.append(done)


def test_progress_counts_the_grid_units_whatever_the_engine(monkeypatch):
    d = simulate("wuliu2011_ex1", 60, seed=1)
    K, y = Kernel("rbf", sigma=1.0)(d.X), np.where(d.y > 0, 1.0, -1.0)
    w = weight_grid(12)
    for engine in ("path", "grid"):
        seen: list[int] = []
        fit_binary_ladder(K, y, w, 0.01, engine=engine, progress=_recorder(seen))
        assert seen == list(range(1, 12)), engine
    # Final fits: the last half of the units carry the fits at every other weight.
    events: list = []
    lad = fit_binary_ladder(
        K, y, w, 0.01, engine="path", report_fits=True,
        progress=lambda done, _t, fit: events.append((done, fit)),
    )  # fmt: skip
    assert [d for d, _ in events] == list(range(1, 12))
    fits = [f for _, f in events if f is not None]
    np.testing.assert_allclose([f.pi for f in fits], w[1::2])
    for f in fits:
        np.testing.assert_allclose(f.decision(K), lad.path.decision_at(K, [f.pi])[:, 0])
        assert np.all(f.alpha >= -1e-12)
    monkeypatch.setattr(engines, "fit_path", _break)
    seen = []
    with pytest.warns(PathFallbackWarning):
        fit_binary_ladder(K, y, w, 0.01, engine="path", progress=_recorder(seen))
    assert seen == list(range(1, 12))


# ------------------------------------------------------------------ tuning
def test_tuning_through_the_path_chooses_the_cell_a_fine_grid_chooses():
    d = simulate("wuliu2011_ex1", 90, seed=3)
    y = np.where(d.y > 0, 1.0, -1.0)
    prob = LadderProblem(np.arange(y.size), y)
    folds = kfold_splits(y, 3, seed=0)
    lambdas = np.array([0.05, 0.01, 0.002])
    sigmas = np.array([0.5, 1.0, 2.0])
    results = {}
    for engine, M in (("path", 40), ("grid", 400)):
        results[engine] = search_ladders(
            d.X, [prob], folds, Kernel("rbf"), sigmas, [weight_grid(M)], [lambdas],
            engine=engine, tracker=ProgressTracker(0),
        )[0]  # fmt: skip
    path, grid = results["path"], results["grid"]
    assert (path.best_lambda, path.best_sigma) == (grid.best_lambda, grid.best_sigma)
    # A 400-weight grid is within 1/800 of the path's crossings: the tables agree closely.
    np.testing.assert_allclose(path.egkl, grid.egkl, rtol=0.02)


def test_egkl_floor_bounds_a_confident_miss():
    from wsvmgui.ladder.search import score_cell

    class Sure:
        engine = "path"
        fallback = ""

        def estimate(self, K_cross, rule="count"):
            from wsvmgui.ladder.rules import LadderEstimate

            p = np.zeros(K_cross.shape[0])
            return LadderEstimate(p, p, p, np.ones(p.size, dtype=bool))

    X = np.arange(8.0)[:, None]
    cell = score_cell(
        lambda *a: Sure(), np.eye(8), X, Kernel("linear"), np.arange(4), np.ones(4),
        np.arange(4, 8), np.array([1.0, -1, -1, -1]), weight_grid(4), 0.1, "count",
    )  # fmt: skip
    assert cell.loss == pytest.approx(-np.log(EGKL_FLOOR) - 3 * np.log(1 - EGKL_FLOOR))
    assert cell.misses == 1 and cell.engine == "path"


# ------------------------------------------------------------------ multiclass
def test_multiclass_subproblems_run_through_the_path():
    d = simulate("wu2010_ex1", 150, seed=2)
    t = simulate("wu2010_ex1", 200, seed=3)
    est = MulticlassWeightedSVMClassifier(scheme="pairwise", lam=0.01, sigma=1.0).fit(d.X, d.y)
    assert all(isinstance(f.ladder, PathLadder) for f in est.subproblems_.fitted)
    assert est.fit_info_["final_engines"] == {"path": 3}
    # Each sub-problem's estimate is the binary path on the pair's rows.
    f = est.subproblems_.fitted[0]
    a, b = f.spec.negative[0], f.spec.positive
    rows = np.isin(d.y, est.classes_[[a, b]])
    binary = WeightedSVMClassifier(calibration="none", lam=0.01, sigma=1.0).fit(
        d.X[rows], d.y[rows]
    )
    assert binary.classes_[1] == est.classes_[b]
    q, ref = est.subproblem_ladders(t.X)[0], binary.estimate(t.X)
    np.testing.assert_allclose(q.lo, ref.lo, atol=1e-9)
    np.testing.assert_allclose(q.hi, ref.hi, atol=1e-9)
    P = est.predict_proba(t.X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    grid = MulticlassWeightedSVMClassifier(
        scheme="pairwise", engine="grid", n_weights=200, lam=0.01, sigma=1.0
    ).fit(d.X, d.y)
    assert np.max(np.abs(P - grid.predict_proba(t.X))) < 0.05


def _subset(name):
    from sklearn.datasets import load_digits, load_iris
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    if name == "iris":
        X, y = load_iris(return_X_y=True)
    else:  # ten digits, 40 images each
        X, y = load_digits(return_X_y=True)
        rng = np.random.default_rng(0)
        keep = np.concatenate(
            [rng.choice(np.flatnonzero(y == k), 40, replace=False) for k in range(10)]
        )
        X, y = X[keep], y[keep]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), ytr, scaler.transform(Xte), yte


@pytest.mark.parametrize("name", ["iris", "digits"])
def test_baseline_schemes_do_not_collapse_where_the_baseline_is_separable(name):
    """Every class of iris and of the digits subset is equally large, and some (setosa;
    every digit) are separable from the rest.  Before (grid, first largest class as B1's
    baseline): B1 0.67 on iris and 0.24 on digits, One-vs-All 0.93 and 0.92, the
    non-baseline classes tied at the grid's ratio cap 2M - 1.  Measured now: B1 and B2
    0.98 on iris (One-vs-All 0.93 grid, 0.96 path); 0.88 on digits (One-vs-All 0.92 grid,
    0.96 path).  The reference here is One-vs-All on the grid engine (cheaper)."""
    from wsvmgui.solvers.kernels import default_sigma_grid

    Xtr, ytr, Xte, yte = _subset(name)
    grids = {
        "lambdas": [0.05, 0.005, 0.0005],
        "sigmas": default_sigma_grid(Xtr, np.unique(ytr, return_inverse=True)[1])[:3],
    }
    acc = {}
    for scheme, engine in (("baseline1", "path"), ("baseline2", "path"), ("ova", "grid")):
        est = MulticlassWeightedSVMClassifier(scheme=scheme, engine=engine, **grids)
        acc[scheme] = float(np.mean(est.fit(Xtr, ytr).predict(Xte) == yte))
    # With the default tuning grids the path's estimates of extrapolated pairs sit just
    # below 1 (odds of 100 to 200 at random): unsaturated, B1 fell to 0.63 on digits
    # (grid 0.91); saturated at the EGKL floor, 0.92.
    est = MulticlassWeightedSVMClassifier(scheme="baseline1", n_jobs=2)
    acc["baseline1 default"] = float(np.mean(est.fit(Xtr, ytr).predict(Xte) == yte))
    assert acc["ova"] >= 0.85, acc
    for scheme in ("baseline1", "baseline2", "baseline1 default"):
        assert acc[scheme] >= 0.85 and acc[scheme] >= acc["ova"] - 0.08, (scheme, acc)


def test_tied_baseline_ratios_go_to_the_larger_decision_value():
    from wsvmgui.multiclass import coupling

    # Classes 1 and 2 tie at a grid's cap against baseline 0; keys decide.
    q = np.array([[0.5, 0.99, 0.99], [0.5, 0.99, 0.99], [0.5, 0.7, 0.99]])
    P = coupling.couple_baseline(q, 0)
    rows = coupling.tied_rows(P)
    np.testing.assert_array_equal(rows, [0, 1])
    key = np.array([[0.0, 2.0, 1.0], [0.0, 1.0, 3.0], [0.0, 0.0, 0.0]])
    B = P.copy()
    B[rows] = coupling.break_ties(P[rows], key[rows])
    assert list(B.argmax(axis=1)) == [1, 2, 2]
    np.testing.assert_allclose(B.sum(axis=1), 1.0)
    np.testing.assert_allclose(B, P, atol=1e-8)


# ------------------------------------------------------------------ settings, CLI
def test_settings_record_the_engine_and_every_ladder_scheme_gets_it():
    s = RunSettings(engine="grid")
    back = RunSettings.from_json(s.to_json())
    assert back.engine == "grid"
    assert RunSettings.from_dict({"scheme": "binary"}).engine == DEFAULT_ENGINE
    with pytest.raises(InputError, match="engine"):
        RunSettings(engine="fast").validate()
    with pytest.raises(InputError, match="engine"):
        RunSettings.from_dict({"engine": 3})
    for name in ("binary", "noncrossing", "preconditioned", "pairwise", "baseline1", "ova"):
        est = make_estimator(RunSettings(scheme=name, engine="grid"), 3 if name in (
            "pairwise", "baseline1", "ova") else 2)  # fmt: skip
        assert est.get_params()["engine"] == "grid", name
    assert "engine" in SCHEMES["binary"].tuning and "grid" in SCHEMES["ova"].tuning


def test_cli_engine_round_trip(capsys, tmp_path):
    import pandas as pd

    from wsvmgui.cli import main
    from wsvmgui.io.results import read_results

    d = simulate("wuliu2011_ex1", 60, seed=1)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"])
    frame["label"] = np.where(d.y > 0, "good", "bad")
    frame.to_csv(tmp_path / "train.csv", index=False)
    fast = ["--lambda", "0.01", "--sigma", "1.0", "--quiet"]
    for engine in ("grid", "path"):
        out = tmp_path / f"{engine}.csv"
        argv = ["fit", str(tmp_path / "train.csv"), "--label", "label", "--out", str(out)]
        assert main([*argv, *fast, "--engine", engine]) == 0, capsys.readouterr().err
        _, sidecar = read_results(out)
        assert RunSettings.from_dict(sidecar["settings"]).engine == engine
    code = main([*argv, *fast, "--engine", "bogus"])
    assert code != 0 and "engine" in capsys.readouterr().err


def test_cli_notes_paths_that_broke_down(capsys, tmp_path, monkeypatch):
    import pandas as pd

    from wsvmgui.cli import main

    d = simulate("wuliu2011_ex1", 60, seed=1)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"])
    frame["label"] = np.where(d.y > 0, "good", "bad")
    frame.to_csv(tmp_path / "train.csv", index=False)
    argv = ["fit", str(tmp_path / "train.csv"), "--label", "label"]
    fast = ["--lambda", "0.01", "--sigma", "1.0", "--out"]
    assert main([*argv, *fast, str(tmp_path / "ok.csv")]) == 0
    assert "broke down" not in capsys.readouterr().err
    monkeypatch.setattr(engines, "fit_path", _break)
    with pytest.warns(PathFallbackWarning):
        assert main([*argv, *fast, str(tmp_path / "fallback.csv")]) == 0
    assert "Weight path broke down for 1 of 1 ladders" in capsys.readouterr().err


def test_app_run_notes_paths_that_broke_down(monkeypatch):
    from wsvmgui.app.analysis import RunRequest, run_analysis
    from wsvmgui.app.datasets import load_builtin, split_dataset

    split = split_dataset(load_builtin("design:wuliu2011_ex1", n=80, seed=2), seed=2)
    settings = RunSettings(scheme="binary", lambdas=[0.01], sigmas=[1.0], n_weights=10)
    ok = run_analysis(RunRequest(settings, split, grid_size=20))
    assert not any("broke down" in n for n in ok.notes)
    monkeypatch.setattr(engines, "fit_path", _break)
    with pytest.warns(PathFallbackWarning):
        res = run_analysis(RunRequest(settings, split, grid_size=20))
    assert res.estimator.fit_info_["path_fallbacks"] == 1
    assert any("Weight path broke down for 1 of 1 ladders" in n for n in res.notes)


def test_saturated_pairs_tie_and_the_key_decides():
    from wsvmgui.multiclass import coupling

    # a third class's pairs against baseline 0 extrapolate: 0.995 and 0.999 are noise
    q = coupling.saturate(np.array([[0.5, 0.995, 0.999, 0.3]]), 1e-2)
    np.testing.assert_allclose(q, [[0.5, 0.99, 0.99, 0.3]])
    P = coupling.couple_baseline(q, 0)
    np.testing.assert_array_equal(coupling.tied_rows(P), [0])
    P = coupling.break_ties(P, np.array([[0.0, 2.0, 1.0, 0.0]]))
    assert np.argmax(P[0]) == 1 and np.isclose(P.sum(), 1.0)
