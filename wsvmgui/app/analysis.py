"""The work behind a run of the desktop app, as plain functions (numpy, no Qt).

The worker thread calls :func:`run_analysis` (fit through
:func:`wsvmgui.app.schemes.fit_scheme`, then everything the views draw: reports,
metrics, sign ladders, the decision values on a plane grid and their zero contours) and
:func:`compute_plane` when the user picks another plane.  The GUI thread only copies the
arrays into existing plot items.

Estimator-specific views are found by duck typing, so a scheme that lacks a method simply
shows less:

* ``ladder_decision(X) -> (n, M-1)`` and ``weights_``: binary ladders;
* ``subproblem_ladders(X)`` and ``subproblem_decision(X, index)``: divide and conquer;
* ``grid_``, ``grid_predictions(X)``, ``border_weights(X)``: the joint simplex scheme.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import Cancelled, InputError
from ..estimators.report import ProbabilityReport
from ..evaluation.metrics import label_metrics, truth_metrics
from ..ladder.rules import signs_are_monotone
from .contours import contour_crossings, zero_contour
from .datasets import DataSplit
from .schemes import SCHEMES, fit_scheme
from .settings import RunSettings

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
    """

    description: str
    weights: np.ndarray
    signs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

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
        Per sub-problem: points where two of its boundaries cross, shape (c, 2).
    """

    title: str
    subproblems: list[str]
    weights: list[np.ndarray]
    segments: list[list[np.ndarray]]
    crossing_share: list[float]
    crossing_rows: list[np.ndarray]
    crossings: list[np.ndarray] = field(default_factory=list)


@dataclass(frozen=True)
class PlaneData:
    """Everything the boundary view draws for one plane.

    Attributes
    ----------
    ix, iy : int
        Feature indices on the horizontal and vertical axes.
    xs, ys : ndarray, shapes (G,) and (G,)
        Grid coordinates in raw feature units.
    image : ndarray, shape (G, G, 4), uint8
        p_hat surface as RGBA (class colours mixed by probability), row index = y.
    layers : list of BoundaryLayer
        The main estimator first, then the comparison estimator if any.
    hull : ndarray, shape (h + 1, 2)
        Closed outline of the convex hull of the training points in the plane (raw
        units); crossing points are counted inside it, where Wu & Liu's constraints act.
    """

    ix: int
    iy: int
    xs: np.ndarray
    ys: np.ndarray
    image: np.ndarray
    layers: list[BoundaryLayer]
    hull: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))


@dataclass(frozen=True)
class LiveBoundary:
    """One weighted fit's boundary, published while a run is still fitting."""

    weight: float
    segments: np.ndarray
    done: int
    total: int


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
    tuning : TuningResult or None
    plane : PlaneData
    comparison : fitted estimator or None
        The non-crossing fit shown beside a binary ladder.
    notes : list of str
        Things the user should know (comparison unavailable, ...).
    seconds : float
    """

    settings: RunSettings
    split: DataSplit
    estimator: Any
    report: ProbabilityReport
    metrics: dict[str, dict[str, float]]
    ladders: list[LadderInfo]
    simplex: SimplexInfo | None
    tuning: Any
    plane: PlaneData
    comparison: Any = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


# ------------------------------------------------------------------------------ helpers
def engine_notes(info: dict[str, Any] | None) -> list[str]:
    """What the user should know about the ladder engines of a fit (``fit_info_``).

    Paths that broke down (the grid ladder answered, with a warning in the log) and, for
    the ``"auto"`` engine, the ladders it gave to the grid; nothing when every ladder ran
    on the engine asked for.
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


def plane_grid(split: DataSplit, ix: int, iy: int, size: int = DEFAULT_GRID):
    """A grid over features ``ix`` and ``iy``, the other features at their means.

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

    def span(col: np.ndarray) -> np.ndarray:
        lo, hi = float(col.min()), float(col.max())
        pad = 0.05 * (hi - lo) if hi > lo else 1.0
        return np.linspace(lo - pad, hi + pad, size)

    xs, ys = span(X[:, ix]), span(X[:, iy])
    raw = np.tile(X.mean(axis=0), (size * size, 1))
    gx, gy = np.meshgrid(xs, ys)
    raw[:, ix] = gx.ravel()
    raw[:, iy] = gy.ravel()
    return xs, ys, split.transform(raw)


def _probability_image(proba: np.ndarray, size: int, alpha: int = 110) -> np.ndarray:
    """RGBA image (size, size, 4) mixing class colours by probability (grid rows = y)."""
    colors = class_colors(proba.shape[1])
    rgb = np.clip(proba, 0, 1) @ colors
    img = np.empty((size * size, 4), dtype=np.uint8)
    img[:, :3] = np.clip(rgb, 0, 255).astype(np.uint8)
    img[:, 3] = alpha
    return img.reshape(size, size, 4)


def training_hull(split: DataSplit, ix: int, iy: int) -> np.ndarray:
    """Closed convex-hull outline (h + 1, 2) of the training points in a plane (raw units)."""
    from scipy.spatial import ConvexHull, QhullError

    pts = split.dataset.X[split.train.index][:, [ix, iy]]
    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError):
        return np.empty((0, 2))
    ring = pts[hull.vertices]
    return np.vstack([ring, ring[:1]])


def inside_polygon(points: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Whether each point (c, 2) lies in the convex polygon ``ring`` (closed, (h + 1, 2))."""
    if ring.shape[0] < 4:
        return np.ones(points.shape[0], dtype=bool)
    a, b = ring[:-1], ring[1:]
    cross = (b[:, 0] - a[:, 0])[None, :] * (points[:, 1, None] - a[:, 1][None, :]) - (
        b[:, 1] - a[:, 1]
    )[None, :] * (points[:, 0, None] - a[:, 0][None, :])
    return np.all(cross >= -1e-12, axis=1) | np.all(cross <= 1e-12, axis=1)


def _ladder_layer(
    title: str,
    names: list[str],
    weights: list[np.ndarray],
    decisions: list[np.ndarray],
    xs: np.ndarray,
    ys: np.ndarray,
    crossing_rows: list[np.ndarray],
    should_cancel: Callable[[], bool],
    hull: np.ndarray | None = None,
) -> BoundaryLayer:
    size = xs.size
    segs, shares, crossings = [], [], []
    for D in decisions:  # (size*size, M-1)
        if should_cancel():
            raise Cancelled("cancelled by the user")
        segs.append([zero_contour(xs, ys, D[:, m].reshape(size, size)) for m in range(D.shape[1])])
        shares.append(float(np.mean(~signs_are_monotone(D > 0))))
        points = contour_crossings(xs, ys, D)
        if hull is not None and hull.size:
            points = points[inside_polygon(points, hull)]
        crossings.append(points)
    return BoundaryLayer(title, names, weights, segs, shares, crossing_rows, crossings)


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
    hull: np.ndarray | None = None,
) -> BoundaryLayer:
    """The boundaries of ``estimator`` on a plane grid (computed here, drawn by the GUI).

    Crossing points are kept inside ``hull`` (closed polygon) when given.
    """
    rows = [lad.nonmonotone for lad in ladders]
    if hasattr(estimator, "subproblem_ladders") and (
        hasattr(estimator, "subproblem_decision") or hasattr(estimator, "subproblems_")
    ):
        if hasattr(estimator, "subproblem_decision"):
            decisions = [estimator.subproblem_decision(X_grid, k) for k in range(len(ladders))]
        else:  # the divide-and-conquer estimator's fitted set gives all at once
            decisions = estimator.subproblems_.decisions(X_grid)
        return _ladder_layer(
            title,
            [lad.description for lad in ladders],
            [lad.weights for lad in ladders],
            decisions,
            xs,
            ys,
            rows,
            should_cancel,
            hull,
        )
    if hasattr(estimator, "ladder_decision") and hasattr(estimator, "weights_"):
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
            hull,
        )
    return _class_border_layer(title, estimator, X_grid, xs, ys)


def ladders_of(estimator: Any, X: np.ndarray, classes: np.ndarray) -> list[LadderInfo]:
    """The sign ladders of every binary sub-problem at ``X`` (n, p); [] if none."""
    if hasattr(estimator, "subproblem_ladders"):
        out = []
        for desc, weights, signs, lo, hi in estimator.subproblem_ladders(X):
            out.append(
                LadderInfo(
                    str(desc),
                    np.asarray(weights),
                    np.asarray(signs, bool),
                    np.asarray(lo, float),
                    np.asarray(hi, float),
                )
            )
        return out
    if hasattr(estimator, "ladder_decision") and hasattr(estimator, "weights_"):
        signs = np.asarray(estimator.ladder_decision(X)) > 0
        est_classes = getattr(estimator, "classes_", classes)
        if hasattr(estimator, "estimate"):
            est = estimator.estimate(X)
            lo, hi = np.asarray(est.lo), np.asarray(est.hi)
        else:
            lo = hi = np.full(X.shape[0], np.nan)
        desc = f"P({est_classes[1]}): {est_classes[1]} vs {est_classes[0]}"
        return [LadderInfo(desc, np.asarray(estimator.weights_), signs, lo, hi)]
    return []


def simplex_of(estimator: Any, X: np.ndarray) -> SimplexInfo | None:
    """The joint simplex scheme's grid predictions at ``X``; None for other estimators."""
    if not (hasattr(estimator, "grid_") and hasattr(estimator, "grid_predictions")):
        return None
    border = estimator.border_weights(X) if hasattr(estimator, "border_weights") else None
    return SimplexInfo(
        np.asarray(estimator.grid_, float),
        np.asarray(estimator.grid_predictions(X), int),
        None if border is None else np.asarray(border, float),
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
) -> PlaneData:
    """Decision values, contours and the p_hat image on the plane of features ix, iy.

    ``result_like`` needs ``split``, ``estimator``, ``ladders`` and ``comparison``
    attributes (a :class:`RunResult`).
    """
    cancel = should_cancel or (lambda: False)
    split = result_like.split
    xs, ys, X_grid = plane_grid(split, ix, iy, size)
    est = result_like.estimator
    proba = aligned_proba(est.report(X_grid), split.dataset.classes)
    image = _probability_image(proba, size)
    hull = training_hull(split, ix, iy)
    layers = [
        boundary_layer(
            est,
            scheme_label(result_like.settings.scheme),
            X_grid,
            xs,
            ys,
            result_like.ladders,
            cancel,
            hull,
        )
    ]
    comp = result_like.comparison
    if comp is not None:
        comp_ladders = ladders_of(comp, split.X_all, split.dataset.classes)
        layers.append(
            boundary_layer(comp, "non-crossing", X_grid, xs, ys, comp_ladders, cancel, hull)
        )
    return PlaneData(ix, iy, xs, ys, image, layers, hull)


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
    """

    settings: RunSettings
    split: DataSplit
    ix: int = 0
    iy: int = 1
    grid_size: int = DEFAULT_GRID
    compare: bool = False


def run_analysis(
    request: RunRequest,
    progress: Callable[[int, int, Any], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    publish: Publish | None = None,
) -> RunResult:
    """Fit the scheme and prepare every view's data.

    Parameters
    ----------
    request : RunRequest
    progress : callable, optional
        ``progress(done, total, partial)`` forwarded from the fit.
    should_cancel : callable, optional
    publish : callable, optional
        Receives live objects (:class:`LiveBoundary`) while fitting.

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
    X_tune = split.tune.X if split.tune.size else None
    y_tune = split.tune.y if split.tune.size else None
    if settings.tuning == "tune-set" and X_tune is None:
        raise InputError("tuning mode 'tune-set' needs a tuning part: set a tuning fraction > 0")
    X_train, y_train = split.train.X, split.train.y
    if settings.tuning != "tune-set" and X_tune is not None:
        # The estimator makes its own tuning split: give it the tuning rows too.
        X_train = np.vstack([X_train, X_tune])
        y_train = np.concatenate([y_train, y_tune])
    grid = None
    if publish is not None and ds.X.shape[1] >= 1:
        grid = plane_grid(split, request.ix, request.iy, request.grid_size)

    last_live = [-np.inf]

    def on_progress(done: int, total: int, partial: Any = None) -> None:
        if progress is not None:
            progress(done, total, partial)
        now = time.perf_counter()
        if publish is None or now - last_live[0] < LIVE_INTERVAL:
            return
        live = _live_boundary(partial, grid, done, total)
        if live is not None:
            last_live[0] = now
            publish(live)

    estimator = fit_scheme(
        settings, X_train, y_train, X_tune, y_tune, progress=on_progress, should_cancel=cancel
    )
    notes: list[str] = engine_notes(getattr(estimator, "fit_info_", None))
    comparison = None
    if request.compare:
        name, why = comparison_scheme(settings, ds.n_classes)
        if name is None:
            notes.append(f"Side-by-side comparison not shown: {why}.")
        else:
            comparison = fit_scheme(
                replace(settings, scheme=name),
                X_train,
                y_train,
                X_tune,
                y_tune,
                progress=None,
                should_cancel=cancel,
            )
    if cancel():
        raise Cancelled("cancelled by the user")
    X_all = split.X_all
    report = aligned_report(estimator.report(X_all), classes)
    metrics = part_metrics(split, report.proba)
    ladders = ladders_of(estimator, X_all, classes)
    simplex = simplex_of(estimator, X_all)
    partial = RunResult(
        settings,
        split,
        estimator,
        report,
        metrics,
        ladders,
        simplex,
        getattr(estimator, "tuning_", None),
        None,
        comparison,
        notes,  # type: ignore[arg-type]
    )
    partial.plane = compute_plane(partial, request.ix, request.iy, request.grid_size, cancel)
    partial.seconds = time.perf_counter() - start
    return partial


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
def run_baselines(
    split: DataSplit, sigma: float | None = None, should_cancel: Callable[[], bool] | None = None
) -> dict[str, dict[str, float]]:
    """Common probability estimators for comparison, measured on the test part.

    Fitted on training plus tuning rows; measured on the test part (the training part when
    there is no test part).

    Returns
    -------
    dict
        Baseline name -> measure -> value.
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
    out: dict[str, dict[str, float]] = {}
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
        out[name] = values
    return out
