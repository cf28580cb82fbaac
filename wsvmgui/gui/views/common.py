"""Shared pieces of the views: colours, symbols, pens, labels that fit their space."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem, QSizePolicy

from ...app.plane import class_colors

#: Point symbols of the parts of a split.
PART_SYMBOLS = {"train": "o", "tune": "s", "test": "t"}
PART_NAMES = {"train": "training", "tune": "tuning", "test": "test"}
PI_COLORMAP = "viridis"
SELECT_PEN = pg.mkPen(0, 0, 0, 255, width=3)
TEXT_COLOR = (30, 30, 30)
#: p-hat in rich text (pyqtgraph labels, axis labels, legends, rich-text QLabels).  The
#: upright DejaVu Sans, the usual font here, does not place the combining circumflex over
#: "p"; its oblique face does, and statistics writes estimates in italics anyway.
PHAT = "<i>p&#770;</i>"
#: p-hat in plain text (check boxes, combo boxes, tooltips, the status bar).
PHAT_PLAIN = "p-hat"


def phat(label) -> str:
    """``p_hat(label)`` in rich text."""
    return f"{PHAT}({label})"


def class_entry(label) -> str:
    """A legend entry for a class: ``class 2``, ``class malignant``, but ``class_0`` for a
    label that already says it is a class (wine's, not ``class class_0``)."""
    text = str(label)
    return text if text.lower().startswith("class") else f"class {text}"


def class_brushes(class_index: np.ndarray, K: int, alpha: int = 220) -> list:
    """One brush per point from its class index (n,)."""
    colors = class_colors(K)
    brushes = [pg.mkBrush(int(r), int(g), int(b), alpha) for r, g, b in colors]
    return [brushes[int(k)] for k in class_index]


def faded_brushes(class_index: np.ndarray, K: int, alpha: np.ndarray) -> list:
    """One brush per point, class colour with its own alpha (n,), 16 levels shared."""
    colors = class_colors(K)
    levels = np.clip(np.round(np.asarray(alpha, float) / 16) * 16, 16, 240).astype(int)
    cache: dict[tuple[int, int], object] = {}
    out = []
    for k, a in zip(np.asarray(class_index, int), levels, strict=True):
        key = (int(k), int(a))
        if key not in cache:
            r, g, b = colors[k]
            cache[key] = pg.mkBrush(int(r), int(g), int(b), int(a))
        out.append(cache[key])
    return out


def class_qcolor(k: int, K: int, alpha: int = 255) -> QColor:
    r, g, b = class_colors(K)[k]
    return QColor(int(r), int(g), int(b), alpha)


def pi_colors(weights: np.ndarray) -> list[QColor]:
    """Colours of weights in [0, 1] on the pi colour map (NaN: dark grey)."""
    cmap = pg.colormap.get(PI_COLORMAP)
    out = []
    for w in np.asarray(weights, dtype=float):
        if np.isfinite(w):
            out.append(cmap.map(float(np.clip(w, 0, 1)), mode="qcolor"))
        else:
            out.append(QColor(40, 40, 40))
    return out


def class_index(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Index of each label in ``classes`` (sorted); shape (n,)."""
    return np.searchsorted(np.asarray(classes), np.asarray(y))


def compact_name(name: str, classes) -> str:
    """A sub-problem name without the prefix all class labels share.

    ``"class_2|class_1,class_2"`` becomes ``"2|1,2"`` for the classes ``class_0, class_1,
    class_2``; names are unchanged when the labels share no prefix (or one is the prefix).
    """
    import os

    labels = [str(c) for c in classes]
    prefix = os.path.commonprefix(labels) if len(labels) > 1 else ""
    if not prefix or any(len(label) == len(prefix) for label in labels):
        return name
    return name.replace(prefix, "")


def fixed_lines(label, lines: int = 2) -> None:
    """Give a word-wrapped label a fixed height of ``lines`` text lines.

    A label whose height follows its text resizes the plots beside it whenever the text
    changes, and re-laying out a pyqtgraph scene costs far more than painting it.
    """
    label.setWordWrap(True)
    label.setFixedHeight(label.fontMetrics().lineSpacing() * lines + 6)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)


def compact_rows(table) -> None:
    """Rows of a QTableWidget one text line high (the style's default is nearly two)."""
    from PySide6.QtWidgets import QHeaderView

    rows = table.verticalHeader()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(table.fontMetrics().height() + 8)


def fit_table_height(table, max_rows: int = 8) -> None:
    """Give ``table`` the height of its header and rows (at most ``max_rows``), so the plots
    beside it get the rest rather than blank rows."""
    rows = min(table.rowCount(), max_rows)
    header = table.horizontalHeader().sizeHint().height()
    frame = 2 * table.frameWidth()
    height = header + rows * table.verticalHeader().defaultSectionSize() + frame
    wide = table.horizontalHeader().length() + table.verticalHeader().width() + frame
    if wide > table.width():  # a horizontal scroll bar takes a row's room
        height += table.horizontalScrollBar().sizeHint().height()
    table.setFixedHeight(height)


def cache_axes(plot: pg.PlotItem) -> None:
    """Render the axes (and the grid they draw) through a pixmap cache.

    An axis item's area covers the grid lines across the plot, so without a cache every
    change inside the plot (a new boundary, a moved marker) repaints the axes' text,
    which costs far more than the change itself.
    """
    for name in ("left", "bottom", "top", "right"):
        axis = plot.getAxis(name)
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


def configure_plot(plot: pg.PlotItem) -> None:
    """Common look: dark axes, a light grid, no context menu, cached axes, small minimum."""
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    for name in ("left", "bottom"):
        plot.getAxis(name).setPen(pg.mkPen(90, 90, 90))
        plot.getAxis(name).setTextPen(pg.mkPen(40, 40, 40))
    plot.setMinimumSize(120, 100)
    cache_axes(plot)


class TitleItem(pg.GraphicsWidget):
    """A one-line plain-text title that shortens itself ("...") to the width it gets.

    pyqtgraph's own labels make their text width the plot's minimum width, so a long
    title widens the scene past its view and the plot is cut off; this one never asks for
    more than a few pixels and shows the whole text when there is room.
    """

    def __init__(self, text: str = "", point_size: float = 10.5, bold: bool = False) -> None:
        super().__init__()
        self._full = ""
        self._font = QFont()
        self._font.setPointSizeF(point_size)
        self._font.setBold(bold)
        self._metrics = QFontMetricsF(self._font)
        self._item = QGraphicsTextItem(self)
        self._item.setFont(self._font)
        self._item.setDefaultTextColor(QColor(*TEXT_COLOR))
        self._item.document().setDocumentMargin(0)
        height = self._metrics.height() + 6
        self.setMinimumHeight(height)
        self.setMaximumHeight(height)
        self.setMinimumWidth(10)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        self._full = str(text)
        self._fit()

    def text(self) -> str:
        """The whole text (also when it is shown shortened)."""
        return self._full

    def shown(self) -> str:
        return self._item.toPlainText()

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt override
        self._fit()

    def _fit(self) -> None:
        width = max(self.size().width() - 6, 10)
        shown = self._metrics.elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        self._item.setPlainText(shown)
        used = self._metrics.horizontalAdvance(shown)
        self._item.setPos(max((self.size().width() - used) / 2, 0), 2)


#: pyqtgraph puts a left axis's label this far (pixels) left of the axis.
AXIS_LABEL_NUDGE = 5


def set_bar_title(bar: pg.ColorBarItem, text: str, margin: int = 4) -> None:
    """Title a colour bar on its left and make room for it: the axis as wide as the
    rotated title's height (whatever font draws it), so the title never reaches the
    gradient beside it."""
    axis = bar.getAxis("left")
    axis.setLabel(text)
    height = axis.label.boundingRect().height()
    axis.setWidth(int(np.ceil(height)) - AXIS_LABEL_NUDGE + margin)


def show_bar(bar: pg.ColorBarItem, visible: bool) -> None:
    """Show or hide a colour bar; shown again, its axes get their widths back (pyqtgraph
    sets a hidden axis's width to 0 whenever its label changes, and keeps it so: the
    title then lies over the gradient)."""
    bar.setVisible(visible)
    if visible:
        for key in ("left", "right"):
            axis = bar.getAxis(key)
            if axis.fixedWidth is not None:
                axis.setWidth(axis.fixedWidth)


def add_title(plot: pg.PlotItem, text: str = "") -> TitleItem:
    """Replace ``plot``'s title by a :class:`TitleItem` in the title's place."""
    plot.titleLabel.setVisible(False)
    plot.titleLabel.setMaximumHeight(0)
    title = TitleItem(text)
    plot.layout.removeItem(plot.titleLabel)
    plot.layout.addItem(title, 0, 1)
    plot.wsvm_title = title
    return title


def legend_sample(symbol: str, brush=None, pen=None, size: int = 9) -> pg.ScatterPlotItem:
    """A scatter item that stands for a marker in a legend (never added to a plot)."""
    return pg.ScatterPlotItem(
        size=size,
        symbol=symbol,
        brush=brush if brush is not None else pg.mkBrush(120, 120, 120, 220),
        pen=pen if pen is not None else pg.mkPen(20, 20, 20, 150),
    )


def legend_line(pen) -> pg.PlotDataItem:
    """A line that stands for a curve in a legend."""
    return pg.PlotDataItem([0, 1], [0, 0], pen=pen)


def fit_legend(legend: pg.LegendItem, width: float) -> None:
    """As many legend columns as entries of the widest kind fit in ``width`` pixels.

    A legend lays its entries out in a fixed number of columns and its minimum width is
    their sum: too many columns and the scene outgrows its view.
    """
    entries = getattr(legend, "items", [])
    if not entries:
        return
    # the text's own width: a label's geometry stretches with the column it sits in
    widest = max(
        sample.boundingRect().width() + getattr(label, "item", label).boundingRect().width() + 16
        for sample, label in entries
    )
    cols = int(max(1, min(len(entries), (width - 24) // max(widest + 8, 1))))
    if legend.columnCount != cols:
        legend.setColumnCount(cols)


class _LegendFitter(QObject):
    """Refits a legend's columns whenever its view changes size."""

    def __init__(self, graphics, legend: pg.LegendItem) -> None:
        super().__init__(graphics)
        self.graphics, self.legend = graphics, legend

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize:
            fit_legend(self.legend, self.graphics.viewport().width())
        return False


def keep_legend_fitted(graphics, legend: pg.LegendItem) -> None:
    """Fit ``legend`` to ``graphics`` now and on every resize of the view (a splitter or a
    side panel can resize it without resizing the view's parent)."""
    fitter = _LegendFitter(graphics, legend)
    # the viewport: its resize comes after the view has laid it out (the view's own
    # resize event arrives before, with the old viewport width)
    graphics.viewport().installEventFilter(fitter)
    graphics.wsvm_legend_fitter = fitter
    fit_legend(legend, graphics.viewport().width())
