"""Pairwise tables: coupling into K-class probabilities, the BP rebuild, and max voting.

METHODS section 5.  A pairwise table is an array ``Q`` of shape (n, K, K) with
``Q[i, j, k] = q_{j|(j,k)}(x_i)``, the estimated ``P(Y = j | x_i, Y in {j, k})``;
``Q[i, k, j] = 1 - Q[i, j, k]`` and the diagonal is unused (set to 1/2).

* Coupling with baseline ``k``: ``p_j = r_j / sum_s r_s``, ``r_s = q_{s|(s,k)} / q_{k|(s,k)}``
  and ``r_k = 1`` (Zeng eq. 5 and 6).
* Per-point baseline (P-SVM and BP): the class that wins the most pairs
  (``q > 1/2``; a value of exactly 1/2 gives each side half a vote); ties go to the class
  with the largest sum of its pairwise ``q``'s, then to the lowest class index.
* BP rebuild (Zeng eq. 11): ``q_{j|(j,j')} = (a - a b) / (a + b - 2 a b)`` with
  ``a = q_{j|(j,k*)}`` and ``b = q_{j'|(j',k*)}``.  The rebuilt table is consistent (every
  pair equals ``r_j / (r_j + r_j')`` of the baseline ratios), so coupling it with any
  baseline gives exactly the baseline-learning probabilities; only max voting differs.
* Least squares (Wu, Lin & Weng 2004, method 2; libsvm's): :func:`couple_least_squares`,
  every pair weighing in at every point; the ``coupling`` option of P-SVM.
* Max voting (TE2): the class with the most pairwise wins; ties go to the higher coupled
  probability.
* Ties of the largest coupled probabilities (:func:`tied_rows`, :func:`break_ties`): a
  grid ladder caps every pairwise ratio at ``2M - 1``, so where the baseline class is
  separable from several others they tie at the cap.  The exact path's estimates are not
  capped, but beyond the resolution of the tuning (:func:`saturate`) they are noise, so
  the baseline schemes saturate them and tie them too; the caller supplies a key (the
  baseline schemes: each pair's decision value at pi = 1/2) that decides, instead of the
  class order.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

#: Pairwise values are kept in ``[Q_EPS, 1 - Q_EPS]`` (ratios up to about 1e12).
Q_EPS = 1e-12
#: Probabilities within this relative distance of the largest count as tied with it.
TIE_RTOL = 1e-9


def clip_pair(q: np.ndarray) -> np.ndarray:
    """Pairwise values ``q`` (any shape) clipped to ``[Q_EPS, 1 - Q_EPS]``."""
    return saturate(q, Q_EPS)


def saturate(q: np.ndarray, floor: float) -> np.ndarray:
    """Pairwise values ``q`` (any shape) clipped to ``[floor, 1 - floor]``.

    Baseline coupling multiplies the odds ``q / (1 - q)`` of the pairs against one class.
    For a point of a third class each such pair extrapolates, and the exact path's
    estimates there can sit anywhere in ``(1 - floor, 1)``: odds of 100 or 200 that no
    tuning score can tell apart (the EGKL floors estimates at
    :data:`~wsvmgui.ladder.search.EGKL_FLOOR`) would otherwise decide the class.  Saturated
    values tie, and the caller breaks the tie with a key (:func:`break_ties`).
    """
    return np.clip(np.asarray(q, dtype=float), floor, 1.0 - floor)


def tied_rows(proba: np.ndarray, rtol: float = TIE_RTOL) -> np.ndarray:
    """Rows of ``proba`` (n, K) whose largest value is shared by several classes; (m,)."""
    P = np.asarray(proba, dtype=float)
    top = P.max(axis=1, keepdims=True)
    return np.flatnonzero((top * (1.0 - rtol) <= P).sum(axis=1) > 1)


def break_ties(proba: np.ndarray, key: np.ndarray, rtol: float = TIE_RTOL) -> np.ndarray:
    """Give each row's tie for the largest probability to the tied class with the largest key.

    The other tied classes lose a relative ``4 rtol`` of their probability to the winner,
    so that the argmax (and ``predict``) follows the key; rows sum to one as before.

    Parameters
    ----------
    proba : ndarray, shape (n, K)
    key : ndarray, shape (n, K)
        Larger favours the class; only compared among the tied classes of a row.
    rtol : float
        Relative distance within which values count as tied (:func:`tied_rows`).

    Returns
    -------
    ndarray, shape (n, K)
    """
    P = np.array(proba, dtype=float)
    top = P.max(axis=1, keepdims=True)
    tied = top * (1.0 - rtol) <= P
    win = np.argmax(np.where(tied, key, -np.inf), axis=1)
    losers = tied.copy()
    losers[np.arange(P.shape[0]), win] = False
    moved = np.where(losers, 4.0 * rtol * P, 0.0)
    P -= moved
    P[np.arange(P.shape[0]), win] += moved.sum(axis=1)
    return P


def tied_mask(proba: np.ndarray, rtol: float = TIE_RTOL) -> np.ndarray:
    """Classes tied for each row's largest probability; bool (n, K) (one True where no tie)."""
    P = np.asarray(proba, dtype=float)
    return P.max(axis=1, keepdims=True) * (1.0 - rtol) <= P


def resolve_ties(proba: np.ndarray, tied: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Share each row's tied probability among its tied classes by their own pairs.

    The tied classes' total probability is kept and divided among them by coupling
    (:func:`couple`, per-point baseline) the sub-table of ``Q`` among just those
    classes: information about the tied classes themselves, where the pairs against the
    common baseline have saturated.  The other classes keep their probabilities.

    Parameters
    ----------
    proba : ndarray, shape (n, K)
    tied : ndarray of bool, shape (n, K)
        The classes to share among in each row (rows with fewer than two are unchanged).
    Q : ndarray, shape (n, K, K)
        Pairwise table holding at least every pair among each row's tied classes.

    Returns
    -------
    ndarray, shape (n, K); rows sum as before.
    """
    P = np.array(proba, dtype=float)
    tied = np.asarray(tied, dtype=bool)
    patterns, which = np.unique(tied, axis=0, return_inverse=True)
    for g, pattern in enumerate(patterns):
        cls = np.flatnonzero(pattern)
        if cls.size < 2:
            continue
        rows = np.flatnonzero(which.ravel() == g)
        share = couple(Q[np.ix_(rows, cls, cls)])
        P[np.ix_(rows, cls)] = P[np.ix_(rows, cls)].sum(axis=1, keepdims=True) * share
    return P


def empty_table(n: int, K: int) -> np.ndarray:
    """A table of shape (n, K, K) filled with 1/2."""
    return np.full((n, K, K), 0.5)


def set_pair(Q: np.ndarray, j: int, k: int, q_j: np.ndarray) -> None:
    """Store ``q_{j|(j,k)} = q_j`` (n,) and its complement in table ``Q`` (n, K, K)."""
    Q[:, j, k] = q_j
    Q[:, k, j] = 1.0 - q_j


def check_table(Q: np.ndarray) -> np.ndarray:
    """Validate a pairwise table: shape (n, K, K), K >= 2, off-diagonal values in (0, 1)."""
    Q = np.asarray(Q, dtype=float)
    if Q.ndim != 3 or Q.shape[1] != Q.shape[2] or Q.shape[1] < 2:
        raise InputError(f"a pairwise table must have shape (n, K, K) with K >= 2, got {Q.shape}")
    off = ~np.eye(Q.shape[1], dtype=bool)
    vals = Q[:, off]
    if not np.all(np.isfinite(vals)) or vals.min(initial=0.5) <= 0 or vals.max(initial=0.5) >= 1:
        raise InputError("pairwise probabilities must lie strictly between 0 and 1")
    return Q


def pairwise_votes(Q: np.ndarray) -> np.ndarray:
    """Pairs won by each class: ``#{k : q_{j|(j,k)} > 1/2}`` plus 1/2 per exact tie.

    Parameters
    ----------
    Q : ndarray, shape (n, K, K)

    Returns
    -------
    ndarray, shape (n, K)
    """
    Q = np.asarray(Q, dtype=float)
    off = ~np.eye(Q.shape[1], dtype=bool)[None, :, :]
    wins = np.where(off, (Q > 0.5) + 0.5 * (Q == 0.5), 0.0)
    return wins.sum(axis=2)


def per_point_baseline(Q: np.ndarray) -> np.ndarray:
    """Per-point baseline class index (n,): most pairwise wins, ties by the sum of q's."""
    Q = np.asarray(Q, dtype=float)
    K = Q.shape[1]
    off = ~np.eye(K, dtype=bool)[None, :, :]
    strength = np.where(off, Q, 0.0).sum(axis=2)  # < K - 1
    key = pairwise_votes(Q) * (2.0 * K) + strength  # votes come in steps of 1/2
    return np.argmax(key, axis=1)


def couple(Q: np.ndarray, baseline: np.ndarray | int | None = None) -> np.ndarray:
    """K-class probabilities from a pairwise table with a baseline per point.

    Parameters
    ----------
    Q : ndarray, shape (n, K, K)
    baseline : int, ndarray of int shape (n,), or None
        Baseline class index for every point, one per point, or None for
        :func:`per_point_baseline`.

    Returns
    -------
    ndarray, shape (n, K); rows sum to 1.
    """
    Q = check_table(Q)
    n, K, _ = Q.shape
    if baseline is None:
        baseline = per_point_baseline(Q)
    base = np.broadcast_to(np.asarray(baseline, dtype=int), (n,))
    if base.min(initial=0) < 0 or base.max(initial=0) >= K:
        raise InputError(f"baseline class index out of range 0..{K - 1}")
    rows = np.arange(n)
    num = Q[rows, :, base]  # q_{s|(s,k)}, shape (n, K)
    den = Q[rows, base, :]  # q_{k|(s,k)} = 1 - num off the diagonal
    r = num / den
    r[rows, base] = 1.0
    return r / r.sum(axis=1, keepdims=True)


def couple_least_squares(Q: np.ndarray) -> np.ndarray:
    """K-class probabilities from a pairwise table by Wu, Lin & Weng's (2004) method 2.

    The ``p`` on the simplex minimising ``sum_j sum_{k != j} (q_{k|(j,k)} p_j -
    q_{j|(j,k)} p_k)^2`` (libsvm's coupling), from the linear system of its Lagrangian.
    Unlike :func:`couple` every pair enters every point's estimate, so one poor pair
    (a pair extrapolating at a third class's points, or the baseline's) weighs less.
    On a consistent table both give the same probabilities.

    Parameters
    ----------
    Q : ndarray, shape (n, K, K)

    Returns
    -------
    ndarray, shape (n, K); rows sum to 1 (tiny negative solutions clipped to 0 first).
    """
    Q = check_table(Q)
    n, K, _ = Q.shape
    off = ~np.eye(K, dtype=bool)
    Qt = Q.transpose(0, 2, 1)  # Qt[:, j, k] = q_{k|(j,k)}
    A = np.where(off, -Q * Qt, 0.0)
    A[:, np.arange(K), np.arange(K)] = np.where(off, Qt**2, 0.0).sum(axis=2)
    M = np.zeros((n, K + 1, K + 1))
    M[:, :K, :K] = A
    M[:, :K, K] = M[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1))
    rhs[:, K] = 1.0
    p = np.clip(np.linalg.solve(M, rhs[:, :, None])[:, :K, 0], 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


#: How a pairwise table becomes K-class probabilities (the ``coupling`` of P-SVM).
COUPLINGS = {"baseline": couple, "least_squares": couple_least_squares}


def couple_baseline(q_base: np.ndarray, k_star: int) -> np.ndarray:
    """Baseline learning (Zeng eq. 6): probabilities from the K - 1 pairs against ``k_star``.

    Parameters
    ----------
    q_base : ndarray, shape (n, K)
        ``q_base[:, j] = q_{j|(j,k*)}``; column ``k_star`` is ignored.
    k_star : int

    Returns
    -------
    ndarray, shape (n, K); rows sum to 1.
    """
    q = np.array(q_base, dtype=float)
    q[:, k_star] = 0.5
    if not np.all((q > 0) & (q < 1)):
        raise InputError("pairwise probabilities must lie strictly between 0 and 1")
    r = q / (1.0 - q)
    r[:, k_star] = 1.0
    return r / r.sum(axis=1, keepdims=True)


def rebuild_table(q_base: np.ndarray, k_star: int) -> np.ndarray:
    """BP rebuild (Zeng eq. 11): a full pairwise table from the pairs against ``k_star``.

    Parameters
    ----------
    q_base : ndarray, shape (n, K)
        ``q_base[:, j] = q_{j|(j,k*)}`` for ``j != k_star``; column ``k_star`` is ignored.
    k_star : int

    Returns
    -------
    ndarray, shape (n, K, K)
    """
    q = np.asarray(q_base, dtype=float)
    n, K = q.shape
    Q = empty_table(n, K)
    others = [j for j in range(K) if j != k_star]
    for j in others:
        set_pair(Q, j, k_star, q[:, j])
    for ai, j in enumerate(others):
        for jp in others[ai + 1 :]:
            a, b = q[:, j], q[:, jp]
            set_pair(Q, j, jp, (a - a * b) / (a + b - 2.0 * a * b))
    return Q


def vote_predict(Q: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """Max-voting class index (n,); ties go to the higher probability in ``proba`` (n, K)."""
    key = pairwise_votes(Q) * 4.0 + np.asarray(proba, dtype=float)  # vote steps of 1/2 > 1/4
    return np.argmax(key, axis=1)


__all__ = [
    "COUPLINGS",
    "Q_EPS",
    "break_ties",
    "check_table",
    "clip_pair",
    "couple",
    "couple_baseline",
    "couple_least_squares",
    "empty_table",
    "pairwise_votes",
    "per_point_baseline",
    "rebuild_table",
    "resolve_ties",
    "saturate",
    "set_pair",
    "tied_mask",
    "tied_rows",
    "vote_predict",
]
