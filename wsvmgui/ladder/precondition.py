"""Relabelling and hinge-tuned plain SVMs of the preconditioned SVM (Wu & Liu 2011).

METHODS section 3; the estimator is
:class:`wsvmgui.estimators.preconditioned.PreconditionedSVC`.  The choices (lambda by the
hinge loss on the tuning rows) run through the generic search
(:func:`~wsvmgui.ladder.gridsearch.grid_search`) on one split, in this thread.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..solvers.wsvm import WeightedFit, fit_weighted_svm
from .gridsearch import FoldScore, Grid, Job, JobContext, TuningResult, one_split_search

#: The levels of Wu & Liu's tables, with 0 (the plain SVM).
DEFAULT_PT_GRID = (0.0, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40)
LADDERS = ("noncrossing", "independent")


def check_level(pt: float) -> float:
    """Validate a preconditioning level: a number in [0, 0.5)."""
    try:
        value = float(pt)
    except (TypeError, ValueError):
        raise InputError(
            f"preconditioning level must be a number in [0, 0.5), got {pt!r}"
        ) from None
    if not (np.isfinite(value) and 0.0 <= value < 0.5):
        raise InputError(f"preconditioning level must lie in [0, 0.5), got {pt!r}")
    return value


def precondition_labels(y: np.ndarray, p_hat: np.ndarray, pt: float) -> np.ndarray:
    """Relabel likely outliers.

    Parameters
    ----------
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    p_hat : ndarray, shape (n,)
        Estimated ``P(Y = +1 | x_i)``.
    pt : float
        Level in [0, 0.5).

    Returns
    -------
    ndarray, shape (n,)
        ``-1`` where ``p_hat < pt``, ``+1`` where ``p_hat > 1 - pt``, ``y`` otherwise.
    """
    pt = check_level(pt)
    y = np.asarray(y, dtype=float)
    p_hat = np.asarray(p_hat, dtype=float)
    if y.shape != p_hat.shape:
        raise InputError(f"labels {y.shape} and probabilities {p_hat.shape} differ in shape")
    out = y.copy()
    out[p_hat < pt] = -1.0
    out[p_hat > 1.0 - pt] = 1.0
    return out


def hinge_terms(f: np.ndarray, y: np.ndarray, pi: float = 0.5) -> np.ndarray:
    """Weighted hinge losses ``S(y) (1 - y f)_+`` (class +1 weight ``1 - pi``); shape (m,)."""
    S = np.where(y > 0, 1.0 - pi, pi)
    return S * np.maximum(1.0 - y * f, 0.0)


def weighted_hinge(f: np.ndarray, y: np.ndarray, pi: float = 0.5) -> float:
    """Mean weighted hinge loss ``S(y) (1 - y f)_+`` (class +1 weight ``1 - pi``)."""
    return float(np.mean(hinge_terms(f, y, pi)))


def hinge_score(f: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None) -> FoldScore:
    """The plain SVM's tuning score: hinge losses of decision values ``f`` (m,) summed."""
    terms = hinge_terms(f, y)
    if sample_weight is None:
        return FoldScore(float(np.sum(terms)), float(y.size))
    return FoldScore(float(np.sum(sample_weight * terms)), float(np.sum(sample_weight)))


#: Scores within this of the smallest tie (the first, largest lambda, wins).
HINGE_TIE = 1e-12


def fit_svm_by_hinge(
    K: np.ndarray,
    y: np.ndarray,
    K_tune: np.ndarray | None,
    y_tune: np.ndarray | None,
    lambdas: np.ndarray,
    sample_weight: np.ndarray | None = None,
    tune_weight: np.ndarray | None = None,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
) -> tuple[WeightedFit, TuningResult | None]:
    """Plain SVM with lambda minimising the hinge loss on the tuning set.

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)
        Labels in {-1, +1}; if only one class is present the "SVM" is that constant.
    K_tune : ndarray, shape (m, n), or None
    y_tune : ndarray, shape (m,), or None
    lambdas : ndarray, shape (L,)
        Ordered from large lambda down: ties (within :data:`HINGE_TIE`) go to the first.
    sample_weight, tune_weight : ndarray, shapes (n,) and (m,), optional
        Weights of the training and of the tuning rows.
    solver, qp_solver : str
        See :func:`~wsvmgui.solvers.wsvm.fit_weighted_svm`.

    Returns
    -------
    fit : WeightedFit
    tuning : TuningResult or None
        Tuning hinge loss of every lambda (None without a tuning set: the first lambda).
    """
    grid = np.ravel(lambdas)
    if K_tune is None or y_tune is None:
        return fit_plain_svm(K, y, float(grid[0]), sample_weight, solver, qp_solver), None
    fits: dict[tuple[int, ...], WeightedFit] = {}

    def fit(job: Job, ctx: JobContext) -> WeightedFit:
        lam = float(job.params["lambda"])
        fits[job.cell] = fit_plain_svm(K, y, lam, sample_weight, solver, qp_solver)
        return fits[job.cell]

    def score(model: object, job: Job, ctx: JobContext) -> FoldScore:
        assert isinstance(model, WeightedFit)
        return hinge_score(model.decision(K_tune), y_tune, tune_weight)

    result = one_split_search(Grid({"lambda": grid}), fit, score, "hinge", tol=HINGE_TIE)
    return fits[result.best], result


def fit_plain_svm(
    K: np.ndarray,
    y: np.ndarray,
    lam: float,
    sample_weight: np.ndarray | None = None,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
) -> WeightedFit:
    """The plain SVM (weight 1/2) on kernel ``K`` (n, n), labels ``y`` (n,) in {-1, +1}.

    ``sample_weight`` (n,) multiplies the bounds, scaled to mean one (lambda keeps its
    meaning: the weighted mean loss).
    """
    if np.all(y > 0) or np.all(y < 0):
        # Relabelling made one class: the SVM minimiser is the constant of that class.
        n = y.size
        sign = float(y[0])
        return WeightedFit(0.5, lam, 1.0 / (2 * n * lam), np.zeros(n), np.zeros(n), sign, 0.0)
    sw = None if sample_weight is None else sample_weight / np.mean(sample_weight)
    return fit_weighted_svm(K, y, 0.5, lam, solver, qp_solver, sample_weight=sw)
