"""The grid ladder: one weighted SVM per interior weight, sharing one kernel matrix.

METHODS section 2.  :func:`fit_ladder` solves every weight of the grid (on threads),
checks every answer by its KKT residual, and returns a :class:`Ladder` whose signs
:mod:`wsvmgui.ladder.rules` turns into probabilities.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.gram import Gram, as_gram
from ..solvers.kernels import Kernel, kernel_product
from ..solvers.wsvm import DEFAULT_KKT_TOL, WeightedFit, check_fits, solve_weighted_svm
from .rules import LadderEstimate, estimate_from_decision
from .weights import check_weights


@dataclass(frozen=True)
class FitEvent:
    """A finished weighted fit, passed as ``partial`` to progress callbacks for live views.

    Attributes
    ----------
    stage : str
        ``"tune"`` for fits of the tuning grid, ``"final"`` for the fits of the model
        that is being built, ``"calibration"`` for a recalibration's fold fits.
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
        return kernel_product(X_new, self.X, self.kernel, self.fit.coef) + self.fit.intercept


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
    fallback : str
        Empty, or why the exact weight path broke down so that this ladder answers
        instead (:mod:`wsvmgui.ladder.engines`).
    switched : str
        Empty, or why the ``"auto"`` engine stopped the path and chose this ladder.
    """

    weights: np.ndarray
    lam: float
    coef: np.ndarray
    intercept: np.ndarray
    kkt_residual: np.ndarray
    fallback: str = ""
    switched: str = ""
    engine: ClassVar[str] = "grid"

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
        """Probabilities and brackets at new points (``K_cross`` shape (m, n)) by ``rule``."""
        return estimate_from_decision(self.decision(K_cross), self.weights, rule)

    def compress(self) -> tuple[Ladder, np.ndarray]:
        """Drop training points that no fit uses; returns the ladder and kept indices."""
        keep = np.flatnonzero(np.any(self.coef != 0, axis=0))
        return (
            Ladder(
                self.weights,
                self.lam,
                self.coef[:, keep],
                self.intercept,
                self.kkt_residual,
                self.fallback,
                self.switched,
            ),
            keep,
        )


def fit_ladder(
    K: np.ndarray | Gram,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    kkt_tol: float = DEFAULT_KKT_TOL,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    n_jobs: int = 1,
    sample_weight: np.ndarray | None = None,
) -> Ladder:
    """Fit the weighted SVM at every weight of the grid, sharing one kernel matrix.

    Parameters
    ----------
    K : ndarray, shape (n, n), or Gram
        The training rows' kernel matrix (a :class:`~wsvmgui.solvers.gram.Gram` to use
        rows of a shared matrix without a copy, or kernel values made on the fly).
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    weights : ndarray, shape (M - 1,)
    lam : float
    solver, qp_solver, kkt_tol
        See :func:`~wsvmgui.solvers.wsvm.fit_weighted_svm`.
    progress : callable, optional
        ``progress(done, total, fit)`` after each weight, ``fit`` the
        :class:`~wsvmgui.solvers.wsvm.WeightedFit` (called from worker threads when
        ``n_jobs > 1``; its KKT check follows when the whole ladder is solved).
    should_cancel : callable, optional
        Polled between fits.
    n_jobs : int
        Threads fitting different weights at once (libsvm releases the GIL).
    sample_weight : ndarray, shape (n,), optional
        Multiplies every point's bound (:func:`~wsvmgui.solvers.wsvm.fit_weighted_svm`).

    Returns
    -------
    Ladder
    """
    weights = check_weights(weights)
    K = as_gram(K)
    tracker = ProgressTracker(weights.size, progress, should_cancel)
    tracker.check()

    def one(pi: float) -> WeightedFit:
        tracker.check()
        fit = solve_weighted_svm(K, y, float(pi), lam, solver, qp_solver, sample_weight)
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
    # Every answer is checked, 32 at a time (one matrix product each).
    name = solver if solver == "libsvm" else qp_solver
    fits = check_fits(K, y, fits, name, kkt_tol, sample_weight)
    return Ladder(
        weights=weights,
        lam=float(lam),
        coef=np.vstack([f.coef for f in fits]),
        intercept=np.array([f.intercept for f in fits]),
        kkt_residual=np.array([f.kkt_residual for f in fits]),
    )
