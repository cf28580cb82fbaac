"""The main window: data and settings on the left, the views in tabs, messages below."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from ..app.analysis import (
    DEFAULT_GRID,
    RunRequest,
    RunResult,
    compute_plane,
    run_analysis,
    run_baselines,
)
from ..app.settings import RunSettings
from ..errors import InputError
from .data_panel import DataPanel
from .export import ROW_CHOICES, export_plot, export_probabilities, load_settings, save_settings
from .messages import MessageArea
from .selection import SelectionModel
from .settings_panel import SettingsPanel
from .state import AppState
from .views.bars_view import BarsView
from .views.boundary_view import BoundaryView
from .views.results_view import ResultsView
from .views.simplex_view import SimplexView
from .worker import JobRunner

#: Settings that finish in about a second on the demo data.
DEMO_SETTINGS = RunSettings(
    scheme="binary",
    n_weights=10,
    lambdas=[0.05, 0.005, 0.0005],
    sigmas=None,
    tuning="split",
    n_jobs=1,
    seed=0,
)


#: Python thread switch interval while the app runs (seconds).
SWITCH_INTERVAL = 0.002


def format_progress(done: int, total: int, elapsed: float) -> str:
    """``"fits 12 of 90, 1.2 s elapsed, about 3 s left"``."""
    text = f"fits {done} of {total}, {elapsed:.1f} s elapsed"
    if 0 < done < total:
        text += f", about {elapsed * (total - done) / done:.0f} s left"
    return text


class MainWindow(QMainWindow):
    """The wsvmgui desktop application.

    Parameters
    ----------
    state : AppState, optional
        Remembered settings (tests pass one on a temporary folder).
    load_demo : bool
        Start with the demo data set loaded.
    """

    def __init__(self, state: AppState | None = None, load_demo: bool = True) -> None:
        super().__init__()
        # Antialiased curves cost several times more to paint with the raster engine; the
        # event loop must stay responsive while live boundaries arrive.
        pg.setConfigOptions(antialias=False, background="w", foreground="k")
        # A GUI thread waiting for the GIL gets it after at most this long (default 5 ms).
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self.setWindowTitle("wsvmgui \u2014 class probabilities from weighted SVMs")
        self.state = state or AppState()
        self.runner = JobRunner(self)
        self.selection = SelectionModel(self)
        self.result: RunResult | None = None
        self._split = None
        self._run_started = 0.0
        self._pending_views: list[Any] = []
        self.last_status = ""

        # Left: data and settings
        self.data_panel = DataPanel()
        self.settings_panel = SettingsPanel()
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Fit the scheme on the training part (Ctrl+R)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(_heading("Data"))
        left_layout.addWidget(self.data_panel)
        left_layout.addWidget(_heading("Run settings"))
        left_layout.addWidget(self.settings_panel)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 2)
        buttons.addWidget(self.cancel_button, 1)
        left_layout.addLayout(buttons)
        left_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(left)
        scroll.setMinimumWidth(360)
        self.left_dock = QDockWidget("Data and settings", self)
        self.left_dock.setObjectName("left_dock")
        self.left_dock.setWidget(scroll)
        self.left_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.left_dock)

        # Centre: views
        self.boundary_view = BoundaryView()
        self.simplex_view = SimplexView()
        self.bars_view = BarsView()
        self.results_view = ResultsView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.boundary_view, "Boundaries")
        self.tabs.addTab(self.simplex_view, "Simplex and ladders")
        self.tabs.addTab(self.bars_view, "Probabilities")
        self.tabs.addTab(self.results_view, "Results")
        self.setCentralWidget(self.tabs)

        # Bottom: messages
        self.messages = MessageArea()
        self.message_dock = QDockWidget("Messages", self)
        self.message_dock.setObjectName("message_dock")
        self.message_dock.setWidget(self.messages)
        self.message_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.message_dock)

        # Status bar
        # Fixed range (percent) and size: a progress update repaints two small widgets and
        # never relayouts the status bar.
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 100)
        self.progress_bar.setFixedWidth(160)
        self.progress_bar.setTextVisible(False)
        self.progress_label = QLabel("")
        self.progress_label.setFixedWidth(340)
        self.progress_label.setAlignment(
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        self.status_cancel = QPushButton("Cancel")
        self.status_cancel.setEnabled(False)
        self.statusBar().addPermanentWidget(self.progress_label)
        self.statusBar().addPermanentWidget(self.progress_bar)
        self.statusBar().addPermanentWidget(self.status_cancel)

        self._make_actions()
        self._connect()
        self._restore_state()
        if load_demo:
            self.data_panel.load_builtin("demo")

    # ------------------------------------------------------------------------- setup
    def _make_actions(self) -> None:
        bar = QToolBar("Main", self)
        bar.setObjectName("main_toolbar")
        self.addToolBar(bar)

        def action(text: str, slot, shortcut=None, tip: str = "") -> QAction:
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            act.setToolTip(tip or text)
            act.triggered.connect(slot)
            bar.addAction(act)
            return act

        self.run_action = action("Run", self.start_run, "Ctrl+R", "Fit and show (Ctrl+R)")
        self.cancel_action = action("Cancel", self.cancel_run, "Esc", "Stop the run (Esc)")
        self.cancel_action.setEnabled(False)
        bar.addSeparator()
        self.open_action = action(
            "Open data\u2026", self.open_file_dialog, QKeySequence.StandardKey.Open
        )
        self.export_csv_action = action(
            "Export probabilities\u2026",
            self.export_csv_dialog,
            "Ctrl+E",
            "Probabilities, labels and brackets as CSV",
        )
        self.export_plot_action = action(
            "Export plot\u2026", self.export_plot_dialog, "Ctrl+P", "The current view as PNG or SVG"
        )
        bar.addSeparator()
        action("Save settings\u2026", self.save_settings_dialog, QKeySequence.StandardKey.Save)
        action("Load settings\u2026", self.load_settings_dialog)
        self.export_csv_action.setEnabled(False)

    def _connect(self) -> None:
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button.clicked.connect(self.cancel_run)
        self.status_cancel.clicked.connect(self.cancel_run)
        self.data_panel.dataset_changed.connect(self._on_dataset)
        self.data_panel.error.connect(self.messages.show_error)
        self.data_panel.open_requested.connect(self.open_file_dialog)
        self.runner.progress.connect(self._on_progress)
        self.runner.busy.connect(self._on_busy)
        self.boundary_view.plane_requested.connect(self.request_plane)
        self.results_view.baselines_requested.connect(self.request_baselines)
        for view in (self.boundary_view, self.bars_view):
            view.point_clicked.connect(self.selection.select)
        for view in (self.boundary_view, self.simplex_view, self.bars_view):
            self.selection.changed.connect(view.set_selection)
        self.selection.changed.connect(self._on_selection)

    def _restore_state(self) -> None:
        settings = self.state.last_settings() or DEMO_SETTINGS
        self.settings_panel.set_settings(settings)
        geometry, window_state = self.state.window()
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 900)
        if window_state is not None:
            self.restoreState(window_state)

    # -------------------------------------------------------------------------- data
    def _on_dataset(self, ds) -> None:
        self.runner.cancel_all()
        self.result = None
        self._pending_views = []
        self.selection.clear()
        self.settings_panel.refresh_availability(ds.n_classes)
        self.export_csv_action.setEnabled(False)
        try:
            split = self._make_split(self._settings_or_default())
        except InputError as exc:
            self.messages.show_error(str(exc))
            return
        self._split = split
        self.boundary_view.set_split(split)
        self.simplex_view.clear()
        self.bars_view.clear()
        self.results_view.clear(f"{ds.summary()}. Press Run.")
        self.messages.show_info(f"Loaded {ds.summary()}.")

    def _settings_or_default(self) -> RunSettings:
        try:
            return self.settings_panel.settings()
        except InputError:
            return DEMO_SETTINGS

    def _make_split(self, settings: RunSettings):
        tune = settings.tune_fraction if settings.tuning == "tune-set" else 0.0
        return self.data_panel.make_split(tune, settings.seed)

    def open_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open a data table",
            self.state.last_folder,
            "Tables (*.csv *.tsv *.tab *.txt);;All files (*)",
        )
        if path:
            self.state.last_folder = path
            self.data_panel.open_file(path)

    # --------------------------------------------------------------------------- runs
    def start_run(self) -> int | None:
        """Start a run with the panel's settings (cancelling one in progress)."""
        try:
            settings = self.settings_panel.settings()
            if not self.settings_panel.scheme_enabled(settings.scheme):
                raise InputError(f"scheme {settings.scheme!r} is not available for these data")
            split = self._make_split(settings)
        except InputError as exc:
            self.messages.show_error(str(exc))
            return None
        if split.same_as(self._split):
            split = self._split  # keep the object the views already show
        self._split = split
        ix, iy = self.boundary_view.plane()
        request = RunRequest(
            settings, split, ix, iy, DEFAULT_GRID, compare=self.settings_panel.compare_requested()
        )
        self.runner.cancel("plane")
        self.runner.cancel("baselines")
        self._pending_views = []
        if self.boundary_view._split is not split:
            self.boundary_view.set_split(split)
        self.boundary_view.begin_run()
        self.results_view.clear("Running\u2026")
        self._run_started = time.perf_counter()
        self._set_percent(0)
        self.progress_label.setText("starting\u2026")
        self.state.save_settings(settings)

        def job(progress, should_cancel, publish):
            return run_analysis(request, progress, should_cancel, publish)

        job_id = self.runner.start(
            "run",
            job,
            on_result=self._on_result,
            on_partial=self.boundary_view.add_live,
            on_error=self._on_run_error,
            on_finished=self._on_run_finished,
        )
        self.messages.show_info(
            f"Running {settings.scheme} on {split.dataset.name} "
            f"({split.train.size} training rows)\u2026"
        )
        return job_id

    def cancel_run(self) -> None:
        if self.runner.cancel("run"):
            self._set_percent(0)
            self.progress_label.setText("cancelled")
            self.messages.show_info("Run cancelled.")
            if self.result is not None:
                self._show_result(self.result)

    def _on_progress(self, kind: str, done: int, total: int, elapsed: float) -> None:
        if kind != "run":
            return
        self._set_percent(100 * min(done, total) // max(total, 1))
        self.last_status = format_progress(done, total, elapsed)
        self.progress_label.setText(self.last_status)

    def _set_percent(self, percent: int) -> None:
        # Every repaint of the bar costs a few ms: move it in steps of 2%.
        old = self.progress_bar.value()
        if percent != old and (abs(percent - old) >= 2 or percent in (0, 100)):
            self.progress_bar.setValue(percent)

    def _on_busy(self, kind: str, running: bool) -> None:
        if kind == "run":
            for w in (self.cancel_button, self.status_cancel):
                w.setEnabled(running)
            self.cancel_action.setEnabled(running)

    def _on_result(self, result: RunResult) -> None:
        self.result = result
        self._show_result(result)
        self._set_percent(100)
        self.last_status = f"done in {result.seconds:.2f} s"
        self.progress_label.setText(self.last_status)
        first = ", ".join(
            f"{k} {v:.3g}"
            for k, v in list(result.metrics.get("test", result.metrics.get("train", {})).items())[
                :4
            ]
        )
        self.messages.show_info(
            f"Finished in {result.seconds:.2f} s. {first}" + "".join(f" {n}" for n in result.notes)
        )

    def _views(self) -> list[Any]:
        return [self.boundary_view, self.simplex_view, self.bars_view, self.results_view]

    def _show_result(self, result: RunResult) -> None:
        # Draw the visible view now and each hidden one in its own event-loop turn, so
        # no single slot blocks the loop for the time of all four.
        current = self.current_view()
        self._pending_views = [v for v in self._views() if v is not current]
        current.set_result(result)
        QTimer.singleShot(0, self._draw_pending)
        self.export_csv_action.setEnabled(True)
        if self.selection.row < 0:
            test = result.split.test.index
            self.selection.select(int(test[0]) if test.size else 0)
        else:
            row = self.selection.row
            for view in (self.boundary_view, self.simplex_view, self.bars_view):
                view.set_selection(row)

    def _draw_pending(self) -> None:
        if not self._pending_views or self.result is None:
            return
        view = self._pending_views.pop(0)
        view.set_result(self.result)
        view.set_selection(self.selection.row) if hasattr(view, "set_selection") else None
        if self._pending_views:
            QTimer.singleShot(0, self._draw_pending)

    def _on_run_error(self, message: str, details: str) -> None:
        self.messages.show_error(message, details)
        self._set_percent(0)
        self.progress_label.setText("failed")

    def _on_run_finished(self, status: str) -> None:
        if status == "cancelled":
            self.progress_label.setText("cancelled")

    def request_plane(self, ix: int, iy: int) -> None:
        result = self.result
        if result is None:
            return
        self.progress_label.setText("computing the plane\u2026")

        def job(progress, should_cancel, publish):
            return compute_plane(result, ix, iy, DEFAULT_GRID, should_cancel)

        def done(plane):
            result.plane = plane
            self.boundary_view.set_plane(plane)
            self.progress_label.setText(self.last_status)

        self.runner.start("plane", job, on_result=done, on_error=self.messages.show_error)

    def request_baselines(self) -> None:
        result = self.result
        if result is None:
            return
        sigma = getattr(result.estimator, "sigma_", None)
        self.messages.show_info("Fitting the baselines\u2026")

        def job(progress, should_cancel, publish):
            return run_baselines(result.split, sigma, should_cancel)

        def done(baselines):
            self.results_view.add_baselines(baselines)
            self.messages.show_info("Baselines added to the table (test part).")

        self.runner.start("baselines", job, on_result=done, on_error=self.messages.show_error)

    def _on_selection(self, row: int) -> None:
        if self.result is not None and row >= 0:
            self.statusBar().showMessage(self.bars_view.describe_row(row, self.result), 10000)

    # ------------------------------------------------------------------------- export
    def _save_path(self, title: str, name: str, filters: str) -> str:
        path, chosen = QFileDialog.getSaveFileName(
            self, title, os.path.join(self.state.last_folder, name), filters
        )
        if path:
            if not Path(path).suffix and "(*." in chosen:
                path += chosen.split("(*", 1)[1].split(")", 1)[0].split()[0]
            self.state.last_folder = path
        return path

    def export_csv_dialog(self) -> None:
        if self.result is None:
            self.messages.show_error("Nothing to export yet: run an analysis first.")
            return
        rows, ok = QInputDialog.getItem(
            self, "Export probabilities", "Rows to export:", list(ROW_CHOICES), 0, False
        )
        if not ok:
            return
        path = self._save_path("Export probabilities", f"probabilities-{rows}.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path, rows)

    def export_csv(self, path: str, rows: str = "test") -> bool:
        try:
            n = export_probabilities(path, self.result, rows)
        except (InputError, OSError) as exc:
            self.messages.show_error(f"Export failed: {exc}")
            return False
        self.messages.show_info(f"Wrote {n} rows to {path}.")
        return True

    def current_view(self) -> Any:
        return self.tabs.currentWidget()

    def export_plot_dialog(self) -> None:
        view = self.current_view()
        name = self.tabs.tabText(self.tabs.currentIndex()).split()[0].lower()
        path = self._save_path("Export plot", f"{name}.png", "PNG image (*.png);;SVG (*.svg)")
        if path:
            self.export_plot(path, view)

    def export_plot(self, path: str, view: Any = None) -> bool:
        view = view or self.current_view()
        try:
            export_plot(path, view.graphics)
        except (InputError, OSError) as exc:
            self.messages.show_error(f"Export failed: {exc}")
            return False
        self.messages.show_info(f"Saved the plot to {path}.")
        return True

    def save_settings_dialog(self) -> None:
        try:
            settings = self.settings_panel.settings()
        except InputError as exc:
            self.messages.show_error(str(exc))
            return
        path = self._save_path("Save settings", "settings.json", "JSON (*.json)")
        if path:
            try:
                save_settings(path, settings)
            except (InputError, OSError) as exc:
                self.messages.show_error(f"Could not save the settings: {exc}")
                return
            self.messages.show_info(f"Saved the settings to {path}.")

    def load_settings_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load settings", self.state.last_folder, "JSON (*.json);;All files (*)"
        )
        if path:
            self.load_settings_file(path)

    def load_settings_file(self, path: str) -> bool:
        try:
            settings = load_settings(path)
        except InputError as exc:
            self.messages.show_error(f"Could not load {path}: {exc}")
            return False
        self.settings_panel.set_settings(settings)
        self.messages.show_info(f"Loaded the settings from {path}.")
        return True

    # -------------------------------------------------------------------------- close
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.runner.cancel_all()
        self.state.save_window(self.saveGeometry(), self.saveState())
        with contextlib.suppress(InputError):
            self.state.save_settings(self.settings_panel.settings())
        self.state.sync()
        self.runner.wait(3000)
        super().closeEvent(event)


def _heading(text: str) -> QLabel:
    label = QLabel(f"<b>{text}</b>")
    label.setContentsMargins(0, 6, 0, 0)
    return label
