"""The message area: the latest error or notice, with details on request.

Its colours follow the palette: dark red and green on a light window, light red and green
on a dark one, each with a contrast of at least 4.5 : 1 to the window colour.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

#: Advice worded for the command line (:mod:`wsvmgui.io`, :mod:`wsvmgui.app` share it with
#: ``wsvmgui fit``) as the app's controls say it.
APP_WORDS = (
    ("(--missing drop)", "(Missing values: drop)"),
    ("(--missing impute)", "(Missing values: impute)"),
    ("use --missing drop", "choose drop under Missing values"),
    ("choose the feature columns with --features", "choose the feature columns (File \u25b8 "
     "Choose columns)"),
    ("; if the value means missing, add it to --na-values", ""),
    ("(or drop --no-standardize)", "(or tick 'standardise features')"),
    ("use a lower --degree", "use a lower degree"),
    ("a Dask cluster (--scheduler)", "a Dask cluster (Settings \u25b8 Dask scheduler)"),
    (" or pass --no-screen for the full search", " for the full search"),
)  # fmt: skip
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z-]*)")
_ABSOLUTE = re.compile(r"(?<![\w.:/])(?:/[^\s/'\",;:()]+)+/([^\s/'\",;:()]+)")


def app_wording(text: str) -> str:
    """``text`` as the app says it: no command-line flags, no absolute paths.

    Advice for the command line (``--missing drop``) names the app's control instead
    (:data:`APP_WORDS`; any other flag becomes its setting's name), and an absolute path
    becomes the file's name.
    """
    for cli, app in APP_WORDS:
        text = text.replace(cli, app)
    text = _FLAG.sub(lambda m: f"the {m.group(1).replace('-', ' ')!r} setting", text)
    return _ABSOLUTE.sub(lambda m: m.group(1), text)


LIGHT = {"error": "#b00020", "info": "#1b5e20"}
DARK = {"error": "#ff8a80", "info": "#a5d6a7"}


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def message_color(level: str, palette: QPalette) -> str:
    """Text colour of a message of ``level`` ("error", "info") on ``palette``'s window."""
    return (DARK if is_dark(palette) else LIGHT)[level]


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""

    def lum(c: QColor) -> float:
        def ch(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF())

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


class MessageArea(QWidget):
    """One line of message plus an expandable details box (tracebacks, file paths)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel("Ready.")
        self.label.setWordWrap(True)
        # fixed height: a longer message must not resize the views above
        self.label.setFixedHeight(self.label.fontMetrics().lineSpacing() * 2 + 6)
        self.details_button = QPushButton("Details")
        self.details_button.setCheckable(True)
        self.details_button.setVisible(False)
        self.clear_button = QPushButton("Clear")
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setVisible(False)
        self.details.setMaximumHeight(160)
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.details_button)
        top.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addLayout(top)
        layout.addWidget(self.details)
        self.details_button.toggled.connect(self.details.setVisible)
        self.clear_button.clicked.connect(self.clear)
        self.level = "info"
        self.history: list[tuple[str, str]] = []

    def show_error(self, message: str, details: str = "") -> None:
        self._show("error", message, details)

    def show_info(self, message: str, details: str = "") -> None:
        self._show("info", message, details)

    def _show(self, level: str, message: str, details: str) -> None:
        message = app_wording(message)
        self.level = level
        self.history.append((level, message))
        color = message_color(level, self.palette())
        prefix = "Error: " if level == "error" else ""
        self.label.setStyleSheet(f"color: {color};")
        self.label.setText(prefix + message)
        self.details.setPlainText(details)
        self.details_button.setVisible(bool(details))
        if not details:
            self.details_button.setChecked(False)

    def clear(self) -> None:
        self.level = "info"
        self.label.setStyleSheet("")
        self.label.setText("")
        self.details.clear()
        self.details_button.setChecked(False)
        self.details_button.setVisible(False)

    def text(self) -> str:
        return self.label.text()
