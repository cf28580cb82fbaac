"""Kernel rows as the weight path reads them: a dense matrix, or rows made when needed.

The path (:mod:`wsvmgui.ladder.path_tracer`) reads the kernel in four ways only: the rows
of the points on the elbow (every step), the row of a point joining the elbow, the kernel
sums over the points left of the elbow (kept as running sums, recomputed from scratch
now and then), and the products of the independent KKT check.  So it never needs the
n x n matrix itself:

* :class:`DenseRows` reads a dense matrix in place (``slot`` the identity);
* :class:`FeatureRows` holds the rows of the elbow points and of recent ones in a store
  of ``capacity`` rows (grown by doubling up to ``max_rows``), makes a missing row from
  the features when the tracer asks for it, and the sums and products a block of rows at
  a time (:func:`~wsvmgui.solvers.kernels.kernel_product`).  Memory: the store
  (``8 n capacity`` bytes) and blocks of at most ~32 MB, against ``8 n^2`` for the
  matrix; time: each row is made once per visit to the elbow (the store keeps the most
  recent ones), the sums from scratch cost ``n |L|`` kernel values.

Both give the tracer ``K`` (rows, n) and ``slot`` (n,) (point j's row is ``K[slot[j]]``,
-1 when not held) in the layout of :mod:`wsvmgui.ladder._path_kernel`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from ..solvers._libsvm_direct import fit_features
from ..solvers.gram import FLY_CACHE_MB, Gram, OnTheFlyGram, libsvm_kernel
from ..solvers.kernels import BLOCK_BYTES, Kernel, kernel_matrix, kernel_product

#: Rows of the store to begin with (it grows while the elbow needs more).
START_ROWS = 64
#: Largest block of kernel values made at once for the sums over L and the KKT check.
SUMS_BLOCK_BYTES = BLOCK_BYTES


class ElbowRowsExceeded(Exception):
    """The elbow needs more rows than ``max_rows`` (the memory budget of the store)."""


class KernelRows:
    """The kernel of n training points as the tracer reads it (interface).

    Attributes
    ----------
    n : int
    K : ndarray, shape (r, n)
        Row store (a dense matrix: the matrix itself).
    slot : ndarray of int64, shape (n,)
        Row of ``K`` holding each point's kernel row, -1 when not held.
    diag : ndarray, shape (n,)
        ``K_jj``.
    """

    n: int
    K: np.ndarray
    slot: np.ndarray
    diag: np.ndarray
    dense: bool = False

    def ensure(self, j: int, pinned: np.ndarray) -> None:
        """Hold point j's row; never drop the rows of points with ``pinned[p] >= 0``."""

    def left_sums(self, state: np.ndarray, w: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``sum_{j in L} w_j K[:, j]`` over the positive and the negative points of L.

        A dense matrix's sums are made by the compiled
        :func:`~wsvmgui.ladder._path_kernel.recompute_sums` instead (in place, no copy).

        Parameters
        ----------
        state : ndarray of int8, shape (n,)
            Set codes; L is ``state == 2``.
        w : ndarray, shape (n,)
            Multiplicities.
        pos : ndarray of bool, shape (n,)

        Returns
        -------
        ndarray, shape (2, n)
        """
        raise NotImplementedError

    def block(self, members: np.ndarray) -> np.ndarray:
        """``K[members][:, members]`` (their rows must be held); shape (m, m)."""
        return self.K[self.slot[members]][:, members]

    def gram(self) -> np.ndarray | Gram:
        """The matrix for the KKT check's products (dense, or made a block at a time)."""
        raise NotImplementedError

    def libsvm(
        self, y: np.ndarray, upper: np.ndarray, C: float, tol: float
    ) -> tuple[np.ndarray, float]:
        """libsvm's dual variables (n,) and intercept at tolerance ``tol`` (the fallback start)."""
        raise NotImplementedError


class DenseRows(KernelRows):
    """A dense (n, n) matrix, read in place."""

    dense = True

    def __init__(self, K: np.ndarray) -> None:
        self.K = K
        self.n = int(K.shape[0])
        self.slot = np.arange(self.n, dtype=np.int64)
        self.diag = np.ascontiguousarray(np.diag(K))

    def gram(self) -> np.ndarray:
        return self.K

    def libsvm(
        self, y: np.ndarray, upper: np.ndarray, C: float, tol: float
    ) -> tuple[np.ndarray, float]:
        clf = SVC(kernel="precomputed", C=C, tol=tol, cache_size=200, max_iter=-1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(self.K, y, sample_weight=upper / C)
        alpha = np.zeros(y.size)
        alpha[clf.support_] = np.abs(clf.dual_coef_[0])
        return alpha, float(clf.intercept_[0])


class FeatureRows(KernelRows):
    """Rows of ``kernel`` over the features ``X`` (n, p), made when the tracer needs them.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    kernel : Kernel
    max_rows : int
        Largest number of rows held (``8 n max_rows`` bytes); an elbow that needs more
        raises :class:`ElbowRowsExceeded`.
    """

    def __init__(self, X: np.ndarray, kernel: Kernel, max_rows: int) -> None:
        self.X = np.ascontiguousarray(X, dtype=float)
        self.kernel = kernel
        self.n = int(self.X.shape[0])
        self.max_rows = max(int(max_rows), 2)
        cap = min(START_ROWS, self.max_rows, max(self.n, 2))
        self.K = np.zeros((cap, self.n))
        self.slot = np.full(self.n, -1, dtype=np.int64)
        self.owner = np.full(cap, -1, dtype=np.int64)
        blocks = (self.X[i : i + 256] for i in range(0, self.n, 256))
        self.diag = np.concatenate([np.diag(kernel_matrix(b, None, kernel)) for b in blocks])
        self.sq = np.einsum("ij,ij->i", self.X, self.X)  # squared norms (RBF)
        self._next = 0  # where the search for a row to replace starts (oldest first)
        self._sums: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.made = 0  # rows made so far

    def ensure(self, j: int, pinned: np.ndarray) -> None:
        if self.slot[j] >= 0:
            return
        s = self._free_slot(pinned)
        old = self.owner[s]
        if old >= 0:
            self.slot[old] = -1
        self.make_row(j, self.K[s])
        self.owner[s] = j
        self.slot[j] = s
        self.made += 1

    def make_row(self, j: int, out: np.ndarray) -> None:
        """Point j's kernel row into ``out`` (n,): :func:`~wsvmgui.solvers.kernels.
        kernel_matrix`'s formulas, in place, with the squared norms computed once."""
        kern = self.kernel
        np.dot(self.X, self.X[j], out=out)
        if kern.name == "linear":
            return
        if kern.name == "poly":
            out *= kern.gamma
            out += kern.coef0
            out **= kern.degree
            return
        out *= -2.0  # (|x_j|^2 + |x_i|^2) - 2 x_j'x_i, clipped at 0, as kernel_matrix
        out += self.sq[j] + self.sq
        np.maximum(out, 0.0, out=out)
        out *= -1.0 / kern.sigma**2
        np.exp(out, out=out)

    def _free_slot(self, pinned: np.ndarray) -> int:
        """A free row, else the oldest one not pinned, else a grown store's first new row."""
        cap = self.owner.size
        for step in range(cap):
            s = (self._next + step) % cap
            p = self.owner[s]
            if p < 0 or pinned[p] < 0:
                self._next = (s + 1) % cap
                return s
        if cap >= self.max_rows:
            raise ElbowRowsExceeded(
                f"the elbow needs more than {self.max_rows} kernel rows of {self.n} values"
            )
        new = min(2 * cap, self.max_rows)
        K = np.zeros((new, self.n))
        K[:cap] = self.K
        self.K = K
        self.owner = np.concatenate([self.owner, np.full(new - cap, -1, dtype=np.int64)])
        self._next = cap + 1
        return cap

    def left_sums(self, state: np.ndarray, w: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """As :meth:`KernelRows.left_sums`; the last answer is kept for the same sets (a
        retry with the ridge starts from the same sets at pi = 0)."""
        if self._sums is not None:
            last_state, last_w, last = self._sums
            if np.array_equal(last_state, state) and np.array_equal(last_w, w):
                return last.copy()
        inL = state == 2
        out = np.zeros((2, self.n))
        for row, mask in enumerate((inL & pos, inL & ~pos)):
            js = np.flatnonzero(mask)
            if js.size:
                out[row] = kernel_product(self.X, self.X[js], self.kernel, w[js], SUMS_BLOCK_BYTES)
        self._sums = (state.copy(), w.copy(), out.copy())
        return out

    def gram(self) -> Gram:
        return FeatureGram(self.X, self.kernel)

    def libsvm(
        self, y: np.ndarray, upper: np.ndarray, C: float, tol: float
    ) -> tuple[np.ndarray, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return fit_features(self.X, y, upper, C, libsvm_kernel(self.kernel), FLY_CACHE_MB, tol)


class FeatureGram(OnTheFlyGram):
    """Kernel values of the features made a block of rows at a time, for the KKT check's
    products (blocks of at most :data:`SUMS_BLOCK_BYTES`)."""

    def products(self, coef: np.ndarray) -> np.ndarray:
        coef = np.atleast_2d(coef)
        used = np.flatnonzero(np.any(coef != 0, axis=0))
        return kernel_product(
            self.X, self.X[used], self.kernel, coef[:, used].T, SUMS_BLOCK_BYTES
        ).T
