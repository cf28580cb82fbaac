"""The non-crossing ladder estimator of Wu & Liu (2011) (METHODS section 3).

The fit itself is :func:`wsvmgui.ladder.noncrossing.fit_noncrossing_ladder`.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError, SolverError
from ..ladder.crossing import CrossingReport
from ..ladder.noncrossing import (
    CONSTRAINTS,
    DEFAULT_MAX_CONSTRAINTS,
    TUNINGS,
    fit_noncrossing_ladder,
)
from ..ladder.rules import LadderEstimate
from ..ladder.tuning import egkl_binary, kernel_with_sigma, stratified_split, tune_ladder
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel, default_sigma_grid
from ._params import LadderParamsMixin
from ._validation import check_labels, validate_fit_data, validate_predict_data
from .report import ProbabilityReport


# ----------------------------------------------------------------------------- estimator
class NonCrossingLadderClassifier(LadderParamsMixin, ClassifierMixin, BaseEstimator):
    """Binary class probabilities from a non-crossing ladder of weighted SVMs (Wu & Liu 2011).

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}
    n_weights : int or None
        M: the ladder fits the interior weights ``m / M``; None: ``default_n_weights(n)``.
    weights : array-like of shape (M - 1,) or None
        Explicit increasing interior weights; overrides ``n_weights``.
    lam : float or None
        Fixed lambda (``C = 1 / (2 n lambda)``); None tunes it over ``lambdas``.
    sigma : float or None
        Fixed RBF width; None tunes it over ``sigmas`` (or, for ``tuning="hinge"``, takes
        the middle of the default grid, sigma_M).
    lambdas, sigmas : array-like or None
        Tuning grids; defaults as :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`.
    degree, coef0, poly_gamma : polynomial kernel ``(poly_gamma x'x' + coef0) ** degree``.
    rule : {"count", "extreme"}
    tuning : {"egkl-independent", "egkl", "hinge"}
        How lambda (and sigma) are chosen on the tuning set: EGKL of the fast independent
        ladder (then the non-crossing ladder is fitted at the winner; default), EGKL of
        the non-crossing ladder itself at every grid cell (slower), or lambda per weight
        by the weighted hinge loss as in Wu & Liu's simulations.
    constraints : {"auto", "hull", "pairs", "compact"}
        See :func:`fit_noncrossing_ladder`.
    max_constraints : int
        Largest number of explicit constraint rows per fit.
    tune_fraction : float
        Share of the training data held out for tuning when no tuning set is given.
    refit : bool
        After tuning, refit on training plus tuning data.
    n_jobs : int
        Threads for the independent-ladder tuning grid.
    random_state : int or None

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
    model_ : NonCrossingLadder
    weights_ : ndarray, shape (M - 1,)
    lambda_ : float (NaN when chosen per weight); lambdas_ : ndarray, shape (M - 1,)
    sigma_ : float
    kernel_ : Kernel
    tuning_ : TuningResult, dict or None
    diagnostics_ : dict
        The ladder's constraint diagnostics plus wall time.
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
        tuning: str = "egkl-independent",
        constraints: str = "auto",
        max_constraints: int = DEFAULT_MAX_CONSTRAINTS,
        tune_fraction: float = 0.3,
        refit: bool = True,
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
        self.constraints = constraints
        self.max_constraints = max_constraints
        self.tune_fraction = tune_fraction
        self.refit = refit
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_params(self) -> None:
        self._check_ladder_params()
        if self.tuning not in TUNINGS:
            raise InputError(f"unknown tuning {self.tuning!r}; choose one of {', '.join(TUNINGS)}")
        if self.constraints not in CONSTRAINTS:
            raise InputError(
                f"unknown constraints {self.constraints!r}; choose one of {', '.join(CONSTRAINTS)}"
            )

    def _sigma_grid(self, X, y_pm) -> np.ndarray:
        if self.kernel != "rbf":
            return np.array([np.nan])
        given = self._given_sigmas()
        return (
            given if given is not None else default_sigma_grid(X, y_pm, seed=self.random_state or 0)
        )

    def _fit_kwargs(self) -> dict:
        return {"constraints": self.constraints, "max_constraints": self.max_constraints}

    def fit(
        self,
        X,
        y,
        *,
        X_tune=None,
        y_tune=None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ) -> NonCrossingLadderClassifier:
        """Tune and fit the non-crossing ladder.

        Parameters
        ----------
        X : array-like, shape (n, p)
        y : array-like, shape (n,)
            Two classes of any label type; ``classes_[1]`` is the positive class.
        X_tune, y_tune : array-like, shapes (m, p) and (m,), optional
            Tuning set; without it a stratified ``tune_fraction`` split is used when
            something is tuned.
        progress, should_cancel
            Reported after every weighted fit; polled between fits.

        Returns
        -------
        self
        """
        start = time.perf_counter()
        self._check_params()
        X, y = validate_fit_data(self, X, y)
        self.classes_ = check_labels(y, n_classes=2)
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        base = Kernel(
            self.kernel,
            sigma=1.0 if self.sigma is None else float(self.sigma),
            degree=self.degree,
            coef0=self.coef0,
            gamma=self.poly_gamma,
        )
        lam_fixed = self.lam is not None or (
            self.lambdas is not None and np.size(self.lambdas) == 1
        )
        sig_fixed = (
            self.kernel != "rbf"
            or self.sigma is not None
            or (self.sigmas is not None and np.size(self.sigmas) == 1)
        )
        needs_tuning = not (lam_fixed and sig_fixed)
        tuning = None
        lam_grid = None
        if needs_tuning:
            X_tr, X_tu, y_tr, y_tu = self._split(X, y_pm, X_tune, y_tune)
            weights = self._weight_grid(y_tr.size)
            lambdas = self._lambda_grid(y_tr.size)
            sigmas = self._sigma_grid(X_tr, y_tr)
            if self.tuning == "hinge":
                sigma = float(sigmas[len(sigmas) // 2]) if self.sigma is None else self.sigma
                lam, lam_grid, tuning = np.nan, lambdas, {"sigma": sigma, "lambdas": lambdas}
                X_fit, y_fit = X_tr, y_tr
            else:
                lam, sigma, tuning = self._tune_egkl(
                    X_tr,
                    y_tr,
                    X_tu,
                    y_tu,
                    base,
                    weights,
                    lambdas,
                    sigmas,
                    progress,
                    should_cancel,
                )
                X_fit, y_fit = (
                    (np.vstack([X_tr, X_tu]), np.concatenate([y_tr, y_tu]))
                    if (self.refit)
                    else (X_tr, y_tr)
                )
                if self.refit and self.weights is None and self.n_weights is None:
                    weights = self._weight_grid(y_fit.size)
        else:
            X_fit, y_fit = X, y_pm
            X_tu = y_tu = None
            weights = self._weight_grid(y_fit.size)
            lam = float(self._lambda_grid(y_fit.size)[0])
            sigma = float(self._sigma_grid(X, y_pm)[0])
        kernel = kernel_with_sigma(base, sigma)
        model = fit_noncrossing_ladder(
            X_fit,
            y_fit,
            weights,
            lam,
            kernel,
            lam_grid=lam_grid,
            X_tune=X_tu,
            y_tune=y_tu,
            progress=progress,
            should_cancel=should_cancel,
            **self._fit_kwargs(),
        )
        self.model_ = model
        self.weights_ = weights
        self.kernel_ = kernel
        self.lambdas_ = model.lams
        self.lambda_ = float(model.ladder.lam)
        self.sigma_ = float(sigma) if kernel.name == "rbf" else float("nan")
        self.tuning_ = tuning
        self.diagnostics_ = {
            **model.diagnostics,
            "n_train": int(y_fit.size),
            "seconds": time.perf_counter() - start,
        }
        return self

    def _split(self, X, y_pm, X_tune, y_tune):
        if X_tune is None:
            return stratified_split(X, y_pm, self.tune_fraction, self.random_state)
        X_tu = validate_predict_data(self, X_tune)
        y_raw = np.asarray(y_tune)
        if y_raw.shape[0] != X_tu.shape[0]:
            raise InputError("the tuning set's X and y have different lengths")
        unknown = ~np.isin(y_raw, self.classes_)
        if unknown.any():
            raise InputError(f"tuning label {y_raw[unknown][0]!r} is not a training class")
        return X, X_tu, y_pm, np.where(y_raw == self.classes_[1], 1.0, -1.0)

    def _tune_egkl(
        self, X_tr, y_tr, X_tu, y_tu, base, weights, lambdas, sigmas, progress, should_cancel
    ):
        if self.tuning == "egkl-independent":
            res = tune_ladder(
                X_tr,
                y_tr,
                X_tu,
                y_tu,
                base,
                weights,
                lambdas,
                sigmas if self.kernel == "rbf" else None,
                self.rule,
                n_jobs=self.n_jobs,
                seed=self.random_state or 0,
                progress=progress,
                should_cancel=should_cancel,
            )
            return res.best_lambda, res.best_sigma, res
        scores = np.full((lambdas.size, sigmas.size), np.inf)
        tracker = ProgressTracker(lambdas.size * sigmas.size, progress, should_cancel)
        failures: list[str] = []
        for j, sig in enumerate(sigmas):
            kern = kernel_with_sigma(base, sig)
            for i, lam in enumerate(lambdas):
                try:
                    mdl = fit_noncrossing_ladder(
                        X_tr,
                        y_tr,
                        weights,
                        float(lam),
                        kern,
                        should_cancel=should_cancel,
                        **self._fit_kwargs(),
                    )
                    scores[i, j] = egkl_binary(mdl.estimate(X_tu, self.rule).p, y_tu)
                except SolverError as exc:
                    failures.append(str(exc))
                tracker.step()
        if not np.isfinite(scores).any():
            raise SolverError(
                "every fit of the tuning grid failed; first failure: "
                + (failures[0] if failures else "unknown")
            )
        i, j = np.unravel_index(int(np.argmin(scores)), scores.shape)
        table = {"lambdas": lambdas, "sigmas": sigmas, "egkl": scores, "failures": failures}
        return float(lambdas[i]), float(sigmas[j]), table

    # ------------------------------------------------------------------------- predict
    def ladder_decision(self, X) -> np.ndarray:
        """Decision values of every fit; shape (n, M - 1), positive favours ``classes_[1]``."""
        check_is_fitted(self, "model_")
        return self.model_.decision_at(validate_predict_data(self, X))

    def estimate(self, X) -> LadderEstimate:
        """Probability of ``classes_[1]`` with bracket and monotonicity, each shape (n,)."""
        check_is_fitted(self, "model_")
        from ..ladder.rules import probabilities_from_signs

        return probabilities_from_signs(self.ladder_decision(X) > 0, self.weights_, self.rule)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; shape (n, 2), columns in the order of ``classes_``."""
        p = self.estimate(X).p
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        """Most probable class; shape (n,)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def predict_bracket(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Bracket ``[lo, hi]`` of ``P(classes_[1] | x)``; two arrays of shape (n,)."""
        est = self.estimate(X)
        return est.lo, est.hi

    def crossing_diagnostics(self, space: str | None = None, **kwargs) -> CrossingReport:
        """Crossings of the fitted ladder inside the training hull (see
        :func:`~wsvmgui.ladder.crossing.crossing_diagnostics`)."""
        check_is_fitted(self, "model_")
        return self.model_.crossing(space, **kwargs)

    def report(self, X) -> ProbabilityReport:
        """Probabilities, labels and each class's bracket for ``X`` (n, p)."""
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
