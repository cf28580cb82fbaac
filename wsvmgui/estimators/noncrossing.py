"""The non-crossing ladder estimator of Wu & Liu (2011) (METHODS section 3).

The fit itself is :func:`wsvmgui.ladder.noncrossing.fit_noncrossing_ladder` (from the
exact weight path by default); the tuning is the binary ladder's search
(:meth:`~wsvmgui.estimators._ladder.LadderParams._search`) over lambda and sigma, or for
the hinge criterion :func:`~wsvmgui.ladder.gridsearch.grid_search` over sigma (lambda is
chosen per weight inside each ladder's fit).
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import Interval, StrOptions
from ..ladder.crossing import CrossingReport
from ..ladder.engines import DEFAULT_ENGINE
from ..ladder.gridsearch import FoldScore, Grid, Job, grid_search, rescale_lambda
from ..ladder.noncrossing import (
    CONSTRAINTS,
    CRITERIA,
    DEFAULT_MAX_CONSTRAINTS,
    KernelRowsView,
    NonCrossingLadder,
    fit_noncrossing_ladder,
)
from ..ladder.rules import LadderEstimate
from ..ladder.search import LadderProblem, egkl_terms
from ..ladder.tuning import TuningResult, default_n_weights, kernel_with_sigma
from ..ladder.weights import weight_grid
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ._base import BinaryLadderClassifier
from ._ladder import LADDER_SCHEME_CONSTRAINTS, SCREEN_CONSTRAINTS, LadderParams, engine_info
from .views import LadderViews

#: Weight intervals M of the final non-crossing ladder when ``n_weights`` and ``weights``
#: are not given: ``max(default_n_weights(n), min(FINAL_MAX_INTERVALS, FINAL_BUDGET // n))``
#: (160 at n = 100, 80 at n = 200, the tuning's default from n = 400).  The independent
#: ladder's default estimate is grid-free (the exact path's measure of {pi : f_pi(x) > 0});
#: the non-crossing ladder is read off its M - 1 fitted weights, about 1/(4M) of error per
#: point.  At the default M = 40 that alone made it 0.0009 worse in L1 than the independent
#: ladder on Wu & Liu's Example 1 (n = 100, seeds 0-4); at M = 160 it is 0.0001 better
#: (``benchmarks/results/noncrossing_accuracy.md``).  At n = 500 the default M = 44 already
#: beats the independent ladder on Examples 1, 2 and 6 (-0.0042, -0.0069, -0.0070) and M =
#: 160 adds little (-0.0056, -0.0071, -0.0071) for 1.9-2.5x the CPU, so the finer read-off
#: is spent only where fits are cheap (M * n <= FINAL_BUDGET).  The tuning keeps the default.
FINAL_MAX_INTERVALS = 160
FINAL_BUDGET = 16_000


class NonCrossingLadderClassifier(LadderViews, LadderParams, BinaryLadderClassifier):
    """Binary class probabilities from a non-crossing ladder of weighted SVMs (Wu & Liu 2011).

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    n_weights : int >= 2 or None
        M: the ladder fits the interior weights ``m / M``; None: the tuning's ladders use
        ``default_n_weights(n)``, the final ladder a finer grid on small data (160 intervals
        at n = 100; see ``FINAL_MAX_INTERVALS``).
    weights : array-like of shape (M - 1,) or None
        Explicit increasing interior weights; overrides ``n_weights``.
    lam : float or None
        Fixed lambda (``C = 1 / (2 n lambda)``); None tunes it over ``lambdas``.
    sigma : float or None
        Fixed RBF width; None tunes it over ``sigmas`` (every criterion).
    lambdas, sigmas : array-like or None
        Tuning grids; defaults as :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`.
    degree, coef0, poly_gamma : polynomial kernel ``(poly_gamma x'x' + coef0) ** degree``.
    rule : {"count", "extreme", "interpolate"}
        How the ladder becomes a probability.  ``"interpolate"`` reads it where the
        decision value, linear between the two weights around the sign change, crosses
        zero (with the weighted SVM's limits ``f = +1`` at pi = 0 and ``-1`` at pi = 1
        for the end brackets; :func:`~wsvmgui.ladder.noncrossing.estimate_with_ends`).
    criterion : {"egkl-independent", "egkl", "hinge"}
        How lambda and sigma are chosen over the ``cv`` splits: EGKL of the fast
        independent ladder (the binary ladder's search, the same engine), then the
        non-crossing ladder at the winner (default); EGKL of the non-crossing ladder
        itself at every cell (slower); or, as in Wu & Liu's simulations, lambda per weight
        by the weighted hinge loss on one tuning split (the first split of ``cv``;
        ``cv="auto"`` is then a 30% hold-out), sigma by the EGKL of the resulting
        non-crossing ladder on that split.
    screen : {"auto"} or None, default="auto"
        Screened tuning of the EGKL criteria, as in
        :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`.
    engine : {"path", "auto", "grid"}, default="path"
        ``"path"``: the independent ladders of the tuning search are exact weight paths,
        and the non-crossing ladder is read off the path and repaired where it crosses
        (:mod:`wsvmgui.ladder.noncrossing_frompath`); ``"auto"``: the same, the tuning
        search as the binary ladder's ``"auto"``; ``"grid"``: grid ladders in the
        tuning, and the reference engine for the non-crossing ladder (one libsvm fit per
        weight and a QP where it crosses; :mod:`wsvmgui.ladder.noncrossing_sequential`).
    constraints : {"auto", "hull", "pairs", "compact"}
        See :func:`fit_noncrossing_ladder`.
    max_constraints : int
        Largest number of explicit constraint rows per fit.
    cv, refit, n_jobs, random_state
        As in :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier` (``n_jobs``:
        threads of the tuning search; ``refit`` keeps each tuned C, per weight for the
        hinge criterion).

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
    model_ : NonCrossingLadder
    weights_ : ndarray, shape (M - 1,)
    lambda_ : float (NaN when chosen per weight); lambdas_ : ndarray, shape (M - 1,)
    sigma_ : float
    kernel_ : Kernel
    tuning_ : TuningResult or None
        The EGKL table over lambda x sigma; for the hinge criterion over sigma alone (the
        EGKL of each sigma's ladder on the tuning split), the lambda of every weight on
        that split in ``fit_info_["tuning_lambdas"]``.
    diagnostics_ : dict
        The ladder's constraint diagnostics (engine, shortcuts, repairs, QPs, checks).
    fit_info_ : dict
        Includes ``"n_fits"``, ``"n_train"``, the engine, ``"tuning_edge"`` (the axes on
        which the tuned cell sits at an end of its grid, ``{axis: "min" | "max"}``, as
        :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`; ``{}`` untuned) and,
        for the hinge criterion, ``"tuning_lambdas"``.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **LADDER_SCHEME_CONSTRAINTS,
        **SCREEN_CONSTRAINTS,
        "criterion": [StrOptions(set(CRITERIA))],
        "constraints": [StrOptions(set(CONSTRAINTS))],
        "max_constraints": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
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
        criterion: str = "egkl-independent",
        engine: str = DEFAULT_ENGINE,
        constraints: str = "auto",
        max_constraints: int = DEFAULT_MAX_CONSTRAINTS,
        cv="auto",
        screen: str | None = "auto",
        refit: bool = True,
        n_jobs: int | None = None,
        random_state=0,
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
        self.engine = engine
        self.criterion = criterion
        self.constraints = constraints
        self.max_constraints = max_constraints
        self.cv = cv
        self.screen = screen
        self.refit = refit
        self.n_jobs = n_jobs
        self.random_state = random_state

    @property
    def _auto_holdout(self) -> bool:  # type: ignore[override]
        return self.criterion == "hinge"

    @property
    def _nc_engine(self) -> str:
        """Engine of the non-crossing ladder itself."""
        return "sequential" if self.engine == "grid" else "path"

    def _check_params(self) -> None:
        self._check_ladder_params()

    def _ladder(self, X, y, weights, lam, kernel, tracker, **kwargs) -> NonCrossingLadder:
        return fit_noncrossing_ladder(
            X,
            y,
            weights,
            lam,
            kernel,
            engine=self._nc_engine,
            constraints=self.constraints,
            max_constraints=self.max_constraints,
            progress=lambda _d, _t, partial: tracker.step(partial=partial),
            should_cancel=tracker.cancel_requested,
            **kwargs,
        )

    def _fit(
        self,
        X: np.ndarray,
        codes: np.ndarray,
        progress: ProgressCallback | None,
        should_cancel: CancelCheck | None,
    ) -> dict[str, Any]:
        n = codes.size
        y = np.where(codes == 1, 1.0, -1.0)
        plan = self._plan(X, codes)
        rows = plan.fit_rows
        weights = self._weight_grid(rows.size)  # the tuning's ladders
        final_weights = self._final_weights(rows.size)
        # The final ladder's fits (none when the hinge criterion keeps its training fit).
        final = 0 if (plan.tuned and self.criterion == "hinge" and not self.refit) else 1
        tracker = ProgressTracker(final * final_weights.size, progress, should_cancel)
        tuning: TuningResult | None = None
        per_weight = None  # the hinge criterion's lambda of every weight on its split
        if not plan.tuned:
            lam, sigma = self._untuned([LadderProblem(np.arange(n), y)], plan, n)[0]
            lams: Any = lam
        elif self.criterion == "hinge":
            on_train, tuning = self._tune_by_hinge(X, y, plan, weights, tracker)
            sigma = tuning.best_sigma
            tr = plan.folds[0][0]  # type: ignore[index]
            per_weight = on_train.lams
            lams = np.array([rescale_lambda(v, tr.size, rows.size) for v in per_weight])
            # every final weight takes the lambda of the nearest tuned weight
            lams = lams[np.abs(final_weights[:, None] - weights[None, :]).argmin(axis=1)]
            if not self.refit:  # the training-split ladder is the model
                return self._finish(on_train, weights, on_train.kernel, tuning, tracker, per_weight)
        else:
            engine = None
            if self.criterion == "egkl":

                def engine(K, Xt, yt, w, lam, kern, progress=None, should_cancel=None):
                    return KernelRowsView(
                        fit_noncrossing_ladder(
                            Xt, yt, w, lam, kern, K=np.asarray(K), engine=self._nc_engine,
                            constraints=self.constraints,
                            max_constraints=self.max_constraints, progress=progress,
                            should_cancel=should_cancel,
                        )
                    )  # fmt: skip

            problem = LadderProblem(np.arange(n), y)
            tunings, chosen = self._search(X, [problem], plan, [weights], tracker, engine)
            tuning = tunings[0]
            lams, sigma = chosen[0]
        kern = kernel_with_sigma(plan.kernel, sigma)
        model = self._ladder(X[rows], y[rows], final_weights, lams, kern, tracker)
        return self._finish(model, final_weights, kern, tuning, tracker, per_weight)

    def _final_weights(self, n: float) -> np.ndarray:
        """Interior weights of the final ladder on ``n`` points; shape (M - 1,)."""
        if self.weights is not None or self.n_weights is not None:
            return self._weight_grid(n)
        finer = min(FINAL_MAX_INTERVALS, FINAL_BUDGET // max(int(n), 1))
        return weight_grid(max(default_n_weights(n), finer))

    def _tune_by_hinge(
        self, X, y, plan, weights, tracker
    ) -> tuple[NonCrossingLadder, TuningResult]:
        """Wu & Liu's tuning on the first split: lambda per weight by the weighted hinge
        loss inside each sigma's ladder fit, sigma by the EGKL of that ladder on the
        tuning rows (:func:`~wsvmgui.ladder.gridsearch.grid_search` over sigma, one fold).

        Returns the chosen sigma's ladder on the training rows and the search's table.
        """
        assert plan.folds is not None
        grid = self._lambda_grid(plan.folds[0][0].size)
        tracker.add_total(len(plan.sigmas) * weights.size * grid.size)
        ladders: dict[tuple[int, ...], NonCrossingLadder] = {}

        # In this process, every ladder kept: the chosen one is the model without a refit,
        # and its lambdas are the refit's.
        def fit_all(jobs: Sequence[Job]) -> list[NonCrossingLadder]:
            for job in jobs:
                kern = kernel_with_sigma(plan.kernel, float(job.params["sigma"]))
                ladders[job.cell] = self._ladder(
                    X[job.train], y[job.train], weights, np.nan, kern, tracker,
                    lam_grid=grid, X_tune=X[job.test], y_tune=y[job.test],
                )  # fmt: skip
            return [ladders[job.cell] for job in jobs]

        def score(ladder: NonCrossingLadder, job: Job, _ctx: Any) -> FoldScore:
            p = ladder.estimate(X[job.test], self.rule).p
            terms = egkl_terms(p, (y[job.test] > 0).astype(float))
            return FoldScore(float(terms.sum()), float(terms.size), terms=terms)

        result = grid_search(
            Grid({"sigma": np.asarray(plan.sigmas, dtype=float)}), plan.folds[:1], None, score,
            tracker=tracker, fit_all=fit_all, score_name="egkl",
        )  # fmt: skip
        return ladders[result.best], result

    def _finish(self, model, weights, kernel, tuning, tracker, per_weight=None) -> dict[str, Any]:
        self.model_ = model
        self.weights_ = weights
        self.kernel_ = kernel
        self.lambdas_ = model.lams
        self.lambda_ = float(model.ladder.lam)
        self.sigma_ = float(kernel.sigma) if kernel.name == "rbf" else float("nan")
        self.tuning_ = tuning
        self.diagnostics_ = dict(model.diagnostics)
        tuned = [tuning] if isinstance(tuning, TuningResult) else []
        info = {
            "n_fits": tracker.done,
            "n_train": int(model.X_train.shape[0]),
            "tuning_edge": {} if tuning is None else dict(tuning.edge),
            **engine_info(self.engine, [], tuned),
        }
        if per_weight is not None:
            info["tuning_lambdas"] = [float(v) for v in per_weight]
        return info

    # ------------------------------------------------------------------------- predict
    def _ladder_decision(self, X: np.ndarray) -> np.ndarray:
        return self.model_.decision_at(X)

    def _estimate(self, X: np.ndarray) -> LadderEstimate:
        return self.model_.estimate(X, self.rule)

    def crossing_diagnostics(self, space: str | None = None, **kwargs) -> CrossingReport:
        """Crossings of the fitted ladder inside the training hull (see
        :func:`~wsvmgui.ladder.crossing.crossing_diagnostics`)."""
        check_is_fitted(self)
        return self.model_.crossing(space, **kwargs)


__all__ = ["NonCrossingLadderClassifier"]
