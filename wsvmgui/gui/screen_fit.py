"""The main window's size against its screen: it opens inside the available area."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QWidget

#: The window's size on first launch where the screen has room for it.
PREFERRED_SIZE = (1400, 900)
#: Pixels of the screen's available area left for the window frame and title bar.
SCREEN_MARGIN = 40


def fitted_size(width: int, height: int, available: QRect) -> tuple[int, int]:
    """``(width, height)`` shrunk to fit ``available`` (the screen's available geometry)
    less :data:`SCREEN_MARGIN` for the frame; never below 640 x 480."""
    room_w = max(available.width() - SCREEN_MARGIN, 640)
    room_h = max(available.height() - SCREEN_MARGIN, 480)
    return min(width, room_w), min(height, room_h)


def fit_to_screen(window: QWidget) -> None:
    """Shrink ``window`` (and move it) into its screen's available area
    (:meth:`QScreen.availableGeometry`), keeping :data:`SCREEN_MARGIN` pixels for the frame
    and the desktop's panels."""
    screen = window.screen()
    if screen is None:
        return
    area = screen.availableGeometry()
    w, h = fitted_size(window.width(), window.height(), area)
    if (w, h) != (window.width(), window.height()):
        window.resize(w, h)
    frame = window.frameGeometry()
    x = min(max(frame.x(), area.x()), area.right() + 1 - frame.width())
    y = min(max(frame.y(), area.y()), area.bottom() + 1 - frame.height())
    if (x, y) != (frame.x(), frame.y()):
        window.move(max(x, area.x()), max(y, area.y()))
