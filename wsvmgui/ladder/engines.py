"""Ladder engines: the exact weight path (default) or the grid of weighted SVMs.

Every binary ladder of the project (the binary estimator, each sub-problem of the
divide-and-conquer schemes, the preconditioned SVM's independent ladder, and every cell
of their tuning searches) is fitted by :func:`fit_binary_ladder`, which runs one of:

``"path"``
    The exact solution path in pi (:func:`~wsvmgui.ladder.path.fit_path`), wrapped in a
    :class:`PathLadder`: probabilities are grid-free (the measure of
    ``{pi : f_pi(x) > 0}``; :meth:`~wsvmgui.ladder.path.WeightPath.estimate`).  If the path
    breaks down (:class:`~wsvmgui.ladder.path.PathBreakdown`: its own KKT checks failed,
    too many steps, an elbow system it cannot solve), the grid ladder answers instead,
    with a :class:`PathFallbackWarning` and a log record naming why; that answer is
    KKT-checked like every grid ladder.  Never an unchecked answer.
``"auto"``
    The path, stopped as soon as its elbow holds more than
    :func:`~wsvmgui.ladder.path.auto_max_elbow` points
    (:class:`~wsvmgui.ladder.path.PathTooCostly`: the grid is expected to be cheaper);
    the grid ladder then answers for that (lambda, kernel) with a log record (info), no
    warning.  A path that breaks down falls back as under ``"path"``.
``"grid"``
    One weighted SVM per weight of the grid (:func:`~wsvmgui.ladder.grid.fit_ladder`);
    probabilities quantised to the grid.

The weight grid (``weights``, shape (M - 1,)) is what the grid engine fits; for the path
it is only the set of weights at which :meth:`PathLadder.decision` reports decision values
(for drawing sign ladders and for comparisons with a grid).

Sample weights multiply every point's bound ``C S(y_i)`` (METHODS section 1), normalised
to mean one over the fit's rows, so that lambda keeps its meaning: the objective is the
weighted mean loss ``(1 / sum w) sum_i w_i S(y_i) (1 - y_i f(x_i))_+ + lambda J(f)``, the
same as repeating row i ``w_i`` times.  The grid engine gives libsvm the weighted bounds.
The exact path takes integer weights as repeated rows (it merges identical points, so
repeats cost a larger kernel copy but no larger path), up to
:data:`MAX_PATH_REPEATS` times the rows; other weights are fitted by the grid ladder, said
in the ladder's ``switched`` note.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..errors import InputError, WSVMWarning
from ..progress import CancelCheck, ProgressCallback
from ..solvers.gram import Gram, OnTheFlyGram
from ..solvers.kernels import Kernel
from ..solvers.wsvm import WeightedFit
from .grid import Ladder, fit_ladder
from .path import PathBreakdown, PathTooCostly, WeightPath, auto_max_elbow, fit_path
from .rules import LadderEstimate
from .weights import check_weights

logger = logging.getLogger(__name__)

ENGINES = ("path", "auto", "grid")
#: The engine of every ladder scheme unless told otherwise.
DEFAULT_ENGINE = "path"
#: Largest ratio of repeated rows to rows for which the path takes integer sample weights
#: as repeated rows (its kernel copy grows with the square of the ratio).
MAX_PATH_REPEATS = 4


class PathFallbackWarning(WSVMWarning):
    """A weight path broke down; the grid ladder answered for that (lambda, kernel)."""


def check_engine(engine: str) -> str:
    """Validate an engine name (one of :data:`ENGINES`)."""
    if engine not in ENGINES:
        raise InputError(f"unknown ladder engine {engine!r}; choose one of {', '.join(ENGINES)}")
    return engine


@dataclass(frozen=True)
class PathLadder:
    """A fitted weight path, usable wherever a :class:`~wsvmgui.ladder.grid.Ladder` is.

    Attributes
    ----------
    path : WeightPath
        The exact path over the training points (over their repeats when ``columns``
        is set).
    weights : ndarray, shape (M - 1,)
        Weights at which :meth:`decision` reports (drawing only; the estimate does not
        use them).
    columns : ndarray of int, shape (n_path,), or None
        With integer sample weights, the training point of each of the path's points
        (a point of weight k appears k times): kernel rows over the training points are
        spread to the path's points.
    """

    path: WeightPath
    weights: np.ndarray
    columns: np.ndarray | None = None
    engine: ClassVar[str] = "path"
    fallback: ClassVar[str] = ""
    switched: ClassVar[str] = ""

    def _spread(self, K_cross: np.ndarray) -> np.ndarray:
        K_cross = np.asarray(K_cross)
        return K_cross if self.columns is None else K_cross[:, self.columns]

    @property
    def lam(self) -> float:
        return self.path.lam

    @property
    def kkt_residual(self) -> np.ndarray:
        """The path's checked KKT residual, once per weight; shape (M - 1,)."""
        return np.full(self.weights.size, self.path.kkt_residual)

    def decision(self, K_cross: np.ndarray) -> np.ndarray:
        """Decision values at ``weights``: ``(m, n)`` kernel rows -> ``(m, M - 1)``."""
        return self.path.decision_at(self._spread(K_cross), self.weights)

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """Grid-free probabilities and brackets at new points (``K_cross`` (m, n)).

        ``"count"`` (and ``"interpolate"``, which is the same for an exact path): the
        measure of ``{pi : f_pi(x) > 0}``; ``"extreme"``: midpoint of the first and last
        zero.  See :meth:`~wsvmgui.ladder.path.WeightPath.estimate`.
        """
        return self.path.estimate(self._spread(K_cross), rule)

    def compress(self) -> tuple[PathLadder, np.ndarray]:
        """Drop training points the path never uses; returns it and the kept indices."""
        path, keep = self.path.compress()
        if self.columns is None:
            return PathLadder(path, self.weights), keep
        kept, columns = np.unique(self.columns[keep], return_inverse=True)
        return PathLadder(path, self.weights, columns.ravel()), kept


#: A fitted binary ladder of either engine.
AnyLadder = Ladder | PathLadder


def fit_binary_ladder(
    K: np.ndarray | Gram,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float,
    *,
    engine: str = DEFAULT_ENGINE,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    n_jobs: int = 1,
    context: str = "",
    report_fits: bool = False,
    sample_weight: np.ndarray | None = None,
) -> AnyLadder:
    """One binary ladder by ``engine``, falling back from the path to the grid.

    Parameters
    ----------
    K : ndarray, shape (n, n), or Gram
        The training rows' kernel matrix; a :class:`~wsvmgui.solvers.gram.Gram` (rows
        of a shared matrix, or values made on the fly) lets the grid use it in place.
        The path reads a dense matrix of its rows, and on an
        :class:`~wsvmgui.solvers.gram.OnTheFlyGram` only the kernel rows of its elbow
        points (:mod:`wsvmgui.ladder.path_rows`; at most the Gram's ``cache_mb`` of them).
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    weights : ndarray, shape (M - 1,)
        The grid engine's weights; the path's drawing weights.
    lam : float
    engine : {"path", "auto", "grid"}
    solver, qp_solver : str
        Weighted-SVM solver of the grid ladder (also on fallback).
    progress : callable, optional
        ``progress(done, M - 1, partial)`` with ``done`` counting up to ``M - 1`` whatever
        the engine, one call per unit.  The grid reports each
        :class:`~wsvmgui.solvers.wsvm.WeightedFit` as ``partial``; the path reports the
        share of (0, 1) it has covered with ``partial`` None, and with ``report_fits``
        keeps the last half of the units for the fits at every other weight (read off the
        finished path, in weight order, as ``partial``), for live views.
    should_cancel : callable, optional
    n_jobs : int
        Threads of the grid ladder.
    context : str
        Named in the fallback warning (e.g. the sub-problem and sigma).
    report_fits : bool
        See ``progress``.
    sample_weight : ndarray, shape (n,), optional
        Positive weight of every point (see the module docstring); None: all equal.

    Returns
    -------
    PathLadder or Ladder
        A grid ladder that answers for a broken-down path has ``fallback`` set to why;
        one that ``"auto"`` chose (or that answers for sample weights the path does not
        take) has ``switched`` set to why.
    """
    check_engine(engine)
    weights = check_weights(weights)
    shown = weights[1::2] if report_fits else weights[:0]
    units = _Units(weights.size, progress, reserve=shown.size)
    sw = _unit_mean(sample_weight)

    def grid() -> Ladder:
        return fit_ladder(
            K, y, weights, lam, solver, qp_solver, progress=units.grid_progress,
            should_cancel=should_cancel, n_jobs=n_jobs, sample_weight=sw,
        )  # fmt: skip

    if engine == "grid":
        return grid()
    where = f" ({context})" if context else ""
    columns = None if sample_weight is None or sw is None else path_repeats(sample_weight)
    if sw is not None and columns is None:
        why = f"grid ladder{where}: the path takes integer sample weights only (as repeats)"
        logger.info("%s", why)
        return replace(grid(), switched=why)
    try:
        path = _path(K, y, lam, columns, engine == "auto", units, should_cancel)
    except PathTooCostly as exc:
        why = f"auto: grid ladder{where}: {exc}"
        logger.info("%s", why)
        return replace(grid(), switched=why)
    except PathBreakdown as exc:
        why = f"weight path broke down{where}: {exc}"
        warnings.warn(
            f"{why}; the grid ladder of {weights.size} weights answers instead",
            PathFallbackWarning,
            stacklevel=2,
        )
        logger.warning("%s; using the grid ladder", why)
        return replace(grid(), fallback=why)
    for fit in _fits_at(path, shown, columns, y):
        units.report(fit)
    units.finish()
    return PathLadder(path, weights, columns)


def _path(
    K: np.ndarray | Gram,
    y: np.ndarray,
    lam: float,
    columns: np.ndarray | None,
    auto: bool,
    units: _Units,
    should_cancel: CancelCheck | None,
) -> WeightPath:
    """The exact path (over the points repeated by ``columns``), stopped for ``"auto"``.

    An :class:`~wsvmgui.solvers.gram.OnTheFlyGram` stays on the fly (over the repeated
    rows); any other kernel is taken dense.
    """
    if columns is None:
        K_path: np.ndarray | Gram = K
        y_path = np.asarray(y)
    elif isinstance(K, OnTheFlyGram):
        K_path = OnTheFlyGram(K.X[columns], K.kernel, cache_mb=K.cache_mb)
        y_path = np.asarray(y)[columns]
    else:
        K_path = np.asarray(K)[np.ix_(columns, columns)]
        y_path = np.asarray(y)[columns]
    return fit_path(
        K_path, y_path, lam, progress=units.path_progress, should_cancel=should_cancel,
        max_elbow=auto_max_elbow(y_path.size) if auto else None,
    )  # fmt: skip


def _unit_mean(sample_weight: np.ndarray | None) -> np.ndarray | None:
    """Sample weights scaled to mean one (None when absent or all equal)."""
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=float)
    if not (np.all(np.isfinite(sw)) and np.all(sw > 0)):
        raise InputError("sample weights of a ladder's points must be positive numbers")
    if np.all(sw == sw[0]):
        return None
    return sw / sw.mean()


def path_repeats(sample_weight: np.ndarray) -> np.ndarray | None:
    """Each point's index repeated by its weight (divided by the weights' greatest common
    divisor), or None when the weights are not integers or the repeats would exceed
    :data:`MAX_PATH_REPEATS` times the points."""
    sw = np.asarray(sample_weight, dtype=float)
    if not np.all(sw == np.round(sw)):
        return None
    counts = sw.astype(np.int64)
    counts //= np.gcd.reduce(counts)
    if counts.sum() > MAX_PATH_REPEATS * counts.size:
        return None
    return np.repeat(np.arange(counts.size), counts)


def _fits_at(
    path: WeightPath, pis: np.ndarray, columns: np.ndarray | None, y: np.ndarray
) -> list[WeightedFit]:
    """The weighted SVMs at ``pis`` read off the path (coefficients over the training
    points: a point's repeats summed when ``columns`` is set)."""
    if not pis.size:
        return []
    coef, b = path.coef_matrix(pis)
    if columns is not None:
        coef = np.stack([np.bincount(columns, weights=c, minlength=y.size) for c in coef])
    y = np.asarray(y, dtype=float)
    return [
        WeightedFit(float(pi), path.lam, path.C, c * y, c, float(bi), path.kkt_residual)
        for pi, c, bi in zip(pis, coef, b, strict=True)
    ]


class _Units:
    """Maps either engine's progress onto ``total`` units, one callback per unit.

    The grid reports one unit per weighted fit; the path its permille of (0, 1) covered,
    scaled to the units.  A fallback continues from the units already reported, so the
    count never exceeds ``total``.
    """

    def __init__(self, total: int, progress: ProgressCallback | None, reserve: int = 0) -> None:
        self.total = int(total)
        self.done = 0
        self.progress = progress
        self._base = 0
        self._reserve = int(reserve)

    def _advance(self, to: int, partial=None) -> None:
        to = min(int(to), self.total)
        while self.done < to and self.progress is not None:
            self.done += 1
            self.progress(self.done, self.total, partial if self.done == to else None)
        self.done = max(self.done, to)

    def path_progress(self, done: int, total: int, _partial=None) -> None:
        self._advance((self.total - self._reserve) * done // max(int(total), 1))
        self._base = self.done

    def report(self, partial) -> None:
        """One reserved unit, carrying ``partial``."""
        self._advance(self.done + 1, partial)

    def grid_progress(self, done: int, total: int, partial=None) -> None:
        # On a fallback the fits left after the path's share fill the remaining units.
        left = self.total - self._base
        self._advance(self._base + (left * done) // max(int(total), 1), partial)

    def finish(self) -> None:
        self._advance(self.total)


def make_engine(
    engine: str = DEFAULT_ENGINE,
    solver: str = "libsvm",
    qp_solver: str = "quadprog",
    n_jobs: int = 1,
) -> Callable[..., AnyLadder]:
    """An engine for the ladder search (:data:`wsvmgui.ladder.runs.Engine`).

    Returns
    -------
    callable
        ``engine(K, X, y, weights, lam, kernel, progress, should_cancel,
        sample_weight=None) -> ladder``.
    """
    check_engine(engine)

    def run(
        K: np.ndarray,
        X: np.ndarray,
        y: np.ndarray,
        weights: np.ndarray,
        lam: float,
        kernel: Kernel,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> AnyLadder:
        return fit_binary_ladder(
            K, y, weights, lam, engine=engine, solver=solver, qp_solver=qp_solver,
            progress=progress, should_cancel=should_cancel, n_jobs=n_jobs,
            context=f"lambda {lam:.4g}, {kernel.describe()}", sample_weight=sample_weight,
        )  # fmt: skip

    return run
