"""Rules that turn a ladder's signs into probabilities and brackets.

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

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .weights import full_grid

RULES = ("count", "extreme")


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
        raise InputError(f"sign matrix has {positive.shape[1]} columns for {grid.size - 2} weights")
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
