"""The one tuning search of every binary ladder, and the final fits at its choices.

METHODS section 2 (Zeng section 6 for the sub-problems): for each (lambda, sigma) of a
grid, fit a ladder on each fold's training rows and score the fold's tuning rows by the
empirical generalised KL ``-(1/m) sum [1{y=+1} log p_hat + 1{y=-1} log(1 - p_hat)]``; keep
the minimiser.  :func:`search_ladders` does this for one or several binary *problems*
(the binary estimator has one; a divide-and-conquer scheme one per sub-problem) over the
same rows, so that the kernel matrix of all rows is built once per sigma and shared by
every fold, lambda, weight and problem (each takes a submatrix).

The unit of work is :func:`score_cell`: fit a ladder for one (lambda, sigma) on one
fold's training rows and score that fold's tuning rows.  It is the one call site of the
ladder *engine*: a name of :mod:`wsvmgui.ladder.engines` (``"path"``, the exact weight
path with its grid-free estimate and a grid fallback; ``"grid"``, one weighted SVM per
weight; ``"auto"``, the default), or any callable with the same signature (the
non-crossing ladder passes its own).  Estimates are floored at :data:`EGKL_FLOOR` before
they are scored (a path's estimate can come arbitrarily close to 0 or 1).

Work runs on threads (libsvm releases the GIL): one task per (sigma, problem) while
tuning and one per problem for the final fits, or threads over the weights of a single
grid ladder.  Progress is counted in units of the weight grid (M - 1 per ladder, whatever
the engine); cancellation is polled between fits (the path polls every 32 steps).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..errors import InputError, SolverError
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel
from .engines import DEFAULT_ENGINE, AnyLadder, fit_binary_ladder, make_engine
from .grid import FitEvent
from .rules import LadderEstimate
from .splits import Fold
from .tuning import TuningResult, egkl_binary, kernel_with_sigma


class LadderFit(Protocol):
    """What an engine returns: probabilities at new points."""

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """``(m, n_train)`` kernel rows -> estimates of shape (m,)."""
        ...


#: ``engine(K, X, y, weights, lam, kernel, progress, should_cancel) -> LadderFit``: fit a
#: ladder on the matrix ``K`` (n, n) of ``kernel`` over training inputs ``X`` (n, p) with
#: labels ``y`` in {-1, +1}; ``progress`` counts the M - 1 units of ``weights``.
Engine = Callable[..., LadderFit]

#: Estimates are clipped to ``[EGKL_FLOOR, 1 - EGKL_FLOOR]`` before the EGKL scores them
#: (every engine).  A path's estimate can come arbitrarily close to 0 or 1, where one
#: confident miss would decide the tuning; a grid ladder's never comes closer than 1/(2M),
#: so for M <= 50 (the default up to n = 625) the floor changes nothing for it.  Chosen by
#: ``benchmarks/path_egkl_floor.py`` (four binary designs, n = 200 and 600, 3 seeds each):
#: floors up to 1e-3 chose the same cell as no floor in all 24 cases; 1e-2 changed it in 5,
#: lowering the mean |p_hat - p| in 4; mean over the designs 0.0722 against 0.0733 at
#: n = 200, 0.0680 against 0.0678 at n = 600.
EGKL_FLOOR = 1e-2


class CellScore(NamedTuple):
    """Score of one tuning cell on one fold (:func:`score_cell`).

    Attributes
    ----------
    loss : float
        Sum over the tuning rows of the EGKL terms.
    misses : float
        Tuning rows misclassified by the estimate's argmax.
    engine : str
        Engine that answered (``"path"`` or ``"grid"``; a custom engine's ladder may
        say otherwise).
    fallback : str
        Why a path broke down and the grid answered, else empty.
    """

    loss: float
    misses: float
    engine: str = "grid"
    fallback: str = ""


@dataclass(frozen=True)
class LadderProblem:
    """One binary ladder problem on some rows of the data.

    Attributes
    ----------
    rows : ndarray of int, shape (n_s,)
        Rows of the data that take part.
    y : ndarray, shape (n_s,)
        Their labels in {-1, +1} (+1 is the class whose probability the ladder estimates).
    name : str
        Sub-problem name for messages and progress events (empty for a binary problem).
    """

    rows: np.ndarray
    y: np.ndarray
    name: str = ""

    def select(self, rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Of ``rows`` (indices into data of ``n`` rows), those in this problem, in order,
        with their labels."""
        label = np.zeros(n)
        label[self.rows] = self.y
        keep = rows[label[rows] != 0]
        return keep, label[keep]


def score_cell(
    engine: Engine,
    K_all: np.ndarray,
    X: np.ndarray,
    kernel: Kernel,
    train: np.ndarray,
    y_train: np.ndarray,
    test: np.ndarray,
    y_test: np.ndarray,
    weights: np.ndarray,
    lam: float,
    rule: str,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
) -> CellScore:
    """Fit a ladder for one (lambda, sigma) on one fold's training rows; score its tuning rows.

    Parameters
    ----------
    engine : Engine
    K_all : ndarray, shape (n, n)
        Kernel of all rows at this sigma.
    X : ndarray, shape (n, p)
    kernel : Kernel
        The kernel of ``K_all``.
    train, test : ndarray of int
        Rows of the fold's training and tuning parts.
    y_train, y_test : ndarray
        Their labels in {-1, +1}.
    weights : ndarray, shape (M - 1,)
    lam : float
    rule : str
        How the ladder becomes a probability (:mod:`wsvmgui.ladder.rules`).
    progress, should_cancel
        Passed to the engine.

    Returns
    -------
    CellScore
        The EGKL terms summed over the tuning rows (estimates floored at
        :data:`EGKL_FLOOR`), the rows the estimate's argmax misclassifies, and the engine
        that answered.
    """
    K = _submatrix(K_all, train, train)
    ladder = engine(K, X[train], y_train, weights, lam, kernel, progress, should_cancel)
    p = ladder.estimate(K_all[np.ix_(test, train)], rule).p
    return CellScore(
        egkl_binary(np.clip(p, EGKL_FLOOR, 1.0 - EGKL_FLOOR), y_test) * y_test.size,
        float(np.sum(np.where(p > 0.5, 1.0, -1.0) != y_test)),
        str(getattr(ladder, "engine", "grid")),
        str(getattr(ladder, "fallback", "")),
    )


def _submatrix(K_all: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``K_all[rows][:, cols]``, without a copy when that is all of ``K_all`` in order."""
    n = K_all.shape[0]
    if rows is cols and rows.size == n and np.array_equal(rows, np.arange(n)):
        return K_all
    return K_all[np.ix_(rows, cols)]


class SharedKernels:
    """Kernel matrices built once per key on first use and dropped after the last user."""

    def __init__(self, build: Callable[[Any], np.ndarray], uses: Counter) -> None:
        self._build = build
        self._uses = dict(uses)
        self._values: dict[Hashable, np.ndarray] = {}
        self._locks = {k: threading.Lock() for k in uses}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> np.ndarray:
        with self._locks[key]:
            if key not in self._values:
                self._values[key] = self._build(key)
            return self._values[key]

    def release(self, key: Hashable) -> None:
        with self._lock:
            self._uses[key] -= 1
            if self._uses[key] <= 0:
                self._values.pop(key, None)


def run_tasks(tasks: Sequence[Callable[[], Any]], n_jobs: int, abort: threading.Event) -> list:
    """Run zero-argument callables on ``n_jobs`` threads; results in task order.

    The first exception sets ``abort`` (so running tasks stop at their next fit), cancels
    tasks not yet started, and is re-raised.
    """
    if n_jobs <= 1 or len(tasks) <= 1:
        return [t() for t in tasks]
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        futures = [pool.submit(t) for t in tasks]
        wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f.done() and f.exception() is not None]
        if failed:
            abort.set()
            for f in futures:
                f.cancel()
            wait(futures)
            # Prefer the root cause over the Cancelled errors it triggered elsewhere.
            raise failed[0].exception()  # type: ignore[misc]
        return [f.result() for f in futures]


def _sigma_key(sigma: float) -> Hashable:
    return "none" if not np.isfinite(sigma) else float(sigma)


def search_ladders(
    X: np.ndarray,
    problems: Sequence[LadderProblem],
    folds: Sequence[Fold],
    kernel: Kernel,
    sigmas: np.ndarray,
    weights: Sequence[np.ndarray],
    lambdas: Sequence[np.ndarray],
    *,
    rule: str = "count",
    engine: Engine | str = DEFAULT_ENGINE,
    n_jobs: int = 1,
    tracker: ProgressTracker,
) -> list[TuningResult]:
    """EGKL grid search over lambda x sigma of every problem, summed over the folds.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    problems : sequence of LadderProblem
    folds : sequence of (train, test)
        Row indices into ``X``; each problem uses its own rows of every part.
    kernel : Kernel
        Template; for RBF its width is replaced by each value of ``sigmas``.
    sigmas : ndarray, shape (S,)
        RBF widths (a single NaN for kernels without one).
    weights : sequence of ndarray, shape (M_i - 1,)
        Weight grid of each problem.
    lambdas : sequence of ndarray, shape (L_i,)
        Lambda grid of each problem.
    rule : str
        Probability rule scored (:mod:`wsvmgui.ladder.rules`).
    engine : str or Engine
        A name of :data:`~wsvmgui.ladder.engines.ENGINES` (libsvm for grid ladders) or
        an engine callable.
    n_jobs : int
        Threads, one task per (sigma, problem).
    tracker : ProgressTracker
        Its total grows by M - 1 units per ladder, reported as the ladder progresses.

    Returns
    -------
    list of TuningResult
        One per problem: ``egkl`` and ``error`` over every tuning row of every fold
        (each row counted once per fold it is tuned in); ties go to the first cell in
        grid order (by default the largest lambda).  ``engines`` counts which engine
        answered the cells; a path that broke down counts as ``"grid"`` and its reason
        is kept in ``fallbacks``.

    Raises
    ------
    InputError
        A problem with no tuning rows, or a fold leaving it one class to train on.
    SolverError
        Every fit of some problem's grid failed.
    """
    engine = make_engine(engine) if isinstance(engine, str) else engine
    n = X.shape[0]
    sigmas = np.asarray(sigmas, dtype=float)
    S = sigmas.size
    parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = []
    for prob in problems:
        mine = []
        for train, test in folds:
            tr, y_tr = prob.select(np.asarray(train), n)
            te, y_te = prob.select(np.asarray(test), n)
            if te.size == 0:
                continue
            if not ((y_tr > 0).any() and (y_tr < 0).any()):
                raise InputError(
                    f"{_what(prob)}: a tuning split leaves no training point of one class"
                )
            mine.append((tr, y_tr, te, y_te))
        if not mine:
            raise InputError(f"{_what(prob)} has no point in any tuning part")
        tuned = np.concatenate([part[3] for part in mine])
        if not ((tuned > 0).any() and (tuned < 0).any()):
            raise InputError(
                f"{_what(prob)}: the tuning rows hold only one of its classes, so its EGKL "
                "cannot choose lambda and sigma (does the tuning set miss a class?)"
            )
        parts.append(mine)
    n_test = [sum(p[2].size for p in mine) for mine in parts]
    loss = [np.zeros((g.size, S)) for g in lambdas]
    miss = [np.zeros((g.size, S)) for g in lambdas]
    failures: list[list[str]] = [[] for _ in problems]
    engines: list[Counter] = [Counter() for _ in problems]
    fallbacks: list[list[str]] = [[] for _ in problems]
    seconds = _Timer(len(problems))
    abort = threading.Event()

    def cancelled() -> bool:
        return abort.is_set() or tracker.cancel_requested()

    kernels = [kernel_with_sigma(kernel, sg) for sg in sigmas]
    cache = SharedKernels(lambda j: kernels[j](X), Counter({j: len(problems) for j in range(S)}))
    tracker.add_total(
        sum(lambdas[i].size * S * len(parts[i]) * weights[i].size for i in range(len(problems)))
    )
    tracker.check()

    def task(j: int, i: int) -> Callable[[], None]:
        def run() -> None:
            start = time.perf_counter()
            try:
                tracker.check()
                K_all = cache.get(j)
                w = weights[i]
                for li, lam in enumerate(lambdas[i]):
                    for tr, y_tr, te, y_te in parts[i]:
                        if not np.isfinite(loss[i][li, j]):
                            tracker.step(w.size)  # this cell already failed on a fold
                            continue
                        done_here = [0]

                        def step(done: int, _total: int, _fit, done_here=done_here) -> None:
                            done_here[0] = done
                            tracker.step()

                        try:
                            cell = score_cell(
                                engine, K_all, X, kernels[j], tr, y_tr, te, y_te, w,
                                float(lam), rule, step, cancelled,
                            )  # fmt: skip
                        except SolverError as exc:
                            failures[i].append(str(exc))
                            tracker.step(w.size - done_here[0])
                            loss[i][li, j] = np.inf
                            continue
                        loss[i][li, j] += cell.loss
                        miss[i][li, j] += cell.misses
                        engines[i][cell.engine] += 1
                        if cell.fallback:
                            fallbacks[i].append(cell.fallback)
            finally:
                cache.release(j)
                seconds.add(i, time.perf_counter() - start)

        return run

    run_tasks([task(j, i) for j in range(S) for i in range(len(problems))], n_jobs, abort)
    results = []
    for i, prob in enumerate(problems):
        scores = loss[i] / n_test[i]
        if not np.isfinite(scores).any():
            raise SolverError(
                f"{_what(prob)}: every fit of the tuning grid failed; first failure: "
                + (failures[i][0] if failures[i] else "unknown")
            )
        best = np.flatnonzero(scores.ravel() == scores.min())[0]
        li, j = np.unravel_index(best, scores.shape)
        results.append(
            TuningResult(
                lambdas=np.asarray(lambdas[i], dtype=float),
                sigmas=sigmas,
                egkl=scores,
                error=np.where(np.isfinite(scores), miss[i] / n_test[i], np.nan),
                best_lambda=float(lambdas[i][li]),
                best_sigma=float(sigmas[j]),
                failures=failures[i],
                seconds=seconds.total[i],
                engines=dict(engines[i]),
                fallbacks=fallbacks[i],
            )
        )
    return results


class _Timer:
    """Seconds per problem, added from several threads."""

    def __init__(self, n: int) -> None:
        self.total = [0.0] * n
        self._lock = threading.Lock()

    def add(self, i: int, seconds: float) -> None:
        with self._lock:
            self.total[i] += seconds


def _what(prob: LadderProblem) -> str:
    return f"sub-problem {prob.name}" if prob.name else "the problem"


def _context(prob: LadderProblem, lam: float, kernel: Kernel) -> str:
    """Where a ladder belongs, for fallback warnings."""
    where = f"sub-problem {prob.name}, " if prob.name else ""
    return f"{where}lambda {lam:.4g}, {kernel.describe()}"


@dataclass(frozen=True)
class FittedLadder:
    """A final ladder of one problem.

    Attributes
    ----------
    ladder : Ladder or PathLadder
        Compressed: its coefficients follow ``support``.
    support : ndarray of int, shape (s,)
        Rows of the data the ladder uses.
    kernel : Kernel
    lam, sigma : float
    n_train : int
        Rows of the final fit.
    seconds : float
        Time of the final fit.
    """

    ladder: AnyLadder
    support: np.ndarray
    kernel: Kernel
    lam: float
    sigma: float
    n_train: int
    seconds: float = 0.0


def fit_ladders(
    X: np.ndarray,
    problems: Sequence[LadderProblem],
    rows: np.ndarray,
    kernel: Kernel,
    chosen: Sequence[tuple[float, float]],
    weights: Sequence[np.ndarray],
    *,
    engine: str = DEFAULT_ENGINE,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    n_jobs: int = 1,
    tracker: ProgressTracker,
) -> list[FittedLadder]:
    """The final ladder of every problem on its part of ``rows``, at its chosen (lambda, sigma).

    One kernel matrix per distinct sigma, shared by the problems.  A single grid ladder is
    fitted with ``n_jobs`` threads over its weights, several problems with one task per
    problem.  Every weighted fit of a grid ladder is reported to the tracker with a
    :class:`~wsvmgui.ladder.grid.FitEvent` (stage ``"final"``, label the problem's name)
    for live views; a path reports its progress in the same units without one.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    problems : sequence of LadderProblem
    rows : ndarray of int
        Rows of the final fits (all rows, or the first fold's training part).
    kernel : Kernel
    chosen : sequence of (lambda, sigma)
    weights : sequence of ndarray
        Weight grids (the path's drawing weights).
    engine : {"path", "grid", "auto"}
        See :mod:`wsvmgui.ladder.engines`.
    solver, qp_solver : str
        Solver of grid ladders.
    n_jobs : int
    tracker : ProgressTracker

    Returns
    -------
    list of FittedLadder, in the order of ``problems``
    """
    n = X.shape[0]
    rows = np.asarray(rows)
    sel = [prob.select(rows, n) for prob in problems]
    abort = threading.Event()

    def cancelled() -> bool:
        return abort.is_set() or tracker.cancel_requested()

    cache = SharedKernels(
        lambda key: kernel_with_sigma(kernel, np.nan if key == "none" else key)(X),
        Counter(_sigma_key(sg) for _, sg in chosen),
    )
    inner_jobs = n_jobs if len(problems) == 1 else 1
    results: list[FittedLadder | None] = [None] * len(problems)

    def task(i: int) -> Callable[[], None]:
        def run() -> None:
            start = time.perf_counter()
            lam, sigma = chosen[i]
            key = _sigma_key(sigma)
            kern = kernel_with_sigma(kernel, sigma)
            r, y = sel[i]
            X_r = X[r]
            label = problems[i].name

            def step(_done: int, _total: int, fit) -> None:
                event = None if fit is None else FitEvent("final", fit, X_r, kern, label)
                tracker.step(partial=event)

            try:
                tracker.check()
                K = _submatrix(cache.get(key), r, r)
                ladder = fit_binary_ladder(
                    K, y, weights[i], lam, engine=engine, solver=solver,
                    qp_solver=qp_solver, progress=step, should_cancel=cancelled,
                    n_jobs=inner_jobs, context=_context(problems[i], lam, kern),
                    report_fits=True,
                )  # fmt: skip
            finally:
                cache.release(key)
            compressed, keep = ladder.compress()
            results[i] = FittedLadder(
                compressed,
                r[keep],
                kern,
                float(lam),
                float(sigma) if kernel.name == "rbf" else float("nan"),
                int(r.size),
                time.perf_counter() - start,
            )

        return run

    run_tasks([task(i) for i in range(len(problems))], n_jobs, abort)
    return [r for r in results if r is not None]
