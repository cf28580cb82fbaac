"""Costing: importance-weighted classification for learners without sample weights."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError


# ------------------------------------------------------------------------------- costing
class _CostingClassifier(ClassifierMixin, BaseEstimator):
    """Importance-weighted classification for learners without ``sample_weight`` (internal).

    Costing (Zadrozny, Langford & Abe 2003): each round keeps example i with probability
    ``w_i / max w`` and trains ``estimator`` on the kept examples, unweighted; predictions
    are the majority vote of the rounds (a tie counts as class ``classes_[0]``).

    Parameters
    ----------
    estimator : scikit-learn classifier
    n_rounds : int
    random_state : int or None
    """

    def __init__(self, estimator=None, n_rounds: int = 10, random_state: int | None = None):
        self.estimator = estimator
        self.n_rounds = n_rounds
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None) -> _CostingClassifier:
        """Fit the rounds; ``X`` (n, p), ``y`` (n,), ``sample_weight`` (n,) non-negative."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        w = np.ones(y.size) if sample_weight is None else np.asarray(sample_weight, float)
        if w.shape != y.shape or np.any(w < 0) or not np.all(np.isfinite(w)) or w.max() <= 0:
            raise InputError("costing needs finite non-negative sample weights, not all zero")
        if int(self.n_rounds) < 1:
            raise InputError(f"costing needs at least one round, got {self.n_rounds!r}")
        rng = np.random.default_rng(self.random_state)
        accept = w / w.max()
        self.members_ = []
        for _ in range(int(self.n_rounds)):
            keep = rng.random(y.size) < accept
            labels = np.unique(y[keep])
            if labels.size == 0:
                labels = self.classes_[np.argmax(w)]  # keep the heaviest class
                self.members_.append(("constant", labels))
            elif labels.size == 1:
                self.members_.append(("constant", labels[0]))
            else:
                self.members_.append(("model", clone(self.estimator).fit(X[keep], y[keep])))
        return self

    def predict(self, X) -> np.ndarray:
        """Majority vote of the rounds; shape (m,)."""
        check_is_fitted(self, "members_")
        X = np.asarray(X, dtype=float)
        votes = np.zeros((X.shape[0], self.classes_.size))
        for kind, member in self.members_:
            pred = np.full(X.shape[0], member) if kind == "constant" else member.predict(X)
            votes[np.arange(X.shape[0]), np.searchsorted(self.classes_, pred)] += 1
        return self.classes_[np.argmax(votes, axis=1)]
