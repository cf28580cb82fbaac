"""Direct and indirect schemes fed an oracle classifier argmax_k pi_k p_k(x).

Resolution bound (direct scheme, proved in the module docstring of this test): a cell
of K distinct oracle classes is an up cell {(c + e_k)/N} with (c_k + 1)/pi~_k >= c_j/pi~_j
for all j, k, so the ratios rho_j = pi_hat_j / pi~_j of its centre differ by at most
Delta = (1 + 1/K) / (N min_j pi~_j); since sum_j pi~_j rho_j = 1, every rho_j lies in
[1 - Delta, 1 + Delta] and |p_hat_k - p_k| <= p_k Delta / (1 - Delta).  (Down cells never
qualify for the oracle.)  The indirect scheme with the exact grid count is held to the
same bound (its target h_count(p) equals the oracle's shares exactly).
"""

import numpy as np
import pytest

from wsvmgui.joint.schemes import border_to_proba, direct_scheme, indirect_scheme, proba_to_border
from wsvmgui.joint.simplex_grid import SimplexGrid


def _oracle(K, N, seed, size=150):
    rng = np.random.default_rng(seed)
    g = SimplexGrid.build(K, N)
    p = rng.dirichlet(np.full(K, 8.0), size=size)
    border = proba_to_border(p)
    delta = (1 + 1 / K) / (N * border.min(axis=1))
    keep = delta < 0.5  # border weight well inside the interior grid
    p, border, delta = p[keep], border[keep], delta[keep]
    pred = np.argmax(g.weights[None] * p[:, None, :], axis=2)
    return g, p, border, delta, pred


@pytest.mark.parametrize("K,N", [(3, 50), (3, 12), (4, 15), (5, 24)])
def test_direct_scheme_recovers_p_within_resolution(K, N):
    g, p, border, delta, pred = _oracle(K, N, seed=K * N)
    assert p.shape[0] > 20
    est = direct_scheme(pred, g)
    assert est.found.all()
    bound = p * (delta / (1 - delta))[:, None]
    p_hat = border_to_proba(est.border)
    assert np.all(np.abs(p_hat - p) <= bound + 1e-12)
    assert np.all(np.abs(est.border - border) <= border * delta[:, None] + 1e-12)


@pytest.mark.parametrize("K,N", [(3, 50), (4, 15), (5, 24)])
def test_indirect_scheme_recovers_p_and_count_beats_continuous(K, N):
    g, p, border, delta, pred = _oracle(K, N, seed=7 + K)
    bound = p * (delta / (1 - delta))[:, None]
    p_cnt, shares = indirect_scheme(pred, g, "count")
    p_con, _ = indirect_scheme(pred, g, "continuous")
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    assert np.all(np.abs(p_cnt - p) <= bound + 1e-9)
    # the exact count removes the O(d_pi) bias of the continuous volume share
    assert np.abs(p_cnt - p).sum(axis=1).mean() < 0.8 * np.abs(p_con - p).sum(axis=1).mean()
    assert np.abs(p_con - p).max() < 3 * bound.max()


def test_scheme_with_a_class_never_predicted_stays_finite():
    g = SimplexGrid.build(3, 10)
    pred = np.zeros((2, g.size), dtype=np.int8)
    pred[1, :5] = 1
    p, _ = indirect_scheme(pred, g)
    assert np.all(np.isfinite(p)) and np.all(p > 0)
    assert not direct_scheme(pred, g).found.any()
