"""Kernels and the sigma_M scale, checked against METHODS section 1 by direct computation."""

from __future__ import annotations

import itertools
import time
import tracemalloc

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.solvers.kernels import (
    DEFAULT_SIGMA_FACTORS,
    Kernel,
    default_sigma_grid,
    median_between_class_distance,
)


@pytest.fixture
def points():
    rng = np.random.default_rng(1)
    return rng.normal(size=(7, 3)), rng.normal(size=(5, 3))


def test_rbf_matches_double_loop(points):
    A, B = points
    sigma = 0.8
    K = Kernel("rbf", sigma=sigma)(A, B)
    assert K.shape == (7, 5)
    for i in range(7):
        for j in range(5):
            d2 = sum((A[i, k] - B[j, k]) ** 2 for k in range(3))
            assert K[i, j] == pytest.approx(np.exp(-d2 / sigma**2), rel=1e-12, abs=1e-15)


def test_rbf_gram_is_symmetric_with_unit_diagonal(points):
    A, _ = points
    K = Kernel("rbf", sigma=1.3)(A)
    np.testing.assert_allclose(K, K.T, atol=1e-14)
    np.testing.assert_allclose(np.diag(K), 1.0, atol=1e-14)
    assert np.all(K > 0) and np.all(K <= 1.0)


def test_rbf_sigma_is_sklearn_gamma_inverse_square(points):
    from sklearn.metrics.pairwise import rbf_kernel

    A, B = points
    sigma = 0.6
    np.testing.assert_allclose(
        Kernel("rbf", sigma=sigma)(A, B), rbf_kernel(A, B, gamma=1 / sigma**2), rtol=1e-12
    )


def test_poly_and_linear_match_definitions(points):
    A, B = points
    kern = Kernel("poly", degree=3, coef0=0.5, gamma=2.0)
    K = kern(A, B)
    for i, j in itertools.product(range(7), range(5)):
        assert K[i, j] == pytest.approx((2.0 * float(A[i] @ B[j]) + 0.5) ** 3, rel=1e-12)
    L = Kernel("linear")(A, B)
    for i, j in itertools.product(range(7), range(5)):
        assert L[i, j] == pytest.approx(float(A[i] @ B[j]), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": "gauss"},
        {"name": "rbf", "sigma": 0.0},
        {"name": "rbf", "sigma": -1.0},
        {"name": "rbf", "sigma": float("nan")},
        {"name": "poly", "degree": 0},
        {"name": "poly", "degree": 2.5},
    ],
)
def test_bad_kernel_parameters_raise(kwargs):
    with pytest.raises(InputError):
        Kernel(**kwargs)


def _brute_median(X, y):
    d = [
        float(np.linalg.norm(X[i] - X[j]))
        for i, j in itertools.combinations(range(len(y)), 2)
        if y[i] != y[j]
    ]
    return float(np.median(d))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_median_between_class_distance_exact(n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(41, 2))
    y = rng.integers(0, n_classes, size=41)
    y[:n_classes] = np.arange(n_classes)
    assert median_between_class_distance(X, y) == pytest.approx(_brute_median(X, y), rel=1e-12)
    # Small chunks take the same exact path.
    assert median_between_class_distance(X, y, chunk=3) == pytest.approx(
        _brute_median(X, y), rel=1e-12
    )


def test_median_between_class_distance_string_labels():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 2))
    y = np.array(["a", "b"] * 10)
    assert median_between_class_distance(X, y) == pytest.approx(_brute_median(X, y))


def test_median_subsample_close_to_exact():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1500, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=1500) > 0).astype(int)
    exact = median_between_class_distance(X, y)
    approx = median_between_class_distance(X, y, max_pairs=20_000, seed=3)
    # 20,000 sampled pairs: the sample median's relative sd is well under 1%.
    assert approx == pytest.approx(exact, rel=0.02)
    assert approx != exact  # really the subsample path
    # Deterministic given its seed.
    assert median_between_class_distance(X, y, max_pairs=20_000, seed=3) == approx


def test_median_subsample_with_tiny_class():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 2))
    y = np.zeros(3000, dtype=int)
    y[:3] = 1  # 3 x 2997 between-class pairs, more than max_pairs
    exact = median_between_class_distance(X, y)
    approx = median_between_class_distance(X, y, max_pairs=4000, seed=1)
    assert np.isfinite(approx) and approx == pytest.approx(exact, rel=0.05)


def test_median_large_n_never_builds_n_by_n():
    n = 20_000
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        value = median_between_class_distance(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - start
    # One n x n float matrix would be 3.2 GB; the sample of 4e6 distances is 32 MB and the
    # blocks add about as much again (measured peak 72 MB).
    assert peak < 150e6, f"peak {peak / 1e6:.0f} MB"
    assert seconds < 30
    # The exact median on a random 1,500-point subset estimates the same population value.
    sub = rng.choice(n, size=1500, replace=False)
    assert value == pytest.approx(median_between_class_distance(X[sub], y[sub]), rel=0.03)


def test_median_needs_two_classes():
    with pytest.raises(InputError):
        median_between_class_distance(np.zeros((4, 2)), np.ones(4))


def test_default_sigma_grid_is_factors_times_sigma_m():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    y = np.array([1, -1] * 15)
    grid = default_sigma_grid(X, y)
    sigma_m = _brute_median(X, y)
    np.testing.assert_allclose(grid, np.array([0.25, 0.5, 0.75, 1.0, 1.25, 1.5]) * sigma_m)
    np.testing.assert_allclose(DEFAULT_SIGMA_FACTORS, [0.25, 0.5, 0.75, 1.0, 1.25, 1.5])


def test_default_sigma_grid_rejects_coincident_classes():
    X = np.zeros((6, 2))
    with pytest.raises(InputError):
        default_sigma_grid(X, np.array([1, -1] * 3))
