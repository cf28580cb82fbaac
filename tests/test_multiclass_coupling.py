"""Pairwise coupling, the BP rebuild, max voting, baseline choice and OVA normalisation."""

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.ladder.rules import estimate_from_decision
from wsvmgui.multiclass import coupling
from wsvmgui.multiclass.baseline_choice import (
    aggregated_distances,
    largest_class,
    median_distance_class,
)
from wsvmgui.multiclass.ova import normalise_sum, project_simplex


def _true_table(p: np.ndarray) -> np.ndarray:
    """q_{j|(j,k)} = p_j / (p_j + p_k) for every pair; shape (n, K, K)."""
    n, K = p.shape
    Q = coupling.empty_table(n, K)
    for j in range(K):
        for k in range(j + 1, K):
            coupling.set_pair(Q, j, k, p[:, j] / (p[:, j] + p[:, k]))
    return Q


def _random_table(n: int, K: int, bounds: tuple[float, float], seed: int) -> np.ndarray:
    """An inconsistent pairwise table (n, K, K): every pair uniform on ``bounds``."""
    rng = np.random.default_rng(seed)
    Q = coupling.empty_table(n, K)
    for j in range(K):
        for k in range(j + 1, K):
            coupling.set_pair(Q, j, k, rng.uniform(*bounds, n))
    return Q


@pytest.fixture
def p_true():
    return np.random.default_rng(0).dirichlet(np.ones(5), size=200)


def test_coupling_recovers_consistent_probabilities_with_any_baseline(p_true):
    Q = _true_table(p_true)
    for k in range(5):
        np.testing.assert_allclose(coupling.couple(Q, k), p_true, atol=1e-12)
    np.testing.assert_allclose(coupling.couple(Q), p_true, atol=1e-12)


def test_bp_rebuild_reproduces_every_pair_from_true_baseline_pairs(p_true):
    k_star = 2
    q_base = p_true / (p_true + p_true[:, [k_star]])
    Q = coupling.rebuild_table(q_base, k_star)
    np.testing.assert_allclose(Q, _true_table(p_true), atol=1e-12)
    np.testing.assert_allclose(coupling.couple_baseline(q_base, k_star), p_true, atol=1e-12)
    np.testing.assert_allclose(coupling.couple(Q), p_true, atol=1e-12)


def test_rebuilt_table_is_consistent_for_noisy_baseline_pairs():
    # Rebuilt tables from arbitrary q's couple to the same p for every baseline.
    rng = np.random.default_rng(1)
    q_base = rng.uniform(0.05, 0.95, size=(50, 4))
    Q = coupling.rebuild_table(q_base, 1)
    ref = coupling.couple_baseline(q_base, 1)
    for k in range(4):
        np.testing.assert_allclose(coupling.couple(Q, k), ref, atol=1e-12)


def test_coupled_rows_sum_to_one_for_inconsistent_tables():
    Q = _random_table(100, 4, (0.02, 0.98), seed=2)
    p = coupling.couple(Q)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(p > 0)


def test_least_squares_coupling_recovers_consistent_probabilities(p_true):
    np.testing.assert_allclose(
        coupling.couple_least_squares(_true_table(p_true)), p_true, atol=1e-10
    )


def test_least_squares_coupling_is_the_constrained_minimiser_of_its_objective():
    # An independent computation: SLSQP on the simplex, for inconsistent random tables.
    from scipy.optimize import minimize

    n, K = 12, 4
    Q = _random_table(n, K, (0.05, 0.95), seed=3)
    P = coupling.couple_least_squares(Q)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(P >= 0)

    for i in range(n):

        def objective(p, q=Q[i]):
            return sum(
                (q[k, j] * p[j] - q[j, k] * p[k]) ** 2 for j in range(K) for k in range(K) if j != k
            )

        ref = minimize(
            objective, np.full(K, 1.0 / K), method="SLSQP", bounds=[(0, 1)] * K,
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0}],
            options={"ftol": 1e-14, "maxiter": 500},
        )  # fmt: skip
        np.testing.assert_allclose(P[i], ref.x, atol=1e-5)
        assert objective(P[i]) <= objective(ref.x) + 1e-10
    # Differs from the baseline coupling on an inconsistent table (not a renamed copy).
    assert np.abs(P - coupling.couple(Q)).max() > 1e-3


def test_least_squares_coupling_refuses_a_bad_table():
    with pytest.raises(InputError, match="strictly between"):
        coupling.couple_least_squares(np.full((2, 3, 3), 1.0))


def test_per_point_baseline_is_the_class_winning_most_pairs():
    Q = coupling.empty_table(1, 3)
    coupling.set_pair(Q, 0, 1, np.array([0.3]))  # 1 beats 0
    coupling.set_pair(Q, 0, 2, np.array([0.6]))  # 0 beats 2
    coupling.set_pair(Q, 1, 2, np.array([0.9]))  # 1 beats 2
    assert coupling.per_point_baseline(Q)[0] == 1


def test_max_voting_on_a_hand_made_table():
    Q = coupling.empty_table(3, 3)
    # Point 0: class 0 wins both of its pairs.
    # Point 1: a cycle (0 > 1, 1 > 2, 2 > 0): one vote each, the probability decides.
    # Point 2: q_{0|(0,1)} = 1/2 exactly gives half a vote to each; class 2 wins both.
    coupling.set_pair(Q, 0, 1, np.array([0.8, 0.6, 0.5]))
    coupling.set_pair(Q, 0, 2, np.array([0.7, 0.4, 0.3]))
    coupling.set_pair(Q, 1, 2, np.array([0.4, 0.7, 0.2]))
    votes = coupling.pairwise_votes(Q)
    np.testing.assert_allclose(votes, [[2, 0, 1], [1, 1, 1], [0.5, 0.5, 2]])
    proba = np.array([[0.5, 0.2, 0.3], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    np.testing.assert_array_equal(coupling.vote_predict(Q, proba), [0, 1, 2])


def test_table_validation():
    with pytest.raises(InputError):
        coupling.couple(np.full((2, 3, 2), 0.5))
    Q = coupling.empty_table(1, 3)
    coupling.set_pair(Q, 0, 1, np.array([1.0]))
    with pytest.raises(InputError):
        coupling.couple(Q)


def test_b1_picks_the_largest_class():
    y = np.array([0, 1, 1, 2, 1, 0, 2, 1])
    assert largest_class(y, 3) == 1


def test_b2_picks_the_class_of_median_aggregated_distance():
    # Three 1-D clusters of three points; medoid = the point with the median sum of
    # distances to the others.
    # Class 0 {30,31,33}: sums 4, 3, 5 -> median 4 at x=30, D_cp = 3.
    # Class 1 {10,11,13}: D_cp = 3.  Class 2 {0,1,3}: D_cp = 3.
    # D_bc(0,1) = 30-13 = 17, D_bc(0,2) = 27, D_bc(1,2) = 10-3 = 7.
    # D_agg = [(17+27)/9, (17+7)/9, (27+7)/9] = [4.89, 2.67, 3.78] -> median is class 2.
    x = np.array([30, 31, 33, 10, 11, 13, 0, 1, 3], dtype=float)
    X = np.column_stack([x, np.zeros_like(x)])
    y = np.repeat([0, 1, 2], 3)
    np.testing.assert_allclose(aggregated_distances(X, y, 3), [44 / 9, 24 / 9, 34 / 9])
    assert median_distance_class(X, y, 3) == 2


def test_simplex_projection_and_sum_normalisation():
    raw = np.array([[0.5, 0.4, 0.3], [0.1, 0.1, 0.1], [0.9, 0.02, 0.02]])
    for p in (normalise_sum(raw), project_simplex(raw, floor=0.01)):
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        assert np.all(p >= 0.01 - 1e-15)
    # Projection shifts every coordinate by the same amount when no floor binds.
    np.testing.assert_allclose(project_simplex(raw[:1]), raw[:1] - 0.2 / 3, atol=1e-12)
    np.testing.assert_allclose(project_simplex(raw[2:], floor=0.01), [[0.92, 0.04, 0.04]])
    # A binding floor: u = raw - 0.05 = (0.9, 0.15, -0.05) onto sum 0.85 -> shift 0.1.
    np.testing.assert_allclose(
        project_simplex(np.array([[0.95, 0.2, 0.0]]), floor=0.05), [[0.85, 0.1, 0.05]]
    )


def test_interpolated_estimate_finds_the_linear_zero_crossing():
    w = np.array([0.25, 0.5, 0.75])
    D = np.array(
        [
            [1.0, 0.5, -0.5],  # crossing halfway between 0.5 and 0.75
            [1.0, 1.0, 1.0],  # above the last weight: count rule's midpoint of [0.75, 1]
            [-1.0, 1.0, -1.0],  # non-monotone, count 1: f(0.25) < 0 -> midpoint of [0.25, 0.5]
        ]
    )
    est = estimate_from_decision(D, w, "interpolate")
    np.testing.assert_allclose(est.p, [0.625, 0.875, 0.375])
    np.testing.assert_allclose(est.lo, [0.5, 0.75, 0.25])
    np.testing.assert_allclose(est.hi, [0.75, 1.0, 0.5])
