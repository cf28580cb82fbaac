"""Every view fits its window at 1024 x 700 and at 4K: no plot's scene is wider or taller
than its view, and nothing drawn lies outside the visible area (unless a plot clips it)."""

from __future__ import annotations

import contextlib

import pytest
from conftest import run_and_wait
from PySide6.QtWidgets import QGraphicsItem
from pytestqt.exceptions import TimeoutError as WaitTimeout

from wsvmgui.app.settings import RunSettings

SMALL = (1024, 700)
LARGE = (3840, 2160)  # 4K


def _settle(qtbot, laid_out, timeout: int = 10000) -> None:
    """Let the event loop run until ``laid_out()`` holds (deferred re-layouts and timers
    fire later on a loaded machine), or ``timeout`` ms pass; the caller then asserts."""
    with contextlib.suppress(WaitTimeout):  # the assertion that follows says what is wrong
        qtbot.waitUntil(laid_out, timeout=timeout)


def overflow(graphics) -> list[str]:
    """What in a pyqtgraph view's scene does not fit its viewport (empty if all fits)."""
    port = graphics.viewport().rect()
    problems = []
    size = graphics.ci.size()
    if size.width() > port.width() + 1 or size.height() > port.height() + 1:
        problems.append(
            f"scene {size.width():.0f} x {size.height():.0f} > view {port.width()} x "
            f"{port.height()}"
        )
    clips = QGraphicsItem.GraphicsItemFlag.ItemClipsChildrenToShape
    visible = port.adjusted(-2, -2, 2, 2)
    for item in graphics.scene().items():
        if not item.isVisible() or item.effectiveOpacity() == 0:
            continue
        parent, clipped = item.parentItem(), False
        while parent is not None:
            clipped = clipped or bool(parent.flags() & clips)
            parent = parent.parentItem()
        if clipped or item.boundingRect().isEmpty():
            continue
        rect = graphics.mapFromScene(item.sceneBoundingRect()).boundingRect()
        if not visible.contains(rect):
            problems.append(f"{type(item).__name__} at {rect.getRect()}")
    return problems


def hidden_widgets(window) -> list[str]:
    """Widgets of the window cut off by their parents: the window's own widget tree."""
    from PySide6.QtWidgets import QAbstractScrollArea, QWidget

    problems = []
    frame = window.rect()
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not window:
            continue
        if any(isinstance(p, QAbstractScrollArea) for p in _ancestors(widget)):
            continue  # scroll areas show their content in parts by design
        top_left = widget.mapTo(window, widget.rect().topLeft())
        bottom_right = widget.mapTo(window, widget.rect().bottomRight())
        if not (frame.contains(top_left) and frame.contains(bottom_right)):
            problems.append(f"{type(widget).__name__} {widget.objectName()}")
    return problems


def _ancestors(widget):
    parent = widget.parentWidget()
    while parent is not None:
        yield parent
        parent = parent.parentWidget()


CASES = {
    "binary with comparison": ("design:wuliu2011_ex1", 150, "binary", True),
    "three classes": ("design:wu2010_ex1", 150, "pairwise", False),
    "wine, p = 13": ("sklearn:wine", 0, "pairwise", False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_view_fits_from_1024_by_700_to_4k(qtbot, window, case):
    data, n, scheme, compare = CASES[case]
    if n:
        window.data_panel.n_points.setValue(n)
        window.data_panel.discard_pending()
    assert window.data_panel.load_builtin(data)
    settings = RunSettings(
        scheme=scheme, n_weights=8, lambdas=[0.01, 0.001], sigmas=[1.0, 2.0], n_jobs=1
    )
    window.settings_panel.compare.setChecked(compare)
    window.resize(*SMALL)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    assert window.size().width() == SMALL[0] and window.size().height() == SMALL[1]
    window.selection.select(int(result.split.test.index[0]))
    if compare:
        assert len(result.plane.layers) == 2  # both panels side by side
    for size in (SMALL, LARGE):
        window.resize(*size)
        qtbot.waitUntil(lambda s=size: (window.width(), window.height()) == s, timeout=30000)
        for i in range(window.tabs.count()):
            window.tabs.setCurrentIndex(i)
            qtbot.waitUntil(lambda: not window.is_busy(), timeout=60000)
            view = window.tabs.currentWidget()
            _settle(qtbot, lambda v=view: not overflow(v.graphics) and not hidden_widgets(window))
            problems = overflow(view.graphics)
            assert not problems, f"{size} {window.tabs.tabText(i)}: {problems[:5]}"
            assert not hidden_widgets(window), hidden_widgets(window)[:5]


def test_views_refit_when_the_data_change_their_layout(qtbot, window):
    """Two panels with a comparison, then a 13-feature table with its slice panel: the
    legend and plots follow the view's new width without a window resize."""
    window.resize(*SMALL)
    settings = RunSettings(n_weights=8, lambdas=[0.01], sigmas=[1.0], n_jobs=1)
    window.settings_panel.compare.setChecked(True)
    assert run_and_wait(qtbot, window, settings) is not None
    assert window.data_panel.load_builtin("sklearn:wine")
    wine = RunSettings(scheme="pairwise", n_weights=8, lambdas=[0.01], sigmas=[3.0], n_jobs=1)
    result = run_and_wait(qtbot, window, wine)
    assert result is not None, window.messages.text()
    window.tabs.setCurrentWidget(window.boundary_view)
    _settle(
        qtbot,
        lambda: not overflow(window.boundary_view.graphics) and not hidden_widgets(window),
    )
    assert window.boundary_view.slice_panel.isVisible()
    assert not overflow(window.boundary_view.graphics)
    assert not hidden_widgets(window)


def test_a_view_shrunk_while_hidden_fits_when_shown(qtbot, window):
    window.resize(1600, 1000)
    settings = RunSettings(n_weights=8, lambdas=[0.01], sigmas=[1.0], n_jobs=1)
    assert run_and_wait(qtbot, window, settings) is not None
    for view in (window.calibration_view, window.bars_view, window.simplex_view):
        window.tabs.setCurrentWidget(view)
        qtbot.wait(50)
    window.tabs.setCurrentWidget(window.boundary_view)
    window.resize(*SMALL)
    qtbot.wait(100)
    for view in (window.calibration_view, window.bars_view, window.simplex_view):
        window.tabs.setCurrentWidget(view)
        _settle(qtbot, lambda v=view: not overflow(v.graphics))
        assert not overflow(view.graphics), (type(view).__name__, overflow(view.graphics)[:3])
