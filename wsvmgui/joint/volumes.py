"""Volume shares ``h_k(p)`` of the simplex regions and their inversion (indirect scheme).

For class probabilities ``p`` the weighted Bayes rule ``argmax_k pi_k p_k`` splits the
weight simplex into regions ``R_k``; ``h_k(p)`` is the share of ``R_k``.  Two versions:

- continuous (METHODS section 4), with ``r_j = 1 / p_j``::

      h_k(p) = sum_{S subset of [K] minus k} (-1)^|S| r_k / (r_k + sum_{j in S} r_j)

  (``2^(K-1)`` terms; equals the paper's K = 3 formula);
- count: the exact share of the interior grid points ``m / N`` that fall in ``R_k``,
  the quantity the grid's class shares estimate at finite N.

:func:`invert_shares` solves ``h(p) = prop`` for ``p`` on the simplex in softmax
coordinates, vectorised over points.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

#: Share given to a class that no grid point predicts, in grid points (continuity
#: correction, so its probability is small but not 0).
ZERO_COUNT_CORRECTION = 0.5
#: Softmax coordinates are kept within +-THETA_MAX (probability ratios up to e^THETA_MAX).
THETA_MAX = 25.0


def h_continuous(p: np.ndarray) -> np.ndarray:
    """Continuous volume shares ``h(p)``; ``p`` (n, K) with positive rows -> (n, K).

    Rows need not sum to 1 (``h`` is scale-free).
    """
    p = np.atleast_2d(np.asarray(p, dtype=float))
    n, K = p.shape
    r = 1.0 / np.maximum(p, 1e-300)
    out = np.zeros((n, K))
    for k in range(K):
        others = [j for j in range(K) if j != k]
        acc = np.ones(n)
        for size in range(1, K):
            sign = -1.0 if size % 2 else 1.0
            for S in combinations(others, size):
                acc += sign * r[:, k] / (r[:, k] + r[:, list(S)].sum(axis=1))
        out[:, k] = acc
    return np.clip(out, 0.0, 1.0)


def h_paper_k3(p: np.ndarray) -> np.ndarray:
    """The paper's K = 3 formula for ``h_3`` (Section 3.2); p (n, 3) -> (n,)."""
    p1, p2, p3 = np.asarray(p, dtype=float).T
    num = p3**2 * (p2 * p3 + p1 * p3 + 2 * p1 * p2)
    den = (p1 + p3) * (p2 + p3) * (p1 * p2 + p1 * p3 + p2 * p3)
    return num / den


def h_count(p: np.ndarray, weights: np.ndarray, block: int = 5_000_000) -> np.ndarray:
    """Share of the grid ``weights`` (G, K) assigned to each class by ``argmax pi_k p_k``.

    Parameters
    ----------
    p : ndarray, shape (n, K)
    weights : ndarray, shape (G, K)

    Returns
    -------
    ndarray, shape (n, K)
    """
    p = np.atleast_2d(np.asarray(p, dtype=float))
    n, K = p.shape
    G = weights.shape[0]
    out = np.zeros((n, K))
    step = max(1, block // max(G, 1))
    w = np.asarray(weights, dtype=float)
    for lo in range(0, n, step):
        pb = p[lo : lo + step]
        best = np.multiply.outer(pb[:, 0], w[:, 0])
        cls = np.zeros(best.shape, dtype=np.int8)
        for k in range(1, K):
            v = np.multiply.outer(pb[:, k], w[:, k])
            upd = v > best
            np.maximum(best, v, out=best)
            np.copyto(cls, np.int8(k), where=upd)
        for k in range(K):
            out[lo : lo + step, k] = np.count_nonzero(cls == k, axis=1)
    return out / G


def _theta_to_p(theta: np.ndarray) -> np.ndarray:
    z = np.concatenate([theta, np.zeros((theta.shape[0], 1))], axis=1)
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _p_to_theta(p: np.ndarray) -> np.ndarray:
    lp = np.log(np.maximum(p, 1e-300))
    return np.clip(lp[:, :-1] - lp[:, -1:], -THETA_MAX, THETA_MAX)


def _jacobian(theta: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d h_continuous[:K-1] / d theta by central differences; shape (n, K-1, K-1)."""
    n, k1 = theta.shape
    J = np.empty((n, k1, k1))
    for a in range(k1):
        tp, tm = theta.copy(), theta.copy()
        tp[:, a] += eps
        tm[:, a] -= eps
        hp = h_continuous(_theta_to_p(tp))[:, :k1]
        hm = h_continuous(_theta_to_p(tm))[:, :k1]
        J[:, :, a] = (hp - hm) / (2 * eps)
    return J


def _newton(theta, target, h_fun, n_iter: int, exact_tol: float = 0.0):
    """Damped Newton steps with the continuous Jacobian; keeps each point's best iterate.

    Points whose residual (L1) is at most ``exact_tol`` stop early.
    """
    k1 = theta.shape[1]
    theta = theta.copy()
    best = theta.copy()
    best_res = np.abs(h_fun(_theta_to_p(theta)) - target).sum(axis=1)
    active = np.flatnonzero(best_res > exact_tol)
    for _ in range(n_iter):
        if active.size == 0:
            break
        th, tg = theta[active], target[active]
        res_vec = (tg - h_fun(_theta_to_p(th)))[:, :k1]
        J = _jacobian(th) + 1e-10 * np.eye(k1)[None]
        step = np.linalg.solve(J, res_vec[:, :, None])[:, :, 0]
        norm = np.linalg.norm(step, axis=1, keepdims=True)
        step *= np.minimum(1.0, 2.0 / np.maximum(norm, 1e-300))
        improved = np.zeros(active.size, bool)
        new_th = np.clip(th + 0.5 * step, -THETA_MAX, THETA_MAX)
        t = 1.0
        for _ in range(4):
            trial = np.clip(th + t * step, -THETA_MAX, THETA_MAX)
            res = np.abs(h_fun(_theta_to_p(trial)) - tg).sum(axis=1)
            ok = (res < best_res[active]) & ~improved
            new_th[ok] = trial[ok]
            best[active[ok]] = trial[ok]
            best_res[active[ok]] = res[ok]
            improved |= ok
            t *= 0.5
        # points without improvement still move (a piecewise-constant h can be flat)
        theta[active] = new_th
        active = active[best_res[active] > exact_tol]
    return best, best_res


def shares_from_counts(counts: np.ndarray) -> np.ndarray:
    """Grid shares with a continuity correction for classes no grid point predicts.

    Parameters
    ----------
    counts : ndarray, shape (n, K)
        Number of grid points predicting each class.

    Returns
    -------
    ndarray, shape (n, K); rows sum to 1.
    """
    c = np.asarray(counts, dtype=float)
    c = np.where(c > 0, c, ZERO_COUNT_CORRECTION)
    return c / c.sum(axis=1, keepdims=True)


def invert_shares(
    prop: np.ndarray, method: str = "count", weights: np.ndarray | None = None, n_iter: int = 30
) -> np.ndarray:
    """Solve ``h(p) = prop`` for ``p``.

    Parameters
    ----------
    prop : ndarray, shape (n, K)
        Class shares, rows summing to 1 and positive.
    method : {"count", "continuous"}
        ``h`` to invert: the exact grid count (needs ``weights``) or the continuous
        volume share.  The count is refined from the continuous solution with Newton
        steps that use the continuous Jacobian, keeping each point's best iterate.
    weights : ndarray, shape (G, K), optional
        The grid, for ``method="count"``.
    n_iter : int
        Newton steps per stage.

    Returns
    -------
    ndarray, shape (n, K); rows sum to 1.
    """
    prop = np.atleast_2d(np.asarray(prop, dtype=float))
    theta0 = _p_to_theta(np.clip(prop, 1e-12, None))
    theta, _ = _newton(theta0, prop, h_continuous, n_iter, exact_tol=1e-10)
    if method == "continuous":
        return _theta_to_p(theta)
    if method != "count":
        raise ValueError(f"unknown inversion method {method!r}")
    if weights is None:
        raise ValueError("the count inversion needs the grid weights")

    def h_fun(p):
        return h_count(p, weights)

    # Counts move in steps of 1/G: a residual below half a step is an exact match.
    theta, _ = _newton(theta, prop, h_fun, max(n_iter // 3, 8), exact_tol=0.5 / weights.shape[0])
    return _theta_to_p(theta)
