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

``A`` is kept as its upper Cholesky factor ``R`` (``A = R'R``), O(m^2) per point added
(a new column: one triangular solve, whose last pivot is the Schur complement above) or
removed (its column deleted, then Givens rotations of consecutive rows), m the elbow
size; compiled, :func:`wsvmgui.ladder._path_kernel.elbow_add` and
:func:`~wsvmgui.ladder._path_kernel.elbow_remove`.  Solves with the factor are backward
stable: their residuals stay near rounding even when ``A`` is ill-conditioned, unlike
products with an explicitly updated inverse (which on the large, nearly singular elbows
of smooth kernels needed a refactorisation at almost every step).  The factor is
recomputed from scratch here (:func:`elbow_cholesky`, O(m^3)) when the caller's residual
checks ask for it or after many updates; the solve itself is
:func:`wsvmgui.ladder._path_kernel.evaluate`.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cholesky

#: Pivots below this fraction of the new diagonal entry mark a dependent point.
DEFAULT_RANK_TOL = 1e-10


def elbow_cholesky(K_EE: np.ndarray, kappa: float, ridge: float) -> np.ndarray | None:
    """Upper Cholesky factor of ``A = K_EE + ridge I + kappa 11'``, from scratch.

    Parameters
    ----------
    K_EE : ndarray, shape (m, m)
        Kernel among the elbow points, in the order of the factorisation (not changed).
    kappa, ridge : float

    Returns
    -------
    ndarray, shape (m, m), or None
        ``R`` with ``R'R = A`` (zeros below the diagonal); None when ``A`` is not
        numerically positive definite.
    """
    m = K_EE.shape[0]
    A = K_EE + kappa
    A[np.diag_indices(m)] += ridge
    try:
        R = cholesky(A, lower=False, check_finite=False)
    except LinAlgError:
        return None
    return R if np.all(np.isfinite(R)) else None
