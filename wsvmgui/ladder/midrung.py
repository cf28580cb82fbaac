"""The count measure's saturation, and the ladder's middle rung as the map's input.

The binary estimator's ``calibration="auto"`` (the default since the tenth sitting; by
name ``"auto_midrung"``; docs/notes/calibration.md, "Tenth sitting (branch acc-bcsat)").
The count measure ``p_hat(x)`` (the measure of ``{pi : f_pi(x) > 0}``) orders the points
only by where their label changes along pi; where most of the cross-fitted points change
it outside the grid's end weights ``[pi_1, pi_{M-1}]`` (the two end brackets of the
papers' grid count rule) the count has saturated: the data are separable at the fitted
cell and the estimate sits at the ends for most points. There the map is fitted instead
to the decision value of the ladder's middle rung, ``f_{1/2}(x)`` (the unweighted SVM),
through Platt's sigmoid: a sigmoid map (:func:`~wsvmgui.ladder.recalibration.fit_map`
``"sigmoid"``) applied to ``expit(f_{1/2}(x))`` is ``expit(c + a f_{1/2}(x))``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .engines import AnyLadder, PathLadder

#: The middle rung's weight pi.
MIDRUNG_WEIGHT = 0.5
#: ``calibration="auto"`` maps the middle rung where more than this share of the
#: cross-fitted estimates lies outside the grid's end weights (a majority of the points).
SATURATION_SHARE = 0.5
#: The binary estimator's ``calibration`` value of this rule by name (``"auto"`` is the same).
AUTO_MIDRUNG = "auto_midrung"
#: ``"auto"``'s map, with the tuning search scoring a saturated cell on the middle rung's
#: sigmoid as ``"auto"`` would return it there (eleventh sitting, acc-midtune; a candidate,
#: not the default: :func:`wsvmgui.ladder.search.search_ladders` ``midrung``).
AUTO_MIDTUNE = "auto_midtune"


def saturated_share(p: np.ndarray, weights: np.ndarray) -> float:
    """The share of estimates outside the grid's end weights.

    Parameters
    ----------
    p : ndarray, shape (m,)
        Count-measure estimates.
    weights : ndarray, shape (M - 1,)
        The interior weights, increasing.

    Returns
    -------
    float
        ``mean(p < weights[0] or p > weights[-1])``; 0 for no estimates.
    """
    p = np.asarray(p, dtype=float).ravel()
    w = np.asarray(weights, dtype=float).ravel()
    if p.size == 0:
        return 0.0
    return float(np.mean((p < w[0]) | (p > w[-1])))


def saturated(p: np.ndarray, weights: np.ndarray, share: float | None = None) -> bool:
    """Whether more than ``share`` of the estimates ``p`` (m,) lie outside the grid's end
    ``weights`` (M - 1,) (:func:`saturated_share`); ``share`` None: :data:`SATURATION_SHARE`
    as it is at the call (a study may set the module constant)."""
    return saturated_share(p, weights) > (SATURATION_SHARE if share is None else share)


def middle_decision(ladder: AnyLadder, K_cross: np.ndarray) -> np.ndarray:
    """The ladder's decision value at ``pi = MIDRUNG_WEIGHT``.

    Parameters
    ----------
    ladder : PathLadder or Ladder
    K_cross : ndarray, shape (m, n)
        Kernel rows between the points and the ladder's training points.

    Returns
    -------
    ndarray, shape (m,)
        The exact path's value at 1/2; for a grid ladder, the straight line between its
        two weights around 1/2 (its value there when 1/2 is one of its weights, as on
        every even grid ``m / M``).
    """
    if isinstance(ladder, PathLadder):
        K = np.asarray(K_cross)
        if ladder.columns is not None:
            K = K[:, ladder.columns]
        return np.asarray(ladder.path.decision_at(K, np.array([MIDRUNG_WEIGHT]))).reshape(-1)
    w = np.asarray(ladder.weights, dtype=float)
    F = ladder.decision(K_cross)
    k = int(np.clip(np.searchsorted(w, MIDRUNG_WEIGHT), 1, w.size - 1)) if w.size > 1 else 0
    if w.size == 1:
        return F[:, 0]
    lo, hi = w[k - 1], w[k]
    t = float(np.clip((MIDRUNG_WEIGHT - lo) / (hi - lo), 0.0, 1.0))
    return (1.0 - t) * F[:, k - 1] + t * F[:, k]


def midrung_score(d: np.ndarray) -> np.ndarray:
    """The map's input for middle-rung decision values ``d`` (m,): ``expit(d)`` in (0, 1),
    so that the sigmoid map of it is ``expit(c + a d)``; shape (m,)."""
    return expit(np.asarray(d, dtype=float))


__all__ = [
    "AUTO_MIDRUNG",
    "AUTO_MIDTUNE",
    "MIDRUNG_WEIGHT",
    "SATURATION_SHARE",
    "middle_decision",
    "midrung_score",
    "saturated",
    "saturated_share",
]
