"""The main window end to end (offscreen): demo, runs, cancel, export, bad files, state."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import HEAVY, TINY, run_and_wait

from wsvmgui.app.settings import RunSettings
from wsvmgui.evaluation.metrics import label_metrics


def test_starts_with_the_demo_and_the_quick_preset(window):
    ds = window.data_panel.dataset
    assert ds is not None and ds.name == "demo" and ds.X.shape == (200, 2)
    s = window.settings_panel.settings()
    assert window.settings_panel.preset_name() == "quick"
    # the exact path (probabilities not quantised), its sign ladder drawn at M weights
    assert s.scheme == "binary" and s.engine == "path" and s.n_weights >= 40
    assert len(s.lambdas) == 3 and len(s.sigmas) == 3 and s.tuning == "split"
    text = window.settings_panel.resolution.text()
    assert "exact" in text and f"M = {s.n_weights}" in text
    # the demo's points are drawn before any run
    np.testing.assert_array_equal(window.boundary_view.left.points.data["x"], ds.X[:, 0])


def test_tiny_run_fills_every_view(qtbot, window):
    lives = []
    add_live = window.boundary_view.add_live
    window.boundary_view.add_live = lambda live: (lives.append(live), add_live(live))
    result = run_and_wait(qtbot, window, TINY)
    assert result is not None, window.messages.text()
    ds = result.split.dataset
    est = result.estimator
    # the status line names the measures as people read them, not as identifiers
    shown = window.messages.text()
    assert shown.startswith("Finished in") and not {"log_likelihood", "cross_entropy"} & set(
        shown.replace(",", " ").split()
    )

    # Boundaries: one curve per weight, each on the zero set of its decision function.
    curves = window.boundary_view.left.boundary_data()
    assert len(curves) == len(est.weights_) == 4
    for m, (x, y) in enumerate(curves):
        assert x.size > 10 and x.size == y.size
        # curves are drawn in raw units; the model sees standardised inputs
        f = est.ladder_decision(result.split.transform(np.column_stack([x, y])))[:, m]
        scale = np.abs(est.ladder_decision(result.split.X_all)[:, m]).max()
        assert np.max(np.abs(f)) < 0.05 * scale
    # While fitting, final fits' boundaries arrived live (at most 20 a second), in weight
    # order, each the same curve as the finished one.
    assert 1 <= len(lives) <= len(est.weights_)
    weights = list(est.weights_)
    index = [weights.index(pytest.approx(lv.weight)) for lv in lives]
    assert index == sorted(index)
    for live, m in zip(lives, index, strict=True):
        np.testing.assert_allclose(live.segments.reshape(-1, 2)[:, 0], curves[m][0])
    # p_hat background on the plane grid
    assert window.boundary_view.left.image.image.shape == (80, 80, 3)  # opaque RGB

    # Bars: the test rows, stacked probabilities equal to the report's.
    bars = window.bars_view.bar_arrays()
    rows = bars["rows"]
    assert sorted(rows.tolist()) == sorted(result.split.test.index.tolist())
    np.testing.assert_allclose(bars["heights"].T, result.report.proba[rows])
    np.testing.assert_allclose(bars["heights"].sum(axis=0), 1.0)
    np.testing.assert_allclose(bars["y0"][1], bars["heights"][0])

    # Results: the table holds the test measures, recomputed independently here.
    test = result.split.test
    expected = label_metrics(result.report.proba[test.index], test.y, ds.classes)
    shown = window.results_view.table_values()["test"]
    for key, value in expected.items():
        assert shown[key] == pytest.approx(value)
    assert window.results_view.tuning_table is None  # one lambda and one sigma: no tuning

    # Selecting a point selects it everywhere; the ladder shows its bracket.
    row = int(test.index[3])
    window.selection.select(row)
    sel = window.boundary_view.left.selected.data
    assert (sel["x"][0], sel["y"][0]) == (ds.X[row, 0], ds.X[row, 1])
    lad = window.simplex_view.ladder_arrays()
    lo, hi = result.ladders[0].lo[row], result.ladders[0].hi[row]
    np.testing.assert_allclose(lad["bracket_x"], [lo, hi])
    np.testing.assert_allclose(lad["sign_x"], est.weights_)
    # f_pi(x) of the selected point: through the ladder's values at its weights (the
    # exact path's curve where there is one), the estimate on the zero line
    window.simplex_view.ensure_drawn()
    x, y = window.simplex_view.curves[0].getData()
    f_row = est.ladder_decision(result.split.X_all[row : row + 1])[0]
    if result.path is None:
        np.testing.assert_allclose(x, est.weights_)
        np.testing.assert_allclose(y, f_row)
    else:
        np.testing.assert_allclose(x, result.path.pis)
        np.testing.assert_allclose(
            np.interp(est.weights_, x, y), f_row, atol=0.02 * np.abs(y).max()
        )
    marks = window.simplex_view.curve_marks.data
    assert marks["x"][0] == pytest.approx(0.5 * (lo + hi)) and marks["y"][0] == 0
    slot = int(np.flatnonzero(window.bars_view._rows == row)[0])
    assert window.bars_view.row_at(slot) == row
    assert window.bars_view.marker.data["x"][0] == slot


def test_tuning_surface_and_plane_change(qtbot, window):
    settings = RunSettings(n_weights=5, lambdas=[0.05, 0.005], sigmas=[0.3, 0.6, 1.2], n_jobs=1)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    table = window.results_view.tuning_table
    assert table.shape == (2, 3)
    np.testing.assert_allclose(table, result.estimator.tuning_.egkl)
    best = window.results_view.best.data
    i, j = np.unravel_index(np.argmin(table), table.shape)
    assert (best["x"][0], best["y"][0]) == (i, j)
    # Swapping the axes recomputes the plane on the worker; the curves follow.
    before = window.boundary_view.left.boundary_data()[0]
    window.boundary_view.x_combo.setCurrentIndex(1)
    window.boundary_view.y_combo.setCurrentIndex(0)
    qtbot.waitUntil(
        lambda: result.plane.ix == 1 and not window.runs.runner.is_running("plane"), timeout=20000
    )
    after = window.boundary_view.left.boundary_data()[0]
    assert after[0].size > 0
    np.testing.assert_allclose(np.sort(after[0]), np.sort(before[1]), atol=1e-9)


def test_cancel_stops_at_the_next_fit(qtbot, window, monkeypatch):
    """Cancel stops the worker at its next fit: few fits report progress once the worker
    can see the request, however fast or loaded the machine (a time bound would fail on
    one or the other)."""
    from wsvmgui.app import analysis

    requested = threading.Event()
    after_request: list[int] = []
    real = analysis.fit_scheme

    def counting(*args, progress=None, **kwargs):
        def counted(done, total, partial=None):
            if requested.is_set():
                after_request.append(done)
            if progress is not None:
                progress(done, total, partial)

        return real(*args, progress=counted, **kwargs)

    monkeypatch.setattr(analysis, "fit_scheme", counting)
    window.confirm_limit = None  # no cost question: the run starts at once
    window.settings_panel.set_settings(HEAVY)
    seen = []
    window.runs.runner.progress.connect(lambda kind, done, total, el: seen.append(done))
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(seen) > 0 and seen[-1] > 0, timeout=60000)
    requested.set()
    window.cancel_run()
    assert window.runs.runner.wait(60000), "the worker was still running 60 s after Cancel"
    # 47,959 fits in all; the worker checks the request before every fit (a thread switch
    # on the GIL is the only delay: at most a few hundred of these sub-millisecond fits)
    assert len(after_request) < 500, len(after_request)
    qtbot.wait(50)
    assert window.result is None
    assert "cancel" in window.status.progress_label.text()
    assert window.run_button.isEnabled()


def test_new_run_cancels_the_old_one(qtbot, window):
    shown = []
    original = window.results_view.set_result
    window.results_view.set_result = lambda r: (shown.append(r), original(r))
    window.settings_panel.set_settings(HEAVY)  # still running when the next run starts
    window.confirm_limit = None
    seen = []
    window.runs.runner.progress.connect(lambda kind, done, total, el: seen.append(total))
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(seen) > 0, timeout=20000)
    asked = []
    window.ask = lambda title, text, choices, default: asked.append(text) or choices[0]
    result = run_and_wait(qtbot, window, TINY)
    assert len(asked) == 1 and "Stop it and start again" in asked[0]
    assert window.runs.runner.wait(30000)
    qtbot.wait(100)  # anything the old job still queued would arrive now
    assert result is not None and result.settings == TINY
    assert [r.settings for r in shown] == [TINY]
    assert window.result is result


def test_export_csv_png_svg_and_settings(qtbot, window, tmp_path):
    from wsvmgui.io.results import read_probabilities_csv, read_results

    result = run_and_wait(qtbot, window, TINY)
    path = tmp_path / "probs.csv"
    assert window.files.export_csv(str(path), "test")
    frame, settings, meta = read_probabilities_csv(path)
    test = result.split.test
    assert len(frame) == test.size
    # rows numbered from 1 = the first data row, as the sidecar says; labels beside
    np.testing.assert_array_equal(frame["row"].to_numpy(), test.index + 1)
    described = {c["name"]: c["description"] for c in read_results(path)[1]["columns"]}
    assert "1 = first data row" in described["row"]
    np.testing.assert_array_equal(
        frame["observed"].astype(str).to_numpy(), result.split.dataset.y[test.index]
    )
    assert set(frame["split"]) == {"test"}
    for k, c in enumerate(result.report.classes):
        np.testing.assert_allclose(
            frame[f"p_{c}"].to_numpy(), result.report.proba[test.index, k], atol=1e-6
        )
        assert np.all(frame[f"p_{c}_lower"] <= frame[f"p_{c}"] + 1e-9)
        assert np.all(frame[f"p_{c}"] <= frame[f"p_{c}_upper"] + 1e-9)
    assert settings == TINY.to_dict()
    assert meta["data"] == "demo"
    np.testing.assert_array_equal(
        frame["predicted"].astype(str).to_numpy(), result.report.label[test.index].astype(str)
    )

    assert window.files.export_csv(str(path), "all")  # overwrite (the dialog asked)
    assert len(read_probabilities_csv(path)[0]) == 200

    png, svg = tmp_path / "b.png", tmp_path / "b.svg"
    assert window.files.export_plot(str(png), window.boundary_view)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert window.files.export_plot(str(svg), window.boundary_view)
    assert b"<svg" in svg.read_bytes()[:2000]
    assert not window.files.export_plot(str(tmp_path / "b.gif"), window.boundary_view)
    assert window.messages.level == "error"

    from wsvmgui.gui.export import save_settings

    js = tmp_path / "s.json"
    save_settings(js, TINY)
    window.settings_panel.set_settings(RunSettings())
    assert window.files.load_settings_file(str(js))
    assert window.settings_panel.settings() == TINY
    assert list(tmp_path.glob(".*tmp")) == []  # atomic writes leave no temporary files


def test_failed_loads_leave_everything_as_it_was(qtbot, window, tmp_path):
    from PySide6.QtWidgets import QDialog

    panel = window.data_panel
    before = panel.dataset
    shown = (panel.source.currentText(), panel.summary.text())
    bad = tmp_path / "broken.csv"
    bad.write_bytes(b"\x00\xff\xfe garbage \x00\x01")
    assert not panel.open_file(str(bad))
    assert window.messages.level == "error"
    assert "broken.csv" in window.messages.text()
    assert panel.dataset is before
    assert (panel.source.currentText(), panel.summary.text()) == shown

    # readable, but the guessed columns do not work: the panel still shows the data in
    # use, and a dialog asks for the columns
    text = tmp_path / "text.csv"
    text.write_text("a,b,label\n1.5,x,0\n2,y,1\n3,x,0\n4,y,1\n5,x,0\n6,y,1\n")
    assert not panel.open_file(str(text))
    message = window.messages.text()
    assert window.messages.level == "error" and "'b' holds text" in message
    assert "id column" in message and "--" not in message  # no command-line flags
    assert str(tmp_path) not in message  # no absolute paths
    assert panel.dataset is before and panel.path is None
    assert (panel.source.currentText(), panel.summary.text()) == shown
    dialog = panel.pending_dialog
    assert dialog is not None and dialog.label.currentText() == "label"
    for i in range(dialog.features.count()):  # keep only the numeric column
        item = dialog.features.item(i)
        item.setCheckState(
            item.checkState().Checked if item.text() == "a" else item.checkState().Unchecked
        )
    assert dialog.id_column.currentData() is None  # repeated texts: no id proposed
    dialog.done(QDialog.DialogCode.Accepted)
    assert panel.dataset is not before and panel.dataset.feature_names == ["a"]
    assert panel.dataset.ids is None
    assert (
        panel.source.currentText() == "File: text.csv" and "1 features" in panel.label_column.text()
    )

    good = tmp_path / "good.csv"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    lines = ["f1,f2,f3,label"] + [f"{a},{b},{c},{'yes' if a > 0 else 'no'}" for a, b, c in X]
    good.write_text("\n".join(lines) + "\n")
    assert panel.open_file(str(good))
    ds = panel.dataset
    assert ds.feature_names == ["f1", "f2", "f3"] and list(ds.classes) == ["no", "yes"]
    assert window.files.recent_files()[0] == str(good)
    # a bad column choice: no features
    assert not panel.apply_columns("label", [])
    assert window.messages.level == "error" and "feature" in window.messages.text()
    assert panel.dataset is ds and panel.features == ["f1", "f2", "f3"]


def test_builtin_design_shows_truth_metrics(qtbot, window):
    assert window.data_panel.load_builtin("design:wuliu2011_ex1")
    result = run_and_wait(qtbot, window, TINY)
    assert result is not None, window.messages.text()
    shown = window.results_view.table_values()["test"]
    assert {"L1", "L2", "EGKL", "GKL", "error"} <= set(shown)
    test = result.split.test
    l1 = np.abs(result.report.proba[test.index] - test.p_true).sum(axis=1).mean()
    assert shown["L1"] == pytest.approx(l1)
    assert l1 < 0.5  # far better than a constant 1/2 on this design
    # the bars carry the true probabilities as dashes
    x, y = window.bars_view.truth.getData()
    assert x is not None and x.size == 2 * test.size


def test_a_class_too_small_for_the_folds_is_refused_before_the_run(qtbot, window, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    labels = ["a"] * 37 + ["b"] * 3  # too few of "b" for the 5 folds asked for
    path = tmp_path / "small.csv"
    path.write_text(
        "x1,x2,label\n" + "".join(f"{a},{b},{c}\n" for (a, b), c in zip(X, labels, strict=True))
    )
    window.data_panel.test_fraction.setValue(0.0)
    assert window.data_panel.open_file(str(path))
    settings = RunSettings(
        n_weights=5, lambdas=[0.05, 0.005], sigmas=[0.5], n_jobs=1, tuning="cv", cv_folds=5
    )
    window.settings_panel.set_settings(settings)
    assert window.start_run() is None  # nothing fitted: the plan cannot work
    assert not window.runs.runner.is_running("run")
    assert window.messages.level == "error"
    assert "'b'" in window.messages.text() and "3 point" in window.messages.text()


def test_error_in_a_run_is_shown_with_details(qtbot, window, monkeypatch):
    import wsvmgui.app.analysis as analysis

    def failing_fit(*args, **kwargs):
        raise RuntimeError("the solver gave up on this problem")

    monkeypatch.setattr(analysis, "fit_scheme", failing_fit)
    window.settings_panel.set_settings(TINY)
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: not window.runs.runner.is_running("run"), timeout=60000)
    assert window.messages.level == "error"
    assert "the solver gave up" in window.messages.text()
    assert "Traceback" in window.messages.details.toPlainText()
    assert window.result is None

    # a binary-only scheme is disabled for K = 3 data, and a run refuses it at once
    assert window.data_panel.load_builtin("design:wu2010_ex1")
    assert not window.settings_panel.scheme_enabled("binary")
    item = window.settings_panel.scheme.model().item(
        window.settings_panel.scheme.findData("binary")
    )
    assert "two classes" in item.toolTip()


def test_state_is_remembered(qtbot, app_state, window):
    from wsvmgui.gui.main_window import MainWindow

    custom = RunSettings(n_weights=7, lambdas=[0.02], sigmas=[0.4], seed=5, n_jobs=1)
    window.settings_panel.set_settings(custom)
    app_state.last_folder = str(app_state.store.fileName())
    window.close()
    again = MainWindow(app_state)
    qtbot.addWidget(again)
    assert again.settings_panel.settings() == custom
    assert app_state.last_folder == str(
        __import__("pathlib").Path(app_state.store.fileName()).parent
    )
    geometry, state = app_state.window()
    assert geometry is not None and state is not None


def test_tune_set_mode_uses_the_tuning_part(qtbot, window):
    settings = RunSettings(
        n_weights=5,
        lambdas=[0.05, 0.005],
        sigmas=[0.5],
        tuning="tune-set",
        tune_fraction=0.2,
        n_jobs=1,
    )
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    sp = result.split
    assert (sp.tune.size, sp.test.size, sp.train.size) == (40, 60, 100)
    assert result.estimator.tuning_ is not None
    assert result.estimator.tuning_.egkl.shape == (2, 1)
    parts = {c for c in window.results_view.table_values() if not c.endswith("(test)")}
    assert parts == {"train", "tune", "test"}


def test_baselines_join_the_results_and_the_calibration_after_each_run(qtbot, window):
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import brier_score_loss, log_loss

    result = run_and_wait(qtbot, window, TINY)  # waits for the baselines too
    table = window.results_view.table_values()
    names = [c for c in table if c.endswith("(test)")]
    assert len(names) == 3, table
    sp = result.split
    model = LogisticRegression(max_iter=2000).fit(sp.train.X, sp.train.y)
    p = model.predict_proba(sp.test.X)
    expected = label_metrics(p, sp.test.y, model.classes_)
    assert table["logistic regression (test)"]["error"] == pytest.approx(expected["error"])
    assert table["logistic regression (test)"]["log_likelihood"] == pytest.approx(
        expected["log_likelihood"], rel=1e-6
    )
    # the calibration view scores the scheme and the baselines on the same test rows
    scores = window.calibration_view.table_values()
    assert list(scores) == [
        "Binary ladder",
        "logistic regression",
        "SVC + Platt scaling",
        "k nearest neighbours (k=15)",
    ]
    positive = sp.test.y == result.report.classes[1]
    mine = result.report.proba[sp.test.index]
    assert scores["Binary ladder"]["brier"] == pytest.approx(brier_score_loss(positive, mine[:, 1]))
    assert scores["logistic regression"]["log_loss"] == pytest.approx(
        log_loss(sp.test.y, p, labels=model.classes_), rel=1e-6
    )
    window.tabs.setCurrentWidget(window.calibration_view)  # drawn when shown
    assert window.calibration_view.count_bars.opts["height"].sum() == sp.test.size
    # "Fit baselines again" refits them
    window.results_view.baseline_button.click()
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=60000)
    assert window.results_view.table_values() == table
