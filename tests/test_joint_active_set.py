"""The active-set solver of the DCA subproblem against the general QP (the reference)."""

import numpy as np
import pytest

from wsvmgui.evaluation.designs import simulate
from wsvmgui.joint import _active_set_kernel as kern
from wsvmgui.joint import active_set
from wsvmgui.joint.dca import fit_truncated, minimal_truncation, truncated_set
from wsvmgui.joint.features import FeatureMap
from wsvmgui.joint.grid_fit import fit_grid
from wsvmgui.joint.simplex_grid import SimplexGrid
from wsvmgui.joint.subproblem import (
    JointProblem,
    kkt_residual,
    solve_subproblem,
    subproblem_objective,
)
from wsvmgui.solvers.kernels import Kernel

#: Relative objective difference allowed against the general QP (Clarabel stops at a
#: residual near 1e-6; the active-set answers are exact to 1e-8).
OBJ_RTOL = 1e-6
#: The non-intercept part of the decision values (``W`` is unique: the objective is
#: strictly convex in it; the intercept need not be, when no free dual pins it).
F_ATOL = 2e-3

CASES = [
    ("wu2010_ex1", 3, None),
    ("wu2010_ex1", 3, Kernel("rbf", sigma=1.0)),
    ("wu2010_ex2", 3, Kernel("poly", degree=2, coef0=1.0, gamma=0.1)),
    ("wu2010_ex4", 5, None),
    ("wu2010_ex4", 5, Kernel("rbf", sigma=0.8)),
]


def _problem(design, K, kernel, n, seed):
    d = simulate(design, n, seed)
    return JointProblem(FeatureMap.fit(d.X, kernel).Z_train, d.y - 1, K)


def _data(pr, pi, C, trunc_from=None, s=None):
    """Weights and DCA slopes: untruncated, or the truncated set of a fit."""
    w = C * np.asarray(pi)[pr.yi]
    if trunc_from is None:
        return w, np.zeros(pr.n, bool), np.zeros(pr.n, int)
    trunc, jc = truncated_set(pr, *trunc_from, s)
    return w, trunc, jc


def _assert_same(pr, ours, ref, w, beta):
    assert ours.kkt_residual <= active_set.EXACT_TOL
    # the compiled check is the library's residual, recomputed here in numpy
    assert kkt_residual(pr, ours.W, ours.b, ours.alpha, w, beta) <= 10 * active_set.EXACT_TOL
    assert ref.kkt_residual < 1e-3
    obj = subproblem_objective(pr, ours.W, ours.b, w, beta)
    assert abs(obj - ours.objective) <= 1e-9 * max(1.0, abs(obj))
    assert abs(obj - ref.objective) <= OBJ_RTOL * max(1.0, abs(ref.objective))
    zero = np.zeros(pr.K - 1)
    np.testing.assert_allclose(
        pr.decision(ours.W, zero), pr.decision(ref.W, zero), atol=F_ATOL, rtol=0
    )
    # an exact answer: the objective is never above the reference's (up to its residual)
    assert obj <= ref.objective + OBJ_RTOL * abs(ref.objective)


@pytest.mark.parametrize("design,K,kernel", CASES)
@pytest.mark.parametrize("seed", [1, 2])
def test_cold_answer_equals_the_general_qp(design, K, kernel, seed):
    pr = _problem(design, K, kernel, 60 if K == 3 else 75, seed)
    rng = np.random.default_rng(seed)
    pi = rng.dirichlet(np.full(K, 3.0))
    C = [0.5, 5.0, 50.0][seed % 3]
    s = minimal_truncation(K)
    base = solve_subproblem(pr, *_data(pr, pi, C), qp_solver="clarabel")
    for trunc_from in (None, (base.W, base.b)):
        w, trunc, jc = _data(pr, pi, C, trunc_from, s)
        beta = pr.beta(w, trunc, jc)
        ref = solve_subproblem(pr, w, trunc, jc, qp_solver="clarabel")
        ours = active_set.solve(pr, pr.arrays, w, beta)
        _assert_same(pr, ours, ref, w, beta)
        # the library entry point gives the same answer
        lib = solve_subproblem(pr, w, trunc, jc, qp_solver=active_set.ACTIVE_SET)
        np.testing.assert_allclose(lib.W, ours.W, atol=1e-9)


@pytest.mark.parametrize("design,K,kernel", CASES)
def test_path_from_a_neighbouring_answer_equals_the_general_qp(design, K, kernel):
    """From the exact answer at one weight (and truncated set), to a grid neighbour with
    a new truncated set: the path's answer is the general QP's."""
    pr = _problem(design, K, kernel, 70, 5)
    s = minimal_truncation(K)
    g = SimplexGrid.build(K, 10)
    C = 8.0
    a = g.weights[g.size // 2]
    for bnb in g.neighbours(g.size // 2)[:3]:
        w0, tr0, jc0 = _data(pr, a, C)
        start = active_set.solve(pr, pr.arrays, w0, pr.beta(w0, tr0, jc0))
        assert start.exact
        w1, tr1, jc1 = _data(pr, g.weights[bnb], C, (start.W, start.b), s)
        beta1 = pr.beta(w1, tr1, jc1)
        ours = active_set.solve(pr, pr.arrays, w1, beta1, start)
        assert not ours.stats["fallback"] and ours.stats["sweeps"] == 0
        ref = solve_subproblem(pr, w1, tr1, jc1, qp_solver="clarabel")
        _assert_same(pr, ours, ref, w1, beta1)


def test_path_handles_a_degenerate_face():
    """All points at one input (a face with no direction but the intercepts) and many
    duplicated rows: answers stay exact along a grid."""
    y = np.repeat(np.arange(3), [30, 25, 20])
    pr = JointProblem(np.zeros((y.size, 1)), y, 3)
    X = np.repeat(simulate("wu2010_ex1", 15, 4).X, 4, axis=0)
    pr2 = JointProblem(FeatureMap.fit(X, None).Z_train, np.tile(np.arange(3), 20), 3)
    for problem in (pr, pr2):
        g = SimplexGrid.build(3, 9)
        prev = None
        for k in range(g.size):
            w = 2.0 * g.weights[k][problem.yi]
            beta = np.zeros((problem.n, 2))
            ans = active_set.solve(problem, problem.arrays, w, beta, prev)
            ref = solve_subproblem(problem, w, np.zeros(problem.n, bool), np.zeros(problem.n, int))
            assert ans.kkt_residual <= 1e-6
            assert abs(ans.objective - ref.objective) <= OBJ_RTOL * max(1.0, ref.objective)
            prev = ans


def test_block_solve_minimises_the_block_problem():
    """``min 1/2 a'(I + 11')a - c'a`` over ``a >= 0, sum a <= w``: feasible, and no
    better than a general solver's answer (SLSQP)."""
    from numba import njit
    from scipy.optimize import minimize

    @njit
    def block_solve(c, w, a, srt):  # the kernel's function has no Python entry point
        kern.block_solve(c, w, a, srt)

    rng = np.random.default_rng(0)
    a = np.zeros(4)
    srt = np.zeros(4)
    for k1 in (1, 2, 3, 4):
        for _ in range(40):
            c = rng.normal(scale=2.0, size=k1)
            w = float(rng.uniform(0.1, 3.0))
            block_solve(c, w, a[:k1], srt[:k1])
            x = a[:k1].copy()
            M = np.eye(k1) + 1.0

            def f(v, c=c, M=M):
                return 0.5 * v @ M @ v - c @ v

            assert x.min() >= 0 and x.sum() <= w * (1 + 1e-12)
            ref = minimize(
                f,
                np.full(k1, w / (2 * k1)),
                method="SLSQP",
                bounds=[(0, None)] * k1,
                constraints=[{"type": "ineq", "fun": lambda v, w=w: w - v.sum()}],
                options={"ftol": 1e-14},
            )
            assert f(x) <= ref.fun + 1e-9


def test_an_unsettled_answer_falls_back_to_the_general_qp(monkeypatch):
    """When the compiled solver misses the tolerance the general QP answers (flagged)."""
    pr = _problem("wu2010_ex1", 3, None, 50, 3)
    w = 3.0 * np.array([0.3, 0.3, 0.4])[pr.yi]
    beta = np.zeros((pr.n, 2))
    monkeypatch.setattr(active_set, "MAX_SWEEPS", 0)
    monkeypatch.setattr(active_set, "ROUNDS", 0)
    ans = active_set.solve(pr, pr.arrays, w, beta)
    assert ans.stats["fallback"] and not ans.exact
    ref = solve_subproblem(pr, w, np.zeros(pr.n, bool), np.zeros(pr.n, int), "clarabel")
    assert abs(ans.objective - ref.objective) < 1e-9 * abs(ref.objective)
    # the next answer starts from it by active-set steps and is exact again
    monkeypatch.undo()
    nxt = active_set.solve(pr, pr.arrays, 1.1 * w, beta, ans)
    assert nxt.exact and not nxt.stats["fallback"]


@pytest.mark.parametrize("kernel", [None, Kernel("rbf", sigma=1.5)])
def test_grid_fit_matches_the_reference_solver(kernel):
    """Whole warm-started grids: the same DCA on both solvers.  DCA is not convex, so
    where a round-off-sized difference changes a truncated set the two can stop in
    different local minima; most grid weights agree exactly, and neither is worse on
    average."""
    pr = _problem("wu2010_ex1", 3, kernel, 80, 7)
    g = SimplexGrid.build(3, 9)
    s = minimal_truncation(3)
    ours = fit_grid(pr, g, 6.0, s, qp_solver=active_set.ACTIVE_SET)
    ref = fit_grid(pr, g, 6.0, s, qp_solver="clarabel")
    q = np.array([o[-1] for o in ours.objectives])
    q_ref = np.array([o[-1] for o in ref.objectives])
    rel = (q - q_ref) / np.abs(q_ref)
    assert np.mean(np.abs(rel) < 1e-5) >= 0.8
    assert rel.mean() <= 1e-4
    assert ours.kkt_residual.max() <= 1e-3 and ours.converged.all()
    P = pr.P
    agree = [
        np.mean(
            np.argmax(pr.Z @ ours.W[k] @ P.T + ours.b[k] @ P.T, axis=1)
            == np.argmax(pr.Z @ ref.W[k] @ P.T + ref.b[k] @ P.T, axis=1)
        )
        for k in range(g.size)
    ]
    assert np.mean(agree) >= 0.98
    # every DCA trace is non-increasing
    for o in ours.objectives:
        assert np.all(np.diff(o) <= 1e-7 * max(abs(o[0]), 1.0))


def test_single_fits_agree_with_the_reference_dca():
    """One DCA run from the untruncated fit, each step solved by either solver."""
    pr = _problem("wu2010_ex1", 3, None, 90, 11)
    w = 5.0 * np.array([0.45, 0.15, 0.4])[pr.yi]
    s = minimal_truncation(3)
    a = fit_truncated(pr, w, s, qp_solver=active_set.ACTIVE_SET)
    b = fit_truncated(pr, w, s, qp_solver="clarabel")
    assert a.converged and b.converged
    assert abs(a.objectives[-1] - b.objectives[-1]) <= 1e-5 * abs(b.objectives[-1])
