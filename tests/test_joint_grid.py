"""The interior simplex grid, its snake order and its cells."""

from math import comb

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.joint.simplex_grid import SimplexGrid


@pytest.mark.parametrize("K,N", [(3, 50), (3, 7), (4, 9), (5, 20)])
def test_grid_is_the_interior_lattice_in_snake_order(K, N):
    g = SimplexGrid.build(K, N)
    assert g.size == comb(N - 1, K - 1)
    assert np.all(g.counts >= 1) and np.all(g.counts.sum(axis=1) == N)
    assert len({tuple(r) for r in g.counts}) == g.size
    steps = np.abs(np.diff(g.counts, axis=0))
    # consecutive points are neighbours: weight 1/N moved between two classes
    assert np.all(steps.sum(axis=1) == 2) and np.all(steps.max(axis=1) == 1)
    np.testing.assert_allclose(g.weights.sum(axis=1), 1.0)


def test_cells_are_k_mutually_adjacent_points():
    g = SimplexGrid.build(3, 6)
    vertices, centres = g.cells
    # up cells: base interior of N-1 grid; down cells: base with all coords >= 2, sum N+1
    assert vertices.shape[0] == comb(4, 2) + comb(3, 2)
    for row, c in zip(vertices, centres, strict=True):
        pts = g.counts[row]
        d = np.abs(pts[:, None, :] - pts[None, :, :]).sum(axis=2)
        assert np.all(d[~np.eye(3, dtype=bool)] == 2)
        np.testing.assert_allclose(g.weights[row].mean(axis=0), c)
    assert sorted(g.neighbours(g.index_of((2, 2, 2)))) == sorted(
        g.index_of(m) for m in [(3, 1, 2), (3, 2, 1), (1, 3, 2), (2, 3, 1), (1, 2, 3), (2, 1, 3)]
    )


@pytest.mark.parametrize("K,N", [(3, 3), (5, 5), (3, 2.5)])
def test_too_coarse_grid_is_an_input_error(K, N):
    with pytest.raises(InputError):
        SimplexGrid.build(K, N)
