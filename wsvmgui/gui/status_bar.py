"""The main window's status bar: the latest message, then the run's progress and Cancel.

Progress updates repaint two small fixed-size widgets and never re-lay out the bar; the
progress bar moves in steps of 2% (each repaint costs a few milliseconds).  A warning
raised inside a job shows for a while in place of the message (Qt's temporary message).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar, QWidget

from .messages import MessageArea

#: How long a warning stays in the status bar (ms).
WARNING_MS = 15000


class RunStatusBar(QStatusBar):
    """Message, details button, progress text and bar, and a Cancel button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message = QLabel("")
        self.message.setMinimumWidth(50)
        self.details_button = QPushButton("Details\u2026")
        self.details_button.setToolTip("Show the message log with the details")
        self.details_button.setVisible(False)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 100)
        self.progress_bar.setFixedWidth(110)
        self.progress_bar.setTextVisible(False)
        self.progress_label = QLabel("")
        self.progress_label.setFixedWidth(330)
        self.progress_label.setAlignment(
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run (Esc)")
        self.cancel_button.setEnabled(False)
        self.addWidget(self.message, 1)
        self.addWidget(self.details_button)
        self.addPermanentWidget(self.progress_label)
        self.addPermanentWidget(self.progress_bar)
        self.addPermanentWidget(self.cancel_button)

    def show_progress(self, percent: int, text: str) -> None:
        """The run's share done (0-100) and its status line."""
        old = self.progress_bar.value()
        if percent != old and (abs(percent - old) >= 2 or percent in (0, 100)):
            self.progress_bar.setValue(percent)
        self.progress_label.setText(text)

    def mirror(self, messages: MessageArea) -> None:
        """Show the message area's latest message (its colour; Details when it has some)."""
        self.message.setText(messages.text())
        self.message.setToolTip(messages.text())
        self.message.setStyleSheet(messages.label.styleSheet())
        self.details_button.setVisible(bool(messages.details.toPlainText()))

    def show_warning(self, source: str, text: str) -> None:
        """A warning raised inside a job of kind ``source``, for :data:`WARNING_MS`."""
        self.showMessage(f"Warning ({source}): {text}", WARNING_MS)
