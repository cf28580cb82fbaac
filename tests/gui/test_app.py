"""``wsvmgui`` without arguments opens the main window (settings in a temporary folder)."""

from __future__ import annotations

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication


def test_main_opens_the_window_with_the_demo(qapp, settings_folder):
    from wsvmgui.gui.app import main
    from wsvmgui.gui.main_window import MainWindow

    seen = []

    def look() -> None:
        windows = [
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
        ]
        seen.extend(windows)
        for w in windows:
            w.close()
        qapp.quit()

    QTimer.singleShot(300, look)
    # closing the last window must not leave a deferred quit behind for later tests
    qapp.setQuitOnLastWindowClosed(False)
    try:
        assert main([]) == 0
    finally:
        qapp.setQuitOnLastWindowClosed(True)
    assert len(seen) == 1
    assert seen[0].data_panel.dataset.name == "demo"
    # the window saved its state where the test pointed QSettings, not in the user's home
    store = QSettings(QSettings.defaultFormat(), QSettings.Scope.UserScope, "wsvmgui", "wsvmgui")
    assert store.fileName().startswith(str(settings_folder))
    assert store.value("window/geometry") is not None


def test_no_display_gives_one_line_and_exit_status_2():
    """A bare ``wsvmgui`` without a display says so instead of Qt's SIGABRT."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("QT_QPA_PLATFORM", None)
    code = "import sys; from wsvmgui.gui.app import main; sys.exit(main([]))"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no display" in lines[0] and "xvfb-run" in lines[0]
    assert "Reinstalling" not in proc.stderr


def test_display_problem_rules():
    from wsvmgui.gui.app import display_problem

    linux = "linux"
    assert display_problem([], {}, linux) is not None
    assert display_problem([], {"DISPLAY": ":0"}, linux) is None
    assert display_problem([], {"WAYLAND_DISPLAY": "wayland-0"}, linux) is None
    assert display_problem([], {"QT_QPA_PLATFORM": "offscreen"}, linux) is None
    assert display_problem(["-platform", "minimal"], {}, linux) is None
    assert display_problem([], {"QT_QPA_PLATFORM": "xcb"}, linux) is not None
    assert display_problem([], {}, "darwin") is None
