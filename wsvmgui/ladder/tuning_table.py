"""The tuning table: a grid of candidate cells, the scores of a search, and its choice.

:class:`Grid` names the candidate cells; :class:`TuningResult` holds what a search
(:func:`~wsvmgui.ladder.gridsearch.grid_search`) found, every cell's score and the chosen
cell; :func:`best_cell` and :func:`one_se_cell` are the two rules that choose it and
:func:`grid_edges` says whether the choice sits on the grid's border.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError

#: Candidate values of one axis: a numeric array, or a tuple of other values.
AxisValues = np.ndarray | tuple


def _axis(values: Any) -> AxisValues:
    arr = np.asarray(values)
    if arr.ndim == 1 and arr.dtype.kind in "biuf":
        return arr
    return tuple(values)


@dataclass(frozen=True)
class Grid:
    """Candidate cells: named axes of values, searched in C order (the last axis fastest).

    Attributes
    ----------
    axes : dict of str to array-like
        Axis name -> candidate values (numbers as an array, other values as a tuple).
    only : ndarray of bool, shape ``shape``, or None
        Cells to fit (the others score NaN); None fits every cell.
    """

    axes: dict[str, Any]
    only: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not self.axes:
            raise InputError("a tuning grid needs at least one axis")
        axes = {str(k): _axis(v) for k, v in self.axes.items()}
        for name, values in axes.items():
            if len(values) == 0:
                raise InputError(f"the tuning grid's {name} axis is empty")
        object.__setattr__(self, "axes", axes)
        if self.only is not None:
            only = np.asarray(self.only, dtype=bool)
            if only.shape != self.shape:
                raise InputError(f"cells to fit have shape {only.shape}, the grid {self.shape}")
            object.__setattr__(self, "only", only)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.axes.values())

    def cells(self) -> list[tuple[int, ...]]:
        """Index tuples of the cells to fit, in grid order."""
        return [
            tuple(int(i) for i in idx)
            for idx in np.ndindex(*self.shape)
            if self.only is None or self.only[idx]
        ]

    def params(self, cell: tuple[int, ...]) -> dict[str, Any]:
        """Axis name -> value of ``cell`` (numbers as Python scalars)."""
        out: dict[str, Any] = {}
        for (name, values), i in zip(self.axes.items(), cell, strict=True):
            value = values[i]
            out[name] = value.item() if isinstance(value, np.generic) else value
        return out


@dataclass(frozen=True)
class TuningResult:
    """The table of a tuning search and its choice.

    Attributes
    ----------
    axes : dict of str to array-like
        The grid's axes (:class:`Grid`).
    score : ndarray, shape (the grid's shape)
        Mean score over the tuning rows (inf where a fit failed, NaN for cells left out).
    best : tuple of int
        Index of the chosen cell.
    score_name : str
        What ``score`` holds (``"egkl"``, ``"cross_entropy"``, ``"hinge"``, ``"error"``).
    error : ndarray or None
        Tuning-set misclassification rate per cell, when the score says.
    edge : dict of str to str
        For every axis with two or more values on which the chosen value is the smallest
        (``"min"``) or the largest (``"max"``) of the grid (``"first"``/``"last"`` for
        values that are not numbers): the search may have stopped at the grid's border.
    failures : list of str
        Messages of fits that failed (their cells hold inf).
    seconds : float
        Time spent in its jobs (summed over threads).
    engines : dict of str to int
        How many (cell, fold) fits each engine answered (ladders).
    fallbacks : list of str
        Why each path that broke down did (the grid answered those; ladders).
    storage : str
        How the kernel was held while tuning (ladders,
        :meth:`~wsvmgui.solvers.memory.KernelStorage.describe`).
    screened : ndarray or None
        Scores of the screening round on subsampled folds, when tuning was screened
        (:mod:`wsvmgui.ladder.screening`); ``score`` then holds NaN for the cells not
        fitted on the full folds.
    se : ndarray or None
        Standard error of each cell's score (when the folds gave per-row terms).
    rule : str
        How ``best`` was chosen: ``"min"`` (the smallest score) or ``"one_se"``.
    extended : dict of str to tuple of float
        Axis name -> the values the search added past the grid's ends because the chosen
        cell sat on an edge (:class:`~wsvmgui.ladder.gridsearch.Extension`); ``axes``
        includes them.  Empty when the grid was not extended.
    """

    axes: dict[str, AxisValues]
    score: np.ndarray
    best: tuple[int, ...]
    score_name: str = "score"
    error: np.ndarray | None = None
    edge: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    engines: dict[str, int] = field(default_factory=dict)
    fallbacks: list[str] = field(default_factory=list)
    storage: str = ""
    screened: np.ndarray | None = None
    se: np.ndarray | None = None
    rule: str = "min"
    extended: dict[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def min_edge(self) -> dict[str, str]:
        """:attr:`edge` of the cell of the smallest score: the chosen cell's under rule
        ``"min"``; under ``"one_se"``, whose choice sits on an edge on purpose (the widest
        kernel within one SE), whether the minimum itself does, i.e. whether the best may
        lie outside the grid."""
        if self.rule == "min":
            return dict(self.edge)
        return grid_edges(self.axes, self.min_cell)

    @property
    def min_cell(self) -> tuple[int, ...]:
        """The first cell (C order) of the smallest finite score (:func:`best_cell`); a
        search always has one (it raises when every fit of its grid failed)."""
        cell = best_cell(self.score)
        if cell is None:
            raise ValueError("the tuning table has no finite score")
        return cell

    @property
    def best_params(self) -> dict[str, Any]:
        """Axis name -> chosen value."""
        return Grid(self.axes).params(self.best)

    @property
    def best_score(self) -> float:
        return float(self.score[self.best])

    def values(self, name: str) -> np.ndarray:
        """The candidate values of axis ``name`` as floats; shape (len,)."""
        return np.asarray(self.axes[name], dtype=float)

    def rows(self) -> list[dict[str, Any]]:
        """The table as one dict per cell: axis values, the score (and ``error``)."""
        grid = Grid(self.axes)
        out = []
        for idx in np.ndindex(*grid.shape):
            row = grid.params(idx)
            row[self.score_name] = float(self.score[idx])
            if self.error is not None:
                row["error"] = float(self.error[idx])
            out.append(row)
        return out

    # -- the names of a ladder's lambda x sigma table --------------------------------------
    @property
    def lambdas(self) -> np.ndarray:
        """Lambda axis; shape (L,)."""
        return self.values("lambda")

    @property
    def sigmas(self) -> np.ndarray:
        """RBF width axis (a single NaN for kernels without one); shape (S,)."""
        return self.values("sigma")

    @property
    def egkl(self) -> np.ndarray:
        """``score`` (named for the ladders' default EGKL score)."""
        return self.score

    @property
    def best_lambda(self) -> float:
        return float(self.best_params["lambda"])

    @property
    def best_sigma(self) -> float:
        value = self.best_params["sigma"]
        return float("nan") if value is None else float(value)


def grid_edges(axes: Mapping[str, AxisValues], best: tuple[int, ...]) -> dict[str, str]:
    """Axes on which cell ``best`` sits at an end of the grid (see :attr:`TuningResult.edge`)."""
    edge: dict[str, str] = {}
    for (name, values), i in zip(axes.items(), best, strict=True):
        if len(values) < 2:
            continue
        if isinstance(values, np.ndarray):
            finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values
            if finite.size < 2:
                continue
            if values[i] == finite.min():
                edge[name] = "min"
            elif values[i] == finite.max():
                edge[name] = "max"
        elif i == 0:
            edge[name] = "first"
        elif i == len(values) - 1:
            edge[name] = "last"
    return edge


def best_cell(score: np.ndarray, tol: float = 0.0) -> tuple[int, ...] | None:
    """First cell in C order with a finite score at most the smallest plus ``tol``."""
    finite = np.isfinite(score)
    if not finite.any():
        return None
    flat = np.where(finite, score, np.inf).ravel()
    first = int(np.flatnonzero(flat <= flat.min() + tol)[0])
    return tuple(int(i) for i in np.unravel_index(first, score.shape))


def one_se_cell(
    score: np.ndarray,
    se: np.ndarray,
    rank: Callable[[tuple[int, ...]], Any],
    multiple: float = 1.0,
) -> tuple[int, ...] | None:
    """The cell ``rank`` puts first among those scoring at most the smallest plus
    ``multiple`` times its standard error ``se`` (same shape as ``score``; a NaN error
    counts as zero)."""
    best = best_cell(score)
    if best is None:
        return None
    bound = score[best] + (0.0 if np.isnan(se[best]) else multiple * se[best])
    close = [
        tuple(int(i) for i in idx)
        for idx in np.ndindex(*score.shape)
        if np.isfinite(score[idx]) and score[idx] <= bound
    ]
    return min(close, key=rank)


def standard_error(terms: np.ndarray, loss: float, weight: float) -> float:
    """Standard error of the mean score ``loss / weight`` of a cell with per-row ``terms``
    (each term rescaled so that the plain mean of the rescaled terms is the score)."""
    if terms.size < 2 or not weight > 0:
        return float("nan")
    scaled = terms * (terms.size / weight)
    return float(scaled.std(ddof=1) / np.sqrt(terms.size))
