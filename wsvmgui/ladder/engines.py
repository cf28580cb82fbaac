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
from ..solvers.gram import Gram
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
        The exact path over the training points.
    weights : ndarray, shape (M - 1,)
        Weights at which :meth:`decision` reports (drawing only; the estimate does not
        use them).
    """

    path: WeightPath
    weights: np.ndarray
    engine: ClassVar[str] = "path"
    fallback: ClassVar[str] = ""
    switched: ClassVar[str] = ""

    @property
    def lam(self) -> float:
        return self.path.lam

    @property
    def kkt_residual(self) -> np.ndarray:
        """The path's checked KKT residual, once per weight; shape (M - 1,)."""
        return np.full(self.weights.size, self.path.kkt_residual)

    def decision(self, K_cross: np.ndarray) -> np.ndarray:
        """Decision values at ``weights``: ``(m, n)`` kernel rows -> ``(m, M - 1)``."""
        return self.path.decision_at(K_cross, self.weights)

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """Grid-free probabilities and brackets at new points (``K_cross`` (m, n)).

        ``"count"`` (and ``"interpolate"``, which is the same for an exact path): the
        measure of ``{pi : f_pi(x) > 0}``; ``"extreme"``: midpoint of the first and last
        zero.  See :meth:`~wsvmgui.ladder.path.WeightPath.estimate`.
        """
        return self.path.estimate(K_cross, rule)

    def compress(self) -> tuple[PathLadder, np.ndarray]:
        """Drop training points the path never uses; returns it and the kept indices."""
        path, keep = self.path.compress()
        return PathLadder(path, self.weights), keep


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

    Returns
    -------
    PathLadder or Ladder
        A grid ladder that answers for a broken-down path has ``fallback`` set to why;
        one that ``"auto"`` chose has ``switched`` set to why.
    """
    check_engine(engine)
    weights = check_weights(weights)
    shown = weights[1::2] if report_fits else weights[:0]
    units = _Units(weights.size, progress, reserve=shown.size)
    if engine == "grid":
        return _grid(K, y, weights, lam, solver, qp_solver, units, should_cancel, n_jobs)
    limit = auto_max_elbow(y.size) if engine == "auto" else None
    where = f" ({context})" if context else ""
    try:
        path = fit_path(
            K, y, lam, progress=units.path_progress, should_cancel=should_cancel,
            max_elbow=limit,
        )  # fmt: skip
    except PathTooCostly as exc:
        why = f"auto: grid ladder{where}: {exc}"
        logger.info("%s", why)
        ladder = _grid(K, y, weights, lam, solver, qp_solver, units, should_cancel, n_jobs)
        return replace(ladder, switched=why)
    except PathBreakdown as exc:
        why = f"weight path broke down{where}: {exc}"
        warnings.warn(
            f"{why}; the grid ladder of {weights.size} weights answers instead",
            PathFallbackWarning,
            stacklevel=2,
        )
        logger.warning("%s; using the grid ladder", why)
        ladder = _grid(K, y, weights, lam, solver, qp_solver, units, should_cancel, n_jobs)
        return replace(ladder, fallback=why)
    for fit in _fits_at(path, shown):
        units.report(fit)
    units.finish()
    return PathLadder(path, weights)


def _fits_at(path: WeightPath, pis: np.ndarray) -> list[WeightedFit]:
    """The weighted SVMs at ``pis`` read off the path (coefficients over its points)."""
    if not pis.size:
        return []
    coef, b = path.coef_matrix(pis)
    return [
        WeightedFit(float(pi), path.lam, path.C, c * path.y, c, float(bi), path.kkt_residual)
        for pi, c, bi in zip(pis, coef, b, strict=True)
    ]


def _grid(K, y, weights, lam, solver, qp_solver, units, should_cancel, n_jobs) -> Ladder:
    return fit_ladder(
        K, y, weights, lam, solver, qp_solver,
        progress=units.grid_progress, should_cancel=should_cancel, n_jobs=n_jobs,
    )  # fmt: skip


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
    """An engine for :func:`~wsvmgui.ladder.search.score_cell`.

    Returns
    -------
    callable
        ``engine(K, X, y, weights, lam, kernel, progress, should_cancel) -> ladder``.
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
    ) -> AnyLadder:
        return fit_binary_ladder(
            K, y, weights, lam, engine=engine, solver=solver, qp_solver=qp_solver,
            progress=progress, should_cancel=should_cancel, n_jobs=n_jobs,
            context=f"lambda {lam:.4g}, {kernel.describe()}",
        )  # fmt: skip

    return run
