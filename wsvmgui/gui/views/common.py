"""Shared pieces of the views: colours, symbols and pens."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem

from ...app.analysis import class_colors

#: Point symbols of the parts of a split.
PART_SYMBOLS = {"train": "o", "tune": "s", "test": "t"}
PI_COLORMAP = "viridis"
SELECT_PEN = pg.mkPen(0, 0, 0, 255, width=3)


def class_brushes(class_index: np.ndarray, K: int, alpha: int = 220) -> list:
    """One brush per point from its class index (n,)."""
    colors = class_colors(K)
    brushes = [pg.mkBrush(int(r), int(g), int(b), alpha) for r, g, b in colors]
    return [brushes[int(k)] for k in class_index]


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


def fixed_lines(label, lines: int = 2) -> None:
    """Give a word-wrapped label a fixed height of ``lines`` text lines.

    A label whose height follows its text resizes the plots beside it whenever the text
    changes, and re-laying out a pyqtgraph scene costs far more than painting it.
    """
    label.setWordWrap(True)
    label.setFixedHeight(label.fontMetrics().lineSpacing() * lines + 6)


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
    """Common look: dark axes, a light grid, no context menu, cached axes."""
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(False)
    for name in ("left", "bottom"):
        plot.getAxis(name).setPen(pg.mkPen(90, 90, 90))
        plot.getAxis(name).setTextPen(pg.mkPen(40, 40, 40))
    cache_axes(plot)
