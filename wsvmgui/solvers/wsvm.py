"""One weighted binary SVM fit on a precomputed kernel, with its answer checked.

The problem (METHODS section 1), labels ``y`` in {-1, +1} and weight ``pi``::

    min_f (1/n) sum_i S(y_i) (1 - y_i f(x_i))_+ + lambda J(f),
    S(+1) = 1 - pi, S(-1) = pi,

has the dual ``max sum a - 1/2 a'Qa`` with ``Q = (y y') * K``, ``0 <= a_i <= C S(y_i)``,
``sum a_i y_i = 0`` and ``C = 1 / (2 n lambda)``.  The fit is ``f(x) = sum_j c_j K(x_j, x) + b``
with ``c = a * y``.

Two solvers give the same answer: ``"libsvm"`` (scikit-learn's SVC on a precomputed
kernel with per-sample weights; fast) and ``"qp"`` (the dense dual through qpsolvers;
the reference).  Every answer is checked by :func:`kkt_residual`, which does not trust the
solver's own status, and a failed check raises :class:`SolverError` naming pi and lambda.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from ..errors import InputError, SolverError

SOLVERS = ("libsvm", "qp")
#: Largest KKT violation accepted, in units of the functional margin y f(x).
DEFAULT_KKT_TOL = 1e-2
#: libsvm's own stopping tolerance (its maximal-violating-pair gap).
LIBSVM_TOL = 1e-3


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


def penalty_to_C(lam: float, n: int) -> float:
    """``C = 1 / (2 n lambda)`` (METHODS section 1)."""
    if not (np.isfinite(lam) and lam > 0):
        raise InputError(f"lambda must be a positive number, got {lam!r}")
    return 1.0 / (2.0 * n * lam)


def C_to_penalty(C: float, n: int) -> float:
    """Inverse of :func:`penalty_to_C`."""
    return 1.0 / (2.0 * n * C)


def sample_bounds(y: np.ndarray, pi: float, C: float) -> np.ndarray:
    """Per-sample upper bounds ``C S(y_i)``; shape (n,)."""
    return C * np.where(y > 0, 1.0 - pi, pi)


def kkt_residuals(
    K: np.ndarray, y: np.ndarray, alpha: np.ndarray, intercept: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """Largest violation of the dual's optimality conditions of several fits, margin units.

    With margins ``m_i = y_i f(x_i) - 1`` and relative duals ``r_i = a_i / U_i``:
    complementarity asks ``m_i >= 0`` unless ``a_i = U_i`` and ``m_i <= 0`` unless
    ``a_i = 0``, measured without thresholds as ``max(0, -m_i) (1 - r_i)`` and
    ``max(0, m_i) r_i``.  Feasibility adds bound violations (relative to ``U_i``) and the
    equality ``sum a_i y_i = 0`` (relative to ``sum a_i``).  The residual is the largest of
    these; it is zero exactly at an optimum.  All fits share one matrix product.

    Parameters
    ----------
    K : ndarray, shape (n, n)
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
    bound = np.maximum(np.maximum((-r).max(axis=1), (r - 1.0).max(axis=1)), 0.0)
    equality = np.abs(alpha @ y) / np.maximum(alpha.sum(axis=1), 1e-300)
    margin = y[None, :] * ((alpha * y[None, :]) @ K + np.atleast_1d(intercept)[:, None]) - 1.0
    rc = np.clip(r, 0.0, 1.0)
    slack = (np.maximum(-margin, 0.0) * (1.0 - rc)).max(axis=1)
    excess = (np.maximum(margin, 0.0) * rc).max(axis=1)
    return np.maximum.reduce([bound, equality, slack, excess])


def kkt_residual(
    K: np.ndarray, y: np.ndarray, alpha: np.ndarray, intercept: float, upper: np.ndarray
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


def _fit_libsvm_svc(K: np.ndarray, y: np.ndarray, upper: np.ndarray, C: float):
    """libsvm through the public ``SVC`` (validates the n x n kernel on every call)."""
    clf = SVC(kernel="precomputed", C=C, tol=LIBSVM_TOL, cache_size=200, max_iter=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        try:
            clf.fit(K, y, sample_weight=upper / C)
        except ConvergenceWarning as exc:  # pragma: no cover - libsvm rarely stops early
            raise SolverError(f"libsvm did not converge: {exc}") from exc
    alpha = np.zeros(y.size)
    # Binary SVC orders classes [-1, 1] and its decision is positive for +1; dual_coef_
    # holds y_i a_i for the support vectors.
    alpha[clf.support_] = np.abs(clf.dual_coef_[0])
    return alpha, float(clf.intercept_[0])


def _fit_libsvm_direct(K: np.ndarray, y: np.ndarray, upper: np.ndarray, C: float):
    """libsvm through scikit-learn's private binding, skipping per-call input validation.

    Validating the n x n kernel on every call costs about a third of a ladder's time at
    n = 2000 (benchmarks/results/ladder_speed.md); the ladder validates its inputs once.
    Its answers equal :func:`_fit_libsvm_svc`'s to the last bit (checked on first use by
    :func:`_direct_binding_works`); the result is checked by the KKT residual as always.
    """
    from sklearn.svm import _libsvm

    _libsvm.set_verbosity_wrap(0)
    support, _, _, sv_coef, intercept, _, _, status, _ = _libsvm.fit(
        K,
        (y > 0).astype(np.float64),
        svm_type=0,
        sample_weight=upper / C,
        class_weight=np.empty(0),
        kernel="precomputed",
        C=C,
        nu=0.5,
        probability=0,
        degree=3,
        shrinking=1,
        tol=LIBSVM_TOL,
        cache_size=200,
        coef0=0.0,
        gamma=0.0,
        epsilon=0.1,
        max_iter=-1,
        random_seed=0,
    )
    if status != 0:  # pragma: no cover - libsvm reports no other status without max_iter
        raise SolverError(f"libsvm stopped with status {status}")
    alpha = np.zeros(y.size)
    alpha[support] = np.abs(sv_coef[0])
    # libsvm's first class is -1 here; SVC flips the binary intercept the same way.
    return alpha, -float(intercept[0])


_DIRECT_STATE: list[bool] = []


def _direct_binding_works() -> bool:
    """Whether the private binding exists and agrees with ``SVC`` (decided once)."""
    if not _DIRECT_STATE:
        try:
            rng = np.random.default_rng(0)
            X = rng.standard_normal((40, 2))
            y = np.where(X[:, 0] + 0.5 * rng.standard_normal(40) > 0, 1.0, -1.0)
            K = np.ascontiguousarray(X @ X.T)
            upper = sample_bounds(y, 0.3, 1.0)
            a1, b1 = _fit_libsvm_direct(K, y, upper, 1.0)
            a2, b2 = _fit_libsvm_svc(K, y, upper, 1.0)
            _DIRECT_STATE.append(bool(np.allclose(a1, a2) and np.isclose(b1, b2)))
        except Exception:  # any change in the private API: use the public path
            _DIRECT_STATE.append(False)
    return _DIRECT_STATE[0]


def _fit_libsvm(K: np.ndarray, y: np.ndarray, upper: np.ndarray, C: float):
    """One libsvm fit: the direct binding when it works, ``SVC`` otherwise."""
    if _direct_binding_works() and K.flags.c_contiguous and K.dtype == np.float64:
        return _fit_libsvm_direct(K, y, upper, C)
    return _fit_libsvm_svc(K, y, upper, C)


def _fit_qp(K: np.ndarray, y: np.ndarray, upper: np.ndarray, qp_solver: str):
    from qpsolvers import solve_qp

    n = y.size
    Q = (y[:, None] * y[None, :]) * K
    # quadprog needs a strictly positive definite matrix; the ridge is far below the
    # check's tolerance.
    ridge = 1e-10 * max(float(np.max(np.diag(Q))), 1.0)
    Q = Q + ridge * np.eye(n)
    A = y[None, :]
    if qp_solver != "quadprog":  # the other backends take sparse matrices natively
        Q, A = sparse.csc_matrix(Q), sparse.csc_matrix(A)
    try:
        alpha = solve_qp(
            Q, -np.ones(n), A=A, b=np.zeros(1), lb=np.zeros(n), ub=upper, solver=qp_solver
        )
    except Exception as exc:  # any backend failure becomes a SolverError
        raise SolverError(f"QP backend {qp_solver!r} failed: {exc}") from exc
    if alpha is None or not np.all(np.isfinite(alpha)):
        raise SolverError(f"QP backend {qp_solver!r} returned no solution")
    alpha = np.clip(alpha, 0.0, upper)
    return alpha, optimal_intercept(K @ (alpha * y), y, upper)


def solve_weighted_svm(
    K: np.ndarray,
    y: np.ndarray,
    pi: float,
    lam: float,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
) -> WeightedFit:
    """Solve one weighted SVM without checking the answer (see :func:`check_fits`).

    Parameters and errors as :func:`fit_weighted_svm`; the returned fit's
    ``kkt_residual`` is NaN until checked.
    """
    y = _check_labels(y)
    if not 0.0 < pi < 1.0:
        raise InputError(f"weight pi must lie strictly between 0 and 1, got {pi!r}")
    C = penalty_to_C(lam, y.size)
    upper = sample_bounds(y, pi, C)
    try:
        if solver == "libsvm":
            alpha, b = _fit_libsvm(K, y, upper, C)
        elif solver == "qp":
            alpha, b = _fit_qp(K, y, upper, qp_solver)
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
    K: np.ndarray,
    y: np.ndarray,
    fits: list[WeightedFit],
    solver_name: str = "libsvm",
    kkt_tol: float = DEFAULT_KKT_TOL,
) -> list[WeightedFit]:
    """Check fits on the same data by their KKT residuals (one matrix product for all).

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    fits : list of WeightedFit
    solver_name : str
        Named in the error message.
    kkt_tol : float
        Largest accepted residual (margin units).

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
    alpha = np.vstack([f.alpha for f in fits])
    upper = np.vstack([sample_bounds(y, f.pi, f.C) for f in fits])
    resid = kkt_residuals(K, y, alpha, np.array([f.intercept for f in fits]), upper)
    for fit, r in zip(fits, resid, strict=True):
        if not np.isfinite(r) or r > kkt_tol:
            raise SolverError(
                f"weighted SVM at pi={fit.pi:.4g}, lambda={fit.lam:.4g}: solver "
                f"{solver_name!r} returned an answer with KKT residual {r:.3g} > tolerance "
                f"{kkt_tol:.3g}"
            )
    return [replace(f, kkt_residual=float(r)) for f, r in zip(fits, resid, strict=True)]


def fit_weighted_svm(
    K: np.ndarray,
    y: np.ndarray,
    pi: float,
    lam: float,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    kkt_tol: float = DEFAULT_KKT_TOL,
) -> WeightedFit:
    """Fit one weighted SVM on a precomputed kernel and check the answer.

    Parameters
    ----------
    K : ndarray, shape (n, n)
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

    Returns
    -------
    WeightedFit

    Raises
    ------
    SolverError
        The solver failed or its answer violates the KKT conditions by more than
        ``kkt_tol``; the message names pi and lambda.
    """
    fit = solve_weighted_svm(K, y, pi, lam, solver, qp_solver)
    name = solver if solver == "libsvm" else qp_solver
    return check_fits(K, y, [fit], name, kkt_tol)[0]
