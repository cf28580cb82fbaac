"""What a user sees, second pass (the eleventh sitting's found-and-left list): the
reliability diagram beside the true probabilities where they are known, what the
boundary surface is under a chosen sub-problem, a weight colour bar with no boundary to
colour, the tuning surface's lambda direction, a Results summary as high as its text and
the name of a ladder between labels -1 and 1."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import TINY, run_and_wait

from wsvmgui.app.calibration import calibration_entry
from wsvmgui.app.settings import RunSettings
from wsvmgui.app.tuning_view import TuningSurface


# ------------------------------------------------------------------ calibration
def _entries(known: bool):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200)
    p_hat = np.clip(p + 0.15 * (p - 0.5), 0, 1)  # over-confident
    y = np.where(rng.uniform(size=200) < p, 1, 0)
    proba, truth = np.column_stack([1 - p_hat, p_hat]), np.column_stack([1 - p, p])
    classes = np.array([0, 1])
    return [
        calibration_entry("scheme", proba, y, classes, p_true=truth if known else None),
        calibration_entry("other", 0.5 * proba + 0.25, y, classes, p_true=truth if known else None),
    ]


@pytest.fixture
def calibration_view(shown_view):
    from wsvmgui.gui.views.calibration_view import CalibrationView

    return shown_view(CalibrationView, 900, 700)


def _headers(table) -> list[str]:
    return [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())]


def test_known_true_probabilities_are_drawn_beside_the_observed_frequency(qtbot, calibration_view):
    from wsvmgui.gui.views.calibration_view import TRUE_P_LEGEND

    view = calibration_view
    entries = _entries(known=True)
    view.set_result(SimpleNamespace(calibration=entries, calibration_part="test"))
    rel = entries[0].reliability
    full = rel.counts > 0
    x, y = view.truth.getData()
    assert view.truth.isVisible()
    np.testing.assert_allclose(x, rel.mean_predicted[full])
    np.testing.assert_allclose(y, rel.true_mean[full])  # the scheme's bins, true p
    labels = [label.text for _sample, label in view.legend.items]
    assert TRUE_P_LEGEND in labels, labels
    assert "diamonds" in view.summary.text()
    headers = _headers(view.table)
    assert "L1 to the truth" in headers, headers
    j = headers.index("L1 to the truth")
    for i, entry in enumerate(entries):
        assert float(view.table.item(i, j).text()) == pytest.approx(entry.scores["L1"], abs=1e-4)
    # labels only: no truth marks, no L1 column, no legend entry
    view.set_result(SimpleNamespace(calibration=_entries(known=False), calibration_part="test"))
    assert (
        not view.truth.isVisible()
        and view.truth.getData()[0] is None
        or (len(view.truth.getData()[0]) == 0)
    )
    assert "L1 to the truth" not in _headers(view.table)
    labels = [label.text for _sample, label in view.legend.items]
    assert not any(TRUE_P_LEGEND in t for t in labels), labels
    assert "diamonds" not in view.summary.text()


def test_a_design_run_measures_its_calibration_against_the_truth(qtbot, window):
    assert window.data_panel.load_builtin("design:wuliu2011_ex1")
    result = run_and_wait(qtbot, window, TINY)
    assert result is not None, window.messages.text()
    entry = result.calibration[0]
    assert entry.reliability.true_mean is not None
    # the Calibration tab's L1 is the Results tab's L1 to the truth of the same part
    part = result.calibration_part
    assert entry.scores["L1"] == pytest.approx(result.metrics[part]["L1"], rel=1e-9)
    # and the ladder between labels -1 and 1 is named with their signs
    assert result.ladders[0].description == "+1 vs -1"


# ------------------------------------------------------------------- boundaries
def test_the_surface_under_a_sub_problem_is_said_to_be_the_whole_estimate(qtbot, window):
    from wsvmgui.gui.views.boundary_view import SURFACE_NOTE

    assert window.data_panel.load_builtin("sklearn:iris")
    settings = RunSettings(scheme="pairwise", lambdas=[0.01], sigmas=[1.0], n_jobs=1, seed=0)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    view = window.boundary_view
    assert len(result.plane.layers[0].subproblems) == 3
    bar_title = view.surface_bar.getAxis("left").labelText
    assert "all 3 classes" in bar_title, bar_title
    view.sub_combo.setCurrentIndex(1)
    assert SURFACE_NOTE.format(K=3) in view.info.text()
    view.surface_box.setChecked(False)  # no surface drawn, nothing to explain
    view._draw_layers()
    assert SURFACE_NOTE.format(K=3) not in view.info.text()


def test_the_weight_bar_is_greyed_not_hidden_when_no_boundary_crosses_the_plane(qtbot, window):
    from wsvmgui.gui.views.boundary_view import PI_BAR, PI_BAR_NONE

    result = run_and_wait(qtbot, window, TINY)
    assert result is not None, window.messages.text()
    view = window.boundary_view
    plane = result.plane
    layer = plane.layers[0]
    assert any(s.shape[0] for s in layer.segments[0])  # the demo's ladder has boundaries
    bar = view.colorbar
    assert bar.isVisible() and bar.opacity() == 1.0
    assert bar.getAxis("left").labelText == PI_BAR
    width = bar.boundingRect().width()
    empty = [[np.empty((0, 2, 2)) for _ in seg] for seg in layer.segments]
    view.set_plane(replace(plane, layers=[replace(layer, segments=empty)]))
    qtbot.wait(20)
    assert "0 boundaries" in view.info.text()
    assert bar.isVisible() and bar.opacity() < 0.5  # greyed, in its place
    assert bar.getAxis("left").labelText == PI_BAR_NONE
    assert bar.boundingRect().width() == pytest.approx(width)
    view.set_plane(plane)
    assert bar.opacity() == 1.0 and bar.getAxis("left").labelText == PI_BAR


# ---------------------------------------------------------------------- results
@pytest.fixture
def results_view(shown_view):
    from wsvmgui.gui.views.results_view import ResultsView

    return shown_view(ResultsView, 1000, 650)


def _surface(lambdas: np.ndarray) -> TuningSurface:
    sigmas = np.array([0.5, 1.0, 2.0])
    score = np.arange(lambdas.size * 3, dtype=float).reshape(lambdas.size, 3)
    return TuningSurface("", "\u03bb", "\u03c3", lambdas, sigmas, score, "cross-entropy", (0, 0))


def test_the_tuning_surface_says_which_way_lambda_runs(qtbot, results_view):
    view = results_view
    falling = np.array([0.016, 0.005, 0.002, 5e-4, 2e-4, 5e-5, 2e-5])
    view._draw_tuning(SimpleNamespace(tunings=[_surface(falling)]))
    label = view.plot.getAxis("bottom").labelText
    assert "decreasing" in label and "more flexible to the right" in label, label
    view._draw_tuning(SimpleNamespace(tunings=[_surface(falling[::-1].copy())]))
    label = view.plot.getAxis("bottom").labelText
    assert "increasing" in label and "more flexible to the left" in label, label


def test_the_results_summary_grows_with_its_text_up_to_a_limit(qtbot, results_view):
    from wsvmgui.gui.views.results_view import SUMMARY_MAX_LINES

    view = results_view
    line = view.summary.fontMetrics().lineSpacing()
    view.clear("One line.")
    short = view.summary_area.height()
    assert short <= 3 * line
    # a calibration note of breast cancer's length, at 1000 pixels: about 8 lines
    note = (
        "Calibration: the ladder's estimates sat beyond its end weights for most points "
        "(74% of the cross-fitted points), so the probabilities are the middle rung's "
        "decision value through a sigmoid (Platt's map on the ladder's unweighted SVM); "
        "their brackets are the point itself. "
    )
    view.clear("<b>breast cancer</b>, scheme <b>binary</b><br>" + note * 3)
    qtbot.wait(20)
    assert view.summary_area.height() > 6 * line + 2  # more than the old fixed six lines
    assert view.summary_area.verticalScrollBar().maximum() == 0  # whole, no scrolling
    view.clear(note * 40)
    qtbot.wait(20)
    assert view.summary_area.height() <= SUMMARY_MAX_LINES * line + 2
    assert view.summary_area.verticalScrollBar().maximum() > 0  # beyond the limit: scrolls


def test_the_summary_refits_when_its_tab_comes_back_narrower(qtbot, window):
    """Set at 1600 pixels, the window narrowed to 1024 behind another tab: once the
    Results tab shows again, breast cancer's note needs no scrolling.  (The fit read the
    scroll area's viewport, which is resized only after the area's resize event: the
    1600-pixel width, too few lines, a scroll bar.)"""
    note = (
        "<b>sklearn:breast_cancer</b>, scheme <b>binary</b>: \u03bb = 0.0001256 (C = 10, "
        "final fit on 398 rows), tuned \u03bb = 0.0001572 on the grid, for the tuning fits' "
        "rows (the final fit keeps its C), \u03c3 = 12.01, 8424 weighted fits, max KKT "
        "residual 1.2e-12, 2.33 s<br>No true probabilities: measures against the observed "
        "labels.<br>Calibration: the ladder's estimates sat beyond its end weights for most "
        "points (74% of the cross-fitted points), so the probabilities are the middle "
        "rung's decision value through a sigmoid (Platt's map on the ladder's unweighted "
        "SVM); their brackets are the point itself."
    )
    view = window.results_view
    area = view.summary_area
    window.resize(1600, 1000)
    window.tabs.setCurrentWidget(view)
    qtbot.wait(50)
    view.clear(note)
    qtbot.wait(20)
    assert area.verticalScrollBar().maximum() == 0
    window.tabs.setCurrentWidget(window.boundary_view)
    window.resize(1024, 700)
    qtbot.wait(50)
    window.tabs.setCurrentWidget(view)
    qtbot.wait(100)
    assert area.verticalScrollBar().maximum() == 0
    assert view.summary.height() <= area.viewport().height()
