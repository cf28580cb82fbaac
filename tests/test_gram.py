"""A fit's kernel rows without copies: the shared dense matrix and values made on the fly
give the answers of the copied submatrix; the kernel is built in place, once per process."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.solvers import gram as gram_module
from wsvmgui.solvers.gram import (
    DenseGram,
    HeldGram,
    OnTheFlyGram,
    drop_kernels,
    positions,
    shared_kernel,
)
from wsvmgui.solvers.kernels import Kernel, kernel_matrix, kernel_product
from wsvmgui.solvers.wsvm import check_fits, fit_weighted_svm, sample_bounds

KERNELS = [Kernel("rbf", sigma=0.8), Kernel("linear"), Kernel("poly", degree=2, gamma=0.5)]


@pytest.fixture(scope="module")
def data():
    d = simulate("wuliu2011_ex1", 240, seed=5)
    return d.X, np.where(d.y > 0, 1.0, -1.0)


def _reference_kernel(A, B, kernel):
    """The textbook formulas, with full temporaries."""
    G = A @ B.T
    if kernel.name == "linear":
        return G
    if kernel.name == "poly":
        return (kernel.gamma * G + kernel.coef0) ** kernel.degree
    D2 = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2 * G
    return np.exp(-np.maximum(D2, 0) / kernel.sigma**2)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_in_place_kernel_matrix_equals_the_formula(data, kernel):
    X, _ = data
    K = kernel_matrix(X, None, kernel)
    assert K.flags.c_contiguous and K.dtype == np.float64
    np.testing.assert_allclose(K, _reference_kernel(X, X, kernel), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-14)


def test_blocked_kernel_product_equals_the_full_product(data):
    X, _ = data
    kernel = Kernel("rbf", sigma=0.6)
    coef = np.random.default_rng(0).standard_normal((150, 4))
    full = kernel(X, X[:150]) @ coef
    # A block of 8 rows at a time: many blocks, the same numbers.
    blocked = kernel_product(X, X[:150], kernel, coef, block_bytes=8 * 150 * 8)
    np.testing.assert_allclose(blocked, full, rtol=1e-13, atol=1e-13)
    one = kernel_product(X, X[:150], kernel, coef[:, 0])
    assert one.shape == (X.shape[0],)


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_rows_of_the_shared_matrix_give_the_submatrix_fit_to_the_last_bit(data, order):
    X, y = data
    K = Kernel("rbf", sigma=0.8)(X)
    rng = np.random.default_rng(1)
    rows = np.sort(rng.choice(X.shape[0], 170, replace=False))
    if order == "shuffled":
        rows = rng.permutation(rows)
    sub = np.ascontiguousarray(K[np.ix_(rows, rows)])
    for pi in (0.2, 0.5, 0.9):
        copied = fit_weighted_svm(sub, y[rows], pi, 0.004)
        in_place = fit_weighted_svm(DenseGram(K, rows), y[rows], pi, 0.004)
        if order == "sorted":
            np.testing.assert_array_equal(in_place.alpha, copied.alpha)
            assert in_place.intercept == copied.intercept
        else:  # libsvm sees the rows in increasing order: that fit, mapped back exactly
            srt = np.argsort(rows)
            in_order = fit_weighted_svm(sub[np.ix_(srt, srt)], y[rows][srt], pi, 0.004)
            np.testing.assert_array_equal(in_place.alpha[srt], in_order.alpha)
            assert in_place.intercept == in_order.intercept
            np.testing.assert_allclose(in_place.decision(sub), copied.decision(sub), atol=1e-2)
        assert in_place.kkt_residual < 1e-2


def test_dense_gram_products_and_cross_rows_index_the_matrix(data):
    X, _ = data
    K = Kernel("rbf", sigma=0.8)(X)
    rows = np.array([5, 3, 100, 7, 42])
    g = DenseGram(K, rows)
    coef = np.random.default_rng(2).standard_normal((3, rows.size))
    np.testing.assert_allclose(g.products(coef), coef @ K[np.ix_(rows, rows)], atol=1e-13)
    others = np.array([0, 1, 2, 200])
    np.testing.assert_array_equal(g.cross(others), K[np.ix_(others, rows)])
    np.testing.assert_array_equal(np.asarray(g), K[np.ix_(rows, rows)])
    assert DenseGram(K, np.arange(K.shape[0])).dense() is K  # all rows in order: no copy


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_on_the_fly_ladder_agrees_with_the_dense_ladder(data, kernel):
    X, y = data
    rows = np.arange(0, X.shape[0], 2)
    weights = weight_grid(8)
    dense = fit_ladder(DenseGram(kernel(X), rows), y[rows], weights, 0.005)
    fly = fit_ladder(OnTheFlyGram(X, kernel, rows), y[rows], weights, 0.005)
    # libsvm stops at its tolerance 1e-3 on slightly different kernel values.
    Kx = kernel(X, X[rows])
    np.testing.assert_allclose(fly.decision(Kx), dense.decision(Kx), atol=5e-3)
    assert fly.kkt_residual.max() < 1e-2 and dense.kkt_residual.max() < 1e-2
    # The on-the-fly KKT check (blocked kernel products) reproduces the dense one.
    g = OnTheFlyGram(X, kernel, rows)
    fits = [fit_weighted_svm(kernel(X[rows]), y[rows], 0.3, 0.005)]
    np.testing.assert_allclose(
        check_fits(g, y[rows], fits)[0].kkt_residual, fits[0].kkt_residual, atol=1e-10
    )
    upper = sample_bounds(y[rows], 0.3, fits[0].C)
    assert np.all(fits[0].alpha <= upper + 1e-12)


def test_shared_kernel_is_built_once_and_only_the_latest_is_kept(data):
    X, _ = data
    drop_kernels()
    before = gram_module.build_count["built"]
    k1, k2 = Kernel("rbf", sigma=0.5), Kernel("rbf", sigma=1.0)
    a = shared_kernel("tok", X, k1)
    assert shared_kernel("tok", X, k1) is a
    assert gram_module.build_count["built"] == before + 1
    b = shared_kernel("tok", X, k2)
    assert list(gram_module._shared) == [("tok", None, k2)]  # the previous one was dropped
    np.testing.assert_array_equal(b, k2(X))
    fold = shared_kernel("tok", X[:100], k2, part=0)  # a fold's rows: another matrix
    assert fold.shape == (100, 100) and list(gram_module._shared) == [("tok", 0, k2)]
    drop_kernels("tok")
    assert not gram_module._shared


def test_freed_memory_is_given_back_before_each_new_shared_matrix(data, monkeypatch):
    from wsvmgui.solvers import memory

    X, _ = data
    drop_kernels()
    calls: list[int] = []
    monkeypatch.setattr(memory, "release_freed_memory", lambda: calls.append(1) or True)
    k1, k2 = Kernel("rbf", sigma=0.5), Kernel("rbf", sigma=1.0)
    shared_kernel("tok", X, k1)
    shared_kernel("tok", X, k1)  # held: nothing built, nothing released
    shared_kernel("tok", X, k2)
    assert len(calls) == 2
    drop_kernels("tok")


def test_matrix_of_some_rows_gives_the_fits_of_the_matrix_of_all_rows(data):
    """A fold's own matrix (HeldGram) against rows of the matrix of all rows (DenseGram)."""
    X, y = data
    kernel = Kernel("rbf", sigma=0.8)
    rng = np.random.default_rng(3)
    held = np.sort(rng.permutation(y.size)[:160])
    rows = rng.permutation(held)[:100]  # a sub-problem's rows, in another order
    test = np.setdiff1d(np.arange(y.size), held)
    whole = DenseGram(kernel(X), rows)
    mine = HeldGram(kernel(X[held]), X, kernel, held, positions(held, rows))
    np.testing.assert_allclose(mine.dense(), whole.dense(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(mine.cross(test), whole.cross(test), rtol=0, atol=1e-14)
    coef = rng.normal(size=(3, rows.size))
    np.testing.assert_allclose(mine.products(coef), whole.products(coef), atol=1e-12)
    weights = weight_grid(8)
    a = fit_ladder(mine, y[rows], weights, 0.01)
    b = fit_ladder(whole, y[rows], weights, 0.01)
    np.testing.assert_allclose(
        a.decision(mine.cross(test)), b.decision(whole.cross(test)), atol=1e-6
    )
    assert positions(held, held) is None  # all held rows in order: the matrix itself
    own = HeldGram(kernel(X[held]), X, kernel, held)
    assert own.dense() is own.K  # an engine needing the dense matrix gets it, no copy
    with pytest.raises(ValueError, match="not all among"):
        positions(held, test[:3])
