"""The base every probability estimator builds on, in scikit-learn's own style.

:class:`BaseProbabilityClassifier` holds the plumbing that would otherwise repeat in every
scheme (compare ``sklearn/svm/_base.py``):

* parameters declared in ``_parameter_constraints`` (scikit-learn's ``Interval``,
  ``StrOptions``, ...) and checked by ``_fit_context`` before every ``fit``; a bad value
  raises :class:`ParameterError` (both scikit-learn's ``InvalidParameterError`` and the
  project's :class:`~wsvmgui.errors.InputError`), as do the cross-parameter checks of
  ``_check_params``;
* ``fit(X, y, sample_weight=None, *, progress=None, should_cancel=None)`` validates the
  data once (numeric and finite features named by column and row, labels of any dtype
  that name classes, object arrays of integers included, continuous targets refused,
  sample weights as scikit-learn checks them) and hands the scheme ``X``, class indices
  and the weights (:mod:`wsvmgui.estimators._weights`);
* one fitted vocabulary: every fitted estimator has ``lambda_``, ``sigma_``, ``C_`` (floats,
  NaN where the scheme has no such number or one per sub-problem) and ``tuning_`` (None
  when nothing was tuned), and :meth:`fitted_summary`;
* every predict-side method checks that the estimator is fitted first
  (``NotFittedError``) and validates ``X`` against the training columns;
  ``predict = classes_[argmax predict_proba]``;
* ``report(X)`` (a :class:`~wsvmgui.estimators.report.ProbabilityReport`) and
  ``predict_bracket(X)``.

A scheme implements ``_fit(X, codes, progress, should_cancel, sample_weight=None) -> dict``
(entries of ``fit_info_``; a scheme whose ``_fit`` takes no ``sample_weight`` is fitted on
integer weights as repeated rows), ``_proba(X)`` and, for extra report columns,
``_report(X)``, all on validated arrays.  The parameter families shared by several
schemes (kernel, penalty, ladder grid, tuning) are declared once below and merged into
each scheme's constraints.
"""

from __future__ import annotations

import inspect
import time
from contextlib import contextmanager
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import Interval, InvalidParameterError, StrOptions, fit_context
from ..errors import InputError
from ..ladder.engines import ENGINES
from ..ladder.rules import RULES, LadderEstimate
from ..progress import CancelCheck, ProgressCallback
from ..solvers.kernels import KERNELS
from ..solvers.wsvm import SOLVERS
from ._summary import summary
from ._validation import validate_fit_data, validate_predict_data
from ._weights import as_repeats, fit_weights, repeat_cv
from .cost import check_fit
from .report import ProbabilityReport


class ParameterError(InputError, InvalidParameterError):
    """A bad estimator parameter: scikit-learn's ``InvalidParameterError`` and an InputError."""


_POSITIVE = Interval(Real, 0, None, closed="neither")

#: Kernel parameters (every kernel scheme).
KERNEL_CONSTRAINTS: dict[str, list[Any]] = {
    "kernel": [StrOptions(set(KERNELS))],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Interval(Real, None, None, closed="neither")],
    "poly_gamma": [_POSITIVE],
}
#: Penalty and RBF width, fixed or as tuning grids.
PENALTY_CONSTRAINTS: dict[str, list[Any]] = {
    "lam": [_POSITIVE, None],
    "sigma": [_POSITIVE, None],
    "lambdas": ["array-like", None],
    "sigmas": ["array-like", None],
}
#: The engine of a binary ladder, its weight grid and how it becomes probabilities.
LADDER_CONSTRAINTS: dict[str, list[Any]] = {
    "engine": [StrOptions(set(ENGINES))],
    "n_weights": [Interval(Integral, 2, None, closed="left"), None],
    "weights": ["array-like", None],
    "rule": [StrOptions(set(RULES))],
}
#: The weighted-SVM solver of a ladder.
SOLVER_CONSTRAINTS: dict[str, list[Any]] = {
    "solver": [StrOptions(set(SOLVERS))],
    "qp_solver": [str],
}
#: Threads (scikit-learn's meaning: None is 1, -1 all cores, -2 all but one, 0 refused).
N_JOBS_CONSTRAINT: list[Any] = [
    Interval(Integral, None, -1, closed="right"),
    Interval(Integral, 1, None, closed="left"),
    None,
]


#: ``cv``: "auto", k folds, a hold-out share, a splitter or an iterable of (train, test).
CV_CONSTRAINT: list[Any] = [
    StrOptions({"auto"}),
    Interval(Integral, 2, None, closed="left"),
    Interval(Real, 0, 1, closed="neither"),
    "cv_object",
]
#: Tuning parameters of every tuned scheme (see :mod:`wsvmgui.estimators._ladder`).
TUNING_CONSTRAINTS: dict[str, list[Any]] = {
    "cv": CV_CONSTRAINT,
    "refit": ["boolean"],
    "n_jobs": N_JOBS_CONSTRAINT,
    "random_state": ["random_state"],
}


def n_threads(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` in scikit-learn's meaning (None: 1, -1: all cores)."""
    return int(effective_n_jobs(n_jobs))


def seed_of(random_state) -> int:
    """An integer seed from ``random_state`` for helpers that take one (None gives 0)."""
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    return int(random_state)


def check_positive_grid(name: str, values) -> np.ndarray | None:
    """A grid parameter as a 1-D float array of positive finite numbers (None stays None).

    Raises
    ------
    ParameterError
        An empty grid, or a value that is not a positive finite number.
    """
    if values is None:
        return None
    try:
        grid = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must hold numbers, got {values!r}") from None
    if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
        raise ParameterError(f"{name} must be a non-empty list of positive numbers, got {values!r}")
    return grid


def check_finite_positive(name: str, value) -> None:
    """Refuse an infinite fixed value that the ``Interval`` constraint lets through."""
    if value is not None and not np.isfinite(value):
        raise ParameterError(f"{name} must be a finite positive number, got {value!r}")


class BaseProbabilityClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict plumbing of the probability estimators (see the module docstring).

    Class attributes
    ----------------
    _parameter_constraints : dict
        scikit-learn's declarative parameter constraints.
    _n_classes : int or None
        Exact number of classes the scheme takes (2 for binary-only schemes), or None.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    _n_classes: ClassVar[int | None] = None

    classes_: np.ndarray
    fit_info_: dict[str, Any]
    #: Penalty of the final fit (NaN: none, or one per sub-problem).
    lambda_: float
    #: RBF width of the final fit (NaN: another kernel, none, or one per sub-problem).
    sigma_: float
    #: ``1 / (2 n lambda)`` of the final fit, ``n`` its rows (their summed weights).
    C_: float
    #: The tuning table(s) (:class:`~wsvmgui.ladder.gridsearch.TuningResult`, or a dict of
    #: them by sub-problem or stage), or None when nothing was tuned.
    tuning_: Any

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self._n_classes is None
        return tags

    # ------------------------------------------------------------------ parameters
    def _validate_params(self) -> None:
        """scikit-learn's declarative checks, then the scheme's cross-parameter checks."""
        try:
            super()._validate_params()
        except InvalidParameterError as exc:
            raise ParameterError(str(exc)) from None
        for name, constraints in self._parameter_constraints.items():
            # scikit-learn's Interval(Integral, ...) lets True through as 1.
            value = getattr(self, name)
            numeric = any(isinstance(c, Interval) for c in constraints)
            if numeric and "boolean" not in constraints and isinstance(value, (bool, np.bool_)):
                raise ParameterError(
                    f"The {name!r} parameter of {type(self).__name__} must be a number, "
                    f"not a boolean. Got {value!r} instead."
                )
        self._check_params()

    def _check_params(self) -> None:
        """Checks beyond single-parameter constraints; raise :class:`ParameterError`."""

    # ------------------------------------------------------------------ fit
    @fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X,
        y,
        sample_weight=None,
        *,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ):
        """Fit the scheme (tuning what its parameters leave open).

        Parameters
        ----------
        X : array-like, shape (n, p)
        y : array-like, shape (n,)
            Class labels of any dtype (text, integers, an object array of either).
        sample_weight : array-like, shape (n,), optional
            Row i counts ``sample_weight[i]`` times: it multiplies the row's bound
            ``C S(y_i)`` in every SVM fit (as libsvm's per-sample weights do) and its term
            in the tuning score (see :mod:`wsvmgui.estimators._weights`).
        progress : callable, optional
            ``progress(done, total, partial)`` after every unit of work (one fit).
        should_cancel : callable, optional
            Polled between fits; True stops the fit with
            :class:`~wsvmgui.errors.Cancelled`.

        Returns
        -------
        self

        Raises
        ------
        CostLimitError
            The fit is estimated to take longer than the cost limit
            (:func:`wsvmgui.estimators.cost.cost_limit`); checked before it starts.
        MemoryBudgetError
            Its arrays would not fit in memory (checked before they are allocated).
        """
        start = time.perf_counter()
        X, classes, codes = validate_fit_data(self, X, y, n_classes=self._n_classes)
        sw = fit_weights(sample_weight, X, classes, codes, self._n_classes)
        self.classes_ = classes
        check_fit(self, X, codes)  # the cost guard: plan, memory caps, time limit
        if sw is None:
            info = self._fit(X, codes, progress, should_cancel)
        elif self._takes_sample_weight():
            weighted: Any = self._fit
            info = weighted(X, codes, progress, should_cancel, sample_weight=sw)
            info["sample_weight"] = "weighted fits"
        else:
            counts = as_repeats(sw, type(self).__name__)
            cv = self.get_params(deep=False).get("cv", "auto")
            with self._swapped(cv=repeat_cv(cv, codes, counts)):
                rows = np.repeat(np.arange(codes.size), counts)
                info = self._fit(X[rows], codes[rows], progress, should_cancel)
            info["sample_weight"] = "repeated rows"
        self._complete_vocabulary(info)
        self.fit_info_ = {**info, "seconds": time.perf_counter() - start}
        return self

    def _takes_sample_weight(self) -> bool:
        """Whether ``_fit`` takes ``sample_weight`` (else integer weights become repeats)."""
        return "sample_weight" in inspect.signature(self._fit).parameters

    @contextmanager
    def _swapped(self, **params: Any):
        """Parameters set to other values while fitting (restored afterwards)."""
        old = {k: v for k, v in self.get_params(deep=False).items() if k in params}
        for k in old:
            setattr(self, k, params[k])
        try:
            yield
        finally:
            for k, v in old.items():
                setattr(self, k, v)

    def _complete_vocabulary(self, info: dict[str, Any]) -> None:
        """Every fitted estimator has ``lambda_``, ``sigma_``, ``C_`` and ``tuning_``."""
        state: dict[str, Any] = self.__dict__
        state.setdefault("tuning_", None)
        for name in ("lambda_", "sigma_"):
            value = state.get(name)
            state[name] = float("nan") if value is None else float(value)
        if "C_" not in state:
            n = float(info.get("n_train") or "nan")
            self.C_ = 1.0 / (2.0 * n * self.lambda_) if self.lambda_ > 0 else float("nan")

    def fitted_summary(self) -> dict[str, Any]:
        """What was fitted, as plain values, for command lines, exports and views.

        Returns
        -------
        dict
            ``estimator`` (class name), ``classes`` (text), ``lambda``, ``sigma``, ``C``
            (numbers, or None where there is none), ``n_weights`` (M of the ladder or
            grid, or None), ``n_train``, ``tuned`` (bool), ``tuning`` (None, or the
            score's name, the chosen cell ``best``, ``best_score`` and ``edge``; a dict
            of those per sub-problem or stage), ``fit`` (``fit_info_`` without times),
            and the scheme's own entries (divide and conquer: ``subproblems``, each
            sub-problem's name, lambda, sigma, C and M).
        """
        check_is_fitted(self)
        return summary(self, self._n_weights_fitted(), self._summary_extra())

    def _n_weights_fitted(self) -> Any:
        """M of the fitted ladder or grid (None for schemes without one)."""
        return None

    def _summary_extra(self) -> dict[str, Any]:
        """The scheme's own entries of :meth:`fitted_summary`."""
        return {}

    def _fit(
        self,
        X: np.ndarray,
        codes: np.ndarray,
        progress: ProgressCallback | None,
        should_cancel: CancelCheck | None,
    ) -> dict[str, Any]:
        """Fit on validated ``X`` (n, p) and class indices ``codes`` (n,); return fit info.

        A scheme that takes sample weights adds the parameter
        ``sample_weight: ndarray (n,) or None = None`` (the base passes it only then).
        """
        raise NotImplementedError

    # ------------------------------------------------------------------ predict
    def _check_X(self, X) -> np.ndarray:
        """``X`` (m, p) validated against the fitted estimator (NotFittedError first)."""
        check_is_fitted(self)
        return validate_predict_data(self, X)

    def _proba(self, X: np.ndarray) -> np.ndarray:
        """Class probabilities (m, K) of validated ``X``."""
        raise NotImplementedError

    def _report(self, X: np.ndarray) -> ProbabilityReport:
        """The report of validated ``X``; override to add brackets or extra columns."""
        return ProbabilityReport.from_proba(self.classes_, self._proba(X))

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; shape (n, K), columns in the order of ``classes_``."""
        return self._proba(self._check_X(X))

    def predict(self, X) -> np.ndarray:
        """Most probable class, ``classes_[argmax predict_proba]``; shape (n,)."""
        proba = self.predict_proba(X)  # NotFittedError before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]

    def report(self, X) -> ProbabilityReport:
        """Probabilities, labels and the scheme's extra columns for ``X`` (n, p)."""
        return self._report(self._check_X(X))

    def predict_bracket(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Bracket ``[lo, hi]`` of every class probability; two arrays of shape (n, K).

        Raises
        ------
        InputError
            The scheme brackets its sub-problems but not the class probabilities.
        """
        bracket = self.report(X).bracket()
        if bracket is None:
            raise InputError(
                f"{type(self).__name__} gives no bracket of the class probabilities "
                "(report() holds its sub-problems' brackets)"
            )
        return bracket


class BinaryLadderClassifier(BaseProbabilityClassifier):
    """Base of the schemes whose probability is one binary estimate ``P(classes_[1] | x)``.

    A subclass provides ``_estimate(X) -> LadderEstimate`` on validated inputs;
    probabilities, brackets and the report follow here.
    """

    _n_classes: ClassVar[int | None] = 2
    weights_: np.ndarray

    def _estimate(self, X: np.ndarray) -> LadderEstimate:
        raise NotImplementedError

    def _n_weights_fitted(self) -> Any:
        return int(self.weights_.size) + 1

    def _proba(self, X: np.ndarray) -> np.ndarray:
        p = self._estimate(X).p
        return np.column_stack([1.0 - p, p])

    def _report_extra(self, X: np.ndarray, est: LadderEstimate) -> dict[str, np.ndarray]:
        """Columns after the brackets (default: whether each point's signs are monotone)."""
        return {"monotone": est.monotone}

    def _report(self, X: np.ndarray) -> ProbabilityReport:
        est = self._estimate(X)
        lo = np.column_stack([1.0 - est.hi, est.lo])
        hi = np.column_stack([1.0 - est.lo, est.hi])
        extra = ProbabilityReport.bracket_columns(self.classes_, lo, hi)
        extra.update(self._report_extra(X, est))
        return ProbabilityReport.from_proba(
            self.classes_, np.column_stack([1.0 - est.p, est.p]), extra
        )
