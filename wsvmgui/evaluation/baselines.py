"""Familiar probability estimators under one interface, for comparison tables.

Each baseline is tuned by log-loss on the same data the weighted-SVM schemes tune on (a
given tuning set, or the same stratified split of the training data), then refitted with
the chosen parameters on training plus tuning data (as the schemes do with
``refit=True``).  Grids are kept small so a whole table stays quick.

``BASELINES`` maps a name to ``(description, factory)``; ``factory(params, random_state)``
builds an unfitted scikit-learn classifier, and :func:`fit_baseline` tunes and fits one.

The Platt-scaled SVMs come in two forms: libsvm's ``SVC(probability=True)`` method
(pairwise sigmoids on cross-validated decision values, pairwise coupling), rebuilt from
public parts because that option is deprecated in scikit-learn 1.9 and removed in 1.11,
and ``CalibratedClassifierCV(SVC(), ensemble=False)`` (one-vs-rest sigmoids on
cross-validated decision values, normalised).  Their RBF grid is
``C`` in 0.3 ... 30 and ``sigma`` in ``(0.25 .. 1.5) * sigma_M`` (``gamma = 1 / sigma^2``),
a subset of the weighted SVM's grid.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..errors import InputError, SolverError
from ..estimators._validation import check_finite, check_labels, check_numeric
from ..ladder.gridsearch import FoldScore, Grid, Job, JobContext, one_split_search
from ..ladder.splits import holdout_split
from ..solvers.kernels import median_between_class_distance

Factory = Callable[[dict, "int | None"], Any]


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


def _platt_sigmoid(f: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Platt's sigmoid ``P(y = 1 | f) = 1 / (1 + exp(A f + B))`` fitted to decision values.

    Maximum likelihood with Platt's smoothed targets ``(N+ + 1) / (N+ + 2)`` and
    ``1 / (N- + 2)``, as libsvm's ``sigmoid_train`` (Lin, Lin & Weng 2007).

    Parameters
    ----------
    f : ndarray, shape (n,)
        Cross-validated decision values.
    y : ndarray of bool, shape (n,)
        True for the positive class.

    Returns
    -------
    A, B : float
    """
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def loss(ab: np.ndarray) -> tuple[float, np.ndarray]:
        z = ab[0] * f + ab[1]
        # -[t log p + (1 - t) log(1 - p)] with p = 1 / (1 + e^z), stably.
        value = np.sum(t * np.logaddexp(0.0, z) + (1.0 - t) * np.logaddexp(0.0, -z))
        g = t - expit(-z)  # d loss / d z
        return float(value), np.array([g @ f, g.sum()])

    start = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    res = minimize(loss, start, jac=True, method="L-BFGS-B")
    return float(res.x[0]), float(res.x[1])


def _couple_pairwise(R: np.ndarray) -> np.ndarray:
    """Class probabilities from pairwise ones (Wu, Lin & Weng 2004, method 2; libsvm's).

    Minimises ``sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2`` subject to ``sum p = 1``.

    Parameters
    ----------
    R : ndarray, shape (n, K, K)
        ``R[:, i, j] = P(i | i or j)``; ``R[:, j, i] = 1 - R[:, i, j]``.

    Returns
    -------
    ndarray, shape (n, K)
    """
    n, K, _ = R.shape
    off = ~np.eye(K, dtype=bool)
    Q = -(R.transpose(0, 2, 1) * R) * off  # Q_ij = -r_ji r_ij (i != j)
    diag = np.where(off, R.transpose(0, 2, 1) ** 2, 0.0).sum(axis=2)  # sum_j r_ji^2
    Q[:, np.arange(K), np.arange(K)] = diag
    M = np.zeros((n, K + 1, K + 1))
    M[:, :K, :K] = Q
    M[:, :K, K] = M[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1, 1))
    rhs[:, K] = 1.0
    p = np.linalg.solve(M, rhs)[:, :K, 0]
    p = np.clip(p, 1e-12, None)
    return p / p.sum(axis=1, keepdims=True)


class _PlattSVC(ClassifierMixin, BaseEstimator):
    """RBF SVMs with Platt sigmoids and pairwise coupling: libsvm's ``probability=True``.

    For every pair of classes an SVM is fitted, its decision values are cross-validated
    (stratified ``n_folds``-fold) and a Platt sigmoid fitted to them; K > 2 classes are
    coupled by Wu, Lin & Weng's method.  This is what ``SVC(probability=True)`` does
    inside libsvm, done here with public parts only (that option is deprecated in
    scikit-learn 1.9 and removed in 1.11); its probabilities agree with it to a few
    hundredths (tests/test_baselines.py).

    Parameters
    ----------
    C : float
    gamma : float
        RBF ``exp(-gamma ||x - x'||^2)``.
    n_folds : int
    random_state : int or None
        Seeds the folds of the decision values.
    """

    def __init__(self, C: float = 1.0, gamma: float = 1.0, n_folds: int = 5, random_state=None):
        self.C = C
        self.gamma = gamma
        self.n_folds = n_folds
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the pairwise SVMs and sigmoids on ``X`` (n, p), ``y`` (n,)."""
        X = np.asarray(X, dtype=float)
        self.classes_, codes = np.unique(y, return_inverse=True)
        K = self.classes_.size
        self.pairs_ = []
        for a in range(K):
            for b in range(a + 1, K):
                rows = np.flatnonzero((codes == a) | (codes == b))
                yb = codes[rows] == a  # positive: the first class of the pair
                svm = SVC(C=self.C, gamma=self.gamma, kernel="rbf")
                folds = min(self.n_folds, int(min(yb.sum(), (~yb).sum())))
                cv = StratifiedKFold(max(folds, 2), shuffle=True, random_state=self.random_state)
                f = cross_val_predict(svm, X[rows], yb, cv=cv, method="decision_function")
                A, B = _platt_sigmoid(f, yb)
                self.pairs_.append((a, b, clone(svm).fit(X[rows], yb), A, B))
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; shape (m, K)."""
        check_is_fitted(self, "pairs_")
        X = np.asarray(X, dtype=float)
        K = self.classes_.size
        R = np.full((X.shape[0], K, K), 0.5)
        for a, b, svm, A, B in self.pairs_:
            r = np.clip(expit(-(A * svm.decision_function(X) + B)), 1e-7, 1 - 1e-7)
            R[:, a, b], R[:, b, a] = r, 1.0 - r
        if K == 2:
            return np.column_stack([R[:, 0, 1], R[:, 1, 0]])
        return _couple_pairwise(R)

    def predict(self, X) -> np.ndarray:
        """Most probable class; shape (m,)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _svc_platt(params: dict, seed: int | None):
    return _PlattSVC(C=params["C"], gamma=1.0 / params["sigma"] ** 2, random_state=seed)


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
        "RBF SVMs with libsvm's pairwise Platt sigmoids and coupling",
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
        tr, tu = holdout_split(y, tune_fraction, random_state)
        X_tr, X_tu, y_tr, y_tu = X[tr], X[tu], y[tr], y[tu]
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

    def fit(job: Job, ctx: JobContext) -> Any:
        return factory(grid[job.cell[0]], random_state).fit(X_tr, y_tr)

    def score(model: Any, job: Job, ctx: JobContext) -> FoldScore:
        return FoldScore(log_loss(y_tu, model.predict_proba(X_tu), labels=classes), 1.0)

    # Small fits: one BLAS / OpenMP thread avoids the oversubscription that makes
    # gradient boosting and the sigmoid calibration's L-BFGS crawl on a busy machine.
    with threadpool_limits(1):
        try:  # a fit that raises ValueError (a calibration fold without some class) scores inf
            tuning = one_split_search(
                Grid({"candidate": np.arange(len(grid))}), fit, score, "log_loss",
                failures=(ValueError,),
            )  # fmt: skip
        except SolverError:
            raise InputError(
                f"baseline {name}: no parameter set could be fitted on these data"
            ) from None
        best = grid[tuning.best[0]]
        model: Any = factory(best, random_state)
        if refit:
            model.fit(np.vstack([X_tr, X_tu]), np.concatenate([y_tr, y_tu]))
        else:
            model.fit(X_tr, y_tr)
    losses = np.where(np.isfinite(tuning.score), tuning.score, np.inf)
    model.baseline_tuning_ = BaselineTuning(
        params=grid, log_loss=losses, best=best, seconds=time.perf_counter() - start
    )
    return model


__all__ = ["BASELINES", "BaselineTuning", "fit_baseline", "param_grid"]
