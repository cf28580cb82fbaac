"""The "interpolate" rule: where a ladder's decision values cross zero, not just the bracket.

The count rule (METHODS section 2) brackets ``p(x)`` in ``[pi_c, pi_{c+1}]`` with
``c = #{m : f_{pi_m}(x) > 0}`` and returns the midpoint, so every estimate carries a
quantisation error of up to ``1 / (2M)``.  The dual solution of the weighted SVM is
piecewise linear in pi (Wang, Shen & Liu 2008, section 4), hence so is ``f_pi(x)``: the
point where the straight line between ``f_{pi_c}(x) > 0`` and ``f_{pi_{c+1}}(x) <= 0``
crosses zero is the natural estimate inside the bracket.

Rule "interpolate": for an interior bracket (both ends fitted weights) whose end values
have the expected signs, return that crossing; otherwise (the two end brackets
``[0, pi_1]`` and ``[pi_{M-1}, 1]``, or signs that disagree with the count) return the
count rule's midpoint.  The bracket itself is the count rule's, so ``lo <= p <= hi``
always holds and the estimate stays in ``[1/(2M), 1 - 1/(2M)]``-like bounds
(at least ``pi_1 / 2`` from 0 and 1).
"""

from __future__ import annotations

import numpy as np

from ..ladder.rules import LadderEstimate, probabilities_from_signs
from ..ladder.weights import full_grid

INTERPOLATE = "interpolate"


def interpolated_estimate(decision: np.ndarray, weights: np.ndarray) -> LadderEstimate:
    """Probabilities from a ladder's decision values by the "interpolate" rule.

    Parameters
    ----------
    decision : ndarray, shape (n, M - 1)
        ``f_{pi_m}(x_i)``, columns in the order of ``weights``.
    weights : ndarray, shape (M - 1,)

    Returns
    -------
    LadderEstimate
        ``p`` interpolated; ``lo``, ``hi`` and ``monotone`` as the count rule gives them.
    """
    decision = np.atleast_2d(np.asarray(decision, dtype=float))
    base = probabilities_from_signs(decision > 0, weights, "count")
    grid = full_grid(weights)
    n, m = decision.shape
    c = (decision > 0).sum(axis=1)
    interior = (c >= 1) & (c <= m - 1)
    rows = np.flatnonzero(interior)
    p = base.p.copy()
    if rows.size:
        ci = c[rows]
        f_lo = decision[rows, ci - 1]  # at pi_c
        f_hi = decision[rows, ci]  # at pi_{c+1}
        ok = (f_lo > 0) & (f_hi <= 0)
        t = np.where(ok, f_lo / np.where(ok, f_lo - f_hi, 1.0), 0.5)
        p[rows] = grid[ci] + t * (grid[ci + 1] - grid[ci])
    return LadderEstimate(p=p, lo=base.lo, hi=base.hi, monotone=base.monotone)
