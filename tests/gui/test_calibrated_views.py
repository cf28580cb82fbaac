"""The path view and the probability bars under every calibration (issue 23 items 2, 5;
issue 21): the sign ladder, its bracket and the exact path's zeros share the pi axis of
the ladder's own fits, the calibrated estimate is a separate labelled mark, and a run with
per-point intervals draws them on the bars."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_and_wait

from wsvmgui.app.settings import CALIBRATION_CHOICES, RunSettings


def _settings(calibration, intervals=False, engine="path") -> RunSettings:
    return RunSettings(
        n_weights=8,
        lambdas=[0.005],
        sigmas=[0.5],
        n_jobs=1,
        engine=engine,
        calibration=calibration,
        intervals=intervals,
    )


@pytest.mark.parametrize("calibration", [None, *CALIBRATION_CHOICES])
def test_the_path_view_is_consistent_under_every_calibration(qtbot, window, calibration):
    result = run_and_wait(qtbot, window, _settings(calibration))
    assert result is not None, window.messages.text()
    assert result.settings.calibration == calibration  # the settings panel carries it
    recalibrated = calibration != "none"  # None: the default, which recalibrates
    est = result.estimator
    assert (est.recalibration is not None) == recalibrated
    path = result.path
    assert path is not None
    lad = result.ladders[0]
    view = window.simplex_view
    window.tabs.setCurrentWidget(view)
    X = result.split.X_all
    positive = int(np.searchsorted(result.split.dataset.classes, est.classes_[1]))
    checked = 0
    for row in result.split.test.index[:12]:
        row = int(row)
        window.selection.select(row)
        drawn = view.ladder_arrays()
        lo, hi = lad.lo[row], lad.hi[row]
        np.testing.assert_allclose(drawn["bracket_x"], [lo, hi])
        assert lo - 1e-9 <= drawn["estimate_x"][0] <= hi + 1e-9
        zeros = drawn["zeros_x"]
        np.testing.assert_allclose(view.curves[0].getData()[1], path.curves(X[row : row + 1])[0])
        if zeros.size == 1:  # the raw path's sign change lies in the drawn bracket
            assert lo - 1e-6 <= zeros[0] <= hi + 1e-6, (row, zeros, lo, hi)
            checked += 1
        reported = result.report.proba[row, positive]
        if recalibrated:
            np.testing.assert_allclose(drawn["calibrated_x"], [reported], atol=1e-12)
            np.testing.assert_allclose(view.curve_calibrated.data["x"], [reported], atol=1e-12)
        else:
            assert drawn["calibrated_x"].size == 0
            assert lo - 1e-6 <= reported <= hi + 1e-6  # the ladder's own reading is reported
    assert checked >= 6
    labels = " ".join(view.legend_labels())
    assert ("calibrated" in labels) == recalibrated
    # the boundary at pi names the calibrated probability it stands for
    bv = window.boundary_view
    assert bv._pi_row.isEnabled()
    bv.pi_slider.setValue(300)
    text = bv.pi_label.text()
    assert text.startswith("\u03c0 = 0.300")
    if recalibrated:
        g = est.recalibration(np.array([0.3]))[0]
        assert f"calibrated p\u0302 = {g:.3f}" in text
    else:
        assert "calibrated" not in text


def test_the_grid_engines_traced_path_agrees_with_the_raw_bracket_when_calibrated(qtbot, window):
    result = run_and_wait(qtbot, window, _settings("sigmoid", engine="grid"))
    assert result is not None and result.path is not None and result.path.source == "traced"
    lad = result.ladders[0]
    view = window.simplex_view
    window.tabs.setCurrentWidget(view)
    checked = 0
    for row in result.split.test.index[:12]:
        window.selection.select(int(row))
        zeros = view.ladder_arrays()["zeros_x"]
        if zeros.size == 1 and lad.lo[row] < lad.hi[row]:
            # the grid's bracket is one grid step wide; the exact zero lies inside it
            assert lad.lo[row] - 1e-2 <= zeros[0] <= lad.hi[row] + 1e-2
            checked += 1
    assert checked >= 6


def test_per_point_intervals_are_drawn_on_the_bars(qtbot, window):
    """A run with intervals on: one whisker per bar, on the border of its two stacked
    parts, from the exported p_<class>_lo to p_<class>_hi of the first class (which holds
    the bar's estimate); a run without them draws none."""
    from wsvmgui.estimators.report import INTERVAL_HI, INTERVAL_LO

    assert run_and_wait(qtbot, window, _settings("auto")) is not None
    bars = window.bars_view
    window.tabs.setCurrentWidget(bars)
    assert "interval_lo" not in bars.bar_arrays()
    assert not any("interval" in item.text for _s, item in bars.legend.items)

    result = run_and_wait(qtbot, window, _settings("auto", intervals=True))
    assert result is not None, window.messages.text()
    c0 = result.split.dataset.classes[0]
    lo = result.report.extra[f"{INTERVAL_LO}{c0}"]
    hi = result.report.extra[f"{INTERVAL_HI}{c0}"]
    drawn = bars.bar_arrays()
    rows = drawn["rows"]
    assert rows.size == result.split.test.size
    np.testing.assert_allclose(drawn["interval_x"], drawn["x"])
    np.testing.assert_allclose(drawn["interval_lo"], lo[rows], atol=1e-12)
    np.testing.assert_allclose(drawn["interval_hi"], hi[rows], atol=1e-12)
    p0 = result.report.proba[rows, 0]
    # the whisker sits on the border of the stacked parts and holds the estimate
    np.testing.assert_allclose(drawn["heights"][0], p0)
    assert np.all(drawn["interval_lo"] <= p0 + 1e-12) and np.all(p0 <= drawn["interval_hi"] + 1e-12)
    assert np.any(drawn["interval_hi"] - drawn["interval_lo"] > 0.01)  # real widths
    assert any("interval" in item.text for _s, item in bars.legend.items)
    row = int(rows[0])
    assert f"{lo[row]:.3f} to {hi[row]:.3f}" in bars.describe_row(row)
    # the train rows too
    bars.rows_combo.setCurrentText("train")
    drawn = bars.bar_arrays()
    np.testing.assert_allclose(drawn["interval_lo"], lo[drawn["rows"]], atol=1e-12)
