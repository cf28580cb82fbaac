"""Probability bars: stacked p_hat of each point, grouped by true class.

Hovering a bar shows its probabilities and brackets; clicking selects the point.  Where
the true probabilities are known, short black dashes mark their cumulative values.  A run
with per-point intervals (binary, with a calibration) draws each point's interval of the
first class's probability as a light band inside its bar, around the border between the
bar's two stacked parts.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ...app.view_data import RunResult
from ...estimators.report import INTERVAL_HI, INTERVAL_LEVEL, INTERVAL_LO
from .common import (
    PHAT_PLAIN,
    class_qcolor,
    configure_plot,
    fit_legend,
    fixed_lines,
    keep_legend_fitted,
    legend_sample,
    phat,
)

GAP = 3  # empty bar slots between class groups
#: The per-point intervals: a light band inside each bar.
INTERVAL_BRUSH = pg.mkBrush(255, 255, 255, 170)
INTERVAL_PEN = pg.mkPen(40, 40, 40, 200, width=1)


class BarsView(QWidget):
    """Stacked probability bars of the chosen rows.

    Signals
    -------
    point_clicked(row)
    """

    point_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows_combo = QComboBox()
        self.rows_combo.addItems(["test", "train", "tune", "all"])
        self.rows_combo.setToolTip("Which rows to show")
        self.hover = QLabel("Hover over a bar for its probabilities and brackets.")
        fixed_lines(self.hover, 2)
        self.hover.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("rows:"))
        controls.addWidget(self.rows_combo)
        controls.addWidget(self.hover, 1)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.ci.setContentsMargins(4, 12, 4, 4)  # room for overhanging end labels
        self.graphics.setMinimumSize(200, 200)
        self.plot = self.graphics.addPlot(row=0, col=0)
        configure_plot(self.plot)
        self.plot.setLabel("left", "estimated probability (stacked)")
        self.plot.setLabel("bottom", "points, grouped by true class")
        self.plot.setYRange(0, 1.06, padding=0)
        self.plot.getAxis("left").setTicks([[(v, f"{v:.1f}") for v in np.linspace(0, 1, 6)]])
        self.plot.setMouseEnabled(x=True, y=False)
        # The legend sits in its own row under the plot, clear of the bars and labels.
        self.legend = pg.LegendItem(labelTextColor=(30, 30, 30), colCount=1)
        keep_legend_fitted(self.graphics, self.legend)
        self.graphics.addItem(self.legend, row=1, col=0)
        self.bars: list[pg.BarGraphItem] = []
        self.truth = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(0, 0, 0, 220, width=2))
        self.truth.setZValue(3)
        self.plot.addItem(self.truth)
        self.marker = pg.ScatterPlotItem(
            size=14, symbol="t", pen=pg.mkPen("k"), brush=pg.mkBrush(0, 0, 0)
        )
        self.marker.setZValue(4)
        self.plot.addItem(self.marker)
        # a light band inside each bar, visible on every class colour
        self.intervals = pg.BarGraphItem(
            x=[], height=[], y0=[], width=0.4, brush=INTERVAL_BRUSH, pen=INTERVAL_PEN
        )
        self.intervals.setZValue(3.5)
        self.intervals.setVisible(False)
        self.plot.addItem(self.intervals)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(controls)
        layout.addWidget(self.graphics, 1)

        self._result: RunResult | None = None
        self._rows = np.empty(0, dtype=int)  # data row of each bar slot (-1 in gaps)
        self._x = np.empty(0)
        self._selected = -1
        self.rows_combo.currentIndexChanged.connect(self._draw)
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        self.plot.scene().sigMouseClicked.connect(self._on_click)

    # ------------------------------------------------------------------------ public
    def set_result(self, result) -> None:
        self._result = result
        if result.split.test.size == 0 and self.rows_combo.currentText() == "test":
            self.rows_combo.setCurrentText("train")
        self._draw()

    def clear(self) -> None:
        self._result = None
        self._draw()

    def set_selection(self, row: int) -> None:
        self._selected = row
        self._draw_marker()

    def bar_arrays(self) -> dict[str, np.ndarray]:
        """What the plot items hold: bar x, heights and bases per class, rows (for tests)."""
        heights = [np.asarray(b.opts["height"]) for b in self.bars if b.isVisible()]
        y0 = [np.asarray(b.opts["y0"]) for b in self.bars if b.isVisible()]
        out = {
            "x": self._x,
            "rows": self._rows[self._rows >= 0],
            "heights": np.array(heights),
            "y0": np.array(y0),
        }
        if self.intervals.isVisible():
            o = self.intervals.opts
            out["interval_x"] = np.asarray(o["x"])
            out["interval_lo"] = np.asarray(o["y0"])
            out["interval_hi"] = np.asarray(o["y0"]) + np.asarray(o["height"])
        return out

    # ----------------------------------------------------------------------- drawing
    def _ensure_bars(self, K: int, classes, intervals: bool = False) -> None:
        while len(self.bars) < K:
            bar = pg.BarGraphItem(x=[], height=[], width=0.9, y0=[])
            self.plot.addItem(bar)
            self.bars.append(bar)
        key = (K, tuple(str(c) for c in classes), intervals)
        if getattr(self, "_legend_key", None) == key:
            return
        self._legend_key = key
        self.legend.clear()
        for k, bar in enumerate(self.bars):
            visible = k < K
            bar.setVisible(visible)
            if visible:
                color = class_qcolor(k, K, 230)
                bar.setOpts(brush=pg.mkBrush(color), pen=pg.mkPen(color.darker(130)))
                self.legend.addItem(bar, phat(classes[k]))
        if intervals:
            self.legend.addItem(
                legend_sample("s", INTERVAL_BRUSH, INTERVAL_PEN, 12),
                f"{INTERVAL_LEVEL:.0%} interval of {phat(classes[0])}",
            )
        fit_legend(self.legend, self.graphics.viewport().width())

    def _draw(self) -> None:
        res = self._result
        if res is None:
            for bar in self.bars:
                bar.setOpts(x=[], height=[], y0=[])
            self.truth.setData([], [])
            self.intervals.setVisible(False)
            self._rows = np.empty(0, dtype=int)
            self._x = np.empty(0)
            self._draw_marker()
            return
        ds = res.split.dataset
        K = ds.n_classes
        choice = self.rows_combo.currentText()
        parts = res.split.part_of_rows()
        rows = np.arange(parts.size) if choice == "all" else np.flatnonzero(parts == choice)
        proba = res.report.proba
        cls = np.searchsorted(ds.classes, ds.y)
        slots: list[int] = []
        ticks: list[tuple[float, str]] = []
        for k in range(K):
            members = rows[cls[rows] == k]
            # within a class, most confident first
            members = members[np.argsort(-proba[members, k], kind="stable")]
            if members.size:
                if slots:
                    slots += [-1] * GAP
                start = len(slots)
                slots += list(members)
                ticks.append(
                    (0.5 * (start + len(slots) - 1), f"true {ds.classes[k]} ({members.size})")
                )
        slot_rows = np.asarray(slots, dtype=int)
        x_all = np.arange(slot_rows.size, dtype=float)
        real = slot_rows >= 0
        self._rows, self._x = slot_rows, x_all[real]
        P = proba[slot_rows[real]]
        cum = np.cumsum(P, axis=1)
        bounds = _intervals(res.report, ds.classes)
        self._ensure_bars(K, ds.classes, bounds is not None)
        width = 0.9 if real.sum() < 400 else 1.0
        for k in range(K):
            base = cum[:, k] - P[:, k]
            self.bars[k].setOpts(x=self._x, height=P[:, k], y0=base, width=width)
        self._draw_intervals(bounds, slot_rows[real], width)
        if ds.p_true is not None and real.any():
            tcum = np.cumsum(ds.p_true[slot_rows[real]], axis=1)[:, :-1]  # (m, K-1)
            xs = np.repeat(self._x, K - 1)
            ys = tcum.ravel()
            x_pairs = np.column_stack([xs - 0.45, xs + 0.45]).ravel()
            y_pairs = np.repeat(ys, 2)
            self.truth.setData(x_pairs, y_pairs, connect="pairs")
            self.truth.setVisible(True)
        else:
            self.truth.setData([], [])
        self.plot.setXRange(-1, max(slot_rows.size, 1), padding=0.01)
        # ticks name the groups (a numeric axis would count the empty slots between them)
        self.plot.getAxis("bottom").setTicks([ticks, []])
        self.plot.setLabel(
            "bottom",
            f"{choice} points ({int(real.sum())}), grouped by true class, most confident first"
            + ("; black dashes: true p" if ds.p_true is not None else ""),
        )
        self._draw_marker()

    def _draw_intervals(self, bounds, rows: np.ndarray, width: float) -> None:
        """A light band from lo to hi of the first class's interval in each bar (it holds
        the border of the bar's two stacked parts, the first class's estimate)."""
        if bounds is None or rows.size == 0:
            self.intervals.setVisible(False)
            return
        lo, hi = bounds[0][rows], bounds[1][rows]
        self.intervals.setOpts(
            x=self._x, y0=lo, height=np.maximum(hi - lo, 0.0), width=0.45 * width
        )
        self.intervals.setVisible(True)

    def _draw_marker(self) -> None:
        hit = (
            np.flatnonzero(self._rows == self._selected)
            if self._selected >= 0
            else np.empty(0, dtype=int)
        )
        if len(hit):
            self.marker.setData(x=[float(hit[0])], y=[1.03])
        else:
            self.marker.setData([], [])

    # ---------------------------------------------------------------------- hovering
    def row_at(self, x: float) -> int:
        """Data row of the bar at plot coordinate ``x`` (-1 if none)."""
        i = int(round(x))
        if 0 <= i < self._rows.size:
            return int(self._rows[i])
        return -1

    def describe_row(self, row: int, result=None) -> str:
        """One line with the row's label, probabilities, brackets and truth."""
        res = result if result is not None else self._result
        if res is None:
            return ""
        ds = res.split.dataset
        rep = res.report
        parts = []
        for k, c in enumerate(ds.classes):
            text = f"{PHAT_PLAIN}({c}) = {rep.proba[row, k]:.3f}"
            lo, hi = rep.extra.get(f"lo_{c}"), rep.extra.get(f"hi_{c}")
            if lo is not None and hi is not None:
                text += f" [{float(lo[row]):.3f}, {float(hi[row]):.3f}]"
            ilo, ihi = rep.extra.get(f"{INTERVAL_LO}{c}"), rep.extra.get(f"{INTERVAL_HI}{c}")
            if ilo is not None and ihi is not None:
                text += (
                    f" ({INTERVAL_LEVEL:.0%} interval {float(ilo[row]):.3f} to "
                    f"{float(ihi[row]):.3f})"
                )
            if ds.p_true is not None:
                text += f" (true {ds.p_true[row, k]:.3f})"
            parts.append(text)
        return f"row {row}, label {ds.y[row]}: " + "; ".join(parts)

    def _on_move(self, pos) -> None:
        if self._result is None or not self.plot.sceneBoundingRect().contains(pos):
            return
        point = self.plot.vb.mapSceneToView(pos)
        row = self.row_at(point.x())
        if row >= 0 and 0 <= point.y() <= 1.0:
            text = self.describe_row(row)
            self.hover.setText(text)
            self.graphics.setToolTip(text)

    def _on_click(self, event) -> None:
        if self._result is None:
            return
        pos = event.scenePos()
        if not self.plot.sceneBoundingRect().contains(pos):
            return
        row = self.row_at(self.plot.vb.mapSceneToView(pos).x())
        if row >= 0:
            self.point_clicked.emit(row)

    def add_baselines(self, baselines) -> None:
        """Nothing to add: the baselines are measured in the results and calibration views."""

    def export_item(self) -> QWidget:
        return self.graphics


def _intervals(report, classes) -> tuple[np.ndarray, np.ndarray] | None:
    """The per-point interval (lo, hi), each (n,), of the first class's probability when
    ``report`` carries intervals for a two-class result; None otherwise."""
    if len(classes) != 2:
        return None
    lo = report.extra.get(f"{INTERVAL_LO}{classes[0]}")
    hi = report.extra.get(f"{INTERVAL_HI}{classes[0]}")
    if lo is None or hi is None:
        return None
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
