"""The binary weighted-SVM probability estimator (Wang, Shen & Liu 2008).

Fits a ladder of weighted SVMs over a grid of class weights, tunes lambda (and sigma for
the RBF kernel) by EGKL on a tuning set, and reads each point's probability off where
its predicted label changes along the ladder (METHODS sections 1 and 2).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError
from ..ladder.grid import FitEvent, Ladder, fit_ladder
from ..ladder.rules import LadderEstimate
from ..ladder.tuning import (
    TuningResult,
    cv_folds,
    default_lambda_grid,
    kernel_with_sigma,
    stratified_split,
    tune_ladder_folds,
)
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel
from ..solvers.wsvm import SOLVERS
from ._params import LadderParamsMixin
from ._validation import check_labels, validate_fit_data, validate_predict_data
from .report import ProbabilityReport

#: Tuning modes of the estimator; "auto" cross-validates small data and splits large data.
TUNING = ("auto", "split", "cv")
#: Largest training size that "auto" tunes by cross-validation (below it a single split
#: wastes too many points; see benchmarks/results/binary_tuning.md).
AUTO_CV_MAX_N = 500


class WeightedSVMClassifier(LadderParamsMixin, ClassifierMixin, BaseEstimator):
    """Binary class probabilities from a ladder of weighted SVMs.

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}
    n_weights : int or None
        M: the ladder fits the interior weights ``m / M``.  None: ``default_n_weights(n)``.
    weights : array-like of shape (M - 1,) or None
        Explicit increasing interior weights in (0, 1); overrides ``n_weights``.
    lam : float or None
        Fixed penalty lambda; None tunes it over ``lambdas``.
    sigma : float or None
        Fixed RBF width; None tunes it over ``sigmas``.
    lambdas : array-like or None
        Lambda grid for tuning; None: ``1 / (2 n C)`` for C in 0.1 ... 100.
    sigmas : array-like or None
        Sigma grid for tuning; None: ``(0.25, ..., 1.5) * sigma_M``.
    degree, coef0, poly_gamma : polynomial kernel ``(poly_gamma x'x' + coef0) ** degree``.
    rule : {"count", "extreme"}
        How a sign ladder becomes a probability (METHODS section 2).
    tuning : {"auto", "split", "cv"}
        How lambda and sigma are tuned by EGKL when no tuning set is given to ``fit``:
        on a stratified ``tune_fraction`` split, by stratified ``cv_folds``-fold
        cross-validation, or "auto": cross-validation up to ``AUTO_CV_MAX_N`` training
        points, a split above.
    tune_fraction : float
        Share of the training data held out for tuning in "split" mode.
    cv_folds : int
        Folds of "cv" mode.
    refit : bool
        After tuning on a split or a tuning set, refit on training plus tuning data
        (default; with the tuned C = 1 / (2 n lambda) kept) or keep the training-only
        fit of the papers.  Cross-validation always fits the final model on all points.
    solver : {"libsvm", "qp"}
    qp_solver : str
        qpsolvers backend for ``solver="qp"``.
    n_jobs : int
        Threads fitting sigmas of the tuning grid, and weights of the final ladder, at
        once.
    random_state : int or None
        Seed of the tuning split.

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
    ladder_ : Ladder
        The fitted ladder over the support points ``X_support_``.
    X_support_ : ndarray, shape (s, p)
    kernel_ : Kernel
    lambda_, sigma_ : float
    weights_ : ndarray, shape (M - 1,)
    tuning_ : TuningResult or None
    fit_info_ : dict
        Fits made, largest KKT residual, wall time.
    """

    def __init__(
        self,
        kernel: str = "rbf",
        n_weights: int | None = None,
        weights=None,
        lam: float | None = None,
        sigma: float | None = None,
        lambdas=None,
        sigmas=None,
        degree: int = 3,
        coef0: float = 1.0,
        poly_gamma: float = 1.0,
        rule: str = "count",
        tuning: str = "auto",
        tune_fraction: float = 0.3,
        cv_folds: int = 5,
        refit: bool = True,
        solver: str = "libsvm",
        qp_solver: str = "quadprog",
        n_jobs: int = 1,
        random_state: int | None = 0,
    ) -> None:
        self.kernel = kernel
        self.n_weights = n_weights
        self.weights = weights
        self.lam = lam
        self.sigma = sigma
        self.lambdas = lambdas
        self.sigmas = sigmas
        self.degree = degree
        self.coef0 = coef0
        self.poly_gamma = poly_gamma
        self.rule = rule
        self.tuning = tuning
        self.tune_fraction = tune_fraction
        self.cv_folds = cv_folds
        self.refit = refit
        self.solver = solver
        self.qp_solver = qp_solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # ----------------------------------------------------------------------------- fit
    def _check_params(self) -> None:
        self._check_ladder_params()
        if self.solver not in SOLVERS:
            raise InputError(f"unknown solver {self.solver!r}; choose one of {', '.join(SOLVERS)}")
        if self.tuning not in TUNING:
            raise InputError(
                f"unknown tuning mode {self.tuning!r}; choose one of {', '.join(TUNING)}"
            )

    def _needs_tuning(self) -> bool:
        lam_fixed = self.lam is not None or (
            self.lambdas is not None and np.size(self.lambdas) == 1
        )
        sig_fixed = (
            self.kernel != "rbf"
            or self.sigma is not None
            or (self.sigmas is not None and np.size(self.sigmas) == 1)
        )
        return not (lam_fixed and sig_fixed)

    def fit(
        self,
        X,
        y,
        *,
        X_tune=None,
        y_tune=None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ) -> WeightedSVMClassifier:
        """Tune and fit the ladder.

        Parameters
        ----------
        X : array-like, shape (n, p)
        y : array-like, shape (n,)
            Two classes of any label type.
        X_tune, y_tune : array-like, shapes (m, p) and (m,), optional
            Tuning set; without it a stratified ``tune_fraction`` split of the training
            data is used (only when something is tuned).
        progress : callable, optional
            ``progress(done, total, partial)`` after every weighted fit.
        should_cancel : callable, optional
            Polled between fits; True stops the fit with :class:`Cancelled`.

        Returns
        -------
        self
        """
        start = time.perf_counter()
        self._check_params()
        X, y = validate_fit_data(self, X, y)
        self.classes_ = check_labels(y, n_classes=2)
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        base_kernel = Kernel(
            self.kernel,
            sigma=1.0 if self.sigma is None else float(self.sigma),
            degree=self.degree,
            coef0=self.coef0,
            gamma=self.poly_gamma,
        )
        tuning: TuningResult | None = None
        if self._needs_tuning():
            X_all, y_all, folds, fit_rows = self._tuning_folds(X, y, X_tune, y_tune)
            X_fit, y_fit = X_all[fit_rows], y_all[fit_rows]
            weights = self._weight_grid(y_fit.size)
            lambdas = self._lambda_grid(folds[0][0].size)
            sigmas = self._given_sigmas()
            n_sig = 1 if self.kernel != "rbf" else (len(sigmas) if sigmas is not None else 6)
            tracker = ProgressTracker(
                (len(lambdas) * n_sig * len(folds) + 1) * weights.size, progress, should_cancel
            )
            tuning = tune_ladder_folds(
                X_all,
                y_all,
                folds,
                base_kernel,
                weights,
                lambdas,
                sigmas,
                self.rule,
                self.solver,
                self.qp_solver,
                self.n_jobs,
                seed=self.random_state or 0,
                tracker=tracker,
            )
            # Keep the tuned C = 1 / (2 n lambda) for the final fit, as scikit-learn's
            # grid search does: lambda scales with the number of points fitted.
            lam = tuning.best_lambda * folds[0][0].size / y_fit.size
            sigma = tuning.best_sigma
        else:
            X_fit, y_fit = X, y_pm
            weights = self._weight_grid(y_fit.size)
            lam = float(
                self.lam
                if self.lam is not None
                else np.ravel(self.lambdas)[0]
                if self.lambdas is not None
                else default_lambda_grid(y_fit.size)[2]
            )
            sigma = float(
                self.sigma
                if self.sigma is not None
                else np.ravel(self.sigmas)[0]
                if self.sigmas is not None
                else np.nan
            )
            tracker = ProgressTracker(weights.size, progress, should_cancel)
        kernel = kernel_with_sigma(base_kernel, sigma)
        ladder = fit_ladder(
            kernel(X_fit),
            y_fit,
            weights,
            lam,
            self.solver,
            self.qp_solver,
            progress=lambda _d, _t, fit: tracker.step(
                partial=FitEvent("final", fit, X_fit, kernel)
            ),
            should_cancel=tracker.check,
            n_jobs=self.n_jobs,
        )
        self.ladder_, keep = ladder.compress()
        self.X_support_ = X_fit[keep]
        self.kernel_ = kernel
        self.lambda_ = float(lam)
        self.sigma_ = float(sigma) if kernel.name == "rbf" else float("nan")
        self.weights_ = weights
        self.tuning_ = tuning
        self.fit_info_ = {
            "n_fits": tracker.done,
            "n_train": int(y_fit.size),
            "max_kkt_residual": float(ladder.kkt_residual.max()),
            "seconds": time.perf_counter() - start,
        }
        return self

    def tuning_mode(self, n: int, has_tune_set: bool) -> str:
        """The tuning mode used for ``n`` training points: "tune-set", "split" or "cv"."""
        if has_tune_set:
            return "tune-set"
        if self.tuning == "auto":
            return "cv" if n <= AUTO_CV_MAX_N else "split"
        return self.tuning

    def _tuning_folds(self, X, y, X_tune, y_tune):
        """Data, labels in {-1, +1}, (train, tune) index folds and the final fit's rows."""
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        n = y.size
        mode = self.tuning_mode(n, X_tune is not None)
        if mode == "tune-set":
            X_tu = validate_predict_data(self, X_tune)
            y_tu_raw = np.asarray(y_tune)
            if y_tu_raw.shape[0] != X_tu.shape[0]:
                raise InputError("the tuning set's X and y have different lengths")
            unknown = ~np.isin(y_tu_raw, self.classes_)
            if unknown.any():
                raise InputError(f"tuning label {y_tu_raw[unknown][0]!r} is not a training class")
            X_all = np.vstack([X, X_tu])
            y_all = np.concatenate([y_pm, np.where(y_tu_raw == self.classes_[1], 1.0, -1.0)])
            train = np.arange(n)
            folds = [(train, np.arange(n, y_all.size))]
            return X_all, y_all, folds, (np.arange(y_all.size) if self.refit else train)
        if mode == "cv":
            folds = cv_folds(y, self.cv_folds, self.random_state)
            return X, y_pm, folds, np.arange(n)
        # Split on the user's labels so that errors name their classes.
        train, tune, _, _ = stratified_split(
            np.arange(n)[:, None], y, self.tune_fraction, self.random_state
        )
        folds = [(train.ravel(), tune.ravel())]
        return X, y_pm, folds, (np.arange(n) if self.refit else train.ravel())

    # ------------------------------------------------------------------------- predict
    def _cross_kernel(self, X) -> np.ndarray:
        check_is_fitted(self, "ladder_")
        X = validate_predict_data(self, X)
        return self.kernel_(X, self.X_support_)

    def ladder_decision(self, X) -> np.ndarray:
        """Decision values of every weighted fit.

        Parameters
        ----------
        X : array-like, shape (n, p)

        Returns
        -------
        ndarray, shape (n, M - 1)
            Column m is ``f_{pi_m}(x)`` for ``pi_m = weights_[m]``; positive favours
            ``classes_[1]``.
        """
        K_cross = self._cross_kernel(X)  # raises NotFittedError before ladder_ is read
        return self.ladder_.decision(K_cross)

    def ladder_signs(self, X) -> np.ndarray:
        """``ladder_decision(X) > 0``; bool array of shape (n, M - 1)."""
        return self.ladder_decision(X) > 0

    def estimate(self, X) -> LadderEstimate:
        """Probability of ``classes_[1]`` with its bracket and monotonicity, each shape (n,)."""
        K_cross = self._cross_kernel(X)  # raises NotFittedError before ladder_ is read
        return self.ladder_.estimate(K_cross, self.rule)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; shape (n, 2), columns in the order of ``classes_``."""
        p = self.estimate(X).p
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        """Most probable class; shape (n,)."""
        proba = self.predict_proba(X)  # checks fitted before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_bracket(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Bracket ``[lo, hi]`` of ``P(classes_[1] | x)``; two arrays of shape (n,)."""
        est = self.estimate(X)
        return est.lo, est.hi

    def report(self, X) -> ProbabilityReport:
        """Probabilities, labels, and each class's bracket for ``X`` (n, p)."""
        est = self.estimate(X)
        c0, c1 = self.classes_
        extra = {
            f"lo_{c0}": 1.0 - est.hi,
            f"hi_{c0}": 1.0 - est.lo,
            f"lo_{c1}": est.lo,
            f"hi_{c1}": est.hi,
            "monotone": est.monotone,
        }
        return ProbabilityReport.from_proba(
            self.classes_, np.column_stack([1.0 - est.p, est.p]), extra
        )


__all__ = ["WeightedSVMClassifier", "Ladder"]
