"""The only module that touches scikit-learn's private libsvm binding.

A weighted SVM on a precomputed kernel is solved by libsvm.  The public route,
``SVC(kernel="precomputed").fit(K, y, sample_weight=...)``, validates the n x n kernel
on every call, which costs about a third of a ladder's time at n = 2000
(benchmarks/results/ladder_speed.md); the ladder validates its inputs once, so
:func:`fit_direct` and :func:`fit_direct_rows` call ``sklearn.svm._libsvm.fit`` directly
(:class:`~wsvmgui.solvers.gram.DenseGram` chooses the route).

That binding is private: on first use it is checked against ``SVC`` on a small problem
(:func:`direct_binding_live`); if it is missing, changed or disagrees, every fit takes the
public route instead, and the fallback is announced once (a ``logging`` warning on the
``wsvmgui`` logger and a :class:`~wsvmgui.errors.LibsvmFallbackWarning`).  Only the
arguments a precomputed C-SVC needs are passed (not ``probability``, deprecated in
scikit-learn 1.9), and the returned tuple is read by position from both ends so that the
removal of the probability outputs does not matter.  ``pyproject.toml`` caps
scikit-learn at the versions the tests cover (tests/test_libsvm_direct.py asserts the
direct route is live there).

A fit on some rows of a larger kernel matrix (a fold, a sub-problem) needs no copy of
them: :func:`fit_direct_rows` gives the other rows sample weight 0, which libsvm drops
before solving.  :func:`fit_features` is the public route on the raw features, for data
whose kernel matrix is not held at all (libsvm computes and caches kernel columns).
"""

from __future__ import annotations

import logging
import threading
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from ..errors import LibsvmFallbackWarning, SolverError

#: libsvm's own stopping tolerance (its maximal-violating-pair gap).
LIBSVM_TOL = 1e-3
#: libsvm's cache (MB) of columns of ``Q = (y y') * K`` for a precomputed kernel.  Such a
#: column is a gather from ``K``, so the cache saves little: ladders of 20 weights at
#: n = 4000 and 6000 (C = 1 and 30) took the same CPU time with 200, 40 and 10 MB, and
#: at 200 MB each running fit held up to 4 n^2 bytes (137 MB at n = 6000).
CACHE_MB = 40

logger = logging.getLogger("wsvmgui.solvers")
_state: dict[str, bool] = {}
_lock = threading.Lock()


def _svc_dual(clf: SVC, X: np.ndarray, y: np.ndarray, upper: np.ndarray, C: float):
    """Fit ``clf`` with per-sample weights ``upper / C``; its dual variables and intercept."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        try:
            clf.fit(X, y, sample_weight=upper / C)
        except ConvergenceWarning as exc:  # pragma: no cover - libsvm rarely stops early
            raise SolverError(f"libsvm did not converge: {exc}") from exc
    alpha = np.zeros(y.size)
    # Binary SVC orders classes [-1, 1] and its decision is positive for +1; dual_coef_
    # holds y_i a_i for the support vectors.
    alpha[clf.support_] = np.abs(clf.dual_coef_[0])
    return alpha, float(clf.intercept_[0])


def fit_public(K: np.ndarray, y: np.ndarray, upper: np.ndarray, C: float):
    """libsvm through the public ``SVC`` (validates the n x n kernel on every call).

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)
        Labels in {-1, +1}, both present.
    upper : ndarray, shape (n,)
        Per-sample bounds ``C S(y_i)`` of the dual variables.
    C : float

    Returns
    -------
    alpha : ndarray, shape (n,)
        Dual variables.
    intercept : float
        Positive decisions favour +1.
    """
    clf = SVC(kernel="precomputed", C=C, tol=LIBSVM_TOL, cache_size=CACHE_MB, max_iter=-1)
    return _svc_dual(clf, K, y, upper, C)


def fit_features(
    X: np.ndarray,
    y: np.ndarray,
    upper: np.ndarray,
    C: float,
    kernel: dict,
    cache_mb: float = CACHE_MB,
    tol: float = LIBSVM_TOL,
):
    """libsvm on the raw features: it computes kernel values itself, caching ``cache_mb``.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y, upper, C
        As :func:`fit_public`.
    kernel : dict
        ``SVC`` kernel arguments (``kernel``, ``gamma``, ``degree``, ``coef0``).
    cache_mb : float
        libsvm's kernel cache (MB).
    tol : float
        libsvm's stopping tolerance.

    Returns
    -------
    alpha, intercept
        As :func:`fit_public`.
    """
    clf = SVC(C=C, tol=tol, cache_size=cache_mb, max_iter=-1, **kernel)
    return _svc_dual(clf, X, y, upper, C)


def fit_direct(K: np.ndarray, y: np.ndarray, upper: np.ndarray, C: float):
    """libsvm through scikit-learn's private binding, without per-call validation.

    Same parameters and returns as :func:`fit_public`; ``K`` must be C-contiguous float64.
    Its answers equal ``fit_public``'s to the last bit (checked on first use).
    """
    return fit_direct_rows(K, None, y, upper, C)


def fit_direct_rows(
    K: np.ndarray, rows: np.ndarray | None, y: np.ndarray, upper: np.ndarray, C: float
):
    """:func:`fit_direct` on ``K[rows][:, rows]`` without copying it.

    Rows outside ``rows`` get sample weight 0, which libsvm drops before solving (it
    keeps pointers to the remaining rows of ``K``, whose precomputed entries it reads by
    their original index): the answer is the submatrix's to the last bit.

    Parameters
    ----------
    K : ndarray, shape (N, N)
        C-contiguous float64.
    rows : ndarray of int, shape (n,), or None
        Strictly increasing (None: every row).
    y, upper : ndarray, shape (n,)
        Labels and bounds of those rows.
    C : float

    Returns
    -------
    alpha : ndarray, shape (n,)
    intercept : float
    """
    from sklearn.svm import _libsvm

    if rows is None:
        weight, label = upper / C, (y > 0).astype(np.float64)
    else:
        weight, label = np.zeros(K.shape[0]), np.zeros(K.shape[0])
        weight[rows], label[rows] = upper / C, y > 0
    _libsvm.set_verbosity_wrap(0)
    out = _libsvm.fit(
        K,
        label,
        svm_type=0,
        sample_weight=weight,
        kernel="precomputed",
        C=C,
        tol=LIBSVM_TOL,
        cache_size=CACHE_MB,
        shrinking=1,
        max_iter=-1,
        random_seed=0,
    )
    # (support, support_vectors, n_class_SV, sv_coef, intercept, [probA, probB,]
    #  fit_status, n_iter): read from both ends.
    support, sv_coef, intercept, status = out[0], out[3], out[4], out[-2]
    if status != 0:  # pragma: no cover - libsvm reports no other status without max_iter
        raise SolverError(f"libsvm stopped with status {status}")
    alpha = np.zeros(y.size)
    alpha[support] = np.abs(sv_coef[0])  # positions among the rows of nonzero weight
    # libsvm's first class is -1 here; SVC flips the binary intercept the same way.
    return alpha, -float(intercept[0])


def _self_check() -> tuple[bool, str]:
    try:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((40, 2))
        y = np.where(X[:, 0] + 0.5 * rng.standard_normal(40) > 0, 1.0, -1.0)
        K = np.ascontiguousarray(X @ X.T)
        upper = np.where(y > 0, 0.7, 0.3)
        a1, b1 = fit_direct(K, y, upper, 1.0)
        a2, b2 = fit_public(K, y, upper, 1.0)
        rows = np.flatnonzero(np.arange(40) % 3 != 1)  # a fold without a copy of K
        a3, b3 = fit_direct_rows(K, rows, y[rows], upper[rows], 1.0)
        a4, b4 = fit_public(K[np.ix_(rows, rows)], y[rows], upper[rows], 1.0)
    except Exception as exc:  # any change in the private API: use the public path
        return False, f"{type(exc).__name__}: {exc}"
    if np.allclose(a1, a2) and np.isclose(b1, b2) and np.allclose(a3, a4) and np.isclose(b3, b4):
        return True, ""
    return False, "its answer differs from SVC's"


def direct_binding_live() -> bool:
    """Whether the private binding exists and agrees with ``SVC`` (decided once).

    The first call that finds it unusable logs a warning and emits
    :class:`~wsvmgui.errors.LibsvmFallbackWarning`.
    """
    with _lock:
        if "live" not in _state:
            live, why = _self_check()
            _state["live"] = live
            if not live:
                import sklearn

                msg = (
                    f"scikit-learn {sklearn.__version__}: the direct libsvm binding is "
                    f"unusable ({why}); weighted SVMs use the slower public SVC"
                )
                logger.warning(msg)
                warnings.warn(msg, LibsvmFallbackWarning, stacklevel=2)
        return _state["live"]


def reset() -> None:
    """Forget the self-check (tests use it to exercise the fallback)."""
    with _lock:
        _state.clear()
