"""Boundaries view: the data in a plane, every fitted boundary {f_pi = 0}, p_hat behind.

One or two panels (the run's estimator, and the non-crossing fit beside a binary ladder
when the user asks for the comparison).  Plot items are created once; new results, planes
and live fits only replace their data.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from ...app.analysis import BoundaryLayer, LiveBoundary, PlaneData
from ...app.contours import segments_to_xy
from .common import (
    PART_SYMBOLS,
    PI_COLORMAP,
    SELECT_PEN,
    class_brushes,
    class_index,
    configure_plot,
    fixed_lines,
    pi_colors,
)

#: Largest number of boundaries drawn antialiased.
SMOOTH_MAX = 20


class BoundaryPanel:
    """The items of one boundary plot: background image, boundary curves, points, marks."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        configure_plot(plot)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setZValue(-10)
        plot.addItem(self.image)
        self.curves: list[pg.PlotDataItem] = []
        self.points = pg.ScatterPlotItem(
            size=8, pen=pg.mkPen(20, 20, 20, 150), hoverable=True, tip=None
        )
        self.points.setZValue(5)
        plot.addItem(self.points)
        # where two boundaries cross (black crosses) ...
        self.crossing = pg.ScatterPlotItem(
            size=13, symbol="x", pen=None, brush=pg.mkBrush(0, 0, 0, 230)
        )
        self.crossing.setZValue(6)
        plot.addItem(self.crossing)
        # ... and data points whose sign ladder is not monotone (orange rings)
        self.nonmonotone = pg.ScatterPlotItem(
            size=16, symbol="o", brush=None, pen=pg.mkPen(255, 140, 0, 255, width=2.5)
        )
        self.nonmonotone.setZValue(6)
        plot.addItem(self.nonmonotone)
        self.hull = pg.PlotDataItem(
            pen=pg.mkPen(90, 90, 90, 200, width=1.5, style=Qt.PenStyle.DashLine)
        )
        self.hull.setZValue(1)
        plot.addItem(self.hull)
        self.selected = pg.ScatterPlotItem(size=20, symbol="o", pen=SELECT_PEN, brush=None)
        self.selected.setZValue(7)
        plot.addItem(self.selected)
        self.n_live = 0

    def _curve(self, i: int) -> pg.PlotDataItem:
        while len(self.curves) <= i:
            curve = pg.PlotDataItem(connect="pairs")
            curve.setZValue(2)
            self.plot.addItem(curve)
            self.curves.append(curve)
        return self.curves[i]

    def set_boundaries(self, weights: np.ndarray, segments: list[np.ndarray]) -> None:
        """One curve per weight (segments (s, 2, 2)), coloured by pi; extra curves cleared."""
        colors = pi_colors(weights)
        # Smooth lines cost about 2.5 times as much to paint: keep them for up to
        # SMOOTH_MAX boundaries, so that one repaint stays well under the 50 ms budget.
        smooth = len(segments) <= SMOOTH_MAX
        for i, seg in enumerate(segments):
            x, y = segments_to_xy(seg)
            curve = self._curve(i)
            curve.opts["antialias"] = smooth
            curve.setPen(pg.mkPen(colors[i], width=2))
            curve.setData(x, y, connect="pairs")
            curve.setVisible(True)
        for curve in self.curves[len(segments) :]:
            curve.setData([], [])
            curve.setVisible(False)
        self.n_live = 0

    def add_live(self, live: LiveBoundary) -> None:
        curve = self._curve(self.n_live)
        curve.opts["antialias"] = False  # live ones fast
        x, y = segments_to_xy(live.segments)
        curve.setPen(pg.mkPen(pi_colors([live.weight])[0], width=2))
        curve.setData(x, y, connect="pairs")
        curve.setVisible(True)
        self.n_live += 1

    def clear_boundaries(self) -> None:
        self.set_boundaries(np.empty(0), [])
        self.crossing.setData([], [])
        self.nonmonotone.setData([], [])
        self.hull.setData([], [])
        self.image.clear()

    def boundary_data(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(x, y) arrays of every visible boundary curve (for tests and exports)."""
        out = []
        for curve in self.curves:
            if curve.isVisible():
                x, y = curve.getData()
                out.append(
                    (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))
                )
        return out


class BoundaryView(QWidget):
    """Boundaries of every fitted weight over the data, with plane and sub-problem choice.

    Signals
    -------
    plane_requested(ix, iy)
        The user picked another pair of features while a result is shown.
    point_clicked(row)
    """

    plane_requested = Signal(int, int)
    point_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        self.sub_combo = QComboBox()
        self.sub_combo.setToolTip("Binary sub-problem whose boundaries are drawn")
        self.sub_combo.setMinimumContentsLength(12)
        self.surface_box = QCheckBox("p\u0302 surface")
        self.surface_box.setChecked(True)
        self.surface_box.setToolTip("Show the estimated probabilities as a background")
        self.info = QLabel("")
        fixed_lines(self.info, 2)
        controls = QHBoxLayout()
        for label, widget in (
            ("x:", self.x_combo),
            ("y:", self.y_combo),
            ("sub-problem:", self.sub_combo),
        ):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addWidget(self.surface_box)
        controls.addStretch(1)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.left = BoundaryPanel(self.graphics.addPlot(row=0, col=0))
        self.right = BoundaryPanel(pg.PlotItem())
        self.right.plot.setXLink(self.left.plot)
        self.right.plot.setYLink(self.left.plot)
        self.right.plot.disableAutoRange()
        self.colorbar = pg.ColorBarItem(
            values=(0, 1),
            colorMap=pg.colormap.get(PI_COLORMAP),
            interactive=False,
            label="weight \u03c0 of the boundary",
            width=14,
        )
        self.graphics.addItem(self.colorbar, row=0, col=2)
        self._right_shown = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(controls)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.info)

        self._dataset = None
        self._split = None
        self._parts = None
        self._plane: PlaneData | None = None
        self._has_result = False
        self._row = -1
        self._updating = False
        self.x_combo.currentIndexChanged.connect(self._plane_changed)
        self.y_combo.currentIndexChanged.connect(self._plane_changed)
        self.sub_combo.currentIndexChanged.connect(self._draw_layers)
        self.surface_box.toggled.connect(self._toggle_surface)
        for panel in (self.left, self.right):
            panel.points.sigClicked.connect(self._clicked)

    # -------------------------------------------------------------------------- data
    def set_split(self, split) -> None:
        """Show a data set (its split) without boundaries: feature combos and points."""
        ds = split.dataset
        same_features = self._dataset is not None and list(self._dataset.feature_names) == list(
            ds.feature_names
        )
        self._dataset, self._split = ds, split
        self._parts = split.part_of_rows()
        self._has_result = False
        self._plane = None
        if not same_features:
            self._updating = True
            for combo, default in ((self.x_combo, 0), (self.y_combo, 1)):
                combo.clear()
                combo.addItems(list(ds.feature_names))
                combo.setCurrentIndex(min(default, len(ds.feature_names) - 1))
            self._updating = False
        self.sub_combo.clear()
        self.sub_combo.setEnabled(False)
        for panel in (self.left, self.right):
            panel.clear_boundaries()
        self._show_right(False)
        _set_title(self.left.plot, ds.name)
        self._draw_points()
        self.info.setText(ds.summary())

    def plane(self) -> tuple[int, int]:
        return max(self.x_combo.currentIndex(), 0), max(self.y_combo.currentIndex(), 0)

    def set_plane_choice(self, ix: int, iy: int) -> None:
        self._updating = True
        self.x_combo.setCurrentIndex(ix)
        self.y_combo.setCurrentIndex(iy)
        self._updating = False
        self._draw_points()

    def begin_run(self) -> None:
        """A run started: clear the boundaries, keep the points."""
        self._has_result = False
        for panel in (self.left, self.right):
            panel.clear_boundaries()
        self._draw_selection()

    def add_live(self, live: LiveBoundary) -> None:
        self.left.add_live(live)
        self.info.setText(
            f"fitting: {live.done} of {live.total} fits; "
            f"boundaries of the final fit drawn as they arrive "
            f"(last \u03c0 = {live.weight:.3g})"
        )

    def set_result(self, result) -> None:
        """Draw a finished run."""
        self.set_split(result.split) if self._split is not result.split else None
        self._has_result = True
        self._result = result
        self.set_plane(result.plane)

    def set_plane(self, plane: PlaneData) -> None:
        """Draw boundaries and background of a plane computed by the worker."""
        self._plane = plane
        if self.plane() != (plane.ix, plane.iy):
            self.set_plane_choice(plane.ix, plane.iy)
        layer = plane.layers[0]
        keep = self.sub_combo.currentIndex()
        self._updating = True
        self.sub_combo.clear()
        self.sub_combo.addItems(layer.subproblems)
        self.sub_combo.setCurrentIndex(keep if 0 <= keep < len(layer.subproblems) else 0)
        self.sub_combo.setEnabled(len(layer.subproblems) > 1)
        self._updating = False
        self._show_right(len(plane.layers) > 1)
        rect = QRectF(
            float(plane.xs[0]),
            float(plane.ys[0]),
            float(plane.xs[-1] - plane.xs[0]),
            float(plane.ys[-1] - plane.ys[0]),
        )
        for panel in (self.left, self.right):
            panel.image.setImage(plane.image, autoLevels=False, levels=(0, 255))
            panel.image.setRect(rect)
            panel.image.setVisible(self.surface_box.isChecked())
            if plane.hull.size:
                panel.hull.setData(plane.hull[:, 0], plane.hull[:, 1])
            else:
                panel.hull.setData([], [])
        self._draw_layers()

    # ------------------------------------------------------------------------ drawing
    def _show_right(self, show: bool) -> None:
        if show and not self._right_shown:
            self.graphics.removeItem(self.colorbar)
            self.graphics.addItem(self.right.plot, row=0, col=1)
            self.graphics.addItem(self.colorbar, row=0, col=2)
        elif not show and self._right_shown:
            self.graphics.removeItem(self.right.plot)
        self._right_shown = show

    def _draw_points(self) -> None:
        ds = self._dataset
        if ds is None:
            return
        ix, iy = self.plane()
        x, y = ds.X[:, ix], ds.X[:, iy]
        idx = class_index(ds.y, ds.classes)
        brushes = class_brushes(idx, ds.n_classes)
        symbols = [PART_SYMBOLS.get(p, "o") for p in self._parts]
        rows = np.arange(ds.X.shape[0])
        for panel in (self.left, self.right):
            panel.points.setData(x=x, y=y, brush=brushes, symbol=symbols, data=rows)
            panel.plot.setLabel("bottom", ds.feature_names[ix])
            panel.plot.setLabel("left", ds.feature_names[iy])
        self._draw_selection()
        # A fixed range: live boundaries and new results then never change the axes, whose
        # repainting is the costliest part of a redraw.
        pad_x = 0.05 * (np.ptp(x) or 1.0)
        pad_y = 0.05 * (np.ptp(y) or 1.0)
        self.left.plot.disableAutoRange()
        self.left.plot.setRange(
            xRange=(x.min() - pad_x, x.max() + pad_x),
            yRange=(y.min() - pad_y, y.max() + pad_y),
            padding=0,
        )

    def _draw_layers(self) -> None:
        if self._updating or self._plane is None:
            return
        k = max(self.sub_combo.currentIndex(), 0)
        texts = []
        panels = [self.left, self.right] if len(self._plane.layers) > 1 else [self.left]
        for panel, layer in zip(panels, self._plane.layers, strict=False):
            texts.append(self._draw_layer(panel, layer, k))
        self.info.setText("   |   ".join(texts))

    def _draw_layer(self, panel: BoundaryPanel, layer: BoundaryLayer, k: int) -> str:
        k = min(k, len(layer.subproblems) - 1)
        panel.set_boundaries(layer.weights[k], layer.segments[k])
        rows = layer.crossing_rows[k]
        ds = self._dataset
        ix, iy = self.plane()
        if rows.size:
            panel.nonmonotone.setData(x=ds.X[rows, ix], y=ds.X[rows, iy])
        else:
            panel.nonmonotone.setData([], [])
        points = layer.crossings[k] if layer.crossings else np.empty((0, 2))
        panel.crossing.setData(x=points[:, 0], y=points[:, 1])
        sub = layer.subproblems[k]
        n_bound = int(np.sum([s.shape[0] > 0 for s in layer.segments[k]]))
        if np.all(np.isnan(layer.weights[k])):
            title = f"{layer.title}: class borders"
            text = f"{layer.title}: borders between predicted classes"
        else:
            title = f"{layer.title}" + (f" \u2014 {sub}" if sub else "")
            share = 100 * layer.crossing_share[k]
            text = (
                f"{layer.title}: {n_bound} boundaries; {len(points)} crossings (\u00d7) in "
                f"the training hull (dashed); signs not monotone at {rows.size} data "
                f"point(s) (rings), on {share:.1f}% of the plane"
            )
        title = (
            f"{title}  (crossing points: {len(points)})"
            if not np.all(np.isnan(layer.weights[k]))
            else title
        )
        _set_title(panel.plot, title)
        return text

    def _toggle_surface(self, on: bool) -> None:
        for panel in (self.left, self.right):
            panel.image.setVisible(on and self._plane is not None)

    def _plane_changed(self) -> None:
        if self._updating:
            return
        self._draw_points()
        if self._has_result:
            self.plane_requested.emit(*self.plane())

    # ---------------------------------------------------------------------- selection
    def set_selection(self, row: int) -> None:
        self._row = row
        self._draw_selection()

    def _draw_selection(self) -> None:
        ds = self._dataset
        ix, iy = self.plane()
        for panel in (self.left, self.right):
            if ds is None or not 0 <= self._row < ds.X.shape[0]:
                panel.selected.setData([], [])
            else:
                panel.selected.setData(x=[ds.X[self._row, ix]], y=[ds.X[self._row, iy]])

    def _clicked(self, _item, points, *_args) -> None:
        if len(points):
            self.point_clicked.emit(int(points[0].data()))

    def export_item(self):
        return self.graphics.scene()


def _set_title(plot: pg.PlotItem, title: str) -> None:
    """Set a plot title only when it changes (setting HTML text is slow)."""
    if getattr(plot, "_wsvm_title", None) != title:
        plot.setTitle(title)
        plot._wsvm_title = title
