"""EGKL tuning of a binary ladder (METHODS section 2)."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.errors import Cancelled, InputError, SolverError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder import grid as ladder_module
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.tuning import default_lambda_grid, egkl_binary, stratified_split, tune_ladder
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.solvers.kernels import Kernel

LAMBDAS = np.array([0.05, 0.005, 0.0005])
SIGMAS = np.array([0.5, 1.5])


@pytest.fixture(scope="module")
def split():
    d = simulate("wuliu2011_ex1", 90, seed=2)
    return stratified_split(d.X, d.y.astype(float), 0.3, seed=0)


def _egkl_by_definition(p, y):
    """-(1/n_t) sum [1{y=+1} log p + 1{y=-1} log(1 - p)]."""
    total = 0.0
    for pi, yi in zip(p, y, strict=True):
        total += np.log(pi) if yi == 1 else np.log(1 - pi)
    return -total / len(y)


def test_egkl_binary_against_definition():
    p = np.array([0.9, 0.2, 0.6, 0.5])
    y = np.array([1, -1, -1, 1])
    assert egkl_binary(p, y) == pytest.approx(_egkl_by_definition(p, y), rel=1e-12)
    assert egkl_binary(p, y) == pytest.approx(
        -(np.log(0.9) + np.log(0.8) + np.log(0.4) + np.log(0.5)) / 4
    )


@pytest.fixture(scope="module")
def tuned(split):
    X_tr, X_tu, y_tr, y_tu = split
    calls = []
    res = tune_ladder(
        X_tr,
        y_tr,
        X_tu,
        y_tu,
        Kernel("rbf"),
        weight_grid(6),
        LAMBDAS,
        SIGMAS,
        progress=lambda d, t, p: calls.append((d, t)),
    )
    return res, calls


def test_tuning_table_shape_and_minimiser(tuned):
    res, _ = tuned
    assert res.egkl.shape == (3, 2) and res.error.shape == (3, 2)
    np.testing.assert_array_equal(res.lambdas, LAMBDAS)
    np.testing.assert_array_equal(res.sigmas, SIGMAS)
    assert np.all(np.isfinite(res.egkl))
    i, j = np.unravel_index(np.argmin(res.egkl), res.egkl.shape)
    assert res.best_lambda == LAMBDAS[i] and res.best_sigma == SIGMAS[j]
    assert len(res.rows()) == 6
    assert {r["egkl"] for r in res.rows()} == set(res.egkl.ravel())
    assert not res.failures


@pytest.mark.parametrize("cell", [(0, 0), (1, 1), (2, 0)])
def test_tuning_cell_is_egkl_of_that_ladder(split, tuned, cell):
    """Each cell equals the EGKL (by its definition) of a ladder fitted independently."""
    X_tr, X_tu, y_tr, y_tu = split
    res, _ = tuned
    i, j = cell
    kern = Kernel("rbf", sigma=SIGMAS[j])
    lad = fit_ladder(kern(X_tr), y_tr, weight_grid(6), LAMBDAS[i])
    p = lad.estimate(kern(X_tu, X_tr)).p
    assert res.egkl[i, j] == pytest.approx(_egkl_by_definition(p, y_tu), rel=1e-9)
    assert res.error[i, j] == pytest.approx(np.mean(np.where(p > 0.5, 1, -1) != y_tu))


def test_progress_totals_equal_fits(tuned):
    _, calls = tuned
    n_fits = 3 * 2 * 5
    assert len(calls) == n_fits
    assert all(t == n_fits for _, t in calls)
    assert [d for d, _ in calls] == list(range(1, n_fits + 1))


def test_progress_totals_with_threads(split):
    X_tr, X_tu, y_tr, y_tu = split
    calls = []
    res = tune_ladder(
        X_tr,
        y_tr,
        X_tu,
        y_tu,
        Kernel("rbf"),
        weight_grid(4),
        LAMBDAS[:2],
        SIGMAS,
        n_jobs=2,
        progress=lambda d, t, p: calls.append((d, t)),
    )
    assert sorted(d for d, _ in calls) == list(range(1, 2 * 2 * 3 + 1))
    assert res.egkl.shape == (2, 2)


def test_progress_totals_when_a_fit_fails(split, monkeypatch):
    """A ladder that fails part-way still advances progress by exactly its M - 1 fits."""
    X_tr, X_tu, y_tr, y_tu = split
    real = ladder_module.solve_weighted_svm
    count = {"n": 0}

    def flaky(K, y, pi, lam, *args, **kwargs):
        count["n"] += 1
        if lam == LAMBDAS[1] and pi == pytest.approx(0.6):
            raise SolverError(f"weighted SVM at pi={pi:.4g}, lambda={lam:.4g}: test failure")
        return real(K, y, pi, lam, *args, **kwargs)

    monkeypatch.setattr(ladder_module, "solve_weighted_svm", flaky)
    calls = []
    res = tune_ladder(
        X_tr,
        y_tr,
        X_tu,
        y_tu,
        Kernel("rbf"),
        weight_grid(5),
        LAMBDAS,
        SIGMAS,
        progress=lambda d, t, p: calls.append((d, t)),
    )
    assert np.isinf(res.egkl[1]).all() and np.isfinite(res.egkl[[0, 2]]).all()
    assert len(res.failures) == 2 and "pi=0.6" in res.failures[0]
    total = 3 * 2 * 4
    assert calls[-1] == (total, total), calls[-4:]
    assert all(d <= t for d, t in calls)


def test_every_fit_failing_raises_solver_error(split, monkeypatch):
    X_tr, X_tu, y_tr, y_tu = split

    def always(*args, **kwargs):
        raise SolverError("weighted SVM at pi=0.5, lambda=0.01: nope")

    monkeypatch.setattr(ladder_module, "solve_weighted_svm", always)
    with pytest.raises(SolverError, match="every fit"):
        tune_ladder(X_tr, y_tr, X_tu, y_tu, Kernel("rbf"), weight_grid(3), LAMBDAS, SIGMAS)


def test_tuning_cancellation(split):
    X_tr, X_tu, y_tr, y_tu = split
    seen = []
    with pytest.raises(Cancelled):
        tune_ladder(
            X_tr,
            y_tr,
            X_tu,
            y_tu,
            Kernel("rbf"),
            weight_grid(5),
            LAMBDAS,
            SIGMAS,
            progress=lambda d, t, p: seen.append(d),
            should_cancel=lambda: len(seen) >= 7,
        )
    assert len(seen) == 7


def test_linear_kernel_has_no_sigma_axis(split):
    X_tr, X_tu, y_tr, y_tu = split
    res = tune_ladder(X_tr, y_tr, X_tu, y_tu, Kernel("linear"), weight_grid(4), LAMBDAS)
    assert res.egkl.shape == (3, 1) and np.isnan(res.best_sigma)


def test_default_lambda_grid_is_c_grid():
    lam = default_lambda_grid(50)
    C = 1 / (2 * 50 * lam)
    np.testing.assert_allclose(C, [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0])


# --------------------------------------------------------------- stratified split
def test_stratified_split_keeps_class_shares():
    rng = np.random.default_rng(0)
    y = np.array(["a"] * 70 + ["b"] * 30)
    X = rng.normal(size=(100, 2))
    X_tr, X_tu, y_tr, y_tu = stratified_split(X, y, 0.3, seed=1)
    assert len(y_tu) == 30 and len(y_tr) == 70
    assert abs(np.mean(y_tu == "b") - 0.3) <= 1 / 30
    assert abs(np.mean(y_tr == "b") - 0.3) <= 1 / 70
    # Rows stay paired with their labels and nothing is lost.
    rows = {tuple(r): lab for r, lab in zip(X, y, strict=True)}
    for part_X, part_y in ((X_tr, y_tr), (X_tu, y_tu)):
        assert all(rows[tuple(r)] == lab for r, lab in zip(part_X, part_y, strict=True))
    # Deterministic by seed.
    again = stratified_split(X, y, 0.3, seed=1)
    np.testing.assert_array_equal(again[1], X_tu)


def test_stratified_split_too_few_points_raises():
    X = np.zeros((23, 2))
    y = np.array([1] * 20 + [-1] * 3)
    with pytest.raises(InputError, match="-1"):
        stratified_split(X, y, 0.3, seed=0)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.2, 1.3])
def test_stratified_split_bad_fraction(fraction):
    with pytest.raises(InputError):
        stratified_split(np.zeros((20, 1)), np.array([1, -1] * 10), fraction, seed=0)
