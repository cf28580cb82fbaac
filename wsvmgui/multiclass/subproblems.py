"""Binary sub-problems of the divide-and-conquer schemes: tuning, fitting and prediction.

Every scheme reduces the K-class problem to binary weighted-SVM ladders (METHODS
section 5): pairs of classes (P-SVM, baseline learning) or one class against the rest
(One-vs-All).  Each sub-problem is tuned on its own data by EGKL (Zeng section 6) over a
lambda grid (by default ``1 / (2 n_s C)`` for the sub-problem's size ``n_s``) and one RBF
width grid shared by all sub-problems (``(0.25 .. 1.5) * sigma_M`` of the whole training
part).  Sharing the width grid lets every sub-problem take its kernel as a submatrix of
one full kernel matrix per width.

Work runs on a thread pool (libsvm releases the GIL): one task per (width, sub-problem)
while tuning and one per sub-problem for the final fits.  Progress is reported after
every weighted fit; cancellation is polled between fits.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, SolverError
from ..ladder.grid import Ladder, fit_ladder
from ..ladder.rules import LadderEstimate
from ..ladder.tuning import (
    TuningResult,
    default_lambda_grid,
    default_n_weights,
    egkl_binary,
    kernel_with_sigma,
)
from ..ladder.weights import weight_grid
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel
from .interpolation import INTERPOLATE, interpolated_estimate

#: Rows of new points per block when predicting (bounds memory to block x support).
PREDICT_BLOCK = 4096


@dataclass(frozen=True)
class SubProblem:
    """One binary sub-problem: class ``positive`` (+1) against the classes ``negative`` (-1).

    Attributes
    ----------
    positive : int
        Class index labelled +1.
    negative : tuple of int
        Class indices labelled -1.
    name : str
        Column stem, e.g. ``"b|a,b"`` (the ladder estimates ``q_{b|(a,b)}``) or ``"j|rest"``.
    """

    positive: int
    negative: tuple[int, ...]
    name: str

    @property
    def members(self) -> tuple[int, ...]:
        """All class indices taking part, sorted."""
        return tuple(sorted((self.positive, *self.negative)))

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Indices of the points (class indices ``codes`` (n,)) in this sub-problem."""
        return np.flatnonzero(np.isin(codes, self.members))

    def labels(self, codes: np.ndarray) -> np.ndarray:
        """+1 / -1 labels for member points' class indices ``codes`` (m,)."""
        return np.where(codes == self.positive, 1.0, -1.0)


def pair_problem(a: int, b: int, classes: np.ndarray) -> SubProblem:
    """Pair of class indices; the later class (in sorted order) is +1, as in the binary engine."""
    a, b = min(a, b), max(a, b)
    return SubProblem(b, (a,), f"{classes[b]}|{classes[a]},{classes[b]}")


def rest_problem(j: int, classes: np.ndarray) -> SubProblem:
    """Class index ``j`` (+1) against every other class (-1)."""
    K = len(classes)
    return SubProblem(j, tuple(k for k in range(K) if k != j), f"{classes[j]}|rest")


@dataclass(frozen=True)
class FittedSubProblem:
    """A tuned and fitted sub-problem.

    Attributes
    ----------
    spec : SubProblem
    ladder : Ladder
        Compressed ladder; its coefficient columns follow ``support``.
    support : ndarray of int, shape (s,)
        Rows of the fit data used by the ladder.
    kernel : Kernel
    lam, sigma : float
        Chosen penalty and RBF width (NaN for kernels without a width).
    weights : ndarray, shape (M - 1,)
    tuning : TuningResult or None
    n_train : int
        Points in the final fit.
    seconds : float
        Wall time spent on this sub-problem's fits (tuning and final), in its own threads.
    """

    spec: SubProblem
    ladder: Ladder
    support: np.ndarray
    kernel: Kernel
    lam: float
    sigma: float
    weights: np.ndarray
    tuning: TuningResult | None
    n_train: int
    seconds: float


class _SharedKernels:
    """Kernel matrices built once per key on first use and dropped after the last user."""

    def __init__(self, build: Callable[[object], object], uses: Counter) -> None:
        self._build = build
        self._uses = dict(uses)
        self._values: dict[object, object] = {}
        self._locks = {k: threading.Lock() for k in uses}
        self._lock = threading.Lock()

    def get(self, key):
        with self._locks[key]:
            if key not in self._values:
                self._values[key] = self._build(key)
            return self._values[key]

    def release(self, key) -> None:
        with self._lock:
            self._uses[key] -= 1
            if self._uses[key] <= 0:
                self._values.pop(key, None)


def run_tasks(tasks: Sequence[Callable[[], object]], n_jobs: int, abort: threading.Event) -> list:
    """Run zero-argument callables on ``n_jobs`` threads; results in task order.

    The first exception sets ``abort`` (so running tasks stop at their next fit), cancels
    tasks not yet started, and is re-raised.
    """
    if n_jobs <= 1 or len(tasks) <= 1:
        return [t() for t in tasks]
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        futures = [pool.submit(t) for t in tasks]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f.done() and f.exception() is not None]
        if failed:
            abort.set()
            for f in futures:
                f.cancel()
            wait(futures)
            # Prefer the root cause over the Cancelled errors it triggered elsewhere.
            raise failed[0].exception()
        return [f.result() for f in futures]


def _fit_one_ladder(K, y, weights, lam, solver, qp_solver, step, cancelled) -> Ladder:
    # fit_ladder reaches libsvm without per-fit validation (wsvm._fit_libsvm_direct).
    return fit_ladder(K, y, weights, lam, solver, qp_solver, progress=step, should_cancel=cancelled)


def subproblem_weights(n_weights: int | None, n: int) -> np.ndarray:
    """Interior weights for a sub-problem of ``n`` points; shape (M - 1,)."""
    return weight_grid(default_n_weights(n) if n_weights is None else n_weights)


def subproblem_lambdas(lambdas: np.ndarray | None, n: int) -> np.ndarray:
    """Lambda grid for a sub-problem of ``n`` points; shape (L,)."""
    return default_lambda_grid(n) if lambdas is None else np.asarray(lambdas, dtype=float)


def fit_subproblems(
    specs: Sequence[SubProblem],
    X_tr: np.ndarray,
    codes_tr: np.ndarray,
    X_tu: np.ndarray | None,
    codes_tu: np.ndarray | None,
    kernel: Kernel,
    *,
    lambdas: np.ndarray | None,
    sigmas: np.ndarray,
    n_weights: int | None,
    final_n_weights: int | None = None,
    rule: str = "count",
    refit: bool = True,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    n_jobs: int = 1,
    fit_data: tuple[np.ndarray, np.ndarray] | None = None,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
) -> tuple[list[FittedSubProblem], np.ndarray]:
    """Tune (when a tuning part is given) and fit every sub-problem.

    Parameters
    ----------
    specs : sequence of SubProblem
    X_tr : ndarray, shape (n, p)
    codes_tr : ndarray of int, shape (n,)
        Class indices of the training part.
    X_tu, codes_tu : ndarray, shapes (m, p) and (m,), or None
        Tuning part; None fits ``lambdas[0]`` and ``sigmas[0]`` on the training part
        without tuning.
    kernel : Kernel
        Template; for RBF its width is replaced by the grid values.
    lambdas : ndarray, shape (L,), or None
        Penalty grid for every sub-problem; None: ``default_lambda_grid(n_s)``.
    sigmas : ndarray, shape (S,)
        RBF widths (a single NaN for other kernels).
    n_weights : int or None
        M of every ladder; None: ``default_n_weights(n_s)``.
    final_n_weights : int or None
        M of the final fits only (tuning keeps ``n_weights``); None: as ``n_weights``.
    rule, refit, solver, qp_solver
        As in :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`.
    n_jobs : int
        Threads.
    fit_data : (X, codes) or None
        Data of the final fits when refitting (the binary engine refits a split's data
        in its original row order); None: the training part followed by the tuning part.
    progress, should_cancel
        Reported after each weighted fit / polled between fits.

    Returns
    -------
    fitted : list of FittedSubProblem, in the order of ``specs``
    X_fit : ndarray, shape (n_fit, p)
        The data of the final fits (training part, plus the tuning part when refitting).
    """
    tune = X_tu is not None
    abort = threading.Event()
    user_cancel = should_cancel

    def cancelled() -> bool:
        return abort.is_set() or (user_cancel is not None and bool(user_cancel()))

    S = len(sigmas)
    tr_rows = [s.rows(codes_tr) for s in specs]
    y_tr = [s.labels(codes_tr[r]) for s, r in zip(specs, tr_rows, strict=True)]
    for s, y in zip(specs, y_tr, strict=True):
        if not ((y > 0).any() and (y < 0).any()):
            raise InputError(f"sub-problem {s.name} has no training points of one side")
    if tune and refit:
        if fit_data is not None:
            X_fit, codes_fit = fit_data
        else:
            X_fit = np.vstack([X_tr, X_tu])
            codes_fit = np.concatenate([codes_tr, codes_tu])
    else:
        X_fit, codes_fit = X_tr, codes_tr
    fit_rows = [s.rows(codes_fit) for s in specs]
    # As in the binary engine: one weight grid, sized by the final fit, for tuning and
    # final fits alike (unless final_n_weights asks for a finer final grid).
    w_tune = [subproblem_weights(n_weights, r.size) for r in fit_rows]
    w_fit = w_tune if final_n_weights is None else [weight_grid(final_n_weights)] * len(specs)
    if tune:
        tu_rows = [s.rows(codes_tu) for s in specs]
        y_tu = [s.labels(codes_tu[r]) for s, r in zip(specs, tu_rows, strict=True)]
        lam_grids = [subproblem_lambdas(lambdas, r.size) for r in tr_rows]
    n_tune_fits = (
        sum(lam_grids[i].size * S * w_tune[i].size for i in range(len(specs))) if tune else 0
    )
    tracker = ProgressTracker(n_tune_fits + sum(w.size for w in w_fit), progress, cancelled)
    tracker.check()
    seconds = np.zeros(len(specs))
    time_lock = threading.Lock()

    def add_time(i: int, t: float) -> None:
        with time_lock:
            seconds[i] += t

    def step(*_args) -> None:
        tracker.step()

    tunings: list[TuningResult | None] = [None] * len(specs)
    if tune:
        scores = [np.full((g.size, S), np.inf) for g in lam_grids]
        errors = [np.full((g.size, S), np.nan) for g in lam_grids]
        failures: list[list[str]] = [[] for _ in specs]

        def build_tune(j):
            kern = kernel_with_sigma(kernel, sigmas[j])
            return kern(X_tr), kern(X_tu, X_tr)

        cache = _SharedKernels(build_tune, Counter({j: len(specs) for j in range(S)}))

        def tune_task(j: int, i: int):
            def run() -> None:
                start = time.perf_counter()
                try:
                    tracker.check()
                    K_all, Kt_all = cache.get(j)
                    r, rt = tr_rows[i], tu_rows[i]
                    K = K_all if r.size == K_all.shape[0] else K_all[np.ix_(r, r)]
                    Kt = Kt_all[np.ix_(rt, r)]
                    for li, lam in enumerate(lam_grids[i]):
                        try:
                            ladder = _fit_one_ladder(
                                K,
                                y_tr[i],
                                w_tune[i],
                                float(lam),
                                solver,
                                qp_solver,
                                step,
                                cancelled,
                            )
                        except SolverError as exc:
                            failures[i].append(str(exc))
                            tracker.step(w_tune[i].size)
                            continue
                        est = estimate(ladder, Kt, rule)
                        scores[i][li, j] = egkl_binary(est.p, y_tu[i])
                        errors[i][li, j] = float(
                            np.mean(np.where(est.p > 0.5, 1.0, -1.0) != y_tu[i])
                        )
                finally:
                    cache.release(j)
                    add_time(i, time.perf_counter() - start)

            return run

        run_tasks([tune_task(j, i) for j in range(S) for i in range(len(specs))], n_jobs, abort)
        chosen = []
        for i, spec in enumerate(specs):
            sc = scores[i]
            if not np.isfinite(sc).any():
                raise SolverError(
                    f"sub-problem {spec.name}: every fit of the tuning grid failed; first "
                    "failure: " + (failures[i][0] if failures[i] else "unknown")
                )
            # Ties go to the first cell in grid order, as in tune_ladder.
            best = np.flatnonzero(sc.ravel() == sc.min())[0]
            li, j = np.unravel_index(best, sc.shape)
            tunings[i] = TuningResult(
                lambdas=lam_grids[i],
                sigmas=np.asarray(sigmas, dtype=float),
                egkl=sc,
                error=errors[i],
                best_lambda=float(lam_grids[i][li]),
                best_sigma=float(sigmas[j]),
                failures=failures[i],
            )
            # Keep the tuned C = 1 / (2 n lambda) for the final fit, as the binary engine
            # does: lambda scales with the number of points fitted.
            lam = float(lam_grids[i][li]) * tr_rows[i].size / fit_rows[i].size
            chosen.append((lam, float(sigmas[j])))
    else:
        chosen = [
            (
                float(
                    subproblem_lambdas(lambdas, fit_rows[i].size)[0 if lambdas is not None else 2]
                ),
                float(sigmas[0]),
            )
            for i in range(len(specs))
        ]

    def sigma_key(sigma: float) -> float | str:
        return "none" if not np.isfinite(sigma) else float(sigma)

    def build_fit(key):
        return kernel_with_sigma(kernel, np.nan if key == "none" else key)(X_fit)

    fit_cache = _SharedKernels(build_fit, Counter(sigma_key(sg) for _, sg in chosen))
    results: list[FittedSubProblem | None] = [None] * len(specs)

    def fit_task(i: int):
        def run() -> None:
            start = time.perf_counter()
            lam, sigma = chosen[i]
            key = sigma_key(sigma)
            try:
                tracker.check()
                K_all = fit_cache.get(key)
                r = fit_rows[i]
                K = K_all if r.size == K_all.shape[0] else K_all[np.ix_(r, r)]
                ladder = _fit_one_ladder(
                    K,
                    specs[i].labels(codes_fit[r]),
                    w_fit[i],
                    lam,
                    solver,
                    qp_solver,
                    step,
                    cancelled,
                )
            finally:
                fit_cache.release(key)
            compressed, keep = ladder.compress()
            add_time(i, time.perf_counter() - start)
            results[i] = FittedSubProblem(
                spec=specs[i],
                ladder=compressed,
                support=r[keep],
                kernel=kernel_with_sigma(kernel, sigma),
                lam=lam,
                sigma=sigma if kernel.name == "rbf" else float("nan"),
                weights=w_fit[i],
                tuning=tunings[i],
                n_train=int(r.size),
                seconds=float(seconds[i]),
            )

        return run

    run_tasks([fit_task(i) for i in range(len(specs))], n_jobs, abort)
    return [r for r in results if r is not None], X_fit


def estimate(ladder: Ladder, K_cross: np.ndarray, rule: str) -> LadderEstimate:
    """Probabilities and brackets of a ladder at new points (``K_cross`` (m, n)).

    ``rule`` is one of :data:`~wsvmgui.ladder.rules.RULES` or ``"interpolate"``.
    """
    if rule == INTERPOLATE:
        return interpolated_estimate(ladder.decision(K_cross), ladder.weights)
    return ladder.estimate(K_cross, rule)


class SubproblemSet:
    """Fitted sub-problems with the support points they share, for prediction.

    Parameters
    ----------
    fitted : list of FittedSubProblem
    X_fit : ndarray, shape (n_fit, p)
        Data of the final fits; only the rows some ladder uses are kept.
    """

    def __init__(self, fitted: list[FittedSubProblem], X_fit: np.ndarray) -> None:
        rows = np.unique(np.concatenate([f.support for f in fitted])) if fitted else np.array([])
        rows = rows.astype(int)
        self.fitted = fitted
        self.X_support = X_fit[rows]
        # Position of each sub-problem's support rows within X_support (sorted rows).
        self.positions = [np.searchsorted(rows, f.support) for f in fitted]
        groups: dict[Kernel, list[int]] = {}
        for i, f in enumerate(fitted):
            groups.setdefault(f.kernel, []).append(i)
        self.groups = groups

    def decisions(self, X: np.ndarray) -> list[np.ndarray]:
        """Decision values of every ladder; list of arrays of shape (n, M_s - 1)."""
        n = X.shape[0]
        out = [np.empty((n, f.weights.size)) for f in self.fitted]
        for kern, members in self.groups.items():
            cols = np.unique(np.concatenate([self.positions[i] for i in members]))
            Xs = self.X_support[cols]
            local = [np.searchsorted(cols, self.positions[i]) for i in members]
            for s in range(0, n, PREDICT_BLOCK):
                Kc = kern(X[s : s + PREDICT_BLOCK], Xs)
                for i, loc in zip(members, local, strict=True):
                    sub = Kc if loc.size == Kc.shape[1] else Kc[:, loc]
                    out[i][s : s + PREDICT_BLOCK] = self.fitted[i].ladder.decision(sub)
        return out
