"""One weighted binary SVM fit on a precomputed kernel, with its answer checked.

The problem (METHODS section 1), labels ``y`` in {-1, +1} and weight ``pi``::

    min_f (1/n) sum_i S(y_i) (1 - y_i f(x_i))_+ + lambda J(f),
    S(+1) = 1 - pi, S(-1) = pi,

has the dual ``max sum a - 1/2 a'Qa`` with ``Q = (y y') * K``, ``0 <= a_i <= C S(y_i)``,
``sum a_i y_i = 0`` and ``C = 1 / (2 n lambda)``.  The fit is ``f(x) = sum_j c_j K(x_j, x) + b``
with ``c = a * y``.

Two solvers give the same answer: ``"libsvm"`` (libsvm on the precomputed kernel with
per-sample weights, see :mod:`wsvmgui.solvers._libsvm_direct`; fast) and ``"qp"`` (the
dense dual through :func:`wsvmgui.solvers.qp.solve_qp`; the reference).  The kernel is a
matrix or a :class:`~wsvmgui.solvers.gram.Gram` (rows of a shared matrix without a copy,
or kernel values made on the fly).  Every answer is
checked by :func:`kkt_residual`, which does not trust the solver's own status, and a
failed check raises :class:`SolverError` naming pi and lambda.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse

from ..errors import InputError, SolverError
from .gram import Gram, as_gram
from .kkt import hinge_kkt_residual
from .qp import solve_qp

SOLVERS = ("libsvm", "qp")
#: Largest KKT violation accepted, in units of the functional margin y f(x).
DEFAULT_KKT_TOL = 1e-2
#: Fits whose KKT residuals :func:`check_fits` computes in one matrix product.
CHECK_CHUNK = 32


@dataclass(frozen=True)
class WeightedFit:
    """A fitted weighted SVM on a fixed training set.

    Attributes
    ----------
    pi : float
        Class weight (class -1 gets ``pi``, class +1 gets ``1 - pi``).
    lam : float
        Penalty lambda.
    C : float
        ``1 / (2 n lambda)``.
    alpha : ndarray, shape (n,)
        Dual variables.
    coef : ndarray, shape (n,)
        ``alpha * y``; the kernel expansion coefficients.
    intercept : float
    kkt_residual : float
        Largest KKT violation of the returned solution (margin units).
    """

    pi: float
    lam: float
    C: float
    alpha: np.ndarray
    coef: np.ndarray
    intercept: float
    kkt_residual: float

    def decision(self, K_cross: np.ndarray) -> np.ndarray:
        """Decision values ``f(x)`` from the kernel between new points and the training set.

        Parameters
        ----------
        K_cross : ndarray, shape (m, n)

        Returns
        -------
        ndarray, shape (m,)
        """
        return K_cross @ self.coef + self.intercept


def penalty_to_C(lam: float, n: float) -> float:
    """``C = 1 / (2 n lambda)`` (METHODS section 1; ``n`` rows, or their total weight)."""
    if not (np.isfinite(lam) and lam > 0):
        raise InputError(f"lambda must be a positive number, got {lam!r}")
    return 1.0 / (2.0 * n * lam)


def C_to_penalty(C: float, n: float) -> float:
    """Inverse of :func:`penalty_to_C`."""
    return 1.0 / (2.0 * n * C)


def sample_bounds(
    y: np.ndarray, pi: float, C: float, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """Per-sample upper bounds ``C S(y_i)``, times ``sample_weight`` (n,) if given; (n,)."""
    upper = C * np.where(y > 0, 1.0 - pi, pi)
    return upper if sample_weight is None else upper * sample_weight


def kkt_residuals(
    K: np.ndarray | Gram,
    y: np.ndarray,
    alpha: np.ndarray,
    intercept: np.ndarray,
    upper: np.ndarray,
) -> np.ndarray:
    """Largest violation of the dual's optimality conditions of several fits, margin units.

    Feasibility and complementarity of the margins ``y_i f(x_i)`` with the relative duals
    ``r_i = a_i / U_i`` (:func:`~wsvmgui.solvers.kkt.hinge_kkt_residual`: ``y_i f >= 1``
    unless ``a_i = U_i``, ``y_i f <= 1`` unless ``a_i = 0``, bounds), and the equality
    ``sum a_i y_i = 0`` (relative to ``sum a_i``).  The residual is the largest of these;
    it is zero exactly at an optimum.  All fits share one matrix product.

    Parameters
    ----------
    K : ndarray, shape (n, n), or Gram
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    alpha : ndarray, shape (m, n)
        Dual variables of m fits.
    intercept : ndarray, shape (m,)
    upper : ndarray, shape (m, n)
        Per-sample upper bounds ``C S(y_i)`` of each fit.

    Returns
    -------
    ndarray, shape (m,)
    """
    alpha = np.atleast_2d(alpha)
    upper = np.atleast_2d(upper)
    r = alpha / np.maximum(upper, 1e-300)
    equality = np.abs(alpha @ y) / np.maximum(alpha.sum(axis=1), 1e-300)
    products = as_gram(K).products(alpha * y[None, :])
    margin = y[None, :] * (products + np.atleast_1d(intercept)[:, None])
    return np.maximum(hinge_kkt_residual(margin[:, :, None], r[:, :, None]), equality)


def kkt_residual(
    K: np.ndarray | Gram, y: np.ndarray, alpha: np.ndarray, intercept: float, upper: np.ndarray
) -> float:
    """:func:`kkt_residuals` of one fit (``alpha`` and ``upper`` of shape (n,))."""
    return float(kkt_residuals(K, y, alpha[None, :], np.array([intercept]), upper[None, :])[0])


def optimal_intercept(Kc: np.ndarray, y: np.ndarray, upper: np.ndarray) -> float:
    """Intercept minimising the weighted hinge loss for fixed kernel coefficients.

    Minimises ``sum_i U_i (1 - y_i (Kc_i + b))_+`` over b: a convex piecewise-linear
    function whose breakpoints are ``g_i = y_i - Kc_i``.  When a whole interval is optimal
    (no free support vector), its middle is returned, as METHODS section 1 prescribes.

    Parameters
    ----------
    Kc : ndarray, shape (n,)
        ``K @ c``, the fit without its intercept at the training points.
    y : ndarray, shape (n,)
    upper : ndarray, shape (n,)

    Returns
    -------
    float
    """
    g = y - Kc
    order = np.argsort(g, kind="stable")
    gs, ys, us = g[order], y[order], upper[order]
    # Slope just right of breakpoint j: negatives with g <= gs[j] add +U, positives with
    # g > gs[j] add -U.
    neg_left = np.cumsum(np.where(ys < 0, us, 0.0))
    pos_total = float(us[ys > 0].sum())
    pos_left = np.cumsum(np.where(ys > 0, us, 0.0))
    slope_right = neg_left - (pos_total - pos_left)
    tol = 1e-12 * max(float(us.sum()), 1e-300)
    j = int(np.searchsorted(slope_right, -tol, side="right"))  # first slope >= ~0
    if j >= gs.size:
        return float(gs[-1])
    if abs(slope_right[j]) <= tol and j + 1 < gs.size:
        return 0.5 * float(gs[j] + gs[j + 1])
    return float(gs[j])


def _check_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise InputError("weighted SVM labels must be -1 and +1")
    if not ((y > 0).any() and (y < 0).any()):
        raise InputError("the weighted SVM needs points of both classes")
    return y


def _fit_qp(K: np.ndarray, y: np.ndarray, upper: np.ndarray, qp_solver: str):
    n = y.size
    Q = (y[:, None] * y[None, :]) * K
    # quadprog needs a strictly positive definite matrix; the ridge is far below the
    # check's tolerance.
    ridge = 1e-10 * max(float(np.max(np.diag(Q))), 1.0)
    Q = Q + ridge * np.eye(n)
    A = y[None, :]
    if qp_solver != "quadprog":  # the other backends take sparse matrices natively
        Q, A = sparse.csc_matrix(Q), sparse.csc_matrix(A)
    sol = solve_qp(Q, -np.ones(n), A=A, b=np.zeros(1), lb=np.zeros(n), ub=upper, backend=qp_solver)
    alpha = np.clip(sol.x, 0.0, upper)
    return alpha, optimal_intercept(K @ (alpha * y), y, upper)


def solve_weighted_svm(
    K: np.ndarray | Gram,
    y: np.ndarray,
    pi: float,
    lam: float,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    sample_weight: np.ndarray | None = None,
) -> WeightedFit:
    """Solve one weighted SVM without checking the answer (see :func:`check_fits`).

    Parameters and errors as :func:`fit_weighted_svm`; the returned fit's
    ``kkt_residual`` is NaN until checked.
    """
    y = _check_labels(y)
    if not 0.0 < pi < 1.0:
        raise InputError(f"weight pi must lie strictly between 0 and 1, got {pi!r}")
    C = penalty_to_C(lam, y.size)
    upper = sample_bounds(y, pi, C, sample_weight)
    gram = as_gram(K)
    try:
        if solver == "libsvm":
            alpha, b = gram.fit_libsvm(y, upper, C)
        elif solver == "qp":
            alpha, b = _fit_qp(gram.dense(), y, upper, qp_solver)
        else:
            raise InputError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    except SolverError as exc:
        raise SolverError(f"weighted SVM at pi={pi:.4g}, lambda={lam:.4g}: {exc}") from exc
    return WeightedFit(
        pi=float(pi),
        lam=float(lam),
        C=C,
        alpha=alpha,
        coef=alpha * y,
        intercept=b,
        kkt_residual=float("nan"),
    )


def check_fits(
    K: np.ndarray | Gram,
    y: np.ndarray,
    fits: list[WeightedFit],
    solver_name: str = "libsvm",
    kkt_tol: float = DEFAULT_KKT_TOL,
    sample_weight: np.ndarray | None = None,
) -> list[WeightedFit]:
    """Check fits on the same data by their KKT residuals (one matrix product per 32 fits).

    Parameters
    ----------
    K : ndarray, shape (n, n), or Gram
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    fits : list of WeightedFit
    solver_name : str
        Named in the error message.
    kkt_tol : float
        Largest accepted residual (margin units).
    sample_weight : ndarray, shape (n,), optional
        The fits' sample weights (they multiply the bounds).

    Returns
    -------
    list of WeightedFit
        The fits with ``kkt_residual`` filled in.

    Raises
    ------
    SolverError
        For the first fit whose residual exceeds ``kkt_tol``, naming its pi and lambda.
    """
    y = np.asarray(y, dtype=float)
    gram = as_gram(K)
    resid = np.empty(len(fits))
    for lo in range(0, len(fits), CHECK_CHUNK):  # bounded arrays: CHECK_CHUNK rows of n
        part = fits[lo : lo + CHECK_CHUNK]
        resid[lo : lo + len(part)] = kkt_residuals(
            gram,
            y,
            np.vstack([f.alpha for f in part]),
            np.array([f.intercept for f in part]),
            np.vstack([sample_bounds(y, f.pi, f.C, sample_weight) for f in part]),
        )
    for fit, r in zip(fits, resid, strict=True):
        if not np.isfinite(r) or r > kkt_tol:
            raise SolverError(
                f"weighted SVM at pi={fit.pi:.4g}, lambda={fit.lam:.4g}: solver "
                f"{solver_name!r} returned an answer with KKT residual {r:.3g} > tolerance "
                f"{kkt_tol:.3g}"
            )
    return [replace(f, kkt_residual=float(r)) for f, r in zip(fits, resid, strict=True)]


def fit_weighted_svm(
    K: np.ndarray | Gram,
    y: np.ndarray,
    pi: float,
    lam: float,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    kkt_tol: float = DEFAULT_KKT_TOL,
    sample_weight: np.ndarray | None = None,
) -> WeightedFit:
    """Fit one weighted SVM on a precomputed kernel and check the answer.

    Parameters
    ----------
    K : ndarray, shape (n, n), or Gram
        Kernel matrix of the training inputs.
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    pi : float
        Weight in (0, 1): class -1 gets ``pi``, class +1 gets ``1 - pi``.
    lam : float
        Penalty lambda > 0; ``C = 1 / (2 n lambda)``.
    solver : {"libsvm", "qp"}
    qp_solver : str
        qpsolvers backend for ``solver="qp"`` (e.g. "quadprog", "clarabel").
    kkt_tol : float
        Largest accepted KKT residual (margin units).
    sample_weight : ndarray, shape (n,), optional
        Multiplies every point's bound ``C S(y_i)`` (libsvm's per-sample weights); the
        caller scales it (e.g. to mean one, so that lambda keeps its meaning).

    Returns
    -------
    WeightedFit

    Raises
    ------
    SolverError
        The solver failed or its answer violates the KKT conditions by more than
        ``kkt_tol``; the message names pi and lambda.
    """
    fit = solve_weighted_svm(K, y, pi, lam, solver, qp_solver, sample_weight)
    name = solver if solver == "libsvm" else qp_solver
    return check_fits(K, y, [fit], name, kkt_tol, sample_weight)[0]
