"""Turning One-vs-All values into probabilities that sum to one.

The K one-against-the-rest ladders each bracket ``p_j`` directly, so their K values need
not sum to one (METHODS section 5).  Two ways to make them a distribution:

* ``"sum"``: divide by their sum (multiplicative).
* ``"simplex"``: the Euclidean projection onto ``{p : p_k >= floor, sum p = 1}`` (additive;
  the closest distribution in L2 to the raw values).

Its tuning (screened from :data:`OVA_SCREEN_MIN_ROWS` training rows per fold, the
estimator's ``_screen_min_rows``): the K sub-problems share every row of the data, so
they share one tuning split, one kernel matrix per (sigma, fold) and one screening round
(:mod:`wsvmgui.ladder.screening`) on one class-stratified subsample; each sub-problem
still keeps the cell of lowest EGKL of its own (the estimate is defined as before).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

OVA_NORMALISATIONS = ("sum", "simplex")

#: One-vs-All screens its tuning where every fold trains on at least this many rows
#: (the binary ladder and the other schemes: 1000).  Each of its K sub-problems is a path
#: on all of a fold's training rows, so the full search costs about K binary ones; the
#: screening round fits every cell on a third of them and the best
#: :attr:`~wsvmgui.ladder.screening.Screening.keep` on the full fold.  Measured
#: (``benchmarks/results/scheme_speed.md``, BLAS on one thread): the digits subsample
#: (n = 700) 14.9 -> 4.1 s of CPU, log loss 0.139 -> 0.124; ``wu2010_ex1`` at n = 800
#: 6.3 -> 2.4 s, L1 0.086 -> 0.079; on the One-vs-All rows of ``accuracy_vs_peers.py
#: --quick`` (``zeng_ex3``, ``zeng_ex4``, ``wu2010_ex4``) L1 0.149 / 0.235 / 0.172 ->
#: 0.154 / 0.210 / 0.175, log loss lower on all three, for a third to a half of the CPU.
OVA_SCREEN_MIN_ROWS = 300


def normalise_sum(raw: np.ndarray) -> np.ndarray:
    """``raw / raw.sum(axis=1)``; ``raw`` (n, K) positive; returns (n, K)."""
    raw = np.asarray(raw, dtype=float)
    return raw / raw.sum(axis=1, keepdims=True)


def project_simplex(raw: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Euclidean projection of each row of ``raw`` (n, K) onto ``{p >= floor, sum p = 1}``.

    Parameters
    ----------
    raw : ndarray, shape (n, K)
    floor : float
        Lower bound for every probability, ``0 <= floor < 1 / K``.

    Returns
    -------
    ndarray, shape (n, K)
    """
    v = np.atleast_2d(np.asarray(raw, dtype=float))
    n, K = v.shape
    if not 0.0 <= floor < 1.0 / K:
        raise InputError(f"the probability floor must lie in [0, 1/K), got {floor!r}")
    total = 1.0 - K * floor
    u = v - floor
    # Sort-based projection onto {u >= 0, sum u = total} (Held, Wolfe & Crowder).
    s = -np.sort(-u, axis=1)
    css = np.cumsum(s, axis=1) - total
    ks = np.arange(1, K + 1)
    cond = s - css / ks > 0
    rho = K - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1)
    return np.maximum(u - theta[:, None], 0.0) + floor


def normalise(raw: np.ndarray, method: str, floor: float = 0.0) -> np.ndarray:
    """Normalise One-vs-All values ``raw`` (n, K) by ``method`` in :data:`OVA_NORMALISATIONS`."""
    if method == "sum":
        return normalise_sum(raw)
    if method == "simplex":
        return project_simplex(raw, floor)
    raise InputError(
        f"unknown One-vs-All normalisation {method!r}; choose one of "
        + ", ".join(OVA_NORMALISATIONS)
    )
