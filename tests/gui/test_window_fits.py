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
from PySide6.QtWidgets import QAbstractScrollArea, QLabel, QStatusBar
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
    scroll area counts when its area cannot scroll to the rest; the status bar's message
    is left out (its tooltip and the message log hold the whole text)."""
    problems = []
    for label in window.findChildren(QLabel):
        if not label.isVisible() or not label.text() or label.window() is not window:
            continue
        parents = list(_ancestors(label))
        if any(isinstance(p, QStatusBar) for p in parents):
            continue
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
