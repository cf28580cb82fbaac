"""Volume shares h_k: closed form vs Monte Carlo and vs the paper's K = 3 formula."""

import numpy as np
import pytest

from wsvmgui.joint.simplex_grid import SimplexGrid
from wsvmgui.joint.volumes import h_continuous, h_count, h_paper_k3, invert_shares


@pytest.mark.parametrize("K", [3, 4, 5])
def test_closed_form_matches_monte_carlo(K):
    rng = np.random.default_rng(K)
    p = rng.dirichlet(np.full(K, 2.0), size=4)
    pis = rng.dirichlet(np.ones(K), size=200_000)  # uniform on the simplex
    h = h_continuous(p)
    np.testing.assert_allclose(h.sum(axis=1), 1.0, atol=1e-12)
    for row, hk in zip(p, h, strict=True):
        mc = np.bincount(np.argmax(pis * row, axis=1), minlength=K) / pis.shape[0]
        # binomial sd <= 0.5/sqrt(2e5) ~ 0.0011; allow 5 sd
        np.testing.assert_allclose(mc, hk, atol=0.0056)


def test_closed_form_equals_paper_k3_formula_and_binary_case():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=50)
    np.testing.assert_allclose(h_continuous(p)[:, 2], h_paper_k3(p), rtol=1e-8, atol=1e-12)
    # symmetry: permuting p permutes h
    np.testing.assert_allclose(
        h_continuous(p[:, [1, 2, 0]])[:, 2], h_continuous(p)[:, 0], rtol=1e-10
    )
    q = rng.dirichlet(np.ones(2), size=10)
    np.testing.assert_allclose(h_continuous(q), q, rtol=1e-10)  # K = 2: share = p


def test_grid_count_approaches_the_volume_and_inversion_recovers_p():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.full(3, 3.0), size=100)
    coarse = np.abs(h_count(p, SimplexGrid.build(3, 20).weights) - h_continuous(p)).max()
    fine = np.abs(h_count(p, SimplexGrid.build(3, 100).weights) - h_continuous(p)).max()
    assert fine < coarse and fine < 0.05
    back = invert_shares(h_continuous(p), "continuous")
    np.testing.assert_allclose(back, p, atol=1e-5)
