"""Weighted truncated-hinge K-class SVM: subproblem, DCA, grid fitting."""

import numpy as np
import pytest

from wsvmgui.errors import Cancelled
from wsvmgui.evaluation.designs import simulate
from wsvmgui.joint.dca import fit_truncated, minimal_truncation, truncated_set
from wsvmgui.joint.features import FeatureMap
from wsvmgui.joint.grid_fit import fit_grid
from wsvmgui.joint.simplex_grid import SimplexGrid
from wsvmgui.joint.subproblem import (
    JointProblem,
    kkt_residual,
    solve_subproblem,
    solve_subproblem_dual,
    sum_zero_basis,
)
from wsvmgui.solvers.kernels import Kernel


@pytest.fixture(scope="module")
def small():
    d = simulate("wu2010_ex1", 60, 3)
    return d, JointProblem(d.X, d.y - 1, 3)


def test_sum_zero_basis_is_orthonormal():
    for K in (2, 3, 5):
        P = sum_zero_basis(K)
        np.testing.assert_allclose(P.T @ P, np.eye(K - 1), atol=1e-12)
        np.testing.assert_allclose(P.sum(axis=0), 0.0, atol=1e-12)


def test_subproblem_matches_independent_dual_solver(small):
    d, pr = small
    pi = np.array([0.2, 0.5, 0.3])
    w = 4.0 * pi[pr.yi]
    base = solve_subproblem(pr, w, np.zeros(60, bool), np.zeros(60, int))
    trunc, jc = truncated_set(pr, base.W, base.b, -0.5)
    assert trunc.any()  # the DCA step below has a non-trivial linear term
    for tr in (np.zeros(60, bool), trunc):
        ours = solve_subproblem(pr, w, tr, jc)
        ref = solve_subproblem_dual(pr, w, tr, jc)  # quadprog dual + HiGHS intercept LP
        assert ours.kkt_residual < 1e-4 and ref.kkt_residual < 1e-3
        assert abs(ours.objective - ref.objective) < 1e-5 * max(1.0, abs(ref.objective))
        F1, F2 = pr.decision(ours.W, ours.b), pr.decision(ref.W, ref.b)
        np.testing.assert_allclose(F1, F2, atol=1e-3)
        np.testing.assert_allclose(F1.sum(axis=1), 0.0, atol=1e-10)  # sum-to-zero
        # the backends agree, and the working-set warm start gives the same answer
        for kw in (
            {"qp_solver": "clarabel"},
            {"qp_solver": "quadprog"},
            {"start": (base.W, base.b)},
        ):
            other = solve_subproblem(pr, w, tr, jc, **kw)
            assert abs(other.objective - ours.objective) < 1e-5 * abs(ours.objective)


def test_kkt_residual_flags_a_wrong_answer(small):
    d, pr = small
    w = np.full(60, 2.0)
    sol = solve_subproblem(pr, w, np.zeros(60, bool), np.zeros(60, int))
    beta = np.zeros((60, 2))
    assert kkt_residual(pr, sol.W, sol.b, sol.alpha, w, beta) < 1e-4
    assert kkt_residual(pr, 1.3 * sol.W, sol.b, sol.alpha, w, beta) > 1e-2
    assert kkt_residual(pr, sol.W, sol.b + 0.3, sol.alpha, w, beta) > 1e-2


def test_dca_objective_never_rises_and_stops_on_a_fixed_truncated_set(small):
    d, pr = small
    pi = np.array([0.45, 0.15, 0.4])
    res = fit_truncated(pr, 5.0 * pi[pr.yi], minimal_truncation(3))
    obj = np.array(res.objectives)
    assert res.converged and res.n_qp >= 2
    assert np.all(np.diff(obj) <= 1e-7 * abs(obj[0]))
    trunc, _ = truncated_set(pr, res.W, res.b, -0.5)
    assert trunc.sum() == res.n_truncated
    g = SimplexGrid.build(3, 8)
    gf = fit_grid(pr, g, 5.0, -0.5, n_jobs=2)
    for o in gf.objectives:
        assert np.all(np.diff(o) <= 1e-7 * max(abs(o[0]), 1.0))
    assert gf.converged.all() and gf.kkt_residual.max() < 1e-3


def test_linear_and_kernel_linear_fits_agree(small):
    d, _ = small
    f_lin = FeatureMap.fit(d.X, None)
    f_ker = FeatureMap.fit(d.X, Kernel("linear"))
    assert f_ker.n_features == 2
    g = SimplexGrid.build(3, 7)
    X_new = simulate("wu2010_ex1", 80, 9).X
    P = sum_zero_basis(3)
    fits = [fit_grid(JointProblem(f.Z_train, d.y - 1, 3), g, 3.0, -0.5) for f in (f_lin, f_ker)]
    for gi in range(g.size):
        F = [
            fm.transform(X_new) @ gf.W[gi] @ P.T + gf.b[gi] @ P.T
            for fm, gf in zip((f_lin, f_ker), fits, strict=True)
        ]
        np.testing.assert_allclose(F[0], F[1], atol=2e-3)


def test_truncation_is_decisive_where_no_class_dominates_and_hinge_is_not():
    """Fisher consistency at the population level: the data are one input x repeated,
    with labels in the proportions p = (0.40, 0.35, 0.25) (so the empirical risk is the
    conditional risk E[pi_Y loss | x]).  At grid weights where no class dominates
    (max_k pi_k p_k <= 1/2 sum_k pi_k p_k), the plain hinge's minimiser is f = 0 (a tie,
    Proposition 1 of the paper), while the truncated loss should pick argmax pi_k p_k.

    Note: on finite samples with x varying (Gaussian designs, linear and RBF kernels),
    the untruncated fits were measured to follow argmax pi_k p_k about as well as or
    better than the truncated ones; the inconsistency shows where it is predicted."""
    p = np.array([0.40, 0.35, 0.25])
    y = np.repeat(np.arange(3), (p * 200).astype(int))
    pr = JointProblem(np.zeros((y.size, 1)), y, 3)
    g = SimplexGrid.build(3, 20)
    prod = g.weights * p
    oracle = prod.argmax(axis=1)
    no_dom = prod.max(axis=1) <= 0.5 * prod.sum(axis=1)
    assert no_dom.mean() > 0.2
    share = {}
    for s in (minimal_truncation(3), -np.inf):
        F = fit_grid(pr, g, 1.0, s).b @ sum_zero_basis(3).T
        top2 = np.sort(F, axis=1)[:, -2:]
        decisive = (top2[:, 1] - top2[:, 0]) > 1e-3
        right = decisive & (F.argmax(axis=1) == oracle)
        wrong = decisive & (F.argmax(axis=1) != oracle)
        share[s] = (right[no_dom].mean(), wrong[no_dom].mean(), (F.argmax(1) == oracle)[~no_dom])
    assert share[-np.inf][0] < 0.1  # the hinge ties at (almost) every such weight
    # the truncated fit decides, mostly right (measured 0.39 right, 0.20 wrong: wrong
    # ones sit next to region borders, where finite C blurs the rule)
    assert share[-0.5][0] > 0.3 and share[-0.5][0] > share[-0.5][1] + 0.1
    assert share[-0.5][2].mean() > 0.95  # where a class dominates both follow the rule


def test_grid_progress_cancellation_and_warm_start(small):
    d, pr = small
    g = SimplexGrid.build(3, 9)
    seen = []
    warm = fit_grid(pr, g, 3.0, -0.5, progress=lambda done, total, part: seen.append(done))
    assert sorted(seen) == list(range(1, g.size + 1))
    cold = fit_grid(pr, g, 3.0, -0.5, warm_start=False)
    assert warm.n_qp.sum() < cold.n_qp.sum()
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 5

    with pytest.raises(Cancelled):
        fit_grid(pr, g, 3.0, -0.5, n_jobs=2, should_cancel=cancel)


def test_warm_start_guard_escapes_a_degenerate_neighbour(small):
    """A neighbour that ignores class 3 (all its points truncated, so DCA from it would
    never move) must not be carried on: the result is no worse than DCA from the
    untruncated fit and predicts all three classes again."""
    from wsvmgui.joint.dca import fit_truncated_warm, truncated_objective

    d, pr = small
    w = 4.0 * np.array([0.3, 0.3, 0.4])[pr.yi]
    bad_b = np.linalg.lstsq(pr.P, np.array([2.0, 2.0, -4.0]), rcond=None)[0]
    bad = (np.zeros((2, 2)), bad_b)
    assert np.all(np.argmax(pr.decision(*bad), axis=1) != 2)
    res, hinge, _ = fit_truncated_warm(pr, w, -0.5, bad)
    cold = fit_truncated(pr, w, -0.5, None)
    assert res.objectives[-1] <= truncated_objective(pr, *hinge, w, -0.5) + 1e-7
    assert res.objectives[-1] <= truncated_objective(pr, *bad, w, -0.5)
    assert res.objectives[-1] <= cold.objectives[-1] + 1e-6 * abs(cold.objectives[-1])
    assert set(np.argmax(pr.decision(res.W, res.b), axis=1)) == {0, 1, 2}


def test_plain_hinge_is_solved_even_from_a_start(small):
    d, pr = small
    w = np.full(60, 2.0)
    ref = fit_truncated(pr, w, -np.inf)
    res = fit_truncated(pr, w, -np.inf, start=(np.zeros((2, 2)), np.zeros(2)))
    assert res.n_qp == 1 and abs(res.objectives[-1] - ref.objectives[-1]) < 1e-6
