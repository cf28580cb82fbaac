"""The window fits its screen on first launch, and no text is cut at 1024 x 700: the
Results summary (with its tuning notes) and the data panel's label line show every line
(issue 21, third round)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import run_and_wait
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea, QLabel
from test_layout import _ancestors

from wsvmgui.gui.main_window import DEMO_SETTINGS

SMALL = (1024, 700)

FIRST_LAUNCH = textwrap.dedent(
    """
    import json, sys, tempfile
    from pathlib import Path
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    app = QApplication(sys.argv[:1])
    from wsvmgui.gui.main_window import MainWindow
    from wsvmgui.gui.state import AppState, use_settings_folder
    folder = Path(tempfile.mkdtemp())
    use_settings_folder(folder)
    state = AppState(QSettings(str(folder / "w.ini"), QSettings.Format.IniFormat))
    win = MainWindow(state, load_demo=False)
    win.show()
    for _ in range(20):
        app.processEvents()
    f, a = win.frameGeometry(), win.screen().availableGeometry()
    print(json.dumps({"frame": [f.x(), f.y(), f.width(), f.height()],
                      "available": [a.x(), a.y(), a.width(), a.height()]}))
    """
)


@pytest.mark.parametrize("screen", [(1280, 1024), (1024, 768), (1920, 1080)])
def test_the_first_window_fits_the_available_screen(tmp_path, screen):
    """A fresh start (no remembered geometry) on a screen of the given size: the window's
    frame lies inside the screen's available geometry (it opened 1400 wide before)."""
    config = {
        "synchronousWindowSystem": False,
        "windowFrameMargins": False,
        "screens": [
            {"name": "s", "x": 0, "y": 0, "width": screen[0], "height": screen[1], "dpr": 1}
        ],
    }
    path = tmp_path / "screen.json"
    path.write_text(json.dumps(config))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={path}")
    out = subprocess.run(
        [sys.executable, "-c", FIRST_LAUNCH],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["available"] == [0, 0, *screen]  # the configured screen is the one used
    x, y, w, h = found["frame"]
    assert x >= 0 and y >= 0 and x + w <= screen[0] and y + h <= screen[1], found
    # and it still uses the room: a large screen gets the preferred size
    if screen == (1920, 1080):
        assert (w, h) == (1400, 900)


def cut_labels(window) -> list[str]:
    """Visible labels of the window whose text does not fit them (empty if none): a
    word-wrapped label needs more height, a single-line one more width.  A label inside a
    scroll area counts when its area cannot scroll to the rest.  The status bar's labels
    count by the text they draw (they elide, the whole text in their tooltip)."""
    problems = []
    for label in window.findChildren(QLabel):
        if not label.isVisible() or not label.text() or label.window() is not window:
            continue
        parents = list(_ancestors(label))
        if label.wordWrap():
            need = label.heightForWidth(label.width())
            if need > label.height() + 1:
                problems.append(f"{label.text()[:60]!r}: needs {need} px, has {label.height()}")
        elif label.sizeHint().width() > label.width() + 1:
            problems.append(
                f"{label.text()[:60]!r}: needs {label.sizeHint().width()} px wide, "
                f"has {label.width()}"
            )
        area = next((p for p in parents if isinstance(p, QAbstractScrollArea)), None)
        if area is not None and area.verticalScrollBar() is not None:
            viewport = area.viewport().height()
            bar = area.verticalScrollBar()
            if label.height() > viewport + bar.maximum() + 1:
                problems.append(f"{label.text()[:60]!r}: its scroll area cannot reach the end")
            right = label.mapTo(area.viewport(), label.rect().topRight()).x()
            off = area.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            across = 0 if off else area.horizontalScrollBar().maximum()
            if right > area.viewport().width() + across + 1:
                problems.append(
                    f"{label.text()[:60]!r}: ends at x = {right}, its scroll area shows "
                    f"{area.viewport().width()} px and does not scroll across"
                )
    return problems


def test_no_label_is_cut_at_1024_by_700(qtbot, window, tmp_path):
    """A file with a long label column and an id, and a run whose summary carries a
    tuning note (the chosen cell on the grid's edge): every line shows, in the Results
    tab and in both tabs of the left dock."""
    rng = np.random.default_rng(0)
    n = 120
    X = rng.normal(size=(n, 6))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, "malignant", "benign")
    path = tmp_path / "cells.csv"
    header = ["sample_id", *[f"worst_feature_{j}" for j in range(6)], "diagnosis_of_the_cell"]
    rows = [",".join(header)]
    rows += [",".join([str(1000 + i), *[f"{v:.4f}" for v in X[i]], y[i]]) for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    window.resize(*SMALL)
    panel = window.data_panel
    assert panel.open_file(str(path), "diagnosis_of_the_cell", None, "sample_id")
    assert "sample_id" in panel.label_column.text()
    result = run_and_wait(qtbot, window, DEMO_SETTINGS)
    assert result is not None, window.messages.text()
    assert (window.width(), window.height()) == SMALL
    summary = window.results_view.summary.text()
    assert "edge" in summary  # the long summary of the closing note's case
    assert summary.count("edge") == 1  # the grid-edge note said once, not by two notes
    window.tabs.setCurrentWidget(window.results_view)
    problems = set()
    for tab in range(window.left_dock.tabs.count()):
        window.left_dock.tabs.setCurrentIndex(tab)
        qtbot.wait(50)
        problems |= set(cut_labels(window))
    assert not problems, sorted(problems)
    # the summary's whole text can be scrolled into view
    area = window.results_view.summary_area
    label = window.results_view.summary
    assert label.height() >= label.heightForWidth(label.width())
    assert label.height() <= area.viewport().height() + area.verticalScrollBar().maximum() + 1


def test_the_status_line_elides_at_1024_by_700(qtbot, window):
    """A message longer than the status bar holds at 1024 x 700: the line shows its start
    and "\u2026" within the label's width, the whole text in its tooltip and the message
    log; at full width a short message shows whole; no status bar label is cut."""
    window.resize(*SMALL)
    window.show()
    qtbot.waitExposed(window)
    long = (
        "Loaded cells.csv: 120 rows, 6 features, label column diagnosis_of_the_cell, id "
        "column sample_id; 3 rows with missing values were dropped (use the missing-values "
        "setting to impute them instead)"
    )
    window.show_info(long)
    status = "estimated 12 s of CPU (about 20 s here); 3 of 7 tuning fits done, lambda 0.005"
    window.status.show_progress(40, status)
    qtbot.wait(50)
    assert (window.width(), window.height()) == SMALL
    label = window.status.message
    shown = label.shown_text()
    assert label.text() == long and label.toolTip() == long and window.messages.text() == long
    assert shown != long and shown.endswith("\u2026") and long.startswith(shown[:-1])
    assert len(shown) > 20  # a useful part of it, not a stub
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    # side by side, none over another: message, progress text, bar, Cancel
    bar = window.status
    parts = [bar.message, bar.progress_label, bar.progress_bar, bar.cancel_button]
    for a, b in zip(parts, parts[1:], strict=False):
        assert a.geometry().right() < b.geometry().left(), (a, b)
    assert parts[-1].geometry().right() < bar.width()
    progress = bar.progress_label
    assert progress.text() == status and progress.toolTip() == status
    assert progress.shown_text().endswith("\u2026")
    assert progress.fontMetrics().horizontalAdvance(progress.shown_text()) <= progress.width()
    status_cut = [p for p in cut_labels(window) if p.startswith(repr(long[:60]))]
    assert not status_cut, status_cut
    # a wider window shows more of it; a short message shows whole
    window.resize(1600, 700)
    qtbot.wait(50)
    assert len(label.shown_text()) > len(shown)
    window.show_info("Ready.")
    qtbot.wait(50)
    assert label.shown_text() == "Ready."


def test_a_jobs_warning_elides_at_1024_by_700_and_gives_the_message_back(
    qtbot, window, monkeypatch
):
    """A job's warning longer than the status bar holds shows its start and "\u2026" in
    place of the message, the whole text in its tooltip, nothing over the progress text;
    after its time the message (and its Details button) shows again."""
    from wsvmgui.gui import status_bar

    monkeypatch.setattr(status_bar, "WARNING_MS", 200)
    window.resize(*SMALL)
    qtbot.waitExposed(window)
    window.show_error("Short.", "details of it")
    bar = window.status
    assert bar.details_button.isVisible()
    text = (
        "the grid ladder answered for 2 of 21 ladders whose exact path broke down (large "
        "elbows near the ends of the weight range); their estimates come from the grid"
    )
    bar.show_warning("run", f"UserWarning: {text}")
    qtbot.wait(50)
    warning = bar.warning
    full = f"Warning (run): UserWarning: {text}"
    assert warning.isVisible() and not bar.message.isVisible()
    assert not bar.details_button.isVisible()
    assert warning.text() == full and warning.toolTip() == full
    shown = warning.shown_text()
    assert shown.endswith("\u2026") and full.startswith(shown[:-1]) and len(shown) > 20
    assert warning.fontMetrics().horizontalAdvance(shown) <= warning.contentsRect().width()
    assert warning.geometry().right() < bar.progress_label.geometry().left()
    assert not [p for p in cut_labels(window) if "Warning (run)" in p]
    qtbot.waitUntil(lambda: bar.message.isVisible(), timeout=10000)
    assert not warning.isVisible() and bar.message.text() == "Error: Short."
    assert bar.details_button.isVisible()


def test_the_data_choice_elides_at_1024_by_700(qtbot, window):
    """The Data combo's longest built-in name at 1024 x 700: drawn as its start and
    "\u2026" within its field, the whole name first in its tooltip (then what the box is
    for); the list opens wide enough for every name; a name that fits shows whole."""
    window.resize(*SMALL)
    qtbot.waitExposed(window)
    combo = window.data_panel.source
    names = [combo.itemText(i) for i in range(combo.count())]
    longest = max(range(len(names)), key=lambda i: len(names[i]))
    combo.setCurrentIndex(longest)
    qtbot.wait(50)
    full = names[longest]
    shown = combo.shown_text()
    assert combo.currentText() == full
    assert shown != full and shown.endswith("\u2026") and full.startswith(shown[:-1])
    assert combo.fontMetrics().horizontalAdvance(shown) <= combo._field_width()
    assert combo.toolTip().startswith(full + "\n\n") and "Built-in data sets" in combo.toolTip()
    combo.showPopup()
    qtbot.wait(50)
    view = combo.view()
    widest = max(view.fontMetrics().horizontalAdvance(n) for n in names)
    assert view.width() >= widest
    combo.hidePopup()
    window.resize(1600, 900)
    shortest = min(range(len(names)), key=lambda i: len(names[i]))
    combo.setCurrentIndex(shortest)
    qtbot.wait(50)
    assert combo.shown_text() == names[shortest]
    assert combo.toolTip().startswith("Built-in data sets")
