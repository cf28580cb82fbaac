"""Slices of the training hull: exact cases and agreement with point-wise LPs."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.app.slices import (
    closeness,
    describe_cut,
    describe_reference,
    in_hull,
    lift,
    slice_hull,
)
from wsvmgui.errors import InputError


def _cube():
    """Vertices of the unit cube in R^3."""
    return np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], float)


def test_cube_slice_is_the_unit_square_and_misses_outside():
    X = _cube()
    ring = slice_hull(X, np.array([0.5, 0.5, 0.3]), 0, 1)
    assert ring.shape[1] == 2 and np.allclose(ring[0], ring[-1])
    assert ring[:, 0].min() == pytest.approx(0) and ring[:, 0].max() == pytest.approx(1)
    assert ring[:, 1].min() == pytest.approx(0) and ring[:, 1].max() == pytest.approx(1)
    # above the cube: no cut
    assert slice_hull(X, np.array([0.5, 0.5, 1.2]), 0, 1).size == 0


def test_simplex_slice_shrinks_with_the_held_feature():
    """The simplex {x >= 0, sum x <= 1} cut at x3 = t is the triangle of side 1 - t."""
    X = np.vstack([np.zeros(3), np.eye(3)])
    for t in (0.0, 0.25, 0.6):
        ring = slice_hull(X, np.array([0.1, 0.1, t]), 0, 1)
        assert ring[:, 0].max() == pytest.approx(1 - t, abs=1e-9)
        assert ring[:, 1].max() == pytest.approx(1 - t, abs=1e-9)
        assert ring[:, 0].min() == pytest.approx(0, abs=1e-9)


def test_two_features_give_the_planar_hull():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    ring = slice_hull(X, X[0], 0, 1)
    from scipy.spatial import ConvexHull

    assert ring.shape[0] - 1 == len(ConvexHull(X).vertices)


def test_in_hull_agrees_with_the_slice_polygon():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    ref = X.mean(axis=0)
    ring = slice_hull(X, ref, 1, 3, n_directions=96)
    assert ring.shape[0] > 4
    centre = ring[:-1].mean(axis=0)
    inside = lift(centre + 0.5 * (ring[:-1] - centre), ref, 1, 3)
    outside = lift(centre + 1.2 * (ring[:-1] - centre), ref, 1, 3)
    assert in_hull(inside, X).all()
    assert not in_hull(outside, X).any()


def test_closeness_and_description():
    X = np.array([[0.0, 0, 0, 0], [0, 0, 1, 1], [5, 5, 0, 0]])
    c = closeness(X, np.zeros(4), 0, 1, spread=np.ones(4))
    assert c[0] == pytest.approx(1) and c[2] == pytest.approx(1)  # same other features
    assert c[1] == pytest.approx(np.exp(-0.5))
    assert np.all(closeness(X[:, :2], np.zeros(2), 0, 1) == 1)
    text = describe_reference(np.arange(5.0), list("abcde"), 0, 1, limit=2)
    assert text.startswith("c = 2, d = 3") and "3 features" in text


def test_a_slice_through_a_vertex_only_touches_the_hull():
    """The plane x3 = 1 through the apex of a tetrahedron meets it at the apex alone: the
    note says the whole plane lies outside the hull."""
    X = np.vstack([np.zeros(3), np.eye(3)])
    ring = slice_hull(X, np.array([0.0, 0.0, 1.0]), 0, 1)
    assert np.unique(np.round(ring, 9), axis=0).shape[0] == 1
    np.testing.assert_allclose(ring[0], [0.0, 0.0], atol=1e-9)
    assert "only at a point" in describe_cut(ring)
    X = _cube()
    assert "misses" in describe_cut(slice_hull(X, np.array([0.5, 0.5, 1.2]), 0, 1))
    assert describe_cut(slice_hull(X, np.full(3, 0.5), 0, 1)).startswith("Dashed")


def test_bad_planes_are_refused():
    with pytest.raises(InputError):
        slice_hull(_cube(), np.zeros(3), 0, 0)
    with pytest.raises(InputError):
        slice_hull(_cube(), np.zeros(2), 0, 1)
