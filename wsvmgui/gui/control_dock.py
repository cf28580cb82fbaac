"""The left dock of the main window: the data and settings panels, with Run and Cancel
always in sight below them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .data_panel import DataPanel
from .settings_panel import SettingsPanel


class ControlDock(QDockWidget):
    """ "Data and settings": two tabs (:class:`DataPanel`, :class:`SettingsPanel`) and the
    Run and Cancel buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Data and settings", parent)
        self.setObjectName("left_dock")
        self.data_panel = DataPanel()
        self.settings_panel = SettingsPanel()
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Fit the scheme on the training part (Ctrl+R)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run; the last result comes back (Esc)")
        self.cancel_button.setEnabled(False)
        self.tabs = QTabWidget()
        self.tabs.addTab(_scrolled(self.data_panel), "Data")
        self.tabs.addTab(_scrolled(self.settings_panel), "Settings")
        left = QWidget()
        layout = QVBoxLayout(left)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tabs, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 2)
        buttons.addWidget(self.cancel_button, 1)
        layout.addLayout(buttons)
        left.setMinimumWidth(250)
        self.setWidget(left)
        self.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )


def _scrolled(widget: QWidget) -> QScrollArea:
    """``widget`` in a vertical scroll area (only scrolls when the window is very short)."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(widget)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    return scroll
