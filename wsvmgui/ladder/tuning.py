"""Tuning defaults and results of a binary ladder: the grids, the score, the table.

The default weight grid (``M``), the default lambda grid (``C = 1 / (2 n lambda)`` over
:data:`DEFAULT_C_GRID`), the empirical generalised KL that scores a tuning cell, and the
:class:`~wsvmgui.ladder.tuning_table.TuningResult` table (defined beside the generic search
and importable from here).  The ladders' search is :mod:`wsvmgui.ladder.search`; the
tuning splits are :mod:`wsvmgui.ladder.splits`.
"""

from __future__ import annotations

import numpy as np

from ..solvers.kernels import Kernel
from .tuning_table import TuningResult

__all__ = [
    "DEFAULT_C_GRID",
    "TuningResult",
    "default_lambda_grid",
    "default_n_weights",
    "egkl_binary",
    "kernel_with_sigma",
]

#: Default grid of the libsvm-style C = 1 / (2 n lambda); lambda follows from n.
DEFAULT_C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def default_lambda_grid(n: float, c_grid: tuple[float, ...] = DEFAULT_C_GRID) -> np.ndarray:
    """Default lambdas for ``n`` training points: ``1 / (2 n C)`` over ``c_grid``
    (increasing; default :data:`DEFAULT_C_GRID`).

    Returns
    -------
    ndarray, shape (len(c_grid),), decreasing (from least to most flexible fit).
    """
    return 1.0 / (2.0 * n * np.asarray(c_grid, dtype=float))


def default_n_weights(n: float) -> int:
    """Default number of weight intervals M for ``n`` training points.

    ``M = max(floor(2 sqrt(n)), 40)``.  The ladder fits the ``M - 1`` interior weights
    ``m / M``, so its cost is linear in M; the bracket width ``1/M`` alone puts about
    ``1/(4M)`` under each point's error.  ``benchmarks/default_weight_grid.py`` ran the
    default tuned estimator with ten candidate rules on three binary designs, n in
    {100, 400, 1000}, three seeds each (27 cases; results and reasoning in
    ``benchmarks/results/default_weight_grid.md``).  Against the papers' ``floor(sqrt(n))``
    this rule lowered the mean |p_hat - p| by 8.5% and the test EGKL by 13% on average
    (lower error in 26 and 24 of the 27 cases), against the earlier default
    ``max(floor(sqrt(n)), 20)`` by 6% and 10%, for about twice the fits.  A fixed
    M = 80 was as accurate up to n = 400 at up to twice the cost, and 1-3% better at
    n = 1000; coarser grids (10, ``sqrt(n)/2``) were clearly worse.

    Parameters
    ----------
    n : int
        Number of training points of the ladder.

    Returns
    -------
    int
    """
    return max(int(np.floor(2.0 * np.sqrt(max(float(n), 0.0)))), 40)


def egkl_binary(p_pos: np.ndarray, y_pm: np.ndarray) -> float:
    """Empirical GKL of binary estimates ``p_pos`` (m,) for labels ``y_pm`` in {-1, +1} (m,)."""
    p = np.clip(p_pos, 1e-15, 1 - 1e-15)
    return float(-np.mean(np.where(y_pm > 0, np.log(p), np.log(1 - p))))


def kernel_with_sigma(template: Kernel, sigma: float) -> Kernel:
    """``template`` with its RBF width replaced (other kernels unchanged)."""
    if template.name != "rbf" or not np.isfinite(sigma):
        return template
    return Kernel(
        "rbf",
        sigma=float(sigma),
        degree=template.degree,
        coef0=template.coef0,
        gamma=template.gamma,
    )
