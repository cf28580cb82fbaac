"""The main window: data and settings on the left, the views in tabs, status below.

The window lays the parts out and connects them; the work is done by its helpers:

* :class:`~wsvmgui.gui.run_controller.RunController` (``window.runs``) owns the worker
  and the run's state machine, and :attr:`MainWindow.result`, the one source of truth:
  the last finished run, which every view, export and session shows or writes;
* :class:`~wsvmgui.gui.view_deck.ViewDeck` (``window.deck``) draws a run into the views;
* :class:`~wsvmgui.gui.file_actions.FileActions` (``window.files``) and
  :class:`~wsvmgui.gui.sessions.SessionActions` (``window.sessions``) hold the dialogs and
  the file I/O;
* :mod:`wsvmgui.gui.actions` declares the menus and the toolbar.

A run that fails or is cancelled brings the last result back everywhere (or clears every
view when there is none); data in use change only when they loaded (and, during a run,
when the user agreed to stop it); settings are checked before a run starts; a run
expected to take more than a minute asks first.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabWidget, QToolBar

from ..app.cost import plan_request
from ..app.phases import CONFIRM_SECONDS, format_seconds
from ..app.plane import DEFAULT_GRID
from ..app.run_inputs import RunRequest, check_class_sizes, fit_inputs, scheme_label
from ..app.schemes import make_estimator
from ..app.settings import RunSettings
from ..errors import InputError
from .actions import VIEW_TITLES, build_actions
from .control_dock import ControlDock
from .dialogs import CANCEL, ask_choice
from .file_actions import FileActions
from .help import ABOUT, GUIDE, show_text
from .messages import MessageArea
from .run_controller import RUNNING, RunController
from .screen_fit import PREFERRED_SIZE, fit_to_screen
from .selection import SelectionModel
from .sessions import SessionActions
from .state import AppState
from .status_bar import RunStatusBar
from .view_deck import ViewDeck
from .views.bars_view import BarsView
from .views.base import View
from .views.boundary_view import BoundaryView
from .views.calibration_view import CalibrationView
from .views.results_view import MEASURE_LABELS, ResultsView
from .views.simplex_view import SimplexView

if TYPE_CHECKING:
    from ..app.datasets import Dataset, DataSplit
    from ..app.phases import CostEstimate
    from ..app.view_data import RunResult

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
#: The application's display name, which Qt appends to a window title not ending in it.
APP_NAME = "wsvmgui"
#: Python thread switch interval while the app runs (seconds).
SWITCH_INTERVAL = 0.002
RUN_ANYWAY, LIGHTER = "Run anyway", "Use the quick preset"
#: Menu actions that need a result.
RESULT_ACTIONS = ("export_csv", "export_table", "export_report", "save_model")


#: How the status line names the measures whose keys are identifiers: as the Results
#: table's rows do (L1, L2, EGKL and GKL keep their short names there).
STATUS_NAMES = {key: MEASURE_LABELS[key][0] for key in ("log_likelihood", "cross_entropy", "error")}


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
        self.setWindowTitle(APP_NAME)
        self.setAcceptDrops(True)
        self.state = state or AppState()
        self.runs = RunController(self)
        self.selection = SelectionModel(self)
        self._split: DataSplit | None = None  # the split the views show (and Run reuses)
        #: Runs estimated to take longer (seconds) ask first; None: never ask.
        self.confirm_limit: float | None = CONFIRM_SECONDS
        self.left_dock = ControlDock(self)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.left_dock)
        self.data_panel = self.left_dock.data_panel
        self.data_panel.confirm_change = self._confirm_data_change
        self.settings_panel = self.left_dock.settings_panel
        self.run_button = self.left_dock.run_button
        self.cancel_button = self.left_dock.cancel_button
        self._build_views()
        self.status = RunStatusBar(self)
        self.setStatusBar(self.status)
        self.toolbar = QToolBar("Main", self)
        self.toolbar.setObjectName("main_toolbar")
        self.addToolBar(self.toolbar)
        self.menu_actions, self.menus = build_actions(self, self.toolbar)
        self.files = FileActions(self, self.menus["File/Open recent"])
        self.sessions = SessionActions(self)
        self._connect()
        self._restore_state()
        if load_demo:
            self.data_panel.load_builtin("demo")

    # ------------------------------------------------------------------------- layout
    def _build_views(self) -> None:
        """Centre: the views in tabs; below, the message log (hidden)."""
        self.boundary_view = BoundaryView()
        self.simplex_view = SimplexView()
        self.bars_view = BarsView()
        self.calibration_view = CalibrationView()
        self.results_view = ResultsView()
        self.tabs = QTabWidget()
        self.deck = ViewDeck(self.tabs, self.selection)
        views: tuple[View, ...] = (  # mypy checks that each implements the View protocol
            self.boundary_view,
            self.simplex_view,
            self.bars_view,
            self.calibration_view,
            self.results_view,
        )
        for view, title in zip(views, VIEW_TITLES, strict=True):
            self.deck.add(view, title)
        self.setCentralWidget(self.tabs)
        self.messages = MessageArea()
        self.message_dock = QDockWidget("Messages", self)
        self.message_dock.setObjectName("message_dock")
        self.message_dock.setWidget(self.messages)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.message_dock)
        self.message_dock.hide()

    def _connect(self) -> None:
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button.clicked.connect(self.cancel_run)
        self.status.cancel_button.clicked.connect(self.cancel_run)
        self.status.details_button.clicked.connect(self._show_details)
        panel = self.data_panel
        panel.dataset_changed.connect(self._on_dataset)
        panel.error.connect(self.show_error)
        panel.open_requested.connect(self.files.open_file_dialog)
        panel.file_loaded.connect(self.files.add_recent)
        panel.test_fraction.valueChanged.connect(self._on_split_options)
        panel.standardise.toggled.connect(self._on_split_options)
        runs = self.runs
        runs.state_changed.connect(self._on_run_state)
        runs.started.connect(self._on_started)
        runs.progressed.connect(self.status.show_progress)
        runs.live.connect(lambda live: self.boundary_view.add_live(live))
        runs.confirmation_needed.connect(self._confirm_cost)
        runs.finished.connect(self._on_finished)
        runs.failed.connect(self._on_failed)
        runs.cancelled.connect(self._on_cancelled)
        runs.plane_ready.connect(self.boundary_view.set_plane)
        runs.pi_boundary_ready.connect(self.boundary_view.set_pi_boundary)
        runs.baselines_ready.connect(self.deck.add_baselines)
        runs.job_failed.connect(self.show_error)
        runs.runner.warned.connect(self.status.show_warning)
        self.deck.drawn.connect(runs.start_due_baselines)
        bv = self.boundary_view
        bv.plane_requested.connect(lambda ix, iy: runs.request_plane(ix, iy, bv.reference()))
        bv.pi_requested.connect(lambda pi: runs.request_pi_boundary(pi, bv.path(), bv.subproblem()))
        self.results_view.baselines_requested.connect(runs.request_baselines)
        for view in (bv, self.bars_view):
            view.point_clicked.connect(self.selection.select)

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
            self.resize(PREFERRED_SIZE[0], PREFERRED_SIZE[1])
        fit_to_screen(self)  # a size remembered or preferred, inside this screen
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
        self.status.mirror(self.messages)

    def _show_details(self) -> None:
        self.message_dock.show()
        self.messages.details_button.setChecked(True)

    def ask(self, title: str, text: str, choices: list[str], default: str) -> str:
        """Ask the user to choose one of ``choices`` (tests replace this method)."""
        return ask_choice(self, title, text, choices, default)

    # -------------------------------------------------------------------------- data
    def _confirm_data_change(self) -> bool:
        """Before new data replace the old: during a run, ask whether to stop it."""
        if not self.runs.is_running():
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

    def _on_dataset(self, ds: Dataset) -> None:
        self.runs.clear_result()
        self._clear_views()
        self.selection.clear()
        # "data - app", the desktops' habit; ending in the display name, Qt adds no other
        self.setWindowTitle(f"{ds.name} \u2014 {APP_NAME}")
        chosen = self.settings_panel.refresh_availability(ds.n_classes)
        self.status.show_progress(0, "")
        try:
            split = self._make_split(self._settings_or_default())
        except InputError as exc:
            self.show_error(str(exc))
            return
        self._split = split
        self.settings_panel.set_training_data(split.train.X, split.train.y)
        self.boundary_view.set_split(split)
        self.results_view.clear(f"{ds.summary()}. Press Run.")
        notes = "".join(f" {n}" for n in self.data_panel.load_notes)
        if chosen is not None:
            notes += f" Scheme: {scheme_label(chosen)}, the default for {ds.n_classes} classes."
        self.show_info(f"Loaded {ds.summary()}.{notes}")

    def _on_split_options(self, *_args: Any) -> None:
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

    def _make_split(self, settings: RunSettings) -> DataSplit:
        tune = settings.tune_fraction if settings.tuning == "tune-set" else 0.0
        return self.data_panel.make_split(tune, settings.seed)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        self.files.drag_enter(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        self.files.drop(event)

    # --------------------------------------------------------------------------- runs
    @property
    def result(self) -> RunResult | None:
        """The last finished run (None before one, after new data)."""
        return self.runs.result

    def is_busy(self) -> bool:
        """A run (or its cost estimate or question), a plane, the baselines or a scoring
        job is being computed, or finished views are still drawing."""
        return self.runs.is_busy() or self.deck.is_drawing()

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
        _X, y_fit, _Xt, _yt = fit_inputs(settings, split)  # tune-set without a tuning part
        check_class_sizes(y_fit, ds.classes)  # a class too small for the split
        if self._split is not None and split.same_as(self._split):
            split = self._split  # keep the object the views already show
        ix, iy = self.boundary_view.plane()
        request = RunRequest(
            settings,
            split,
            ix,
            iy,
            DEFAULT_GRID,
            compare=self.settings_panel.compare_requested(),
            reference=self.boundary_view.reference() if ds.X.shape[1] > 2 else None,
        )
        plan_request(request)  # a run that cannot work (a class too small to split) says so now
        return request

    def start_run(self, *_args: Any, limit: float | None | str = "default") -> int | None:
        """Start a run with the panel's settings; None if it did not start.

        A run already going is stopped only if the user agrees.  A run expected to exceed
        ``limit`` seconds (default :attr:`confirm_limit`) asks first (:meth:`_confirm_cost`).
        """
        if self.runs.is_running():
            choice = self.ask(
                "A run is in progress",
                f"A run has been going for {format_seconds(self.runs.elapsed())}. Stop it "
                "and start again with the current settings?",
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
        chosen = self.confirm_limit if limit == "default" else limit
        return self.runs.start(request, None if isinstance(chosen, str) else chosen)

    def cancel_run(self) -> None:
        self.runs.cancel()

    def _on_run_state(self, state: str) -> None:
        running = state == RUNNING
        for w in (self.cancel_button, self.status.cancel_button, self.menu_actions["cancel"]):
            w.setEnabled(running)

    def _on_started(self, request: RunRequest) -> None:
        self._split = request.split
        self.deck.stop_drawing()
        if self.boundary_view.split is not request.split:
            self.boundary_view.set_split(request.split)
        self.boundary_view.begin_run()
        self.results_view.summary.setText("Running\u2026")
        self.state.save_settings(request.settings)
        self.state.set_value("run/preset", self.settings_panel.preset_name())
        self.show_info(
            f"Running {request.settings.scheme} on {request.split.dataset.name} "
            f"({request.split.train.size} training rows)\u2026"
        )

    def _confirm_cost(self, request: RunRequest, estimate: CostEstimate) -> None:
        """Ask before a long run; offer the quick preset."""
        self._restore_views()
        self.status.progress_label.setText(f"estimated {estimate.describe()}")
        choice = self.ask(
            "This run will take a while",
            f"The run is expected to take {estimate.describe()} on this machine (its fits "
            f"counted from the settings, a few of them timed on these data):\n\n"
            f"{estimate.details()}\n\nRun it anyway, or switch to the quick preset?",
            [RUN_ANYWAY, LIGHTER, CANCEL],
            LIGHTER,
        )
        if choice == RUN_ANYWAY:
            self.runs.confirm(request, estimate)
            return
        self.runs.decline()
        if choice == LIGHTER:
            self.settings_panel.apply_preset("quick")
            self.show_info("Switched to the quick preset.")
            self.start_run()
        else:
            self.status.progress_label.setText("not started")
            self.show_info(f"Run not started (it would take {estimate.describe()}).")

    def _on_finished(self, result: RunResult) -> None:
        self._show_result(result)
        measured = result.metrics.get("test", result.metrics.get("train", {}))
        first = ", ".join(
            f"{STATUS_NAMES.get(k, k)} {v:.3g}" for k, v in list(measured.items())[:4]
        )
        notes = "".join(f" {n}" for n in result.notes)
        self.show_info(f"Finished in {result.seconds:.2f} s. {first}{notes}")
        self.sessions.run_finished(result)

    def _on_failed(self, message: str, details: str) -> None:
        self.show_error(message, details)
        self._restore_views()
        self.sessions.run_stopped()

    def _on_cancelled(self) -> None:
        self._restore_views()
        kept = " The last result is shown." if self.result is not None else ""
        self.show_info("Run cancelled." + kept)
        self.sessions.run_stopped()

    def _show_result(self, result: RunResult) -> None:
        """Every view shows ``result`` (the one in front now, the others in later turns)."""
        self.deck.show_result(result, self.runs.baselines)
        for name in RESULT_ACTIONS:
            self.menu_actions[name].setEnabled(True)
        test = result.split.test.index
        row = self.selection.row
        if 0 <= row < result.split.dataset.X.shape[0]:
            self.deck.set_selection(row)
        else:
            self.selection.select(int(test[0]) if test.size else 0)

    def _clear_views(self) -> None:
        """No result: every view empty, nothing to export."""
        self.deck.clear()
        for name in RESULT_ACTIONS:
            self.menu_actions[name].setEnabled(False)

    def _restore_views(self) -> None:
        """After a failed or cancelled run: the last result everywhere, or nothing."""
        if self.result is not None:
            self._show_result(self.result)
        else:
            self._clear_views()

    # ---------------------------------------------------------------------- help, close
    def show_guide(self) -> None:
        self.guide_dialog = show_text(self, "wsvmgui user guide", GUIDE)

    def show_about(self) -> None:
        self.about_dialog = show_text(self, "About wsvmgui", ABOUT, size=(480, 300))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.runs.runner.cancel_all()
        self.state.save_window(self.saveGeometry(), self.saveState())
        with contextlib.suppress(InputError):
            self.state.save_settings(self.current_settings())
        self.state.set_value("run/preset", self.settings_panel.preset_name())
        self.state.sync()
        self.runs.runner.wait(3000)
        super().closeEvent(event)
