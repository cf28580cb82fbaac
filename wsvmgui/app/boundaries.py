"""The boundary view's data of one plane: every estimator's boundaries, their crossings,
the p_hat surface and the training hull's cut (numpy, no Qt; computed on the worker).

A ladder's boundaries are the zero sets ``{f_pi = 0}`` of its weighted fits on the plane's
grid; where two of them cross, the ladder's signs are not monotone in pi.  An estimator
without ladders is drawn by the borders between its predicted classes.  With more than
two features the plane is a slice through a reference point (:mod:`wsvmgui.app.slices`);
crossings are counted inside the training hull's cut by the plane.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ..errors import Cancelled
from ..estimators.views import LadderViews, SubproblemViews
from ..ladder.rules import signs_are_monotone
from .capabilities import ladders_of
from .contours import contour_crossings, one_per_cell, zero_contour
from .datasets import DataSplit
from .measures import aligned_proba
from .plane import DEFAULT_GRID, default_reference, in_hull, plane_grid, surface_colors
from .run_inputs import scheme_label
from .settings import RunSettings
from .slices import closeness, slice_hull
from .view_data import BoundaryLayer, LadderInfo, PlaneData

#: ``hull_split(points (c, 2)) -> inside`` (bool, shape (c,)): in the training hull's cut.
HullSplit = Callable[[np.ndarray], np.ndarray]


class PlaneSource(Protocol):
    """What :func:`compute_plane` reads of a run (a RunResult has all of it)."""

    @property
    def settings(self) -> RunSettings: ...
    @property
    def split(self) -> DataSplit: ...
    @property
    def estimator(self) -> Any: ...
    @property
    def comparison(self) -> Any: ...
    @property
    def ladders(self) -> list[LadderInfo]: ...
    @property
    def fit_rows(self) -> np.ndarray: ...


def _all_inside(points: np.ndarray) -> np.ndarray:
    return np.ones(points.shape[0], dtype=bool)


def _ladder_layer(
    title: str,
    names: list[str],
    weights: list[np.ndarray],
    decisions: list[np.ndarray],
    xs: np.ndarray,
    ys: np.ndarray,
    crossing_rows: list[np.ndarray],
    should_cancel: Callable[[], bool],
    hull_split: HullSplit,
) -> BoundaryLayer:
    size = xs.size
    segs, shares, inside, outside, pairs = [], [], [], [], []
    for D in decisions:  # (size*size, M-1)
        if should_cancel():
            raise Cancelled("cancelled by the user")
        segs.append([zero_contour(xs, ys, D[:, m].reshape(size, size)) for m in range(D.shape[1])])
        shares.append(float(np.mean(~signs_are_monotone(D > 0))))
        points, crossing = contour_crossings(xs, ys, D)
        in_hull = hull_split(points)
        inside.append(one_per_cell(points[in_hull], xs, ys)[0])
        outside.append(one_per_cell(points[~in_hull], xs, ys)[0])
        pairs.append(np.unique(crossing[in_hull], axis=0).reshape(-1, 2))
    return BoundaryLayer(title, names, weights, segs, shares, crossing_rows, inside, outside, pairs)


def _class_border_layer(
    title: str, estimator: Any, X_grid: np.ndarray, xs: np.ndarray, ys: np.ndarray
) -> BoundaryLayer:
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
        [np.empty((0, 2), dtype=int)],
    )


def boundary_layer(
    estimator: Any,
    title: str,
    X_grid: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    ladders: list[LadderInfo],
    should_cancel: Callable[[], bool],
    hull_split: HullSplit | None = None,
) -> BoundaryLayer:
    """The boundaries of ``estimator`` on a plane grid (computed here, drawn by the GUI).

    ``hull_split(points (c, 2)) -> inside (c,)`` sorts crossing points by the training hull
    (default: all inside).
    """
    split_fn = hull_split or _all_inside
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


def compute_plane(
    source: PlaneSource,
    ix: int,
    iy: int,
    size: int = DEFAULT_GRID,
    should_cancel: Callable[[], bool] | None = None,
    reference: np.ndarray | None = None,
) -> PlaneData:
    """Decision values, contours and the p_hat surface on the plane of features ix, iy
    (and the comparison's own surface, when the run has one).

    ``source`` is a finished run (a :class:`~wsvmgui.app.view_data.RunResult`, or the
    fits of one before its result exists).  With more than two features the plane
    passes through ``reference`` (raw units, default the means).
    """
    cancel = should_cancel or (lambda: False)
    split = source.split
    ref = default_reference(split) if reference is None else np.asarray(reference, float)
    xs, ys, X_grid = plane_grid(split, ix, iy, size, ref)
    est = source.estimator
    proba = aligned_proba(est.report(X_grid), split.dataset.classes)
    image = surface_colors(proba).reshape(size, size, 3)
    rows = source.fit_rows if np.size(source.fit_rows) else split.train.index
    X_hull = split.dataset.X[rows]
    p = X_hull.shape[1]
    if cancel():
        raise Cancelled("cancelled by the user")
    hull = slice_hull(X_hull, ref, ix, iy) if p > 1 and ix != iy else np.empty((0, 2))
    near = closeness(split.dataset.X, ref, ix, iy) if ix != iy else np.ones(len(split.dataset.X))

    def hull_split(points: np.ndarray) -> np.ndarray:
        return in_hull(points, hull)

    layers = [
        boundary_layer(
            est,
            scheme_label(source.settings.scheme),
            X_grid,
            xs,
            ys,
            source.ladders,
            cancel,
            hull_split,
        )
    ]
    comp = source.comparison
    comp_image = None
    if comp is not None:
        comp_proba = aligned_proba(comp.report(X_grid), split.dataset.classes)
        comp_image = surface_colors(comp_proba).reshape(size, size, 3)
        comp_ladders = ladders_of(comp, split.X_all, split.dataset.classes)
        layers.append(
            boundary_layer(
                comp, "Non-crossing ladder", X_grid, xs, ys, comp_ladders, cancel, hull_split
            )
        )
    return PlaneData(ix, iy, xs, ys, image, layers, hull, ref, near, comp_image)
