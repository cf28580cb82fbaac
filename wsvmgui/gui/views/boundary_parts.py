"""The parts of the boundaries view: one plot's items (:class:`BoundaryPanel`) and the
editable reference point of a slice (:class:`SlicePanel`)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QPainterPath, QPen
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
from .common import SELECT_PEN, add_title, configure_plot, pi_colors

#: Largest number of boundaries drawn antialiased.
SMOOTH_MAX = 20
HULL_PEN = pg.mkPen(90, 90, 90, 200, width=1.5, style=Qt.PenStyle.DashLine)
CROSS_IN = pg.mkBrush(0, 0, 0, 230)
CROSS_OUT = pg.mkBrush(150, 150, 150, 200)
RING_PEN = pg.mkPen(255, 140, 0, 255, width=2.5)
PI_PEN = pg.mkPen(0, 0, 0, 255, width=3, style=Qt.PenStyle.DashLine)
#: Steps of the pi slider.
PI_STEPS = 1000
#: A zero-width space: where a long name may break onto the next line.
BREAK = "\u200b"


#: A break that shows a hyphen where the line breaks (inside long words).
SOFT_HYPHEN = "\u00ad"
#: Longest piece of a name kept whole; longer ones may break every this many characters.
MAX_PIECE = 8


def breakable(name: str) -> str:
    """``name`` with a break allowed after every ``_``, ``/``, ``.`` and ``-`` (names like
    ``od280/od315_of_diluted_wines`` have no spaces to wrap at), and a hyphenated one every
    :data:`MAX_PIECE` characters inside longer pieces (``proanthocyanins``)."""
    pieces = re.split(r"(?<=[_/.\- ])", name)
    out = []
    for piece in pieces:
        if len(piece) > MAX_PIECE + 2:
            cut = range(0, len(piece), MAX_PIECE)
            piece = SOFT_HYPHEN.join(piece[i : i + MAX_PIECE] for i in cut)
        out.append(piece)
    return BREAK.join(p for p in out if p)


class BoundaryCurves(pg.GraphicsObject):
    """Every boundary of a panel in one plot item: one path and pen per weight.

    One item instead of one per boundary: adding dozens of plot items to a view costs
    milliseconds each on the GUI thread (the scene and the view box register every one),
    and a result's boundaries arrive all at once.
    """

    def __init__(self) -> None:
        super().__init__()
        self._paths: list[QPainterPath] = []
        self._pens: list[QPen] = []
        self._data: list[tuple[np.ndarray, np.ndarray]] = []
        self._bounds = QRectF()
        self.antialias = True

    def set_curves(
        self, data: list[tuple[np.ndarray, np.ndarray]], colors: list, antialias: bool
    ) -> None:
        """Draw ``data`` (x, y pairs of segment ends, ``connect="pairs"``) in ``colors``."""
        self.prepareGeometryChange()
        self._data, self._paths, self._pens = [], [], []
        self._bounds = QRectF()
        self.antialias = antialias
        for (x, y), color in zip(data, colors, strict=True):
            self._append(x, y, color)
        self.update()

    def add_curve(self, x: np.ndarray, y: np.ndarray, color) -> None:
        """One more boundary (a live one), drawn fast (no antialiasing)."""
        self.prepareGeometryChange()
        self.antialias = False
        self._append(x, y, color)
        self.update()

    def _append(self, x: np.ndarray, y: np.ndarray, color) -> None:
        x, y = np.asarray(x, float), np.asarray(y, float)
        self._data.append((x, y))
        path = pg.functions.arrayToQPath(x, y, connect="pairs") if x.size else QPainterPath()
        self._paths.append(path)
        pen = pg.mkPen(color, width=2)
        pen.setCosmetic(True)
        self._pens.append(pen)
        if x.size:
            self._bounds = self._bounds.united(path.boundingRect())

    def data(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(x, y) arrays of every boundary, in order."""
        return list(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        # a margin for the 2-pixel strokes at the outermost segments
        r = self._bounds
        return r.adjusted(
            -0.02 * r.width(), -0.02 * r.height(), 0.02 * r.width(), 0.02 * r.height()
        )

    def dataBounds(self, ax, frac=1.0, orthoRange=None):  # noqa: N802 - pyqtgraph API
        return None  # the plot's range follows the points, never the boundaries

    def paint(self, painter, *_args) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing, self.antialias)
        for path, pen in zip(self._paths, self._pens, strict=True):
            painter.setPen(pen)
            painter.drawPath(path)


class BoundaryPanel:
    """The items of one boundary plot: background image, boundary curves, points, marks."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        configure_plot(plot)
        self.title = add_title(plot)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setZValue(-10)
        plot.addItem(self.image)
        self.curves = BoundaryCurves()
        self.curves.setZValue(2)
        plot.addItem(self.curves)
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

    @property
    def n_live(self) -> int:
        """Boundaries drawn so far (live ones during a run)."""
        return len(self.curves)

    def set_boundaries(self, weights: np.ndarray, segments: list[np.ndarray]) -> None:
        """One curve per weight (segments (s, 2, 2)), coloured by pi."""
        # Smooth lines cost about 2.5 times as much to paint: keep them for up to
        # SMOOTH_MAX boundaries, so that one repaint stays well under the 50 ms budget.
        self.curves.set_curves(
            [segments_to_xy(seg) for seg in segments],
            pi_colors(weights),
            len(segments) <= SMOOTH_MAX,
        )

    def add_live(self, live: LiveBoundary) -> None:
        x, y = segments_to_xy(live.segments)
        self.curves.add_curve(x, y, pi_colors(np.array([live.weight]))[0])

    def clear_boundaries(self) -> None:
        self.set_boundaries(np.empty(0), [])
        for item in (self.crossing, self.crossing_out, self.nonmonotone, self.hull):
            item.setData([], [])
        self.pi_halo.setData([], [])
        self.pi_curve.setData([], [])
        self.image.clear()

    def boundary_data(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(x, y) arrays of every boundary curve (for tests and exports)."""
        return self.curves.data()


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
        # whole names, on as many lines as they need: never shortened with "..."
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
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
            item = QTableWidgetItem(breakable(name))
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
            axis = "x axis" if j == self._axes[0] else "y axis"
            item.setText(axis if on_axis else f"{self._reference[j]:.4g}")
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
