"""The bordered elbow system of the weight path, kept factorised as points come and go.

Between two breakpoints of the path (:mod:`wsvmgui.ladder.path`) the coefficients
``c_E`` of the elbow points and the intercept solve a saddle-point system::

    K_EE v + beta 1 = r,        1'v = q,                                   (*)

with ``K_EE`` the kernel among the elbow points.  The bordered matrix
``[[K_EE, 1], [1', 0]]`` is indefinite, and ``K_EE`` alone may be singular (a linear
kernel with fewer features than elbow points) while (*) is not.  Both problems go away
with the equivalent system on ``A = K_EE + kappa 11'`` (any ``kappa > 0``; ``K`` here may
carry a ridge, see ``ridge``)::

    A v = r + gamma 1,  gamma = kappa q - beta,   so  v = A^-1 r + gamma A^-1 1,
    gamma = (q - 1'A^-1 r) / (1'A^-1 1).

``A`` is the Gram matrix of the augmented feature vectors ``(phi(x_j), sqrt(kappa))``; it
is positive definite exactly when (*) is non-singular, i.e. when no elbow point's
augmented feature vector is a linear combination of the others'.  A point whose pivot
(the Schur complement of ``A`` that adding it creates) is below ``rank_tol`` times its
diagonal is *dependent*: it is refused, and the caller keeps it off the elbow (its
margin cannot move while the elbow is unchanged, so that is consistent).

``A^-1`` is kept explicitly and updated by the bordering formulas, O(m^2) per point
added or removed (m = elbow size), and refactorised from scratch (Cholesky, O(m^3)) when
the caller's residual checks ask for it.  The rows ``K[E, :]`` are kept in one contiguous
buffer so that the decision values and their slopes at all n points cost one
matrix product of shape (n, m) x (m, 2).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

#: Pivots below this fraction of the new diagonal entry mark a dependent point.
DEFAULT_RANK_TOL = 1e-10


class ElbowSystem:
    """Explicit inverse of ``A = K_EE + kappa 11'`` under insertions and deletions.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        Kernel matrix (C-contiguous float64; not copied).
    kappa : float
        Positive weight of the bordering row; the mean kernel diagonal keeps ``A`` well
        scaled.
    ridge : float
        ``eps`` of the kernel ``K + eps I`` that the system actually uses (rows and
        diagonal); ``K`` itself is not copied.
    aux : ndarray, shape (n, k), optional
        Per-point values carried along in factorisation order (``elbow_aux[:m]`` is
        ``aux[idx[:m]]``), so callers need no gathers.
    rank_tol : float
        Relative pivot below which a point is refused as dependent.
    capacity : int
        Initial room for elbow points (grows by doubling).

    Attributes
    ----------
    m : int
        Current elbow size.
    idx : ndarray of intp, shape (m,)
        Elbow points, in the order of the factorisation (``idx[:m]`` is valid).
    rows : ndarray, shape (capacity, n)
        ``rows[:m] == (K + eps I)[idx[:m], :]``.
    n_updates : int
        Bordering updates since the last refactorisation.
    """

    def __init__(
        self,
        K: np.ndarray,
        kappa: float,
        rank_tol: float = DEFAULT_RANK_TOL,
        capacity: int = 64,
        ridge: float = 0.0,
        aux: np.ndarray | None = None,
    ) -> None:
        self.K = K
        self.n = K.shape[0]
        self.kappa = float(kappa)
        self.ridge = float(ridge)
        self.rank_tol = float(rank_tol)
        cap = max(int(capacity), 4)
        self.m = 0
        self.idx = np.empty(cap, dtype=np.intp)
        self.rows = np.empty((cap, self.n))
        self.inv = np.empty((cap, cap))
        self.aux = np.zeros((self.n, 0)) if aux is None else aux
        self.elbow_aux = np.empty((cap, self.aux.shape[1]))
        self.where = np.full(self.n, -1, dtype=np.intp)  # position of each member
        self.n_updates = 0
        self._u: np.ndarray | None = None  # cached A^-1 1

    # -- views -------------------------------------------------------------------------
    @property
    def members(self) -> np.ndarray:
        """Elbow points in factorisation order; shape (m,) (a view)."""
        return self.idx[: self.m]

    def _grow(self) -> None:
        cap = 2 * self.idx.size
        m = self.m
        idx = np.empty(cap, dtype=np.intp)
        idx[:m] = self.idx[:m]
        rows = np.empty((cap, self.n))
        rows[:m] = self.rows[:m]
        inv = np.empty((cap, cap))
        inv[:m, :m] = self.inv[:m, :m]
        elbow_aux = np.empty((cap, self.aux.shape[1]))
        elbow_aux[:m] = self.elbow_aux[:m]
        self.idx, self.rows, self.inv, self.elbow_aux = idx, rows, inv, elbow_aux

    # -- updates -----------------------------------------------------------------------
    def pivot(self, j: int) -> float:
        """Relative pivot ``d / A_jj`` that adding point ``j`` would create (1 when empty)."""
        m = self.m
        alpha = self.K[j, j] + self.ridge + self.kappa
        if m == 0:
            return 1.0
        a = self.K[self.idx[:m], j] + self.kappa
        u = self.inv[:m, :m] @ a
        return float((alpha - a @ u) / alpha)

    def add(self, j: int) -> bool:
        """Append point ``j``; returns False (and changes nothing) if it is dependent.

        Parameters
        ----------
        j : int
            Index of a training point not on the elbow.

        Returns
        -------
        bool
        """
        m = self.m
        alpha = self.K[j, j] + self.ridge + self.kappa
        if m == 0:
            if not alpha > 0:
                return False
            d, u = alpha, np.empty(0)
        else:
            a = self.K[self.idx[:m], j] + self.kappa
            u = self.inv[:m, :m] @ a
            d = alpha - a @ u
            if not d > self.rank_tol * alpha:
                return False
        if m + 1 > self.idx.size:
            self._grow()
        inv = self.inv
        if m:
            inv[:m, :m] += np.outer(u, u / d)
            inv[:m, m] = -u / d
            inv[m, :m] = inv[:m, m]
        inv[m, m] = 1.0 / d
        self.idx[m] = j
        self.where[j] = m
        self.elbow_aux[m] = self.aux[j]
        self.rows[m] = self.K[j]
        self.rows[m, j] += self.ridge
        self.m = m + 1
        self.n_updates += 1
        self._u = None
        return True

    def remove(self, j: int) -> None:
        """Remove point ``j`` from the elbow (the last member takes its slot)."""
        m = self.m
        p = int(self.where[j])
        last = m - 1
        inv = self.inv
        self.where[j] = -1
        if p != last:
            self.idx[p] = self.idx[last]
            self.where[self.idx[p]] = p
            self.elbow_aux[p] = self.elbow_aux[last]
            self.rows[p] = self.rows[last]
            inv[[p, last], :m] = inv[[last, p], :m]
            inv[:m, [p, last]] = inv[:m, [last, p]]
        if last:
            b12 = inv[:last, last].copy()
            inv[:last, :last] -= np.outer(b12, b12 / inv[last, last])
        self.m = last
        self.n_updates += 1
        self._u = None

    def refactor(self) -> bool:
        """Recompute ``A^-1`` from scratch (Cholesky); False if ``A`` is not positive definite."""
        m = self.m
        if m == 0:
            self.n_updates = 0
            return True
        idx = self.idx[:m]
        A = self.K[np.ix_(idx, idx)] + self.kappa
        A[np.diag_indices(m)] += self.ridge
        try:
            factor = cho_factor(A, lower=False, check_finite=False)
        except LinAlgError:
            return False
        self.inv[:m, :m] = cho_solve(factor, np.eye(m), check_finite=False)
        self.n_updates = 0
        self._u = None
        return True

    # -- solves ------------------------------------------------------------------------
    def solve(self, R: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Solve (*) for several right-hand sides.

        Parameters
        ----------
        R : ndarray, shape (m, k)
            Right-hand sides ``r`` (rows in factorisation order).
        q : ndarray, shape (k,)

        Returns
        -------
        V : ndarray, shape (m, k)
        beta : ndarray, shape (k,)
        """
        m = self.m
        inv = self.inv[:m, :m]
        W = inv @ R
        if self._u is None:
            self._u = inv.sum(axis=1)  # A^-1 1 (A^-1 is symmetric)
            self._us = float(self._u.sum())
        gamma = (q - W.sum(axis=0)) / self._us
        W += np.outer(self._u, gamma)
        return W, self.kappa * q - gamma
