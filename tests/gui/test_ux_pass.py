"""What a user sees (the eleventh sitting's look at every view): the Results table shows
every column at 1024 x 700, untried tuning cells are not painted as the worst score, the
tuning axis labels do not run into each other, a scheme without ladders says why its
ladder plots are empty, and the tabs name the same measure alike."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import TINY, run_and_wait

from wsvmgui.app.settings import RunSettings
from wsvmgui.app.tuning_view import TuningSurface

SMALL = (1024, 700)


def _settle(qtbot, window) -> None:
    qtbot.wait(50)
    for _ in range(5):
        window.repaint()
        qtbot.wait(10)


def test_results_table_shows_every_column_and_row_at_1024_by_700(qtbot, window):
    window.settings_panel.compare.setChecked(True)  # the widest table: seven columns
    result = run_and_wait(qtbot, window, TINY)  # waits for the baselines too
    assert result is not None, window.messages.text()
    view = window.results_view
    columns = list(view.table_values())
    assert len(columns) == 7 and "non-crossing (test)" in columns, columns
    window.resize(*SMALL)
    window.tabs.setCurrentWidget(view)
    _settle(qtbot, window)
    table = view.table
    # every column within the table's width (before: "SVC + Platt scaling" and the
    # nearest neighbours behind a horizontal scroll bar) and every row within its height
    assert table.horizontalScrollBar().maximum() == 0
    assert table.horizontalHeader().length() <= table.viewport().width()
    assert table.verticalScrollBar().maximum() == 0
    shown = [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())]
    assert "SVC + Platt\nscaling\n(test)" in shown, shown
    # the tuning surface keeps most of the height below the table
    assert view.graphics.height() > table.height()


def _surface(score: np.ndarray) -> TuningSurface:
    lambdas = np.array([0.016, 0.005, 0.002, 5e-4, 2e-4, 5e-5, 2e-5])
    sigmas = np.array([0.5, 1.0, 2.0])
    best = np.unravel_index(int(np.argmin(np.where(np.isfinite(score), score, np.inf))), (7, 3))
    return TuningSurface(
        "", "\u03bb", "\u03c3", lambdas, sigmas, score, "cross-entropy", tuple(map(int, best))
    )


@pytest.fixture
def results_view(shown_view):
    from wsvmgui.gui.views.results_view import ResultsView

    return shown_view(ResultsView, 900, 600)


def test_untried_tuning_cells_are_not_painted_as_the_worst_score(qtbot, results_view):
    view = results_view
    score = np.full((7, 3), np.inf)  # a staged search: a few cells scored
    score[3:5, 1:3] = [[0.52, 0.51], [0.53, 0.515]]
    view._draw_tuning(SimpleNamespace(tunings=[_surface(score)]))
    image = view.image.image  # (S, L): rows sigma, columns lambda
    assert np.isnan(image).sum() == 21 - 4  # no score: transparent over grey, not "worst"
    assert np.nanmax(image) == pytest.approx(0.53)
    assert "grey: no score" in view.title.text()
    assert "17 of 21 cells grey" in view.title.toolTip()
    from wsvmgui.gui.views.results_view import MISSING_GREY

    grey = view.plot.getViewBox().background.brush().color()  # seen through the NaN cells
    assert (grey.red(), grey.green(), grey.blue()) == MISSING_GREY
    view._draw_tuning(SimpleNamespace(tunings=[_surface(np.arange(21.0).reshape(7, 3))]))
    assert not np.isnan(view.image.image).any()
    assert "grey" not in view.title.text()


def test_tuning_axis_labels_are_thinned_to_fit(qtbot, results_view):
    from wsvmgui.gui.views.results_view import _short

    view = results_view
    view._draw_tuning(SimpleNamespace(tunings=[_surface(np.arange(21.0).reshape(7, 3))]))
    qtbot.waitUntil(lambda: view.plot.getViewBox().width() > 400)
    every = [_short(v) for v in _surface(np.zeros((7, 3))).xs]
    assert view.shown_ticks("bottom") == every
    view.resize(240, 600)  # seven labels of about 30 pixels cannot share ~150 pixels
    qtbot.waitUntil(lambda: view.plot.getViewBox().width() < 200)
    qtbot.wait(20)
    labels = view.shown_ticks("bottom")
    assert 1 < len(labels) < 7 and labels[0] == "0.016", labels
    metrics = view.fontMetrics()
    widest = max(metrics.horizontalAdvance(t) for t in labels)
    room = view.plot.getViewBox().width() / 7 * (7 // len(labels))
    assert widest < room  # each label has at least its own width between ticks
    # the unlabelled grid values keep their ticks
    ticks = view.plot.getAxis("bottom")._tickLevels
    assert sorted(k for level in ticks for k, _ in level) == list(range(7))


def test_a_scheme_without_ladders_says_why_its_ladder_plots_are_empty(qtbot, window):
    result = run_and_wait(qtbot, window, RunSettings(scheme="probing", n_jobs=1, seed=0))
    assert result is not None, window.messages.text()
    assert not result.ladders
    view = window.simplex_view
    window.tabs.setCurrentWidget(view)
    window.selection.select(int(result.split.parts["test"].index[0]))
    view.ensure_drawn()
    assert "Probing keeps no sign ladder" in view.lad_note.toPlainText()
    assert not any("\u03c0(x) > 0" in label for label in view.legend_labels())
    # a ladder scheme: no note, the marks' legend back
    result = run_and_wait(qtbot, window, TINY)
    view.ensure_drawn()
    assert result.ladders and view.lad_note.toPlainText() == ""
    assert any("\u03c0(x) > 0" in label for label in view.legend_labels())


def test_the_calibration_table_names_the_log_loss_as_the_results_tab_does(qtbot, window):
    run_and_wait(qtbot, window, TINY)
    window.tabs.setCurrentWidget(window.calibration_view)  # drawn when shown
    qtbot.waitUntil(lambda: window.calibration_view.table.columnCount() > 0)
    table = window.calibration_view.table
    headers = [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())]
    assert "cross-entropy" in headers and "log loss" not in headers, headers
    rows = [table.verticalHeaderItem(i).text() for i in range(table.rowCount())]
    scores = window.calibration_view.table_values()
    shown = float(table.item(0, headers.index("cross-entropy")).text())
    assert shown == pytest.approx(scores[rows[0]]["log_loss"], abs=1e-4)
    # the Results tab's cross-entropy of the test part is the same number
    assert window.results_view.table_values()["test"]["cross_entropy"] == pytest.approx(
        scores[rows[0]]["log_loss"], rel=1e-6
    )


@pytest.mark.parametrize(
    "label, entry",
    [("benign", "class benign"), (2, "class 2"), ("class_0", "class_0"), ("Class A", "Class A")],
)
def test_class_legend_entries_do_not_repeat_class(label, entry):
    from wsvmgui.gui.views.common import class_entry

    assert class_entry(label) == entry


def test_a_long_ladder_name_keeps_its_crossing_flag(qtbot):
    from PySide6.QtGui import QFontMetrics

    from wsvmgui.gui.views.simplex_view import MAX_NAME_WIDTH, SimplexView

    view = SimplexView()
    qtbot.addWidget(view)
    name = view._elide("malignant vs benign (breast cancer)", " (crossing)")
    assert name.endswith("\u2026 (crossing)"), name  # cut, the flag kept (it was cut away)
    axis = view.lad.getAxis("left")
    metrics = QFontMetrics(axis.style.get("tickFont") or view.font())
    assert metrics.horizontalAdvance(name) <= MAX_NAME_WIDTH == view.name_width()
    assert view._elide("2|1,2", " (crossing)") == "2|1,2 (crossing)"
    assert view._elide("2|1,2") == "2|1,2"
    # f_pi(x) in its own units: no "(x0.001)" scale over ticks of hundreds
    assert not view.curve_plot.getAxis("left").autoSIPrefix


def test_an_exported_tuning_table_keeps_its_cells_where_qt_draws_them(qapp):
    """Every pixel of a small embedded image repeated exactly: the border between two
    columns of a 2 x 3 table blown up 359 times lies at 359 (Qt's scaling put it at 373)."""
    from PySide6.QtGui import QColor, QImage

    from wsvmgui.gui.svg import repeat_pixels

    image = QImage(2, 3, QImage.Format.Format_ARGB32)
    colours = [
        [QColor(255, 0, 0), QColor(0, 0, 255)],
        [QColor(0, 255, 0)] * 2,
        [QColor(9, 9, 9)] * 2,
    ]
    for y in range(3):
        for x in range(2):
            image.setPixelColor(x, y, colours[y][x])
    big = repeat_pixels(image, 359, 124)
    assert (big.width(), big.height()) == (718, 372)
    row = [big.pixelColor(x, 10).name() for x in range(718)]
    assert row[:359] == ["#ff0000"] * 359 and row[359:] == ["#0000ff"] * 359
    column = [big.pixelColor(500, y).name() for y in range(372)]
    assert column[123] == "#0000ff" and column[124] == "#00ff00" and column[248] == "#090909"


def test_a_wide_window_shows_whole_sub_problem_names(qtbot, window):
    assert window.data_panel.load_builtin("sklearn:iris"), window.messages.text()
    settings = RunSettings(scheme="pairwise", n_weights=5, lambdas=[0.005], sigmas=[1.0], n_jobs=1)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    view = window.simplex_view
    window.tabs.setCurrentWidget(view)
    window.selection.select(int(result.split.parts["test"].index[0]))
    full = [lad.description for lad in result.ladders]
    assert "versicolor|setosa,versicolor" in full, full
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: view.name_width() > 200)
    qtbot.waitUntil(lambda: view.ladder_names()[:3] == full[:3], timeout=3000)
    window.resize(*SMALL)  # a narrow view cuts them again
    qtbot.waitUntil(lambda: view.name_width() == 150)
    qtbot.waitUntil(lambda: any(n.endswith("\u2026") for n in view.ladder_names()), timeout=3000)


def test_probing_without_a_grid_is_not_said_to_be_tuned_over_lambda_and_sigma(qtbot, window):
    result = run_and_wait(qtbot, window, RunSettings(scheme="probing", n_jobs=1, seed=0))
    assert result is not None, window.messages.text()
    fitted = result.estimator.fitted_summary()
    assert fitted["lambda"] is None and fitted["sigma"] is None and not fitted["tuned"]
    note = window.results_view.no_table.text()
    assert "tuned over" not in note  # it said "tuned over 7 x 6 values" before
    assert note == "no \u03bb or \u03c3 in this fit\n(nothing tuned)"


def test_reliability_markers_grow_with_the_points_in_their_bin(qtbot, window):
    from wsvmgui.gui.views.calibration_view import marker_sizes

    sizes = marker_sizes(np.array([1, 4, 41]))
    assert sizes[2] == pytest.approx(16.0) and sizes[0] < 6.0
    assert (sizes[1] - 4) ** 2 == pytest.approx(4 * (sizes[0] - 4) ** 2)  # area ~ count
    run_and_wait(qtbot, window, TINY)
    view = window.calibration_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.table.columnCount() > 0)
    rel = view.entries()[0].reliability
    drawn = np.asarray(view.curves[0].opts["symbolSize"])
    assert drawn.shape == (int((rel.counts > 0).sum()),)
    order = np.argsort(rel.counts[rel.counts > 0], kind="stable")
    assert np.all(np.diff(drawn[order]) >= 0)  # more points, no smaller marker
    labels = [label.text for _sample, label in view.legend.items]
    assert "marker area: points in the bin" in labels, labels
