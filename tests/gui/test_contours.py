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


def test_crossings_are_real_ones_with_their_pair_and_one_mark_per_cell():
    from wsvmgui.app.contours import contour_crossings, one_per_cell

    xs = ys = np.linspace(-1, 1, 41)
    X, Y = np.meshgrid(xs, ys)
    # boundary 0: x = 0; boundary 1: y = 0 (they cross at the origin: at corners with
    # x < 0 and y > 0 the smaller weight's boundary says "not above" where the larger
    # one's says "above"); boundary 2: x = 0.3 + 1e-9 y, beside 0, never crossing it
    values = np.column_stack([X.ravel(), Y.ravel(), (X - 0.3 - 1e-9 * Y).ravel()])
    points, pairs = contour_crossings(xs, ys, values)
    assert points.shape == (len(pairs), 2) and len(pairs) >= 1
    assert {tuple(p) for p in pairs.tolist()} == {(0, 1), (1, 2)}
    origin = points[(pairs == [0, 1]).all(axis=1)]
    np.testing.assert_allclose(origin, 0.0, atol=1e-12)
    np.testing.assert_allclose(points[(pairs == [1, 2]).all(axis=1)], [[0.3, 0.0]], atol=1e-9)
    # two touching contours (identical signs at every corner) are no crossing
    twin = np.column_stack([X.ravel(), X.ravel() + 1e-12 * Y.ravel()])
    assert contour_crossings(xs, ys, twin)[0].shape == (0, 2)
    # three crossings in one cell are marked once
    cell = np.array([[0.01, 0.01], [0.02, 0.03], [0.5, 0.5]])
    kept, index = one_per_cell(cell, xs, ys)
    np.testing.assert_array_equal(index, [0, 2])
    np.testing.assert_array_equal(kept, cell[[0, 2]])
