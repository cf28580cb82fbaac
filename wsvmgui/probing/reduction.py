"""The Probing reduction (Langford & Zadrozny; METHODS section 6): thresholds placed
adaptively, one weighted classifier per threshold, answers counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from scipy.special import expit, xlogy
from sklearn.base import BaseEstimator

from ..errors import InputError
from ..ladder.rules import count_bracket
from .costing import _CostingClassifier

LOSSES = ("squared", "cross_entropy")
COSTING = ("auto", "always", "never")


# --------------------------------------------------------------------------- minimax rules
def coin_entropy(q: np.ndarray | float) -> np.ndarray | float:
    """Entropy of a coin with bias ``q`` in nats (0 at q = 0 and 1)."""
    q = np.asarray(q, dtype=float)
    return -(xlogy(q, q) + xlogy(1.0 - q, 1.0 - q))


def minimax_point(a: float, b: float, loss: str = "squared") -> float:
    """The estimate in [a, b] with the smallest worst-case regret over ``p`` in [a, b].

    Squared loss: ``(a + b) / 2``.  Cross-entropy: the point where ``KL(a || q) = KL(b || q)``,
    ``q = 1 / (1 + exp((H(b) - H(a)) / (b - a)))``.
    """
    if not 0.0 <= a < b <= 1.0:
        raise InputError(f"need 0 <= a < b <= 1, got [{a}, {b}]")
    if loss == "squared":
        return 0.5 * (a + b)
    if loss == "cross_entropy":
        return float(expit(-(coin_entropy(b) - coin_entropy(a)) / (b - a)))
    raise InputError(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}")


def kl_coin(p, q):
    """``KL(p || q)`` of two coins in nats (the cross-entropy regret of estimate q).

    Scalars give a float; arrays broadcast and give an array.
    """
    out = (
        xlogy(p, p)
        - xlogy(p, q)
        + xlogy(1 - np.asarray(p), 1 - np.asarray(p))
        - xlogy(1 - np.asarray(p), 1 - np.asarray(q))
    )
    return float(out) if np.ndim(out) == 0 else out


class Steps(Protocol):
    """What :func:`learn_probing` reports progress to (a ProgressTracker, a job context)."""

    def step(self, n: int = 1, partial: Any = None) -> None: ...


def interval_score(a: float, b: float, count: float, loss: str = "squared") -> float:
    """Potential loss gain of splitting [a, b] holding ``count`` training estimates (their
    summed sample weight when weighted)."""
    if loss == "squared":
        return count * (b - a)
    return count * kl_coin(a, minimax_point(a, b, loss))


# ------------------------------------------------------------------------ binary probing
@dataclass
class BinaryProbing:
    """A fitted binary Probing model for labels {0, 1}.

    Attributes
    ----------
    thresholds : ndarray, shape (T,)
        Learned thresholds, sorted.
    classifiers : list
        Classifier of each threshold, in the order of ``thresholds``.
    order : list of float
        Thresholds in the order they were learned.
    loss : str
    """

    thresholds: np.ndarray
    classifiers: list
    order: list[float] = field(default_factory=list)
    loss: str = "squared"

    def counts(self, X: np.ndarray) -> np.ndarray:
        """Number of classifiers answering 1 at each row of ``X`` (m, p); shape (m,)."""
        c = np.zeros(X.shape[0], dtype=int)
        for clf in self.classifiers:
            c += (np.asarray(clf.predict(X)) == 1).astype(int)
        return c

    def answers(self, X: np.ndarray) -> np.ndarray:
        """Each classifier's answer (bool), columns in threshold order; shape (m, T)."""
        return np.column_stack([np.asarray(c.predict(X)) == 1 for c in self.classifiers])

    def estimate(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimate and interval ``[lo, hi]`` at ``X`` (m, p); three arrays of shape (m,)."""
        return self.from_counts(self.counts(X))

    def from_counts(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimate and interval from answer counts (m,): the count rule's bracket over the
        thresholds (:func:`~wsvmgui.ladder.rules.count_bracket`), reported at the loss's
        minimax point instead of the midpoint."""
        lo, hi = count_bracket(counts, self.thresholds)
        points = {(a, b): minimax_point(a, b, self.loss) for a, b in set(zip(lo, hi, strict=True))}
        return np.array([points[ab] for ab in zip(lo, hi, strict=True)]), lo, hi


def learn_probing(
    X: np.ndarray,
    y01: np.ndarray,
    make_classifier: Callable[[int], BaseEstimator],
    n_thresholds: int,
    loss: str = "squared",
    use_costing: bool = False,
    n_costing_rounds: int = 10,
    seed: int = 0,
    tracker: Steps | None = None,
    label: str = "",
    sample_weight: np.ndarray | None = None,
) -> BinaryProbing:
    """The Probing learner on one binary problem.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y01 : ndarray of int, shape (n,)
        Labels 0/1, both present.
    make_classifier : callable
        ``make_classifier(step) -> unfitted classifier`` (fresh for each threshold).
    n_thresholds : int
        Number of classifiers T.
    loss : {"squared", "cross_entropy"}
    use_costing : bool
        Train through the costing reduction instead of ``sample_weight``.
    n_costing_rounds : int
    seed : int
    tracker : ProgressTracker or job context, optional
        Stepped after each classifier.
    label : str
        Name of the sub-problem (for progress events).
    sample_weight : ndarray, shape (n,), optional
        Row weights: they multiply the classifiers' weights ``1 - p`` / ``p`` and count
        in the intervals' occupancy (integer weights give the learner on repeated rows).

    Returns
    -------
    BinaryProbing
    """
    if loss not in LOSSES:
        raise InputError(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}")
    if int(n_thresholds) < 1:
        raise InputError(f"Probing needs at least one threshold, got {n_thresholds!r}")
    y01 = np.asarray(y01, dtype=int)
    thresholds: list[float] = []
    classifiers: list = []
    order: list[float] = []
    counts = np.zeros(y01.size, dtype=int)
    for step in range(int(n_thresholds)):
        grid = np.concatenate([[0.0], thresholds, [1.0]])
        occupancy = np.bincount(counts, weights=sample_weight, minlength=grid.size - 1)
        scores = [
            interval_score(a, b, c if sample_weight is not None else int(c), loss)
            for a, b, c in zip(grid[:-1], grid[1:], occupancy, strict=True)
        ]
        j = int(np.argmax(scores))
        a, b = float(grid[j]), float(grid[j + 1])
        p = minimax_point(a, b, loss)
        if not a < p < b:  # intervals have become too narrow to split in floating point
            break
        weight = np.where(y01 == 1, 1.0 - p, p)
        if sample_weight is not None:
            weight = weight * sample_weight
        clf = make_classifier(step)
        if use_costing:
            clf = _CostingClassifier(clf, n_costing_rounds, random_state=seed + 7919 * step)
        clf.fit(X, y01, sample_weight=weight)
        pos = int(np.searchsorted(thresholds, p))
        thresholds.insert(pos, p)
        classifiers.insert(pos, clf)
        order.append(p)
        counts += (np.asarray(clf.predict(X)) == 1).astype(int)
        if tracker is not None:
            tracker.step(partial={"label": label, "threshold": p, "interval": (a, b)})
    return BinaryProbing(np.array(thresholds), classifiers, order, loss)
