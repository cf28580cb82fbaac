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
* Sample weights: integer weights give the learner the rows repeated (learners count rows,
  e.g. a tree's smallest leaf); other weights multiply the learner's weights ``1 - p`` /
  ``p``.  Either way a row's weight counts in the intervals' occupancy and in the tuning
  score.
"""

from __future__ import annotations

import itertools
import warnings
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import has_fit_parameter

from .._sklearn_compat import HasMethods, Interval, StrOptions
from ..errors import InputError
from ..executor import LocalExecutor
from ..ladder.gridsearch import FoldScore, Grid, Job, JobContext, TuningResult, grid_search
from ..ladder.splits import resolve_cv
from ..probing.learners import LEARNER_NAMES, make_learner
from ..probing.reduction import COSTING, LOSSES, BinaryProbing, Steps, learn_probing
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ._base import TUNING_CONSTRAINTS, BaseProbabilityClassifier, ParameterError, seed_of
from ._weights import MAX_REPEATS
from .report import ProbabilityReport


def _learner_rows(
    X: np.ndarray, codes: np.ndarray, sample_weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The rows the learner sees: integer weights as repeated rows (learners count rows,
    e.g. a tree's smallest leaf, so only repeats make a row of weight k count as k rows),
    up to ``MAX_REPEATS`` times the rows; other weights are kept to multiply the
    learner's weights."""
    if sample_weight is None or not np.all(sample_weight == np.round(sample_weight)):
        return X, codes, sample_weight
    if sample_weight.sum() > MAX_REPEATS * sample_weight.size:
        return X, codes, sample_weight
    rows = np.repeat(np.arange(codes.size), sample_weight.astype(np.int64))
    return X[rows], codes[rows], None


class ProbingClassifier(BaseProbabilityClassifier):
    """Class probabilities from any classifier learner by Probing (Langford & Zadrozny).

    Parameters
    ----------
    learner : str or scikit-learn classifier, default="tree"
        A name from :data:`LEARNER_NAMES` or an estimator (cloned per threshold).
    learner_params : dict or None
        Parameters for the learner (e.g. ``{"C": 10, "gamma": 0.5}`` for "svm").
    param_grid : dict of str to list, or None
        Learner parameters to tune (every combination, like scikit-learn's
        ``GridSearchCV``), scored by the cross-entropy of the Probing estimate on the
        ``cv`` tuning rows; None (default) tunes nothing.
    n_thresholds : int or None
        Classifiers per binary problem; None: ``max(floor(sqrt(n)), 20) - 1``, as many as
        the weight ladder fits.
    loss : {"squared", "cross_entropy"}
        Loss whose minimax rules choose the thresholds and the reported points.
    costing : {"auto", "always", "never"}
        Use the costing reduction: when the learner lacks ``sample_weight`` ("auto"),
        always, or never (then a learner without ``sample_weight`` is an error).
    n_costing_rounds : int
    cv : "auto", int, float, splitter or iterable, default="auto"
        Tuning splits of ``param_grid`` (as for the ladder schemes: 5-fold CV up to 500
        points, a 30% hold-out above, adapted to small classes); unused without
        ``param_grid``.
    refit : bool, default=True
        Fit the chosen parameters on all rows; False keeps the fit on the first split's
        training rows.
    random_state : int, RandomState or None, default=0

    Attributes
    ----------
    classes_ : ndarray, shape (K,)
    lambda_, sigma_, C_ : float
        NaN: Probing has no penalty or kernel width of its own (a learner's parameters
        are in ``best_params_``).
    tuning_ : TuningResult or None
        The tuning cross-entropy over ``param_grid`` (None without one).
    problems_ : list of BinaryProbing
        One per binary problem (``classes_[1]`` for K = 2, ``classes_[:-1]`` otherwise).
    problem_classes_ : ndarray
        The class of each problem.
    thresholds_ : list of ndarray
        Sorted thresholds of each problem.
    costing_ : bool
    best_params_ : dict
        The learner parameters used (tuned ones included).
    fit_info_ : dict
        Classifiers trained, rows of the final fit, and the axes on which the tuned
        cell sits at the grid's edge (``"tuning_edge"``).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        # No n_jobs: each threshold depends on the classifiers before it.
        **{k: v for k, v in TUNING_CONSTRAINTS.items() if k != "n_jobs"},
        "learner": [StrOptions(set(LEARNER_NAMES)), HasMethods(["fit", "predict"])],
        "learner_params": [dict, None],
        "param_grid": [dict, None],
        "n_thresholds": [Interval(Integral, 1, None, closed="left"), None],
        "loss": [StrOptions(set(LOSSES))],
        "costing": [StrOptions(set(COSTING))],
        "n_costing_rounds": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        learner="tree",
        learner_params: dict | None = None,
        param_grid: dict | None = None,
        n_thresholds: int | None = None,
        loss: str = "squared",
        costing: str = "auto",
        n_costing_rounds: int = 10,
        cv="auto",
        refit: bool = True,
        random_state=0,
    ) -> None:
        self.learner = learner
        self.learner_params = learner_params
        self.param_grid = param_grid
        self.n_thresholds = n_thresholds
        self.loss = loss
        self.costing = costing
        self.n_costing_rounds = n_costing_rounds
        self.cv = cv
        self.refit = refit
        self.random_state = random_state

    def _check_params(self) -> None:
        for name, values in (self.param_grid or {}).items():
            if isinstance(values, str) or not hasattr(values, "__len__") or len(values) == 0:
                raise ParameterError(
                    f"param_grid[{name!r}] must be a non-empty list of values, got {values!r}"
                )

    def _prototype(self, params: dict) -> BaseEstimator:
        if isinstance(self.learner, str):
            return make_learner(self.learner, seed_of(self.random_state), **params)
        try:
            return clone(self.learner).set_params(**params)
        except ValueError as exc:
            raise InputError(f"bad parameters for learner: {exc}") from None

    def _candidates(self) -> list[dict]:
        grid = self.param_grid or {}
        names = sorted(grid)
        return [
            {**(self.learner_params or {}), **dict(zip(names, combo, strict=True))}
            for combo in itertools.product(*(grid[k] for k in names))
        ]

    def _n_thresholds(self, n: float) -> int:
        if self.n_thresholds is None:
            return max(int(np.floor(np.sqrt(n))), 20) - 1
        return int(self.n_thresholds)

    def _learn(
        self,
        X: np.ndarray,
        codes: np.ndarray,
        params: dict,
        tracker: Steps,
        sample_weight: np.ndarray | None,
    ) -> tuple[list[BinaryProbing], bool]:
        """Probing of every binary problem with learner ``params``; (problems, costing)."""
        X, codes, sample_weight = _learner_rows(X, codes, sample_weight)
        prototype = self._prototype(params)
        weighted = has_fit_parameter(prototype, "sample_weight")
        if self.costing == "never" and not weighted:
            raise InputError(
                f"learner {type(prototype).__name__} does not accept sample_weight; "
                "use costing='auto' or 'always'"
            )
        use_costing = self.costing == "always" or (self.costing == "auto" and not weighted)
        K = self.classes_.size
        targets = [1] if K == 2 else list(range(K - 1))
        seed = seed_of(self.random_state)
        n = codes.size if sample_weight is None else float(sample_weight.sum())
        T = self._n_thresholds(n)
        problems = [
            learn_probing(
                X,
                (codes == c).astype(int),
                lambda _s: clone(prototype),
                T,
                self.loss,
                use_costing,
                self.n_costing_rounds,
                seed + 1000003 * i,
                tracker,
                str(self.classes_[c]),
                sample_weight,
            )
            for i, c in enumerate(targets)
        ]
        return problems, use_costing

    def _fit(
        self,
        X: np.ndarray,
        codes: np.ndarray,
        progress: ProgressCallback | None,
        should_cancel: CancelCheck | None,
        sample_weight: np.ndarray | None = None,
    ) -> dict[str, Any]:
        K = self.classes_.size
        n = codes.size if sample_weight is None else float(sample_weight.sum())
        per_fit = self._n_thresholds(n) * (1 if K == 2 else K - 1)
        tracker = ProgressTracker(per_fit, progress, should_cancel)
        folds = (
            resolve_cv(self.cv, self.classes_[codes], self.random_state)
            if (self.param_grid)
            else []
        )
        rows = np.arange(codes.size)
        tuning = None
        best = self._candidates()[0]
        if folds:
            tuning = self._tune(X, codes, folds, per_fit, tracker, sample_weight)
            best = {**(self.learner_params or {}), **tuning.best_params}
            if not self.refit:
                rows = folds[0][0]
        tracker.check()
        sw = None if sample_weight is None else sample_weight[rows]
        self.problems_, self.costing_ = self._learn(X[rows], codes[rows], best, tracker, sw)
        self.problem_classes_ = self.classes_[[1] if K == 2 else list(range(K - 1))]
        self.thresholds_ = [pr.thresholds for pr in self.problems_]
        self.best_params_ = best
        self.tuning_ = tuning
        return {
            "n_classifiers": tracker.done,
            "n_train": int(rows.size) if sw is None else float(sw.sum()),
            "tuning_edge": {} if tuning is None else dict(tuning.edge),
        }

    def _tune(self, X, codes, folds, per_fit, tracker, sample_weight) -> TuningResult:
        """Cross-entropy of the Probing estimate on the tuning rows over ``param_grid``."""
        grid = self.param_grid or {}
        fixed = self.learner_params or {}

        def fit(job: Job, ctx: JobContext) -> list[BinaryProbing]:
            sw = None if sample_weight is None else sample_weight[job.train]
            params = {**fixed, **job.params}
            return self._learn(X[job.train], codes[job.train], params, ctx, sw)[0]

        def score(model: object, job: Job, ctx: JobContext) -> FoldScore:
            assert isinstance(model, list)
            te = job.test
            p = self._proba_and_brackets(X[te], model)[0]
            terms = np.log(np.maximum(p[np.arange(te.size), codes[te]], 1e-15))
            if sample_weight is None:
                return FoldScore(-float(np.sum(terms)), float(te.size))
            return FoldScore(
                -float(np.sum(sample_weight[te] * terms)), float(sample_weight[te].sum())
            )

        cells = Grid({name: list(grid[name]) for name in sorted(grid)})
        return grid_search(
            cells, folds, fit, score, tracker=tracker, executor=LocalExecutor(1),
            units=per_fit, score_name="cross_entropy",
        )  # fmt: skip

    @property
    def tuning_table_(self) -> list[dict[str, Any]]:
        """Deprecated: ``tuning_.rows()`` (here with the fixed ``learner_params`` too)."""
        warnings.warn(
            "ProbingClassifier: tuning_table_ is deprecated and will be removed; use "
            "tuning_.rows()",
            FutureWarning,
            stacklevel=2,
        )
        if self.tuning_ is None:
            return []
        return [{**(self.learner_params or {}), **row} for row in self.tuning_.rows()]

    def intervals(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimates and intervals of every binary problem.

        Returns
        -------
        p, lo, hi : ndarray, shape (n, P)
            Column j for class ``problem_classes_[j]``.
        """
        return self._intervals(self._check_X(X))

    def _intervals(
        self, X: np.ndarray, problems: list[BinaryProbing] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = [pr.estimate(X) for pr in (self.problems_ if problems is None else problems)]
        p, lo, hi = (np.column_stack([part[i] for part in parts]) for i in range(3))
        return p, lo, hi

    def _proba_and_brackets(self, X: np.ndarray, problems: list[BinaryProbing] | None = None):
        p, lo, hi = self._intervals(X, problems)
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

    def _proba(self, X: np.ndarray) -> np.ndarray:
        return self._proba_and_brackets(X)[0]

    def _report(self, X: np.ndarray) -> ProbabilityReport:
        """Probabilities, labels and each class's interval."""
        proba, los, his = self._proba_and_brackets(X)
        return ProbabilityReport.from_proba(
            self.classes_, proba, ProbabilityReport.bracket_columns(self.classes_, los, his)
        )


__all__ = ["ProbingClassifier"]
