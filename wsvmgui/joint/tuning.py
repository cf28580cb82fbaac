"""Pieces for tuning the joint fit cheaply: a screening round on a coarser simplex grid.

Tuning fits one whole simplex grid per (lambda, sigma) cell and fold and scores it by the
cross-entropy of the tuning rows (paper Section 4.3).  A grid of spacing ``1 / N`` has
``C(N - 1, K - 1)`` weights, and with warm starts its cost grows about linearly in ``N``
(the path along the snake order is about ``N / 2`` long for K = 3; every weight's fit
starts from its neighbour's answer, :mod:`.active_set`).  Screening is the joint
counterpart of the ladders' (:mod:`wsvmgui.ladder.screening`):

1. every cell is fitted on every fold on the coarser grid of
   :meth:`JointScreening.resolution` (``N // factor``) and scored by
   :func:`cross_entropy` with that grid's probabilities;
2. the :attr:`JointScreening.keep` cells of lowest score are fitted and scored on the
   full grid, and the best of those is chosen as without screening.

How it plugs into a tuning loop (``wsvmgui/estimators/joint.py``, or a generic grid
search): build ``coarse = coarse_grid(grid, screening)``; run round 1 with
:func:`wsvmgui.joint.grid_fit.fit_grids` on ``coarse`` (the same jobs, the same shared
feature maps and problems), score each cell with ``cross_entropy(pred, coarse, ...)``
(``pred`` from ``GridFit.predict_classes`` on the fold's tuning rows), keep
``screening.survivors(scores)``, and run round 2 on ``grid`` for those cells only.  The
progress total is ``cells x folds x coarse.size + keep x folds x grid.size`` (+ the
refit's ``grid.size``), known before round 1.  ``benchmarks/joint_tuning.py`` measures
the saving and the choices against the full search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .schemes import border_to_proba, direct_scheme, indirect_scheme, proba_to_border
from .simplex_grid import SimplexGrid

#: Floor on probabilities (the estimator's ``PROBA_FLOOR``): keeps log-likelihoods finite.
PROBA_FLOOR = 1e-6


def scheme_proba(pred: np.ndarray, grid: SimplexGrid, scheme: str, h_method: str) -> np.ndarray:
    """Probabilities from grid predictions, as the estimator computes them.

    Parameters
    ----------
    pred : ndarray of int, shape (n, G)
        Class predicted at every weight of ``grid``.
    grid : SimplexGrid
    scheme : {"indirect", "direct"}
        The direct scheme falls back to the indirect estimate where no cell of K
        distinct classes exists.
    h_method : {"count", "continuous"}

    Returns
    -------
    ndarray, shape (n, K)
        Floored at :data:`PROBA_FLOOR`, rows summing to 1.
    """
    p_ind, _ = indirect_scheme(pred, grid, h_method)
    if scheme == "direct":
        de = direct_scheme(pred, grid)
        p = border_to_proba(np.where(de.found[:, None], de.border, proba_to_border(p_ind)))
    elif scheme == "indirect":
        p = p_ind
    else:
        raise InputError(f"unknown scheme {scheme!r}; choose indirect or direct")
    p = np.maximum(p, PROBA_FLOOR)
    return p / p.sum(axis=1, keepdims=True)


def cross_entropy(
    pred: np.ndarray, grid: SimplexGrid, codes: np.ndarray, scheme: str, h_method: str
) -> float:
    """Summed cross-entropy ``-sum_i log p_hat_{y_i}(x_i)`` of tuning rows; pred (n, G)."""
    p = scheme_proba(pred, grid, scheme, h_method)
    codes = np.asarray(codes, dtype=int)
    return float(-np.sum(np.log(p[np.arange(codes.size), codes])))


@dataclass(frozen=True)
class JointScreening:
    """How joint tuning is screened (see the module docstring).

    Attributes
    ----------
    factor : int >= 2
        The screening grid's spacing is ``factor`` times the full grid's.
    keep : int >= 1
        Cells fitted on the full grid.
    """

    factor: int = 2
    keep: int = 3

    def __post_init__(self) -> None:
        if int(self.factor) != self.factor or self.factor < 2:
            raise InputError(f"screening factor must be an integer >= 2, got {self.factor!r}")
        if int(self.keep) != self.keep or self.keep < 1:
            raise InputError(f"screening must keep at least one cell, got {self.keep!r}")

    def resolution(self, K: int, N: int) -> int:
        """``N`` of the screening grid: ``N // factor``, at least ``K + 1``."""
        return max(int(K) + 1, int(N) // int(self.factor))

    def applies(self, n_cells: int, K: int, N: int) -> bool:
        """Screen only when cells would be dropped and the screening grid is coarser."""
        return n_cells > self.keep and self.resolution(K, N) < N

    def survivors(self, scores: Sequence[float] | np.ndarray) -> np.ndarray:
        """Indices of the ``keep`` lowest scores (NaN last, ties by index), ascending."""
        s = np.asarray(scores, dtype=float)
        order = np.lexsort((np.arange(s.size), np.where(np.isnan(s), np.inf, s)))
        return np.sort(order[: self.keep])


def coarse_grid(grid: SimplexGrid, screening: JointScreening) -> SimplexGrid:
    """The screening round's grid for ``grid``."""
    return SimplexGrid.build(grid.K, screening.resolution(grid.K, grid.N))
