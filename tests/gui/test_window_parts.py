"""The parts the main window is built from: the action table and the View protocol."""

from __future__ import annotations

from conftest import TINY, run_and_wait
from PySide6.QtWidgets import QWidget

from wsvmgui.gui.actions import ACTIONS, VIEW_TITLES, Entry, resolve
from wsvmgui.gui.views.base import View


def test_every_menu_entry_calls_a_method_of_the_window(window):
    entries = [item for item in ACTIONS if isinstance(item, Entry)]
    assert len(entries) > 20
    for entry in entries:
        assert callable(resolve(window, entry.slot)), entry.slot
    named = {entry.name for entry in entries if entry.name}
    assert named == set(window.menu_actions)
    # the View menu shows each tab
    for i, title in enumerate(VIEW_TITLES):
        action = next(a for a in window.menus["View"].actions() if a.text() == title)
        action.trigger()
        assert window.tabs.currentIndex() == i and window.deck.current_title() == title


def test_every_view_implements_the_protocol(qtbot, window):
    views = window.deck.views
    assert [window.tabs.indexOf(v) for v in views] == list(range(5))
    for view in views:
        assert isinstance(view, View)
        view.clear()
        view.set_selection(-1)
        assert isinstance(view.export_item(), QWidget)
    result = run_and_wait(qtbot, window, TINY)
    assert result is not None, window.messages.text()
    row = int(result.split.test.index[0])
    for view in views:  # drawn with the run, each accepts every call
        view.set_result(result)
        view.set_selection(row)
        image = view.export_item().grab().toImage()
        assert image.width() > 0 and image.height() > 0
