"""Calibration view: the reliability diagram with bin counts and the proper scores.

On a design whose true probabilities are known, the scheme's bins also show their mean
true probability (hollow diamonds on a dotted line: what the observed frequency estimates,
without the labels' noise) and the table adds the L1 distance to the truth.

The scheme (and the non-crossing comparison) are measured as soon as a run ends; the
baselines (logistic regression, SVC with Platt scaling, k nearest neighbours) join when
their fit finishes.  All on the test part (the training part without one); the numbers
come from :mod:`wsvmgui.app.calibration`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...app.calibration import SCORE_LABELS, SCORE_NAMES, CalibrationEntry, Reliability
from .common import (
    PHAT,
    add_title,
    compact_rows,
    configure_plot,
    fit_legend,
    fit_table_height,
    fixed_lines,
    keep_legend_fitted,
    legend_line,
    legend_sample,
)

WHITE_PEN = pg.mkPen(255, 255, 255, width=1)
#: Delay of a drawing put off to a later event-loop turn (ms; a real timer, so input and
#: paints are handled in between).
DRAW_DELAY_MS = 2
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter

#: Curve colours: the scheme, the comparison, then the baselines.
CURVE_COLORS = [
    (20, 20, 20),
    (148, 103, 189),
    (255, 127, 14),
    (44, 160, 44),
    (127, 127, 127),
    (23, 190, 207),
]
#: Column names: the log loss under the name the Results tab gives the same number.
COLUMN_LABELS = {**SCORE_LABELS, "log_loss": "cross-entropy", "L1": "L1 to the truth"}
SCORE_TIPS = {
    "log_loss": "cross-entropy (the log loss): mean -log p-hat of the observed class, "
    "the Results tab's cross-entropy (lower is better)",
    "brier": "Brier score: mean squared error of the probabilities (lower is better)",
    "ece": "expected calibration error: bin-size weighted mean gap of the diagram",
    "auc": "area under the ROC curve (one-vs-rest mean for K > 2; higher is better)",
    "error": "misclassification rate of the most probable class",
    "L1": "mean over points of sum_k |p-hat_k - p_k| (true p known; the Results tab's L1)",
}
#: Legend text of the scheme's bins' mean true probability.
TRUE_P_LEGEND = "true p in the bin (known)"


def marker_sizes(counts: np.ndarray) -> np.ndarray:
    """Marker diameters (pixels) of bins holding ``counts`` points (shape (B,)): area in
    proportion to the count, 4 pixels for an empty bin's, 16 for the fullest's, so a bin
    of one point no longer looks like one of forty (iris: a dip to 0 on one point)."""
    counts = np.asarray(counts, dtype=float)
    top = float(counts.max()) if counts.size else 1.0
    return 4.0 + 12.0 * np.sqrt(counts / max(top, 1.0))


class CalibrationView(QWidget):
    """Reliability diagram, bin counts and a table of proper scores."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Run an analysis to see how well its probabilities are calibrated.")
        fixed_lines(self.summary, 2)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.ci.setContentsMargins(4, 12, 4, 4)  # room for overhanging end labels
        self.graphics.setMinimumSize(200, 200)
        ci = self.graphics.ci
        self.plot = pg.PlotItem()
        configure_plot(self.plot)
        self.title = add_title(self.plot, "reliability diagram")
        self.plot.setLabel("left", "observed frequency")
        # fixed ticks: both ends labelled however short the plot gets
        self.plot.getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.2, 0.4, 0.6, 0.8, 1)]])
        self.plot.setXRange(0, 1, padding=0.02)
        self.plot.setYRange(0, 1, padding=0.07)  # room for the end labels (the grid clips them)
        self.plot.setMouseEnabled(x=False, y=False)
        self.diagonal = pg.PlotDataItem(
            [0, 1], [0, 1], pen=pg.mkPen(120, 120, 120, width=1, style=Qt.PenStyle.DashLine)
        )
        self.plot.addItem(self.diagonal)
        # the scheme's bins' mean true probability (designs with known p only)
        self.truth = pg.PlotDataItem(
            [],
            [],
            pen=pg.mkPen(20, 20, 20, width=1.5, style=Qt.PenStyle.DotLine),
            symbol="d",
            symbolSize=9,
            symbolBrush=pg.mkBrush(255, 255, 255),
            symbolPen=pg.mkPen(20, 20, 20, width=1.5),
        )
        self.truth.setZValue(2)
        self.truth.setVisible(False)
        self.plot.addItem(self.truth)
        self.counts = pg.PlotItem()
        configure_plot(self.counts)
        self.counts.setXLink(self.plot)
        self.counts.setMouseEnabled(x=False, y=False)
        self.counts.setLabel("left", "points")
        self.counts.setMaximumHeight(110)
        self.count_bars = pg.BarGraphItem(
            x=[], height=[], width=0.09, brush=pg.mkBrush(90, 90, 90, 160)
        )
        self.counts.addItem(self.count_bars)
        self.count_text: list[pg.TextItem] = []
        self.legend = pg.LegendItem(labelTextColor=(30, 30, 30), colCount=1)
        keep_legend_fitted(self.graphics, self.legend)
        ci.addItem(self.plot, row=0, col=0)
        ci.addItem(self.counts, row=1, col=0)
        ci.addItem(self.legend, row=2, col=0)
        ci.layout.setRowStretchFactor(0, 3)
        ci.layout.setRowStretchFactor(1, 1)
        self.curves: list[pg.PlotDataItem] = []

        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        compact_rows(self.table)
        fit_table_height(self.table)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.table)
        self._main: list[CalibrationEntry] = []
        self._baselines: list[CalibrationEntry] = []
        self._part = "test"
        self._dirty = False
        self._legend_key: tuple | None = None

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        fit_table_height(self.table)

    # ------------------------------------------------------------------------ public
    def clear(self) -> None:
        self._main, self._baselines = [], []
        self.summary.setText("Run an analysis to see how well its probabilities are calibrated.")
        self._draw()

    def set_result(self, result) -> None:
        self._main = list(result.calibration)
        self._baselines = []
        self._part = result.calibration_part
        self._draw()

    def add_baselines(self, baselines) -> None:
        """Add the baselines' entries now and draw them in a later event-loop turn (the
        results table is filled in this one; together they would block it too long)."""
        self._baselines = list(baselines.calibration)
        self._dirty = True
        QTimer.singleShot(DRAW_DELAY_MS, self, self._draw_if_dirty)

    def set_selection(self, row: int) -> None:
        """Nothing to mark: the diagram bins every row of the measured part."""

    def export_item(self) -> QWidget:
        return self.graphics

    def _draw_if_dirty(self) -> None:
        if self._dirty:
            self._draw()

    def entries(self) -> list[CalibrationEntry]:
        return self._main + self._baselines

    def table_values(self) -> dict[str, dict[str, float]]:
        """Estimator -> score -> value as shown (for tests)."""
        return {e.name: dict(e.scores) for e in self.entries()}

    # ----------------------------------------------------------------------- drawing
    def _curve(self, i: int) -> pg.PlotDataItem:
        while len(self.curves) <= i:
            curve = pg.PlotDataItem(symbol="o", symbolSize=7)
            self.plot.addItem(curve)
            self.curves.append(curve)
        return self.curves[i]

    def showEvent(self, ev) -> None:  # noqa: N802 - Qt override
        super().showEvent(ev)
        if self._dirty:
            self._draw()

    def _draw(self) -> None:
        # Drawn when shown: the baselines arrive while another view is in front, and
        # laying out a legend costs tens of milliseconds on the GUI thread.
        if not self.isVisible():
            self._dirty = True
            return
        self._dirty = False
        entries = self.entries()
        known = bool(entries) and entries[0].reliability.true_mean is not None
        # the truth flag first: baselines arriving only append to the key
        key = (known, *(e.name for e in entries))
        if key != self._legend_key:
            old = self._legend_key or ()
            # index of the first entry to add to the legend
            start = len(old) - 1 if old and key[: len(old)] == old else -1
            if start < 0:
                self.legend.clear()
                self.legend.addItem(self.diagonal, "perfectly calibrated")
                self.legend.addItem(
                    legend_sample("o", pg.mkBrush(120, 120, 120), WHITE_PEN, 12),
                    "marker area: points in the bin",
                )
                if known:
                    self.legend.addItem(self.truth, TRUE_P_LEGEND)
                start = 0
            self._legend_key = key
            for i, entry in enumerate(entries[start:], start):
                color = CURVE_COLORS[i % len(CURVE_COLORS)]
                pen = pg.mkPen(*color, width=3 if i == 0 else 2)
                self.legend.addItem(legend_line(pen), entry.name)
            fit_legend(self.legend, self.graphics.viewport().width())
        for i, entry in enumerate(entries):
            rel = entry.reliability
            full = rel.counts > 0
            color = CURVE_COLORS[i % len(CURVE_COLORS)]
            curve = self._curve(i)
            if getattr(curve, "wsvm_shown", None) is rel and curve.isVisible():
                continue  # the same entry as before (baselines arriving): nothing to redo
            curve.wsvm_shown = rel
            pen_width = 3 if i == 0 else 2
            curve.setData(  # one update of the item, not one per style
                rel.mean_predicted[full],
                rel.observed[full],
                pen=pg.mkPen(*color, width=pen_width),
                symbolBrush=pg.mkBrush(*color),
                symbolPen=WHITE_PEN,
                symbolSize=marker_sizes(rel.counts[full]),
            )
            curve.setVisible(True)
        for curve in self.curves[len(entries) :]:
            curve.wsvm_shown = None
            curve.setData([], [])
            curve.setVisible(False)
        for text in self.count_text:
            text.setVisible(False)
        if not entries:
            self.count_bars.setOpts(x=[], height=[])
            self.truth.setData([], [])
            self.truth.setVisible(False)
            self._fill_table([])
            return
        rel = entries[0].reliability
        self._draw_truth(rel)
        centres = 0.5 * (rel.edges[:-1] + rel.edges[1:])
        width = float(rel.edges[1] - rel.edges[0]) * 0.9
        self.count_bars.setOpts(x=centres, height=rel.counts, width=width)
        top = max(int(rel.counts.max()), 1)
        self.counts.setYRange(0, top * 1.6, padding=0)
        while len(self.count_text) < centres.size:
            text = pg.TextItem("", color=(40, 40, 40), anchor=(0.5, 1.0))
            self.counts.addItem(text)
            self.count_text.append(text)
        for text, x, c in zip(self.count_text, centres, rel.counts, strict=False):
            text.setText(str(int(c)) if c else "")
            text.setPos(float(x), float(c) + top * 0.04)
            text.setVisible(bool(c))
        self._describe(entries, known)
        self._fill_table(entries)

    def _draw_truth(self, rel: Reliability) -> None:
        """The bins' mean true probability of ``rel`` (known truth only)."""
        if rel.true_mean is not None:
            full = rel.counts > 0
            self.truth.setData(rel.mean_predicted[full], rel.true_mean[full])
            self.truth.setVisible(True)
        else:
            self.truth.setData([], [])
            self.truth.setVisible(False)

    def _describe(self, entries: list[CalibrationEntry], known: bool) -> None:
        """Axis title, plot title and the summary line of ``entries``."""
        rel = entries[0].reliability
        axis_label = (
            f"{PHAT} of class {rel.label.split('(', 1)[-1].rstrip(')')}"
            if rel.kind == "positive"
            else f"largest {PHAT} (the predicted class)"
        )
        self.counts.setLabel("bottom", axis_label)
        self.title.setText(
            "reliability diagram"
            + (" (top label)" if rel.kind == "top-label" else "")
            + f", {self._part} part"
        )
        what = (
            f"share of the class among the {self._part} points in each bin"
            if rel.kind == "positive"
            else f"share of {self._part} points whose label is the predicted class"
        )
        self.summary.setText(
            f"{len(entries)} estimator(s) on the {self._part} part "
            f"({int(rel.counts.sum())} points, {rel.counts.size} equal bins): x = mean "
            f"{PHAT} in the bin, y = {what}; bars: points per bin of {entries[0].name}"
            + ("; diamonds: the mean true p in its bins." if known else ".")
        )

    def _fill_table(self, entries: list[CalibrationEntry]) -> None:
        self.table.clear()
        truth = any("L1" in e.scores for e in entries)
        columns = [*SCORE_NAMES, *(["L1"] if truth else []), "n"]
        self.table.setColumnCount(len(columns))
        self.table.setRowCount(len(entries))
        for j, name in enumerate(columns):
            item = QTableWidgetItem(COLUMN_LABELS.get(name, name))
            item.setToolTip(SCORE_TIPS.get(name, "points measured"))
            self.table.setHorizontalHeaderItem(j, item)
        self.table.setVerticalHeaderLabels([e.name for e in entries])
        for i, entry in enumerate(entries):
            for j, name in enumerate(columns):
                value = entry.scores.get(name)
                if value is None or not np.isfinite(value):
                    text = "n/a"
                elif name == "n":
                    text = f"{int(value)}"
                else:
                    text = f"{value:.4f}"
                item = QTableWidgetItem(text)
                item.setTextAlignment(RIGHT)
                if name == "log_loss" and entry.scores.get("n_zero", 0) > 0:
                    item.setToolTip(
                        f"{int(entry.scores['n_zero'])} point(s) got probability 0 for their "
                        "class (floored at 1e-15): they dominate the cross-entropy"
                    )
                self.table.setItem(i, j, item)
        fit_table_height(self.table)
