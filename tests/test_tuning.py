"""EGKL tuning of binary ladders (METHODS section 2): the one search, and its splits."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.errors import Cancelled, InputError, SolverError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder import grid as ladder_module
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.path import fit_path
from wsvmgui.ladder.search import EGKL_FLOOR, LadderProblem, search_ladders
from wsvmgui.ladder.splits import (
    AUTO_CV_MAX_N,
    holdout_split,
    kfold_splits,
    resolve_cv,
    tuning_set_split,
)
from wsvmgui.ladder.tuning import default_lambda_grid, egkl_binary
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.progress import ProgressTracker
from wsvmgui.solvers.kernels import Kernel

LAMBDAS = np.array([0.05, 0.005, 0.0005])
SIGMAS = np.array([0.5, 1.5])


@pytest.fixture(scope="module")
def split():
    d = simulate("wuliu2011_ex1", 90, seed=2)
    tr, tu = holdout_split(d.y, 0.3, seed=0)
    y = d.y.astype(float)
    return d.X[tr], d.X[tu], y[tr], y[tu]


def tune_ladder(
    X_tr, y_tr, X_tu, y_tu, kernel, weights, lambdas, sigmas=None, n_jobs=1,
    progress=None, should_cancel=None, engine="grid",
):  # fmt: skip
    """The search on one training/tuning split, as a scheme with a tuning set runs it.

    The grid engine by default: these tests check the search against grid ladders and
    its handling of failing weighted fits; the path's cells are checked below."""
    X = np.vstack([X_tr, X_tu])
    y = np.concatenate([y_tr, y_tu])
    folds = list(tuning_set_split(y_tr.size, y_tu.size).split(X, y))
    sigmas = np.array([np.nan]) if sigmas is None else sigmas
    tracker = ProgressTracker(0, progress, should_cancel)
    return search_ladders(
        X, [LadderProblem(np.arange(y.size), y)], folds, kernel, sigmas, [weights], [lambdas],
        engine=engine, n_jobs=n_jobs, tracker=tracker,
    )[0]  # fmt: skip


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


def test_path_tuning_cell_is_the_floored_egkl_of_that_path(split):
    """With the path engine each cell is the EGKL of the path's grid-free estimate, the
    estimate clipped to [EGKL_FLOOR, 1 - EGKL_FLOOR]."""
    X_tr, X_tu, y_tr, y_tu = split
    res = tune_ladder(
        X_tr, y_tr, X_tu, y_tu, Kernel("rbf"), weight_grid(6), LAMBDAS, SIGMAS, engine="path"
    )
    assert res.engines == {"path": 6}
    for i, j in [(0, 0), (2, 1)]:
        kern = Kernel("rbf", sigma=SIGMAS[j])
        p = fit_path(kern(X_tr), y_tr, LAMBDAS[i]).estimate(kern(X_tu, X_tr)).p
        p = np.clip(p, EGKL_FLOOR, 1 - EGKL_FLOOR)
        assert res.egkl[i, j] == pytest.approx(_egkl_by_definition(p, y_tu), rel=1e-9)


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


def test_several_problems_share_the_search_and_match_their_own(split):
    """Two problems on overlapping rows, k folds: each table equals its own search."""
    X_tr, X_tu, y_tr, y_tu = split
    X = np.vstack([X_tr, X_tu])
    y = np.concatenate([y_tr, y_tu])
    folds = kfold_splits(y, 3, seed=4)
    every = LadderProblem(np.arange(y.size), y, "all")
    part_rows = np.arange(0, y.size, 2)
    part = LadderProblem(part_rows, y[part_rows], "even rows")
    w = weight_grid(4)
    both = search_ladders(
        X, [every, part], folds, Kernel("rbf"), SIGMAS, [w, w], [LAMBDAS, LAMBDAS],
        engine="grid", n_jobs=2, tracker=ProgressTracker(0),
    )  # fmt: skip
    for prob, res in zip((every, part), both, strict=True):
        alone = search_ladders(
            X, [prob], folds, Kernel("rbf"), SIGMAS, [w], [LAMBDAS], engine="grid",
            tracker=ProgressTracker(0),
        )[0]  # fmt: skip
        np.testing.assert_allclose(res.egkl, alone.egkl, rtol=1e-12)
    # The even-row problem is scored on its own tuning rows only.
    i, j = 1, 0
    kern = Kernel("rbf", sigma=SIGMAS[j])
    loss = 0.0
    for tr, te in folds:
        tr, te = tr[tr % 2 == 0], te[te % 2 == 0]
        lad = fit_ladder(kern(X[tr]), y[tr], w, LAMBDAS[i])
        p = lad.estimate(kern(X[te], X[tr])).p
        loss += _egkl_by_definition(p, y[te]) * te.size
    assert both[1].egkl[i, j] == pytest.approx(loss / part_rows.size, rel=1e-9)


# --------------------------------------------------------------------- the splits
def test_holdout_split_keeps_class_shares():
    y = np.array(["a"] * 70 + ["b"] * 30)
    tr, tu = holdout_split(y, 0.3, seed=1)
    assert len(tu) == 30 and len(tr) == 70
    assert sorted(np.concatenate([tr, tu])) == list(range(100))
    assert abs(np.mean(y[tu] == "b") - 0.3) <= 1 / 30
    assert abs(np.mean(y[tr] == "b") - 0.3) <= 1 / 70
    np.testing.assert_array_equal(holdout_split(y, 0.3, seed=1)[1], tu)  # by seed


def test_holdout_split_too_few_points_raises():
    y = np.array([1] * 20 + [-1] * 3)
    with pytest.raises(InputError, match="-1"):
        holdout_split(y, 0.3, seed=0)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.2, 1.3])
def test_holdout_split_bad_fraction(fraction):
    with pytest.raises(InputError):
        holdout_split(np.array([1, -1] * 10), fraction, seed=0)


@pytest.mark.parametrize("holdout", [False, True])
def test_auto_cv_adapts_to_small_classes(holdout):
    """cv="auto" never refuses where GridSearchCV goes on: the folds shrink to the
    smallest class, then one point per small class is held out, then no tuning; each
    step says so."""
    from wsvmgui.ladder.splits import TuningWarning

    def folds(n_small, n_big=20):
        y = np.array([0] * n_big + [1] * n_small + [2] * n_big)
        with pytest.warns(TuningWarning) as seen:
            out = resolve_cv("auto", y, 0, holdout=holdout)
        return y, out, str(seen[0].message)

    if not holdout:
        y, out, why = folds(3)
        assert len(out) == 3 and "class 1 has only 3 points: 3-fold" in why
        for tr, te in out:  # stratified: every class on both sides of every fold
            assert set(y[tr]) == set(y[te]) == {0, 1, 2}
        assert sorted(np.concatenate([te for _, te in out])) == list(range(y.size))
    y, out, why = folds(2)
    ((tr, te),) = out
    assert "one point per small class" in why
    assert np.sum(y[te] == 1) == 1 and np.sum(y[tr] == 1) == 1
    assert set(y[tr]) == set(y[te]) == {0, 1, 2}
    assert np.intersect1d(tr, te).size == 0 and tr.size + te.size == y.size
    y, out, why = folds(1)
    assert out == [] and "too few to tune on; no tuning" in why


def test_resolve_cv_every_form():
    from sklearn.model_selection import KFold

    y = np.array([0] * 30 + [1] * 20)
    auto = resolve_cv("auto", y, 0)
    assert len(auto) == 5 and all(np.isin(y[te], [0, 1]).all() for _, te in auto)
    assert [te.tolist() for _, te in auto] == [te.tolist() for _, te in resolve_cv(5, y, 0)]
    # Each row is tuned exactly once over the folds.
    assert sorted(np.concatenate([te for _, te in auto])) == list(range(50))
    assert len(resolve_cv("auto", y, 0, holdout=True)) == 1
    big = np.arange(AUTO_CV_MAX_N + 1) % 2
    (tr, te), = resolve_cv("auto", big, 0)  # fmt: skip
    assert te.size == int(np.ceil(0.3 * big.size))
    # An explicit k too large for a class is refused, naming it.
    with pytest.raises(InputError, match="class 1 has only 3 point.*5-fold"):
        resolve_cv(5, np.array([0] * 20 + [1] * 3), 0)
    (tr, te), = resolve_cv(0.4, y, 1)  # fmt: skip
    assert te.size == 20
    assert len(resolve_cv(KFold(4), y)) == 4
    given = [(np.arange(10, 50), np.arange(10))]
    assert resolve_cv(given, y)[0][1].tolist() == list(range(10))
    split = tuning_set_split(40, 10)
    (tr, te), = resolve_cv(split, y)  # fmt: skip
    assert tr.tolist() == list(range(40)) and te.tolist() == list(range(40, 50))
    with pytest.raises(InputError, match="outside"):
        resolve_cv([(np.arange(10), np.array([60]))], y)
    with pytest.raises(InputError, match="empty"):
        resolve_cv([(np.arange(10), np.array([], dtype=int))], y)
    with pytest.raises(InputError, match="at least 2 folds"):
        resolve_cv(1, y)
