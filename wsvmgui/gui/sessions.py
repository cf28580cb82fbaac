"""Sessions of the main window: save what is shown, reopen it and run it again.

A session (:mod:`wsvmgui.app.session`) holds the data reference, the split options, the
settings, the view (tab, plane, slice point, selected row) and the probabilities of the
shown result.  :meth:`SessionActions.open_session` puts all of it back and runs the
settings again; when that run finishes (:meth:`SessionActions.run_finished`) it selects
the saved row and says whether the run reproduced the saved probabilities.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject

from ..app.session import (
    SESSION_SUFFIX,
    Session,
    check_data_file,
    compare_results,
    load_session,
    results_record,
    save_session,
)
from ..errors import InputError

if TYPE_CHECKING:
    from ..app.view_data import RunResult
    from .main_window import MainWindow


class SessionActions(QObject):
    """Save and reopen sessions of ``window``."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._pending: Session | None = None  # reopened, its run not finished yet

    def session(self) -> Session:
        """The session as it stands (InputError if the settings are invalid)."""
        w = self.window
        view = w.boundary_view
        ix, iy = view.plane()
        ds = w.data_panel.dataset
        shown = {
            "tab": w.deck.current_title(),
            "ix": ix,
            "iy": iy,
            "reference": (
                [float(v) for v in view.reference()]
                if ds is not None and ds.X.shape[1] > 2
                else None
            ),
            "follow": view.slice_panel.follow.isChecked(),
            "selected": int(w.selection.row),
        }
        return Session(
            w.data_panel.source_reference(),
            {
                "test_fraction": round(w.data_panel.test_fraction.value(), 4),
                "standardise": w.data_panel.standardise.isChecked(),
            },
            w.current_settings(),
            w.settings_panel.preset_name(),
            w.settings_panel.compare.isChecked(),
            shown,
            results_record(w.result) if w.result is not None else None,
        )

    def save_session_dialog(self) -> None:
        path = self.window.files.ask_save_path(
            "Save session", f"session{SESSION_SUFFIX}", f"wsvmgui session (*{SESSION_SUFFIX})"
        )
        if path:
            self.save_session(path)

    def save_session(self, path: str) -> bool:
        try:
            save_session(path, self.session())
        except (InputError, OSError) as exc:
            self.window.show_error(f"Could not save the session: {exc}")
            return False
        self.window.show_info(f"Saved the session to {path}.")
        return True

    def open_session_dialog(self) -> None:
        path = self.window.files.ask_open_path(
            "Open session", f"wsvmgui session (*{SESSION_SUFFIX} *.json);;All files (*)"
        )
        if path:
            self.open_session(path)

    def open_session(self, path: str, run: bool = True) -> bool:
        """Load a session: data, split, settings, view; then run it again (unless told)."""
        w = self.window
        try:
            session = load_session(path)
            warning = check_data_file(session.data)
        except InputError as exc:
            w.show_error(f"Could not open the session: {exc}")
            return False
        if not self._load_data(session):
            w.show_error(f"Could not open the session: its data did not load. {w.messages.text()}")
            return False
        w.apply_settings(session.settings, preset=session.preset)
        w.settings_panel.compare.setChecked(session.compare)
        self._restore_view(session.view)
        w.files.add_recent(path)
        note = f" Note: {warning}." if warning else ""
        if not run:
            w.show_info(f"Opened the session {os.path.basename(path)}.{note}")
            return True
        self._pending = session
        if w.start_run(limit=None) is None:
            self._pending = None
            return False
        w.show_info(f"Opened the session {os.path.basename(path)}; running it again\u2026{note}")
        return True

    def _load_data(self, session: Session) -> bool:
        data, panel = session.data, self.window.data_panel
        panel.test_fraction.setValue(float(session.split["test_fraction"]))
        panel.set_options(session.settings.missing, bool(session.split["standardise"]))
        if data["kind"] != "builtin":
            return panel.open_file(data["path"], data["label"], list(data["features"]))
        if "n" in data:
            panel.n_points.setValue(int(data["n"]))
        if "seed" in data:
            panel.data_seed.setValue(int(data["seed"]))
        panel.discard_pending()
        return panel.load_builtin(data["name"])

    def _restore_view(self, shown: dict) -> None:
        w = self.window
        ds = w.data_panel.dataset
        p = ds.X.shape[1] if ds is not None else 0
        ix, iy = int(shown.get("ix", 0)), int(shown.get("iy", 1))
        if 0 <= ix < p and 0 <= iy < p:
            w.boundary_view.set_plane_choice(ix, iy)
        w.boundary_view.slice_panel.follow.setChecked(bool(shown.get("follow", True)))
        ref = shown.get("reference")
        if ref is not None and len(ref) == p:
            w.boundary_view.set_reference(np.asarray(ref, float), request=False)
        titles = w.deck.titles()
        if shown.get("tab") in titles:
            w.deck.show_tab(titles.index(shown["tab"]))

    # ----------------------------------------------------------------- the run again
    def run_finished(self, result: RunResult) -> None:
        """A run finished: if it reran a session, compare it with the saved results."""
        session, self._pending = self._pending, None
        if session is None:
            return
        w = self.window
        selected = int(session.view.get("selected", -1))
        if 0 <= selected < result.split.dataset.X.shape[0]:
            w.selection.select(selected)
        if session.results is None:
            w.show_info("Session reopened (it held no results).")
            return
        same, diff = compare_results(session.results, result)
        if same:
            w.show_info(
                f"Session reopened: the run reproduced the saved probabilities "
                f"(largest difference {diff:.1g})."
            )
        else:
            w.show_error(
                "Session reopened, but the run did not reproduce the saved probabilities "
                f"(largest difference {diff:.3g}): the data or the software changed."
            )

    def run_stopped(self) -> None:
        """The run failed or was cancelled: a reopened session's check is off."""
        self._pending = None
