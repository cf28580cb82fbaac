"""What the views of the desktop app draw: the data classes of a finished run.

The worker computes them (:mod:`wsvmgui.app.analysis`, :mod:`wsvmgui.app.boundaries`,
:mod:`wsvmgui.app.capabilities`); the GUI thread only copies their arrays into plot items.
:class:`RunResult` is a finished run, :class:`PlaneData` one plane of the boundary view,
:class:`LiveBoundary` and :class:`RunStatus` what a run publishes while it fits, and
:class:`Baselines` the common estimators measured beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..estimators.report import ProbabilityReport
from ..ladder.rules import signs_are_monotone
from .calibration import CalibrationEntry
from .datasets import DataSplit
from .path_view import PathInfo
from .settings import RunSettings
from .tuning_view import TuningSurface


@dataclass(frozen=True)
class LadderInfo:
    """The sign ladder of one binary (sub-)problem at every data row.

    Attributes
    ----------
    description : str
        E.g. ``"+1 vs -1"`` or ``"1 vs 2"``.
    weights : ndarray, shape (M - 1,)
    signs : ndarray of bool, shape (n, M - 1)
        ``f_pi(x) > 0`` at each data row.
    lo, hi : ndarray, shape (n,)
        Bracket of the ladder's own probability at each row, on the pi axis of the
        signs (before any recalibration).
    values : ndarray, shape (n, M - 1), or None
        ``f_pi(x)`` at each data row and weight (the decision values behind the signs).
    calibrated : ndarray, shape (n,), or None
        The sub-problem's probability as reported, through the fit's recalibration map
        ``calibration``; None when the fit has none (the ladder's reading is reported).
    calibration : callable or None
        The recalibration map (non-decreasing, probabilities to probabilities): the
        weight pi of a boundary ``{f_pi = 0}`` reads as the probability ``calibration(pi)``.
    """

    description: str
    weights: np.ndarray
    signs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    values: np.ndarray | None = None
    calibrated: np.ndarray | None = None
    calibration: Any = None

    @property
    def nonmonotone(self) -> np.ndarray:
        """Rows whose signs are not monotone in pi (boundaries cross there); int array."""
        return np.flatnonzero(~signs_are_monotone(self.signs))


@dataclass(frozen=True)
class SimplexInfo:
    """The joint simplex scheme's grid predictions at every data row.

    Attributes
    ----------
    grid : ndarray, shape (G, K)
        Class weights on the simplex.
    predictions : ndarray of int, shape (n, G)
        Class index predicted at each grid weight.
    border : ndarray, shape (n, K), or None
        Estimated border weight of each row.
    """

    grid: np.ndarray
    predictions: np.ndarray
    border: np.ndarray | None


@dataclass(frozen=True)
class BoundaryLayer:
    """Boundaries of one fitted estimator in a plane.

    Attributes
    ----------
    title : str
    subproblems : list of str
        One name per binary sub-problem (a single entry for a binary ladder; the
        classes' pairwise borders for estimators without ladders).
    weights : list of ndarray
        Per sub-problem the weights, shape (M - 1,); NaN for class borders.
    segments : list of list of ndarray
        Per sub-problem, per weight: segments of ``{f_pi = 0}``, shape (s, 2, 2).
    crossing_share : list of float
        Per sub-problem: share of the plane's grid nodes whose signs are not monotone.
    crossing_rows : list of ndarray
        Per sub-problem: data rows whose signs are not monotone (int arrays).
    crossings : list of ndarray
        Per sub-problem: points of the plane where two of its boundaries cross inside the
        training hull's cut by the plane, shape (c, 2).
    crossings_outside : list of ndarray
        Per sub-problem: crossing points outside that cut, shape (c', 2).
    crossing_pairs : list of ndarray
        Per sub-problem: the boundaries ``(j, k)`` (indices into its weights, ``j < k``)
        that cross inside the cut, shape (P, 2) of int.

    Crossings are the places where a cell corner of the plane's grid witnesses them (the
    smaller weight's boundary says "not above" where the larger one's says "above":
    :func:`wsvmgui.app.contours.contour_crossings`), one mark per grid cell.
    """

    title: str
    subproblems: list[str]
    weights: list[np.ndarray]
    segments: list[list[np.ndarray]]
    crossing_share: list[float]
    crossing_rows: list[np.ndarray]
    crossings: list[np.ndarray] = field(default_factory=list)
    crossings_outside: list[np.ndarray] = field(default_factory=list)
    crossing_pairs: list[np.ndarray] = field(default_factory=list)


@dataclass(frozen=True)
class PlaneData:
    """Everything the boundary view draws for one plane.

    Attributes
    ----------
    ix, iy : int
        Feature indices on the horizontal and vertical axes.
    xs, ys : ndarray, shapes (G,) and (G,)
        Grid coordinates in raw feature units.
    image : ndarray, shape (G, G, 3), uint8
        The p_hat surface (:func:`surface_colors`), row index = y.
    layers : list of BoundaryLayer
        The main estimator first, then the comparison estimator if any.
    hull : ndarray, shape (h + 1, 2)
        Closed outline of the training hull's cut by the plane (raw units; empty when the
        plane misses the hull): crossing points are counted inside it.
    reference : ndarray, shape (p,)
        The point the plane passes through (raw units): the other features' values.
    near : ndarray, shape (n,)
        How near each data row is to the plane, in (0, 1] (all 1 with two features).
    comparison_image : ndarray, shape (G, G, 3), uint8, or None
        The comparison estimator's own p_hat surface (drawn under its boundaries); None
        without a comparison.
    """

    ix: int
    iy: int
    xs: np.ndarray
    ys: np.ndarray
    image: np.ndarray
    layers: list[BoundaryLayer]
    hull: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))
    reference: np.ndarray = field(default_factory=lambda: np.empty(0))
    near: np.ndarray = field(default_factory=lambda: np.empty(0))
    comparison_image: np.ndarray | None = None

    @property
    def is_slice(self) -> bool:
        """The data have more than two features: the plane is a slice."""
        return self.reference.size > 2


@dataclass(frozen=True)
class LiveBoundary:
    """One weighted fit's boundary, published while a run is still fitting."""

    weight: float
    segments: np.ndarray
    done: int
    total: int


@dataclass(frozen=True)
class RunStatus:
    """Where a run is, published while it runs (at most every
    :data:`wsvmgui.app.analysis.STATUS_INTERVAL` seconds).

    Attributes
    ----------
    phase : str
        Name of the current phase ("fit", "comparison fit", "views", ...).
    done, total : int
        Fits of the current phase.
    fraction : float
        Share of the whole run done, weighted by the phases' estimated time.
    """

    phase: str
    done: int
    total: int
    fraction: float


@dataclass
class RunResult:
    """A finished run: the estimator and everything the views show.

    Attributes
    ----------
    settings : RunSettings
    split : DataSplit
    estimator : fitted estimator
    report : ProbabilityReport
        For every data row (n rows), classes in data set order.
    metrics : dict
        Part name -> measure -> value.
    ladders : list of LadderInfo
    simplex : SimplexInfo or None
    tunings : list of TuningSurface
        Every tuning table the estimator keeps (:mod:`wsvmgui.app.tuning_view`).
    plane : PlaneData
    comparison : fitted estimator or None
        The non-crossing fit shown beside a binary ladder.
    notes : list of str
        Things the user should know (comparison unavailable, ...).
    seconds : float
    comparison_metrics : dict
        Part name -> measure -> value of the comparison fit (empty without one).
    comparison_report : ProbabilityReport or None
    calibration : list of CalibrationEntry
        The scheme's (and the comparison's) calibration on :attr:`calibration_part`.
    calibration_part : str
        "test", or "train" when there is no test part.
    crossing_checks : dict
        Layer title -> space ("input", "feature") -> summary of
        :class:`wsvmgui.ladder.crossing.CrossingReport` over the whole training hull
        (binary ladders only).
    fit_rows : ndarray of int
        Data rows the estimator was fitted on (training, plus tuning rows it split itself).
    paths : list of PathInfo or None
        The exact solution path in pi behind each binary ladder, in the order of
        :attr:`ladders` (:mod:`wsvmgui.app.path_view`): kept by the fit (path engine) or,
        for a binary ladder fitted on the grid, traced after it; None where there is none.
    """

    settings: RunSettings
    split: DataSplit
    estimator: Any
    report: ProbabilityReport
    metrics: dict[str, dict[str, float]]
    ladders: list[LadderInfo]
    simplex: SimplexInfo | None
    tunings: list[TuningSurface]
    plane: PlaneData
    comparison: Any = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    comparison_metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    comparison_report: ProbabilityReport | None = None
    calibration: list[CalibrationEntry] = field(default_factory=list)
    calibration_part: str = "test"
    crossing_checks: dict[str, dict[str, dict]] = field(default_factory=dict)
    fit_rows: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))
    paths: list[PathInfo | None] = field(default_factory=list)

    @property
    def path(self) -> PathInfo | None:
        """The exact path of a single binary ladder (None otherwise)."""
        return self.paths[0] if len(self.paths) == 1 else None


@dataclass(frozen=True)
class Baselines:
    """Common probability estimators fitted on the same split, measured on one part.

    Attributes
    ----------
    part : str
        "test", or "train" without a test part.
    metrics : dict
        Baseline name -> measure -> value.
    calibration : list of CalibrationEntry
    """

    part: str
    metrics: dict[str, dict[str, float]]
    calibration: list[CalibrationEntry]
