"""The work behind a run of the desktop app, as plain functions (numpy, no Qt).

The worker thread calls :func:`run_analysis` (fit through
:func:`wsvmgui.app.schemes.fit_scheme`, then everything the views draw: reports,
metrics, sign ladders, the decision values on a plane grid and their zero contours) and
:func:`compute_plane` when the user picks another plane.  The GUI thread only copies the
arrays into existing plot items.

What an estimator shows beyond its probabilities comes from its view capabilities
(:mod:`wsvmgui.estimators.views`), so a scheme without one simply shows less:

* :class:`LadderViews`: one binary ladder (boundaries, sign ladder, bracket);
* :class:`SubproblemViews`: the ladders of divide and conquer, one per sub-problem;
* :class:`SimplexViews`: the joint simplex scheme's grid predictions.

With more than two features the plane is a slice through a reference point
(:mod:`wsvmgui.app.slices`); crossings are counted inside the training hull's cut by the
plane, and for a binary ladder also over the whole hull, in the input space and in the
hull of the kernel rows where Wu & Liu's guarantee holds
(:func:`wsvmgui.ladder.crossing.crossing_diagnostics`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import Cancelled, InputError
from ..estimators.report import ProbabilityReport
from ..estimators.views import LadderViews, SimplexViews, SubproblemViews
from ..evaluation.metrics import label_metrics, truth_metrics
from ..ladder.rules import signs_are_monotone
from .calibration import CalibrationEntry, calibration_entry
from .contours import contour_crossings, zero_contour
from .cost import CONFIRM_SECONDS, CostEstimate, Phase, PhasedProgress, estimate_cost
from .datasets import DataSplit
from .path_view import PathInfo, exact_path, stored_paths
from .schemes import SCHEMES, fit_scheme
from .settings import RunSettings
from .slices import closeness, slice_hull
from .tuning_view import TuningSurface, tuning_surfaces

#: Class colours (RGB, 0-255) in class order; cycled for more classes.
CLASS_COLORS = np.array(
    [
        (31, 119, 180),
        (214, 39, 40),
        (44, 160, 44),
        (255, 127, 14),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ],
    dtype=float,
)
DEFAULT_GRID = 80
#: Smallest interval between two live boundaries (seconds): with many fast fits, the
#: boundaries in between are skipped live and drawn when the run finishes.
LIVE_INTERVAL = 0.05

Publish = Callable[[Any], None]


def class_colors(K: int) -> np.ndarray:
    """RGB colours of ``K`` classes; shape (K, 3), values 0-255."""
    return CLASS_COLORS[np.arange(K) % len(CLASS_COLORS)]


# ----------------------------------------------------------------------------- results
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
        Bracket of the sub-problem's probability at each row.
    values : ndarray, shape (n, M - 1), or None
        ``f_pi(x)`` at each data row and weight (the decision values behind the signs).
    """

    description: str
    weights: np.ndarray
    signs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    values: np.ndarray | None = None

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
    """

    title: str
    subproblems: list[str]
    weights: list[np.ndarray]
    segments: list[list[np.ndarray]]
    crossing_share: list[float]
    crossing_rows: list[np.ndarray]
    crossings: list[np.ndarray] = field(default_factory=list)
    crossings_outside: list[np.ndarray] = field(default_factory=list)


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
    """Where a run is, published while it runs (at most every :data:`STATUS_INTERVAL`).

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


STATUS_INTERVAL = 0.1


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


# ------------------------------------------------------------------------------ helpers
def engine_notes(info: dict[str, Any] | None) -> list[str]:
    """What the user should know about the ladder engines of a fit (``fit_info_``).

    Paths that broke down (the grid ladder answered, with a warning in the log), for the
    ``"auto"`` engine the ladders it gave to the grid, and a screened tuning search;
    nothing when every ladder ran on the engine asked for and tuning was not screened.
    """
    info = info or {}
    counts = {**info.get("tuning_engines", {})}
    for k, v in info.get("final_engines", {}).items():
        counts[k] = counts.get(k, 0) + v
    total = sum(counts.values())
    notes = []
    if info.get("path_fallbacks"):
        notes.append(
            f"Weight path broke down for {info['path_fallbacks']} of {total} ladders; the "
            "grid ladder answered for them (reasons in the log)."
        )
    if info.get("auto_grid"):
        notes.append(
            f"Engine auto: the grid ladder for {info['auto_grid']} of {total} ladders "
            "(large elbows), the exact path for the rest."
        )
    if info.get("tuning_screened"):
        notes.append(
            "Tuning screened: every (\u03bb, \u03c3) cell on a third of the training rows, "
            "the 6 best on all of them (turn off 'screened tuning' or pass --no-screen for "
            "the full search)."
        )
    return notes


def aligned_proba(report: ProbabilityReport, classes: np.ndarray) -> np.ndarray:
    """The report's probabilities with columns in the order of ``classes`` (K,); (n, K)."""
    out = np.zeros((report.proba.shape[0], len(classes)))
    rep = list(report.classes)
    for k, c in enumerate(classes):
        if c in rep:
            out[:, k] = report.proba[:, rep.index(c)]
    return out


def aligned_report(report: ProbabilityReport, classes: np.ndarray) -> ProbabilityReport:
    """The report with probability columns in the order of ``classes``."""
    return ProbabilityReport(
        np.asarray(classes), aligned_proba(report, classes), report.label, dict(report.extra)
    )


def part_metrics(split: DataSplit, proba_all: np.ndarray) -> dict[str, dict[str, float]]:
    """Measures for each non-empty part: truth metrics when known, then label metrics.

    Parameters
    ----------
    split : DataSplit
    proba_all : ndarray, shape (n, K)
        Probabilities of every data row, columns in ``split.dataset.classes`` order.
    """
    classes = split.dataset.classes
    out: dict[str, dict[str, float]] = {}
    for name, part in split.parts.items():
        if part.size == 0:
            continue
        p = proba_all[part.index]
        values: dict[str, float] = {}
        if part.p_true is not None:
            values.update(truth_metrics(p, part.p_true))
        values.update(label_metrics(p, part.y, classes))
        out[name] = values
    return out


def fit_rows(settings: RunSettings, split: DataSplit) -> np.ndarray:
    """Data rows a run gives the estimator to fit (training, plus tuning unless tune-set)."""
    if settings.tuning == "tune-set" or split.tune.size == 0:
        return split.train.index
    return np.concatenate([split.train.index, split.tune.index])


def fit_inputs(settings: RunSettings, split: DataSplit):
    """``X, y, X_tune, y_tune`` that a run passes to :func:`fit_scheme` (model inputs).

    Raises
    ------
    InputError
        Tuning mode "tune-set" without a tuning part.
    """
    X_tune = split.tune.X if split.tune.size else None
    y_tune = split.tune.y if split.tune.size else None
    if settings.tuning == "tune-set":
        if X_tune is None:
            raise InputError(
                "tuning mode 'tune-set' needs a tuning part: set a tuning fraction > 0"
            )
        return split.train.X, split.train.y, X_tune, y_tune
    if X_tune is None:
        return split.train.X, split.train.y, None, None
    # The estimator makes its own tuning split: give it the tuning rows too.
    return (
        np.vstack([split.train.X, X_tune]),
        np.concatenate([split.train.y, y_tune]),
        None,
        None,
    )


def default_reference(split: DataSplit) -> np.ndarray:
    """The feature means of the data set (raw units); shape (p,)."""
    return split.dataset.X.mean(axis=0)


def plane_grid(
    split: DataSplit,
    ix: int,
    iy: int,
    size: int = DEFAULT_GRID,
    reference: np.ndarray | None = None,
):
    """A grid over features ``ix`` and ``iy``, the other features at ``reference``.

    Parameters
    ----------
    split : DataSplit
    ix, iy : int
    size : int
    reference : ndarray, shape (p,), optional
        Raw values of the other features (default: their means).

    Returns
    -------
    xs, ys : ndarray, shape (size,)
        Raw coordinates.
    X_model : ndarray, shape (size * size, p)
        Model inputs, row ``i * size + j`` at ``(xs[j], ys[i])``.
    """
    X = split.dataset.X
    p = X.shape[1]
    if not (0 <= ix < p and 0 <= iy < p):
        raise InputError(f"plane features must lie in 0..{p - 1}, got {ix} and {iy}")
    ref = default_reference(split) if reference is None else np.asarray(reference, float)
    if ref.shape != (p,) or not np.all(np.isfinite(ref)):
        raise InputError(f"the slice needs {p} finite feature values")

    def span(col: np.ndarray) -> np.ndarray:
        lo, hi = float(col.min()), float(col.max())
        pad = 0.05 * (hi - lo) if hi > lo else 1.0
        return np.linspace(lo - pad, hi + pad, size)

    xs, ys = span(X[:, ix]), span(X[:, iy])
    raw = np.tile(ref, (size * size, 1))
    gx, gy = np.meshgrid(xs, ys)
    raw[:, ix] = gx.ravel()
    raw[:, iy] = gy.ravel()
    return xs, ys, split.transform(raw)


#: Strength of the class colour in the p_hat surface at p_hat = 1 (0 = white).
SURFACE_STRENGTH = 0.55


def surface_colors(proba: np.ndarray) -> np.ndarray:
    """Opaque RGB (m, 3) uint8 of probabilities (m, K): the most probable class's colour,
    mixed with white by its margin over 1/K (white where the classes are tied)."""
    K = proba.shape[1]
    colors = class_colors(K)
    top = np.argmax(proba, axis=1)
    strength = np.clip((proba.max(axis=1) - 1.0 / K) / (1.0 - 1.0 / K), 0.0, 1.0)
    s = (SURFACE_STRENGTH * strength)[:, None]
    rgb = 255.0 * (1.0 - s) + colors[top] * s
    return np.clip(np.round(rgb), 0, 255).astype(np.uint8)


def surface_stops(K: int) -> tuple[np.ndarray, np.ndarray]:
    """Colour-bar stops of :func:`surface_colors`: positions (s,) and RGB (s, 3) 0-255.

    Two classes: over ``p_hat`` of the second class, 0 to 1 (exact: the surface is linear
    between the stops).  More classes: over the largest ``p_hat``, 1/K to 1, in grey
    (the hue is the class's).
    """
    if K == 2:
        p = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
        return np.array([0.0, 0.5, 1.0]), surface_colors(p).astype(float)
    grey = 255.0 * (1 - SURFACE_STRENGTH) + 90.0 * SURFACE_STRENGTH
    return np.array([1.0 / K, 1.0]), np.array([[255.0] * 3, [grey] * 3])


def inside_polygon(points: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Whether each point (c, 2) lies in the convex polygon ``ring`` (closed, (h + 1, 2))."""
    if ring.shape[0] < 4:
        return np.zeros(points.shape[0], dtype=bool)
    a, b = ring[:-1], ring[1:]
    cross = (b[:, 0] - a[:, 0])[None, :] * (points[:, 1, None] - a[:, 1][None, :]) - (
        b[:, 1] - a[:, 1]
    )[None, :] * (points[:, 0, None] - a[:, 0][None, :])
    return np.all(cross >= -1e-12, axis=1) | np.all(cross <= 1e-12, axis=1)


def _split_by_hull(points: np.ndarray, ring: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Crossing points (c, 2) inside and outside the training hull's cut ``ring``.

    With more than two features the cut is traced by support directions
    (:func:`wsvmgui.app.slices.slice_hull`): a polygon inscribed in the exact cut, whose
    edges lie within a fraction of a percent of it.
    """
    if points.size == 0:
        return points, points
    inside = inside_polygon(points, ring) if ring.size else np.zeros(len(points), dtype=bool)
    return points[inside], points[~inside]


def _ladder_layer(
    title: str,
    names: list[str],
    weights: list[np.ndarray],
    decisions: list[np.ndarray],
    xs: np.ndarray,
    ys: np.ndarray,
    crossing_rows: list[np.ndarray],
    should_cancel: Callable[[], bool],
    hull_split: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> BoundaryLayer:
    size = xs.size
    segs, shares, inside, outside = [], [], [], []
    for D in decisions:  # (size*size, M-1)
        if should_cancel():
            raise Cancelled("cancelled by the user")
        segs.append([zero_contour(xs, ys, D[:, m].reshape(size, size)) for m in range(D.shape[1])])
        shares.append(float(np.mean(~signs_are_monotone(D > 0))))
        a, b = hull_split(contour_crossings(xs, ys, D))
        inside.append(a)
        outside.append(b)
    return BoundaryLayer(title, names, weights, segs, shares, crossing_rows, inside, outside)


def _class_border_layer(title: str, estimator: Any, X_grid: np.ndarray, xs, ys) -> BoundaryLayer:
    """Borders between the predicted classes: ``{p_k - max_{j != k} p_j = 0}`` per class."""
    size = xs.size
    proba = estimator.predict_proba(X_grid)
    segs = []
    for k in range(proba.shape[1]):
        others = np.delete(proba, k, axis=1).max(axis=1)
        segs.append(zero_contour(xs, ys, (proba[:, k] - others).reshape(size, size)))
    names = ["class borders"]
    return BoundaryLayer(
        title,
        names,
        [np.full(len(segs), np.nan)],
        [segs],
        [0.0],
        [np.empty(0, dtype=int)],
        [np.empty((0, 2))],
        [np.empty((0, 2))],
    )


def scheme_label(name: str) -> str:
    scheme = SCHEMES.get(name)
    return scheme.label if scheme is not None else name


def boundary_layer(
    estimator: Any,
    title: str,
    X_grid: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    ladders: list[LadderInfo],
    should_cancel: Callable[[], bool],
    hull_split: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
) -> BoundaryLayer:
    """The boundaries of ``estimator`` on a plane grid (computed here, drawn by the GUI).

    ``hull_split(points (c, 2)) -> (inside, outside)`` sorts crossing points by the training
    hull (default: all inside).
    """
    split_fn = hull_split or (lambda pts: (pts, pts[:0]))
    rows = [lad.nonmonotone for lad in ladders]
    if isinstance(estimator, SubproblemViews):
        return _ladder_layer(
            title,
            [lad.description for lad in ladders],
            [lad.weights for lad in ladders],
            estimator.subproblem_decisions(X_grid),
            xs,
            ys,
            rows,
            should_cancel,
            split_fn,
        )
    if isinstance(estimator, LadderViews):
        D = estimator.ladder_decision(X_grid)
        name = ladders[0].description if ladders else ""
        return _ladder_layer(
            title,
            [name],
            [np.asarray(estimator.weights_)],
            [D],
            xs,
            ys,
            rows[:1] or [np.empty(0, dtype=int)],
            should_cancel,
            split_fn,
        )
    return _class_border_layer(title, estimator, X_grid, xs, ys)


def ladders_of(estimator: Any, X: np.ndarray, classes: np.ndarray) -> list[LadderInfo]:
    """The sign ladders of every binary sub-problem at ``X`` (n, p); [] if none."""
    if isinstance(estimator, SubproblemViews):
        values = estimator.subproblem_decisions(X)
        return [
            LadderInfo(
                str(view.label),
                np.asarray(view.weights),
                np.asarray(view.signs, bool),
                np.asarray(view.lo, float),
                np.asarray(view.hi, float),
                np.asarray(f, float),
            )
            for view, f in zip(estimator.subproblem_ladders(X), values, strict=True)
        ]
    if isinstance(estimator, LadderViews):
        est = estimator.estimate(X)
        est_classes = estimator.classes_
        values = np.asarray(estimator.ladder_decision(X), float)
        return [
            LadderInfo(
                f"{est_classes[1]} vs {est_classes[0]}",
                np.asarray(estimator.weights_),
                values > 0,
                np.asarray(est.lo, float),
                np.asarray(est.hi, float),
                values,
            )
        ]
    return []


def simplex_of(estimator: Any, X: np.ndarray) -> SimplexInfo | None:
    """The joint simplex scheme's grid predictions at ``X``; None for other estimators."""
    if not isinstance(estimator, SimplexViews):
        return None
    return SimplexInfo(
        np.asarray(estimator.grid_, float),
        np.asarray(estimator.grid_predictions(X), int),
        np.asarray(estimator.border_weights(X), float),
    )


def comparison_scheme(settings: RunSettings, n_classes: int) -> tuple[str | None, str]:
    """The non-crossing scheme to show beside a binary ladder, or None with the reason."""
    if n_classes != 2:
        return None, "the non-crossing comparison is for two-class problems"
    names = [n for n in SCHEMES if "cross" in n.replace("-", "").replace("_", "")]
    if not names:
        return None, "no non-crossing scheme in this build"
    if settings.scheme in names:
        return None, "the run already uses the non-crossing scheme"
    ok, why = SCHEMES[names[0]].availability()
    if not ok:
        return None, f"non-crossing scheme {why}"
    return names[0], ""


def compute_plane(
    result_like: Any,
    ix: int,
    iy: int,
    size: int = DEFAULT_GRID,
    should_cancel: Callable[[], bool] | None = None,
    reference: np.ndarray | None = None,
) -> PlaneData:
    """Decision values, contours and the p_hat surface on the plane of features ix, iy.

    ``result_like`` needs ``split``, ``settings``, ``estimator``, ``ladders``,
    ``comparison`` and ``fit_rows`` attributes (a :class:`RunResult`).  With more than
    two features the plane passes through ``reference`` (raw units, default the means).
    """
    cancel = should_cancel or (lambda: False)
    split = result_like.split
    ref = default_reference(split) if reference is None else np.asarray(reference, float)
    xs, ys, X_grid = plane_grid(split, ix, iy, size, ref)
    est = result_like.estimator
    proba = aligned_proba(est.report(X_grid), split.dataset.classes)
    image = surface_colors(proba).reshape(size, size, 3)
    rows = getattr(result_like, "fit_rows", None)
    rows = split.train.index if rows is None or np.size(rows) == 0 else rows
    X_hull = split.dataset.X[rows]
    p = X_hull.shape[1]
    if cancel():
        raise Cancelled("cancelled by the user")
    hull = slice_hull(X_hull, ref, ix, iy) if p > 1 and ix != iy else np.empty((0, 2))
    near = closeness(split.dataset.X, ref, ix, iy) if ix != iy else np.ones(len(split.dataset.X))

    def hull_split(points):
        return _split_by_hull(points, hull)

    layers = [
        boundary_layer(
            est,
            scheme_label(result_like.settings.scheme),
            X_grid,
            xs,
            ys,
            result_like.ladders,
            cancel,
            hull_split,
        )
    ]
    comp = result_like.comparison
    if comp is not None:
        comp_ladders = ladders_of(comp, split.X_all, split.dataset.classes)
        layers.append(
            boundary_layer(
                comp, "Non-crossing ladder", X_grid, xs, ys, comp_ladders, cancel, hull_split
            )
        )
    return PlaneData(ix, iy, xs, ys, image, layers, hull, ref, near)


def crossing_checks(estimator: Any, X_fit: np.ndarray) -> dict[str, dict]:
    """Crossings of a binary ladder over the whole training hull, in both spaces.

    Returns
    -------
    dict
        ``"input"`` and ``"feature"`` -> :meth:`CrossingReport.summary` (empty for an
        estimator without :class:`LadderViews`).
    """
    if not isinstance(estimator, LadderViews):
        return {}
    from ..ladder.crossing import crossing_diagnostics

    out = {}
    for space in ("input", "feature"):
        try:
            rep = crossing_diagnostics(estimator, X_fit, space=space, n_samples=5000, seed=0)
        except (InputError, ValueError, AttributeError):
            continue
        out[space] = rep.summary()
    return out


# -------------------------------------------------------------------------------- runs
@dataclass(frozen=True)
class RunRequest:
    """What the GUI asks the worker to do.

    Attributes
    ----------
    settings : RunSettings
    split : DataSplit
    ix, iy : int
        Plane of the boundary view.
    grid_size : int
    compare : bool
        Also fit the non-crossing scheme (two-class data) for the side-by-side view.
    reference : ndarray, shape (p,), optional
        The point the plane passes through (raw units; default: the means).
    cost : CostEstimate, optional
        The run's estimated phases: progress is weighted by their time.
    """

    settings: RunSettings
    split: DataSplit
    ix: int = 0
    iy: int = 1
    grid_size: int = DEFAULT_GRID
    compare: bool = False
    reference: np.ndarray | None = None
    cost: CostEstimate | None = None


def _plan(request: RunRequest) -> list[Phase]:
    if request.cost is not None:
        return list(request.cost.phases)
    plan = [Phase("fit", 0, 1.0)]
    if request.compare:
        plan.append(Phase("comparison fit", 0, 1.0, group="comparison"))
    if request.settings.scheme == "binary" and request.settings.engine != "path":
        # traced after a grid fit (see run_analysis); a path-engine fit keeps its own
        plan.append(Phase("exact path", 0, 0.5, group="path"))
    return [*plan, Phase("views", 0, 0.2, group="views")]


def run_analysis(
    request: RunRequest,
    progress: Callable[[int, int, Any], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    publish: Publish | None = None,
) -> RunResult:
    """Fit the scheme (and the comparison) and prepare every view's data.

    Parameters
    ----------
    request : RunRequest
    progress : callable, optional
        ``progress(done, total, None)`` in thousandths of the whole run: every phase
        (fit stages, comparison fit, views) weighted by its estimated time.
    should_cancel : callable, optional
    publish : callable, optional
        Receives live objects while fitting: :class:`LiveBoundary` (binary fits of the
        final stage) and :class:`RunStatus` (phase and its fits).

    Returns
    -------
    RunResult
    """
    start = time.perf_counter()
    cancel = should_cancel or (lambda: False)
    settings = request.settings.validate()
    split = request.split
    ds = split.dataset
    classes = ds.classes
    X_fit, y_fit, X_tune, y_tune = fit_inputs(settings, split)
    grid = None
    if publish is not None and ds.X.shape[1] >= 1:
        grid = plane_grid(split, request.ix, request.iy, request.grid_size, request.reference)

    phased = PhasedProgress(_plan(request))
    last_live = [-np.inf]
    last_status = [-np.inf]

    def report(done: int, total: int) -> None:
        fraction = phased.update(done, total)
        if progress is not None:
            progress(int(round(1000 * fraction)), 1000, None)
        now = time.perf_counter()
        if publish is not None and (now - last_status[0] >= STATUS_INTERVAL or done >= total):
            last_status[0] = now
            publish(RunStatus(phased.name, int(done), int(total), fraction))

    def on_progress(done: int, total: int, partial: Any = None) -> None:
        report(done, total)
        now = time.perf_counter()
        if publish is None or now - last_live[0] < LIVE_INTERVAL:
            return
        live = _live_boundary(partial, grid, done, total)
        if live is not None:
            last_live[0] = now
            publish(live)

    fitted = request.cost.fitted if request.cost is not None else {}
    if "main" in fitted:
        estimator = fitted["main"]  # the cost probe fitted it completely
    else:
        estimator = fit_scheme(
            settings, X_fit, y_fit, X_tune, y_tune, progress=on_progress, should_cancel=cancel
        )
    notes: list[str] = engine_notes(getattr(estimator, "fit_info_", None))
    comparison = None
    if request.compare:
        name, why = comparison_scheme(settings, ds.n_classes)
        if name is None:
            notes.append(f"Side-by-side comparison not shown: {why}.")
        else:
            phased.begin("comparison")

            def on_comparison(done: int, total: int, _partial: Any = None) -> None:
                report(done, total)

            comparison = fitted.get("comparison") or fit_scheme(
                replace(settings, scheme=name, options={}),
                X_fit,
                y_fit,
                X_tune,
                y_tune,
                progress=on_comparison,
                should_cancel=cancel,
            )
    paths = stored_paths(estimator)
    if settings.scheme == "binary" and not any(paths):
        # a ladder fitted on the grid: trace its exact path now (the plain weighted SVM's;
        # the non-crossing ladder's constrained fits have no such path)
        phased.begin("path")

        def on_path(done: int, total: int, _partial: Any = None) -> None:
            report(done, total)

        path_info, why = exact_path(estimator, X_fit, y_fit, on_path, cancel)
        paths = [path_info]
        if why:
            notes.append(f"Exact path in \u03c0 not traced: {why}.")
    if cancel():
        raise Cancelled("cancelled by the user")
    phased.begin("views")
    report(0, 4)
    X_all = split.X_all
    report_all = aligned_report(estimator.report(X_all), classes)
    metrics = part_metrics(split, report_all.proba)
    ladders = ladders_of(estimator, X_all, classes)
    simplex = simplex_of(estimator, X_all)
    result = RunResult(
        settings,
        split,
        estimator,
        report_all,
        metrics,
        ladders,
        simplex,
        tuning_surfaces(estimator),
        None,  # type: ignore[arg-type]
        comparison,
        notes,
        fit_rows=fit_rows(settings, split),
        paths=paths,
    )
    target = split.test if split.test.size else split.train
    result.calibration_part = target.name
    result.calibration.append(
        calibration_entry(
            scheme_label(settings.scheme), report_all.proba[target.index], target.y, classes
        )
    )
    report(1, 4)
    if comparison is not None:
        comp_report = aligned_report(comparison.report(X_all), classes)
        result.comparison_report = comp_report
        result.comparison_metrics = part_metrics(split, comp_report.proba)
        result.calibration.append(
            calibration_entry(
                "Non-crossing ladder", comp_report.proba[target.index], target.y, classes
            )
        )
    for title, est in (
        (scheme_label(settings.scheme), estimator),
        ("Non-crossing ladder", comparison),
    ):
        if est is not None:
            checks = crossing_checks(est, X_fit)
            if checks:
                result.crossing_checks[title] = checks
    report(2, 4)
    result.plane = compute_plane(
        result, request.ix, request.iy, request.grid_size, cancel, request.reference
    )
    report(4, 4)
    result.seconds = time.perf_counter() - start
    return result


@dataclass(frozen=True)
class NeedsConfirmation:
    """A run that would take longer than the limit: the estimate, for the user to decide."""

    estimate: CostEstimate


def run_checked(
    request: RunRequest,
    progress: Callable[[int, int, Any], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    publish: Publish | None = None,
    limit: float | None = CONFIRM_SECONDS,
) -> RunResult | NeedsConfirmation:
    """Run ``request`` unless its projected time exceeds ``limit`` seconds.

    The fit starts at once and is timed as it goes
    (:func:`wsvmgui.app.cost.estimate_cost`); as soon as its projected time (plus the
    comparison's, probed first) exceeds ``limit`` it stops and the estimate comes back for
    the user to decide.  A run within the limit is fitted once, drawn live, and finished.
    ``limit=None`` (or a request that carries its estimate) runs whatever it costs.

    Returns
    -------
    RunResult, or NeedsConfirmation with the estimate.
    """
    cancel = should_cancel or (lambda: False)
    if request.cost is None and limit is not None:
        grid = None
        if publish is not None:
            grid = plane_grid(
                request.split, request.ix, request.iy, request.grid_size, request.reference
            )
        phased = PhasedProgress(_plan(request))
        last = [-np.inf, -np.inf]  # live boundary, status

        def on_phase(group: str) -> None:
            if group == "comparison" and publish is not None:
                publish(RunStatus("comparison fit (timing)", 0, 0, 0.0))

        def forward(done: int, total: int, partial: Any = None) -> None:
            fraction = phased.update(done, total)
            if progress is not None:
                progress(int(round(1000 * fraction)), 1000, None)
            if publish is None:
                return
            now = time.perf_counter()
            if now - last[1] >= STATUS_INTERVAL or done >= total:
                last[1] = now
                publish(RunStatus("fit", int(done), int(total), fraction))
            if now - last[0] >= LIVE_INTERVAL:
                live = _live_boundary(partial, grid, done, total)
                if live is not None:
                    last[0] = now
                    publish(live)

        estimate = estimate_cost(
            request, should_cancel=cancel, forward=forward, limit=limit, on_phase=on_phase
        )
        if "main" not in estimate.fitted and estimate.needs_confirmation(limit):
            return NeedsConfirmation(estimate)
        request = replace(request, cost=estimate)
    return run_analysis(request, progress, cancel, publish)


def _live_boundary(partial: Any, grid, done: int, total: int) -> LiveBoundary | None:
    """A live boundary from a progress partial that can evaluate itself, else None.

    A partial qualifies when it is a final-stage fit event
    (:class:`wsvmgui.ladder.grid.FitEvent`: ``stage == "final"``, ``fit.pi`` and
    ``decision(X) -> (m,)`` over model inputs) of a binary problem (empty ``label``).
    Older duck-typed events with ``phase``, ``weight`` and ``decision_function`` work too.
    """
    if grid is None or partial is None:
        return None
    stage = getattr(partial, "stage", getattr(partial, "phase", None))
    if stage != "final" or getattr(partial, "label", ""):
        return None
    fn = getattr(partial, "decision", None) or getattr(partial, "decision_function", None)
    fit = getattr(partial, "fit", None)
    weight = getattr(fit, "pi", getattr(partial, "weight", None))
    if not callable(fn) or weight is None:
        return None
    xs, ys, X_grid = grid
    Z = np.asarray(fn(X_grid), float).reshape(ys.size, xs.size)
    return LiveBoundary(float(weight), zero_contour(xs, ys, Z), done, total)


# ---------------------------------------------------------------------------- baselines
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


def run_baselines(
    split: DataSplit, sigma: float | None = None, should_cancel: Callable[[], bool] | None = None
) -> Baselines:
    """Logistic regression, an SVC with Platt scaling and k nearest neighbours.

    Fitted on training plus tuning rows; measured on the test part (the training part when
    there is no test part).
    """
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC

    cancel = should_cancel or (lambda: False)
    X = np.vstack([split.train.X, split.tune.X])
    y = np.concatenate([split.train.y, split.tune.y])
    target = split.test if split.test.size else split.train
    gamma = 1.0 / sigma**2 if sigma and np.isfinite(sigma) else "scale"
    models = {
        "logistic regression": LogisticRegression(max_iter=2000),
        "SVC + Platt scaling": CalibratedClassifierCV(
            SVC(gamma=gamma),
            method="sigmoid",
            ensemble=False,
            cv=max(2, min(5, int(np.unique(y, return_counts=True)[1].min()))),
        ),
        "k nearest neighbours (k=15)": KNeighborsClassifier(n_neighbors=min(15, len(y))),
    }
    classes = split.dataset.classes
    metrics: dict[str, dict[str, float]] = {}
    entries = []
    for name, model in models.items():
        if cancel():
            raise Cancelled("cancelled by the user")
        model.fit(X, y)
        rep = ProbabilityReport.from_proba(model.classes_, model.predict_proba(target.X))
        p = aligned_proba(rep, classes)
        values: dict[str, float] = {}
        if target.p_true is not None:
            values.update(truth_metrics(p, target.p_true))
        values.update(label_metrics(p, target.y, classes))
        metrics[name] = values
        entries.append(calibration_entry(name, p, target.y, classes))
    return Baselines(target.name, metrics, entries)
