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
    recalibrated = calibration not in (None, "none")
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


def test_the_grid_engines_traced_path_agrees_with_the_raw_bracket_when_calibrated(
    qtbot, window
):
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
