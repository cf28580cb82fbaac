"""The weight ladder: fits over a grid of class weights and probabilities from its signs.

METHODS section 2.  For a grid ``0 = pi_0 < pi_1 < ... < pi_M = 1`` the ``M - 1`` interior
weights are fitted; by convention ``f_{pi_0} > 0`` and ``f_{pi_M} < 0`` everywhere.  A
decision value of exactly 0 counts as negative.

* Count rule (default): ``c = #{m : f_{pi_m}(x) > 0}``; estimate ``(pi_c + pi_{c+1}) / 2``,
  bracket ``[pi_c, pi_{c+1}]``.
* Extreme rule: ``pi^* = max{pi_m : f > 0}``, ``pi_* = min{pi_m : f < 0}``; estimate
  ``(pi^* + pi_*) / 2``, bracket ``[min, max]`` of the two.
Both agree whenever the signs are monotone in pi.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .errors import InputError
from .kernels import Kernel
from .progress import CancelCheck, ProgressCallback, ProgressTracker
from .wsvm import DEFAULT_KKT_TOL, WeightedFit, check_fits, solve_weighted_svm

RULES = ("count", "extreme")


def weight_grid(M: int) -> np.ndarray:
    """Interior weights ``m / M`` for ``m = 1..M-1``; shape (M - 1,)."""
    M = int(M)
    if M < 2:
        raise InputError(f"the weight grid needs M >= 2, got {M}")
    return np.arange(1, M) / M


def check_weights(weights: np.ndarray) -> np.ndarray:
    """Validate an interior weight grid: strictly increasing, inside (0, 1); shape (M - 1,)."""
    w = np.asarray(weights, dtype=float).ravel()
    if w.size < 1:
        raise InputError("the weight grid is empty")
    if not np.all(np.isfinite(w)) or w.min() <= 0 or w.max() >= 1:
        raise InputError("weights must lie strictly between 0 and 1")
    if np.any(np.diff(w) <= 0):
        raise InputError("weights must be strictly increasing")
    return w


def full_grid(weights: np.ndarray) -> np.ndarray:
    """Interior weights with 0 and 1 added at the ends; shape (M + 1,)."""
    return np.concatenate([[0.0], check_weights(weights), [1.0]])


@dataclass(frozen=True)
class LadderEstimate:
    """Probabilities read off a ladder.

    Attributes
    ----------
    p : ndarray, shape (n,)
        Estimated ``P(Y = +1 | x)``.
    lo, hi : ndarray, shape (n,)
        Bracket; ``lo <= p <= hi``.
    monotone : ndarray of bool, shape (n,)
        Whether the point's signs are non-increasing in pi.
    """

    p: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    monotone: np.ndarray


def signs_are_monotone(positive: np.ndarray) -> np.ndarray:
    """Whether each row of a sign matrix is non-increasing (no ``-`` before a ``+``).

    Parameters
    ----------
    positive : ndarray of bool, shape (n, M - 1)

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    positive = np.asarray(positive, dtype=bool)
    if positive.shape[1] < 2:
        return np.ones(positive.shape[0], dtype=bool)
    return ~np.any(~positive[:, :-1] & positive[:, 1:], axis=1)


def probabilities_from_signs(
    positive: np.ndarray, weights: np.ndarray, rule: str = "count"
) -> LadderEstimate:
    """Estimate ``P(Y = +1 | x)`` from a ladder's signs.

    Parameters
    ----------
    positive : ndarray of bool, shape (n, M - 1)
        ``f_{pi_m}(x_i) > 0``, columns in the order of ``weights``.
    weights : ndarray, shape (M - 1,)
        Interior weights, strictly increasing.
    rule : {"count", "extreme"}

    Returns
    -------
    LadderEstimate
    """
    positive = np.atleast_2d(np.asarray(positive, dtype=bool))
    grid = full_grid(weights)
    if positive.shape[1] != grid.size - 2:
        raise InputError(
            f"sign matrix has {positive.shape[1]} columns for {grid.size - 2} weights"
        )
    monotone = signs_are_monotone(positive)
    if rule == "count":
        c = positive.sum(axis=1)
        lo, hi = grid[c], grid[c + 1]
    elif rule == "extreme":
        m = positive.shape[1]
        idx = np.arange(1, m + 1)
        upper_pos = np.where(positive, idx, 0).max(axis=1)  # index of pi^*, 0 if none
        lower_neg = np.where(~positive, idx, m + 1).min(axis=1)  # index of pi_*, M if none
        a, b = grid[upper_pos], grid[lower_neg]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
    else:
        raise InputError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    return LadderEstimate(p=0.5 * (lo + hi), lo=lo, hi=hi, monotone=monotone)


@dataclass(frozen=True)
class FitEvent:
    """A finished weighted fit, passed as ``partial`` to progress callbacks for live views.

    Attributes
    ----------
    stage : str
        ``"tune"`` for fits of the tuning grid, ``"final"`` for the fits of the model
        that is being built.
    fit : WeightedFit
        Its ``coef`` has shape (n,) over the rows of ``X``.
    X : ndarray, shape (n, p)
        Training inputs of the fit (a reference, not a copy).
    kernel : Kernel
    label : str
        Which sub-problem the fit belongs to (empty for a binary problem).
    """

    stage: str
    fit: WeightedFit
    X: np.ndarray
    kernel: Kernel
    label: str = ""

    def decision(self, X_new: np.ndarray) -> np.ndarray:
        """``f_pi`` at new points ``X_new`` (m, p); shape (m,)."""
        return self.fit.decision(self.kernel(X_new, self.X))


@dataclass(frozen=True)
class Ladder:
    """Weighted SVMs fitted at every interior weight for one (lambda, kernel).

    Attributes
    ----------
    weights : ndarray, shape (M - 1,)
    lam : float
    coef : ndarray, shape (M - 1, n)
        Kernel expansion coefficients of each fit over the training points.
    intercept : ndarray, shape (M - 1,)
    kkt_residual : ndarray, shape (M - 1,)
    """

    weights: np.ndarray
    lam: float
    coef: np.ndarray
    intercept: np.ndarray
    kkt_residual: np.ndarray

    def decision(self, K_cross: np.ndarray) -> np.ndarray:
        """Decision values of every fit.

        Parameters
        ----------
        K_cross : ndarray, shape (m, n)
            Kernel between new points and the training points.

        Returns
        -------
        ndarray, shape (m, M - 1)
        """
        return K_cross @ self.coef.T + self.intercept[None, :]

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """Probabilities and brackets at new points (``K_cross`` shape (m, n))."""
        return probabilities_from_signs(self.decision(K_cross) > 0, self.weights, rule)

    def compress(self) -> tuple[Ladder, np.ndarray]:
        """Drop training points that no fit uses; returns the ladder and kept indices."""
        keep = np.flatnonzero(np.any(self.coef != 0, axis=0))
        return (
            Ladder(self.weights, self.lam, self.coef[:, keep], self.intercept, self.kkt_residual),
            keep,
        )


def fit_ladder(
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    kkt_tol: float = DEFAULT_KKT_TOL,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    n_jobs: int = 1,
) -> Ladder:
    """Fit the weighted SVM at every weight of the grid, sharing one kernel matrix.

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    weights : ndarray, shape (M - 1,)
    lam : float
    solver, qp_solver, kkt_tol
        See :func:`~wsvmgui.core.wsvm.fit_weighted_svm`.
    progress : callable, optional
        ``progress(done, total, fit)`` after each weight, ``fit`` the
        :class:`~wsvmgui.core.wsvm.WeightedFit` (called from worker threads when
        ``n_jobs > 1``; its KKT check follows when the whole ladder is solved).
    should_cancel : callable, optional
        Polled between fits.
    n_jobs : int
        Threads fitting different weights at once (libsvm releases the GIL).

    Returns
    -------
    Ladder
    """
    weights = check_weights(weights)
    K = np.ascontiguousarray(K, dtype=np.float64)
    tracker = ProgressTracker(weights.size, progress, should_cancel)
    tracker.check()

    def one(pi: float) -> WeightedFit:
        tracker.check()
        fit = solve_weighted_svm(K, y, float(pi), lam, solver, qp_solver)
        tracker.step(partial=fit)
        return fit

    if n_jobs > 1 and weights.size > 1:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            futures = [pool.submit(one, pi) for pi in weights]
            try:
                fits = [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    else:
        fits = [one(pi) for pi in weights]
    # Every answer is checked, all at once (one matrix product).
    fits = check_fits(K, y, fits, solver if solver == "libsvm" else qp_solver, kkt_tol)
    return Ladder(
        weights=weights,
        lam=float(lam),
        coef=np.vstack([f.coef for f in fits]),
        intercept=np.array([f.intercept for f in fits]),
        kkt_residual=np.array([f.kkt_residual for f in fits]),
    )
