"""The preconditioned SVM of Wu & Liu (2011), section 4 (METHODS section 3).

1. Estimate ``p_hat(x_i)`` at the training points with a weight ladder (non-crossing by
   default, weights ``m / M``).
2. Relabel with a level ``pt`` in [0, 0.5): ``y_i -> -1`` where ``p_hat < pt``, ``-> +1``
   where ``p_hat > 1 - pt``, unchanged otherwise (``pt = 0`` changes nothing).
3. Fit a plain SVM (weight 1/2) to the relabelled data.

Tuning follows the paper's simulations: lambda of every SVM (each ladder weight and the
final SVM) minimises its weighted hinge loss on the tuning set; the RBF width, unless
fixed, is chosen with the plain SVM's lambda on the original labels; ``pt``, unless fixed,
minimises the final SVM's classification error on the tuning set over ``pt_grid`` (ties
go to the smaller, more conservative level).

Probabilities: ``predict_proba`` reports the ladder's estimate, moved just across 1/2
(to ``1/2 +- 1/(4M)``, bracket the half-interval next to 1/2) where the final SVM puts the
point on the other side, so that ``predict`` (the SVM's sign) is the argmax as the
estimator contract requires.  ``report`` also carries the SVM's decision value and the
ladder's own estimate.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError
from ..ladder.grid import fit_ladder
from ..ladder.noncrossing import fit_noncrossing_ladder
from ..ladder.precondition import (
    DEFAULT_PT_GRID,
    LADDERS,
    check_level,
    fit_svm_by_hinge,
    precondition_labels,
)
from ..ladder.rules import RULES, probabilities_from_signs
from ..ladder.tuning import (
    default_lambda_grid,
    default_n_weights,
    kernel_with_sigma,
    stratified_split,
)
from ..ladder.weights import check_weights, weight_grid
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel, default_sigma_grid
from ..solvers.wsvm import WeightedFit
from ._validation import check_labels, validate_fit_data, validate_predict_data
from .report import ProbabilityReport


class PreconditionedSVC(ClassifierMixin, BaseEstimator):
    """Plain SVM on labels preconditioned by a weight ladder's probabilities (Wu & Liu 2011).

    Parameters
    ----------
    pt : float or None
        Level in [0, 0.5); None chooses it from ``pt_grid`` by tuning-set error.
    pt_grid : sequence of float
        Candidate levels (default 0, 0.10, ..., 0.40).
    kernel : {"rbf", "linear", "poly"}
    lam : float or None
        Fixed lambda of every SVM; None chooses each by tuning-set hinge loss over
        ``lambdas``.
    sigma : float or None
        Fixed RBF width; None picks it from ``sigmas`` with the plain SVM.
    lambdas, sigmas : array-like or None
        Grids (defaults as :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`).
    n_weights, weights : ladder grid (default ``m / M``, M = ``default_n_weights(n)``).
    degree, coef0, poly_gamma : polynomial kernel parameters.
    rule : {"count", "extreme"}
    ladder : {"noncrossing", "independent"}
        Which ladder estimates ``p_hat``.
    tune_fraction : float
        Held-out share when no tuning set is given.
    random_state : int or None

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
    pt_ : float
    level_errors_ : dict of float to float
        Tuning-set error of each candidate level.
    p_train_ : ndarray, shape (n,)
        Ladder estimate at the training points.
    relabeled_ : ndarray of int
        Indices of training points whose label the chosen level changed.
    svm_ : WeightedFit
        The final SVM (coefficients over ``X_train_``).
    level_svms_ : dict of float to WeightedFit
        The final SVM of every candidate level.
    ladder_ : NonCrossingLadder or Ladder
    kernel_ : Kernel
    lambda_ : float
        Lambda of the final SVM.
    sigma_ : float
    weights_ : ndarray, shape (M - 1,)
    fit_info_ : dict
    """

    def __init__(
        self,
        pt: float | None = None,
        pt_grid=DEFAULT_PT_GRID,
        kernel: str = "rbf",
        lam: float | None = None,
        sigma: float | None = None,
        lambdas=None,
        sigmas=None,
        n_weights: int | None = None,
        weights=None,
        degree: int = 3,
        coef0: float = 1.0,
        poly_gamma: float = 1.0,
        rule: str = "count",
        ladder: str = "noncrossing",
        tune_fraction: float = 0.3,
        random_state: int | None = 0,
    ) -> None:
        self.pt = pt
        self.pt_grid = pt_grid
        self.kernel = kernel
        self.lam = lam
        self.sigma = sigma
        self.lambdas = lambdas
        self.sigmas = sigmas
        self.n_weights = n_weights
        self.weights = weights
        self.degree = degree
        self.coef0 = coef0
        self.poly_gamma = poly_gamma
        self.rule = rule
        self.ladder = ladder
        self.tune_fraction = tune_fraction
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _levels(self) -> list[float]:
        if self.pt is not None:
            return [check_level(self.pt)]
        grid = sorted({check_level(v) for v in np.ravel(self.pt_grid)})
        if not grid:
            raise InputError("the preconditioning level grid is empty")
        return grid

    def fit(
        self,
        X,
        y,
        *,
        X_tune=None,
        y_tune=None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ) -> PreconditionedSVC:
        """Estimate probabilities, precondition the labels and fit the SVM.

        Parameters
        ----------
        X : array-like, shape (n, p)
        y : array-like, shape (n,)
            Two classes; ``classes_[1]`` is the positive class.
        X_tune, y_tune : array-like, optional
            Tuning set; without it, and when something is tuned, a stratified
            ``tune_fraction`` split of the training data.
        progress, should_cancel
            Reported after each ladder weight and each final SVM; polled between fits.

        Returns
        -------
        self
        """
        start = time.perf_counter()
        if self.rule not in RULES:
            raise InputError(f"unknown rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.ladder not in LADDERS:
            raise InputError(f"unknown ladder {self.ladder!r}; choose one of {', '.join(LADDERS)}")
        levels = self._levels()
        if self.lam is not None and not (np.isfinite(self.lam) and self.lam > 0):
            raise InputError(f"lambda must be a positive number, got {self.lam!r}")
        if self.sigma is not None and not (np.isfinite(self.sigma) and self.sigma > 0):
            raise InputError(f"sigma must be a positive number, got {self.sigma!r}")
        X, y = validate_fit_data(self, X, y)
        self.classes_ = check_labels(y, n_classes=2)
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        needs_tune = (
            len(levels) > 1 or self.lam is None or (self.kernel == "rbf" and self.sigma is None)
        )
        if not needs_tune:
            X_tr, y_tr, X_tu, y_tu = X, y_pm, None, None
        elif X_tune is None:
            X_tr, X_tu, y_tr, y_tu = stratified_split(
                X, y_pm, self.tune_fraction, self.random_state
            )
        else:
            X_tu = validate_predict_data(self, X_tune)
            y_raw = np.asarray(y_tune)
            if y_raw.shape[0] != X_tu.shape[0]:
                raise InputError("the tuning set's X and y have different lengths")
            if (~np.isin(y_raw, self.classes_)).any():
                raise InputError("the tuning labels hold a class that the training data do not")
            X_tr, y_tr, y_tu = X, y_pm, np.where(y_raw == self.classes_[1], 1.0, -1.0)
        n = y_tr.size
        weights = (
            check_weights(self.weights)
            if self.weights is not None
            else weight_grid(default_n_weights(n) if self.n_weights is None else self.n_weights)
        )
        lambdas = (
            np.array([float(self.lam)])
            if self.lam is not None
            else default_lambda_grid(n)
            if self.lambdas is None
            else np.asarray(self.lambdas, dtype=float).ravel()
        )
        base = Kernel(
            self.kernel, sigma=1.0, degree=self.degree, coef0=self.coef0, gamma=self.poly_gamma
        )
        per_weight = lambdas.size if X_tu is not None else 1
        tracker = ProgressTracker(weights.size * per_weight + len(levels), progress, should_cancel)
        kernel = self._choose_kernel(base, X_tr, y_tr, X_tu, y_tu, lambdas)
        K = kernel(X_tr)
        K_tu = None if X_tu is None else kernel(X_tu, X_tr)
        # 1. probabilities at the training points.
        if self.ladder == "noncrossing":
            ladder = fit_noncrossing_ladder(
                X_tr,
                y_tr,
                weights,
                lambdas[0],
                kernel,
                lam_grid=lambdas if (lambdas.size > 1 and X_tu is not None) else None,
                X_tune=X_tu,
                y_tune=y_tu,
                progress=lambda *_: tracker.step(),
                should_cancel=tracker.check,
            )
            signs = ladder.decision_at(X_tr) > 0
        else:
            ladder = fit_ladder(
                K,
                y_tr,
                weights,
                float(lambdas[0]),
                progress=lambda *_: tracker.step(),
                should_cancel=tracker.check,
            )
            signs = ladder.decision(K) > 0
        p_train = probabilities_from_signs(signs, weights, self.rule).p
        # 2-3. relabel and fit the SVM at every level.
        fits: dict[float, WeightedFit] = {}
        errors: dict[float, float] = {}
        for pt in levels:
            y_pc = precondition_labels(y_tr, p_train, pt)
            fits[pt], _ = fit_svm_by_hinge(K, y_pc, K_tu, y_tu, lambdas)
            if K_tu is not None:
                pred = np.where(fits[pt].decision(K_tu) > 0, 1.0, -1.0)
                errors[pt] = float(np.mean(pred != y_tu))
            tracker.step()
        chosen = levels[0] if len(levels) == 1 else min(levels, key=lambda v: (errors[v], v))
        self.pt_ = float(chosen)
        self.level_errors_ = errors
        self.level_svms_ = fits
        self.svm_ = fits[chosen]
        self.p_train_ = p_train
        self.relabeled_ = np.flatnonzero(precondition_labels(y_tr, p_train, chosen) != y_tr)
        self.ladder_ = ladder
        self.kernel_ = kernel
        self.X_train_ = X_tr
        self.weights_ = weights
        self.lambda_ = float(self.svm_.lam)
        self.sigma_ = float(kernel.sigma) if kernel.name == "rbf" else float("nan")
        self.fit_info_ = {
            "n_train": int(n),
            "n_relabeled": int(self.relabeled_.size),
            "seconds": time.perf_counter() - start,
        }
        return self

    def _choose_kernel(self, base, X_tr, y_tr, X_tu, y_tu, lambdas) -> Kernel:
        if base.name != "rbf":
            return base
        if self.sigma is not None:
            return kernel_with_sigma(base, float(self.sigma))
        sigmas = (
            default_sigma_grid(X_tr, y_tr, seed=self.random_state or 0)
            if self.sigmas is None
            else np.asarray(self.sigmas, dtype=float).ravel()
        )
        if sigmas.size == 1 or X_tu is None:
            return kernel_with_sigma(base, float(sigmas[len(sigmas) // 2]))
        scores = []
        for sig in sigmas:
            kern = kernel_with_sigma(base, float(sig))
            _, score = fit_svm_by_hinge(kern(X_tr), y_tr, kern(X_tu, X_tr), y_tu, lambdas)
            scores.append(score)
        return kernel_with_sigma(base, float(sigmas[int(np.argmin(scores))]))

    # ------------------------------------------------------------------------- predict
    def decision_function(self, X, pt: float | None = None) -> np.ndarray:
        """Final SVM decision values (of level ``pt``, default the chosen one); shape (n,)."""
        check_is_fitted(self, "svm_")
        X = validate_predict_data(self, X)
        fit = self.svm_ if pt is None else self.level_svms_.get(float(pt))
        if fit is None:
            raise InputError(f"level {pt!r} was not fitted; fitted: {sorted(self.level_svms_)}")
        return fit.decision(self.kernel_(X, self.X_train_))

    def _ladder_estimate(self, X: np.ndarray):
        if hasattr(self.ladder_, "decision_at"):
            F = self.ladder_.decision_at(X)
        else:
            F = self.ladder_.decision(self.kernel_(X, self.X_train_))
        return probabilities_from_signs(F > 0, self.weights_, self.rule)

    def _estimate(self, X):
        check_is_fitted(self, "svm_")
        X = validate_predict_data(self, X)
        est = self._ladder_estimate(X)
        f = self.svm_.decision(self.kernel_(X, self.X_train_))
        half = 0.5 / (self.weights_.size + 1)  # half a grid step, 1/(2M)
        p, lo, hi = est.p.copy(), est.lo.copy(), est.hi.copy()
        up = (f > 0) & ~(p > 0.5)
        down = ~(f > 0) & (p > 0.5)
        p[up], lo[up], hi[up] = 0.5 + half / 2, 0.5, 0.5 + half
        p[down], lo[down], hi[down] = 0.5 - half / 2, 0.5 - half, 0.5
        return p, lo, hi, f, est.p

    def predict_proba(self, X) -> np.ndarray:
        """Probabilities; shape (n, 2), columns in the order of ``classes_``."""
        p = self._estimate(X)[0]
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        """The final SVM's class (the argmax of ``predict_proba``); shape (n,)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def report(self, X) -> ProbabilityReport:
        """Probabilities, labels, brackets, SVM decision and ladder estimate for ``X``."""
        p, lo, hi, f, p_ladder = self._estimate(X)
        c0, c1 = self.classes_
        extra = {
            f"lo_{c0}": 1.0 - hi,
            f"hi_{c0}": 1.0 - lo,
            f"lo_{c1}": lo,
            f"hi_{c1}": hi,
            "svm_decision": f,
            "ladder_p": p_ladder,
        }
        return ProbabilityReport.from_proba(self.classes_, np.column_stack([1.0 - p, p]), extra)
