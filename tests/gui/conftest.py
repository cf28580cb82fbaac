"""Fixtures of the GUI tests: headless Qt, settings in a temporary folder, a main window."""

from __future__ import annotations

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("pyqtgraph")

from PySide6.QtCore import QSettings  # noqa: E402

from wsvmgui.app.settings import RunSettings

#: A run of a few hundred milliseconds on the demo data: M = 5, one lambda, one sigma.
TINY = RunSettings(scheme="binary", n_weights=5, lambdas=[0.005], sigmas=[0.5], n_jobs=1)
#: A run long enough to cancel: thousands of fits.
LONG = RunSettings(
    scheme="binary",
    n_weights=60,
    lambdas=[0.1, 0.03, 0.01, 0.003, 0.001, 0.0003],
    sigmas=None,
    n_jobs=1,
)
#: A run of many seconds on any machine: 8 lambdas x 6 sigmas x 5 folds + the final
#: ladder, 199 grid weights each, 47,959 fits (12 s of CPU on a 2-core machine of 2026).
HEAVY = RunSettings(
    scheme="binary",
    n_weights=200,
    lambdas=[1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003],
    sigmas=[0.25, 0.5, 1, 2, 4, 8],
    tuning="cv",
    cv_folds=5,
    n_jobs=1,
    engine="grid",
)


@pytest.fixture
def settings_folder(tmp_path, qapp):
    from wsvmgui.gui.state import use_settings_folder

    folder = tmp_path / "qsettings"
    folder.mkdir()
    use_settings_folder(folder)
    return folder


@pytest.fixture
def app_state(settings_folder):
    from wsvmgui.gui.state import AppState

    return AppState(QSettings(str(settings_folder / "wsvmgui.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def window(qtbot, app_state):
    from wsvmgui.gui.main_window import MainWindow

    win = MainWindow(app_state)

    def unexpected_ask(title, text, choices, default):
        raise AssertionError(f"unexpected question: {title}: {text}")

    win.ask = unexpected_ask  # a modal question would block the test; tests that expect one set it
    win.resize(1200, 800)
    qtbot.addWidget(win)
    win.show()
    # No cyclic garbage collection while the window's worker threads run: collecting an
    # earlier test's Qt and pyqtgraph objects on the GUI thread while a worker traces a
    # path has crashed (segfault) and deadlocked the test process now and then (seen with
    # this branch and its parent alike).  Collected here instead, with every worker idle.
    gc.disable()
    try:
        yield win
    finally:
        win.runs.runner.cancel_all()
        win.runs.runner.wait(10000)
        gc.enable()
        gc.collect()


def run_and_wait(qtbot, window, settings: RunSettings, timeout: int = 60000):
    """Put ``settings`` in the panel, start a run and wait for it to end."""
    window.settings_panel.set_settings(settings)
    job = window.start_run()
    assert job is not None, window.messages.text()
    # the run, its deferred views, the baselines and planes it started
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=timeout)
    return window.result


@pytest.fixture
def shown_panel(qtbot):
    """``make(n_classes)``: a shown settings panel offering the schemes of data with
    ``n_classes`` classes."""
    from wsvmgui.gui.settings_panel import SettingsPanel

    def make(n_classes: int) -> SettingsPanel:
        panel = SettingsPanel()
        qtbot.addWidget(panel)
        panel.refresh_availability(n_classes)
        panel.show()
        return panel

    return make


@pytest.fixture
def shown_view(qtbot):
    """``make(view_class, width, height)``: a view of that class, shown at that size."""

    def make(view_class, width: int, height: int):
        view = view_class()
        qtbot.addWidget(view)
        view.resize(width, height)
        view.show()
        return view

    return make
