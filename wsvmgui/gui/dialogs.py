"""Small modal questions of the main window."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

CANCEL = "Cancel"


def ask_choice(parent: QWidget, title: str, text: str, choices: list[str], default: str) -> str:
    """Ask the user to choose one of ``choices``; ``default`` is the default button.

    "Cancel" and choices that start with "Keep" reject the dialog (Esc picks them);
    closing the dialog answers "Cancel".
    """
    box = QMessageBox(parent)
    box.setWindowTitle(title)
    box.setText(text)
    box.setIcon(QMessageBox.Icon.Question)
    buttons: dict[QPushButton, str] = {}
    for choice in choices:
        role = (
            QMessageBox.ButtonRole.RejectRole
            if choice == CANCEL or choice.startswith("Keep")
            else QMessageBox.ButtonRole.AcceptRole
        )
        buttons[box.addButton(choice, role)] = choice
    for button, choice in buttons.items():
        if choice == default:
            box.setDefaultButton(button)
    box.exec()
    clicked = box.clickedButton()
    return next((choice for b, choice in buttons.items() if b is clicked), CANCEL)
