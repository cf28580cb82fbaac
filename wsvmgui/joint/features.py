"""Finite feature maps for the joint fit: the inputs themselves or kernel eigenfeatures.

For a kernel matrix ``K = U diag(lam) U'`` of the training inputs, the features
``Z = U diag(sqrt(lam))`` reproduce it (``Z Z' = K``) and a fit ``f = Z W + b`` is the kernel
expansion ``f(x) = k(x)' V + b`` with ``V = U diag(lam^-1/2) W`` and penalty
``sum_k v_k' K v_k = ||W||^2`` (METHODS section 4).  Eigenvalues below ``rel_tol`` times
the largest are dropped: directions that cost so much norm contribute nothing measurable.

The features are centred on the training mean.  That is an exact reparametrisation
(``f = (z - m)' W + b'`` with ``b' = b + m' W`` spans the same functions at the same
penalty ``||W||^2``), but it keeps the QP well conditioned: with un-centred inputs (say
values near 100) the feature columns are nearly collinear with the intercept, and the
solver's answers missed the KKT tolerance on most seeds (tests/test_joint_estimator.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..solvers.kernels import Kernel

#: Eigenvalues of the kernel matrix below this share of the largest are dropped.
EIGEN_REL_TOL = 1e-6


@dataclass(frozen=True)
class FeatureMap:
    """Maps inputs to the finite features the joint QP uses.

    Attributes
    ----------
    kernel : Kernel or None
        None for the plain linear map ``z = x``.
    X_train : ndarray, shape (n, p) or None
    proj : ndarray, shape (n, r) or None
        ``U diag(lam^-1/2)``; features of new points are ``k(x)' proj - center``.
    Z_train : ndarray, shape (n, r)
        Centred features of the training points.
    center : ndarray, shape (r,)
        Training mean of the uncentred features.
    """

    kernel: Kernel | None
    X_train: np.ndarray | None
    proj: np.ndarray | None
    Z_train: np.ndarray
    center: np.ndarray

    @classmethod
    def fit(cls, X: np.ndarray, kernel: Kernel | None, rel_tol: float = EIGEN_REL_TOL):
        """Build the map from training inputs X (n, p); ``kernel=None`` means ``z = x``."""
        X = np.asarray(X, dtype=float)
        if kernel is None:
            center = X.mean(axis=0)
            return cls(None, None, None, X - center, center)
        Kmat = kernel(X)
        lam, U = np.linalg.eigh(0.5 * (Kmat + Kmat.T))
        keep = lam > rel_tol * max(float(lam[-1]), 1e-300)
        lam, U = lam[keep], U[:, keep]
        Z = U * np.sqrt(lam)
        center = Z.mean(axis=0)
        return cls(kernel, X, U / np.sqrt(lam), Z - center, center)

    @property
    def n_features(self) -> int:
        return self.Z_train.shape[1]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Features of new inputs X (m, p); shape (m, r)."""
        X = np.asarray(X, dtype=float)
        if self.kernel is None:
            return X - self.center
        return self.kernel(X, self.X_train) @ self.proj - self.center
