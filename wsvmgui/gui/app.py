"""Start the desktop app: ``wsvmgui`` without arguments, or ``python -m wsvmgui.gui.app``."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from importlib import resources
from typing import cast

#: Qt platforms that need no display server.
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb", "vkkhrdisplay")

NO_DISPLAY = (
    "wsvmgui: error: no display to open the desktop app on (DISPLAY and WAYLAND_DISPLAY "
    "are unset); run it in a desktop session, over `ssh -X`, or on a virtual screen with "
    "`xvfb-run -a wsvmgui`; the command line (`wsvmgui --help`) needs no display"
)


def display_problem(
    argv: list[str], environ: Mapping[str, str] | None = None, platform: str | None = None
) -> str | None:
    """Why Qt would find no display to open a window on, or None if it can.

    On Linux and other X11/Wayland systems Qt aborts (SIGABRT) when it has neither; macOS
    and Windows always have a display.  A headless Qt platform (``QT_QPA_PLATFORM`` or
    ``-platform``, e.g. ``offscreen``) needs none.
    """
    env = os.environ if environ is None else environ
    system = sys.platform if platform is None else platform
    if system.startswith(("win", "darwin", "cygwin")):
        return None
    chosen = env.get("QT_QPA_PLATFORM", "")
    for i, arg in enumerate(argv):
        if arg in ("-platform", "--platform") and i + 1 < len(argv):
            chosen = argv[i + 1]
    if chosen.split(":", 1)[0] in HEADLESS_PLATFORMS:
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return NO_DISPLAY


def main(argv: list[str] | None = None) -> int:
    """Open the main window and run the event loop; returns the exit code.

    Returns 2, with one line on stderr, when there is no display to open it on.
    """
    argv = list(sys.argv if argv is None else [sys.argv[0], *argv])
    problem = display_problem(argv[1:])
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow

    app = cast(QApplication, QApplication.instance() or QApplication(argv))
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
