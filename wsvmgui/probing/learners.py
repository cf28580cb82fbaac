"""The named classifier learners that Probing can wrap (all take sample weights)."""

from __future__ import annotations

from collections.abc import Callable

from sklearn.base import BaseEstimator

from ..errors import InputError


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
    return DecisionTreeClassifier(
        **{"min_samples_leaf": 10, "random_state": random_state, **params}
    )


def _forest(random_state=None, **params):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(
        **{"n_estimators": 100, "min_samples_leaf": 5, "random_state": random_state, **params}
    )


def _boosting(random_state=None, **params):
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(
        **{"n_estimators": 100, "max_depth": 2, "random_state": random_state, **params}
    )


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
