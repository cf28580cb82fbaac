"""The exact solution path in pi, checked against definitions (METHODS sections 1 and 2).

References are independent solves of the weighted SVM at each weight:

* scikit-learn's ``SVC(kernel="precomputed", C=C, tol=1e-6)`` with per-sample weights
  ``S(y_i)`` (libsvm scales C by the weight), and
* the dense dual through qpsolvers (``solve_weighted_svm(solver="qp")``, clarabel or
  quadprog), whose intercept is the middle of the optimal interval.

Tolerance on decision values (training and new points): ``F_TOL * max(1, C * max K_ii)``
with ``F_TOL = 2e-4``.  It is the references' accuracy, not the path's: measured worst
deviations are up to 4e-5 from libsvm at tol 1e-6 and 1.3e-4 from clarabel, while the
exact path's own KKT residual is 1e-12 or below (tested separately, to 1e-8).  Where the
exact path breaks down and is traced again with a ridge, that path is exact for
``K + eps I`` with ``eps = 1e-6 max K_ii``, which moves training margins by at most
``eps C``, inside the same tolerance.  Weights are drawn uniformly in (0.001, 0.999); the
intercept is unique there with probability one (it is not unique only at the isolated
weights where the elbow is empty; those are tested separately, away from the jump).
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import fields, replace

import numpy as np
import pytest
from sklearn.svm import SVC

import wsvmgui.ladder.path as path_mod
import wsvmgui.ladder.path_start as start_mod
import wsvmgui.ladder.path_tracer as tracer_mod
import wsvmgui.solvers._libsvm_direct as libsvm_mod
from wsvmgui.errors import Cancelled, InputError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.path import PathBreakdown, WeightPath, fit_path
from wsvmgui.ladder.path_rows import DenseRows
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.solvers.kernels import Kernel, median_between_class_distance
from wsvmgui.solvers.wsvm import kkt_residuals, penalty_to_C, sample_bounds, solve_weighted_svm

F_TOL = 2e-4


# ------------------------------------------------------------------------------------------
# Problems
# ------------------------------------------------------------------------------------------
def _rbf_problem(design: str, n: int, seed: int, m_new: int = 60):
    d = simulate(design, n, seed)
    X, y = d.X, d.y.astype(float)
    kern = Kernel("rbf", sigma=median_between_class_distance(X, y))
    Xn = simulate(design, m_new, seed + 100).X
    return kern(X), y, kern(Xn, X)


def _linear(X: np.ndarray, Xn: np.ndarray):
    return X @ X.T, Xn @ X.T


def _problem(name: str):
    """``(K, y, K_new, C)`` of a named test problem."""
    rng = np.random.default_rng(SEEDS.get(name, 0))
    if name == "rbf_balanced":
        K, y, Kn = _rbf_problem("wuliu2011_ex1", 100, 1)
        return K, y, Kn, 1.0
    if name == "rbf_noisy_C10":
        K, y, Kn = _rbf_problem("wang2008_ex1", 120, 2)
        return K, y, Kn, 10.0
    if name == "rbf_9to1":
        X = rng.standard_normal((200, 2))
        y = np.where(rng.uniform(size=200) < 0.1, 1.0, -1.0)
        X[y > 0] += 1.0
        kern = Kernel("rbf", sigma=median_between_class_distance(X, y))
        Xn = rng.standard_normal((50, 2)) + 0.5
        return kern(X), y, kern(Xn, X), 1.0
    if name == "linear_balanced":
        X = rng.standard_normal((80, 3))
        y = np.where(X[:, 0] - X[:, 2] + 0.7 * rng.standard_normal(80) > 0, 1.0, -1.0)
        K, Kn = _linear(X, rng.standard_normal((40, 3)))
        return K, y, Kn, 1.0
    if name == "linear_p2_grid":
        # Integer grid in 2-d: many points exactly on the margins, far more elbow points
        # than features + 1, and many duplicates.
        X = rng.integers(-3, 4, size=(120, 2)).astype(float) * 0.5
        y = np.where(X.sum(axis=1) + 0.5 * rng.integers(-1, 2, 120) > 0, 1.0, -1.0)
        K, Kn = _linear(X, rng.uniform(-1.5, 1.5, size=(40, 2)))
        return K, y, Kn, 1.0
    if name == "rbf_duplicates":
        X = rng.standard_normal((80, 2))
        y = np.where(X[:, 0] + 0.7 * rng.standard_normal(80) > 0, 1.0, -1.0)
        X = np.vstack([X, X[:20], X[:5]])  # 25 copies, 5 points three times
        y = np.concatenate([y, y[:20], y[:5]])
        y[100:105] *= -1  # the third copies carry the other label
        kern = Kernel("rbf", sigma=1.0)
        Xn = rng.standard_normal((40, 2))
        return kern(X), y, kern(Xn, X), 1.0
    if name == "tiny_n20":
        X = rng.standard_normal((20, 2))
        y = np.where(X[:, 1] > 0, 1.0, -1.0)
        y[:2] *= -1
        kern = Kernel("rbf", sigma=1.0)
        return kern(X), y, kern(rng.standard_normal((20, 2)), X), 1.0
    raise KeyError(name)


SEEDS = {
    "rbf_9to1": 11,
    "linear_balanced": 12,
    "linear_p2_grid": 13,
    "rbf_duplicates": 14,
    "tiny_n20": 15,
}
SMALL = [
    "rbf_balanced",
    "rbf_noisy_C10",
    "rbf_9to1",
    "linear_balanced",
    "linear_p2_grid",
    "rbf_duplicates",
    "tiny_n20",
]
#: Problems also checked against the QP reference at all 200 weights (the others at 40).
QP_ALL = {"rbf_balanced": "clarabel", "linear_balanced": "quadprog", "tiny_n20": "quadprog"}


@pytest.fixture(scope="module")
def fitted():
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            K, y, Kn, C = _problem(name)
            path = fit_path(K, y, 1.0 / (2 * y.size * C))
            cache[name] = (K, y, Kn, C, path)
        return cache[name]

    return get


def _weights(n: int, seed: int = 0) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).uniform(0.001, 0.999, n))


def _tol(K: np.ndarray, C: float) -> float:
    return F_TOL * max(1.0, C * float(np.max(np.diag(K))))


# ------------------------------------------------------------------------------------------
# Agreement with independent solves
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SMALL)
def test_path_matches_libsvm_at_200_weights(fitted, name):
    K, y, Kn, C, path = fitted(name)
    pis = _weights(200)
    F, Fn = path.decision_at(K, pis), path.decision_at(Kn, pis)
    worst = 0.0
    for j, pi in enumerate(pis):
        clf = SVC(kernel="precomputed", C=C, tol=1e-6)
        clf.fit(K, y, sample_weight=np.where(y > 0, 1.0 - pi, pi))
        worst = max(
            worst,
            float(np.abs(clf.decision_function(K) - F[:, j]).max()),
            float(np.abs(clf.decision_function(Kn) - Fn[:, j]).max()),
        )
    assert worst <= _tol(K, C), f"{name}: max |f_path - f_libsvm| = {worst:.3g}"


@pytest.mark.parametrize("name", SMALL)
def test_path_matches_qp_reference(fitted, name):
    K, y, Kn, C, path = fitted(name)
    solver = QP_ALL.get(name, "clarabel")
    pis = _weights(200 if name in QP_ALL else 40, seed=1)
    lam = 1.0 / (2 * y.size * C)
    F, Fn = path.decision_at(K, pis), path.decision_at(Kn, pis)
    worst = 0.0
    for j, pi in enumerate(pis):
        fit = solve_weighted_svm(K, y, float(pi), lam, solver="qp", qp_solver=solver)
        worst = max(
            worst,
            float(np.abs(fit.decision(K) - F[:, j]).max()),
            float(np.abs(fit.decision(Kn) - Fn[:, j]).max()),
        )
    assert worst <= _tol(K, C), f"{name}: max |f_path - f_qp| = {worst:.3g}"


@pytest.mark.parametrize("name", SMALL)
def test_path_kkt_residual_is_tiny(fitted, name):
    """The dual along the path satisfies the KKT conditions of the original K."""
    K, y, _, C, path = fitted(name)
    pis = np.concatenate([_weights(100, seed=2), path.pis[1:-1]])
    coef, b = path.coef_matrix(pis)
    upper = np.vstack([sample_bounds(y, p, path.C) for p in pis])
    resid = kkt_residuals(K, y, coef * y, b, upper)
    # Relative dual bounds (a / U) lose digits within ~1e-4 of the ends, where U -> 0.
    inner = (pis > 1e-4) & (pis < 1 - 1e-4)
    bound = 1e-6 + 10.0 * path.ridge * C
    assert path.ridge == 0.0  # these problems are well conditioned: the exact path
    assert resid[inner].max() <= bound
    assert np.median(resid[inner]) <= 1e-10
    assert path.kkt_residual <= bound
    assert path.path_residual <= 1e-8


def test_path_matches_libsvm_n1000(fitted):
    """n = 1000: a subset of 40 weights (libsvm at n = 1000 costs ~50 ms a fit)."""
    K, y, Kn = _rbf_problem("wuliu2011_ex1", 1000, 3)
    path = fit_path(K, y, 1.0 / (2 * 1000))
    pis = _weights(40, seed=3)
    F, Fn = path.decision_at(K, pis), path.decision_at(Kn, pis)
    worst = 0.0
    for j, pi in enumerate(pis):
        clf = SVC(kernel="precomputed", C=1.0, tol=1e-6)
        clf.fit(K, y, sample_weight=np.where(y > 0, 1.0 - pi, pi))
        worst = max(
            worst,
            float(np.abs(clf.decision_function(K) - F[:, j]).max()),
            float(np.abs(clf.decision_function(Kn) - Fn[:, j]).max()),
        )
    assert worst <= F_TOL


@pytest.mark.slow
def test_path_matches_libsvm_n5000():
    """n = 5000: the path once, libsvm at 4 random weights (each fit takes seconds)."""
    K, y, Kn = _rbf_problem("wuliu2011_ex1", 5000, 4, m_new=200)
    path = fit_path(K, y, 1.0 / (2 * 5000))
    pis = _weights(4, seed=4)
    F, Fn = path.decision_at(K, pis), path.decision_at(Kn, pis)
    for j, pi in enumerate(pis):
        clf = SVC(kernel="precomputed", C=1.0, tol=1e-6, cache_size=500)
        clf.fit(K, y, sample_weight=np.where(y > 0, 1.0 - pi, pi))
        assert np.abs(clf.decision_function(K) - F[:, j]).max() <= F_TOL
        assert np.abs(clf.decision_function(Kn) - Fn[:, j]).max() <= F_TOL


def test_empty_elbow_jump_matches_qp_away_from_the_jump():
    """Small C and symmetric data: at pi = 1/2 every dual is at a bound, b jumps."""
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.5, 1.0], [-0.5, -1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    K, C = X @ X.T, 0.05
    lam = 1.0 / (2 * 4 * C)
    path = fit_path(K, y, lam)
    jumps = np.flatnonzero(np.diff(path.pis) == 0)
    assert jumps.size >= 1
    assert np.all(np.diff(path.intercepts[jumps[0] : jumps[-1] + 2]) < 0)  # b falls at 1/2
    for pi in np.linspace(0.02, 0.98, 49) + 1e-3:
        fit = solve_weighted_svm(K, y, float(pi), lam, solver="qp", qp_solver="quadprog")
        assert np.allclose(path.decision_at(K, [pi])[:, 0], fit.decision(K), atol=1e-5)
    est = path.estimate(K)
    assert np.all((est.p >= 0) & (est.p <= 1))
    assert np.all(est.lo <= est.p) and np.all(est.p <= est.hi)


# ------------------------------------------------------------------------------------------
# Probabilities
# ------------------------------------------------------------------------------------------
def test_count_rule_matches_fine_grid_ladder(monkeypatch):
    """p_hat from the path agrees with a 1600-weight grid ladder to within 1/(2M).

    The ladder's libsvm runs at tolerance 1e-9 so that its signs are exact except for
    points whose f crosses 0 within ~1e-9 of a grid weight.
    """
    K, y, Kn = _rbf_problem("wuliu2011_ex1", 100, 5, m_new=200)
    lam = 1.0 / (2 * 100)
    path = fit_path(K, y, lam)
    M = 1600
    monkeypatch.setattr(libsvm_mod, "LIBSVM_TOL", 1e-9)
    ladder = fit_ladder(K, y, weight_grid(M), lam)
    for Kx in (K, Kn):
        est, grid = path.estimate(Kx), ladder.estimate(Kx)
        both = est.monotone & grid.monotone
        assert both.mean() > 0.9
        # The ridge moves f by ~1e-6, i.e. the crossing by ~1e-6 / |df/dpi|.
        assert np.abs(est.p - grid.p)[both].max() <= 0.5 / M + 1e-4
        # The grid's bracket contains the exact crossing.
        assert np.all(grid.lo[both] - 1e-4 <= est.p[both])
        assert np.all(est.p[both] <= grid.hi[both] + 1e-4)


def test_estimate_against_dense_evaluation(fitted):
    K, y, Kn, C, path = fitted("rbf_noisy_C10")
    est = path.estimate(Kn)
    g = np.linspace(0.0, 1.0, 40001)[1:-1]
    Fg = path.decision_at(Kn, g)
    # Measure of {f > 0}: exact piecewise linear vs a 40000-point Riemann sum.
    assert np.abs(est.p - (Fg > 0).mean(axis=1)).max() <= 1e-3
    first_zero = g[np.argmax(Fg <= 0, axis=1)]
    assert np.abs(est.lo - first_zero).max() <= 1e-4
    last_pos = g[Fg.shape[1] - 1 - np.argmax((Fg > 0)[:, ::-1], axis=1)]
    assert np.abs(est.hi - last_pos).max() <= 1e-4
    # Monotone means one sign change on the fine grid, + then -.
    changes = np.sum(np.diff((Fg > 0).astype(int), axis=1) != 0, axis=1)
    assert np.all(changes[est.monotone] <= 1)


def test_read_only_path_predicts_the_same(fitted):
    # A path read back from a model file or a read-only memory map holds read-only arrays;
    # the compiled prediction (explicit signatures) must still take them.
    K, y, Kn, C, path = fitted("rbf_noisy_C10")
    arrays = {
        f.name: getattr(path, f.name).copy()
        for f in fields(path)
        if isinstance(getattr(path, f.name), np.ndarray)
    }
    for a in arrays.values():
        a.flags.writeable = False
    frozen = replace(path, **arrays)
    Kr = Kn.copy()
    Kr.flags.writeable = False
    expected, got = path.estimate(Kn), frozen.estimate(Kr)
    np.testing.assert_array_equal(got.p, expected.p)
    np.testing.assert_array_equal(got.lo, expected.lo)
    np.testing.assert_array_equal(got.hi, expected.hi)
    # fitting on read-only inputs gives the same path
    K_ro, y_ro = K.copy(), y.copy()
    K_ro.flags.writeable = y_ro.flags.writeable = False
    refit = fit_path(K_ro, y_ro, 1.0 / (2 * y.size * C))
    np.testing.assert_array_equal(refit.pis, path.pis)


@pytest.mark.parametrize("name", ["rbf_noisy_C10", "linear_p2_grid", "rbf_duplicates"])
def test_estimate_invariants(fitted, name):
    K, y, Kn, C, path = fitted(name)
    for Kx in (K, Kn):
        for rule in ("count", "extreme"):
            est = path.estimate(Kx, rule=rule)
            assert np.all((est.p >= 0) & (est.p <= 1))
            assert np.all(est.lo <= est.p) and np.all(est.p <= est.hi)
            m = est.monotone
            assert np.array_equal(est.lo[m], est.hi[m]) and np.array_equal(est.p[m], est.lo[m])
        count, extreme = path.estimate(Kx, "count"), path.estimate(Kx, "extreme")
        assert np.array_equal(extreme.p, 0.5 * (extreme.lo + extreme.hi))
        assert np.array_equal(count.lo, extreme.lo) and np.array_equal(count.hi, extreme.hi)
    ends = path.decision_at(np.vstack([K, Kn]), [1e-9, 1 - 1e-9])
    assert np.all(ends[:, 0] > 0) and np.all(ends[:, 1] < 0)
    F = path.decision(Kn)
    assert np.all(F[:, 0] > 0) and np.all(F[:, -1] < 0)


def test_decision_blocks_equal_dense_reconstruction(fitted):
    K, y, Kn, C, path = fitted("rbf_9to1")
    coef, b = path.coef_matrix(path.pis)
    assert np.allclose(path.decision(Kn), Kn @ coef.T + b, atol=1e-10, rtol=0)


def test_coef_at_interpolates_exactly(fitted):
    """Between breakpoints c and b are linear; at any pi they solve the weighted SVM."""
    K, y, _, C, path = fitted("rbf_balanced")
    k = path.n_breakpoints // 2
    while path.pis[k + 1] == path.pis[k]:
        k += 1
    p0, p1 = path.pis[k], path.pis[k + 1]
    mid = 0.5 * (p0 + p1)
    c0, c1, cm = path.coef_at(p0), path.coef_at(p1), path.coef_at(mid)
    assert np.allclose(cm, 0.5 * (c0 + c1), atol=1e-12)
    a = cm * y
    U = sample_bounds(y, mid, path.C)
    assert np.all(a >= -1e-9 * path.C) and np.all(a <= U + 1e-9 * path.C)
    assert abs(a @ y) <= 1e-9 * a.sum()
    assert np.isclose(path.intercept_at(mid), 0.5 * (path.intercepts[k] + path.intercepts[k + 1]))


def test_to_ladder_and_compress(fitted):
    K, y, Kn, C, path = fitted("rbf_duplicates")
    w = weight_grid(40)
    ladder = path.to_ladder(w, K)
    assert ladder.coef.shape == (39, y.size)
    assert np.all(ladder.kkt_residual <= 1e-4)
    assert np.allclose(ladder.decision(Kn), path.decision_at(Kn, w), atol=1e-12)
    grid = ladder.estimate(Kn)
    est = path.estimate(Kn)
    m = grid.monotone & est.monotone
    assert np.all(np.abs(grid.p - est.p)[m] <= 0.5 / 40 + 1e-9)
    small, keep = path.compress()
    assert isinstance(small, WeightPath) and keep.size <= y.size
    assert np.allclose(small.decision(Kn[:, keep]), path.decision(Kn), atol=1e-12)
    e2 = small.estimate(Kn[:, keep])
    assert np.array_equal(e2.monotone, est.monotone)
    assert np.allclose(e2.p, est.p, atol=1e-12)


def test_path_storage_is_compact(fitted):
    K, y, _, C, path = fitted("rbf_balanced")
    B, n = path.n_breakpoints, y.size
    assert path.t_idx.size <= B * (path.max_elbow + 1)
    assert path.nbytes < 8 * n * B  # far below the dense (B, n) coefficient matrix
    assert path.pis[0] == 0.0 and path.pis[-1] == 1.0
    assert np.all(np.diff(path.pis) >= 0)


# ------------------------------------------------------------------------------------------
# Failure, cancellation, progress, determinism
# ------------------------------------------------------------------------------------------
def test_too_many_steps_breaks_down(fitted):
    K, y, _, C, _ = fitted("rbf_balanced")
    with pytest.raises(PathBreakdown, match=r"more than 3 steps.*|pi=.*lambda=.*more than 3"):
        fit_path(K, y, 1.0 / (2 * y.size), max_steps=3)


def test_corrupted_step_is_caught(fitted, monkeypatch):
    """Corrupted running sums (margins off by 0.05 off the elbow) fail the per-step KKT
    check, in the exact trace and in the ridge retry alike."""
    K, y, _, C, _ = fitted("rbf_balanced")
    real = tracer_mod._Tracer._run
    calls = {"n": 0}

    def corrupt(self, *records):
        calls["n"] += 1
        if calls["n"] % 2 == 0:
            off = 0.05 * self.y * (self.state != path_mod.E_SET) / (self.C * (1.0 - self.pi))
            self.S[0] -= off  # f moves by -0.05 y, h by 0.05 y / (1 - pi)
        return real(self, *records)

    monkeypatch.setattr(tracer_mod, "YIELD_EVERY", 8)
    monkeypatch.setattr(tracer_mod._Tracer, "_run", corrupt)
    with pytest.raises(PathBreakdown, match=r"pi=.*lambda=.*KKT violation.*exact path failed"):
        fit_path(K, y, 1.0 / (2 * y.size))
    with pytest.raises(PathBreakdown, match=r"pi=.*lambda=.*KKT violation"):
        fit_path(K, y, 1.0 / (2 * y.size), ridge=0.0)


def test_corrupted_path_fails_the_independent_kkt_check(fitted, monkeypatch):
    K, y, _, C, _ = fitted("rbf_balanced")
    real = path_mod._assemble

    def shifted(*args):
        flat = real(*args)
        return replace(flat, intercepts=flat.intercepts + 0.05)

    monkeypatch.setattr(path_mod, "_assemble", shifted)
    with pytest.raises(PathBreakdown, match=r"pi=.*lambda=.*KKT check failed"):
        fit_path(K, y, 1.0 / (2 * y.size))


def test_ridge_fallback_when_the_exact_path_breaks_down(fitted, monkeypatch):
    """A breakdown of the exact path is retried with the ridge, and the result is checked."""
    K, y, Kn, C, exact = fitted("rbf_balanced")
    assert exact.ridge == 0.0
    real = path_mod._trace

    def fail_exact(prob, eps):
        if eps == 0.0:
            raise PathBreakdown("solution path at pi=0.5, lambda=1: forced")
        return real(prob, eps)

    monkeypatch.setattr(path_mod, "_trace", fail_exact)
    path = fit_path(K, y, 1.0 / (2 * y.size * C))
    assert path.ridge == pytest.approx(1e-6 * np.max(np.diag(K)))
    pis = _weights(20, seed=7)
    assert np.abs(path.decision_at(Kn, pis) - exact.decision_at(Kn, pis)).max() <= _tol(K, C)
    with pytest.raises(PathBreakdown, match="exact path failed first: .*forced"):
        fit_path(K, y, 1.0 / (2 * y.size * C), max_steps=5)


@pytest.mark.parametrize("all_fail", [False, True], ids=["retry succeeds", "all fail"])
def test_a_failed_attempt_does_not_keep_the_kernel_matrix_alive(fitted, monkeypatch, all_fail):
    """A breakdown kept for the message must not form a cycle with its traceback (whose
    frames hold the kernel matrix): the matrix goes as soon as the caller drops it, without
    the cyclic garbage collector (a tuning run held a fold's matrix beside the next one)."""
    K0, y, _, C, _ = fitted("rbf_balanced")
    real = path_mod._trace

    def fail(prob, eps):
        if eps == 0.0 or all_fail:
            raise PathBreakdown("solution path at pi=0.5, lambda=1: forced")
        return real(prob, eps)

    monkeypatch.setattr(path_mod, "_trace", fail)
    K = K0.copy()
    alive = weakref.ref(K)
    gc.collect()
    gc.disable()
    try:
        try:
            fit_path(K, y, 1.0 / (2 * y.size * C))
            failed = False
        except PathBreakdown:
            failed = True
        del K
        assert alive() is None
    finally:
        gc.enable()
    assert failed == all_fail


def test_frequent_exact_refresh_of_running_sums(fitted, monkeypatch):
    """The sums over L are recomputed exactly every few updates without changing the path
    (a refresh once read the sets before the moving point's change; n = 10,000 hit it)."""
    K, y, Kn, C, path = fitted("rbf_noisy_C10")
    monkeypatch.setattr(tracer_mod, "SUM_REFRESH", 3)
    again = fit_path(K, y, 1.0 / (2 * y.size * C))
    assert again.n_breakpoints == path.n_breakpoints
    assert np.allclose(again.decision(Kn), path.decision(Kn), atol=1e-9, rtol=0)


def test_breakdown_is_a_solver_error():
    from wsvmgui.errors import SolverError

    assert issubclass(PathBreakdown, SolverError)
    assert issubclass(path_mod.PathTooCostly, PathBreakdown)


def test_max_elbow_stops_large_elbows_only(fitted):
    """An elbow beyond ``max_elbow`` stops the path (the caller takes the grid); at or
    above the path's own largest elbow nothing changes."""
    K, y, Kn, C, path = fitted("rbf_noisy_C10")
    lam = 1.0 / (2 * y.size * C)
    assert path.work > 0 and path.max_elbow > 3
    cap = path.max_elbow - 1
    with pytest.raises(path_mod.PathTooCostly, match=rf"pi=.*lambda=.*grew to {cap + 1} points"):
        fit_path(K, y, lam, max_elbow=cap)
    same = fit_path(K, y, lam, max_elbow=path.max_elbow)
    assert same.pis.tobytes() == path.pis.tobytes() and same.work == path.work
    assert path_mod.auto_max_elbow(y.size) >= 50
    assert path_mod.auto_max_elbow(10_000) == int(path_mod.AUTO_ELBOW_FRACTION * 10_000)


def test_cancellation_and_progress(fitted):
    K, y, _, C, _ = fitted("rbf_noisy_C10")
    seen: list[tuple[int, int]] = []
    fit_path(K, y, 1.0 / (2 * y.size * C), progress=lambda d, t, _p: seen.append((d, t)))
    done = [d for d, _ in seen]
    assert all(t == 1000 for _, t in seen)
    assert done == sorted(done) and done[-1] == 1000 and len(done) >= 3
    polls = {"n": 0}

    def cancel_third() -> bool:
        polls["n"] += 1
        return polls["n"] >= 3

    with pytest.raises(Cancelled):
        fit_path(K, y, 1.0 / (2 * y.size * C), should_cancel=cancel_third)


def test_deterministic(fitted):
    K, y, _, C, path = fitted("rbf_9to1")
    again = fit_path(K, y, 1.0 / (2 * y.size * C))
    for f in fields(WeightPath):
        value, other = getattr(path, f.name), getattr(again, f.name)
        if isinstance(value, np.ndarray):
            assert value.dtype == other.dtype and value.tobytes() == other.tobytes(), f.name
        else:
            assert value == other, f.name


def test_input_errors():
    K = np.eye(4)
    with pytest.raises(InputError):
        fit_path(K, np.array([1.0, 1.0, 1.0, 1.0]), 0.1)
    with pytest.raises(InputError):
        fit_path(K, np.array([1.0, -1.0, 2.0, 1.0]), 0.1)
    with pytest.raises(InputError):
        fit_path(np.eye(3), np.array([1.0, -1.0, 1.0, -1.0]), 0.1)
    with pytest.raises(InputError):
        fit_path(K, np.array([1.0, -1.0, 1.0, -1.0]), -1.0)
    assert penalty_to_C(0.1, 4) == pytest.approx(1.25)


# ------------------------------------------------------------------------------------------
# The compiled kernel
# ------------------------------------------------------------------------------------------
_REFERENCE_SCRIPT = """
import sys
import numpy as np
import wsvmgui.ladder._path_kernel as pk
import wsvmgui.ladder._path_predict as pp
from wsvmgui.ladder.path import fit_path
assert not hasattr(pk.run, "signatures") and not hasattr(pp.plan, "signatures")  # plain Python
d = np.load(sys.argv[1])
path = fit_path(d["K"], d["y"], float(d["lam"]))
est = path.estimate(d["Kn"])
np.savez(sys.argv[2], pis=path.pis, intercepts=path.intercepts, t_ptr=path.t_ptr,
         t_idx=path.t_idx, t_val=path.t_val, ev_idx=path.ev_idx, ev_state=path.ev_state,
         p=est.p, lo=est.lo, hi=est.hi)
"""


def test_compiled_kernel_matches_pure_python(fitted, tmp_path):
    """The numba kernels and the same functions run as plain Python (NUMBA_DISABLE_JIT)
    trace the same breakpoints, sets and values; they differ by rounding at most."""
    import os
    import subprocess
    import sys

    K, y, Kn, C, path = fitted("rbf_noisy_C10")
    np.savez(tmp_path / "in.npz", K=K, y=y, Kn=Kn, lam=1.0 / (2 * y.size * C))
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = os.path.dirname(os.path.dirname(path_mod.__file__))
    env["PYTHONPATH"] = os.path.dirname(root) + os.pathsep + env.get("PYTHONPATH", "")
    script = tmp_path / "ref.py"
    script.write_text(_REFERENCE_SCRIPT)
    subprocess.run(
        [sys.executable, str(script), str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
        env=env,
        check=True,
        timeout=300,
    )
    ref = np.load(tmp_path / "out.npz")
    est = path.estimate(Kn)
    for name in ("t_ptr", "t_idx", "ev_idx", "ev_state"):
        assert np.array_equal(ref[name], getattr(path, name)), name
    # Rounding differs (e.g. math.hypot in the Givens rotations), amplified by the
    # elbow systems' conditioning: measured 2e-13 on pi, 1e-10 = 1e-11 C on coefficients.
    for name, tol in (("pis", 1e-11), ("intercepts", 1e-10), ("t_val", 1e-9 * C)):
        assert np.abs(ref[name] - getattr(path, name)).max() <= tol, name
    for name in ("p", "lo", "hi"):
        assert np.abs(ref[name] - getattr(est, name)).max() <= 1e-11, name


def test_elbow_factor_under_insertions_and_removals(fitted):
    """After random joins and departures the updated factor R is the Cholesky factor of
    K_EE + eps I + kappa 11'; an exact duplicate of an elbow point is refused."""
    K, y, _, C, _ = fitted("rbf_balanced")
    n = y.size
    K = K.copy()
    K[n - 1], K[:, n - 1] = K[0], K[:, 0]  # point n - 1 duplicates point 0
    K[n - 1, n - 1] = K[0, 0]
    rows = DenseRows(K)
    tr = tracer_mod._Tracer(rows, y, np.ones(n), C, 1.0 / (2 * n * C), 1e-10, 1e-6, ridge=0.0)
    tr.set_state(np.full(n, path_mod.R_SET), np.empty(0, dtype=np.intp))
    rng = np.random.default_rng(3)
    for step in range(400):
        members = set(tr.members.tolist())
        j = int(rng.integers(0, n - 1))
        if j in members and (len(members) > 12 or rng.uniform() < 0.4):
            assert tr.move(j, path_mod.R_SET)
        elif j not in members:
            tr.move(j, path_mod.E_SET)
        if step % 50 == 49:
            E, m = tr.members, tr.m
            R = tr.R[:m, :m]
            A = K[np.ix_(E, E)] + tr.kappa
            assert np.allclose(np.triu(R).T @ np.triu(R), A, rtol=0, atol=1e-10)
            assert np.all(np.diag(R) > 0)
    if 0 not in set(tr.members.tolist()):
        assert tr.move(0, path_mod.E_SET)
    assert not tr.move(n - 1, path_mod.E_SET)  # dependent: refused, nothing changed
    assert tr.state[n - 1] == path_mod.R_SET and (n - 1) not in set(tr.members.tolist())


def test_kernel_compiles_without_a_cache(monkeypatch):
    """Where no cache location is writable numba refuses cache=True; the kernels are
    then compiled in memory instead of failing."""
    import wsvmgui.ladder._path_jit as pk

    calls: list[bool] = []

    def fake_njit(sig, cache=False, **options):
        calls.append(cache)
        if cache:
            raise RuntimeError("cannot cache function 'f': no locator available for file")
        return lambda fn: fn

    monkeypatch.setattr(pk, "_njit", fake_njit)
    monkeypatch.setattr(pk, "_no_cache", [])

    @pk._jit("int64(int64)")
    def twice(x):
        return 2 * x

    assert twice(3) == 6 and calls == [True, False] and pk._no_cache == ["twice"]


def test_paths_on_threads_equal_sequential_ones(fitted):
    """The kernels release the GIL and share no state: paths traced on two threads at
    once are identical to the sequential ones."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [fitted(name) for name in ("rbf_balanced", "rbf_9to1", "rbf_noisy_C10")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        paths = list(pool.map(lambda j: fit_path(j[0], j[1], 1.0 / (2 * j[1].size * j[3])), jobs))
    for (_, _, Kn, _, ref), path in zip(jobs, paths, strict=True):
        assert path.pis.tobytes() == ref.pis.tobytes()
        assert path.t_val.tobytes() == ref.t_val.tobytes()
        assert np.array_equal(path.estimate(Kn).p, ref.estimate(Kn).p)


def test_the_ridge_retry_reuses_libsvm_starts(fitted, monkeypatch):
    """libsvm does not see the ridge: its start at a weight (``start=0.5``, the fallback
    start) is solved once per fit, even when the exact trace from it breaks down and the
    ridge retries from the same weight (a rank-deficient kernel paid four libsvm fits for
    three weights before)."""
    K, y, Kn, C, exact = fitted("rbf_balanced")
    calls = []
    real_start, real_trace = start_mod._libsvm_start, tracer_mod._Tracer.trace

    def counting(rows, y, upper, C):
        calls.append(upper.copy())
        return real_start(rows, y, upper, C)

    def fail_exact(self, *args, **kwargs):
        if self.ridge == 0.0:
            raise PathBreakdown("solution path at pi=0.5, lambda=1: forced")
        return real_trace(self, *args, **kwargs)

    monkeypatch.setattr(start_mod, "_libsvm_start", counting)
    monkeypatch.setattr(tracer_mod._Tracer, "trace", fail_exact)
    path = fit_path(K, y, 1.0 / (2 * y.size * C), start=0.5)
    assert path.ridge > 0.0
    # the exact attempt failed after its start at pi = 1/2; the ridge reused that start
    assert len(calls) == 1
    pis = _weights(20, seed=8)
    assert np.abs(path.decision_at(Kn, pis) - exact.decision_at(Kn, pis)).max() <= _tol(K, C)


# ------------------------------------------------------------------------------------------
# The start at pi = 0 (the limit problem) and kernel rows made on the fly
# ------------------------------------------------------------------------------------------
def _limit_slopes(K: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray]:
    """alpha of the tracer's start (``dc/dpi = C alpha`` on the positives) and the set codes."""
    from wsvmgui.ladder.path_tracer import _Limits, _Progress

    n = y.size
    tr = start_mod.limit_start(
        DenseRows(K), y, np.ones(n), C, 1.0 / (2 * n * C), 1e-10, 1e-6, 0.0,
        _Progress(None, None), _Limits(), 10_000,
    )  # fmt: skip
    V, beta, FH = tr.evaluate()
    alpha = np.zeros(n)
    alpha[tr.members] = V[:, 1] / C
    assert np.abs(V[:, 0]).max() <= 1e-10 and beta[0] == pytest.approx(1.0, abs=1e-10)
    return alpha, tr.state.copy()


@pytest.mark.parametrize("name", ["rbf_balanced", "rbf_noisy_C10", "rbf_9to1", "tiny_n20"])
def test_start_at_zero_solves_the_limit_problem(name):
    """The start's slopes are C times the solution of min 1/2 a'K_PP a - s'a over a >= 0,
    1'a = N_- (docs/notes/path.md, section 3), solved independently by clarabel."""
    from wsvmgui.solvers.qp import solve_qp

    K, y, _, C = _problem(name)
    alpha, state = _limit_slopes(K, y, C)
    pos, neg = y > 0, y < 0
    assert np.all(state[neg] == path_mod.L_SET)
    assert np.all(alpha[neg] == 0.0) and np.all(alpha >= -1e-12)
    assert alpha.sum() == pytest.approx(neg.sum(), rel=1e-10)
    P = K[np.ix_(pos, pos)]
    s = K[np.ix_(pos, neg)].sum(axis=1)
    m = int(pos.sum())
    ref = solve_qp(P, -s, A=np.ones((1, m)), b=np.array([float(neg.sum())]), lb=np.zeros(m))
    a_ref = np.asarray(ref.x)

    def objective(a: np.ndarray) -> float:
        return 0.5 * a @ P @ a - s @ a

    assert objective(alpha[pos]) <= objective(a_ref) + 1e-7 * (1.0 + abs(objective(a_ref)))
    assert np.abs(alpha[pos] - a_ref).max() <= 1e-4 * neg.sum()
    # KKT of the limit problem: d = P a - s + beta >= 0, zero on the support.
    d = P @ alpha[pos] - s
    d -= d[alpha[pos] > 0].min()
    assert d.min() >= -1e-9 * (1.0 + np.abs(s).max())


def test_default_start_needs_no_solver(monkeypatch):
    """Neither a well-posed problem nor a rank-deficient one at large C (where libsvm's
    start took millions of iterations) calls libsvm; the path passes its checks and
    agrees with the QP reference."""

    def no_libsvm(*args):
        raise AssertionError("libsvm start called")

    monkeypatch.setattr(start_mod, "_libsvm_start", no_libsvm)
    d = simulate("zeng_ex4", 350, seed=0)
    X = (d.X - d.X.mean(axis=0)) / d.X.std(axis=0)
    y = np.where(d.y == d.classes[0], 1.0, -1.0)
    K = Kernel("rbf", sigma=0.5 * median_between_class_distance(X, y))(X)
    C = 100.0
    lam = 1.0 / (2 * y.size * C)
    path = fit_path(K, y, lam)
    assert path.kkt_residual <= 1e-2
    for pi in (0.1, 0.37, 0.8):
        fit = solve_weighted_svm(K, y, pi, lam, solver="qp", qp_solver="clarabel")
        # the ridge moves margins by at most eps C = 1e-4 (docs/notes/path.md, section 5)
        tol = 2e-3 * C + 10 * path.ridge * C
        assert np.abs(path.decision_at(K, [pi])[:, 0] - fit.decision(K)).max() <= tol


def test_libsvm_start_answers_when_the_limit_problem_fails(fitted, monkeypatch):
    """A start at pi = 0 that cannot be solved gives way to libsvm at 1/2 (polished): the
    same path."""
    import wsvmgui.ladder._path_start as compiled

    K, y, Kn, C, path = fitted("rbf_noisy_C10")
    monkeypatch.setattr(compiled, "limit_start", lambda *args: tracer_mod._kernel().ST_ILL)
    again = fit_path(K, y, 1.0 / (2 * y.size * C))
    pis = _weights(50, seed=9)
    assert np.abs(again.decision_at(Kn, pis) - path.decision_at(Kn, pis)).max() <= 1e-8


def _fly(K_name: str):
    d = simulate(K_name, 400, seed=3)
    X, y = d.X, d.y.astype(float)
    kern = Kernel("rbf", sigma=median_between_class_distance(X, y))
    Xn = simulate(K_name, 100, seed=4).X
    return X, y, kern, kern(Xn, X)


@pytest.mark.parametrize("design", ["wuliu2011_ex1", "wang2008_ex1"])
def test_path_on_the_fly_equals_the_dense_path(design):
    """Kernel rows made from the features when the elbow needs them (no n x n matrix)
    give the dense path: the same breakpoints and estimates, to rounding."""
    from wsvmgui.solvers.gram import OnTheFlyGram

    X, y, kern, Kn = _fly(design)
    lam = 1.0 / (2 * y.size * 10.0)
    dense = fit_path(kern(X), y, lam)
    fly = fit_path(OnTheFlyGram(X, kern), y, lam)
    pis = _weights(100, seed=5)
    gap = np.abs(fly.decision_at(Kn, pis) - dense.decision_at(Kn, pis)).max()
    assert fly.kkt_residual <= 1e-6 + 10.0 * fly.ridge * 10.0
    if fly.ridge == dense.ridge == 0.0:
        assert fly.n_breakpoints == dense.n_breakpoints
        assert np.abs(fly.pis - dense.pis).max() <= 1e-10
        assert gap <= 1e-8
        assert np.abs(fly.estimate(Kn).p - dense.estimate(Kn).p).max() <= 1e-8
    else:
        # A large, nearly singular elbow: rounding decides whether the exact trace or the
        # ridge retrace answers; the two agree to the ridge's eps C (docs/notes/path.md).
        assert gap <= F_TOL * 10.0 + 10.0 * max(fly.ridge, dense.ridge) * 10.0
        diff = np.abs(fly.estimate(Kn).p - dense.estimate(Kn).p)
        assert np.quantile(diff, 0.95) <= 1e-3


def test_path_on_the_fly_holds_few_rows(monkeypatch):
    """The row store stays near the elbow's size, rows are replaced as points come and
    go, and an elbow larger than the allowed rows stops the path (PathTooCostly)."""
    import wsvmgui.ladder.path_rows as rows_mod
    from wsvmgui.solvers.gram import OnTheFlyGram

    X, y, kern, Kn = _fly("wuliu2011_ex1")
    lam = 1.0 / (2 * y.size)
    stores = []
    real = rows_mod.FeatureRows.__init__

    def keep(self, *args, **kwargs):
        real(self, *args, **kwargs)
        stores.append(self)

    monkeypatch.setattr(rows_mod.FeatureRows, "__init__", keep)
    small = fit_path(OnTheFlyGram(X, kern), y, lam, max_rows=64)
    held = stores[-1]
    assert held.K.shape[0] <= 64 < y.size and held.made > y.size  # rows made again
    dense = fit_path(kern(X), y, lam)
    assert np.abs(small.estimate(Kn).p - dense.estimate(Kn).p).max() <= 1e-8
    with pytest.raises(path_mod.PathTooCostly, match="kernel rows"):
        fit_path(OnTheFlyGram(X, kern), y, lam, max_rows=2)


def test_path_on_the_fly_merges_duplicate_rows(fitted):
    """Equal feature rows with equal labels are merged (found from the features)."""
    from wsvmgui.solvers.gram import OnTheFlyGram

    rng = np.random.default_rng(SEEDS["rbf_duplicates"])
    X = rng.standard_normal((80, 2))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(80) > 0, 1.0, -1.0)
    X = np.vstack([X, X[:20], X[:5]])
    y = np.concatenate([y, y[:20], y[:5]])
    y[100:105] *= -1
    kern = Kernel("rbf", sigma=1.0)
    K, _, Kn, C, dense = fitted("rbf_duplicates")
    assert np.array_equal(path_mod.duplicate_rows(X, y), path_mod.duplicate_groups(K, y))
    fly = fit_path(OnTheFlyGram(X, kern), y, 1.0 / (2 * y.size * C))
    assert fly.n_duplicates == dense.n_duplicates == 20
    assert np.abs(fly.estimate(Kn).p - dense.estimate(Kn).p).max() <= 1e-8


def test_path_on_the_fly_allocates_no_kernel_matrix(monkeypatch):
    """n = 3000 on the fly: the fit's numpy allocations stay far below one n x n matrix
    (with blocks of kernel values of 1 MB instead of 32 MB, so that they do not count)."""
    import tracemalloc

    import wsvmgui.ladder.path_rows as rows_mod
    from wsvmgui.solvers.gram import OnTheFlyGram

    monkeypatch.setattr(rows_mod, "SUMS_BLOCK_BYTES", 2**20)

    d = simulate("wuliu2011_ex1", 3000, seed=2)
    X, y = d.X, d.y.astype(float)
    kern = Kernel("rbf", sigma=median_between_class_distance(X, y))
    fit_path(OnTheFlyGram(X[:60], kern), y[:60], 0.01)  # compile first
    tracemalloc.start()
    try:
        path = fit_path(OnTheFlyGram(X, kern), y, 1.0 / (2 * y.size))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert path.kkt_residual <= 1e-6
    assert peak < 0.2 * 8 * y.size**2
