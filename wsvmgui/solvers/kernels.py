"""Kernel functions and the default kernel-parameter grids.

Conventions (METHODS section 1): RBF ``K(x, x') = exp(-||x - x'||^2 / sigma^2)``, i.e.
scikit-learn's ``gamma = 1 / sigma^2``; polynomial ``K(x, x') = (gamma_p x'x' + coef0)^degree``;
linear ``K(x, x') = x'x'``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.spatial.distance import cdist

from ..errors import InputError

KERNELS = ("linear", "rbf", "poly")
#: Multipliers of sigma_M in the default sigma grid (METHODS section 1).
DEFAULT_SIGMA_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5)


@dataclass(frozen=True)
class Kernel:
    """A kernel with its parameters.

    Parameters
    ----------
    name : {"linear", "rbf", "poly"}
    sigma : float
        RBF width; ``K = exp(-||x - x'||^2 / sigma^2)``.
    degree : int
        Polynomial degree.
    coef0 : float
        Polynomial offset.
    gamma : float
        Polynomial scale of the inner product.
    """

    name: str = "rbf"
    sigma: float = 1.0
    degree: int = 3
    coef0: float = 1.0
    gamma: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in KERNELS:
            raise InputError(f"unknown kernel {self.name!r}; choose one of {', '.join(KERNELS)}")
        if self.name == "rbf" and not (np.isfinite(self.sigma) and self.sigma > 0):
            raise InputError(f"RBF sigma must be a positive number, got {self.sigma!r}")
        if self.name == "rbf" and not 1e-150 <= self.sigma <= 1e150:  # 1 / sigma**2 finite
            raise InputError(f"RBF sigma {self.sigma!r} is outside 1e-150..1e150")
        if self.name == "poly" and (int(self.degree) != self.degree or self.degree < 1):
            raise InputError(f"polynomial degree must be a positive integer, got {self.degree!r}")

    def __call__(self, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        """Kernel matrix between rows of ``A`` (n_a, p) and ``B`` (n_b, p); shape (n_a, n_b)."""
        return kernel_matrix(A, B, self)

    def to_dict(self) -> dict:
        """Plain-dict form for settings files."""
        return asdict(self)

    def describe(self) -> str:
        """Short human-readable description, e.g. ``rbf(sigma=0.52)``."""
        if self.name == "rbf":
            return f"rbf(sigma={self.sigma:.4g})"
        if self.name == "poly":
            return f"poly(degree={self.degree}, coef0={self.coef0:g}, gamma={self.gamma:g})"
        return "linear"


def kernel_matrix(A: np.ndarray, B: np.ndarray | None, kernel: Kernel) -> np.ndarray:
    """Kernel matrix, computed in place: the peak is the result plus O(n_a + n_b).

    Parameters
    ----------
    A : ndarray, shape (n_a, p)
    B : ndarray, shape (n_b, p), or None for ``B = A``
    kernel : Kernel

    Returns
    -------
    ndarray, shape (n_a, n_b)
        C-contiguous float64.
    """
    A = np.asarray(A, dtype=float)
    B = A if B is None else np.asarray(B, dtype=float)
    G = A @ B.T
    if kernel.name == "linear":
        return G
    if kernel.name == "poly":
        G *= kernel.gamma
        G += kernel.coef0
        G **= kernel.degree
        return G
    # RBF: squared distances from the Gram matrix, clipped at 0 against round-off.
    na = np.einsum("ij,ij->i", A, A)
    nb = na if B is A else np.einsum("ij,ij->i", B, B)
    G *= -2.0
    step = block_rows(G.shape[1])
    for lo in range(0, G.shape[0], step):  # (na_i + nb_j) - 2 G_ij, a block at a time
        G[lo : lo + step] += na[lo : lo + step, None] + nb[None, :]
    np.maximum(G, 0.0, out=G)
    G *= -1.0 / kernel.sigma**2
    return np.exp(G, out=G)


#: Bytes of one block of kernel rows in blocked products (scikit-learn's working memory).
BLOCK_BYTES = 32 * 2**20


def block_rows(n_cols: int, block_bytes: int = BLOCK_BYTES) -> int:
    """Rows of a float64 block of ``n_cols`` columns that fit in ``block_bytes``."""
    return max(1, int(block_bytes // (8 * max(int(n_cols), 1))))


def kernel_product(
    A: np.ndarray,
    B: np.ndarray,
    kernel: Kernel,
    coef_T: np.ndarray,
    block_bytes: int = BLOCK_BYTES,
) -> np.ndarray:
    """``kernel(A, B) @ coef_T`` without the whole ``(n_a, n_b)`` kernel: in blocks of rows.

    Parameters
    ----------
    A : ndarray, shape (n_a, p)
    B : ndarray, shape (n_b, p)
    kernel : Kernel
    coef_T : ndarray, shape (n_b, m) or (n_b,)
    block_bytes : int
        Largest kernel block held at once.

    Returns
    -------
    ndarray, shape (n_a, m) or (n_a,)
    """
    A = np.asarray(A, dtype=float)
    coef_T = np.asarray(coef_T, dtype=float)
    out = np.empty((A.shape[0], *coef_T.shape[1:]))
    step = block_rows(B.shape[0], block_bytes)
    for lo in range(0, A.shape[0], step):
        out[lo : lo + step] = kernel_matrix(A[lo : lo + step], B, kernel) @ coef_T
    return out


def median_between_class_distance(
    X: np.ndarray,
    y: np.ndarray,
    max_pairs: int = 4_000_000,
    seed: int = 0,
    chunk: int = 2048,
) -> float:
    """sigma_M: the median Euclidean distance between points of different classes.

    Exact when the number of between-class pairs is at most ``max_pairs`` (computed in
    chunks, so memory stays at ``chunk * n`` floats); otherwise the median over a seeded
    random sample of ``max_pairs`` between-class pairs.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
        Class labels of any type; at least two classes.
    max_pairs : int
        Largest number of pairs used.
    seed : int
        Seed for the subsample.
    chunk : int
        Rows per distance block.

    Returns
    -------
    float
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise InputError("sigma_M needs points of at least two classes")
    counts = np.bincount(codes)
    n_pairs = (counts.sum() ** 2 - (counts**2).sum()) // 2
    if n_pairs <= max_pairs:
        parts = []
        for a in range(classes.size):
            Xa = X[codes == a]
            Xb = X[codes > a]
            if Xb.shape[0] == 0:
                continue
            for s in range(0, Xa.shape[0], chunk):
                parts.append(cdist(Xa[s : s + chunk], Xb).ravel())
        return float(np.median(np.concatenate(parts)))
    # Uniform sample (with replacement) of between-class pairs: pick the class pair with
    # probability n_a n_b / n_pairs, then one point of each class.  Memory stays at
    # max_pairs floats plus blocks of about 1e6 numbers, however small a class is.
    rng = np.random.default_rng(seed)
    a_idx, b_idx = np.triu_indices(classes.size, 1)
    pair_weights = counts[a_idx].astype(float) * counts[b_idx]
    per_pair = rng.multinomial(max_pairs, pair_weights / pair_weights.sum())
    members = [np.flatnonzero(codes == k) for k in range(classes.size)]
    block = max(1024, 1_000_000 // max(X.shape[1], 1))
    dists = np.empty(max_pairs)
    pos = 0
    for ca, cb, m in zip(a_idx.tolist(), b_idx.tolist(), per_pair, strict=True):
        for start in range(0, int(m), block):
            k = min(block, int(m) - start)
            i = members[ca][rng.integers(0, members[ca].size, size=k)]
            j = members[cb][rng.integers(0, members[cb].size, size=k)]
            dists[pos : pos + k] = np.linalg.norm(X[i] - X[j], axis=1)
            pos += k
    return float(np.median(dists))


def default_sigma_grid(
    X: np.ndarray, y: np.ndarray, factors: tuple[float, ...] = DEFAULT_SIGMA_FACTORS, seed: int = 0
) -> np.ndarray:
    """Default RBF widths ``factors * sigma_M`` (METHODS section 1); shape (len(factors),)."""
    sigma_m = median_between_class_distance(X, y, seed=seed)
    if not sigma_m > 0:
        raise InputError("all points of different classes coincide; cannot scale the RBF kernel")
    return np.asarray(factors, dtype=float) * sigma_m
