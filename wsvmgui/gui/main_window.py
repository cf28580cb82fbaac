"""The main window: data and settings on the left, the views in tabs, status below.

One source of truth: :attr:`MainWindow.result` is the last finished run, and every view,
export and session shows or writes that run.  A run that fails or is cancelled brings it
back everywhere (or clears every view when there is none); data in use change only when
they loaded (and, during a run, when the user agreed to stop it); settings are checked
before a run starts; a run expected to take more than a minute asks first.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
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
    LiveBoundary,
    NeedsConfirmation,
    RunRequest,
    RunResult,
    RunStatus,
    compute_plane,
    fit_inputs,
    run_baselines,
    run_checked,
)
from ..app.cost import CONFIRM_SECONDS, format_seconds
from ..app.schemes import make_estimator
from ..app.scoring import score_table
from ..app.session import (
    SESSION_SUFFIX,
    Session,
    check_data_file,
    compare_results,
    load_session,
    results_record,
    save_session,
)
from ..app.settings import RunSettings
from ..errors import InputError
from ..io.modelfile import FittedModel, check_rows, load_model, save_model
from ..io.results import plain_json
from .data_panel import DataPanel
from .export import ROW_CHOICES, export_plot, export_probabilities, load_settings, save_settings
from .help import ABOUT, GUIDE, show_text
from .messages import MessageArea
from .selection import SelectionModel
from .settings_panel import SettingsPanel
from .state import AppState
from .views.bars_view import BarsView
from .views.boundary_view import BoundaryView
from .views.calibration_view import CalibrationView
from .views.results_view import ResultsView
from .views.simplex_view import SimplexView
from .worker import JobRunner

#: Settings that finish in about a second on the demo data (tests and benchmarks; the
#: app's first launch uses the "quick" preset).
DEMO_SETTINGS = RunSettings(
    scheme="binary",
    n_weights=10,
    lambdas=[0.05, 0.005, 0.0005],
    sigmas=None,
    tuning="split",
    n_jobs=1,
    seed=0,
)

#: Delay before the next piece of drawing (ms): a real timer, not a zero one, so the loop
#: handles input, paints and other timers between the pieces (queued zero-delay calls and
#: the paints they cause can otherwise run back to back for a quarter of a second).
NEXT_TURN_MS = 2

#: Python thread switch interval while the app runs (seconds).
SWITCH_INTERVAL = 0.002
#: Files the window opens when dropped on it.
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
MAX_RECENT = 8
RUN_ANYWAY, LIGHTER, CANCEL = "Run anyway", "Use the quick preset", "Cancel"


def format_progress(
    phase: str, done: int, total: int, elapsed: float, remaining: float | None
) -> str:
    """``"fit: fits 12 of 90, 1.2 s elapsed, about 3 s left"``."""
    text = f"{phase}: " if phase else ""
    if phase == "exact path" and total > 0:
        text += f"\u03c0 reached {done / total:.2f}, "
    elif total > 0:
        text += f"fits {done} of {total}, "
    text += f"{elapsed:.1f} s elapsed"
    if remaining is not None:
        text += f", about {format_seconds(remaining)} left"
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
        self.setAcceptDrops(True)
        self.state = state or AppState()
        self.runner = JobRunner(self)
        self.selection = SelectionModel(self)
        self.result: RunResult | None = None
        self.baselines = None
        self._split = None
        self._run_started = 0.0
        self._run_phase = ""
        self._run_fraction = 0.0
        self._pending_views: list[Any] = []
        self._pending_session: Session | None = None
        self.last_status = ""
        self.confirm_limit: float | None = CONFIRM_SECONDS

        # Left: data and settings, with the Run buttons always in sight
        self.data_panel = DataPanel()
        self.data_panel.confirm_change = self._confirm_data_change
        self.settings_panel = SettingsPanel()
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Fit the scheme on the training part (Ctrl+R)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run; the last result comes back (Esc)")
        self.cancel_button.setEnabled(False)
        self.left_tabs = QTabWidget()
        self.left_tabs.addTab(_scrolled(self.data_panel), "Data")
        self.left_tabs.addTab(_scrolled(self.settings_panel), "Settings")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(4, 4, 4, 4)
        left_layout.addWidget(self.left_tabs, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 2)
        buttons.addWidget(self.cancel_button, 1)
        left_layout.addLayout(buttons)
        left.setMinimumWidth(250)
        self.left_dock = QDockWidget("Data and settings", self)
        self.left_dock.setObjectName("left_dock")
        self.left_dock.setWidget(left)
        self.left_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.left_dock)

        # Centre: views
        self.boundary_view = BoundaryView()
        self.simplex_view = SimplexView()
        self.bars_view = BarsView()
        self.calibration_view = CalibrationView()
        self.results_view = ResultsView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.boundary_view, "Boundaries")
        self.tabs.addTab(self.simplex_view, "Simplex and ladders")
        self.tabs.addTab(self.bars_view, "Probabilities")
        self.tabs.addTab(self.calibration_view, "Calibration")
        self.tabs.addTab(self.results_view, "Results")
        self.setCentralWidget(self.tabs)

        # Bottom: the message log (hidden; the status bar shows the latest message)
        self.messages = MessageArea()
        self.message_dock = QDockWidget("Messages", self)
        self.message_dock.setObjectName("message_dock")
        self.message_dock.setWidget(self.messages)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.message_dock)
        self.message_dock.hide()

        # Status bar: latest message, then the run's progress
        self.status_message = QLabel("")
        self.status_message.setMinimumWidth(50)
        self.details_button = QPushButton("Details\u2026")
        self.details_button.setToolTip("Show the message log with the details")
        self.details_button.setVisible(False)
        # Fixed sizes: a progress update repaints two small widgets and never relayouts
        # the status bar.
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 100)
        self.progress_bar.setFixedWidth(110)
        self.progress_bar.setTextVisible(False)
        self.progress_label = QLabel("")
        self.progress_label.setFixedWidth(330)
        self.progress_label.setAlignment(
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        self.status_cancel = QPushButton("Cancel")
        self.status_cancel.setToolTip("Stop the run (Esc)")
        self.status_cancel.setEnabled(False)
        self.statusBar().addWidget(self.status_message, 1)
        self.statusBar().addWidget(self.details_button)
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
        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        edit_menu = menu.addMenu("&Edit")
        view_menu = menu.addMenu("&View")
        run_menu = menu.addMenu("&Run")
        help_menu = menu.addMenu("&Help")
        bar = QToolBar("Main", self)
        bar.setObjectName("main_toolbar")
        self.addToolBar(bar)

        def action(menu_, text, slot, shortcut=None, tip="", toolbar=False) -> QAction:
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            act.setToolTip(tip or text.replace("\u2026", ""))
            act.setStatusTip(tip or "")
            act.triggered.connect(slot)
            menu_.addAction(act)
            if toolbar:
                bar.addAction(act)
            return act

        self.open_action = action(
            file_menu,
            "Open data\u2026",
            self.open_file_dialog,
            QKeySequence.StandardKey.Open,
            "Read a CSV/TSV table (Ctrl+O); or drop it on the window",
            toolbar=True,
        )
        self.recent_menu = file_menu.addMenu("Open recent")
        self.columns_action = action(
            file_menu,
            "Choose columns\u2026",
            lambda: self.data_panel.choose_columns(),
            tip="The label and feature columns of the file in use",
        )
        file_menu.addSeparator()
        self.open_session_action = action(
            file_menu,
            "Open session\u2026",
            self.open_session_dialog,
            "Ctrl+Shift+O",
            "Reopen a saved session: data, settings, view; runs it again",
        )
        self.save_session_action = action(
            file_menu,
            "Save session\u2026",
            self.save_session_dialog,
            QKeySequence.StandardKey.Save,
            "Save the data reference, settings, view and results",
        )
        file_menu.addSeparator()
        self.export_csv_action = action(
            file_menu,
            "Export probabilities\u2026",
            self.export_csv_dialog,
            "Ctrl+E",
            "Probabilities, labels and brackets of the shown result as CSV (Ctrl+E)",
        )
        self.export_plot_action = action(
            file_menu,
            "Export plot\u2026",
            self.export_plot_dialog,
            "Ctrl+Shift+E",
            "The current view as PNG or SVG (Ctrl+Shift+E)",
            toolbar=True,
        )
        file_menu.addSeparator()
        self.save_model_action = action(
            file_menu,
            "Save model\u2026",
            self.save_model_dialog,
            tip="The fitted model of the shown result as a model file (.wsvm, no code)",
        )
        self.load_model_action = action(
            file_menu,
            "Load model\u2026",
            self.load_model_dialog,
            tip="Read a model file to score new data with it",
        )
        self.score_action = action(
            file_menu,
            "Score a file\u2026",
            self.score_file_dialog,
            tip="Probabilities of a new table's rows from the loaded (or shown) model, as CSV",
        )
        settings_menu = file_menu.addMenu("Settings")
        action(settings_menu, "Save settings\u2026", self.save_settings_dialog)
        action(settings_menu, "Load settings\u2026", self.load_settings_dialog)
        file_menu.addSeparator()
        action(file_menu, "Quit", self.close, "Ctrl+Q")

        self.copy_action = action(
            edit_menu,
            "Copy plot",
            self.copy_plot,
            QKeySequence.StandardKey.Copy,
            "Copy the current view as an image (Ctrl+C)",
        )
        self.copy_row_action = action(
            edit_menu,
            "Copy selected point",
            self.copy_selected,
            "Ctrl+Shift+C",
            "Copy the selected point's probabilities as text",
        )
        edit_menu.addSeparator()
        action(
            edit_menu,
            "Quick preset",
            lambda: self.settings_panel.apply_preset("quick"),
            tip="Settings that run in seconds on the built-in data",
        )

        for i, name in enumerate(
            ["Boundaries", "Simplex and ladders", "Probabilities", "Calibration", "Results"]
        ):
            action(
                view_menu, name, lambda _=False, i=i: self.tabs.setCurrentIndex(i), f"Ctrl+{i + 1}"
            )
        view_menu.addSeparator()
        view_menu.addAction(self.left_dock.toggleViewAction())
        view_menu.addAction(self.message_dock.toggleViewAction())
        view_menu.addAction(bar.toggleViewAction())

        bar.addSeparator()
        self.run_action = action(
            run_menu, "Run", self.start_run, "Ctrl+R", "Fit and show (Ctrl+R)", toolbar=True
        )
        self.cancel_action = action(
            run_menu, "Cancel", self.cancel_run, "Esc", "Stop the run (Esc)", toolbar=True
        )
        self.cancel_action.setEnabled(False)
        run_menu.addSeparator()
        self.baselines_action = action(
            run_menu,
            "Fit baselines again",
            self.request_baselines,
            tip="Logistic regression, SVC + Platt scaling and k nearest neighbours",
        )
        action(help_menu, "User guide", self.show_guide, QKeySequence.StandardKey.HelpContents)
        action(help_menu, "About wsvmgui", self.show_about)
        self.export_csv_action.setEnabled(False)
        self.save_model_action.setEnabled(False)
        self.model: FittedModel | None = None
        self._fill_recent()

    def _connect(self) -> None:
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button.clicked.connect(self.cancel_run)
        self.status_cancel.clicked.connect(self.cancel_run)
        self.details_button.clicked.connect(self._show_details)
        self.data_panel.dataset_changed.connect(self._on_dataset)
        self.data_panel.error.connect(self.show_error)
        self.data_panel.open_requested.connect(self.open_file_dialog)
        self.data_panel.file_loaded.connect(self._add_recent)
        self.data_panel.test_fraction.valueChanged.connect(self._on_split_options)
        self.data_panel.standardise.toggled.connect(self._on_split_options)
        self.runner.progress.connect(self._on_progress)
        self.runner.busy.connect(self._on_busy)
        self.boundary_view.plane_requested.connect(self.request_plane)
        self.boundary_view.pi_requested.connect(self.request_pi_boundary)
        self.results_view.baselines_requested.connect(self.request_baselines)
        for view in (self.boundary_view, self.bars_view):
            view.point_clicked.connect(self.selection.select)
        for view in (self.boundary_view, self.simplex_view, self.bars_view):
            self.selection.changed.connect(view.set_selection)

    def _restore_state(self) -> None:
        settings = self.state.last_settings()
        preset = self.state.value("run/preset", "quick")
        if settings is not None:
            self.apply_settings(settings, preset=preset or "custom")
        else:
            self.apply_settings(DEMO_SETTINGS, preset="quick")
        geometry, window_state = self.state.window()
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 900)
        if window_state is not None:
            self.restoreState(window_state)

    # ----------------------------------------------------------------- messages, asking
    def show_error(self, message: str, details: str = "") -> None:
        self.messages.show_error(message, details)
        self._mirror_message()

    def show_info(self, message: str, details: str = "") -> None:
        self.messages.show_info(message, details)
        self._mirror_message()

    def _mirror_message(self) -> None:
        self.status_message.setText(self.messages.text())
        self.status_message.setToolTip(self.messages.text())
        self.status_message.setStyleSheet(self.messages.label.styleSheet())
        self.details_button.setVisible(bool(self.messages.details.toPlainText()))

    def _show_details(self) -> None:
        self.message_dock.show()
        self.messages.details_button.setChecked(True)

    def ask(self, title: str, text: str, choices: list[str], default: str) -> str:
        """Ask the user to choose one of ``choices`` (tests replace this method)."""
        box = QMessageBox(self)
        box.setWindowTitle(title)
        box.setText(text)
        box.setIcon(QMessageBox.Icon.Question)
        buttons = {}
        for choice in choices:
            role = (
                QMessageBox.ButtonRole.RejectRole
                if choice == CANCEL or choice.startswith("Keep")
                else QMessageBox.ButtonRole.AcceptRole
            )
            buttons[box.addButton(choice, role)] = choice
        for button, choice in buttons.items():
            if choice == default:
                box.setDefaultButton(button)
        box.exec()
        return buttons.get(box.clickedButton(), CANCEL)

    # -------------------------------------------------------------------------- data
    def _confirm_data_change(self) -> bool:
        """Before new data replace the old: during a run, ask whether to stop it."""
        if not self.runner.is_running("run"):
            return True
        choice = self.ask(
            "A run is in progress",
            "New data would stop the run in progress. Stop it and use the new data?",
            ["Stop the run and load", "Keep running"],
            "Keep running",
        )
        if choice != "Stop the run and load":
            self.show_info("Kept the run going; the data did not change.")
            return False
        self.cancel_run()
        return True

    def _on_dataset(self, ds) -> None:
        self.runner.cancel("plane")
        self.runner.cancel("baselines")
        self._clear_result()
        self.selection.clear()
        self.settings_panel.refresh_availability(ds.n_classes)
        self._set_percent(0)
        self.last_status = ""
        self.progress_label.setText("")
        try:
            split = self._make_split(self._settings_or_default())
        except InputError as exc:
            self.show_error(str(exc))
            return
        self._split = split
        self.settings_panel.set_training_data(split.train.X, split.train.y)
        self.boundary_view.set_split(split)
        self.results_view.clear(f"{ds.summary()}. Press Run.")
        self.show_info(f"Loaded {ds.summary()}.")

    def _on_split_options(self, *_args) -> None:
        """Test fraction or standardisation changed: a new split for the next run."""
        if self.data_panel.dataset is None:
            return
        with contextlib.suppress(InputError):
            split = self._make_split(self._settings_or_default())
            self.settings_panel.set_training_data(split.train.X, split.train.y)
            if self.result is None:
                self._split = split
                self.boundary_view.set_split(split)
            else:
                self.show_info("The new split applies to the next run.")

    def current_settings(self) -> RunSettings:
        """The settings of the panels: the settings panel's, with the data panel's
        missing-value and standardisation choices (InputError names a bad field)."""
        return replace(
            self.settings_panel.settings(),
            missing=self.data_panel.missing_choice(),
            standardize=self.data_panel.standardise.isChecked(),
        ).validate()

    def apply_settings(self, settings: RunSettings, preset: str = "custom") -> None:
        """Show ``settings`` in both panels."""
        self.settings_panel.set_settings(settings, preset=preset)
        self.data_panel.set_options(settings.missing, settings.standardize)

    def _settings_or_default(self) -> RunSettings:
        try:
            return self.current_settings()
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

    # ------------------------------------------------------------------ recent, drops
    def recent_files(self) -> list[str]:
        value = self.state.value("paths/recent", "", str) or ""
        return [p for p in value.split("\n") if p]

    def _add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        items = [path] + [p for p in self.recent_files() if p != path]
        self.state.set_value("paths/recent", "\n".join(items[:MAX_RECENT]))
        self._fill_recent()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        items = self.recent_files()
        for i, path in enumerate(items):
            act = self.recent_menu.addAction(f"&{i + 1} {os.path.basename(path)}")
            act.setToolTip(path)
            act.triggered.connect(lambda _=False, p=path: self.open_path(p))
        if items:
            self.recent_menu.addSeparator()
            clear = self.recent_menu.addAction("Clear the list")
            clear.triggered.connect(
                lambda: (self.state.set_value("paths/recent", ""), self._fill_recent())
            )
        self.recent_menu.setEnabled(bool(items))

    def open_path(self, path: str) -> bool:
        """Open a table or a session file by its name."""
        if path.endswith(".json"):
            return self.open_session(path)
        if not os.path.exists(path):
            self.show_error(f"{path} is not there any more.")
            return False
        return self.data_panel.open_file(path)

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self._dropped_path(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        path = self._dropped_path(event.mimeData())
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        QTimer.singleShot(0, lambda: self.open_path(path))

    @staticmethod
    def _dropped_path(mime) -> str | None:
        if not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile():
                path = url.toLocalFile()
                if path.lower().endswith((*TABLE_SUFFIXES, ".json")):
                    return path
        return None

    # --------------------------------------------------------------------------- runs
    def is_busy(self) -> bool:
        """A run (or its cost estimate), a plane or the baselines are being computed, or
        finished views are still drawing."""
        jobs = ("run", "plane", "baselines", "score", "pi")
        return any(self.runner.is_running(k) for k in jobs) or bool(self._pending_views)

    def _check_request(self) -> RunRequest:
        """The run the panels ask for, checked before anything starts (InputError)."""
        self.data_panel.apply_pending()
        settings = self.current_settings()
        if not self.settings_panel.scheme_enabled(settings.scheme):
            raise InputError(f"scheme {settings.scheme!r} is not available for these data")
        ds = self.data_panel.dataset
        if ds is None:
            raise InputError("no data loaded")
        make_estimator(settings, ds.n_classes)  # options and classes, without fitting
        split = self._make_split(settings)
        fit_inputs(settings, split)  # tune-set mode without a tuning part
        if split.same_as(self._split):
            split = self._split  # keep the object the views already show
        ix, iy = self.boundary_view.plane()
        return RunRequest(
            settings,
            split,
            ix,
            iy,
            DEFAULT_GRID,
            compare=self.settings_panel.compare_requested(),
            reference=self.boundary_view.reference() if ds.X.shape[1] > 2 else None,
        )

    def start_run(self, *_args, limit: float | None | str = "default") -> int | None:
        """Start a run with the panel's settings; None if it did not start.

        A run already going is stopped only if the user agrees.  The worker first times
        the fit (:func:`wsvmgui.app.analysis.run_checked`); a run expected to exceed the
        confirmation limit comes back to :meth:`_confirm_cost` before it runs.
        """
        if self.runner.is_running("run"):
            elapsed = time.perf_counter() - self._run_started
            choice = self.ask(
                "A run is in progress",
                f"A run has been going for {format_seconds(elapsed)}. Stop it and start "
                "again with the current settings?",
                ["Stop and start again", "Keep running"],
                "Keep running",
            )
            if choice != "Stop and start again":
                return None
            self.cancel_run()
        try:
            request = self._check_request()
        except InputError as exc:
            self.show_error(str(exc))
            return None
        return self._launch(request, self.confirm_limit if limit == "default" else limit)

    def _launch(self, request: RunRequest, limit: float | None) -> int:
        self._split = request.split
        self.runner.cancel("plane")
        self.runner.cancel("baselines")
        self._pending_views = []
        if self.boundary_view._split is not request.split:
            self.boundary_view.set_split(request.split)
        self.boundary_view.begin_run()
        self.results_view.summary.setText("Running\u2026")
        self._run_started = time.perf_counter()
        self._run_phase = "estimating the cost"
        self._run_fraction = 0.0
        self._set_percent(0)
        self.last_status = "estimating the cost\u2026"
        self.progress_label.setText(self.last_status)
        self.state.save_settings(request.settings)
        self.state.set_value("run/preset", self.settings_panel.preset_name())

        def job(progress, should_cancel, publish):
            return run_checked(request, progress, should_cancel, publish, limit)

        job_id = self.runner.start(
            "run",
            job,
            on_result=lambda out: self._on_run_output(out, request),
            on_partial=self._on_partial,
            on_error=self._on_run_error,
            on_finished=self._on_run_finished,
        )
        ds = request.split.dataset
        self.show_info(
            f"Running {request.settings.scheme} on {ds.name} "
            f"({request.split.train.size} training rows)\u2026"
        )
        return job_id

    def _on_run_output(self, out, request: RunRequest) -> None:
        if isinstance(out, NeedsConfirmation):
            self.runner.cancel("run")  # its work is done: the question is not a running job
            QTimer.singleShot(0, lambda: self._confirm_cost(request, out.estimate))
            return
        self._on_result(out)

    def _confirm_cost(self, request: RunRequest, estimate) -> None:
        """Ask before a long run; offer the quick preset."""
        self._restore_views()
        self.progress_label.setText(f"estimated {estimate.describe()}")
        choice = self.ask(
            "This run will take a while",
            f"The run is expected to take {estimate.describe()} on this machine "
            f"(timed on the real data):\n\n{estimate.details()}\n\nRun it anyway, or "
            "switch to the quick preset (seconds)?",
            [RUN_ANYWAY, LIGHTER, CANCEL],
            LIGHTER,
        )
        if choice == RUN_ANYWAY:
            from dataclasses import replace

            self._launch(replace(request, cost=estimate), None)
        elif choice == LIGHTER:
            self.settings_panel.apply_preset("quick")
            self.show_info("Switched to the quick preset.")
            self.start_run()
        else:
            self.progress_label.setText("not started")
            self.show_info(f"Run not started (it would take {estimate.describe()}).")

    def cancel_run(self) -> None:
        if self.runner.cancel("run"):
            self._set_percent(0)
            self.last_status = "cancelled"
            self.progress_label.setText("cancelled")
            self._restore_views()
            kept = " The last result is shown." if self.result is not None else ""
            self.show_info("Run cancelled." + kept)

    def _on_partial(self, obj) -> None:
        if isinstance(obj, LiveBoundary):
            self.boundary_view.add_live(obj)
        elif isinstance(obj, RunStatus):
            self._run_phase = obj.phase
            self._status_fits = (obj.done, obj.total)
            self._update_progress_label()

    def _on_progress(self, kind: str, done: int, total: int, elapsed: float) -> None:
        if kind != "run":
            return
        self._run_fraction = done / max(total, 1)
        self._set_percent(int(100 * min(done, total) // max(total, 1)))
        self._update_progress_label(elapsed)

    def _update_progress_label(self, elapsed: float | None = None) -> None:
        if not self.runner.is_running("run"):
            return
        elapsed = time.perf_counter() - self._run_started if elapsed is None else elapsed
        f = self._run_fraction
        remaining = elapsed * (1 - f) / f if f > 0.02 else None
        done, total = getattr(self, "_status_fits", (0, 0))
        self.last_status = format_progress(self._run_phase, done, total, elapsed, remaining)
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
        self.baselines = None
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
        self.show_info(
            f"Finished in {result.seconds:.2f} s. {first}" + "".join(f" {n}" for n in result.notes)
        )
        self._baselines_due = True  # fitted once the views are drawn (see _draw_pending)
        if self._pending_session is not None:
            self._finish_session(result)

    def _views(self) -> list[Any]:
        return [
            self.boundary_view,
            self.simplex_view,
            self.bars_view,
            self.calibration_view,
            self.results_view,
        ]

    def _show_result(self, result: RunResult) -> None:
        # Draw the visible view now and each hidden one in its own event-loop turn, so
        # no single slot blocks the loop for the time of all of them.
        current = self.current_view()
        self._pending_views = [v for v in self._views() if v is not current]
        current.set_result(result)
        QTimer.singleShot(NEXT_TURN_MS, self._draw_pending)
        self.export_csv_action.setEnabled(True)
        self.save_model_action.setEnabled(True)
        test = result.split.test.index
        if self.selection.row < 0 or self.selection.row >= result.split.dataset.X.shape[0]:
            self.selection.select(int(test[0]) if test.size else 0)
        else:
            row = self.selection.row
            for view in (self.boundary_view, self.simplex_view, self.bars_view):
                view.set_selection(row)

    def _draw_pending(self) -> None:
        if not self._pending_views or self.result is None:
            self._pending_views = []
            self._start_due_baselines()
            return
        view = self._pending_views.pop(0)
        view.set_result(self.result)
        if hasattr(view, "set_selection"):
            view.set_selection(self.selection.row)
        if self.baselines is not None and hasattr(view, "add_baselines"):
            view.add_baselines(self.baselines)
        if self._pending_views:
            QTimer.singleShot(NEXT_TURN_MS, self._draw_pending)
        else:
            self._start_due_baselines()

    def _start_due_baselines(self) -> None:
        """Fit the baselines after a run, once its views are drawn: their scikit-learn
        fits compete with the drawing for the interpreter otherwise."""
        if getattr(self, "_baselines_due", False) and self.result is not None:
            self._baselines_due = False
            self.request_baselines()

    def _clear_result(self) -> None:
        """No result: every view empty, nothing to export."""
        self.result = None
        self.baselines = None
        self._pending_views = []
        self.export_csv_action.setEnabled(False)
        self.save_model_action.setEnabled(False)
        self.simplex_view.clear()
        self.bars_view.clear()
        self.calibration_view.clear()
        self.results_view.clear("No result: press Run.")
        if self._split is not None:
            self.boundary_view.set_split(self._split)

    def _restore_views(self) -> None:
        """After a failed or cancelled run: the last result everywhere, or nothing."""
        if self.result is not None:
            self._show_result(self.result)
            if self.baselines is not None:
                self.results_view.add_baselines(self.baselines)
        else:
            self._clear_result()

    def _on_run_error(self, message: str, details: str) -> None:
        self.show_error(message, details)
        self._set_percent(0)
        self.last_status = "failed"
        self.progress_label.setText("failed")
        self._restore_views()
        self._pending_session = None

    def _on_run_finished(self, status: str) -> None:
        if status == "cancelled":
            self.last_status = "cancelled"
            self.progress_label.setText("cancelled")

    def request_plane(self, ix: int, iy: int) -> None:
        result = self.result
        if result is None:
            return
        reference = self.boundary_view.reference()

        def job(progress, should_cancel, publish):
            return compute_plane(result, ix, iy, DEFAULT_GRID, should_cancel, reference)

        def done(plane):
            if result is not self.result:
                return
            result.plane = plane
            self.boundary_view.set_plane(plane)

        self.runner.start("plane", job, on_result=done, on_error=self.show_error)

    def request_pi_boundary(self, pi: float) -> None:
        """The boundary at ``pi`` in the shown plane, from the exact path (worker)."""
        result = self.result
        info = self.boundary_view.path()
        if result is None or info is None or result.plane is None:
            return
        plane, split, k = result.plane, result.split, self.boundary_view.subproblem()

        def job(progress, should_cancel, publish):
            from ..app.analysis import plane_grid
            from ..app.path_view import boundary_at

            xs, ys, X_grid = plane_grid(split, plane.ix, plane.iy, plane.xs.size, plane.reference)
            return pi, boundary_at(info, X_grid, xs, ys, pi), k

        def done(out):
            if result is self.result and result.plane is plane:
                self.boundary_view.set_pi_boundary(*out)

        self.runner.start("pi", job, on_result=done, on_error=self.show_error)

    def request_baselines(self) -> None:
        result = self.result
        if result is None:
            return
        sigma = getattr(result.estimator, "sigma_", None)

        def job(progress, should_cancel, publish):
            return run_baselines(result.split, sigma, should_cancel)

        def done(baselines):
            if result is not self.result:
                return
            self.baselines = baselines
            self.results_view.add_baselines(baselines)
            self.calibration_view.add_baselines(baselines)  # drawn in a later turn

        self.runner.start("baselines", job, on_result=done, on_error=self.show_error)

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
            self.show_error("Nothing to export yet: run an analysis first.")
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
        if self.result is None:
            self.show_error("Nothing to export yet: run an analysis first.")
            return False
        try:
            n = export_probabilities(path, self.result, rows)
        except (InputError, OSError) as exc:
            self.show_error(f"Export failed: {exc}")
            return False
        self.show_info(f"Wrote {n} rows to {path}.")
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
            self.show_error(f"Export failed: {exc}")
            return False
        self.show_info(f"Saved the plot to {path}.")
        return True

    def copy_plot(self) -> None:
        QApplication.clipboard().setPixmap(self.current_view().graphics.grab())
        self.show_info("Copied the plot to the clipboard.")

    def copy_selected(self) -> None:
        row = self.selection.row
        if self.result is None or row < 0:
            self.show_error("Select a point first (click it in a view).")
            return
        QApplication.clipboard().setText(self.bars_view.describe_row(row, self.result))
        self.show_info("Copied the selected point's probabilities.")

    def save_settings_dialog(self) -> None:
        try:
            settings = self.current_settings()
        except InputError as exc:
            self.show_error(str(exc))
            return
        path = self._save_path("Save settings", "settings.json", "JSON (*.json)")
        if path:
            try:
                save_settings(path, settings)
            except (InputError, OSError) as exc:
                self.show_error(f"Could not save the settings: {exc}")
                return
            self.show_info(f"Saved the settings to {path}.")

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
            self.show_error(f"Could not load {path}: {exc}")
            return False
        self.apply_settings(settings)
        self.show_info(f"Loaded the settings from {path}.")
        return True

    # ------------------------------------------------------------------------- models
    def fitted_model(self) -> FittedModel:
        """The shown result as a model file's content (InputError without a result)."""
        res = self.result
        if res is None:
            raise InputError("no fitted model yet: run an analysis first")
        split, ds = res.split, res.split.dataset
        meta = {
            "data": ds.name,
            "rows": {"train": split.train.size, "tune": split.tune.size, "test": split.test.size},
            "metrics": res.metrics,
            "made_by": "wsvmgui desktop app",
        }
        for attr in ("lambda_", "sigma_"):
            value = getattr(res.estimator, attr, None)
            if isinstance(value, float):
                meta[attr.rstrip("_")] = value
        return FittedModel(
            res.estimator,
            split.preprocessing,
            ds.label_name,
            res.settings.to_dict(),
            plain_json(meta),
        )

    def save_model_dialog(self) -> None:
        path = self._save_path("Save model", "model.wsvm", "wsvmgui model (*.wsvm)")
        if path:
            self.save_model(path)

    def save_model(self, path: str) -> bool:
        try:
            model = self.fitted_model()
            split = self.result.split
            digest = save_model(path, model, check_rows(split.train.X, split.train.X.shape[1]))
        except (InputError, OSError) as exc:
            self.show_error(f"Could not save the model: {exc}")
            return False
        self.show_info(f"Saved the model to {path} (sha256 {digest[:12]}\u2026).")
        return True

    def load_model_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load model", self.state.last_folder, "wsvmgui model (*.wsvm);;All files (*)"
        )
        if path:
            self.load_model(path)

    def load_model(self, path: str) -> bool:
        try:
            model = load_model(path)
        except (InputError, OSError) as exc:
            self.show_error(f"Could not load the model: {exc}")
            return False
        self.model = model
        scheme = model.settings.get("scheme", "?")
        self.show_info(
            f"Loaded the model {os.path.basename(path)}: scheme {scheme}, classes "
            f"{', '.join(model.classes)}; {model.preprocessing.describe()}. Score a file "
            "with File \u25b8 Score a file."
        )
        return True

    def score_file_dialog(self) -> None:
        source, _ = QFileDialog.getOpenFileName(
            self,
            "Score a file",
            self.state.last_folder,
            "Tables (*.csv *.tsv *.tab *.txt);;All files (*)",
        )
        if not source:
            return
        out = self._save_path(
            "Save the probabilities", f"{Path(source).stem}-probabilities.csv", "CSV (*.csv)"
        )
        if out:
            self.score_file(source, out)

    def score_file(self, source: str, out: str) -> int | None:
        """Score the rows of ``source`` with the loaded model (else the shown result's) and
        write their probabilities to ``out`` (CSV and JSON sidecar) on a worker thread."""
        try:
            model = self.model if self.model is not None else self.fitted_model()
        except InputError as exc:
            self.show_error(f"Nothing to score with: {exc}; or load a model file")
            return None

        def job(progress, should_cancel, publish):
            return score_table(model, source, out)

        def done(summary):
            self.show_info(summary)

        self.show_info(f"Scoring {os.path.basename(source)}\u2026")
        return self.runner.start("score", job, on_result=done, on_error=self.show_error)

    # ----------------------------------------------------------------------- sessions
    def session(self) -> Session:
        """The session as it stands (InputError if the settings are invalid)."""
        ix, iy = self.boundary_view.plane()
        ds = self.data_panel.dataset
        view = {
            "tab": self.tabs.tabText(self.tabs.currentIndex()),
            "ix": ix,
            "iy": iy,
            "reference": (
                [float(v) for v in self.boundary_view.reference()]
                if ds is not None and ds.X.shape[1] > 2
                else None
            ),
            "follow": self.boundary_view.slice_panel.follow.isChecked(),
            "selected": int(self.selection.row),
        }
        return Session(
            self.data_panel.source_reference(),
            {
                "test_fraction": round(self.data_panel.test_fraction.value(), 4),
                "standardise": self.data_panel.standardise.isChecked(),
            },
            self.current_settings(),
            self.settings_panel.preset_name(),
            self.settings_panel.compare.isChecked(),
            view,
            results_record(self.result) if self.result is not None else None,
        )

    def save_session_dialog(self) -> None:
        path = self._save_path(
            "Save session", f"session{SESSION_SUFFIX}", f"wsvmgui session (*{SESSION_SUFFIX})"
        )
        if path:
            self.save_session(path)

    def save_session(self, path: str) -> bool:
        try:
            save_session(path, self.session())
        except (InputError, OSError) as exc:
            self.show_error(f"Could not save the session: {exc}")
            return False
        self.show_info(f"Saved the session to {path}.")
        return True

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open session",
            self.state.last_folder,
            f"wsvmgui session (*{SESSION_SUFFIX} *.json);;All files (*)",
        )
        if path:
            self.open_session(path)

    def open_session(self, path: str, run: bool = True) -> bool:
        """Load a session: data, split, settings, view; then run it again (unless told)."""
        try:
            session = load_session(path)
            warning = check_data_file(session.data)
        except InputError as exc:
            self.show_error(f"Could not open the session: {exc}")
            return False
        data = session.data
        panel = self.data_panel
        panel.test_fraction.setValue(float(session.split["test_fraction"]))
        panel.set_options(session.settings.missing, bool(session.split["standardise"]))
        if data["kind"] == "builtin":
            if "n" in data:
                panel.n_points.setValue(int(data["n"]))
            if "seed" in data:
                panel.data_seed.setValue(int(data["seed"]))
            panel._reload.stop()
            ok = panel.load_builtin(data["name"])
        else:
            ok = panel.open_file(data["path"], data["label"], list(data["features"]))
        if not ok:
            self.show_error(
                f"Could not open the session: its data did not load. {self.messages.text()}"
            )
            return False
        self.apply_settings(session.settings, preset=session.preset)
        self.settings_panel.compare.setChecked(session.compare)
        view = session.view
        ds = panel.dataset
        p = ds.X.shape[1]
        ix, iy = int(view.get("ix", 0)), int(view.get("iy", 1))
        if 0 <= ix < p and 0 <= iy < p:
            self.boundary_view.set_plane_choice(ix, iy)
        self.boundary_view.slice_panel.follow.setChecked(bool(view.get("follow", True)))
        ref = view.get("reference")
        if ref is not None and len(ref) == p:
            self.boundary_view.set_reference(np.asarray(ref, float), request=False)
        for i in range(self.tabs.count()):
            if self.tabs.tabText(i) == view.get("tab"):
                self.tabs.setCurrentIndex(i)
        self._add_recent(path)
        note = f" Note: {warning}." if warning else ""
        if not run:
            self.show_info(f"Opened the session {os.path.basename(path)}.{note}")
            return True
        self._pending_session = session
        if self.start_run(limit=None) is None:
            self._pending_session = None
            return False
        self.show_info(f"Opened the session {os.path.basename(path)}; running it again\u2026{note}")
        return True

    def _finish_session(self, result: RunResult) -> None:
        session, self._pending_session = self._pending_session, None
        selected = int(session.view.get("selected", -1))
        if 0 <= selected < result.split.dataset.X.shape[0]:
            self.selection.select(selected)
        if session.results is None:
            self.show_info("Session reopened (it held no results).")
            return
        same, diff = compare_results(session.results, result)
        if same:
            self.show_info(
                f"Session reopened: the run reproduced the saved probabilities "
                f"(largest difference {diff:.1g})."
            )
        else:
            self.show_error(
                "Session reopened, but the run did not reproduce the saved probabilities "
                f"(largest difference {diff:.3g}): the data or the software changed."
            )

    # ---------------------------------------------------------------------------- help
    def show_guide(self) -> None:
        self.guide_dialog = show_text(self, "wsvmgui user guide", GUIDE)

    def show_about(self) -> None:
        self.about_dialog = show_text(self, "About wsvmgui", ABOUT, size=(480, 300))

    # -------------------------------------------------------------------------- close
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.runner.cancel_all()
        self.state.save_window(self.saveGeometry(), self.saveState())
        with contextlib.suppress(InputError):
            self.state.save_settings(self.current_settings())
        self.state.set_value("run/preset", self.settings_panel.preset_name())
        self.state.sync()
        self.runner.wait(3000)
        super().closeEvent(event)


def _scrolled(widget: QWidget) -> QScrollArea:
    """``widget`` in a vertical scroll area (only scrolls when the window is very short)."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(widget)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    return scroll
