"""Crossing diagnostics for any weight ladder (Wu & Liu 2011; METHODS section 3).

Two boundaries ``{f_{pi_j} = 0}`` and ``{f_{pi_k} = 0}`` with ``pi_j < pi_k`` cross inside the
convex hull of the training inputs when some hull point ``z`` has ``f_{pi_k}(z) > 0`` but
``f_{pi_j}(z) <= 0``: the larger weight says "above" where the smaller one says "below",
and the point's sign sequence is not monotone in pi.  The hull is sampled densely and
reproducibly by random convex combinations of a few training points (segments, triangles,
...; by Caratheodory every hull point of R^p is a combination of p + 1 training points).

Two spaces:

``"input"``
    the combinations are input points ``z = sum_i w_i x_i``, evaluated by the ladder's
    decision function: the hull a user sees.
``"feature"``
    the combinations are taken of the fits' values at the training points,
    ``sum_i w_i f(x_i)``: the hull of the training points in the feature space where the
    kernel fit is linear (the kernel rows of Wu & Liu section 3.2).  For the linear
    kernel both spaces agree; for a kernel only this one carries the non-crossing
    guarantee.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .engines import PathLadder
from .grid import Ladder
from .weights import check_weights

SPACES = ("input", "feature")


@dataclass(frozen=True)
class CrossingReport:
    """How much a ladder's boundaries cross on a sample of points.

    Attributes
    ----------
    weights : ndarray, shape (M - 1,)
    space : str
        ``"input"``, ``"feature"`` or ``"points"`` (given points, no hull sampling).
    n_points : int
        Points examined.
    crossing_pairs : ndarray of int, shape (P, 2)
        Column index pairs ``(j, k)``, ``j < k``, whose boundaries cross on the sample.
    n_nonmonotone : int
        Points whose signs are not monotone in pi.
    depth : float
        Largest ``min(f_k(z), -f_j(z))`` over crossing pairs and points: how far past zero
        the worst crossing goes (<= tol when nothing crosses).
    tol : float
        Decision values in ``[-tol, tol]`` counted as neither side.
    """

    weights: np.ndarray
    space: str
    n_points: int
    crossing_pairs: np.ndarray
    n_nonmonotone: int
    depth: float
    tol: float

    @property
    def n_crossing_pairs(self) -> int:
        """Number of weight pairs whose boundaries cross."""
        return int(self.crossing_pairs.shape[0])

    @property
    def share_nonmonotone(self) -> float:
        """Share of examined points whose signs are not monotone in pi."""
        return self.n_nonmonotone / max(self.n_points, 1)

    def crossing_weight_pairs(self) -> list[tuple[float, float]]:
        """The crossing pairs as ``(pi_j, pi_k)``."""
        return [(float(self.weights[j]), float(self.weights[k])) for j, k in self.crossing_pairs]

    def summary(self) -> dict[str, float | int | str]:
        """Plain-dict summary for reports and JSON."""
        return {
            "space": self.space,
            "n_points": self.n_points,
            "n_crossing_pairs": self.n_crossing_pairs,
            "share_nonmonotone": self.share_nonmonotone,
            "depth": self.depth,
        }


def hull_combinations(
    n: int, n_samples: int, max_points: int = 3, seed: int | None = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Random convex combinations of training points (a seeded sample of their hull).

    A third of the samples are segments (two points), the rest combine ``max_points``
    points with flat Dirichlet weights.

    Parameters
    ----------
    n : int
        Number of training points.
    n_samples : int
    max_points : int
        Points per combination (>= 2).
    seed : int or None

    Returns
    -------
    idx : ndarray of int, shape (n_samples, max_points)
    w : ndarray, shape (n_samples, max_points)
        Non-negative, rows sum to 1.
    """
    if n < 1 or n_samples < 1:
        raise InputError("hull sampling needs at least one training point and one sample")
    k = max(int(max_points), 2)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_samples, k))
    w = rng.dirichlet(np.ones(k), size=n_samples)
    seg = rng.random(n_samples) < 1 / 3
    w[seg, 2:] = 0.0
    w[seg] /= w[seg].sum(axis=1, keepdims=True)
    return idx, w


def crossing_from_values(
    F: np.ndarray, weights: np.ndarray, tol: float = 0.0, space: str = "points"
) -> CrossingReport:
    """Crossing counts from decision values.

    Parameters
    ----------
    F : ndarray, shape (m, M - 1)
        ``f_{pi_k}(z_i)``, columns in increasing weight order.
    weights : ndarray, shape (M - 1,)
    tol : float
        A value counts as positive when ``> tol``, as non-positive when ``<= -tol``
        (``<= 0`` when ``tol == 0``, the ladder's convention).
    space : str
        Label stored in the report.

    Returns
    -------
    CrossingReport
    """
    weights = check_weights(weights)
    F = np.atleast_2d(np.asarray(F, dtype=float))
    if F.shape[1] != weights.size:
        raise InputError(f"{F.shape[1]} decision columns for {weights.size} weights")
    if not np.all(np.isfinite(F)):
        raise InputError("decision values contain NaN or infinity")
    m, n_w = F.shape
    pos = tol < F
    neg = -tol >= F if tol > 0 else F <= 0
    # A point is non-monotone when its last positive column comes after its first
    # non-positive one.
    has_neg, has_pos = neg.any(axis=1), pos.any(axis=1)
    first_neg = np.argmax(neg, axis=1)
    last_pos = n_w - 1 - np.argmax(pos[:, ::-1], axis=1)
    nonmono = has_neg & has_pos & (last_pos > first_neg)
    # Pair (j, k), j < k, crosses when some point is non-positive at j and positive at k;
    # only non-monotone points can witness that.
    bad = np.flatnonzero(nonmono)
    C = neg[bad].T.astype(np.float64) @ pos[bad].astype(np.float64)
    jj, kk = np.nonzero(np.triu(C, k=1) > 0)
    pairs = np.column_stack([jj, kk]).astype(int)
    if n_w > 1 and m:
        # Depth: max over points and k of min(f_k, max_{j<k} -f_j), columns as rows for speed.
        Ft = np.ascontiguousarray(F.T)
        run = -Ft[0]
        depth = -np.inf
        for k in range(1, n_w):  # a loop of vector operations beats ufunc.accumulate here
            depth = max(depth, float(np.max(np.minimum(Ft[k], run))))
            run = np.maximum(run, -Ft[k])
    else:
        depth = -np.inf
    return CrossingReport(weights, space, F.shape[0], pairs, int(nonmono.sum()), depth, tol)


DecisionLike = Callable[[np.ndarray], np.ndarray]


class LadderDecisions:
    """A fitted model whose ladder can be evaluated at new points.

    The ladder estimators have it (:class:`~wsvmgui.estimators.views.LadderViews` derives
    from it): ``ladder_decision(X) -> (m, M - 1)`` and the weights ``weights_``.
    """

    weights_: np.ndarray

    def ladder_decision(self, X) -> np.ndarray:
        """Decision values of every weighted fit at ``X`` (m, p); shape (m, M - 1)."""
        raise NotImplementedError


def _decision_function(
    model, X_train: np.ndarray, kernel
) -> tuple[DecisionLike, np.ndarray | None]:
    """A callable ``X -> (m, M - 1)`` and the weights of ``model``."""
    if isinstance(model, (Ladder, PathLadder)):
        if kernel is None:
            raise InputError("a ladder needs its kernel to be evaluated at new points")
        return (lambda Z: model.decision(kernel(Z, X_train))), model.weights
    if isinstance(model, LadderDecisions):
        return model.ladder_decision, model.weights_
    if callable(model):
        return model, None
    raise InputError("model must be a ladder, a fitted ladder estimator, or a callable")


def crossing_diagnostics(
    model,
    X_train: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    kernel=None,
    space: str = "input",
    n_samples: int = 20_000,
    max_points: int | None = None,
    seed: int | None = 0,
    tol: float = 0.0,
    chunk: int = 5000,
) -> CrossingReport:
    """Count crossing boundaries of a ladder inside the convex hull of its training inputs.

    Parameters
    ----------
    model : Ladder, PathLadder, fitted estimator or callable
        A :class:`~wsvmgui.ladder.grid.Ladder` or
        :class:`~wsvmgui.ladder.engines.PathLadder` (give ``kernel``), a fitted ladder
        estimator (:class:`LadderDecisions`: ``WeightedSVMClassifier``,
        ``NonCrossingLadderClassifier``), or any callable ``X (m, p) -> (m, M - 1)``
        (give ``weights``).
    X_train : ndarray, shape (n, p)
        Training inputs whose hull is sampled (the support of ``model``'s kernel for a
        Ladder).
    weights : ndarray, shape (M - 1,), optional
        Needed for a plain callable.
    kernel : Kernel, optional
        Needed for a plain Ladder.
    space : {"input", "feature"}
        See the module docstring.
    n_samples : int
        Hull points sampled.
    max_points : int, optional
        Training points per combination; default ``p + 1`` (at least 2, at most 6) in
        input space and 3 in feature space.
    seed : int or None
    tol : float
        See :func:`crossing_from_values`.
    chunk : int
        Points evaluated per block (memory).

    Returns
    -------
    CrossingReport
    """
    if space not in SPACES:
        raise InputError(f"unknown space {space!r}; choose one of {', '.join(SPACES)}")
    X_train = np.asarray(X_train, dtype=float)
    decide, w_model = _decision_function(model, X_train, kernel)
    weights = w_model if weights is None else weights
    if weights is None:
        raise InputError("give the weights of a plain decision function")
    n, p = X_train.shape
    if max_points is None:
        max_points = min(max(p + 1, 2), 6) if space == "input" else 3
    idx, w = hull_combinations(n, n_samples, max_points, seed)
    if space == "feature":
        F_train = np.asarray(decide(X_train), dtype=float)
        F = np.einsum("mk,mkj->mj", w, F_train[idx])
    else:
        parts = []
        for s in range(0, n_samples, chunk):
            Z = np.einsum("mk,mkp->mp", w[s : s + chunk], X_train[idx[s : s + chunk]])
            parts.append(np.asarray(decide(Z), dtype=float))
        F = np.vstack(parts)
    return crossing_from_values(F, weights, tol, space)
