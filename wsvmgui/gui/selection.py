"""The selected data row, shared by every view."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class SelectionModel(QObject):
    """Holds one selected data row (or -1 for none) and announces changes.

    Signals
    -------
    changed(row)
    """

    changed = Signal(int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._row = -1

    @property
    def row(self) -> int:
        return self._row

    def select(self, row: int) -> None:
        """Select data row ``row`` (-1 clears); emits ``changed`` only on a change."""
        row = int(row)
        if row != self._row:
            self._row = row
            self.changed.emit(row)

    def clear(self) -> None:
        self.select(-1)
