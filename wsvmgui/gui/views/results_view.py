"""Results view: the metrics table, the tuning surface over lambda x sigma, baselines."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .common import cache_axes, fixed_lines

#: Measures in display order; "lower is better" except the log-likelihood.
MEASURES = ("L1", "L2", "EGKL", "GKL", "log_likelihood", "cross_entropy", "error")


class ResultsView(QWidget):
    """Metrics table, tuning surface and comparison baselines.

    Signals
    -------
    baselines_requested()
    """

    baselines_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("No run yet: press Run.")
        fixed_lines(self.summary, 3)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.baseline_button = QPushButton("Compare with baselines")
        self.baseline_button.setToolTip(
            "Fit logistic regression, an SVC with Platt scaling and k nearest neighbours on "
            "the same split and add their test measures to the table"
        )
        self.baseline_button.clicked.connect(self.baselines_requested)
        self.baseline_button.setEnabled(False)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.plot = self.graphics.addPlot(
            row=0, col=0, title="tuning surface: EGKL on the tuning set"
        )
        self.plot.setMenuEnabled(False)
        cache_axes(self.plot)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.cmap = pg.colormap.get("magma")
        self.image.setLookupTable(self.cmap.getLookupTable(nPts=256))
        self.best = pg.ScatterPlotItem(
            size=18, symbol="star", pen=pg.mkPen("k"), brush=pg.mkBrush(0, 230, 120)
        )
        self.plot.addItem(self.best)
        self.colorbar = pg.ColorBarItem(
            values=(0, 1), colorMap=self.cmap, interactive=False, label="EGKL", width=14
        )
        self.colorbar.setImageItem(self.image)
        self.graphics.addItem(self.colorbar, row=0, col=1)
        self.note = pg.TextItem("", color=(80, 80, 80), anchor=(0.5, 0.5))
        self.plot.addItem(self.note)

        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.baseline_button)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self.graphics)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([600, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self._columns: dict[str, dict[str, float]] = {}
        self.tuning_table: np.ndarray | None = None

    # ------------------------------------------------------------------------ public
    def clear(self, message: str = "Running\u2026") -> None:
        self._columns = {}
        self._fill_table()
        self.summary.setText(message)
        self.image.clear()
        self.best.setData([], [])
        self.tuning_table = None
        self.baseline_button.setEnabled(False)

    def set_result(self, result) -> None:
        est = result.estimator
        parts = []
        for attr, name in (("lambda_", "\u03bb"), ("sigma_", "\u03c3")):
            value = getattr(est, attr, None)
            if value is not None and np.isfinite(value):
                parts.append(f"{name} = {value:.4g}")
        info = getattr(est, "fit_info_", {}) or {}
        if "n_fits" in info:
            parts.append(f"{info['n_fits']} weighted fits")
        if "max_kkt_residual" in info:
            parts.append(f"max KKT residual {info['max_kkt_residual']:.2g}")
        parts.append(f"{result.seconds:.2f} s")
        truth = result.split.dataset.p_true is not None
        head = (
            f"<b>{result.split.dataset.name}</b>, scheme <b>{result.settings.scheme}</b>: "
            + ", ".join(parts)
        )
        sub = (
            "Measures against the true probabilities (L1, L2, EGKL, GKL) and the labels."
            if truth
            else "No true probabilities: measures against the observed labels."
        )
        notes = "".join(f"<br>{n}" for n in result.notes)
        self.summary.setText(f"{head}<br>{sub}{notes}")
        self._columns = {name: dict(values) for name, values in result.metrics.items()}
        self._fill_table()
        self._draw_tuning(getattr(result, "tuning", None))
        self.baseline_button.setEnabled(True)

    def add_baselines(self, baselines: dict[str, dict[str, float]]) -> None:
        for name, values in baselines.items():
            self._columns[f"{name} (test)"] = dict(values)
        self._fill_table()

    def table_values(self) -> dict[str, dict[str, float]]:
        """Column -> measure -> value as shown (for tests)."""
        return {c: dict(v) for c, v in self._columns.items()}

    # ----------------------------------------------------------------------- drawing
    def _fill_table(self) -> None:
        cols = list(self._columns)
        measures = [m for m in MEASURES if any(m in v for v in self._columns.values())]
        self.table.clear()
        self.table.setColumnCount(len(cols))
        self.table.setRowCount(len(measures))
        self.table.setHorizontalHeaderLabels(cols)
        self.table.setVerticalHeaderLabels(measures)
        for i, m in enumerate(measures):
            for j, c in enumerate(cols):
                value = self._columns[c].get(m)
                item = QTableWidgetItem("" if value is None else f"{value:.4g}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)

    def _draw_tuning(self, tuning) -> None:
        if tuning is None:
            self.image.clear()
            self.best.setData([], [])
            self.tuning_table = None
            self.note.setText(
                "no tuning in this run\n(one \u03bb and one \u03c3, or a scheme "
                "without a tuning table)"
            )
            self.note.setPos(0.5, 0.5)
            self.plot.setXRange(0, 1)
            self.plot.setYRange(0, 1)
            return
        self.note.setText("")
        table = np.asarray(tuning.egkl, dtype=float)  # (L, S)
        self.tuning_table = table
        finite = np.isfinite(table)
        shown = np.where(finite, table, np.nan)
        lo = float(np.nanmin(shown)) if finite.any() else 0.0
        hi = float(np.nanmax(shown)) if finite.any() else 1.0
        hi = hi if hi > lo else lo + 1e-9
        # image rows = sigma index (y), columns = lambda index (x)
        self.image.setImage(np.nan_to_num(shown.T, nan=hi), autoLevels=False, levels=(lo, hi))
        L, S = table.shape
        self.image.setRect(QRectF(-0.5, -0.5, L, S))
        self.colorbar.setLevels((lo, hi))
        i, j = np.unravel_index(int(np.nanargmin(np.where(finite, table, np.inf))), table.shape)
        self.best.setData(x=[float(i)], y=[float(j)])
        self.plot.getAxis("bottom").setTicks(
            [[(k, f"{v:.2g}") for k, v in enumerate(tuning.lambdas)]]
        )
        sig = np.asarray(tuning.sigmas, dtype=float)
        self.plot.getAxis("left").setTicks(
            [[(k, "none" if not np.isfinite(v) else f"{v:.2g}") for k, v in enumerate(sig)]]
        )
        self.plot.setLabel("bottom", "\u03bb")
        self.plot.setLabel("left", "\u03c3")
        self.plot.setXRange(-0.5, L - 0.5, padding=0)
        self.plot.setYRange(-0.5, S - 0.5, padding=0)

    def export_item(self):
        return self.graphics.scene()
