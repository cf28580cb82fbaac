"""Cost questions you can trust, through the real window (offscreen): a long run asks before
anything is fitted, "Finished in" counts the estimate, every progress line shows the time
left, and a run that cannot work says so before it starts (issue 21, items 1, 6 and 7).

"Long" is by construction: the probes' clocks run 1000 times as fast as real time
(``slow_clock``), never by the machine's speed.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from conftest import TINY

from wsvmgui.app.presets import preset_settings
from wsvmgui.estimators import cost_probe
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.gui.dialogs import CANCEL
from wsvmgui.gui.run_controller import IDLE

WAIT = 120000


def _no_fit_but_probes(monkeypatch, cls):
    real = cls._fit

    def fit(self, *args, **kwargs):
        if not cost_probe.in_probe():
            raise AssertionError("the run's fit started before the question")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, "_fit", fit)


@pytest.mark.parametrize("scheme", ["joint-indirect", "joint-direct"])
def test_a_thorough_joint_run_asks_before_fitting(qtbot, window, monkeypatch, slow_clock, scheme):
    assert window.data_panel.load_builtin("design:wu2010_ex1")
    split = window._split
    settings = preset_settings("thorough", scheme, split.train.X, split.train.y)
    window.settings_panel.set_settings(settings)
    _no_fit_but_probes(monkeypatch, JointWSVMClassifier)
    questions = []
    window.ask = lambda title, text, choices, default: questions.append(text) or CANCEL
    estimates = []
    window.runs.confirmation_needed.connect(lambda request, est: estimates.append(est))
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(questions) == 1, timeout=WAIT)
    qtbot.waitUntil(lambda: window.runs.state == IDLE and not window.is_busy(), timeout=WAIT)
    estimate = estimates[0]
    # every fit of the plan: 5 penalties x 6 widths x 10 folds screened on the coarser
    # simplex grid (36 weights), the 3 best cells of each fold and the refit on the full
    # one (171 weights)
    assert estimate.fits == 36 * 5 * 6 * 10 + 171 * (3 * 10 + 1) == 16101
    assert [p.name for p in estimate.phases][:3] == [
        "screening grid fits",
        "tuning grid fits",
        "final grid fit",
    ]
    assert estimate.seconds > 60 and "16,101 fits" in questions[0]
    assert window.result is None and "not started" in window.messages.text()


def test_a_thorough_joint_run_asks_when_the_probe_gets_no_cpu(qtbot, window, monkeypatch):
    """A machine so busy that the probe's first grid fit never ends: the window still
    asks (the wait is the evidence), and leaves "estimating the cost"."""
    import time

    from wsvmgui.estimators import cost_kinds

    t0 = time.perf_counter()  # wall seconds 1000 times as fast
    monkeypatch.setattr(cost_probe, "wall_clock", lambda: 1000.0 * (time.perf_counter() - t0))

    def never_ends(estimator, X, codes, K, stage, probe):
        probe.rows = stage.rows
        probe.events(4).run(lambda progress, should_cancel: probe.stopped.wait(60.0))
        probe.task_done()

    monkeypatch.setitem(cost_kinds.PROBES, "joint", (never_ends, True))
    assert window.data_panel.load_builtin("design:wu2010_ex1")
    split = window._split
    window.settings_panel.set_settings(
        preset_settings("thorough", "joint-direct", split.train.X, split.train.y)
    )
    _no_fit_but_probes(monkeypatch, JointWSVMClassifier)
    questions = []
    window.ask = lambda title, text, choices, default: questions.append(text) or CANCEL
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: len(questions) == 1, timeout=WAIT)
    qtbot.waitUntil(lambda: window.runs.state == IDLE and not window.is_busy(), timeout=WAIT)
    assert "more than" in questions[0] and "16,101 fits" in questions[0]
    assert window.result is None


def test_finished_in_counts_the_cost_estimate(qtbot, window, monkeypatch):
    """The estimate takes 7 s on its clock: the run's time in the message and in Results
    counts them (it left them out, up to 20 times too little)."""
    import wsvmgui.app.cost as app_cost

    calls = []

    def clock():
        calls.append(1)
        return 100.0 + 7.0 * (len(calls) > 1)

    monkeypatch.setattr(app_cost, "clock", clock)
    window.settings_panel.set_settings(TINY)
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: window.result is not None and not window.is_busy(), timeout=WAIT)
    message = re.search(r"Finished in ([0-9.]+) s", window.messages.text())
    assert message is not None and float(message.group(1)) >= 7.0
    shown = re.search(r"([0-9.]+) s<br>", window.results_view.summary.text())
    assert shown is not None and float(shown.group(1)) >= 7.0
    assert window.status.progress_label.text().startswith("done in")


def test_every_progress_line_shows_the_time_left(qtbot, window):
    settings = replace(TINY, lambdas=[0.05, 0.005], tuning="split")
    lines = []
    window.runs.progressed.connect(lambda percent, text: lines.append(text))
    window.settings_panel.set_settings(settings)
    assert window.start_run() is not None
    qtbot.waitUntil(lambda: window.result is not None and not window.is_busy(), timeout=WAIT)
    running = [t for t in lines if not t.startswith(("done in", "cancelled", "failed"))]
    assert len(running) >= 3  # the estimate, the fit's stages, the views
    assert all("left" in t for t in running), running
    assert all(re.match(r"about [0-9.]+ (s|min|h) left \u00b7 ", t) for t in running), running
    assert "estimating the cost" in running[0]
    assert any(p in t for t in running for p in ("tuning", "final ladder", "views"))


def test_a_class_too_small_for_the_split_is_refused_at_run(qtbot, window, tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "small class.csv"
    rows = ["x1,x2,label"]
    for label, count in (("a", 40), ("b", 40), ("c", 4)):
        rows += [f"{a:.4f},{b:.4f},{label}" for a, b in rng.normal(size=(count, 2))]
    path.write_text("\n".join(rows) + "\n")
    assert window.data_panel.open_file(str(path), label="label")
    # two penalties to tune over by 5-fold cross-validation: class c has 3 training rows
    settings = replace(TINY, scheme="pairwise", lambdas=[0.05, 0.005], tuning="cv", cv_folds=5)
    window.settings_panel.set_settings(settings)
    assert window.start_run() is None  # refused before anything started
    assert not window.runs.runner.any_running() and window.runs.state == IDLE
    assert window.messages.level == "error"
    assert "class 'c' has only" in window.messages.text()
