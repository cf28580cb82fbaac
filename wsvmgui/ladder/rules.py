"""Rules that turn a ladder's signs into probabilities and brackets.

METHODS section 2.  For a grid ``0 = pi_0 < pi_1 < ... < pi_M = 1`` the ``M - 1`` interior
weights are fitted; by convention ``f_{pi_0} > 0`` and ``f_{pi_M} < 0`` everywhere.  A
decision value of exactly 0 counts as negative.

* Count rule (default): ``c = #{m : f_{pi_m}(x) > 0}``; estimate ``(pi_c + pi_{c+1}) / 2``,
  bracket ``[pi_c, pi_{c+1}]``.
* Extreme rule: ``pi^* = max{pi_m : f > 0}``, ``pi_* = min{pi_m : f < 0}``; estimate
  ``(pi^* + pi_*) / 2``, bracket ``[min, max]`` of the two.
* Interpolate rule: the count rule's bracket, with the estimate where the straight line
  between ``f_{pi_c}(x) > 0`` and ``f_{pi_{c+1}}(x) <= 0`` crosses zero (the dual solution,
  hence ``f_pi(x)``, is piecewise linear in pi; Wang, Shen & Liu 2008, section 4).  For
  the two end brackets, or signs that disagree with the count, it is the midpoint.
Count and extreme agree whenever the signs are monotone in pi.

This module is the one place where signs or decision values become probabilities:
every ladder, the multiclass sub-problems and Probing's threshold counts go through it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .weights import full_grid

RULES = ("count", "extreme", "interpolate")
#: Rules that need only the signs of the decision values.
SIGN_RULES = ("count", "extreme")


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
        lo, hi = count_bracket(positive.sum(axis=1), weights)
    elif rule == "extreme":
        m = positive.shape[1]
        idx = np.arange(1, m + 1)
        upper_pos = np.where(positive, idx, 0).max(axis=1)  # index of pi^*, 0 if none
        lower_neg = np.where(~positive, idx, m + 1).min(axis=1)  # index of pi_*, M if none
        a, b = grid[upper_pos], grid[lower_neg]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
    else:
        raise InputError(f"unknown rule {rule!r}; choose one of {', '.join(SIGN_RULES)}")
    return LadderEstimate(p=0.5 * (lo + hi), lo=lo, hi=hi, monotone=monotone)


def count_bracket(counts: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The count rule's bracket ``[pi_c, pi_{c+1}]`` for counts of positive answers.

    Parameters
    ----------
    counts : ndarray of int, shape (n,)
        Number of fits (or thresholds) answering "positive", in 0..M-1.
    weights : ndarray, shape (M - 1,)
        Interior weights (or thresholds), strictly increasing in (0, 1).

    Returns
    -------
    lo, hi : ndarray, shape (n,)
    """
    grid = full_grid(weights)
    counts = np.asarray(counts, dtype=int)
    return grid[counts], grid[counts + 1]


def estimate_from_decision(
    decision: np.ndarray, weights: np.ndarray, rule: str = "count"
) -> LadderEstimate:
    """Estimate ``P(Y = +1 | x)`` from a ladder's decision values by any rule.

    Parameters
    ----------
    decision : ndarray, shape (n, M - 1)
        ``f_{pi_m}(x_i)``, columns in the order of ``weights``.
    weights : ndarray, shape (M - 1,)
    rule : {"count", "extreme", "interpolate"}

    Returns
    -------
    LadderEstimate
        For "interpolate", ``p`` interpolated and ``lo``, ``hi``, ``monotone`` as the
        count rule gives them.
    """
    decision = np.atleast_2d(np.asarray(decision, dtype=float))
    if rule in SIGN_RULES:
        return probabilities_from_signs(decision > 0, weights, rule)
    if rule != "interpolate":
        raise InputError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    base = probabilities_from_signs(decision > 0, weights, "count")
    grid = full_grid(weights)
    m = decision.shape[1]
    c = (decision > 0).sum(axis=1)
    rows = np.flatnonzero((c >= 1) & (c <= m - 1))
    p = base.p.copy()
    if rows.size:
        ci = c[rows]
        f_lo = decision[rows, ci - 1]  # at pi_c
        f_hi = decision[rows, ci]  # at pi_{c+1}
        ok = (f_lo > 0) & (f_hi <= 0)
        t = np.where(ok, f_lo / np.where(ok, f_lo - f_hi, 1.0), 0.5)
        p[rows] = grid[ci] + t * (grid[ci + 1] - grid[ci])
    return LadderEstimate(p=p, lo=base.lo, hi=base.hi, monotone=base.monotone)
