"""Choosing the smoothed count rule's width on cross-fitted estimates.

:mod:`wsvmgui.ladder.smooth_rule` gives ``p_h(x)`` for many widths in one pass over a
path.  Here the ladder of a problem at the final (lambda, sigma) is refitted on each
fold's training part (:func:`wsvmgui.ladder.recalibration.fold_fits`, as the
recalibration's cross-fitting does, same ``C``), its held-out rows are estimated at every
width, and the width of smallest held-out log loss (or Brier score) is kept.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..progress import ProgressTracker
from ..solvers.kernels import Kernel
from .problems import LadderProblem
from .recalibration import fold_fits
from .smooth_rule import check_widths, smooth_estimate
from .splits import Fold

#: Widths tried, in margin units (0: the count rule).
DEFAULT_WIDTHS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


def cross_fitted_widths(
    X: np.ndarray,
    problem: LadderProblem,
    folds: list[Fold],
    kernel: Kernel,
    lam: float,
    n_final: float,
    weights: np.ndarray,
    widths=DEFAULT_WIDTHS,
    *,
    engine: str = "path",
    solver: str = "libsvm",
    n_jobs: int = 1,
    tracker: ProgressTracker,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cross-fitted smoothed estimates of a problem's rows at every width.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    problem : LadderProblem
    folds : list of (train, test)
    kernel : Kernel
    lam : float
        The final fit's lambda, on ``n_final`` rows (C is kept on each fold).
    n_final : float
    weights : ndarray, shape (M - 1,)
    widths : array-like, shape (W,)
    engine, solver, n_jobs, tracker, sample_weight
        As for :func:`~wsvmgui.ladder.final.fit_ladders`.

    Returns
    -------
    P : ndarray, shape (W, m)
        Estimates of the rows held out by some fold, per width.
    y : ndarray, shape (m,)
        Their labels, 1 for the problem's +1 class, else 0.
    """
    w = check_widths(widths)
    Ps, ys = [], []
    for fit, te, y_te in fold_fits(
        X, problem, folds, kernel, lam, n_final, weights,
        engine=engine, solver=solver, n_jobs=n_jobs, tracker=tracker,
        sample_weight=sample_weight,
    ):  # fmt: skip
        Ps.append(smooth_estimate(fit.ladder, fit.kernel(X[te], X[fit.support]), w))
        ys.append((y_te > 0).astype(float))
    if not Ps:
        raise InputError("smooth rule: no fold holds a row of the problem")
    return np.hstack(Ps), np.concatenate(ys)


def width_scores(P: np.ndarray, y: np.ndarray, score: str = "log_loss") -> np.ndarray:
    """Held-out score of each width's estimates ``P`` (W, m) for 0/1 labels ``y`` (m,)."""
    P = np.clip(np.asarray(P, dtype=float), 1e-12, 1 - 1e-12)
    if score == "log_loss":
        return -np.mean(y * np.log(P) + (1 - y) * np.log1p(-P), axis=1)
    if score == "brier":
        return np.mean((P - y) ** 2, axis=1)
    raise InputError(f"unknown score {score!r}; choose log_loss or brier")


def choose_width(P: np.ndarray, y: np.ndarray, widths, score: str = "log_loss") -> float:
    """The width of smallest held-out score (the smallest width among ties)."""
    w = check_widths(widths)
    s = width_scores(P, y, score)
    return float(w[int(np.argmin(s))])


__all__ = ["DEFAULT_WIDTHS", "choose_width", "cross_fitted_widths", "width_scores"]
