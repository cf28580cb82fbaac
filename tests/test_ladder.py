"""The weight ladder and its two rules (METHODS section 2), checked on hand-made signs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from wsvmgui.errors import Cancelled, InputError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.rules import probabilities_from_signs, signs_are_monotone
from wsvmgui.ladder.weights import check_weights, full_grid, weight_grid
from wsvmgui.solvers.kernels import Kernel


def _signs(text: str) -> np.ndarray:
    """'+-+-' -> one row of booleans."""
    return np.array([[c == "+" for c in text]])


def _extreme_by_definition(row: np.ndarray, grid: np.ndarray) -> float:
    """pi^* = max{pi_m : f > 0}, pi_* = min{pi_m : f < 0}, with f_0 > 0 and f_M < 0."""
    M = grid.size - 1
    signs = np.concatenate([[True], row, [False]])
    top_pos = max(grid[m] for m in range(M + 1) if signs[m])
    low_neg = min(grid[m] for m in range(M + 1) if not signs[m])
    return 0.5 * (top_pos + low_neg)


def _count_by_definition(row: np.ndarray, grid: np.ndarray) -> tuple[float, float]:
    c = int(sum(row))
    return grid[c], grid[c + 1]


def test_weight_grid():
    np.testing.assert_allclose(weight_grid(5), [0.2, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(full_grid(weight_grid(4)), [0, 0.25, 0.5, 0.75, 1])
    with pytest.raises(InputError):
        weight_grid(1)


@pytest.mark.parametrize(
    "signs, p",
    [("++++", 0.9), ("+++-", 0.7), ("++--", 0.5), ("+---", 0.3), ("----", 0.1)],
)
def test_monotone_rows_both_rules(signs, p):
    w = weight_grid(5)
    for rule in ("count", "extreme"):
        est = probabilities_from_signs(_signs(signs), w, rule)
        assert est.p[0] == pytest.approx(p)
        assert est.monotone[0]
        assert est.hi[0] - est.lo[0] == pytest.approx(0.2)


@pytest.mark.parametrize(
    "signs, count_p, count_bracket, extreme_p",
    [
        # + - + - with M = 5: c = 2 -> [0.4, 0.6]; pi^* = 0.6, pi_* = 0.4 -> 0.5.
        ("+-+-", 0.5, (0.4, 0.6), 0.5),
        # + - - +: c = 2 -> [0.4, 0.6]; pi^* = 0.8, pi_* = 0.4 -> 0.6.
        ("+--+", 0.5, (0.4, 0.6), 0.6),
        # - + - -: c = 1 -> [0.2, 0.4]; pi^* = 0.4, pi_* = 0.2 -> 0.3.
        ("-+--", 0.3, (0.2, 0.4), 0.3),
        # - - - +: c = 1 -> [0.2, 0.4]; pi^* = 0.8, pi_* = 0.2 -> 0.5.
        ("---+", 0.3, (0.2, 0.4), 0.5),
        # - + + +: c = 3 -> [0.6, 0.8]; pi^* = 0.8, pi_* = 0.2 -> 0.5.
        ("-+++", 0.7, (0.6, 0.8), 0.5),
    ],
)
def test_non_monotone_rows(signs, count_p, count_bracket, extreme_p):
    w = weight_grid(5)
    cnt = probabilities_from_signs(_signs(signs), w, "count")
    ext = probabilities_from_signs(_signs(signs), w, "extreme")
    assert cnt.p[0] == pytest.approx(count_p)
    assert (cnt.lo[0], cnt.hi[0]) == pytest.approx(count_bracket)
    assert ext.p[0] == pytest.approx(extreme_p)
    assert ext.lo[0] <= ext.p[0] <= ext.hi[0]
    assert not cnt.monotone[0] and not ext.monotone[0]


def test_signs_are_monotone():
    rows = np.array(
        [[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0], [0, 1, 1, 1]], dtype=bool
    )
    np.testing.assert_array_equal(signs_are_monotone(rows), [True, True, True, False, False])


def test_estimates_stay_in_range_for_uniform_grid():
    M = 7
    w = weight_grid(M)
    rng = np.random.default_rng(0)
    signs = rng.random((500, M - 1)) < 0.5
    for rule in ("count", "extreme"):
        est = probabilities_from_signs(signs, w, rule)
        assert est.p.min() >= 1 / (2 * M) - 1e-12
        assert est.p.max() <= 1 - 1 / (2 * M) + 1e-12
        assert np.all(est.lo <= est.p) and np.all(est.p <= est.hi)


def test_any_increasing_grid_accepted():
    w = np.array([0.05, 0.1, 0.3, 0.9])
    est = probabilities_from_signs(_signs("++--"), w, "count")
    assert est.p[0] == pytest.approx(0.2)
    assert (est.lo[0], est.hi[0]) == pytest.approx((0.1, 0.3))
    assert probabilities_from_signs(_signs("++++"), w).p[0] == pytest.approx(0.95)
    assert probabilities_from_signs(_signs("----"), w).p[0] == pytest.approx(0.025)
    single = probabilities_from_signs(np.array([[True], [False]]), [0.3])
    np.testing.assert_allclose(single.p, [0.65, 0.15])


@pytest.mark.parametrize(
    "weights",
    [[], [0.0, 0.5], [0.5, 1.0], [0.3, 0.2], [0.2, 0.2, 0.4], [0.2, np.nan], [-0.1, 0.5]],
)
def test_bad_grids_rejected(weights):
    with pytest.raises(InputError):
        check_weights(weights)


def test_sign_matrix_width_must_match_grid():
    with pytest.raises(InputError):
        probabilities_from_signs(np.ones((2, 3), dtype=bool), weight_grid(5))


def test_unknown_rule_rejected():
    with pytest.raises(InputError):
        probabilities_from_signs(_signs("++--"), weight_grid(5), "median")


# ------------------------------------------------------------------ hypothesis
_grids = (
    st.lists(st.floats(0.001, 0.999, allow_nan=False), min_size=1, max_size=12, unique=True)
    .map(lambda v: np.sort(np.array(v)))
    .filter(lambda w: np.all(np.diff(w) > 1e-9))
)


@st.composite
def _sign_problems(draw):
    w = draw(_grids)
    signs = draw(arrays(bool, (draw(st.integers(1, 20)), w.size)))
    return signs, w


@settings(max_examples=150, deadline=None)
@given(_sign_problems())
def test_count_rule_bracket_property(problem):
    signs, w = problem
    grid = full_grid(w)
    est = probabilities_from_signs(signs, w, "count")
    for i, row in enumerate(signs):
        lo, hi = _count_by_definition(row, grid)
        assert est.lo[i] == lo and est.hi[i] == hi
        assert est.p[i] == pytest.approx(0.5 * (lo + hi))


@settings(max_examples=150, deadline=None)
@given(_sign_problems())
def test_extreme_rule_property(problem):
    signs, w = problem
    grid = full_grid(w)
    est = probabilities_from_signs(signs, w, "extreme")
    for i, row in enumerate(signs):
        assert est.p[i] == pytest.approx(_extreme_by_definition(row, grid))
        assert est.lo[i] <= est.p[i] <= est.hi[i]


@settings(max_examples=150, deadline=None)
@given(_grids, st.data())
def test_rules_agree_on_monotone_rows(w, data):
    counts = data.draw(st.lists(st.integers(0, w.size), min_size=1, max_size=15))
    signs = np.array([[m < c for m in range(w.size)] for c in counts], dtype=bool)
    a = probabilities_from_signs(signs, w, "count")
    b = probabilities_from_signs(signs, w, "extreme")
    assert a.monotone.all()
    np.testing.assert_array_equal(a.p, b.p)
    np.testing.assert_array_equal(a.lo, b.lo)
    np.testing.assert_array_equal(a.hi, b.hi)


# ------------------------------------------------------------------ fit_ladder
@pytest.fixture(scope="module")
def data():
    d = simulate("wuliu2011_ex1", 60, seed=1)
    return Kernel("rbf", sigma=1.0)(d.X), d.y.astype(float)


def test_fit_ladder_shapes_and_progress(data):
    K, y = data
    w = weight_grid(6)
    calls = []
    ladder = fit_ladder(K, y, w, 0.01, progress=lambda d, t, p: calls.append((d, t, p)))
    assert ladder.coef.shape == (5, 60)
    assert ladder.intercept.shape == (5,)
    assert ladder.decision(K).shape == (60, 5)
    assert [c[:2] for c in calls] == [(k, 5) for k in range(1, 6)]
    assert [c[2].pi for c in calls] == pytest.approx(list(w))
    assert np.all(ladder.kkt_residual <= 1e-2)
    # The estimate reads the decision signs (0 counts as negative).
    est = ladder.estimate(K, "count")
    np.testing.assert_allclose(est.p, probabilities_from_signs(ladder.decision(K) > 0, w).p)


def test_fit_ladder_cancellation_after_k_fits(data):
    K, y = data
    done = []

    def should_cancel():
        return len(done) >= 2

    with pytest.raises(Cancelled):
        fit_ladder(
            K,
            y,
            weight_grid(6),
            0.01,
            progress=lambda d, t, p: done.append(d),
            should_cancel=should_cancel,
        )
    assert done == [1, 2]  # stopped right after the second fit


def test_fit_ladder_cancel_before_start(data):
    K, y = data
    calls = []
    with pytest.raises(Cancelled):
        fit_ladder(
            K,
            y,
            weight_grid(6),
            0.01,
            progress=lambda *a: calls.append(a),
            should_cancel=lambda: True,
        )
    assert calls == []


def test_compress_keeps_predictions(data):
    K, y = data
    ladder = fit_ladder(K, y, weight_grid(5), 0.01)
    small, keep = ladder.compress()
    np.testing.assert_allclose(small.decision(K[:, keep]), ladder.decision(K), atol=1e-12)


def test_zero_decision_counts_as_negative():
    from wsvmgui.ladder.grid import Ladder

    w = weight_grid(4)
    lad = Ladder(w, 0.1, np.zeros((3, 2)), np.array([1.0, 0.0, -1.0]), np.zeros(3))
    for rule in ("count", "extreme"):
        est = lad.estimate(np.zeros((1, 2)), rule)
        # Signs + - -: the label flips between pi_1 = 0.25 and pi_2 = 0.5.
        assert est.p[0] == pytest.approx(0.375)
        assert (est.lo[0], est.hi[0]) == pytest.approx((0.25, 0.5))
