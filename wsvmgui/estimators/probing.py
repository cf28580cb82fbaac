"""Probing: class probabilities from any classifier learner (Langford & Zadrozny; METHODS 6).

A classifier trained with weight ``1 - p`` on positives and ``p`` on negatives predicts 1
where ``P(y = 1 | x) > p``.  The learner starts from the interval [0, 1]; at each step it
splits the interval with the largest potential loss gain on the training points whose
current estimate falls in it, at that interval's minimax point, and trains a classifier
there.  The predictor counts the classifiers that answer 1, which is the same as sorting
the answers (repairing non-monotone ones), and reports the minimax point of the
corresponding interval of the sorted thresholds.

* Squared loss: point ``(a + b) / 2``, interval score ``|S_ab| (b - a)``.
* Cross-entropy: point ``1 / (1 + exp((H(b) - H(a)) / (b - a)))`` (``H`` the entropy of a
  coin in nats), score ``|S_ab| KL(a || point)``.
* K classes: K - 1 one-against-the-rest problems for ``classes_[:-1]``; the last class gets
  ``1 - sum`` (clipped at 0, rows renormalised).  Two classes: one problem for ``classes_[1]``.
* Learners without ``sample_weight``: the costing reduction (rejection sampling with
  acceptance ``w_i / max w``, several rounds, majority vote).
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from ..errors import InputError
from ..probing.learners import (
    LEARNER_NAMES,
    make_learner,
)
from ..probing.reduction import (
    COSTING,
    LOSSES,
    learn_probing,
)
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ._validation import check_labels, validate_fit_data, validate_predict_data
from .report import ProbabilityReport


# ------------------------------------------------------------------------------ estimator
class ProbingClassifier(ClassifierMixin, BaseEstimator):
    """Class probabilities from any classifier learner by Probing (Langford & Zadrozny).

    Parameters
    ----------
    learner : str or scikit-learn classifier
        A name from :data:`LEARNER_NAMES` or an estimator (cloned per threshold).
    learner_params : dict or None
        Parameters for a named learner (e.g. ``{"C": 10, "gamma": 0.5}`` for "svm").
    n_thresholds : int or None
        Classifiers per binary problem; None: ``max(floor(sqrt(n)), 20) - 1``, as many as
        the weight ladder fits.
    loss : {"squared", "cross_entropy"}
        Loss whose minimax rules choose the thresholds and the reported points.
    costing : {"auto", "always", "never"}
        Use the costing reduction: when the learner lacks ``sample_weight`` ("auto"),
        always, or never (then a learner without ``sample_weight`` is an error).
    n_costing_rounds : int
    random_state : int or None

    Attributes
    ----------
    classes_ : ndarray, shape (K,)
    problems_ : list of BinaryProbing
        One per binary problem (``classes_[1]`` for K = 2, ``classes_[:-1]`` otherwise).
    problem_classes_ : ndarray
        The class of each problem.
    thresholds_ : list of ndarray
        Sorted thresholds of each problem.
    costing_ : bool
    fit_info_ : dict
    """

    def __init__(
        self,
        learner="tree",
        learner_params: dict | None = None,
        n_thresholds: int | None = None,
        loss: str = "squared",
        costing: str = "auto",
        n_costing_rounds: int = 10,
        random_state: int | None = 0,
    ) -> None:
        self.learner = learner
        self.learner_params = learner_params
        self.n_thresholds = n_thresholds
        self.loss = loss
        self.costing = costing
        self.n_costing_rounds = n_costing_rounds
        self.random_state = random_state

    def _prototype(self) -> BaseEstimator:
        if isinstance(self.learner, str):
            return make_learner(self.learner, self.random_state, **(self.learner_params or {}))
        if hasattr(self.learner, "fit") and hasattr(self.learner, "predict"):
            if self.learner_params:
                return clone(self.learner).set_params(**self.learner_params)
            return clone(self.learner)
        raise InputError(
            f"learner must be a name ({', '.join(LEARNER_NAMES)}) or a scikit-learn "
            f"classifier, got {self.learner!r}"
        )

    def fit(
        self,
        X,
        y,
        *,
        X_tune=None,
        y_tune=None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ) -> ProbingClassifier:
        """Learn the thresholds and classifiers of every binary problem.

        Parameters
        ----------
        X : array-like, shape (n, p)
        y : array-like, shape (n,)
        X_tune, y_tune
            Accepted for the common interface; Probing tunes nothing.
        progress, should_cancel
            Reported after each classifier; polled between classifiers.

        Returns
        -------
        self
        """
        start = time.perf_counter()
        if self.loss not in LOSSES:
            raise InputError(f"unknown loss {self.loss!r}; choose one of {', '.join(LOSSES)}")
        if self.costing not in COSTING:
            raise InputError(
                f"unknown costing {self.costing!r}; choose one of {', '.join(COSTING)}"
            )
        prototype = self._prototype()
        X, y = validate_fit_data(self, X, y)
        self.classes_ = check_labels(y)
        weighted = has_fit_parameter(prototype, "sample_weight")
        if self.costing == "never" and not weighted:
            raise InputError(
                f"learner {type(prototype).__name__} does not accept sample_weight; "
                "use costing='auto' or 'always'"
            )
        use_costing = self.costing == "always" or (self.costing == "auto" and not weighted)
        n_thr = self.n_thresholds
        if n_thr is not None and (
            isinstance(n_thr, bool) or not isinstance(n_thr, numbers.Integral)
        ):
            raise InputError(f"n_thresholds must be an integer, got {self.n_thresholds!r}")
        T = (
            max(int(np.floor(np.sqrt(y.size))), 20) - 1
            if self.n_thresholds is None
            else int(self.n_thresholds)
        )
        if T < 1:
            raise InputError(f"n_thresholds must be at least 1, got {self.n_thresholds!r}")
        K = self.classes_.size
        targets = self.classes_[1:] if K == 2 else self.classes_[:-1]
        tracker = ProgressTracker(T * targets.size, progress, should_cancel)
        tracker.check()
        seed = 0 if self.random_state is None else int(self.random_state)
        self.problems_ = []
        for i, c in enumerate(targets):
            self.problems_.append(
                learn_probing(
                    X,
                    (y == c).astype(int),
                    lambda _s: clone(prototype),
                    T,
                    self.loss,
                    use_costing,
                    self.n_costing_rounds,
                    seed + 1000003 * i,
                    tracker,
                    str(c),
                )
            )
        self.problem_classes_ = np.asarray(targets)
        self.thresholds_ = [pr.thresholds for pr in self.problems_]
        self.costing_ = use_costing
        self.fit_info_ = {
            "n_classifiers": tracker.done,
            "n_train": int(y.size),
            "seconds": time.perf_counter() - start,
        }
        return self

    def intervals(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimates and intervals of every binary problem.

        Returns
        -------
        p, lo, hi : ndarray, shape (n, P)
            Column j for class ``problem_classes_[j]``.
        """
        check_is_fitted(self, "problems_")
        X = validate_predict_data(self, X)
        parts = [pr.estimate(X) for pr in self.problems_]
        return tuple(np.column_stack([part[i] for part in parts]) for i in range(3))

    def _proba_and_brackets(self, X):
        p, lo, hi = self.intervals(X)
        if self.classes_.size == 2:
            proba = np.column_stack([1.0 - p[:, 0], p[:, 0]])
            los = np.column_stack([1.0 - hi[:, 0], lo[:, 0]])
            his = np.column_stack([1.0 - lo[:, 0], hi[:, 0]])
            return proba, los, his
        last = 1.0 - p.sum(axis=1)
        proba = np.column_stack([p, np.clip(last, 0.0, None)])
        proba /= proba.sum(axis=1, keepdims=True)
        los = np.column_stack([lo, np.clip(1.0 - hi.sum(axis=1), 0.0, 1.0)])
        his = np.column_stack([hi, np.clip(1.0 - lo.sum(axis=1), 0.0, 1.0)])
        return proba, los, his

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; shape (n, K), columns in the order of ``classes_``."""
        return self._proba_and_brackets(X)[0]

    def predict(self, X) -> np.ndarray:
        """Most probable class; shape (n,)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def report(self, X) -> ProbabilityReport:
        """Probabilities, labels and each class's interval for ``X`` (n, p)."""
        proba, los, his = self._proba_and_brackets(X)
        extra: dict[str, np.ndarray] = {}
        for k, c in enumerate(self.classes_):
            extra[f"lo_{c}"] = los[:, k]
            extra[f"hi_{c}"] = his[:, k]
        return ProbabilityReport.from_proba(self.classes_, proba, extra)
