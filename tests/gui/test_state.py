"""One source of truth: failed and cancelled runs, data changes during a run, checks before
a run, the cost question, the status bar, and the n spinbox."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import HEAVY, LONG, TINY, run_and_wait

from wsvmgui.app.settings import RunSettings
from wsvmgui.gui.main_window import CANCEL, LIGHTER, RUN_ANYWAY


def _shown_everywhere(window, result) -> None:
    """Every view and export shows ``result``."""
    assert window.result is result
    test = result.split.test
    shown = window.results_view.table_values()["test"]
    assert shown["error"] == pytest.approx(result.metrics["test"]["error"])
    bars = window.bars_view.bar_arrays()
    np.testing.assert_allclose(bars["heights"].T, result.report.proba[bars["rows"]])
    assert len(window.boundary_view.left.boundary_data()) == len(result.ladders[0].weights)
    assert "Running" not in window.results_view.summary.text()
    assert window.menu_actions["export_csv"].isEnabled()
    assert test.size > 0


def test_a_failed_run_brings_the_last_result_back_everywhere(qtbot, window, monkeypatch, tmp_path):
    first = run_and_wait(qtbot, window, TINY)
    assert first is not None

    def boom(*_args, **_kwargs):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr("wsvmgui.app.analysis.fit_scheme", boom)
    monkeypatch.setattr("wsvmgui.app.cost.fit_scheme", boom)
    window.settings_panel.set_settings(RunSettings(n_weights=7, lambdas=[0.01], sigmas=[0.5]))
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert window.messages.level == "error" and "solver exploded" in window.messages.text()
    assert window.status.progress_label.text() == "failed"
    for view in range(window.tabs.count()):  # every view drawn again
        window.tabs.setCurrentIndex(view)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    _shown_everywhere(window, first)
    # export follows what is shown: the first run's settings and probabilities
    from wsvmgui.io.results import read_probabilities_csv

    path = tmp_path / "p.csv"
    assert window.files.export_csv(str(path), "test")
    frame, settings, _meta = read_probabilities_csv(path)
    assert settings == TINY.to_dict()


def test_a_failed_first_run_leaves_every_view_empty(qtbot, window, monkeypatch):
    def boom(*_args, **_kwargs):
        raise RuntimeError("no luck")

    monkeypatch.setattr("wsvmgui.app.analysis.fit_scheme", boom)
    monkeypatch.setattr("wsvmgui.app.cost.fit_scheme", boom)
    window.settings_panel.set_settings(TINY)
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert window.result is None and not window.menu_actions["export_csv"].isEnabled()
    assert window.results_view.table_values() == {}
    assert window.bars_view.bar_arrays()["rows"].size == 0
    assert window.boundary_view.left.boundary_data() == []
    assert not window.files.export_csv("unused.csv") and window.messages.level == "error"


def test_cancel_brings_the_last_result_back(qtbot, window):
    first = run_and_wait(qtbot, window, TINY)
    window.settings_panel.set_settings(HEAVY)  # many seconds on any machine
    seen = []
    window.runs.runner.progress.connect(lambda kind, done, total, el: seen.append(done))
    window.confirm_limit = None  # no cost question for this long run
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(seen) > 2, timeout=30000)
    window.cancel_run()
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert window.status.progress_label.text() == "cancelled"
    assert "last result" in window.messages.text()
    _shown_everywhere(window, first)


def test_settings_are_checked_before_a_run_starts(window):
    window.settings_panel.set_settings(RunSettings(scheme="probing", options={"colour": 1}))
    assert window.start_run() is None
    assert window.messages.level == "error" and "colour" in window.messages.text()
    assert not window.runs.runner.is_running("run")
    assert window.data_panel.load_builtin("design:wu2010_ex1")
    window.settings_panel.set_settings(RunSettings(scheme="binary"))  # two classes only
    assert window.start_run() is None and "not available" in window.messages.text()
    assert not window.runs.runner.is_running("run")


def test_new_data_during_a_run_asks_first(qtbot, window):
    window.settings_panel.set_settings(HEAVY)  # still running when the new data come
    window.confirm_limit = None
    before = window.data_panel.dataset
    assert window.start_run() is not None
    asked = []
    window.ask = lambda title, text, choices, default: asked.append(choices) or choices[1]
    assert not window.data_panel.load_builtin("design:wu2010_ex1")  # "Keep running"
    assert window.data_panel.dataset is before and window.runs.runner.is_running("run")
    assert window.data_panel.source.currentData() == "demo"
    window.ask = lambda title, text, choices, default: asked.append(choices) or choices[0]
    assert window.data_panel.load_builtin("design:wu2010_ex1")  # "Stop the run and load"
    assert len(asked) == 2 and not window.runs.runner.is_running("run")
    assert window.data_panel.dataset.name == "design:wu2010_ex1"
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert window.result is None


def test_status_bar_belongs_to_the_data_and_run_shown(qtbot, window):
    run_and_wait(qtbot, window, TINY)
    assert window.status.progress_label.text().startswith("done in")
    assert window.data_panel.load_builtin("design:wuliu2011_ex1")
    assert window.status.progress_label.text() == "" and window.status.progress_bar.value() == 0
    assert "Loaded" in window.status.message.text()


def test_a_long_run_asks_and_offers_the_quick_preset(qtbot, window, slow_clock):
    # Every run is "long": limit 0.05 s, and the cost estimate's clock runs 1000 times as
    # fast as real time (the fits of this machine, however fast, look slow).
    window.confirm_limit = 0.05
    window.settings_panel.set_settings(LONG)
    questions = []

    def answer(choice):
        def ask(title, text, choices, default):
            questions.append((text, choices, default))
            if choice == LIGHTER:  # the quick run goes without a question
                window.confirm_limit = 3600.0
                slow_clock.factor = 1.0
            return choice

        return ask

    window.ask = answer(CANCEL)
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(questions) == 1, timeout=30000)
    text, choices, default = questions[0]
    assert choices == [RUN_ANYWAY, LIGHTER, CANCEL] and default == LIGHTER
    assert "fits" in text and "expected to take" in text
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert window.result is None and "not started" in window.messages.text()

    window.ask = answer(LIGHTER)
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(questions) == 2, timeout=30000)
    qtbot.waitUntil(lambda: window.result is not None, timeout=60000)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=60000)
    assert window.settings_panel.preset_name() == "quick"
    assert window.result.settings.n_weights == 40

    window.confirm_limit = 0.05
    slow_clock.factor = 1000.0
    window.settings_panel.set_settings(
        RunSettings(n_weights=30, lambdas=[0.1, 0.01, 0.001], tuning="cv", n_jobs=1)
    )
    window.ask = answer(RUN_ANYWAY)
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(questions) == 3, timeout=30000)
    qtbot.waitUntil(lambda: window.result.settings.n_weights == 30, timeout=120000)


def test_changing_n_draws_the_simulation_again(qtbot, window):
    panel = window.data_panel
    assert panel.load_builtin("design:wuliu2011_ex1")
    assert panel.n_points.isVisible() and panel.dataset.X.shape[0] == 300
    panel.n_points.setValue(120)
    assert panel.reload_pending() and "drawing n = 120" in panel.summary.text()
    qtbot.waitUntil(lambda: panel.dataset.X.shape[0] == 120, timeout=30000)
    panel.n_points.setValue(140)
    settings = RunSettings(n_weights=5, lambdas=[0.01], sigmas=[0.5], n_jobs=1)
    result = run_and_wait(qtbot, window, settings)  # Run applies a pending change first
    assert result.split.dataset.X.shape[0] == 140
