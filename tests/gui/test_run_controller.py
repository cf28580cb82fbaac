"""The run's state machine (RunController) without a window: start, progress, finish, fail,
cancel, a new run during a run, and the cost question.

The worker's function is replaced by stand-ins that finish, fail, ask or block until
cancelled, so each transition is reached by construction, not by the machine's speed;
one test runs the real fit.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import TINY

from wsvmgui.app.analysis import NeedsConfirmation
from wsvmgui.app.datasets import load_builtin, split_dataset
from wsvmgui.app.phases import CostEstimate, Phase
from wsvmgui.app.run_inputs import RunRequest
from wsvmgui.app.view_data import RunStatus
from wsvmgui.errors import Cancelled
from wsvmgui.gui.run_controller import CONFIRMING, IDLE, RUNNING, RunController

WAIT = 60000  # ms: a generous bound for a worker thread to answer on a loaded machine


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Result:
    """What a finished run hands back (the controller reads ``seconds``)."""

    def __init__(self, name: str, seconds: float = 0.5) -> None:
        self.name, self.seconds = name, seconds


@pytest.fixture
def request_():
    split = split_dataset(load_builtin("demo"), 0.0, 0.3, 0, standardise=True)
    return RunRequest(TINY, split)


@pytest.fixture
def runs(qapp):
    controller = RunController(clock=FakeClock())
    events: list[tuple] = []
    for name in ("state_changed", "started", "progressed", "finished", "failed", "cancelled"):
        getattr(controller, name).connect(lambda *a, n=name: events.append((n, *a)))
    controller.confirmation_needed.connect(lambda r, e: events.append(("asked", r, e)))
    controller.events = events
    yield controller
    controller.shutdown(WAIT)


def _jobs(monkeypatch, *fns):
    """Replace the worker's run function by ``fns``, one per started run; records calls."""
    calls: list[tuple] = []
    queue = list(fns)

    def fake(request, progress, should_cancel, publish, limit):
        calls.append((request, limit))
        return queue.pop(0)(progress, should_cancel, publish)

    monkeypatch.setattr("wsvmgui.gui.run_controller.run_checked", fake)
    return calls


def _blocking(entered: threading.Event, result=None):
    """A run that waits for its cancellation (then returns ``result`` if given: a late
    answer the controller must drop)."""

    def job(progress, should_cancel, publish):
        entered.set()
        while not should_cancel():
            threading.Event().wait(0.001)
        if result is not None:
            return result
        raise Cancelled("cancelled")

    return job


def names(events):
    return [e[0] for e in events]


def test_a_run_goes_running_then_idle_with_its_result(qtbot, runs, request_, monkeypatch):
    done = Result("first", seconds=1.25)

    def job(progress, should_cancel, publish):
        progress(500, 1000)
        publish(RunStatus("fit", 3, 10, 0.5))
        return done

    calls = _jobs(monkeypatch, job)
    runs.clock.now = 100.0
    job_id = runs.start(request_, 60.0)
    assert job_id > 0 and runs.state == RUNNING and runs.is_running() and runs.is_busy()
    runs.clock.now = 102.0  # the status arrives 2 s after the start
    with qtbot.waitSignal(runs.finished, timeout=WAIT) as finished:
        pass
    assert finished.args == [done] and runs.result is done and runs.state == IDLE
    assert calls == [(request_, 60.0)]
    qtbot.waitUntil(lambda: not runs.is_busy(), timeout=WAIT)
    assert names(runs.events)[:3] == ["state_changed", "started", "progressed"]
    assert runs.events[0] == ("state_changed", RUNNING)
    assert runs.events[2] == ("progressed", 0, "estimating the cost\u2026")
    texts = [e[2] for e in runs.events if e[0] == "progressed"]
    # half done after 2 s: about 2 s left
    assert "fit: fits 3 of 10, 2.0 s elapsed, about 2.0 s left" in texts
    assert runs.events[-3:] == [
        ("state_changed", IDLE),
        ("progressed", 100, "done in 1.25 s"),
        ("finished", done),
    ]


def test_the_real_run_finishes_with_probabilities(qtbot, runs, request_):
    with qtbot.waitSignal(runs.finished, timeout=WAIT):
        runs.start(request_, None)
    result = runs.result
    assert result.settings == TINY and result.split is request_.split
    np.testing.assert_allclose(result.report.proba.sum(axis=1), 1.0)


def test_a_failed_run_keeps_the_last_result(qtbot, runs, request_, monkeypatch):
    first = Result("first")

    def boom(progress, should_cancel, publish):
        raise ValueError("the solver exploded")

    _jobs(monkeypatch, lambda *a: first, boom)
    with qtbot.waitSignal(runs.finished, timeout=WAIT):
        runs.start(request_, None)
    runs.events.clear()
    with qtbot.waitSignal(runs.failed, timeout=WAIT) as failed:
        runs.start(request_, None)
    message, details = failed.args
    assert message == "the solver exploded" and "ValueError" in details
    assert runs.state == IDLE and runs.result is first
    assert ("progressed", 0, "failed") in runs.events
    assert "finished" not in names(runs.events) and "cancelled" not in names(runs.events)


def test_cancel_stops_the_worker_and_drops_its_late_answer(qtbot, runs, request_, monkeypatch):
    entered = threading.Event()
    _jobs(monkeypatch, _blocking(entered, result=Result("too late")))
    runs.start(request_, None)
    qtbot.waitUntil(entered.is_set, timeout=WAIT)
    assert runs.cancel()
    assert runs.state == IDLE and not runs.is_running()
    assert runs.events[-2:] == [("progressed", 0, "cancelled"), ("cancelled",)]
    assert runs.runner.wait(WAIT)  # the worker saw the request and returned
    qtbot.waitUntil(lambda: not runs.is_busy(), timeout=WAIT)
    qtbot.wait(50)  # anything the worker still queued would arrive now
    assert runs.result is None and "finished" not in names(runs.events)
    assert not runs.cancel()  # nothing left to cancel


def test_a_new_run_during_a_run_replaces_it(qtbot, runs, request_, monkeypatch):
    entered = threading.Event()
    second = Result("second")
    _jobs(monkeypatch, _blocking(entered, result=Result("first, dropped")), lambda *a: second)
    runs.start(request_, None)
    qtbot.waitUntil(entered.is_set, timeout=WAIT)
    with qtbot.waitSignal(runs.finished, timeout=WAIT) as finished:
        runs.start(request_, None)
    assert runs.runner.wait(WAIT)
    qtbot.wait(50)
    assert finished.args == [second] and runs.result is second
    # the first run ended as cancelled, once; only the second finished
    assert names(runs.events).count("cancelled") == 1
    assert [e[1] for e in runs.events if e[0] == "finished"] == [second]
    assert names(runs.events).count("started") == 2
    assert runs.state == IDLE


def test_a_long_run_waits_for_the_answer(qtbot, runs, request_, monkeypatch):
    estimate = CostEstimate((Phase("fit", 12600, 2100.0),))
    ran = Result("run anyway")
    calls = _jobs(monkeypatch, lambda *a: NeedsConfirmation(estimate), lambda *a: ran)
    with qtbot.waitSignal(runs.confirmation_needed, timeout=WAIT) as asked:
        runs.start(request_, 60.0)
    assert asked.args == [request_, estimate]
    assert runs.state == CONFIRMING and runs.is_busy() and not runs.is_running()
    assert "finished" not in names(runs.events)
    with qtbot.waitSignal(runs.finished, timeout=WAIT):
        runs.confirm(request_, estimate)
    again, limit = calls[1]
    assert again.cost is estimate and limit is None  # runs whatever it costs
    assert runs.result is ran and runs.state == IDLE


def test_declining_the_question_ends_the_run(qtbot, runs, request_, monkeypatch):
    estimate = CostEstimate((Phase("fit", 100, 3600.0),))
    _jobs(monkeypatch, lambda *a: NeedsConfirmation(estimate))
    with qtbot.waitSignal(runs.confirmation_needed, timeout=WAIT):
        runs.start(request_, 60.0)
    runs.decline()
    assert runs.state == IDLE and runs.result is None
    qtbot.waitUntil(lambda: not runs.is_busy(), timeout=WAIT)
