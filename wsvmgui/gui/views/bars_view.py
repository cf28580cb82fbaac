"""Probability bars: stacked p_hat of each point, grouped by true class.

Hovering a bar shows its probabilities and brackets; clicking selects the point.  Where
the true probabilities are known, short black dashes mark their cumulative values.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ...app.view_data import RunResult
from .common import (
    PHAT_PLAIN,
    class_qcolor,
    configure_plot,
    fit_legend,
    fixed_lines,
    keep_legend_fitted,
    phat,
)

GAP = 3  # empty bar slots between class groups


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
        return {
            "x": self._x,
            "rows": self._rows[self._rows >= 0],
            "heights": np.array(heights),
            "y0": np.array(y0),
        }

    # ----------------------------------------------------------------------- drawing
    def _ensure_bars(self, K: int, classes) -> None:
        while len(self.bars) < K:
            bar = pg.BarGraphItem(x=[], height=[], width=0.9, y0=[])
            self.plot.addItem(bar)
            self.bars.append(bar)
        key = (K, tuple(str(c) for c in classes))
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
        fit_legend(self.legend, self.graphics.viewport().width())

    def _draw(self) -> None:
        res = self._result
        if res is None:
            for bar in self.bars:
                bar.setOpts(x=[], height=[], y0=[])
            self.truth.setData([], [])
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
        self._ensure_bars(K, ds.classes)
        width = 0.9 if real.sum() < 400 else 1.0
        for k in range(K):
            base = cum[:, k] - P[:, k]
            self.bars[k].setOpts(x=self._x, height=P[:, k], y0=base, width=width)
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
