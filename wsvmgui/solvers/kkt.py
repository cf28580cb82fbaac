"""The optimality check every hinge-loss fit shares: feasibility and complementarity.

A (weighted, possibly multiclass) hinge-loss fit has, for each point ``i`` and each of
its ``J`` margins ``m_ij`` (binary: ``J = 1``, ``m_i = y_i f(x_i)``; K classes: the pair
margins ``f_{y_i} - f_k``), a dual variable ``alpha_ij`` with ``0 <= alpha_ij`` and
``sum_j alpha_ij <= w_i``.  With ``r_ij = alpha_ij / w_i`` and the optimal slack
``xi_i = max(0, max_j (1 - m_ij))``, an optimum satisfies

* feasibility: ``r_ij >= 0`` and ``sum_j r_ij <= 1``;
* complementarity: ``r_ij (xi_i - 1 + m_ij) = 0`` (a margin with a positive dual is
  active) and ``(1 - sum_j r_ij) xi_i = 0`` (a point with slack has its full weight).

:func:`hinge_kkt_residual` measures the largest violation of these, in margin units,
without thresholds; it is zero exactly when they hold.  Each problem adds its own
stationarity conditions (the binary dual's equality, the multiclass fit's stationarity in
``W`` and ``b``): :func:`wsvmgui.solvers.wsvm.kkt_residuals` and
:func:`wsvmgui.joint.subproblem.kkt_residual`.
"""

from __future__ import annotations

import numpy as np


def hinge_kkt_residual(margins: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Largest violation of feasibility and complementarity of several fits.

    Parameters
    ----------
    margins : ndarray, shape (F, n, J)
        Margins ``m_ij`` of F fits.
    r : ndarray, shape (F, n, J)
        Relative duals ``alpha_ij / w_i``.

    Returns
    -------
    ndarray, shape (F,)
    """
    axes = (1, 2)
    rs = r.sum(axis=2)
    feas = np.maximum(np.maximum((-r).max(axis=axes), (rs - 1.0).max(axis=1)), 0.0)
    xi = np.maximum(0.0, (1.0 - margins).max(axis=2))
    pair = (np.clip(r, 0.0, 1.0) * (xi[:, :, None] - 1.0 + margins)).max(axis=axes)
    box = (np.clip(1.0 - rs, 0.0, 1.0) * xi).max(axis=1)
    return np.maximum.reduce([feas, pair, box])
