"""The parts of the boundaries view: one plot's items (:class:`BoundaryPanel`) and the
editable reference point of a slice (:class:`SlicePanel`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...app.contours import segments_to_xy
from ...app.view_data import LiveBoundary
from .common import SELECT_PEN, add_title, compact_rows, configure_plot, pi_colors

#: Largest number of boundaries drawn antialiased.
SMOOTH_MAX = 20
HULL_PEN = pg.mkPen(90, 90, 90, 200, width=1.5, style=Qt.PenStyle.DashLine)
CROSS_IN = pg.mkBrush(0, 0, 0, 230)
CROSS_OUT = pg.mkBrush(150, 150, 150, 200)
RING_PEN = pg.mkPen(255, 140, 0, 255, width=2.5)
PI_PEN = pg.mkPen(0, 0, 0, 255, width=3, style=Qt.PenStyle.DashLine)
#: Steps of the pi slider.
PI_STEPS = 1000


class BoundaryPanel:
    """The items of one boundary plot: background image, boundary curves, points, marks."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        configure_plot(plot)
        self.title = add_title(plot)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setZValue(-10)
        plot.addItem(self.image)
        self.curves: list[pg.PlotDataItem] = []
        self.points = pg.ScatterPlotItem(
            size=8, pen=pg.mkPen(20, 20, 20, 150), hoverable=True, tip=None
        )
        self.points.setZValue(5)
        plot.addItem(self.points)
        # where two boundaries cross inside the training hull (black) or outside (grey) ...
        self.crossing = pg.ScatterPlotItem(size=13, symbol="x", pen=None, brush=CROSS_IN)
        self.crossing.setZValue(6)
        plot.addItem(self.crossing)
        self.crossing_out = pg.ScatterPlotItem(size=11, symbol="x", pen=None, brush=CROSS_OUT)
        self.crossing_out.setZValue(6)
        plot.addItem(self.crossing_out)
        # ... and data points whose sign ladder is not monotone (orange rings)
        self.nonmonotone = pg.ScatterPlotItem(size=16, symbol="o", brush=None, pen=RING_PEN)
        self.nonmonotone.setZValue(6)
        plot.addItem(self.nonmonotone)
        self.hull = pg.PlotDataItem(pen=HULL_PEN)
        self.hull.setZValue(1)
        plot.addItem(self.hull)
        self.selected = pg.ScatterPlotItem(size=20, symbol="o", pen=SELECT_PEN, brush=None)
        self.selected.setZValue(7)
        plot.addItem(self.selected)
        # the boundary at any pi from the exact path: white under black, above the ladder
        self.pi_halo = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(255, 255, 255, width=6))
        self.pi_curve = pg.PlotDataItem(connect="pairs", pen=PI_PEN)
        for z, item in ((3, self.pi_halo), (4, self.pi_curve)):
            item.setZValue(z)
            plot.addItem(item)
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
        curve.setPen(pg.mkPen(pi_colors(np.array([live.weight]))[0], width=2))
        curve.setData(x, y, connect="pairs")
        curve.setVisible(True)
        self.n_live += 1

    def clear_boundaries(self) -> None:
        self.set_boundaries(np.empty(0), [])
        for item in (self.crossing, self.crossing_out, self.nonmonotone, self.hull):
            item.setData([], [])
        self.pi_halo.setData([], [])
        self.pi_curve.setData([], [])
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


class SlicePanel(QWidget):
    """The reference point of a slice: every feature's value, editable.

    Signals
    -------
    edited(reference)
        The user changed a value or chose other values (raw units, shape (p,)).
    """

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.follow = QCheckBox("follow selection")
        self.follow.setChecked(True)
        self.follow.setToolTip(
            "Put the slice through the selected point whenever the selection changes"
        )
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["feature", "value"])
        self.table.verticalHeader().setVisible(False)
        compact_rows(self.table)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(
            1, QHeaderView.ResizeMode.ResizeToContents
        )
        self.table.setToolTip(
            "Values of the features not on the axes: the plane passes through this point. "
            "Double-click a value to edit it."
        )
        self.means_button = QPushButton("Means")
        self.means_button.setToolTip("Every other feature at its mean over the data")
        self.medians_button = QPushButton("Medians")
        self.medians_button.setToolTip("Every other feature at its median over the data")
        heading = QLabel("<b>Slice through</b>")
        heading.setToolTip(
            "With more than two features the plot shows the plane through this point "
            "along the two axis features; the other features are held at these values."
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.means_button)
        buttons.addWidget(self.medians_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 0, 2, 0)
        layout.addWidget(heading)
        layout.addWidget(self.follow)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.setMinimumWidth(150)
        self._X: np.ndarray | None = None
        self._names: list[str] = []
        self._axes = (0, 1)
        self._reference = np.empty(0)
        self._updating = False
        self.table.itemChanged.connect(self._item_changed)
        self.means_button.clicked.connect(lambda: self._choose(np.mean))
        self.medians_button.clicked.connect(lambda: self._choose(np.median))

    def set_data(self, X: np.ndarray, names: list[str]) -> None:
        self._X = np.asarray(X, float)
        self._names = list(names)
        self._updating = True
        self.table.setRowCount(len(names))
        for j, name in enumerate(names):
            item = QTableWidgetItem(name)
            item.setToolTip(name)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.table.setItem(j, 0, item)
            self.table.setItem(j, 1, QTableWidgetItem(""))
        self._updating = False

    def set_axes(self, ix: int, iy: int) -> None:
        self._axes = (ix, iy)
        self._show()

    def set_reference(self, reference: np.ndarray) -> None:
        self._reference = np.asarray(reference, float).copy()
        self._show()

    def reference(self) -> np.ndarray:
        return self._reference.copy()

    def _show(self) -> None:
        self._updating = True
        for j in range(self.table.rowCount()):
            item = self.table.item(j, 1)
            if item is None or j >= self._reference.size:
                continue
            on_axis = j in self._axes
            item.setText("on an axis" if on_axis else f"{self._reference[j]:.4g}")
            flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
            item.setFlags(flags if on_axis else flags | Qt.ItemFlag.ItemIsEditable)
        self._updating = False

    def _item_changed(self, item: QTableWidgetItem) -> None:
        if self._updating or item.column() != 1:
            return
        j = item.row()
        try:
            value = float(item.text())
        except ValueError:
            self._show()  # not a number: back to the value in force
            return
        if not np.isfinite(value):
            self._show()
            return
        self._reference[j] = value
        self.follow.setChecked(False)
        self._show()
        self.edited.emit(self.reference())

    def _choose(self, fn: Callable[..., np.ndarray]) -> None:
        if self._X is None:
            return
        self.follow.setChecked(False)
        self.set_reference(fn(self._X, axis=0))
        self.edited.emit(self.reference())
