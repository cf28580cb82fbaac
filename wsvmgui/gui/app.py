"""Start the desktop app: ``wsvmgui`` without arguments, or ``python -m wsvmgui.gui.app``."""

from __future__ import annotations

import sys
from importlib import resources


def main(argv: list[str] | None = None) -> int:
    """Open the main window and run the event loop; returns the exit code."""
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow

    argv = list(sys.argv if argv is None else [sys.argv[0], *argv])
    app = QApplication.instance() or QApplication(argv)
    app.setOrganizationName("wsvmgui")
    app.setApplicationName("wsvmgui")
    app.setApplicationDisplayName("wsvmgui")
    icon = resources.files("wsvmgui") / "resources" / "wsvmgui.png"
    if icon.is_file():
        with resources.as_file(icon) as path:
            app.setWindowIcon(QIcon(str(path)))
    window = MainWindow()
    window.show()
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
