"""Shared pieces of the views: colours, symbols and pens."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from ..analysis import class_colors

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


def configure_plot(plot: pg.PlotItem) -> None:
    """Common look: white background friendly axes and a light grid."""
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(False)
    for name in ("left", "bottom"):
        plot.getAxis(name).setPen(pg.mkPen(90, 90, 90))
        plot.getAxis(name).setTextPen(pg.mkPen(40, 40, 40))
