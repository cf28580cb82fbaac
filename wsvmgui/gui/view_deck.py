"""The views in their tabs, and how a finished run reaches them.

:class:`ViewDeck` draws a result into the visible view at once and into each hidden view
in a later event-loop turn of its own, so that no single turn of the GUI thread pays for
all five (a timer of :data:`NEXT_TURN_MS`, not a zero one, lets input, paints and other
timers run between the pieces).  It follows the shared selection and hands the baselines
to every view.  Every view implements :class:`~wsvmgui.gui.views.base.View`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from .selection import SelectionModel
from .views.base import View

if TYPE_CHECKING:
    from ..app.view_data import Baselines, RunResult

#: Delay before the next view is drawn (ms): a real timer, so the loop handles input,
#: paints and other timers between the views (queued zero-delay calls and the paints they
#: cause can otherwise run back to back for a quarter of a second).
NEXT_TURN_MS = 2


class ViewDeck(QObject):
    """The views of the main window's tabs.

    Parameters
    ----------
    tabs : QTabWidget
        Where the views are shown, one tab each (:meth:`add`).
    selection : SelectionModel
        The selected row every view marks.

    Signals
    -------
    drawn()
        Every view shows the last result given to :meth:`show_result`.
    """

    drawn = Signal()

    def __init__(self, tabs: QTabWidget, selection: SelectionModel) -> None:
        super().__init__(tabs)
        self.tabs = tabs
        self.selection = selection
        self.views: list[View] = []
        self._result: RunResult | None = None
        self._baselines: Baselines | None = None
        self._pending: list[View] = []
        selection.changed.connect(self.set_selection)

    def add(self, view: View, title: str) -> None:
        """Show ``view`` (a QWidget implementing :class:`View`) in a tab of its own."""
        assert isinstance(view, QWidget) and isinstance(view, View), type(view).__name__
        self.views.append(view)
        self.tabs.addTab(view, title)

    def titles(self) -> list[str]:
        return [self.tabs.tabText(i) for i in range(self.tabs.count())]

    def current(self) -> View:
        """The view in front."""
        widget = self.tabs.currentWidget()
        for view in self.views:
            if view is widget:
                return view
        raise LookupError("the current tab holds no view")

    def current_title(self) -> str:
        return self.tabs.tabText(self.tabs.currentIndex())

    def show_tab(self, index: int) -> None:
        self.tabs.setCurrentIndex(index)

    def is_drawing(self) -> bool:
        """Hidden views are still waiting for the last result."""
        return bool(self._pending)

    # ------------------------------------------------------------------------ results
    def show_result(self, result: RunResult, baselines: Baselines | None = None) -> None:
        """Draw ``result`` (and ``baselines``) now in the view in front and in every
        other view in a later event-loop turn; :attr:`drawn` follows the last one."""
        self._result, self._baselines = result, baselines
        current = self.current()
        self._pending = [v for v in self.views if v is not current]
        current.set_result(result)
        if baselines is not None:
            current.add_baselines(baselines)
        QTimer.singleShot(NEXT_TURN_MS, self._draw_next)

    def _draw_next(self) -> None:
        if not self._pending or self._result is None:
            self._pending = []
            self.drawn.emit()
            return
        view = self._pending.pop(0)
        view.set_result(self._result)
        view.set_selection(self.selection.row)
        if self._baselines is not None:
            view.add_baselines(self._baselines)
        if self._pending:
            QTimer.singleShot(NEXT_TURN_MS, self._draw_next)
        else:
            self.drawn.emit()

    def stop_drawing(self) -> None:
        """Draw no more of the last result (a new run started)."""
        self._pending = []

    def add_baselines(self, baselines: Baselines) -> None:
        """Give every view the baselines (a view still waiting gets them when drawn)."""
        self._baselines = baselines
        for view in self.views:
            if view not in self._pending:
                view.add_baselines(baselines)

    def clear(self) -> None:
        """No result: every view empty (the points alone where a view draws them)."""
        self._result, self._baselines, self._pending = None, None, []
        for view in self.views:
            view.clear()

    def set_selection(self, row: int) -> None:
        for view in self.views:
            view.set_selection(row)
