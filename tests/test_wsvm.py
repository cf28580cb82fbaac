"""One weighted SVM fit (METHODS section 1): solvers against each other, against an
independent scikit-learn SVC with sample weights, and the KKT check that guards them."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from wsvmgui.errors import InputError, SolverError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.solvers.gram import DenseGram
from wsvmgui.solvers.kernels import Kernel
from wsvmgui.solvers.wsvm import (
    DEFAULT_KKT_TOL,
    fit_weighted_svm,
    kkt_residual,
    optimal_intercept,
    penalty_to_C,
    sample_bounds,
)

N = 80
SIGMA = 1.0


@pytest.fixture(scope="module")
def problem():
    train = simulate("wuliu2011_ex1", N, seed=3)
    test = simulate("wuliu2011_ex1", 200, seed=4)
    kern = Kernel("rbf", sigma=SIGMA)
    return train.X, train.y.astype(float), test.X, kern(train.X), kern(test.X, train.X)


# lambda for C = 1 and C = 10 (C = 1 / (2 n lambda)).
CASES = [(pi, lam) for pi in (0.2, 0.5, 0.7) for lam in (1 / (2 * N), 1 / (20 * N))]


@pytest.fixture(scope="module")
def reference_fits(problem):
    """Dense quadprog solutions: the reference for every comparison."""
    _, y, _, K, _ = problem
    return {case: fit_weighted_svm(K, y, *case, solver="qp") for case in CASES}


@pytest.mark.parametrize("pi, lam", CASES)
@pytest.mark.parametrize("backend", ["libsvm", "clarabel"])
def test_solvers_agree(problem, reference_fits, pi, lam, backend):
    _, y, _, K, Kt = problem
    ref = reference_fits[(pi, lam)]
    if backend == "libsvm":
        fit = fit_weighted_svm(K, y, pi, lam, solver="libsvm")
        # libsvm stops when its maximal-violating-pair gap is below tol = 1e-3 (gradient
        # units); decision values then carry errors of that order times the kernel scale
        # (measured: at most 1.7e-3 here), so 1e-2 is a safe bound that still catches any
        # wrong weighting (changing pi by 0.01 moves f by more).
        atol = 1e-2
    else:
        fit = fit_weighted_svm(K, y, pi, lam, solver="qp", qp_solver="clarabel")
        atol = 1e-4  # two interior/active-set solvers at 1e-8-ish precision
    np.testing.assert_allclose(fit.decision(Kt), ref.decision(Kt), atol=atol)
    np.testing.assert_allclose(fit.decision(K), ref.decision(K), atol=atol)
    assert fit.kkt_residual <= DEFAULT_KKT_TOL
    assert np.isclose(fit.C, 1 / (2 * N * lam))


@pytest.mark.parametrize("pi, lam", CASES)
def test_reference_matches_sklearn_svc_with_sample_weights(problem, reference_fits, pi, lam):
    """METHODS section 1: SVC(rbf, gamma = 1/sigma^2, C = 1/(2 n lambda)) with S(y_i)."""
    X, y, Xt, K, Kt = problem
    C = 1 / (2 * N * lam)
    weights = np.where(y > 0, 1 - pi, pi)
    svc = SVC(kernel="rbf", gamma=1 / SIGMA**2, C=C, tol=1e-7).fit(X, y, sample_weight=weights)
    ref = reference_fits[(pi, lam)]
    # Both solved far below the scale of interest (libsvm at tol 1e-7, quadprog exactly
    # up to a 1e-10 ridge); measured differences are ~5e-6.
    np.testing.assert_allclose(svc.decision_function(Xt), ref.decision(Kt), atol=1e-4)
    # Same dual: support vectors and y_i a_i agree.
    coef = np.zeros(N)
    coef[svc.support_] = svc.dual_coef_[0]
    np.testing.assert_allclose(coef, ref.coef, atol=1e-4 * C)


def test_fast_path_matches_sklearn_svc(problem):
    X, y, Xt, K, Kt = problem
    pi, lam = 0.35, 1 / (4 * N)
    fit = fit_weighted_svm(K, y, pi, lam)
    svc = SVC(kernel="rbf", gamma=1.0, C=2.0, tol=1e-7).fit(
        X, y, sample_weight=np.where(y > 0, 1 - pi, pi)
    )
    np.testing.assert_allclose(fit.decision(Kt), svc.decision_function(Xt), atol=1e-2)


def test_dual_solution_is_feasible(reference_fits, problem):
    _, y, _, _, _ = problem
    for (pi, lam), fit in reference_fits.items():
        upper = sample_bounds(y, pi, penalty_to_C(lam, N))
        assert np.all(fit.alpha >= -1e-12) and np.all(fit.alpha <= upper + 1e-12)
        assert abs(fit.alpha @ y) <= 1e-6 * fit.alpha.sum()
        np.testing.assert_allclose(fit.coef, fit.alpha * y)
        # Weights: class -1 gets pi, class +1 gets 1 - pi.
        C = penalty_to_C(lam, N)
        np.testing.assert_allclose(upper[y < 0], C * pi)
        np.testing.assert_allclose(upper[y > 0], C * (1 - pi))


def test_weight_moves_decision_the_right_way(problem):
    """Larger pi favours class -1: f_pi decreases in pi on average (Fisher consistency)."""
    _, y, _, K, Kt = problem
    lam = 1 / (2 * N)
    means = [fit_weighted_svm(K, y, pi, lam).decision(Kt).mean() for pi in (0.1, 0.5, 0.9)]
    assert means[0] > means[1] > means[2]


# ------------------------------------------------------------------ the KKT check
@pytest.fixture(scope="module")
def exact(problem, reference_fits):
    _, y, _, K, _ = problem
    pi, lam = 0.5, 1 / (2 * N)
    fit = reference_fits[(pi, lam)]
    upper = sample_bounds(y, pi, penalty_to_C(lam, N))
    return K, y, fit, upper


def test_kkt_residual_small_at_optimum(exact):
    K, y, fit, upper = exact
    assert kkt_residual(K, y, fit.alpha, fit.intercept, upper) < 1e-4


def test_kkt_residual_large_for_perturbed_alpha(exact):
    K, y, fit, upper = exact
    rng = np.random.default_rng(0)
    alpha = np.clip(fit.alpha + 0.3 * upper * rng.random(N), 0, upper)
    assert kkt_residual(K, y, alpha, fit.intercept, upper) > 10 * DEFAULT_KKT_TOL


def test_kkt_residual_large_for_wrong_intercept(exact):
    K, y, fit, upper = exact
    assert kkt_residual(K, y, fit.alpha, fit.intercept + 0.5, upper) > 10 * DEFAULT_KKT_TOL
    assert kkt_residual(K, y, fit.alpha, fit.intercept - 0.5, upper) > 10 * DEFAULT_KKT_TOL


def test_kkt_residual_large_for_zero_alpha(exact):
    K, y, fit, upper = exact
    for b in (-1.0, 0.0, 1.0, fit.intercept):
        assert kkt_residual(K, y, np.zeros(N), b, upper) > 10 * DEFAULT_KKT_TOL


def test_kkt_residual_flags_infeasible_alpha(exact):
    K, y, fit, upper = exact
    assert kkt_residual(K, y, fit.alpha * 1.5, fit.intercept, upper) > 0.1  # over the bound
    alpha = fit.alpha.copy()
    alpha[y > 0] *= 0.5  # breaks sum a_i y_i = 0
    assert kkt_residual(K, y, alpha, fit.intercept, upper) > 0.1


@pytest.mark.parametrize(
    "answer",
    ["perturbed", "intercept", "zeros"],
)
def test_wrong_answer_from_succeeding_solver_raises(problem, reference_fits, monkeypatch, answer):
    _, y, _, K, _ = problem
    pi, lam = 0.5, 1 / (2 * N)
    good = reference_fits[(pi, lam)]

    def lying_solver(self, y_, upper, C):
        if answer == "perturbed":
            return np.clip(good.alpha * 0.5 + 0.2 * upper, 0, upper), good.intercept
        if answer == "intercept":
            return good.alpha.copy(), good.intercept + 1.0
        return np.zeros(y_.size), 0.0

    monkeypatch.setattr(DenseGram, "fit_libsvm", lying_solver)
    with pytest.raises(SolverError) as info:
        fit_weighted_svm(K, y, pi, lam, solver="libsvm")
    msg = str(info.value)
    assert "pi=0.5" in msg and f"lambda={lam:.4g}" in msg and "KKT" in msg


def test_qp_backend_failure_becomes_solver_error(problem, monkeypatch):
    import qpsolvers

    _, y, _, K, _ = problem

    def broken(*args, **kwargs):
        raise RuntimeError("backend exploded")

    monkeypatch.setattr(qpsolvers, "solve_problem", broken)
    with pytest.raises(SolverError, match=r"pi=0\.3.*lambda=.*exploded"):
        fit_weighted_svm(K, y, 0.3, 0.01, solver="qp")

    class NoAnswer:
        x = z = y = None
        found = False

    monkeypatch.setattr(qpsolvers, "solve_problem", lambda *a, **k: NoAnswer())
    with pytest.raises(SolverError, match="pi=0.3.*no solution"):
        fit_weighted_svm(K, y, 0.3, 0.01, solver="qp")


# ------------------------------------------------------------- optimal intercept
def _hinge(b, Kc, y, upper):
    return float(np.sum(upper * np.maximum(0.0, 1.0 - y * (Kc + b))))


def _hinge_many(bs, Kc, y, upper):
    return (upper * np.maximum(0.0, 1.0 - y * (Kc + bs[:, None]))).sum(axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_optimal_intercept_minimises_weighted_hinge(seed):
    rng = np.random.default_rng(seed)
    n = 25
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    Kc = rng.normal(size=n)
    upper = rng.uniform(0.1, 2.0, size=n)
    b = optimal_intercept(Kc, y, upper)
    # The objective is piecewise linear with breakpoints y_i - Kc_i: its minimum is at one
    # of them; brute force over them and over a fine grid.
    candidates = np.concatenate([y - Kc, np.linspace(-6, 6, 24001)])
    best = _hinge_many(candidates, Kc, y, upper).min()
    assert _hinge(b, Kc, y, upper) <= best + 1e-9


def test_optimal_intercept_takes_middle_of_flat_interval():
    # Kc = 0, equal total weight in both classes: the loss is flat on [-1, 1].
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    upper = np.array([1.5, 1.5, 1.0, 1.0, 1.0])
    assert optimal_intercept(np.zeros(5), y, upper) == pytest.approx(0.0)
    # Shifted fit: breakpoints at 1 - 0.4 and -1 - 0.4, flat between, middle -0.4.
    assert optimal_intercept(np.full(5, 0.4), y, upper) == pytest.approx(-0.4)
    # Unequal totals: the minimiser is a breakpoint (heavier positives push b up to 1).
    upper2 = np.array([2.0, 2.0, 1.0, 1.0, 1.0])
    assert optimal_intercept(np.zeros(5), y, upper2) == pytest.approx(1.0)


def test_optimal_intercept_flat_interval_brute_force():
    rng = np.random.default_rng(11)
    n = 12
    y = np.array([1.0] * 6 + [-1.0] * 6)
    Kc = rng.normal(size=n)
    upper = np.ones(n)  # equal totals make a flat bottom between two breakpoints
    b = optimal_intercept(Kc, y, upper)
    grid = np.linspace(-5, 5, 200001)
    values = _hinge_many(grid, Kc, y, upper)
    flat = grid[values <= values.min() + 1e-9]
    assert _hinge(b, Kc, y, upper) <= values.min() + 1e-9
    assert b == pytest.approx(0.5 * (flat.min() + flat.max()), abs=1e-4)


# ---------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("pi", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_pi_outside_open_interval_raises(problem, pi):
    _, y, _, K, _ = problem
    with pytest.raises(InputError):
        fit_weighted_svm(K, y, pi, 0.01)


@pytest.mark.parametrize("lam", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_lambda_raises(problem, lam):
    _, y, _, K, _ = problem
    with pytest.raises(InputError):
        fit_weighted_svm(K, y, 0.5, lam)


def test_one_class_raises(problem):
    _, _, _, K, _ = problem
    with pytest.raises(InputError):
        fit_weighted_svm(K, np.ones(N), 0.5, 0.01)


@pytest.mark.parametrize("labels", [(0, 1), (1, 2), (-1, 2)])
def test_labels_not_plus_minus_one_raise(problem, labels):
    _, y, _, K, _ = problem
    bad = np.where(y > 0, labels[1], labels[0])
    with pytest.raises(InputError):
        fit_weighted_svm(K, bad, 0.5, 0.01)


def test_unknown_solver_raises(problem):
    _, y, _, K, _ = problem
    with pytest.raises(InputError):
        fit_weighted_svm(K, y, 0.5, 0.01, solver="cvxopt-by-hand")


@pytest.mark.parametrize("solver", ["libsvm", "qp"])
def test_intercept_without_free_support_vectors_is_middle_of_kkt_interval(solver):
    """METHODS section 1: with every a_i at its bound, b is the middle of the KKT interval.

    Linear kernel, x = (-2, -1, 1, 3), y = (-1, -1, 1, 1), pi = 0.5, C = 0.1: all a_i = 0.05,
    w = 0.05 (2 + 1 + 1 + 3) = 0.35.  Bounded points need y_i f(x_i) <= 1, i.e.
    b <= 1 - 0.35 x for the positives (tightest b <= -0.05) and b >= -1 - 0.35 x for the
    negatives (tightest b >= -0.3); the middle is -0.175.
    """
    x = np.array([[-2.0], [-1.0], [1.0], [3.0]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    K = Kernel("linear")(x)
    lam = 1 / (2 * 4 * 0.1)
    fit = fit_weighted_svm(K, y, 0.5, lam, solver=solver)
    np.testing.assert_allclose(fit.alpha, 0.05, rtol=1e-6)
    assert fit.intercept == pytest.approx(-0.175, abs=1e-6)
