"""Marching squares: the zero contour lies on the zero set of the sampled function."""

import numpy as np

from wsvmgui.app.contours import segments_to_xy, zero_contour


def test_circle_contour_has_the_right_radius():
    xs = np.linspace(-2, 2, 81)
    ys = np.linspace(-2, 2, 61)
    X, Y = np.meshgrid(xs, ys)
    segs = zero_contour(xs, ys, X**2 + Y**2 - 1.0)
    assert segs.shape[1:] == (2, 2) and segs.shape[0] > 40
    r = np.hypot(segs[..., 0], segs[..., 1])
    assert np.max(np.abs(r - 1.0)) < 0.01  # linear interpolation error on a 0.05 grid
    # the whole circle is traced: every direction is covered
    angles = np.sort(np.arctan2(segs[..., 1], segs[..., 0]).ravel())
    assert np.max(np.diff(angles)) < 0.2


def test_linear_function_gives_a_straight_line():
    xs = np.linspace(0, 1, 11)
    ys = np.linspace(0, 1, 11)
    X, Y = np.meshgrid(xs, ys)
    segs = zero_contour(xs, ys, X + 2 * Y - 0.83)
    x, y = segments_to_xy(segs)
    np.testing.assert_allclose(x + 2 * y, 0.83, atol=1e-12)
    assert x.size == 2 * segs.shape[0]


def test_no_sign_change_gives_no_segments():
    xs = np.linspace(0, 1, 5)
    assert zero_contour(xs, xs, np.ones((5, 5))).shape == (0, 2, 2)
    assert zero_contour(xs, xs, -np.ones((5, 5))).shape == (0, 2, 2)


def test_saddle_cell_gives_two_segments_that_separate_the_signs():
    xs = np.array([0.0, 1.0])
    Z = np.array([[1.0, -1.0], [-1.0, 1.0]])  # rows are y
    segs = zero_contour(xs, xs, Z)
    assert segs.shape == (2, 2, 2)
    # every endpoint sits at the middle of an edge
    pts = segs.reshape(-1, 2)
    assert np.all(np.isclose(pts, 0.5) | np.isclose(pts, 0) | np.isclose(pts, 1))
    assert {tuple(p) for p in pts} == {(0.5, 0.0), (1.0, 0.5), (0.5, 1.0), (0.0, 0.5)}


def test_zero_counts_as_negative():
    xs = np.array([0.0, 1.0])
    Z = np.array([[0.0, 1.0], [0.0, 1.0]])
    segs = zero_contour(xs, xs, Z)
    # the boundary between "not positive" (x = 0) and positive is at x = 0
    np.testing.assert_allclose(segs[..., 0], 0.0)
