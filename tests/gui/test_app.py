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
