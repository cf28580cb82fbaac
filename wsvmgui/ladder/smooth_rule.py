"""The smoothed count rule: the measure of ``{pi : f_pi(x) > 0}`` with a smooth step.

The count rule (METHODS section 2) reads ``p_hat(x) = int_0^1 1{f_pi(x) > 0} d pi`` off a
ladder.  The smoothed rule replaces the indicator by the logistic step ``s(z) = 1 / (1 +
exp(-z))`` of the decision value in units of a width ``h``:

    p_h(x) = int_0^1 s(f_pi(x) / h) d pi.

``f_pi(x)`` is in margin units (the hinge fixes ``y f = 1`` on the elbow), so one grid
of widths serves every data set.  Between consecutive breakpoints ``p_k < p_{k+1}`` of an
exact path (or of a grid ladder, read as linear in pi between its weights) ``f`` is
linear, from ``a`` to ``b``, so each segment contributes in closed form

    (p_{k+1} - p_k) (S(b / h) - S(a / h)) / ((b - a) / h),   S(z) = log(1 + e^z),

(a softplus difference; the step itself where ``b = a``).  ``h -> 0`` gives the count
rule's measure exactly (``h = 0`` is accepted and computes it), apart from intervals of
pi on which ``f`` is exactly 0 (the step counts them as 1/2, the count rule as 0).  As
``h`` grows, ``p_h -> 1/2 + (1 / 4h) int_0^1 f_pi(x) d pi``: the mean decision value over
the weights, a continuous score.  ``p_h`` lies in (0, 1), is non-decreasing in every
``f_pi(x)``, and for ``h > 0`` strictly inside (0, 1).  docs/notes/calibration.md
(section "The smoothed count rule on the exact path") has the measurements: it is
not offered as an estimator rule (it ties the count rule).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .weights import full_grid

#: Below this ``|b - a| / h`` a segment's mean step is its midpoint value plus the
#: second-order term (error O(d^4)); above it the softplus difference.
_TAYLOR = 1e-4


def check_widths(widths: Sequence[float] | np.ndarray | float) -> np.ndarray:
    """Widths as a float array, shape (W,); finite and ``>= 0`` (0: the count rule)."""
    w = np.atleast_1d(np.asarray(widths, dtype=float)).ravel()
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InputError("smooth rule widths must be finite and >= 0")
    return w


def _log1p_exp_neg_abs(z: np.ndarray) -> np.ndarray:
    return np.log1p(np.exp(-np.abs(z)))


def mean_step(a: np.ndarray, b: np.ndarray, h: float) -> np.ndarray:
    """Mean of ``s(f / h)`` over a segment on which ``f`` runs linearly from ``a`` to ``b``.

    Parameters
    ----------
    a, b : ndarray, same shape
        Decision values at the segment's two ends.
    h : float
        Width, ``>= 0``; 0 gives the indicator's mean (``f = 0`` counts as negative), the
        count rule's.

    Returns
    -------
    ndarray, the shape of ``a``
        Values in [0, 1].
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if h == 0:
        num = np.maximum(a, 0.0) + np.maximum(b, 0.0)
        den = np.abs(a) + np.abs(b)
        return num / np.where(den > 0, den, 1.0)
    A, B = a / h, b / h
    D = B - A
    small = np.abs(D) < _TAYLOR
    Ds = np.where(small, 1.0, D)
    # S(B) - S(A) = (max(B,0) - max(A,0)) + (g(B) - g(A)), g(z) = log1p(exp(-|z|)): the
    # first part over D is exactly 1 (or 0) when A and B share a sign, no cancellation.
    big = (np.maximum(B, 0.0) - np.maximum(A, 0.0)) / Ds
    big += (_log1p_exp_neg_abs(B) - _log1p_exp_neg_abs(A)) / Ds
    M = 0.5 * (A + B)
    s = 0.5 * (1.0 + np.tanh(0.5 * M))  # logistic, overflow-free
    s2 = s * (1 - s) * (1 - 2 * s)  # s''
    near = s + s2 * D * D / 24.0
    return np.clip(np.where(small, near, big), 0.0, 1.0)


def smooth_measure(F: np.ndarray, pis: np.ndarray, widths) -> np.ndarray:
    """``p_h`` from decision values at the breakpoints of a piecewise-linear path.

    Parameters
    ----------
    F : ndarray, shape (m, B)
        ``f_{p_k}(x_j)`` at breakpoints ``pis``.
    pis : ndarray, shape (B,)
        Non-decreasing, from 0 to 1 (repeated values: zero-length segments, ignored).
    widths : float or array-like, shape (W,)

    Returns
    -------
    ndarray, shape (W, m)
    """
    F = np.atleast_2d(np.asarray(F, dtype=float))
    pis = np.asarray(pis, dtype=float)
    if F.shape[1] != pis.size or pis.size < 2:
        raise InputError(f"decision values have {F.shape[1]} columns for {pis.size} breakpoints")
    w = check_widths(widths)
    L = np.diff(pis)
    if np.any(L < 0):
        raise InputError("breakpoints must be non-decreasing")
    out = np.empty((w.size, F.shape[0]))
    for i, h in enumerate(w):
        out[i] = mean_step(F[:, :-1], F[:, 1:], float(h)) @ L
    return out


def _path_measure(path, K_cross: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:func:`smooth_measure` over a :class:`~wsvmgui.ladder.path.WeightPath`, streamed
    over its blocks of breakpoints (the (m, B) matrix is never held); shape (W, m)."""
    m = np.shape(K_cross)[0]
    out = np.zeros((w.size, m))
    pis = path.pis
    for r0, KT in path._chunks(K_cross):
        r1 = r0 + KT.shape[1]
        for k0, Fb in path._iter_blocks(KT):
            L = np.diff(pis[k0 : k0 + Fb.shape[0]])
            keep = L > 0
            if not keep.any():
                continue
            a, b, L = Fb[:-1][keep], Fb[1:][keep], L[keep]
            for i, h in enumerate(w):
                out[i, r0:r1] += L @ mean_step(a, b, float(h))
    return out


def smooth_estimate(ladder, K_cross: np.ndarray, widths) -> np.ndarray:
    """The smoothed count rule at new points, for every width at once.

    Parameters
    ----------
    ladder : PathLadder, WeightPath or Ladder
        An exact path (``f`` exact and linear between its breakpoints) or a grid ladder
        (read as linear in pi between its weights, ``f = +1`` at pi = 0 and ``-1`` at
        pi = 1, as the path's ends).
    K_cross : ndarray, shape (m, n)
        Kernel between the new points and the ladder's training points.
    widths : float or array-like, shape (W,)
        Widths ``h >= 0`` in margin units (0: the count rule).

    Returns
    -------
    ndarray, shape (W, m)
        ``p_h`` per width, in [0, 1].
    """
    w = check_widths(widths)
    path = getattr(ladder, "path", None)
    if path is not None:  # PathLadder: its path, over the columns it spreads to
        return _path_measure(path, ladder._spread(K_cross), w)
    if hasattr(ladder, "pis") and hasattr(ladder, "_iter_blocks"):
        return _path_measure(ladder, K_cross, w)
    F = np.asarray(ladder.decision(K_cross), dtype=float)
    ones = np.ones((F.shape[0], 1))
    return smooth_measure(np.hstack([ones, F, -ones]), full_grid(ladder.weights), w)


__all__ = ["check_widths", "mean_step", "smooth_estimate", "smooth_measure"]
