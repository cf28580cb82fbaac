"""Results view: the metrics table, the tuning surface over lambda x sigma, baselines."""

from __future__ import annotations

import textwrap
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...app.tuning_view import used_values
from ..messages import app_wording
from .common import add_title, cache_axes, compact_rows, fit_table_height, set_bar_title

#: Measures in display order; "lower is better" except the log-likelihood.
MEASURES = ("L1", "L2", "EGKL", "GKL", "log_likelihood", "cross_entropy", "error")
#: How the table's rows read, and what each measure is (tooltips).
MEASURE_LABELS = {
    "L1": ("L1 to the truth", "mean over points of sum_k |p-hat_k - p_k| (true p known)"),
    "L2": ("L2 to the truth", "mean over points of sum_k (p-hat_k - p_k)^2 (true p known)"),
    "EGKL": ("EGKL", "expected generalised Kullback-Leibler loss to the true p"),
    "GKL": ("GKL", "generalised Kullback-Leibler loss to the true p"),
    "log_likelihood": ("log-likelihood", "sum over points of log p-hat(observed class)"),
    "cross_entropy": ("cross-entropy", "mean of -log p-hat(observed class): the log loss"),
    "error": ("error rate", "share of points whose most probable class is not the observed one"),
}

#: Colour of the tuning cells without a score (never tried, or the fit failed).
MISSING_GREY = (200, 200, 200)
#: Height of the run summary in text lines: as many as its text wraps to, within these.
SUMMARY_MIN_LINES = 2
SUMMARY_MAX_LINES = 12


class ResultsView(QWidget):
    """Metrics table, tuning surface and comparison baselines.

    Signals
    -------
    baselines_requested()
    """

    baselines_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._build_summary()
        self.baseline_button = QPushButton("Fit baselines again")
        self.baseline_button.setToolTip(
            "Fit logistic regression, an SVC with Platt scaling and k nearest neighbours on "
            "the same split and add their test measures to the table"
        )
        self.baseline_button.clicked.connect(self.baselines_requested)
        self.baseline_button.setEnabled(False)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumWidth(160)
        compact_rows(self.table)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.ci.setContentsMargins(4, 18, 4, 14)  # room for overhanging end labels
        self.graphics.setMinimumSize(200, 200)
        self.plot = self.graphics.addPlot(row=0, col=0)
        self.title = add_title(self.plot, "tuning: EGKL")
        self.title.setToolTip("EGKL of each penalty and width on the tuning data")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMinimumSize(100, 100)
        cache_axes(self.plot)
        self.image = pg.ImageItem(axisOrder="row-major")
        # grey under the cells without a score (NaN: transparent)
        self.plot.getViewBox().setBackgroundColor(MISSING_GREY)
        self.plot.addItem(self.image)
        self.cmap = pg.colormap.get("magma")
        self.image.setLookupTable(self.cmap.getLookupTable(nPts=256))
        self.best = pg.ScatterPlotItem(
            size=18, symbol="star", pen=pg.mkPen("k"), brush=pg.mkBrush(0, 230, 120)
        )
        self.plot.addItem(self.best)
        self.colorbar = pg.ColorBarItem(
            values=(0, 1), colorMap=self.cmap, interactive=False, width=12
        )
        set_bar_title(self.colorbar, "EGKL")
        self.colorbar.getAxis("right").setWidth(40)
        self.colorbar.setImageItem(self.image)
        self.graphics.addItem(self.colorbar, row=0, col=1)
        self._surfaces: list = []
        self._tick_labels: tuple[list[str], list[str]] | None = None
        self._labelled: dict[str, list[str]] = {}  # axis -> the labels it shows
        self.plot.getViewBox().sigResized.connect(self._thin_ticks)
        self.table.installEventFilter(self)  # its height follows its width's scroll bar
        self.no_table = QLabel("")
        self.no_table.setWordWrap(True)
        self.no_table.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_table.setMinimumWidth(120)
        self.tuning_stack = QStackedWidget()
        self.tuning_stack.addWidget(self.graphics)
        self.tuning_stack.addWidget(self.no_table)
        self.surface_label = QLabel("tuning of")
        self.surface_combo = QComboBox()
        self.surface_combo.setToolTip("The sub-problem whose tuning table is drawn")
        self.surface_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.surface_combo.setMinimumContentsLength(8)
        self.surface_combo.currentIndexChanged.connect(self._draw_surface)
        picker = QHBoxLayout()
        picker.setContentsMargins(0, 0, 0, 0)
        picker.addWidget(self.surface_label)
        picker.addWidget(self.surface_combo, 1)
        self.surface_label.setVisible(False)
        self.surface_combo.setVisible(False)
        tuning_box = QWidget()
        tuning_layout = QVBoxLayout(tuning_box)
        tuning_layout.setContentsMargins(0, 0, 0, 0)
        tuning_layout.addLayout(picker)
        tuning_layout.addWidget(self.tuning_stack, 1)

        top = QHBoxLayout()
        top.addWidget(self.summary_area, 1)
        top.addWidget(self.baseline_button)
        # The table above the tuning surface, as high as its rows: side by side, a
        # 1024-pixel window hid the baselines' columns behind a scroll bar and left blank
        # rows under a table of three to seven measures.
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table)
        layout.addWidget(tuning_box, 1)
        self._columns: dict[str, dict[str, float]] = {}
        self.tuning_table: np.ndarray | None = None

    def _build_summary(self) -> None:
        """The run's summary in a scroll area as high as its text, from 2 up to
        ``SUMMARY_MAX_LINES`` lines, set when the text or the width changes (not at every
        paint); beyond that it scrolls.  A fixed six lines made breast cancer's
        calibration note scroll at 1024 pixels."""
        self.summary = QLabel("No run yet: press Run.")
        self.summary.setWordWrap(True)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_area = QScrollArea()
        self.summary_area.setWidget(self.summary)
        self.summary_area.setWidgetResizable(True)
        self.summary_area.setFrameShape(QScrollArea.Shape.NoFrame)
        self.summary_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.summary_area.installEventFilter(self)
        self._fit_summary()

    # ------------------------------------------------------------------------ public
    def clear(self, message: str = "No result: press Run.") -> None:
        self._columns = {}
        self._fill_table()
        self.summary.setText(message)
        self._fit_summary()
        self._draw_tuning(None)
        self.no_table.setText("")
        self.baseline_button.setEnabled(False)

    def set_result(self, result) -> None:
        est = result.estimator
        parts = used_values(est.fitted_summary(), list(result.tunings))
        info = est.fit_info_
        if "n_fits" in info:
            parts.append(f"{info['n_fits']} weighted fits")
        if "max_kkt_residual" in info:
            parts.append(f"max KKT residual {info['max_kkt_residual']:.2g}")
        parts.append(f"{result.seconds:.2f} s")
        truth = result.split.dataset.p_true is not None
        head = (
            f"<b>{escape(result.split.dataset.name)}</b>, scheme "
            f"<b>{result.settings.scheme}</b>: " + ", ".join(parts)
        )
        sub = (
            "Measures against the true probabilities (L1, L2, EGKL, GKL) and the labels."
            if truth
            else "No true probabilities: measures against the observed labels."
        )
        self.summary.setText(  # the run's notes: the fit's engine and tuning notes first
            f"{head}<br>{sub}" + "".join(f"<br>{escape(app_wording(n))}" for n in result.notes)
        )
        self._fit_summary()
        self._columns = {name: dict(values) for name, values in result.metrics.items()}
        for part, values in result.comparison_metrics.items():
            if part != "tune":
                self._columns[f"non-crossing ({part})"] = dict(values)
        self._fill_table()
        self._draw_tuning(result)
        self.baseline_button.setEnabled(True)

    def add_baselines(self, baselines) -> None:
        """Add the baselines' measures (a :class:`wsvmgui.app.view_data.Baselines`)."""
        for name, values in baselines.metrics.items():
            self._columns[f"{name} ({baselines.part})"] = dict(values)
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
        # names wrapped at words: "logistic regression (test)" is wider than its numbers
        self.table.setHorizontalHeaderLabels([_header(c) for c in cols])
        self.table.setVerticalHeaderLabels([MEASURE_LABELS.get(m, (m, ""))[0] for m in measures])
        for i, m in enumerate(measures):
            header = self.table.verticalHeaderItem(i)
            if header is not None:
                header.setToolTip(MEASURE_LABELS.get(m, (m, m))[1])
        for i, m in enumerate(measures):
            for j, c in enumerate(cols):
                value = self._columns[c].get(m)
                item = QTableWidgetItem("" if value is None else f"{value:.4g}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        fit_table_height(self.table)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if watched is self.table and event.type() == QEvent.Type.Resize:
            fit_table_height(self.table)  # a scroll bar comes and goes with the width
        if (
            watched is self.summary_area
            and event.type() == QEvent.Type.Resize
            and event.size().width() != event.oldSize().width()
        ):
            # the new width: the area's viewport is resized only after this filter
            self._fit_summary(event.size().width())
        return super().eventFilter(watched, event)

    def _fit_summary(self, width: int | None = None) -> None:
        """The summary box as high as its text wrapped at ``width`` pixels (default: the
        box's), from ``SUMMARY_MIN_LINES`` to ``SUMMARY_MAX_LINES`` lines; it scrolls
        beyond."""
        line = self.summary.fontMetrics().lineSpacing()
        if width is None:
            width = self.summary_area.contentsRect().width()  # no frame, no scroll bar
        width = max(width, 100)
        needed = self.summary.heightForWidth(width)
        lo, hi = line * SUMMARY_MIN_LINES + 2, line * SUMMARY_MAX_LINES + 2
        height = int(min(max(needed, lo), hi))
        if height != self.summary_area.height():
            self.summary_area.setFixedHeight(height)

    def _draw_tuning(self, result=None) -> None:
        """The tuning surfaces of ``result``'s estimator; a note when it keeps none."""
        self._surfaces = [] if result is None else list(result.tunings)
        self.surface_combo.blockSignals(True)
        self.surface_combo.clear()
        for s in self._surfaces:
            self.surface_combo.addItem(s.name or "the ladder")
        self.surface_combo.blockSignals(False)
        many = len(self._surfaces) > 1
        self.surface_label.setVisible(many)
        self.surface_combo.setVisible(many)
        if not self._surfaces:
            self.image.clear()
            self.best.setData([], [])
            self.tuning_table = None
            self._tick_labels = None
            self.no_table.setText(_no_table_note(result))
            self.tuning_stack.setCurrentWidget(self.no_table)
            return
        self.tuning_stack.setCurrentWidget(self.graphics)
        self._draw_surface(0)

    def _draw_surface(self, index: int) -> None:
        if not 0 <= index < len(self._surfaces):
            return
        surface = self._surfaces[index]
        table = np.asarray(surface.score, dtype=float)  # (L, S)
        self.tuning_table = table
        finite = np.isfinite(table)
        # Cells without a score (a staged search that never tried them, a failed fit) are
        # grey, not the colour of the worst score, which they were painted before.
        missing = not finite.all()
        self.title.setText(
            f"{surface.score_name} (\u2605 chosen" + (", grey: no score)" if missing else ")")
        )
        self.title.setToolTip(
            f"{surface.score_name} of each candidate on the tuning data; the final fit keeps "
            "the chosen C = 1 / (2 n \u03bb), so its \u03bb (above the table) is for its own n"
            + (
                f"; {int((~finite).sum())} of {table.size} cells grey: never tried (a staged "
                "search) or the fit failed"
                if missing
                else ""
            )
        )
        set_bar_title(self.colorbar, surface.score_name)
        shown = np.where(finite, table, np.nan)
        lo = float(np.nanmin(shown)) if finite.any() else 0.0
        hi = float(np.nanmax(shown)) if finite.any() else 1.0
        hi = hi if hi > lo else lo + 1e-9
        # image rows = second parameter (y), columns = first parameter (x); NaN transparent
        self.image.setImage(shown.T, autoLevels=False, levels=(lo, hi))
        L, S = table.shape
        self.image.setRect(QRectF(-0.5, -0.5, L, S))
        self.colorbar.setLevels((lo, hi))
        self.best.setData(x=[float(surface.best[0])], y=[float(surface.best[1])])
        self._tick_labels = (
            [_short(v) for v in surface.xs],
            ["none" if not np.isfinite(v) else _short(v) for v in surface.ys],
        )
        self._thin_ticks()
        self.plot.setLabel("bottom", tuning_axis_label(surface.x_name, surface.xs))
        self.plot.setLabel("left", surface.y_name or "no width")
        self.plot.setXRange(-0.5, L - 0.5, padding=0)
        self.plot.setYRange(-0.5, S - 0.5, padding=0)

    def shown_ticks(self, axis: str) -> list[str]:
        """The labelled ticks of the tuning surface's ``axis`` ("bottom" or "left")."""
        return list(self._labelled.get(axis, []))

    def _thin_ticks(self) -> None:
        """Label every k-th grid value so the labels do not run into each other (at
        1024 pixels seven penalties read "5e-3e-5e-4e-5e-5"); the others keep a tick."""
        labels = self._tick_labels
        if labels is None:
            return
        box = self.plot.getViewBox()
        metrics = self.fontMetrics()
        room = {"bottom": box.width(), "left": box.height()}
        for axis, texts in zip(("bottom", "left"), labels, strict=True):
            if axis == "bottom":
                need = max((metrics.horizontalAdvance(t) for t in texts), default=0) + 10
            else:
                need = metrics.height() + 4
            n = len(texts)
            step = max(1, int(np.ceil(n * need / room[axis]))) if room[axis] > 0 else 1
            major = [(k, t) for k, t in enumerate(texts) if k % step == 0]
            minor = [(k, "") for k in range(n) if k % step]
            self.plot.getAxis(axis).setTicks([major, minor])
            self._labelled[axis] = [t for _, t in major]

    def set_selection(self, row: int) -> None:
        """Nothing to mark: the view shows measures of the whole run."""

    def export_item(self) -> QWidget:
        return self.graphics


def _no_table_note(result) -> str:
    """Why there is no tuning surface: nothing tuned, or a scheme that keeps no table."""
    if result is None:
        return "no tuning table"
    s = result.settings
    n_lam = len(s.lambdas) if s.lambdas is not None else 7
    n_sig = 1 if s.kernel != "rbf" else (len(s.sigmas) if s.sigmas is not None else 6)
    if n_lam * n_sig <= 1:
        return "not tuned: one \u03bb and one \u03c3 given"
    fitted = result.estimator.fitted_summary()
    chosen = [
        f"{name} = {fitted[key]:.3g}"
        for key, name in (("lambda", "\u03bb"), ("sigma", "\u03c3"))
        if fitted[key] is not None
    ]
    if not chosen:  # no lambda or sigma of its own (Probing's learner): the grid of the
        # settings was never searched, and "tuned over 7 x 6 values" said it was
        return "no \u03bb or \u03c3 in this fit\n" + (
            "(its tuning keeps no table of the scores)"
            if fitted.get("tuned")
            else "(nothing tuned)"
        )
    tuned = f"tuned over {n_lam} \u00d7 {n_sig} values"
    if chosen:
        tuned += ": " + ", ".join(chosen)
    return tuned + "\n(this scheme keeps no table of the scores)"


def _header(column: str) -> str:
    """A column name wrapped at words, its part on a line of its own:
    ``k nearest / neighbours / (k=15) / (test)``."""
    name, sep, part = column.rpartition(" (")
    if not sep:
        name, part = column, ""
    lines = textwrap.wrap(name, 12, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines + ([f"({part}"] if part else []))


def _short(v: float) -> str:
    """A tick label of at most 5 characters: ``0.017``, ``2e-4``, ``1.2``, ``300``."""
    text = f"{v:.2g}"
    if len(text) > 5:
        mantissa, exp = f"{v:.0e}".split("e")
        text = f"{mantissa}e{int(exp)}"
    return text


def tuning_axis_label(name: str, values: np.ndarray) -> str:
    """The tuning surface's horizontal axis title: the parameter and, for the penalty
    lambda, which way it runs (the grid is stored from large to small: flexibility grows
    to the right, which the plot did not say)."""
    label = f"{name} (tuning fits)"
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if name in ("\u03bb", "lambda") and v.size > 1:
        if np.all(np.diff(v) < 0):
            return f"{label}, decreasing: more flexible to the right \u2192"
        if np.all(np.diff(v) > 0):
            return f"{label}, increasing: more flexible to the left \u2190"
    return label
