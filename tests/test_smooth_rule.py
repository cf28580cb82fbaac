"""The smoothed count rule (``wsvmgui.ladder.smooth_rule``) against definitions.

Independent checks: the count rule of the exact path (``WeightPath.estimate``) as
``h -> 0``; a brute-force midpoint integral of ``s(f_pi(x) / h)`` over a fine grid of pi,
with ``f_pi(x)`` from the path's coefficients at those weights (``decision_at``, not the
breakpoint values the rule reads); invariants (range, monotonicity).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from wsvmgui.errors import InputError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.engines import PathLadder
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.path import fit_path
from wsvmgui.ladder.problems import LadderProblem
from wsvmgui.ladder.recalibration import cross_fitted
from wsvmgui.ladder.smooth_rule import mean_step, smooth_estimate, smooth_measure
from wsvmgui.ladder.smooth_width import choose_width, cross_fitted_widths, width_scores
from wsvmgui.ladder.splits import kfold_splits
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.progress import ProgressTracker
from wsvmgui.solvers.kernels import Kernel, median_between_class_distance
from wsvmgui.solvers.wsvm import C_to_penalty


def _problem(design: str, n: int, seed: int, C: float = 1.0):
    d = simulate(design, n, seed)
    X, y = d.X, d.y.astype(float)
    kern = Kernel("rbf", sigma=median_between_class_distance(X, y))
    Xn = simulate(design, 80, seed + 100).X
    path = fit_path(kern(X), y, C_to_penalty(C, n))
    return path, kern(Xn, X), kern, X, y, Xn


def _logistic(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@pytest.fixture(scope="module")
def ex2_path():
    return _problem("wuliu2011_ex2", 120, 3)


def test_width_zero_and_tiny_widths_give_the_count_rule(ex2_path):
    path, Kn, *_ = ex2_path
    count = path.estimate(Kn, "count").p
    p = smooth_estimate(path, Kn, [0.0, 1e-9, 1e-6])
    assert np.max(np.abs(p[0] - count)) < 1e-12
    assert np.max(np.abs(p[1] - count)) < 1e-7
    assert np.max(np.abs(p[2] - count)) < 1e-4
    # the error shrinks with h (a point's error is O(h / |slope of f at its zeros|))
    err = [np.max(np.abs(q - count)) for q in smooth_estimate(path, Kn, [1e-2, 1e-3, 1e-4])]
    assert err[0] > err[1] > err[2]


def test_against_a_brute_force_integral_over_a_fine_grid(ex2_path):
    path, Kn, *_ = ex2_path
    G = 20000
    mid = (np.arange(G) + 0.5) / G
    F = path.decision_at(Kn, mid)  # (m, G), from the coefficients at each weight
    for h in (0.02, 0.1, 0.5, 2.0):
        brute = _logistic(F / h).mean(axis=1)
        exact = smooth_estimate(path, Kn, h)[0]
        # midpoint rule: error <= (1/24 G^2) max |d^2 s / dpi^2| plus breakpoint kinks
        assert np.max(np.abs(exact - brute)) < 2e-5, h


def test_range_monotone_in_the_width_toward_one_half_and_in_f(ex2_path):
    path, Kn, *_ = ex2_path
    widths = np.array([0.01, 0.1, 0.3, 1.0, 3.0, 100.0])
    P = smooth_estimate(path, Kn, widths)
    assert np.all((P > 0) & (P < 1))
    # larger widths pull every estimate toward 1/2: |p_h - 1/2| <= s(max_pi |f| / h) - 1/2
    fmax = np.abs(path.decision(Kn)).max(axis=1)
    bound = _logistic(fmax[None, :] / widths[:, None]) - 0.5
    assert np.all(np.abs(P - 0.5) <= bound + 1e-12)
    assert np.abs(P[-1] - 0.5).max() < 0.01
    # ... and, for large h, toward 1/2 + mean_pi f / (4 h)
    G = 4000
    F = path.decision_at(Kn, (np.arange(G) + 0.5) / G)
    assert np.allclose(P[-1], 0.5 + F.mean(axis=1) / 400.0, atol=1e-5)
    # non-decreasing in every f_pi(x): raise f on one segment
    pis = path.pis
    Fb = path.decision(Kn)
    up = Fb.copy()
    up[:, pis.size // 2] += 0.3
    for h in (0.0, 0.05, 1.0):
        assert np.all(smooth_measure(up, pis, h) >= smooth_measure(Fb, pis, h) - 1e-12)


def test_path_ladder_and_grid_ladder_agree_with_the_plain_function():
    path, Kn, kern, X, y, Xn = _problem("wang2008_ex1", 100, 1)
    pis = path.pis
    F = path.decision(Kn)
    direct = smooth_measure(F, pis, [0.0, 0.2])
    via = smooth_estimate(PathLadder(path, weight_grid(10)), Kn, [0.0, 0.2])
    assert np.allclose(direct, via, atol=1e-12)
    # a grid ladder: read as linear between its weights with f = +1 / -1 at the ends;
    # with h = 0 that is the interpolate rule's measure, inside the count bracket
    w = weight_grid(20)
    lad = fit_ladder(kern(X), y, w, path.lam)
    p0 = smooth_estimate(lad, Kn, 0.0)[0]
    br = lad.estimate(Kn, "count")
    mono = br.monotone
    assert np.all((p0[mono] >= br.lo[mono] - 1e-12) & (p0[mono] <= br.hi[mono] + 1e-12))


def test_mean_step_edge_cases():
    a = np.array([5.0, -5.0, 1.0, 0.0, 1e300, -1e300, 0.3])
    b = np.array([5.0, -5.0, -1.0, 0.0, 1e300, 1e299, 0.3 + 1e-9])
    for h in (1e-3, 1.0):
        v = mean_step(a, b, h)
        assert np.all(np.isfinite(v)) and np.all((v >= 0) & (v <= 1))
        assert v[2] == pytest.approx(0.5, abs=1e-12)  # antisymmetric segment
        assert v[3] == pytest.approx(0.5)
    assert mean_step(np.array([1.0]), np.array([-3.0]), 0.0)[0] == pytest.approx(0.25)
    # near-equal ends, on both sides of the switch between the Taylor and the softplus
    # branch: against adaptive quadrature
    for d in (1e-7, 0.99e-4, 1.01e-4, 1e-2):
        for z in (0.7, -3.0, 30.0):
            ref = quad(lambda t, z=z, d=d: float(_logistic(np.array(z + t * d))), 0, 1)[0]
            got = mean_step(np.array([z]), np.array([z + d]), 1.0)[0]
            assert abs(got - ref) < 1e-12, (z, d)


def test_bad_widths_and_shapes():
    with pytest.raises(InputError, match="widths"):
        smooth_measure(np.zeros((2, 3)), np.array([0, 0.5, 1.0]), -0.1)
    with pytest.raises(InputError, match="widths"):
        smooth_measure(np.zeros((2, 3)), np.array([0, 0.5, 1.0]), [np.nan])
    with pytest.raises(InputError, match="columns"):
        smooth_measure(np.zeros((2, 4)), np.array([0, 0.5, 1.0]), 0.1)


def test_cross_fitted_widths_match_the_recalibration_folds_at_width_zero():
    d = simulate("wuliu2011_ex6", 120, 5)
    X, codes = d.X, (d.y > 0).astype(int)
    problem = LadderProblem(np.arange(codes.size), np.where(codes == 1, 1.0, -1.0))
    kern = Kernel("rbf", sigma=median_between_class_distance(X, d.y.astype(float)))
    lam, w = C_to_penalty(3.0, codes.size), weight_grid(10)
    folds = kfold_splits(codes, 4, 0)
    p0, y0 = cross_fitted(X, problem, folds, kern, lam, codes.size, w, tracker=ProgressTracker(1))
    P, y = cross_fitted_widths(
        X, problem, folds, kern, lam, codes.size, w, (0.0, 0.1, 1.0), tracker=ProgressTracker(1)
    )
    assert P.shape == (3, codes.size) and np.array_equal(y, y0)
    assert np.max(np.abs(P[0] - p0)) < 1e-12  # the count rule on the same fold fits
    s = width_scores(P, y)
    q = np.clip(P[1], 1e-12, 1 - 1e-12)
    assert s[1] == pytest.approx(-np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)))
    assert choose_width(P, y, (0.0, 0.1, 1.0)) == (0.0, 0.1, 1.0)[int(np.argmin(s))]
    assert (
        choose_width(P, y, (0.0, 0.1, 1.0), "brier")
        == (0.0, 0.1, 1.0)[int(np.argmin(((P - y) ** 2).mean(axis=1)))]
    )
    with pytest.raises(InputError, match="score"):
        width_scores(P, y, "egkl")
