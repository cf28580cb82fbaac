"""The main window's status bar: the latest message, then the run's progress and Cancel.

Progress updates repaint two small fixed-size widgets and never re-lay out the bar; the
progress bar moves in steps of 2% (each repaint costs a few milliseconds).  The message
and the progress text are :class:`ElidedLabel`: on a narrow window (1024 px) they end in
"\u2026" where they do not fit, the whole text in their tooltip (and the message in the
message log).  A warning raised inside a job shows for a while in place of the message,
elided the same way (Qt's own temporary message would cut it).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QSizePolicy, QStatusBar, QWidget

from .messages import MessageArea, app_wording

#: How long a warning stays in the status bar (ms).
WARNING_MS = 15000


class ElidedLabel(QLabel):
    """A one-line label that shows as much of its text as its width holds, ending in
    "\u2026", and the whole text as its tooltip.

    ``text()`` is the whole text; :meth:`shown_text` what is drawn.  Its width comes from
    the layout alone (the text never widens it), at least ``min_width`` pixels.
    """

    def __init__(self, text: str = "", min_width: int = 50, parent: QWidget | None = None):
        super().__init__(parent)
        self._full = ""
        self.setMinimumWidth(min_width)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def text(self) -> str:  # the whole text, not the part shown
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = text
        self.setToolTip(text)
        self._elide()

    def shown_text(self) -> str:
        """The text as drawn: the whole text, or its start and "\u2026"."""
        return super().text()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin() - 2 * max(self.indent(), 0)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        if shown != super().text():
            super().setText(shown)


class RunStatusBar(QStatusBar):
    """Message, details button, progress text and bar, and a Cancel button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message = ElidedLabel("")
        self.details_button = QPushButton("Details\u2026")
        self.details_button.setToolTip("Show the message log with the details")
        self.details_button.setVisible(False)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 100)
        self.progress_bar.setFixedWidth(110)
        self.progress_bar.setTextVisible(False)
        self.progress_label = ElidedLabel("")
        self.progress_label.setFixedWidth(330)
        self.progress_label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self.progress_label.setAlignment(
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run (Esc)")
        self.cancel_button.setEnabled(False)
        #: A job's warning, shown for :data:`WARNING_MS` in place of the message.
        self.warning = ElidedLabel("")
        self.warning.setVisible(False)
        self._has_details = False
        self._warning_timer = QTimer(self)
        self._warning_timer.setSingleShot(True)
        self._warning_timer.timeout.connect(self.clear_warning)
        self.addWidget(self.message, 1)
        self.addWidget(self.warning, 1)
        self.addWidget(self.details_button)
        self.addPermanentWidget(self.progress_label)
        self.addPermanentWidget(self.progress_bar)
        self.addPermanentWidget(self.cancel_button)

    def show_progress(self, percent: int, text: str) -> None:
        """The run's share done (0-100) and its status line."""
        old = self.progress_bar.value()
        if percent != old and (abs(percent - old) >= 2 or percent in (0, 100)):
            self.progress_bar.setValue(percent)
        self.progress_label.setText(text)  # (the whole line in its tooltip)

    def mirror(self, messages: MessageArea) -> None:
        """Show the message area's latest message (its colour; Details when it has some)."""
        self.message.setText(messages.text())  # (the whole text in its tooltip)
        self.message.setStyleSheet(messages.label.styleSheet())
        self._has_details = bool(messages.details.toPlainText())
        self.details_button.setVisible(self._has_details and not self.warning.isVisible())

    def show_warning(self, source: str, text: str) -> None:
        """A warning raised inside a job of kind ``source``, for :data:`WARNING_MS` in place
        of the message (elided, the whole text in its tooltip); a later one replaces it."""
        self.warning.setText(f"Warning ({source}): {app_wording(text)}")
        self.message.setVisible(False)
        self.details_button.setVisible(False)
        self.warning.setVisible(True)
        self._warning_timer.start(WARNING_MS)

    def clear_warning(self) -> None:
        """The message again in place of a job's warning."""
        self._warning_timer.stop()
        self.warning.setVisible(False)
        self.warning.setText("")
        self.message.setVisible(True)
        self.details_button.setVisible(self._has_details)
