"""The preconditioned SVM of Wu & Liu (2011), section 4 (METHODS section 3).

1. Estimate ``p_hat(x_i)`` at the training points with a weight ladder (non-crossing by
   default, weights ``m / M``).
2. Relabel with a level ``pt`` in [0, 0.5): ``y_i -> -1`` where ``p_hat < pt``, ``-> +1``
   where ``p_hat > 1 - pt``, unchanged otherwise (``pt = 0`` changes nothing).
3. Fit a plain SVM (weight 1/2) to the relabelled data.

Tuning follows the paper's simulations, on one tuning split (the first split of ``cv``;
``cv="auto"`` is a stratified 30% hold-out): lambda of every SVM (each ladder weight and
the final SVM) minimises its weighted hinge loss on the tuning rows; the RBF width, unless
fixed, is chosen with the plain SVM's lambda on the original labels; ``pt``, unless fixed,
minimises the final SVM's classification error on the tuning rows over ``pt_grid`` (ties
go to the smaller, more conservative level).  With ``refit=True`` the ladder and the SVMs
are then fitted again on all rows at the chosen sigma and levels, each keeping its tuned
``C = 1 / (2 n lambda)``.

Probabilities: ``predict_proba`` reports the ladder's estimate, moved just across 1/2
(to ``1/2 +- 1/(4M)``, bracket the half-interval next to 1/2) where the final SVM puts the
point on the other side, so that ``predict`` (the SVM's sign) is the argmax as the
estimator contract requires.  ``decision_function`` is the log-odds of that probability,
so it ranks points as ``predict_proba`` does; the SVM's own decision values are
:meth:`PreconditionedSVC.svm_decision`, and ``report`` carries them and the ladder's own
estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from scipy.special import logit

from .._sklearn_compat import Interval, StrOptions
from ..errors import InputError
from ..ladder.engines import DEFAULT_ENGINE, AnyLadder, fit_binary_ladder
from ..ladder.gridsearch import (
    FoldScore,
    Grid,
    Job,
    JobContext,
    TuningResult,
    one_split_search,
    rescale_lambda,
)
from ..ladder.noncrossing import NonCrossingLadder, fit_noncrossing_ladder
from ..ladder.precondition import (
    DEFAULT_PT_GRID,
    LADDERS,
    check_level,
    fit_plain_svm,
    fit_svm_by_hinge,
    hinge_score,
    precondition_labels,
)
from ..ladder.rules import LadderEstimate, estimate_from_decision
from ..ladder.tuning import kernel_with_sigma
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel
from ..solvers.wsvm import WeightedFit
from ._base import SOLVER_CONSTRAINTS, BinaryLadderClassifier, ParameterError, n_threads
from ._ladder import LADDER_SCHEME_CONSTRAINTS, LadderParams, engine_info


def rescale_lambda_array(lams: Any, n_tuned: float, n_final: float) -> Any:
    """:func:`~wsvmgui.ladder.gridsearch.rescale_lambda` of a lambda or one per weight."""
    return np.asarray(lams, dtype=float) * n_tuned / n_final


@dataclass(frozen=True)
class _Stage:
    """The ladder and the level SVMs of one stage (training rows, or the refit)."""

    ladder: Any
    p_train: np.ndarray
    fits: dict[float, WeightedFit]
    errors: dict[float, float]
    chosen: float
    level_tuning: TuningResult | None


class PreconditionedSVC(LadderParams, BinaryLadderClassifier):
    """Plain SVM on labels preconditioned by a weight ladder's probabilities (Wu & Liu 2011).

    Parameters
    ----------
    pt : float or None
        Level in [0, 0.5); None chooses it from ``pt_grid`` by tuning error.
    pt_grid : sequence of float
        Candidate levels (default 0, 0.10, ..., 0.40).
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    lam : float or None
        Fixed lambda of every SVM; None chooses each by tuning hinge loss over ``lambdas``.
    sigma : float or None
        Fixed RBF width; None picks it from ``sigmas`` with the plain SVM.
    lambdas, sigmas : array-like or None
        Grids (defaults as :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`).
    n_weights, weights : ladder grid (default ``m / M``, M = ``default_n_weights(n)``); for
        the path engine only the weights the ladder views report.
    degree, coef0, poly_gamma : polynomial kernel parameters.
    rule : {"count", "extreme", "interpolate"}
    ladder : {"noncrossing", "independent"}
        Which ladder estimates ``p_hat``.
    engine : {"path", "auto", "grid"}, default="path"
        Engine of the independent ladder (as in
        :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`); the non-crossing
        ladder has its own constrained engine and ignores it.
    cv : "auto", int, float, splitter or iterable
        Tuning splits; this scheme tunes on the first one (``"auto"``: a stratified 30%
        hold-out).
    refit : bool, default=True
        Fit the ladder and the SVMs again on all rows at the chosen parameters, keeping
        each tuned C; False keeps the fits on the tuning split's training rows.
    solver : {"libsvm", "qp"}
        Solver of the plain SVMs and of the independent ladder's grid (the non-crossing
        ladder has its own).
    qp_solver : str
        qpsolvers backend for ``solver="qp"``.
    n_jobs : int or None
        Threads of the independent grid ladder's weights (None: 1, -1: all cores); the
        other fits depend on each other and run one after another.  (No ``screen``: this
        scheme's choices are made on one split by the hinge loss, not by the EGKL search.)
    random_state : int, RandomState or None, default=0

    Attributes
    ----------
    classes_ : ndarray, shape (2,)
    lambda_ : float
        Lambda of the final SVM.
    sigma_ : float
        RBF width (NaN for other kernels).
    C_ : float
        ``1 / (2 n lambda_)`` of the final SVM, ``n`` its rows (their summed weight).
    tuning_ : dict of str to TuningResult, or None
        ``"kernel"``: the plain SVM's tuning hinge loss over sigma x lambda (when sigma
        was chosen); ``"level"``: the tuning error of every level (when tuned).
    pt_ : float
    level_errors_ : dict of float to float
        Tuning error of each candidate level.
    p_train_ : ndarray, shape (n,)
        Ladder estimate at the rows of the final fit (``X_train_``).
    relabeled_ : ndarray of int
        Indices (into ``X_train_``) of points whose label the chosen level changed.
    svm_ : WeightedFit
        The final SVM (coefficients over ``X_train_``).
    level_svms_ : dict of float to WeightedFit
        The final SVM of every candidate level.
    ladder_ : NonCrossingLadder, PathLadder or Ladder
    X_train_ : ndarray, shape (n, p)
    kernel_ : Kernel
    weights_ : ndarray, shape (M - 1,)
    fit_info_ : dict
        Fits made, rows of the final fit, points relabelled, the engines, and the axes
        on which a tuned choice sits at its grid's edge (``"tuning_edge"``).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **LADDER_SCHEME_CONSTRAINTS,
        **SOLVER_CONSTRAINTS,
        "pt": [Interval(Real, 0, 0.5, closed="left"), None],
        "pt_grid": ["array-like"],
        "ladder": [StrOptions(set(LADDERS))],
    }
    _auto_holdout = True

    def __init__(
        self,
        *,
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
        engine: str = DEFAULT_ENGINE,
        cv="auto",
        refit: bool = True,
        solver: str = "libsvm",
        qp_solver: str = "quadprog",
        n_jobs: int | None = None,
        random_state=0,
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
        self.engine = engine
        self.cv = cv
        self.refit = refit
        self.solver = solver
        self.qp_solver = qp_solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _check_params(self) -> None:
        self._check_ladder_params()
        self._levels()

    def _levels(self) -> list[float]:
        try:
            if self.pt is not None:
                return [check_level(self.pt)]
            grid = sorted({check_level(v) for v in np.ravel(self.pt_grid)})
        except InputError as exc:
            raise ParameterError(str(exc)) from None
        if not grid:
            raise ParameterError("the preconditioning level grid is empty")
        return grid

    def _needs_tuning(self) -> bool:
        return (
            len(self._levels()) > 1
            or self.lam is None
            or (self.kernel == "rbf" and self.sigma is None)
        )

    def _takes_sample_weight(self) -> bool:
        """The non-crossing ladder does not take weights yet: repeats for it."""
        return self.ladder != "noncrossing"

    # ----------------------------------------------------------------------------- fit
    def _fit(
        self,
        X: np.ndarray,
        codes: np.ndarray,
        progress: ProgressCallback | None,
        should_cancel: CancelCheck | None,
        sample_weight: np.ndarray | None = None,
    ) -> dict[str, Any]:
        levels = self._levels()
        y = np.where(codes == 1, 1.0, -1.0)
        plan = self._plan(X, codes, sample_weight)
        every = np.arange(y.size) if sample_weight is None else np.flatnonzero(sample_weight > 0)
        tr, te = plan.folds[0] if plan.folds is not None else (every, None)
        refit = plan.tuned and self.refit
        weights = self._weight_grid(plan.size(every if refit else tr))
        lambdas = (
            self._lambda_grid(plan.size(tr))
            if te is not None
            else np.array([self._fixed_lambda(plan.size(tr))])
        )
        per_weight = lambdas.size if te is not None else 1
        tracker = ProgressTracker(
            (weights.size * per_weight + len(levels)) + refit * (weights.size + len(levels)),
            progress,
            should_cancel,
        )
        kernel, kernel_tuning = self._choose_kernel(plan, X, y, tr, te, lambdas)
        # 1-3 on the training rows, choosing each lambda and the level on the tuning rows.
        stage = self._stage(X, y, plan, tr, te, kernel, weights, lambdas, levels, tracker)
        if refit:  # again on all rows, every lambda keeping its tuned C
            stage = self._refit(X, y, plan, tr, every, kernel, weights, stage, tracker)
        rows = every if refit else tr
        self._keep(stage, X, y, rows, kernel, weights, plan)
        self.tuning_ = (
            None
            if not plan.tuned
            else {
                name: t
                for name, t in (("kernel", kernel_tuning), ("level", stage.level_tuning))
                if t is not None
            }
        )
        return {
            "n_fits": tracker.done,
            "n_train": plan.size(rows),
            "n_relabeled": int(self.relabeled_.size),
            "tuning_edge": {k: dict(t.edge) for k, t in (self.tuning_ or {}).items()},
            **engine_info(
                self.engine if self.ladder == "independent" else "noncrossing",
                [] if isinstance(stage.ladder, NonCrossingLadder) else [stage.ladder],
                [],
            ),
        }

    def _stage(self, X, y, plan, tr, te, kernel, weights, lambdas, levels, tracker) -> _Stage:
        """The ladder and every level's SVM on the training rows, chosen on the tuning rows."""
        sw = plan.sample_weight
        sw_tr = None if sw is None else sw[tr]
        sw_te = None if sw is None or te is None else sw[te]
        K = kernel(X[tr])
        K_te = None if te is None else kernel(X[te], X[tr])
        y_te = None if te is None else y[te]
        ladder = self._fit_ladder(
            X[tr], y[tr], K, weights, lambdas[0], kernel, tracker, sw_tr,
            lam_grid=lambdas if (lambdas.size > 1 and te is not None) else None,
            X_tune=None if te is None else X[te], y_tune=y_te,
        )  # fmt: skip
        p_train = self._ladder_p(ladder, K, weights)
        fits: dict[float, WeightedFit] = {}

        def fit_level(pt: float) -> WeightedFit:
            y_pc = precondition_labels(y[tr], p_train, pt)
            fits[pt], _ = fit_svm_by_hinge(
                K, y_pc, K_te, y_te, lambdas, sw_tr, sw_te, self.solver, self.qp_solver
            )
            tracker.step()
            return fits[pt]

        def fit(job: Job, ctx: JobContext) -> WeightedFit:
            return fit_level(float(job.params["pt"]))

        def error(model: object, job: Job, ctx: JobContext) -> FoldScore:
            assert isinstance(model, WeightedFit) and K_te is not None and y_te is not None
            wrong = np.where(model.decision(K_te) > 0, 1.0, -1.0) != y_te
            w = np.ones(y_te.size) if sw_te is None else sw_te
            return FoldScore(float(np.sum(w[wrong])), float(np.sum(w)))

        if te is None:
            for pt in levels:
                fit_level(pt)
            return _Stage(ladder, p_train, fits, {}, levels[0], None)
        tuning = one_split_search(
            Grid({"pt": np.asarray(levels)}), fit, error, "error", tracker.cancel_requested
        )
        errors = {float(r["pt"]): float(r["error"]) for r in tuning.rows()}
        return _Stage(ladder, p_train, fits, errors, float(tuning.best_params["pt"]), tuning)

    def _refit(self, X, y, plan, tr, every, kernel, weights, stage, tracker) -> _Stage:
        """The ladder and the level SVMs again on all rows, each keeping its tuned C."""
        sw = None if plan.sample_weight is None else plan.sample_weight[every]
        n_tr, n_all = plan.size(tr), plan.size(every)
        K = kernel(X[every])
        old = stage.ladder
        lams = old.lams if isinstance(old, NonCrossingLadder) else old.lam
        ladder = self._fit_ladder(
            X[every], y[every], K, weights, rescale_lambda_array(lams, n_tr, n_all), kernel,
            tracker, sw,
        )  # fmt: skip
        p_train = self._ladder_p(ladder, K, weights)
        fits = {}
        for pt, fit in stage.fits.items():
            y_pc = precondition_labels(y[every], p_train, pt)
            lam = rescale_lambda(fit.lam, n_tr, n_all)
            fits[pt] = fit_plain_svm(K, y_pc, lam, sw, self.solver, self.qp_solver)
            tracker.step()
        return _Stage(ladder, p_train, fits, stage.errors, stage.chosen, stage.level_tuning)

    def _keep(self, stage, X, y, rows, kernel, weights, plan) -> None:
        """The fitted attributes of ``stage`` on ``rows``."""
        self.pt_ = float(stage.chosen)
        self.level_errors_ = stage.errors
        self.level_svms_ = stage.fits
        self.svm_ = stage.fits[stage.chosen]
        self.p_train_ = stage.p_train
        self.relabeled_ = np.flatnonzero(
            precondition_labels(y[rows], stage.p_train, stage.chosen) != y[rows]
        )
        self.ladder_ = stage.ladder
        self.kernel_ = kernel
        self.X_train_ = X[rows]
        self.weights_ = weights
        self.lambda_ = float(self.svm_.lam)
        self.sigma_ = float(kernel.sigma) if kernel.name == "rbf" else float("nan")
        self.C_ = 1.0 / (2.0 * plan.size(rows) * self.lambda_)

    def _fit_ladder(
        self, X, y, K, weights, lam, kernel, tracker, sample_weight=None, **tuning
    ) -> NonCrossingLadder | AnyLadder:
        step = lambda *_: tracker.step()  # noqa: E731
        if self.ladder == "noncrossing":
            return fit_noncrossing_ladder(
                X, y, weights, lam, kernel, K=K, progress=step,
                should_cancel=tracker.cancel_requested, **tuning,
            )  # fmt: skip
        return fit_binary_ladder(
            K, y, weights, float(np.ravel(lam)[0]), engine=self.engine, solver=self.solver,
            qp_solver=self.qp_solver, progress=step, should_cancel=tracker.cancel_requested,
            n_jobs=n_threads(self.n_jobs), context=kernel.describe(), sample_weight=sample_weight,
        )  # fmt: skip

    def _ladder_p(self, ladder, K: np.ndarray, weights: np.ndarray) -> np.ndarray:
        if isinstance(ladder, NonCrossingLadder):
            return estimate_from_decision(ladder.decision(K), weights, self.rule).p
        return ladder.estimate(K, self.rule).p

    def _choose_kernel(self, plan, X, y, tr, te, lambdas) -> tuple[Kernel, TuningResult | None]:
        """The RBF width by the plain SVM's tuning hinge loss over sigma x lambda."""
        sigmas = plan.sigmas
        if plan.kernel.name != "rbf" or sigmas.size == 1 or te is None:
            return kernel_with_sigma(plan.kernel, float(sigmas[len(sigmas) // 2])), None
        sw = plan.sample_weight
        sw_tr, sw_te = (None, None) if sw is None else (sw[tr], sw[te])
        held: dict[int, tuple[np.ndarray, np.ndarray]] = {}

        def fit(job: Job, ctx: JobContext) -> WeightedFit:
            j = job.cell[0]
            if j not in held:  # one sigma's matrices at a time (sigma is the outer axis)
                held.clear()
                kern = kernel_with_sigma(plan.kernel, float(sigmas[j]))
                held[j] = (kern(X[tr]), kern(X[te], X[tr]))
            lam = float(job.params["lambda"])
            return fit_plain_svm(held[j][0], y[tr], lam, sw_tr, self.solver, self.qp_solver)

        def score(model: object, job: Job, ctx: JobContext) -> FoldScore:
            assert isinstance(model, WeightedFit)
            return hinge_score(model.decision(held[job.cell[0]][1]), y[te], sw_te)

        grid = Grid({"sigma": sigmas, "lambda": np.ravel(lambdas)})
        tuning = one_split_search(grid, fit, score, "hinge")
        return kernel_with_sigma(plan.kernel, float(tuning.best_params["sigma"])), tuning

    # ------------------------------------------------------------------------- predict
    def svm_decision(self, X, pt: float | None = None) -> np.ndarray:
        """The final SVM's decision values (of level ``pt``, default the chosen one); (n,)."""
        X = self._check_X(X)
        fit = self.svm_ if pt is None else self.level_svms_.get(float(pt))
        if fit is None:
            raise InputError(f"level {pt!r} was not fitted; fitted: {sorted(self.level_svms_)}")
        return fit.decision(self.kernel_(X, self.X_train_))

    def decision_function(self, X) -> np.ndarray:
        """Log-odds of ``P(classes_[1] | x)``; ranks points as ``predict_proba`` does; (n,).

        Positive exactly where ``predict`` gives ``classes_[1]`` (the final SVM's side).
        """
        return logit(self.predict_proba(X)[:, 1])

    def _ladder_estimate(self, X: np.ndarray) -> LadderEstimate:
        if isinstance(self.ladder_, NonCrossingLadder):
            return estimate_from_decision(self.ladder_.decision_at(X), self.weights_, self.rule)
        return self.ladder_.estimate(self.kernel_(X, self.X_train_), self.rule)

    def _estimate(self, X: np.ndarray) -> LadderEstimate:
        est = self._ladder_estimate(X)
        f = self.svm_.decision(self.kernel_(X, self.X_train_))
        half = 0.5 / (self.weights_.size + 1)  # half a grid step, 1/(2M)
        p, lo, hi = est.p.copy(), est.lo.copy(), est.hi.copy()
        up = (f > 0) & ~(p > 0.5)
        down = ~(f > 0) & (p > 0.5)
        p[up], lo[up], hi[up] = 0.5 + half / 2, 0.5, 0.5 + half
        p[down], lo[down], hi[down] = 0.5 - half / 2, 0.5 - half, 0.5
        return LadderEstimate(p, lo, hi, est.monotone)

    def _report_extra(self, X: np.ndarray, est: LadderEstimate) -> dict[str, np.ndarray]:
        return {
            "svm_decision": self.svm_.decision(self.kernel_(X, self.X_train_)),
            "ladder_p": self._ladder_estimate(X).p,
        }


__all__ = ["PreconditionedSVC"]
