"""The exact paths behind the app's ladders: traced after a grid fit, read off the fit."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.app.path_view import exact_path, stored_paths, zeros_of
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.probing import ProbingClassifier
from wsvmgui.evaluation.designs import simulate


@pytest.fixture(scope="module")
def grid_fit():
    d = simulate("wuliu2011_ex1", 120, 3)
    kw = {"engine": "grid"} if "engine" in WeightedSVMClassifier().get_params() else {}
    est = WeightedSVMClassifier(n_weights=10, lam=0.01, sigma=1.0, n_jobs=1, **kw)
    return d, est.fit(d.X, d.y)


def test_a_grid_fit_keeps_no_path_and_the_app_traces_one(grid_fit):
    d, est = grid_fit
    assert stored_paths(est) == [None]
    info, why = exact_path(est, d.X, d.y)
    assert why == "" and info is not None and info.source == "traced"
    assert info.pis[0] == 0 and info.pis[-1] == 1 and np.all(np.diff(info.pis) >= 0)
    # the path agrees with the grid's own fits at their weights (solver tolerance)
    ladder = est.ladder_decision(d.X)
    exact = np.column_stack([info.decision_at(d.X, w) for w in est.weights_])
    assert np.abs(ladder - exact).max() < 0.02 * np.abs(ladder).max()


def test_curves_are_the_path_at_its_breakpoints_with_left_limits_at_jumps(grid_fit):
    d, est = grid_fit
    info, _ = exact_path(est, d.X, d.y)
    X = d.X[:5]
    f = info.curves(X)
    assert f.shape == (5, info.n_breakpoints)
    K = est.kernel_(X, info.X_fit)
    right = info.path.decision_at(K, info.pis)
    twin = np.zeros(info.pis.size, bool)
    twin[np.flatnonzero(np.diff(info.pis) == 0)] = True
    np.testing.assert_allclose(f[:, ~twin], right[:, ~twin], atol=1e-12)
    for k in np.flatnonzero(twin):  # the first of a pair: the value just left of the jump
        left = info.path.decision_at(K, np.array([info.pis[k] - 1e-12]))[:, 0]
        np.testing.assert_allclose(f[:, k], left, atol=1e-6)
    # chunked evaluation (a small memory bound) gives the same values
    import wsvmgui.app.path_view as pv

    old = pv.CHUNK_VALUES
    try:
        pv.CHUNK_VALUES = 7 * info.X_fit.shape[0]
        np.testing.assert_allclose(info.curves(X), f, rtol=0, atol=1e-12)
    finally:
        pv.CHUNK_VALUES = old


def test_zeros_of_a_piecewise_linear_function():
    pis = np.array([0.0, 0.25, 0.5, 1.0])
    np.testing.assert_allclose(zeros_of(pis, np.array([1.0, 1.0, -1.0, -1.0])), [0.375])
    np.testing.assert_allclose(
        zeros_of(pis, np.array([1.0, -1.0, 1.0, -3.0])), [0.125, 0.375, 0.625]
    )
    assert zeros_of(pis, np.ones(4)).size == 0


def test_estimators_without_ladders_have_no_paths():
    d = simulate("wuliu2011_ex1", 80, 4)
    est = ProbingClassifier(learner="logistic", n_thresholds=5).fit(d.X, d.y)
    assert stored_paths(est) == []
    info, why = exact_path(est, d.X, d.y)
    assert info is None and "no single binary ladder" in why


def test_a_jump_of_the_intercept_shows_in_the_curve():
    """Small C, symmetric data: at pi = 1/2 every dual is at a bound and b jumps; the
    curve holds the left limit at the first of the two breakpoints there."""
    from wsvmgui.app.path_view import PathInfo
    from wsvmgui.ladder.path import fit_path

    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.5, 1.0], [-0.5, -1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    path = fit_path(X @ X.T, y, 1.0 / (2 * 4 * 0.05))
    info = PathInfo(path, lambda A, B: A @ B.T, X)
    same = np.flatnonzero(info.pis == info.pis[np.flatnonzero(np.diff(info.pis) == 0)[0]])
    first, last = int(same[0]), int(same[-1])  # breakpoints at the pi of the jump
    f = info.curves(X)
    left = path.decision_at(X @ X.T, np.array([info.pis[first] - 1e-9]))[:, 0]
    right = path.decision_at(X @ X.T, np.array([info.pis[first]]))[:, 0]
    np.testing.assert_allclose(f[:, first], left, atol=1e-6)
    np.testing.assert_allclose(f[:, last], right, atol=1e-12)
    assert np.abs(f[:, first] - f[:, last]).max() > 1e-3  # the jump is drawn


def test_path_engine_fits_keep_their_paths_and_the_app_reads_them():
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier

    d = simulate("wuliu2011_ex1", 120, 5)
    est = WeightedSVMClassifier(engine="path", n_weights=10, lam=0.01, sigma=1.0, n_jobs=1)
    est.fit(d.X, d.y)
    (info,) = stored_paths(est)
    assert info is not None and info.source == "stored"
    ladder = est.ladder_decision(d.X)
    exact = np.column_stack([info.decision_at(d.X, w) for w in est.weights_])
    np.testing.assert_allclose(exact, ladder, atol=1e-9 * np.abs(ladder).max())
    # divide and conquer: one path per sub-problem, over that sub-problem's points
    d3 = simulate("wu2010_ex1", 150, 5)
    mc = MulticlassWeightedSVMClassifier(
        scheme="pairwise", engine="path", n_weights=6, lam=0.01, sigma=1.0, n_jobs=1
    ).fit(d3.X, d3.y)
    infos = stored_paths(mc)
    fitted = mc.subproblems_.fitted
    assert len(infos) == len(fitted) == 3 and all(i is not None for i in infos)
    for info, D, f in zip(infos, mc.subproblem_decisions(d3.X), fitted, strict=True):
        exact = np.column_stack([info.decision_at(d3.X, w) for w in f.weights])
        np.testing.assert_allclose(exact, D, atol=1e-9 * np.abs(D).max())
    grid = MulticlassWeightedSVMClassifier(
        scheme="pairwise", engine="grid", n_weights=6, lam=0.01, sigma=1.0, n_jobs=1
    ).fit(d3.X, d3.y)
    assert stored_paths(grid) == [None, None, None]


@pytest.mark.parametrize("calibration", ["none", "sigmoid", "beta", "isotonic", "auto"])
def test_ladder_brackets_stay_on_the_paths_pi_axis_under_any_calibration(calibration):
    """The views' bracket is the ladder's own (where the signs and the path's zero lie);
    the recalibrated estimate the fit reports comes separately, as ``calibrated``."""
    from wsvmgui.app.capabilities import ladders_of

    d = simulate("wuliu2011_ex1", 200, 5)
    est = WeightedSVMClassifier(
        n_weights=8, lam=0.005, sigma=1.0, n_jobs=1, calibration=calibration, random_state=0
    ).fit(d.X, d.y)
    (lad,) = ladders_of(est, d.X, est.classes_)
    (info,) = stored_paths(est)
    assert info is not None
    f = info.curves(d.X)
    one_zero = 0
    for i in range(d.X.shape[0]):
        z = zeros_of(info.pis, f[i])
        if z.size == 1:  # a monotone point: its sign change lies in its bracket
            one_zero += 1
            assert lad.lo[i] - 1e-6 <= z[0] <= lad.hi[i] + 1e-6, (i, z, lad.lo[i], lad.hi[i])
    assert one_zero > 150
    reported = est.predict_proba(d.X)[:, 1]
    if calibration == "none":
        assert lad.calibrated is None and lad.calibration is None
    else:
        np.testing.assert_allclose(lad.calibrated, reported, atol=1e-12)
        assert lad.calibration is not None
        np.testing.assert_allclose(lad.calibration(est.raw_estimate(d.X).p), reported)
        # the map moved the estimate somewhere: the test would not tell otherwise
        assert np.abs(reported - est.raw_estimate(d.X).p).max() > 1e-3


def test_subproblem_brackets_stay_on_the_paths_pi_axis_under_calibration():
    """Pairwise with a recalibration: each sub-problem's bracket holds its path's zero, and
    ``calibrated`` is the recalibrated estimate the coupling uses."""
    from wsvmgui.app.capabilities import ladders_of
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier

    d = simulate("wu2010_ex1", 240, 2)
    est = MulticlassWeightedSVMClassifier(
        scheme="pairwise",
        n_weights=8,
        lam=0.005,
        sigma=1.0,
        n_jobs=1,
        calibration="sigmoid",
        random_state=0,
    ).fit(d.X, d.y)
    ladders = ladders_of(est, d.X, est.classes_)
    paths = stored_paths(est)
    assert len(ladders) == len(paths) == 3
    for lad, info, raw, reported in zip(
        ladders,
        paths,
        est.subproblems_.estimates(d.X, est.rule),
        est._estimates(d.X),
        strict=True,
    ):
        assert info is not None
        f = info.curves(d.X)
        for i in range(d.X.shape[0]):
            z = zeros_of(info.pis, f[i])
            if z.size == 1:
                assert lad.lo[i] - 1e-6 <= z[0] <= lad.hi[i] + 1e-6
        np.testing.assert_allclose(lad.lo, raw.lo)
        np.testing.assert_allclose(lad.calibrated, reported.p)
