"""The main window's file work: dialogs, exports, models, settings files, recent files and
dropped files.

:class:`FileActions` asks for paths with the standard dialogs (which confirm before
overwriting) and then calls the plain methods tests call directly (``export_csv(path)``,
``save_model(path)``, ...).  Each reports what it did or why it could not in the window's
message line and returns whether it worked; files are written atomically
(:mod:`wsvmgui.gui.export`, :mod:`wsvmgui.io`).  Sessions have their own helper
(:mod:`wsvmgui.gui.sessions`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QMimeData, QObject, QTimer
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMenu

from ..app.scoring import score_table
from ..errors import InputError
from ..io.modelfile import FittedModel, check_rows, load_model, save_model
from ..io.results import plain_json
from .export import ROW_CHOICES, export_plot, export_probabilities, load_settings, save_settings
from .views.base import View

if TYPE_CHECKING:
    from .main_window import MainWindow

#: Files the window opens when dropped on it (and session files).
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
TABLE_FILTER = "Tables (*.csv *.tsv *.tab *.txt);;All files (*)"
MAX_RECENT = 8


class FileActions(QObject):
    """Dialogs and file I/O of ``window``.

    Attributes
    ----------
    model : FittedModel or None
        The model file loaded to score new tables with (else the shown result's).
    recent_menu : QMenu
        File > Open recent, kept filled with :meth:`recent_files`.
    """

    def __init__(self, window: MainWindow, recent_menu: QMenu) -> None:
        super().__init__(window)
        self.window = window
        self.model: FittedModel | None = None
        self.recent_menu = recent_menu
        self._fill_recent()

    # -------------------------------------------------------------------------- paths
    def ask_open_path(self, title: str, filters: str) -> str:
        """A path from the open dialog, starting in the last folder ("" if cancelled)."""
        path, _ = QFileDialog.getOpenFileName(
            self.window, title, self.window.state.last_folder, filters
        )
        return path

    def ask_save_path(self, title: str, name: str, filters: str) -> str:
        """A path from the save dialog ("" if cancelled; the chosen filter's suffix added
        when the name has none)."""
        path, chosen = QFileDialog.getSaveFileName(
            self.window, title, os.path.join(self.window.state.last_folder, name), filters
        )
        if path:
            if not Path(path).suffix and "(*." in chosen:
                path += chosen.split("(*", 1)[1].split(")", 1)[0].split()[0]
            self.window.state.last_folder = path
        return path

    # --------------------------------------------------------------------------- data
    def open_file_dialog(self) -> None:
        path = self.ask_open_path("Open a data table", TABLE_FILTER)
        if path:
            self.window.state.last_folder = path
            self.window.data_panel.open_file(path)

    def open_path(self, path: str) -> bool:
        """Open a table or a session file by its name."""
        if path.endswith(".json"):
            return self.window.sessions.open_session(path)
        if not os.path.exists(path):
            self.window.show_error(f"{path} is not there any more.")
            return False
        return self.window.data_panel.open_file(path)

    def recent_files(self) -> list[str]:
        value = self.window.state.value("paths/recent", "", str) or ""
        return [p for p in value.split("\n") if p]

    def add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        items = [path] + [p for p in self.recent_files() if p != path]
        self.window.state.set_value("paths/recent", "\n".join(items[:MAX_RECENT]))
        self._fill_recent()

    def _clear_recent(self) -> None:
        self.window.state.set_value("paths/recent", "")
        self._fill_recent()

    def _fill_recent(self) -> None:
        menu = self.recent_menu
        menu.clear()
        items = self.recent_files()
        for i, path in enumerate(items):
            act = menu.addAction(f"&{i + 1} {os.path.basename(path)}")
            act.setToolTip(path)
            act.triggered.connect(lambda _=False, p=path: self.open_path(p))
        if items:
            menu.addSeparator()
            menu.addAction("Clear the list").triggered.connect(self._clear_recent)
        menu.setEnabled(bool(items))

    @staticmethod
    def dropped_path(mime: QMimeData) -> str | None:
        """The first local table or session file of a drag, or None."""
        if not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile():
                path = url.toLocalFile()
                if path.lower().endswith((*TABLE_SUFFIXES, ".json")):
                    return path
        return None

    def drag_enter(self, event: QDragEnterEvent) -> None:
        if self.dropped_path(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def drop(self, event: QDropEvent) -> None:
        path = self.dropped_path(event.mimeData())
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        QTimer.singleShot(0, lambda: self.open_path(path))

    # ------------------------------------------------------------------------ exports
    def export_csv_dialog(self) -> None:
        if self.window.result is None:
            self.window.show_error("Nothing to export yet: run an analysis first.")
            return
        rows, ok = QInputDialog.getItem(
            self.window, "Export probabilities", "Rows to export:", list(ROW_CHOICES), 0, False
        )
        if not ok:
            return
        name = f"probabilities-{rows}.csv"
        path = self.ask_save_path("Export probabilities", name, "CSV (*.csv)")
        if path:
            self.export_csv(path, rows)

    def export_csv(self, path: str, rows: str = "test") -> bool:
        result = self.window.result
        if result is None:
            self.window.show_error("Nothing to export yet: run an analysis first.")
            return False
        try:
            n = export_probabilities(path, result, rows)
        except (InputError, OSError) as exc:
            self.window.show_error(f"Export failed: {exc}")
            return False
        self.window.show_info(f"Wrote {n} rows to {path}.")
        return True

    def export_plot_dialog(self) -> None:
        view = self.window.deck.current()
        name = self.window.deck.current_title().split()[0].lower()
        path = self.ask_save_path("Export plot", f"{name}.png", "PNG image (*.png);;SVG (*.svg)")
        if path:
            self.export_plot(path, view)

    def export_plot(self, path: str, view: View | None = None) -> bool:
        """Save ``view`` (default: the one in front) as PNG or SVG, by the suffix."""
        view = view or self.window.deck.current()
        try:
            export_plot(path, view.export_item())
        except (InputError, OSError) as exc:
            self.window.show_error(f"Export failed: {exc}")
            return False
        self.window.show_info(f"Saved the plot to {path}.")
        return True

    def copy_plot(self) -> None:
        QApplication.clipboard().setPixmap(self.window.deck.current().export_item().grab())
        self.window.show_info("Copied the plot to the clipboard.")

    def copy_selected(self) -> None:
        row, result = self.window.selection.row, self.window.result
        if result is None or row < 0:
            self.window.show_error("Select a point first (click it in a view).")
            return
        QApplication.clipboard().setText(self.window.bars_view.describe_row(row, result))
        self.window.show_info("Copied the selected point's probabilities.")

    # ----------------------------------------------------------------------- settings
    def save_settings_dialog(self) -> None:
        try:
            settings = self.window.current_settings()
        except InputError as exc:
            self.window.show_error(str(exc))
            return
        path = self.ask_save_path("Save settings", "settings.json", "JSON (*.json)")
        if path:
            try:
                save_settings(path, settings)
            except (InputError, OSError) as exc:
                self.window.show_error(f"Could not save the settings: {exc}")
                return
            self.window.show_info(f"Saved the settings to {path}.")

    def load_settings_dialog(self) -> None:
        path = self.ask_open_path("Load settings", "JSON (*.json);;All files (*)")
        if path:
            self.load_settings_file(path)

    def load_settings_file(self, path: str) -> bool:
        try:
            settings = load_settings(path)
        except InputError as exc:
            self.window.show_error(f"Could not load {path}: {exc}")
            return False
        self.window.apply_settings(settings)
        self.window.show_info(f"Loaded the settings from {path}.")
        return True

    # ------------------------------------------------------------------------- models
    def fitted_model(self) -> FittedModel:
        """The shown result as a model file's content (InputError without a result)."""
        res = self.window.result
        if res is None:
            raise InputError("no fitted model yet: run an analysis first")
        split, ds = res.split, res.split.dataset
        meta: dict[str, Any] = {
            "data": ds.name,
            "rows": {"train": split.train.size, "tune": split.tune.size, "test": split.test.size},
            "metrics": res.metrics,
            "made_by": "wsvmgui desktop app",
        }
        fitted = res.estimator.fitted_summary()
        meta.update({k: fitted[k] for k in ("lambda", "sigma") if fitted[k] is not None})
        return FittedModel(
            res.estimator,
            split.preprocessing,
            ds.label_name,
            res.settings.to_dict(),
            plain_json(meta),
        )

    def save_model_dialog(self) -> None:
        path = self.ask_save_path("Save model", "model.wsvm", "wsvmgui model (*.wsvm)")
        if path:
            self.save_model(path)

    def save_model(self, path: str) -> bool:
        result = self.window.result
        try:
            if result is None:
                raise InputError("no fitted model yet: run an analysis first")
            X = result.split.train.X
            digest = save_model(path, self.fitted_model(), check_rows(X, X.shape[1]))
        except (InputError, OSError) as exc:
            self.window.show_error(f"Could not save the model: {exc}")
            return False
        self.window.show_info(f"Saved the model to {path} (sha256 {digest[:12]}\u2026).")
        return True

    def load_model_dialog(self) -> None:
        path = self.ask_open_path("Load model", "wsvmgui model (*.wsvm);;All files (*)")
        if path:
            self.load_model(path)

    def load_model(self, path: str) -> bool:
        try:
            model = load_model(path)
        except (InputError, OSError) as exc:
            self.window.show_error(f"Could not load the model: {exc}")
            return False
        self.model = model
        scheme = model.settings.get("scheme", "?")
        self.window.show_info(
            f"Loaded the model {os.path.basename(path)}: scheme {scheme}, classes "
            f"{', '.join(model.classes)}; {model.preprocessing.describe()}. Score a file "
            "with File \u25b8 Score a file."
        )
        return True

    def score_file_dialog(self) -> None:
        source = self.ask_open_path("Score a file", TABLE_FILTER)
        if not source:
            return
        out = self.ask_save_path(
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
            self.window.show_error(f"Nothing to score with: {exc}; or load a model file")
            return None

        def job(progress, should_cancel, publish):
            return score_table(model, source, out)

        self.window.show_info(f"Scoring {os.path.basename(source)}\u2026")
        return self.window.runs.runner.start(
            "score", job, on_result=self.window.show_info, on_error=self.window.show_error
        )
