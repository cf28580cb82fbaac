"""A ladder of weighted SVMs through libsvm directly, without scikit-learn's per-fit checks.

:func:`wsvmgui.core.ladder.fit_ladder` with ``solver="libsvm"`` goes through
``sklearn.svm.SVC.fit``, whose input validation costs about twice the libsvm solve itself
at n = 500, and holds the GIL while it runs, so threads barely overlap.  The divide-and-
conquer schemes make thousands of such fits on inputs that are already validated, so
they call ``sklearn.svm._libsvm.fit`` directly with exactly the arguments ``SVC.fit``
passes: the solutions are bit-for-bit the same (checked by the K = 2 agreement tests
against :class:`~wsvmgui.core.binary.WeightedSVMClassifier`), and every answer is still
checked by :func:`~wsvmgui.core.wsvm.kkt_residual`.

This relies on a private scikit-learn module; if it is missing or its signature changes,
:func:`fit_ladder_libsvm` falls back to :func:`~wsvmgui.core.ladder.fit_ladder`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, SolverError
from ..ladder import Ladder, check_weights, fit_ladder
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..wsvm import DEFAULT_KKT_TOL, LIBSVM_TOL, kkt_residual, penalty_to_C, sample_bounds

try:  # pragma: no cover - import guard
    from sklearn.svm import _libsvm
except ImportError:  # pragma: no cover
    _libsvm = None

_EMPTY = np.empty(0, dtype=np.float64)


def _solve(K: np.ndarray, y01: np.ndarray, weights: np.ndarray, C: float):
    _libsvm.set_verbosity_wrap(0)  # as SVC.fit does; libsvm prints progress otherwise
    out = _libsvm.fit(
        K, y01, svm_type=0, kernel="precomputed", degree=3, gamma=0.0, coef0=0.0,
        tol=LIBSVM_TOL, C=C, nu=0.0, epsilon=0.0, class_weight=_EMPTY,
        sample_weight=weights, shrinking=1, probability=0, cache_size=200.0, max_iter=-1,
        random_seed=0,
    )
    support, _, _, dual_coef, intercept = out[:5]
    fit_status = out[7]
    if fit_status != 0:
        raise SolverError(f"libsvm stopped with status {fit_status}")
    return support, dual_coef, intercept


def fit_ladder_libsvm(
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float,
    kkt_tol: float = DEFAULT_KKT_TOL,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
) -> Ladder:
    """Same result as ``fit_ladder(K, y, weights, lam, "libsvm")``, with less overhead.

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)
        Labels in {-1, +1}, both present.
    weights : ndarray, shape (M - 1,)
    lam : float
    kkt_tol : float
    progress, should_cancel
        As in :func:`~wsvmgui.core.ladder.fit_ladder`.

    Returns
    -------
    Ladder
    """
    if _libsvm is None:  # pragma: no cover
        return fit_ladder(K, y, weights, lam, "libsvm", kkt_tol=kkt_tol, progress=progress,
                          should_cancel=should_cancel)
    weights = check_weights(weights)
    y = np.asarray(y, dtype=float)
    if not (np.all(np.isin(y, (-1.0, 1.0))) and (y > 0).any() and (y < 0).any()):
        raise InputError("weighted SVM labels must be -1 and +1, both present")
    K = np.ascontiguousarray(K, dtype=np.float64)
    y01 = np.ascontiguousarray((y > 0).astype(np.float64))
    n = y.size
    C = penalty_to_C(lam, n)
    tracker = ProgressTracker(weights.size, progress, should_cancel)
    tracker.check()
    coef = np.zeros((weights.size, n))
    intercept = np.zeros(weights.size)
    resid = np.zeros(weights.size)
    for m, pi in enumerate(weights):
        upper = sample_bounds(y, float(pi), C)
        where = f"weighted SVM at pi={pi:.4g}, lambda={lam:.4g}"
        try:
            support, dual_coef, b = _solve(K, y01, np.ascontiguousarray(upper / C), C)
        except SolverError as exc:
            raise SolverError(f"{where}: {exc}") from exc
        alpha = np.zeros(n)
        alpha[support] = np.abs(dual_coef[0])
        # libsvm's raw intercept has the opposite sign of SVC.intercept_ for binary fits.
        bias = -float(b[0])
        r = kkt_residual(K, y, alpha, bias, upper)
        if not np.isfinite(r) or r > kkt_tol:
            raise SolverError(
                f"{where}: solver 'libsvm' returned an answer with KKT residual {r:.3g} > "
                f"tolerance {kkt_tol:.3g}"
            )
        coef[m] = alpha * y
        intercept[m] = bias
        resid[m] = r
        tracker.step()
    return Ladder(weights=weights, lam=float(lam), coef=coef, intercept=intercept,
                  kkt_residual=resid)
