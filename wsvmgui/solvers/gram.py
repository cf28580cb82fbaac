"""The kernel matrix of a fit's training rows, without copies: held once or made on the fly.

A weighted fit asks three things of the kernel matrix ``K`` of its training rows: libsvm's
solution, the products ``coef @ K`` of its KKT check, and kernel rows between other
points of the data and the training rows (to score tuning rows).  Two answers:

* :class:`DenseGram`: one dense matrix of *all* rows of the data, shared read-only by
  every fold, sub-problem, weight and thread; a fit's training rows are indices into it,
  never a copy (libsvm gets the whole matrix with sample weight 0 on the other rows, see
  :func:`~wsvmgui.solvers._libsvm_direct.fit_direct_rows`).
* :class:`HeldGram`: the same on a dense matrix of only *some* rows of the data (a
  fold's training rows, the final fit's rows), for engines that need the dense matrix of
  their own rows (the exact path): one such matrix per fold is smaller than the matrix
  of all rows plus a copy per fit.  Kernel rows to other points are made from the
  features, a block at a time.
* :class:`OnTheFlyGram`: no n x n matrix at all.  libsvm computes kernel values from the
  raw features itself (keeping ``cache_mb`` of kernel columns), products and kernel rows
  are made a block of rows at a time.  For data whose kernel matrix does not fit in
  memory; slower, since kernel values are recomputed.

:func:`shared_kernel` builds the dense matrix of a data set for one kernel and keeps only
the most recent one, so the threads of a process (or the tasks on one cluster worker)
share a single matrix.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np

from . import _libsvm_direct as libsvm
from .kernels import Kernel, block_rows, kernel_product


class Gram:
    """The kernel matrix of ``n`` training rows (interface; see the two implementations)."""

    n: int

    def fit_libsvm(self, y: np.ndarray, upper: np.ndarray, C: float) -> tuple[np.ndarray, float]:
        """libsvm's dual variables (n,) and intercept for labels ``y`` and bounds ``upper``."""
        raise NotImplementedError

    def dense(self) -> np.ndarray:
        """The (n, n) matrix itself (a copy unless it is the whole shared matrix)."""
        raise NotImplementedError

    def products(self, coef: np.ndarray) -> np.ndarray:
        """``coef @ K`` for coefficients ``coef`` (m, n); shape (m, n)."""
        raise NotImplementedError

    def cross(self, rows: np.ndarray) -> np.ndarray:
        """Kernel between rows ``rows`` of the data and the training rows; (len(rows), n)."""
        raise NotImplementedError

    def cross_blocks(self, rows: np.ndarray) -> Iterator[np.ndarray]:
        """:meth:`cross` a block of ``rows`` at a time (a block is at most ~32 MB)."""
        step = block_rows(self.n)
        for lo in range(0, len(rows), step):
            yield self.cross(rows[lo : lo + step])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.asarray(self.dense(), dtype=dtype)


class DenseGram(Gram):
    """Rows ``rows`` of a dense kernel matrix ``K`` of all rows of the data, used in place.

    Parameters
    ----------
    K : ndarray, shape (N, N)
        Symmetric; made C-contiguous float64 (no copy when it is already).
    rows : ndarray of int, shape (n,), or None
        Distinct rows of the fit, in any order (the fit's arrays follow this order);
        None: all N rows in order.
    """

    def __init__(self, K: np.ndarray, rows: np.ndarray | None = None) -> None:
        self.K = np.ascontiguousarray(K, dtype=np.float64)
        N = self.K.shape[0]
        if rows is not None:
            rows = np.asarray(rows, dtype=np.intp)
            if rows.size == N and np.array_equal(rows, np.arange(N)):
                rows = None
        self.rows = rows
        self.n = N if rows is None else int(rows.size)
        if rows is None:
            self._order = None
        else:
            order = np.argsort(rows, kind="stable")
            self._order = None if np.all(order[1:] > order[:-1]) else order

    def fit_libsvm(self, y: np.ndarray, upper: np.ndarray, C: float) -> tuple[np.ndarray, float]:
        if not libsvm.direct_binding_live():
            return libsvm.fit_public(self.dense(), y, upper, C)
        if self._order is None:
            return libsvm.fit_direct_rows(self.K, self.rows, y, upper, C)
        # libsvm sees the rows in increasing order; the answer is mapped back.
        o = self._order
        assert self.rows is not None
        a, b = libsvm.fit_direct_rows(self.K, self.rows[o], y[o], upper[o], C)
        alpha = np.empty_like(a)
        alpha[o] = a
        return alpha, b

    def dense(self) -> np.ndarray:
        return self.K if self.rows is None else self.K[np.ix_(self.rows, self.rows)]

    def products(self, coef: np.ndarray) -> np.ndarray:
        coef = np.atleast_2d(coef)
        if self.rows is None:
            return coef @ self.K
        full = np.zeros((self.K.shape[0], coef.shape[0]))
        full[self.rows] = coef.T
        # K is symmetric: column r of coef @ K is row r of K times coef; a block of the
        # fit's rows of K at a time (n x N x m multiplications, no n x n copy).
        out = np.empty(coef.shape)
        step = block_rows(self.K.shape[0])
        for lo in range(0, self.n, step):
            out[:, lo : lo + step] = (self.K[self.rows[lo : lo + step]] @ full).T
        return out

    def cross(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.intp)
        return self.K[rows] if self.rows is None else self.K[np.ix_(rows, self.rows)]


class HeldGram(DenseGram):
    """Rows of the dense kernel matrix ``K`` of the data rows ``held``, used in place.

    Parameters
    ----------
    K : ndarray, shape (h, h)
        Kernel matrix of the data rows ``held``.
    X : ndarray, shape (N, p)
        Features of all rows of the data.
    kernel : Kernel
        The kernel of ``K``.
    held : ndarray of int, shape (h,)
        Data rows of ``K``.
    rows : ndarray of int, shape (n,), or None
        Positions in ``held`` of the fit's rows (None: all of them in order).
    """

    def __init__(
        self,
        K: np.ndarray,
        X: np.ndarray,
        kernel: Kernel,
        held: np.ndarray,
        rows: np.ndarray | None = None,
    ) -> None:
        super().__init__(K, rows)
        held = np.asarray(held, dtype=np.intp)
        self.X_all = X
        self.X_fit = X[held if self.rows is None else held[self.rows]]
        self.kernel = kernel

    def cross(self, rows: np.ndarray) -> np.ndarray:
        return self.kernel(self.X_all[np.asarray(rows, dtype=np.intp)], self.X_fit)


def positions(held: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """Positions in ``held`` of the data rows ``rows`` (each in ``held``); None when
    ``rows`` is all of ``held`` in order."""
    held, rows = np.asarray(held), np.asarray(rows)
    if rows.size == held.size and np.array_equal(rows, held):
        return None
    order = np.argsort(held, kind="stable")
    pos = order[np.searchsorted(held, rows, sorter=order)]
    if not np.array_equal(held[pos], rows):
        raise ValueError("rows are not all among the held rows")
    return pos


def libsvm_kernel(kernel: Kernel) -> dict[str, Any]:
    """``SVC`` arguments for the same kernel (RBF ``gamma = 1 / sigma^2``)."""
    if kernel.name == "rbf":
        return {"kernel": "rbf", "gamma": 1.0 / kernel.sigma**2}
    if kernel.name == "poly":
        return {
            "kernel": "poly",
            "degree": int(kernel.degree),
            "gamma": float(kernel.gamma),
            "coef0": float(kernel.coef0),
        }
    return {"kernel": "linear"}


#: Default libsvm cache (MB) when kernel values are made on the fly; there it saves
#: recomputing kernel columns, unlike for a precomputed matrix.
FLY_CACHE_MB = 200.0


class OnTheFlyGram(Gram):
    """Rows ``rows`` of the data, their kernel values computed when needed, never stored.

    Parameters
    ----------
    X : ndarray, shape (N, p)
        Features of all rows of the data.
    kernel : Kernel
    rows : ndarray of int, shape (n,), or None
        Rows of the fit (None: all).
    cache_mb : float
        libsvm's kernel cache per fit.
    """

    def __init__(
        self,
        X: np.ndarray,
        kernel: Kernel,
        rows: np.ndarray | None = None,
        cache_mb: float = FLY_CACHE_MB,
    ) -> None:
        self.X_all = np.asarray(X, dtype=float)
        self.X = self.X_all if rows is None else self.X_all[np.asarray(rows, dtype=np.intp)]
        self.kernel = kernel
        self.cache_mb = float(cache_mb)
        self.n = int(self.X.shape[0])

    def fit_libsvm(self, y: np.ndarray, upper: np.ndarray, C: float) -> tuple[np.ndarray, float]:
        return libsvm.fit_features(self.X, y, upper, C, libsvm_kernel(self.kernel), self.cache_mb)

    def dense(self) -> np.ndarray:
        return self.kernel(self.X)

    def products(self, coef: np.ndarray) -> np.ndarray:
        coef = np.atleast_2d(coef)
        used = np.flatnonzero(np.any(coef != 0, axis=0))
        return kernel_product(self.X, self.X[used], self.kernel, coef[:, used].T).T

    def cross(self, rows: np.ndarray) -> np.ndarray:
        return self.kernel(self.X_all[np.asarray(rows, dtype=np.intp)], self.X)


def as_gram(K: np.ndarray | Gram) -> Gram:
    """A :class:`Gram` of ``K``: itself, or a dense matrix of all its rows."""
    return K if isinstance(K, Gram) else DenseGram(K)


# --------------------------------------------------------------------- shared matrices
_shared: dict[tuple[Hashable, Hashable, Kernel], np.ndarray] = {}
_shared_lock = threading.Lock()
#: Dense kernel matrices this process has built (tests and benchmarks read it).
build_count = {"built": 0}


def shared_kernel(
    token: Hashable, X: np.ndarray, kernel: Kernel, part: Hashable = None
) -> np.ndarray:
    """The dense kernel matrix of the rows ``X`` (h, p) of data ``token``, built once.

    ``part`` names which rows ``X`` holds (None: all rows of the data; e.g. a fold's
    number for its training rows): the same (token, part) must always come with the
    same rows.  Only the most recent matrix is kept: a request for another (token, part,
    kernel) drops it before building the new one, so a process holds one matrix plus
    those still in use by running fits.  Threads asking for the same matrix wait for one
    build.

    Returns
    -------
    ndarray, shape (h, h)
    """
    from .memory import release_freed_memory  # memory imports this module's users

    key = (token, part, kernel)
    with _shared_lock:
        K = _shared.get(key)
        if K is None:
            _shared.clear()
            release_freed_memory()  # the last run's freed blocks, before this matrix
            K = kernel(X)
            _shared[key] = K
            build_count["built"] += 1
        return K


def drop_kernels(token: Hashable | None = None) -> None:
    """Forget the shared matrices of data ``token`` (None: all)."""
    with _shared_lock:
        for key in [k for k in _shared if token is None or k[0] == token]:
            del _shared[key]
