"""Simulation designs with known class probabilities (METHODS section 8).

Every design is a seeded generator returning inputs, labels and the true conditional class
probabilities.  Binary designs use labels ``-1`` and ``+1`` (classes ``[-1, 1]``); K-class
designs use labels ``1, ..., K``.  Columns of the probability matrix follow the sorted
classes, so for binary designs column 1 is ``P(Y = +1 | x)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import InputError


@dataclass(frozen=True)
class SimulatedData:
    """One draw from a design.

    Attributes
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    p : ndarray, shape (n, K)
        True ``P(Y = classes[k] | x)``; rows sum to 1.
    classes : ndarray, shape (K,)
    """

    X: np.ndarray
    y: np.ndarray
    p: np.ndarray
    classes: np.ndarray


@dataclass(frozen=True)
class Design:
    """A simulation design: name, source, class count, paper's training size, generator."""

    name: str
    source: str
    n_classes: int
    default_n: int
    description: str
    _draw_x: Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray | None]]
    _prob: Callable[[np.ndarray], np.ndarray]

    def sample(self, n: int, seed: int | None = 0) -> SimulatedData:
        """Draw ``n`` points; labels drawn from the true probabilities.

        Parameters
        ----------
        n : int
        seed : int or None

        Returns
        -------
        SimulatedData
        """
        if n < 1:
            raise InputError(f"design {self.name}: n must be positive, got {n}")
        rng = np.random.default_rng(seed)
        X, y_idx = self._draw_x(rng, n)
        p = self.probabilities(X)
        if y_idx is None:
            u = rng.random(n)
            y_idx = (u[:, None] > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)
        classes = np.array([-1, 1]) if self.n_classes == 2 else np.arange(1, self.n_classes + 1)
        return SimulatedData(X=X, y=classes[y_idx], p=p, classes=classes)

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        """True class probabilities at ``X`` (n, p); shape (n, K), rows sum to 1."""
        p = self._prob(np.asarray(X, dtype=float))
        return p / p.sum(axis=1, keepdims=True)


def _softmax(F: np.ndarray) -> np.ndarray:
    F = F - F.max(axis=1, keepdims=True)
    E = np.exp(F)
    return E / E.sum(axis=1, keepdims=True)


def _uniform_disc(rng: np.random.Generator, n: int, radius: float = 1.0) -> np.ndarray:
    r = radius * np.sqrt(rng.random(n))
    t = 2 * np.pi * rng.random(n)
    return np.column_stack([r * np.cos(t), r * np.sin(t)])


def _uniform_diamond(rng: np.random.Generator, n: int, half: float = 2.0) -> np.ndarray:
    # |x1| + |x2| <= half is a square rotated by 45 degrees.
    u = rng.uniform(-half, half, size=(n, 2))
    return np.column_stack([(u[:, 0] + u[:, 1]) / 2, (u[:, 0] - u[:, 1]) / 2])


def _binary(p1: np.ndarray) -> np.ndarray:
    return np.column_stack([1.0 - p1, p1])


def _gauss_means(K: int, radius: float) -> np.ndarray:
    y = np.arange(1, K + 1)
    return radius * np.column_stack([np.cos(2 * y * np.pi / K), np.sin(2 * y * np.pi / K)])


def _gaussian_mixture(K: int, radius: float, sd: float):
    mu = _gauss_means(K, radius)

    def draw(rng: np.random.Generator, n: int):
        y_idx = rng.integers(0, K, size=n)
        return mu[y_idx] + sd * rng.standard_normal((n, 2)), y_idx

    def prob(X: np.ndarray) -> np.ndarray:
        d2 = ((X[:, None, :] - mu[None, :, :]) ** 2).sum(axis=2)
        return _softmax(-d2 / (2 * sd**2))

    return draw, prob


def _wu2010_ex2(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    f1 = -x1 + 0.1 * x1**2 - 0.05 * x2**2 + 0.1
    f2 = 0.2 * x1**2 + 0.1 * x2**2 - 0.2
    f3 = x1 + 0.1 * x1**2 - 0.05 * x2**2 + 0.1
    return _softmax(np.column_stack([f1, f2, f3]))


def _zeng_ex3(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    f = np.column_stack(
        [
            -1.5 * x1 + 0.2 * x1**2 - 0.1 * x2**2 + 0.2,
            0.3 * x1**2 + 0.2 * x2**2 - x1 * x2 + 0.2,
            1.5 * x1 + 0.2 * x1**2 - 0.1 * x2**2 + 0.2,
            -0.1 * x1**2 + 0.2 * x2**2 - 1.5 * x2 + x1 + 0.1 * x1 * x2,
            0.1 * x1**2 + 0.1 * x2**2 + x1 * x2 - 0.2,
        ]
    )
    return _softmax(f)


def _zeng_ex4(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    s5, s3 = np.sqrt(5.0), np.sqrt(3.0)
    H = np.column_stack(
        [
            -3 * s5 * x1 + 3 * x2,
            -3 * s5 * x1 - 3 * x2,
            s3 * x2 - 1.2 * x1,
            2 * s3 * x2 + 1.2 * x1,
            np.sqrt(np.abs(x1 * x2) + 1),
        ]
    )
    # Phi^{-1}(T_2(h)) computed through the upper tail for h > 0 to avoid ppf(1) = inf.
    F = np.where(H > 0, stats.norm.isf(stats.t.sf(H, 2)), stats.norm.ppf(stats.t.cdf(H, 2)))
    return _softmax(F)


def _x_only(draw_x: Callable[[np.random.Generator, int], np.ndarray]):
    return lambda rng, n: (draw_x(rng, n), None)


_W1, _W1p = _gaussian_mixture(3, 1.0, 0.7)
_W4, _W4p = _gaussian_mixture(5, 1.0, 0.7)
_Z1, _Z1p = _gaussian_mixture(7, 1.5, 1.2)
_Z2, _Z2p = _gaussian_mixture(9, 2.5, 1.5)

DESIGNS: dict[str, Design] = {
    d.name: d
    for d in [
        Design(
            "wang2008_ex1",
            "Wang, Shen & Liu 2008, Example 1",
            2,
            100,
            "x uniform on the unit disc; P(+1|x) = 0.8 if x1 > 0 else 0.2",
            _x_only(_uniform_disc),
            lambda X: _binary(np.where(X[:, 0] > 0, 0.8, 0.2)),
        ),
        Design(
            "wuliu2011_ex1",
            "Wu & Liu 2011, Example 1",
            2,
            100,
            "x uniform on |x1| + |x2| <= 2; P(+1|x) = logistic(4 (x1 + x2))",
            _x_only(_uniform_diamond),
            lambda X: _binary(1 / (1 + np.exp(-4 * (X[:, 0] + X[:, 1])))),
        ),
        Design(
            "wuliu2011_ex2",
            "Wu & Liu 2011, Example 2",
            2,
            100,
            "x uniform on |x1| + |x2| <= 2; Y = sign(x1 + x2), flipped with probability 0.1",
            _x_only(_uniform_diamond),
            lambda X: _binary(np.where(X[:, 0] + X[:, 1] > 0, 0.9, 0.1)),
        ),
        Design(
            "wuliu2011_ex6",
            "Wu & Liu 2011, Example 6",
            2,
            100,
            "x uniform on the unit disc; Y = sign(x1), flipped with probability 0.1",
            _x_only(_uniform_disc),
            lambda X: _binary(np.where(X[:, 0] > 0, 0.9, 0.1)),
        ),
        Design(
            "wu2010_ex1",
            "Wu, Zhang & Liu 2010, Example 1",
            3,
            400,
            "three Gaussian classes N(mu_y, 0.7^2 I) on the unit circle, equal priors",
            _W1,
            _W1p,
        ),
        Design(
            "wu2010_ex2",
            "Wu, Zhang & Liu 2010, Example 2",
            3,
            100,
            "x1 ~ U[-3,3], x2 ~ U[-6,6]; p = softmax of three quadratics",
            _x_only(lambda rng, n: np.column_stack([rng.uniform(-3, 3, n), rng.uniform(-6, 6, n)])),
            _wu2010_ex2,
        ),
        Design(
            "wu2010_ex4",
            "Wu, Zhang & Liu 2010, Example 4",
            5,
            1000,
            "five Gaussian classes N(mu_y, 0.7^2 I) on the unit circle, equal priors",
            _W4,
            _W4p,
        ),
        Design(
            "zeng_ex1",
            "Zeng & Zhang, Example 1",
            7,
            500,
            "seven Gaussian classes N(mu_y, 1.2^2 I), mu_y on a circle of radius 1.5",
            _Z1,
            _Z1p,
        ),
        Design(
            "zeng_ex2",
            "Zeng & Zhang, Example 2",
            9,
            500,
            "nine Gaussian classes N(mu_y, 1.5^2 I), mu_y on a circle of radius 2.5",
            _Z2,
            _Z2p,
        ),
        Design(
            "zeng_ex3",
            "Zeng & Zhang, Example 3",
            5,
            500,
            "x ~ U[-5,5]^2; p = softmax of five quadratics",
            _x_only(lambda rng, n: rng.uniform(-5, 5, size=(n, 2))),
            _zeng_ex3,
        ),
        Design(
            "zeng_ex4",
            "Zeng & Zhang, Example 4",
            5,
            500,
            "x uniform on a disc of radius 10; f_j = Phi^-1(T_2(h_j)); p = softmax(f)",
            _x_only(lambda rng, n: _uniform_disc(rng, n, 10.0)),
            _zeng_ex4,
        ),
    ]
}


def get_design(name: str) -> Design:
    """Look a design up by name; the error lists the valid names."""
    try:
        return DESIGNS[name]
    except KeyError:
        raise InputError(f"unknown design {name!r}; choose one of {', '.join(DESIGNS)}") from None


def simulate(name: str, n: int | None = None, seed: int | None = 0) -> SimulatedData:
    """Draw ``n`` points (default: the paper's training size) from design ``name``."""
    design = get_design(name)
    return design.sample(design.default_n if n is None else n, seed)
