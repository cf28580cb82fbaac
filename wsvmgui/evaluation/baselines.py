"""Familiar probability estimators under one interface, for comparison tables.

Each baseline is tuned by log-loss on the same data the weighted-SVM schemes tune on (a
given tuning set, or the same stratified split of the training data), then refitted with
the chosen parameters on training plus tuning data (as the schemes do with
``refit=True``).  Grids are kept small so a whole table stays quick.

``BASELINES`` maps a name to ``(description, factory)``; ``factory(params, random_state)``
builds an unfitted scikit-learn classifier, and :func:`fit_baseline` tunes and fits one.

The Platt-scaled SVMs come in both of scikit-learn's spellings: ``SVC(probability=True)``
(libsvm's pairwise sigmoids with pairwise coupling, deprecated in scikit-learn 1.9; the
warning is silenced locally) and ``CalibratedClassifierCV(SVC(), ensemble=False)``
(one-vs-rest sigmoids on cross-validated decision values, normalised).  Their RBF grid is
``C`` in 0.3 ... 30 and ``sigma`` in ``(0.25 .. 1.5) * sigma_M`` (``gamma = 1 / sigma^2``),
a subset of the weighted SVM's grid.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from ..errors import InputError
from ..estimators._validation import check_finite, check_labels, check_numeric
from ..ladder.tuning import stratified_split
from ..solvers.kernels import median_between_class_distance

Factory = Callable[[dict, "int | None"], object]


def _logistic(params: dict, seed: int | None):
    return make_pipeline(StandardScaler(), LogisticRegression(C=params["C"], max_iter=2000))


def _lda(params: dict, seed: int | None):
    return LinearDiscriminantAnalysis(solver="lsqr", shrinkage=params["shrinkage"])


def _tree(params: dict, seed: int | None):
    return DecisionTreeClassifier(min_samples_leaf=params["min_samples_leaf"], random_state=seed)


def _forest(params: dict, seed: int | None):
    return RandomForestClassifier(
        n_estimators=200,
        min_samples_leaf=params["min_samples_leaf"],
        random_state=seed,
        n_jobs=1,
    )


def _boosting(params: dict, seed: int | None):
    return HistGradientBoostingClassifier(
        learning_rate=params["learning_rate"],
        max_leaf_nodes=params["max_leaf_nodes"],
        max_iter=200,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )


def _svc(params: dict, seed: int | None) -> SVC:
    return SVC(C=params["C"], gamma=1.0 / params["sigma"] ** 2, kernel="rbf")


class PlattSVC(SVC):
    """``SVC(probability=True)`` whose deprecation warning is silenced locally."""

    def fit(self, X, y, sample_weight=None):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning)
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            return super().fit(X, y, sample_weight=sample_weight)

    def predict_proba(self, X):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning)
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            return super().predict_proba(X)


def _svc_platt(params: dict, seed: int | None):
    return PlattSVC(
        C=params["C"],
        gamma=1.0 / params["sigma"] ** 2,
        kernel="rbf",
        probability=True,
        random_state=seed,
    )


def _svc_calibrated(params: dict, seed: int | None):
    return CalibratedClassifierCV(_svc(params, seed), method="sigmoid", cv=5, ensemble=False)


#: name -> (description, factory(params, random_state)).
BASELINES: dict[str, tuple[str, Factory]] = {
    "logistic": ("multinomial logistic regression (standardised inputs), C tuned", _logistic),
    "lda": ("linear discriminant analysis, with or without Ledoit-Wolf shrinkage", _lda),
    "tree": ("classification tree, minimum leaf size tuned", _tree),
    "random_forest": ("random forest of 200 trees, minimum leaf size tuned", _forest),
    "gradient_boosting": (
        "histogram gradient boosting (200 rounds), learning rate and leaf count tuned",
        _boosting,
    ),
    "svc_platt": (
        "RBF SVC(probability=True): libsvm's pairwise Platt sigmoids and coupling",
        _svc_platt,
    ),
    "svc_calibrated": (
        "RBF SVC in CalibratedClassifierCV(ensemble=False): one-vs-rest Platt sigmoids",
        _svc_calibrated,
    ),
}

_SVM_NAMES = ("svc_platt", "svc_calibrated")
#: RBF grid of the Platt-scaled SVMs: a 5 x 5 subset of the weighted SVM's 7 x 6 grid
#: (each cell costs six SVC fits).
SVM_C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)
SVM_SIGMA_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.5)


def param_grid(name: str, X: np.ndarray, y: np.ndarray, seed: int = 0) -> list[dict]:
    """The tuning grid of baseline ``name`` for training data ``X`` (n, p), ``y`` (n,)."""
    if name == "logistic":
        return [{"C": c} for c in (0.01, 0.1, 1.0, 10.0, 100.0)]
    if name == "lda":
        return [{"shrinkage": s} for s in (None, "auto")]
    if name == "tree":
        return [{"min_samples_leaf": m} for m in (5, 10, 20, 40)]
    if name == "random_forest":
        return [{"min_samples_leaf": m} for m in (1, 5, 15)]
    if name == "gradient_boosting":
        return [
            {"learning_rate": lr, "max_leaf_nodes": leaves}
            for lr, leaves in itertools.product((0.03, 0.1), (4, 15))
        ]
    if name in _SVM_NAMES:
        sigma_m = median_between_class_distance(X, y, seed=seed)
        return [
            {"C": c, "sigma": f * sigma_m}
            for c, f in itertools.product(SVM_C_GRID, SVM_SIGMA_FACTORS)
        ]
    raise InputError(f"unknown baseline {name!r}; choose one of {', '.join(BASELINES)}")


@dataclass(frozen=True)
class BaselineTuning:
    """Tuning table of a baseline: every parameter set with its tuning log-loss."""

    params: list[dict]
    log_loss: np.ndarray
    best: dict
    seconds: float


def _check_xy(X, y, labels: bool = True) -> tuple[np.ndarray, np.ndarray]:
    check_numeric(X)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise InputError(f"features must be a 2-D table, got shape {X.shape}")
    check_finite(X)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InputError("X and y have different lengths")
    if labels:
        check_labels(y)
    return X, y


def fit_baseline(
    name: str,
    X,
    y,
    X_tune=None,
    y_tune=None,
    random_state: int | None = 0,
    tune_fraction: float = 0.3,
    refit: bool = True,
):
    """Tune baseline ``name`` by log-loss and return it fitted.

    Parameters
    ----------
    name : str
        A key of :data:`BASELINES`.
    X : array-like, shape (n, p)
    y : array-like, shape (n,)
    X_tune, y_tune : array-like, shapes (m, p) and (m,), optional
        Tuning set; without it a stratified ``tune_fraction`` split of ``X, y`` (the same
        split the weighted-SVM schemes use for the same ``random_state``).
    random_state : int or None
    tune_fraction : float
    refit : bool
        Refit the chosen parameters on training plus tuning data (default), or keep the
        fit on the training part.

    Returns
    -------
    classifier
        A fitted scikit-learn classifier with ``classes_`` and ``predict_proba``; its
        attribute ``baseline_tuning_`` holds the :class:`BaselineTuning`.
    """
    if name not in BASELINES:
        raise InputError(f"unknown baseline {name!r}; choose one of {', '.join(BASELINES)}")
    start = time.perf_counter()
    X, y = _check_xy(X, y)
    if X_tune is None:
        X_tr, X_tu, y_tr, y_tu = stratified_split(X, y, tune_fraction, random_state)
    else:
        X_tr, y_tr = X, y
        X_tu, y_tu = _check_xy(X_tune, y_tune, labels=False)
        if X_tu.shape[1] != X_tr.shape[1]:
            raise InputError("the tuning set has a different number of features")
        unknown = ~np.isin(y_tu, np.unique(y_tr))
        if unknown.any():
            raise InputError(f"tuning label {y_tu[unknown][0]!r} is not a training class")
    factory = BASELINES[name][1]
    grid = param_grid(name, X_tr, y_tr, seed=random_state or 0)
    classes = np.unique(y_tr)
    losses = np.full(len(grid), np.inf)
    # Small fits: one BLAS / OpenMP thread avoids the oversubscription that makes
    # gradient boosting and the sigmoid calibration's L-BFGS crawl on a busy machine.
    with threadpool_limits(1):
        for i, params in enumerate(grid):
            model = factory(params, random_state)
            try:
                model.fit(X_tr, y_tr)
                losses[i] = log_loss(y_tu, model.predict_proba(X_tu), labels=classes)
            except ValueError:  # e.g. a calibration fold without some class
                continue
        if not np.isfinite(losses).any():
            raise InputError(f"baseline {name}: no parameter set could be fitted on these data")
        best = grid[int(np.argmin(losses))]
        model = factory(best, random_state)
        if refit:
            model.fit(np.vstack([X_tr, X_tu]), np.concatenate([y_tr, y_tu]))
        else:
            model.fit(X_tr, y_tr)
    model.baseline_tuning_ = BaselineTuning(
        params=grid, log_loss=losses, best=best, seconds=time.perf_counter() - start
    )
    return model


__all__ = ["BASELINES", "BaselineTuning", "fit_baseline", "param_grid"]
