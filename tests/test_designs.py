"""Simulation designs against METHODS section 8."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from wsvmgui.errors import InputError
from wsvmgui.evaluation.designs import DESIGNS, get_design, simulate

NAMES = [
    "wang2008_ex1",
    "wuliu2011_ex1",
    "wuliu2011_ex6",
    "wu2010_ex1",
    "wu2010_ex2",
    "wu2010_ex4",
    "zeng_ex1",
    "zeng_ex2",
    "zeng_ex3",
    "zeng_ex4",
]
N_CLASSES = {
    "wang2008_ex1": 2,
    "wuliu2011_ex1": 2,
    "wuliu2011_ex6": 2,
    "wu2010_ex1": 3,
    "wu2010_ex2": 3,
    "wu2010_ex4": 5,
    "zeng_ex1": 7,
    "zeng_ex2": 9,
    "zeng_ex3": 5,
    "zeng_ex4": 5,
}
PAPER_N = {
    "wang2008_ex1": 100,
    "wuliu2011_ex1": 100,
    "wu2010_ex1": 400,
    "wu2010_ex2": 100,
    "wu2010_ex4": 1000,
    "zeng_ex1": 500,
    "zeng_ex2": 500,
    "zeng_ex3": 500,
    "zeng_ex4": 500,
}


def test_registry_lists_every_design():
    assert set(NAMES) <= set(DESIGNS)
    with pytest.raises(InputError, match="wang2008_ex1"):
        get_design("nope")
    for name, n in PAPER_N.items():
        assert DESIGNS[name].default_n == n
        assert simulate(name).X.shape[0] == n


@pytest.mark.parametrize("name", NAMES)
def test_shapes_rows_and_determinism(name):
    d = simulate(name, 300, seed=4)
    K = N_CLASSES[name]
    assert d.X.shape == (300, 2) and d.y.shape == (300,) and d.p.shape == (300, K)
    np.testing.assert_allclose(d.p.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(d.p >= 0)
    expected = [-1, 1] if K == 2 else list(range(1, K + 1))
    assert list(d.classes) == expected
    assert set(np.unique(d.y)) <= set(expected)
    again = simulate(name, 300, seed=4)
    np.testing.assert_array_equal(again.X, d.X)
    np.testing.assert_array_equal(again.y, d.y)
    other = simulate(name, 300, seed=5)
    assert not np.array_equal(other.X, d.X)
    # The stored p is the design's probability function at X.
    np.testing.assert_allclose(DESIGNS[name].probabilities(d.X), d.p)


@pytest.mark.parametrize("name", NAMES)
def test_labels_follow_true_probabilities(name):
    """Empirical class counts match sum of p, overall and within bins of p_k."""
    n = 20_000
    d = simulate(name, n, seed=11)
    for k, c in enumerate(d.classes):
        hit = (d.y == c).astype(float)
        pk = d.p[:, k]
        edges = np.quantile(pk, [0, 0.2, 0.4, 0.6, 0.8, 1.0])
        bins = np.clip(np.searchsorted(edges, pk, side="right") - 1, 0, 4)
        groups = [np.ones(n, bool)] + [bins == b for b in range(5)]
        for g in groups:
            var = float(np.sum(pk[g] * (1 - pk[g])))
            if var < 1.0:
                # Nearly deterministic bin: the count must match within a few points.
                assert abs(hit[g].sum() - pk[g].sum()) <= 5
                continue
            z = (hit[g].sum() - pk[g].sum()) / math.sqrt(var)
            # 6 groups x K classes x 10 designs ~ 300 z-scores: |z| < 4.5 holds for all
            # with probability > 0.99 under a correct sampler (seeded, so deterministic).
            assert abs(z) < 4.5, (name, c, z)


def _softmax(F):
    E = np.exp(F - F.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize(
    "x, p_plus",
    [((0.3, 0.0), 0.8), ((-0.1, 0.5), 0.2), ((0.9, -0.3), 0.8)],
)
def test_wang2008_ex1_formula(x, p_plus):
    assert get_design("wang2008_ex1").probabilities(np.array([x]))[0, 1] == pytest.approx(p_plus)


def test_wuliu2011_formulas():
    p = get_design("wuliu2011_ex1").probabilities(np.array([[0.25, 0.0], [-0.5, 0.25]]))
    assert p[0, 1] == pytest.approx(1 / (1 + math.exp(-1.0)))
    assert p[1, 1] == pytest.approx(1 / (1 + math.exp(1.0)))
    p6 = get_design("wuliu2011_ex6").probabilities(np.array([[0.5, 0.1], [-0.2, 0.3]]))
    np.testing.assert_allclose(p6[:, 1], [0.9, 0.1])


def test_wu2010_ex2_formula():
    X = np.array([[0.0, 0.0], [1.0, 2.0]])
    F = np.array([[0.1, -0.2, 0.1], [-1.0, 0.4, 1.0]])  # computed by hand from METHODS 8
    np.testing.assert_allclose(get_design("wu2010_ex2").probabilities(X), _softmax(F))


def test_zeng_ex3_formula():
    X = np.array([[1.0, 1.0], [0.0, 0.0]])
    F = np.array([[-1.2, -0.3, 1.8, -0.3, 1.0], [0.2, 0.2, 0.2, 0.0, -0.2]])
    np.testing.assert_allclose(get_design("zeng_ex3").probabilities(X), _softmax(F))


def test_zeng_ex4_formula():
    def t2_cdf(t):  # closed form of the t distribution with 2 degrees of freedom
        return 0.5 + t / (2 * math.sqrt(2 + t * t))

    x1, x2 = 0.0, 1.0
    h = [
        -3 * math.sqrt(5) * x1 + 3 * x2,
        -3 * math.sqrt(5) * x1 - 3 * x2,
        math.sqrt(3) * x2 - 1.2 * x1,
        2 * math.sqrt(3) * x2 + 1.2 * x1,
        math.sqrt(abs(x1 * x2) + 1),
    ]
    F = np.array([[norm.ppf(t2_cdf(v)) for v in h]])
    got = get_design("zeng_ex4").probabilities(np.array([[x1, x2]]))
    np.testing.assert_allclose(got, _softmax(F), rtol=1e-9)
    # Far out, the tails must stay finite (no ppf(1) = inf).
    far = get_design("zeng_ex4").probabilities(np.array([[-9.0, 3.0], [7.0, -7.0]]))
    assert np.all(np.isfinite(far))


@pytest.mark.parametrize(
    "name, K, radius, sd",
    [
        ("wu2010_ex1", 3, 1.0, 0.7),
        ("wu2010_ex4", 5, 1.0, 0.7),
        ("zeng_ex1", 7, 1.5, 1.2),
        ("zeng_ex2", 9, 2.5, 1.5),
    ],
)
def test_gaussian_designs(name, K, radius, sd):
    y = np.arange(1, K + 1)
    mu = radius * np.column_stack([np.cos(2 * y * np.pi / K), np.sin(2 * y * np.pi / K)])
    X = np.array([[0.0, 0.0], mu[0], [0.3, -1.1]])
    d2 = ((X[:, None, :] - mu[None]) ** 2).sum(axis=2)
    np.testing.assert_allclose(
        get_design(name).probabilities(X), _softmax(-d2 / (2 * sd**2)), rtol=1e-10
    )
    np.testing.assert_allclose(get_design(name).probabilities(X[:1]), 1 / K)
    # Sampling: equal priors, class means mu_y, spread sd.
    data = simulate(name, 4000 * K // 3, seed=2)
    counts = np.array([(data.y == c).sum() for c in y])
    assert np.all(np.abs(counts / counts.sum() - 1 / K) < 4 * math.sqrt((1 / K) / counts.sum()))
    for k, c in enumerate(y):
        Xc = data.X[data.y == c]
        np.testing.assert_allclose(Xc.mean(axis=0), mu[k], atol=5 * sd / math.sqrt(len(Xc)))
        assert Xc.std(axis=0) == pytest.approx([sd, sd], rel=0.1)


def test_input_domains_and_uniformity():
    n = 20_000
    tol = 4 * math.sqrt(0.25 * 0.75 / n)
    disc = simulate("wang2008_ex1", n, seed=1).X
    r = np.hypot(disc[:, 0], disc[:, 1])
    assert r.max() <= 1.0
    assert abs(np.mean(r < 0.5) - 0.25) < tol  # area share of the inner disc
    assert abs(np.mean(disc[:, 0] > 0) - 0.5) < 4 * math.sqrt(0.25 / n)
    diamond = simulate("wuliu2011_ex1", n, seed=1).X
    l1 = np.abs(diamond).sum(axis=1)
    assert l1.max() <= 2.0 + 1e-12
    assert abs(np.mean(l1 < 1.0) - 0.25) < tol  # inner diamond: a quarter of the area
    assert abs(np.mean(diamond[:, 0] > 0) - 0.5) < 4 * math.sqrt(0.25 / n)
    box = simulate("wu2010_ex2", n, seed=1).X
    assert np.abs(box[:, 0]).max() <= 3 and np.abs(box[:, 1]).max() <= 6
    assert np.abs(box[:, 1]).max() > 5.9
    sq = simulate("zeng_ex3", n, seed=1).X
    assert np.abs(sq).max() <= 5 and np.abs(sq).max() > 4.99
    big = simulate("zeng_ex4", n, seed=1).X
    rb = np.hypot(big[:, 0], big[:, 1])
    assert rb.max() <= 10 and abs(np.mean(rb < 5) - 0.25) < tol


def test_bad_n_raises():
    with pytest.raises(InputError):
        simulate("wang2008_ex1", 0)
