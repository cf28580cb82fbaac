"""Choosing lambda and sigma for a binary ladder by EGKL on a tuning set.

METHODS section 2: for each (lambda, sigma) on a grid, fit the ladder on the training
part and score the tuning part with the empirical generalised KL
``-(1/n_t) sum [1{y=+1} log p_hat + 1{y=-1} log(1 - p_hat)]``; keep the minimiser.  The
kernel matrix is built once per sigma and shared by every lambda and weight.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import train_test_split

from ..errors import InputError, SolverError, plain_value
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel, default_sigma_grid
from .grid import fit_ladder

#: Default grid of the libsvm-style C = 1 / (2 n lambda); lambda follows from n.
DEFAULT_C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def default_lambda_grid(n: int) -> np.ndarray:
    """Default lambdas for ``n`` training points: ``1 / (2 n C)`` over ``DEFAULT_C_GRID``.

    Returns
    -------
    ndarray, shape (7,), decreasing (from least to most flexible fit).
    """
    return 1.0 / (2.0 * n * np.asarray(DEFAULT_C_GRID))


def default_n_weights(n: int) -> int:
    """Default number of weight intervals M for ``n`` training points.

    ``M = max(floor(2 sqrt(n)), 40)``.  The ladder fits the ``M - 1`` interior weights
    ``m / M``, so its cost is linear in M; the bracket width ``1/M`` alone puts about
    ``1/(4M)`` under each point's error.  ``benchmarks/default_weight_grid.py`` ran the
    default tuned estimator with ten candidate rules on three binary designs, n in
    {100, 400, 1000}, three seeds each (27 cases; results and reasoning in
    ``benchmarks/results/default_weight_grid.md``).  Against the papers' ``floor(sqrt(n))``
    this rule lowered the mean |p_hat - p| by 8.5% and the test EGKL by 13% on average
    (lower error in 26 and 24 of the 27 cases), against the earlier default
    ``max(floor(sqrt(n)), 20)`` by 6% and 10%, for about twice the fits.  A fixed
    M = 80 was as accurate up to n = 400 at up to twice the cost, and 1-3% better at
    n = 1000; coarser grids (10, ``sqrt(n)/2``) were clearly worse.

    Parameters
    ----------
    n : int
        Number of training points of the ladder.

    Returns
    -------
    int
    """
    return max(int(np.floor(2.0 * np.sqrt(max(int(n), 0)))), 40)


def egkl_binary(p_pos: np.ndarray, y_pm: np.ndarray) -> float:
    """Empirical GKL of binary estimates ``p_pos`` (m,) for labels ``y_pm`` in {-1, +1} (m,)."""
    p = np.clip(p_pos, 1e-15, 1 - 1e-15)
    return float(-np.mean(np.where(y_pm > 0, np.log(p), np.log(1 - p))))


def stratified_split(
    X: np.ndarray, y: np.ndarray, fraction: float, seed: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split into training and tuning parts, keeping class shares.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    fraction : float
        Share of points that go to the tuning part, in (0, 1).
    seed : int or None

    Returns
    -------
    X_train, X_tune, y_train, y_tune
    """
    if not 0.0 < fraction < 1.0:
        raise InputError(f"tuning fraction must lie strictly between 0 and 1, got {fraction!r}")
    classes, counts = np.unique(y, return_counts=True)
    need = max(int(np.ceil(1 / min(fraction, 1 - fraction))), 2)
    small = counts < need
    if small.any():
        k = int(np.flatnonzero(small)[0])
        raise InputError(
            f"class {plain_value(classes[k])!r} has only {counts[k]} point(s): too few for a "
            f"tuning split of {fraction:.0%} (each class needs at least {need})"
        )
    try:
        return train_test_split(X, y, test_size=fraction, stratify=y, random_state=seed)
    except ValueError as exc:
        raise InputError(f"cannot split the data for tuning: {exc}") from exc


@dataclass(frozen=True)
class TuningResult:
    """The full tuning table of a ladder.

    Attributes
    ----------
    lambdas : ndarray, shape (L,)
    sigmas : ndarray, shape (S,)
        RBF widths; a single NaN for kernels without sigma.
    egkl : ndarray, shape (L, S)
        EGKL on the tuning set (inf where the fit failed).
    error : ndarray, shape (L, S)
        Tuning-set misclassification rate of the estimate's argmax.
    best_lambda, best_sigma : float
    failures : list of str
        Messages of fits that failed (their cells hold inf).
    """

    lambdas: np.ndarray
    sigmas: np.ndarray
    egkl: np.ndarray
    error: np.ndarray
    best_lambda: float
    best_sigma: float
    failures: list[str] = field(default_factory=list)

    def rows(self) -> list[dict[str, float]]:
        """The table as one dict per (lambda, sigma) cell."""
        return [
            {
                "lambda": float(lam),
                "sigma": float(sig),
                "egkl": float(self.egkl[i, j]),
                "error": float(self.error[i, j]),
            }
            for i, lam in enumerate(self.lambdas)
            for j, sig in enumerate(self.sigmas)
        ]


def kernel_with_sigma(template: Kernel, sigma: float) -> Kernel:
    """``template`` with its RBF width replaced (other kernels unchanged)."""
    if template.name != "rbf" or not np.isfinite(sigma):
        return template
    return Kernel(
        "rbf",
        sigma=float(sigma),
        degree=template.degree,
        coef0=template.coef0,
        gamma=template.gamma,
    )


Fold = tuple[np.ndarray, np.ndarray]


def tune_ladder(
    X: np.ndarray,
    y: np.ndarray,
    X_tune: np.ndarray,
    y_tune: np.ndarray,
    kernel: Kernel,
    weights: np.ndarray,
    lambdas: np.ndarray | None = None,
    sigmas: np.ndarray | None = None,
    rule: str = "count",
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    n_jobs: int = 1,
    seed: int = 0,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    tracker: ProgressTracker | None = None,
) -> TuningResult:
    """EGKL grid search over lambda x sigma for a binary ladder on a tuning set.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
        Training labels in {-1, +1}.
    X_tune : ndarray, shape (m, p)
    y_tune : ndarray, shape (m,)
        Tuning labels in {-1, +1}.
    kernel : Kernel
        Kernel; for RBF its sigma is replaced by each value of ``sigmas``.
    weights : ndarray, shape (M - 1,)
    lambdas : ndarray, shape (L,), optional
        Default :func:`default_lambda_grid` for ``n``.
    sigmas : ndarray, shape (S,), optional
        RBF only; default :func:`~wsvmgui.solvers.kernels.default_sigma_grid`.
    rule : {"count", "extreme"}
    solver, qp_solver : str
    n_jobs : int
        Threads fitting different sigmas at once (libsvm releases the GIL).
    seed : int
        Seed of the sigma_M subsample for very large data.
    progress, should_cancel
        Reported once per weighted fit; polled between fits.
    tracker : ProgressTracker, optional
        Share an existing tracker (its total must already include these fits).

    Returns
    -------
    TuningResult
    """
    n = y.size
    X_all = np.vstack([X, X_tune])
    y_all = np.concatenate([y, y_tune])
    fold = (np.arange(n), np.arange(n, n + y_tune.size))
    return tune_ladder_folds(
        X_all,
        y_all,
        [fold],
        kernel,
        weights,
        lambdas,
        sigmas,
        rule,
        solver,
        qp_solver,
        n_jobs,
        seed,
        progress,
        should_cancel,
        tracker,
        sigma_data=(X, y),
    )


def cv_folds(y: np.ndarray, n_folds: int, seed: int | None) -> list[Fold]:
    """Stratified k-fold index pairs ``(train, tune)`` over labels ``y`` (n,)."""
    from sklearn.model_selection import StratifiedKFold

    classes, counts = np.unique(y, return_counts=True)
    if n_folds < 2:
        raise InputError(f"cross-validation needs at least 2 folds, got {n_folds}")
    small = counts < n_folds
    if small.any():
        k = int(np.flatnonzero(small)[0])
        raise InputError(
            f"class {plain_value(classes[k])!r} has only {counts[k]} point(s): too few for "
            f"{n_folds}-fold cross-validation (each class needs at least {n_folds})"
        )
    splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros((y.size, 1)), y))


def tune_ladder_folds(
    X: np.ndarray,
    y: np.ndarray,
    folds: list[Fold],
    kernel: Kernel,
    weights: np.ndarray,
    lambdas: np.ndarray | None = None,
    sigmas: np.ndarray | None = None,
    rule: str = "count",
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    n_jobs: int = 1,
    seed: int = 0,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    tracker: ProgressTracker | None = None,
    sigma_data: tuple[np.ndarray, np.ndarray] | None = None,
) -> TuningResult:
    """EGKL grid search over lambda x sigma, averaged over train/tune folds.

    The kernel of all of ``X`` is built once per sigma; each fold fits on a submatrix.
    With one fold this is a tuning-set search, with k stratified folds it is k-fold
    cross-validation (the EGKL of every tuning point counted once).

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    folds : list of (ndarray, ndarray)
        Index pairs (train, tune) into ``X``.
    kernel, weights, lambdas, sigmas, rule, solver, qp_solver, n_jobs, seed,
    progress, should_cancel, tracker
        As in :func:`tune_ladder`; the default lambda grid is for the size of the
        first fold's training part.
    sigma_data : (X, y), optional
        Data for the default sigma grid (default: all of ``X``, ``y``).

    Returns
    -------
    TuningResult
        ``egkl`` and ``error`` averaged over all tuning points of all folds.
    """
    n_train = folds[0][0].size
    lambdas = default_lambda_grid(n_train) if lambdas is None else np.asarray(lambdas, float)
    if kernel.name == "rbf":
        Xs, ys = sigma_data if sigma_data is not None else (X, y)
        sigmas = (
            default_sigma_grid(Xs, ys, seed=seed) if sigmas is None else np.asarray(sigmas, float)
        )
    else:
        sigmas = np.array([np.nan])
    if lambdas.size == 0 or sigmas.size == 0:
        raise InputError("the lambda and sigma grids must not be empty")
    n_fits = lambdas.size * sigmas.size * len(weights) * len(folds)
    if tracker is None:
        tracker = ProgressTracker(n_fits, progress, should_cancel)
    tracker.check()
    n_tune = sum(tu.size for _, tu in folds)
    loss_sum = np.zeros((lambdas.size, sigmas.size))
    miss_sum = np.zeros((lambdas.size, sigmas.size))
    failures: list[str] = []

    def one_sigma(j: int) -> None:
        K_all = kernel_with_sigma(kernel, sigmas[j])(X)
        for tr, tu in folds:
            K = K_all[np.ix_(tr, tr)]
            K_tune = K_all[np.ix_(tu, tr)]
            for i, lam in enumerate(lambdas):
                if not np.isfinite(loss_sum[i, j]):
                    tracker.step(len(weights))  # this cell already failed on a fold
                    continue
                # progress(done, ...) of fit_ladder counts this ladder's finished fits.
                done_here = [0]

                def step(done: int, _total: int, _fit, done_here=done_here) -> None:
                    done_here[0] = done
                    tracker.step()

                try:
                    ladder = fit_ladder(
                        K,
                        y[tr],
                        weights,
                        float(lam),
                        solver,
                        qp_solver,
                        progress=step,
                        should_cancel=tracker.check,
                    )
                except SolverError as exc:
                    failures.append(str(exc))
                    # Count only the fits of this ladder that were not reported yet.
                    tracker.step(len(weights) - done_here[0])
                    loss_sum[i, j] = np.inf
                    continue
                p = ladder.estimate(K_tune, rule).p
                loss_sum[i, j] += egkl_binary(p, y[tu]) * tu.size
                miss_sum[i, j] += float(np.sum(np.where(p > 0.5, 1, -1) != y[tu]))

    if n_jobs > 1 and sigmas.size > 1:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            for fut in [pool.submit(one_sigma, j) for j in range(sigmas.size)]:
                fut.result()
    else:
        for j in range(sigmas.size):
            one_sigma(j)
    scores = loss_sum / n_tune
    errors = np.where(np.isfinite(scores), miss_sum / n_tune, np.nan)
    if not np.isfinite(scores).any():
        raise SolverError(
            "every fit of the tuning grid failed; first failure: "
            + (failures[0] if failures else "unknown")
        )
    # Ties go to the first cell in grid order (by default the largest lambda).
    best = np.flatnonzero(scores.ravel() == scores.min())[0]
    i, j = np.unravel_index(best, scores.shape)
    return TuningResult(
        lambdas=lambdas,
        sigmas=sigmas,
        egkl=scores,
        error=errors,
        best_lambda=float(lambdas[i]),
        best_sigma=float(sigmas[j]),
        failures=failures,
    )
