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

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, xlogy
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from .errors import InputError
from .progress import CancelCheck, ProgressCallback, ProgressTracker
from .report import ProbabilityReport
from .validation import check_labels, validate_fit_data, validate_predict_data

LOSSES = ("squared", "cross_entropy")
COSTING = ("auto", "always", "never")


# ------------------------------------------------------------------------------ learners
def _svm(random_state=None, **params):
    from sklearn.svm import SVC

    return SVC(**{"kernel": "rbf", "C": 1.0, "gamma": "scale", **params})


def _logistic(random_state=None, **params):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(**{"max_iter": 2000, **params})


def _tree(random_state=None, **params):
    from sklearn.tree import DecisionTreeClassifier

    # Leaves must hold several points, otherwise every leaf is pure and the class weights
    # cannot move any prediction.
    return DecisionTreeClassifier(**{"min_samples_leaf": 10, "random_state": random_state,
                                     **params})


def _forest(random_state=None, **params):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(**{"n_estimators": 100, "min_samples_leaf": 5,
                                     "random_state": random_state, **params})


def _boosting(random_state=None, **params):
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(**{"n_estimators": 100, "max_depth": 2,
                                         "random_state": random_state, **params})


def _naive_bayes(random_state=None, **params):
    from sklearn.naive_bayes import GaussianNB

    return GaussianNB(**params)


_LEARNERS: dict[str, tuple[Callable[..., BaseEstimator], str]] = {
    "svm": (_svm, "support vector machine (RBF, scikit-learn SVC)"),
    "logistic": (_logistic, "logistic regression"),
    "tree": (_tree, "decision tree (at least 10 points per leaf)"),
    "forest": (_forest, "random forest (100 trees)"),
    "boosting": (_boosting, "gradient boosting (100 depth-2 trees)"),
    "naive_bayes": (_naive_bayes, "Gaussian naive Bayes"),
}
LEARNER_NAMES = tuple(_LEARNERS)


def learner_names() -> dict[str, str]:
    """Learner names with one-line descriptions, in display order."""
    return {name: desc for name, (_, desc) in _LEARNERS.items()}


def learner_factory(name: str) -> Callable[..., BaseEstimator]:
    """The factory ``factory(random_state=None, **params) -> estimator`` of a learner name.

    Raises
    ------
    InputError
        Unknown name; the message lists the valid ones.
    """
    try:
        return _LEARNERS[name][0]
    except (KeyError, TypeError):
        raise InputError(
            f"unknown learner {name!r}; choose one of {', '.join(LEARNER_NAMES)}"
        ) from None


def make_learner(name: str, random_state: int | None = None, **params) -> BaseEstimator:
    """A fresh scikit-learn classifier for learner ``name`` with ``params`` applied."""
    try:
        return learner_factory(name)(random_state=random_state, **params)
    except TypeError as exc:
        raise InputError(f"bad parameters for learner {name!r}: {exc}") from exc


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
    out = xlogy(p, p) - xlogy(p, q) + xlogy(1 - np.asarray(p), 1 - np.asarray(p)) - xlogy(
        1 - np.asarray(p), 1 - np.asarray(q))
    return float(out) if np.ndim(out) == 0 else out


def interval_score(a: float, b: float, count: int, loss: str = "squared") -> float:
    """Potential loss gain of splitting [a, b] holding ``count`` training estimates."""
    if loss == "squared":
        return count * (b - a)
    return count * kl_coin(a, minimax_point(a, b, loss))


# ------------------------------------------------------------------------------- costing
class CostingClassifier(ClassifierMixin, BaseEstimator):
    """Importance-weighted classification for learners without ``sample_weight``.

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

    def fit(self, X, y, sample_weight=None) -> CostingClassifier:
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
        """Estimate and interval from answer counts (m,)."""
        grid = np.concatenate([[0.0], self.thresholds, [1.0]])
        lo, hi = grid[counts], grid[counts + 1]
        points = np.array([minimax_point(a, b, self.loss)
                           for a, b in zip(grid[:-1], grid[1:], strict=True)])
        return points[counts], lo, hi


def learn_probing(
    X: np.ndarray,
    y01: np.ndarray,
    make_classifier: Callable[[int], BaseEstimator],
    n_thresholds: int,
    loss: str = "squared",
    use_costing: bool = False,
    n_costing_rounds: int = 10,
    seed: int = 0,
    tracker: ProgressTracker | None = None,
    label: str = "",
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
        Train through :class:`CostingClassifier` instead of ``sample_weight``.
    n_costing_rounds : int
    seed : int
    tracker : ProgressTracker, optional
        Stepped after each classifier.
    label : str
        Name of the sub-problem (for progress events).

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
        occupancy = np.bincount(counts, minlength=grid.size - 1)
        scores = [interval_score(a, b, int(c), loss)
                  for a, b, c in zip(grid[:-1], grid[1:], occupancy, strict=True)]
        j = int(np.argmax(scores))
        a, b = float(grid[j]), float(grid[j + 1])
        p = minimax_point(a, b, loss)
        if not a < p < b:  # intervals have become too narrow to split in floating point
            break
        weight = np.where(y01 == 1, 1.0 - p, p)
        clf = make_classifier(step)
        if use_costing:
            clf = CostingClassifier(clf, n_costing_rounds, random_state=seed + 7919 * step)
        clf.fit(X, y01, sample_weight=weight)
        pos = int(np.searchsorted(thresholds, p))
        thresholds.insert(pos, p)
        classifiers.insert(pos, clf)
        order.append(p)
        counts += (np.asarray(clf.predict(X)) == 1).astype(int)
        if tracker is not None:
            tracker.step(partial={"label": label, "threshold": p, "interval": (a, b)})
    return BinaryProbing(np.array(thresholds), classifiers, order, loss)


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
        T = (max(int(np.floor(np.sqrt(y.size))), 20) - 1 if self.n_thresholds is None
             else int(self.n_thresholds))
        if T < 1:
            raise InputError(f"n_thresholds must be at least 1, got {self.n_thresholds!r}")
        K = self.classes_.size
        targets = self.classes_[1:] if K == 2 else self.classes_[:-1]
        tracker = ProgressTracker(T * targets.size, progress, should_cancel)
        tracker.check()
        seed = 0 if self.random_state is None else int(self.random_state)
        self.problems_ = []
        for i, c in enumerate(targets):
            self.problems_.append(learn_probing(
                X, (y == c).astype(int), lambda _s: clone(prototype), T, self.loss,
                use_costing, self.n_costing_rounds, seed + 1000003 * i, tracker, str(c),
            ))
        self.problem_classes_ = np.asarray(targets)
        self.thresholds_ = [pr.thresholds for pr in self.problems_]
        self.costing_ = use_costing
        self.fit_info_ = {"n_classifiers": tracker.done, "n_train": int(y.size),
                          "seconds": time.perf_counter() - start}
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
