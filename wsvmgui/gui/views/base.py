"""What the main window asks of every view: the :class:`View` protocol.

Each of the five tabs (boundaries, simplex and ladders, probability bars, calibration,
results) implements all five methods, so the window and its :class:`~wsvmgui.gui.view_deck.
ViewDeck` never probe a view for what it can do; a view for which a call means nothing
(the results table has no selected point) accepts it and does nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from ...app.view_data import Baselines, RunResult


@runtime_checkable
class View(Protocol):
    """A view of a finished run."""

    def set_result(self, result: RunResult) -> None:
        """Show a finished run (replacing the last; baselines shown before are dropped)."""

    def clear(self) -> None:
        """Show no run (the data alone, where the view draws them)."""

    def set_selection(self, row: int) -> None:
        """Mark data row ``row`` (-1: none)."""

    def add_baselines(self, baselines: Baselines) -> None:
        """Add the baselines fitted on the shown run's split."""

    def export_item(self) -> QWidget:
        """The plot widget that PNG/SVG export and the clipboard copy."""
