"""The worker's reports: errors of a job without a handler are raised again on the GUI
thread, errors with one reach it, and warnings raised inside a job are forwarded (to the
runner's signal and the window's status bar), each to the job that raised it."""

from __future__ import annotations

import threading
import warnings

import pytest

from wsvmgui.gui.worker import JobRunner

WAIT = 60000  # ms


@pytest.fixture
def runner(qapp):
    r = JobRunner()
    yield r
    r.cancel_all()
    r.wait(WAIT)


class Exploded(RuntimeError):
    pass


def _explode(progress, should_cancel, publish):
    raise Exploded("the solver exploded")


def test_an_error_without_a_handler_is_raised_on_the_gui_thread(qtbot, runner):
    gui_thread = threading.get_ident()
    seen_in = []

    def hook_thread(*_args):
        seen_in.append(threading.get_ident())

    with qtbot.captureExceptions() as exceptions:
        runner.start("plane", _explode, on_finished=hook_thread)
        qtbot.waitUntil(lambda: not runner.is_running("plane"), timeout=WAIT)
    assert len(exceptions) == 1
    kind, exc, tb = exceptions[0]
    assert kind is Exploded and str(exc) == "the solver exploded"
    # the traceback reaches into the job, on the worker's thread
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "_explode" in frames
    assert seen_in == [gui_thread]


def test_an_error_with_a_handler_goes_to_it(qtbot, runner):
    errors = []
    with qtbot.captureExceptions() as exceptions:
        runner.start("plane", _explode, on_error=lambda m, d: errors.append((m, d)))
        qtbot.waitUntil(lambda: not runner.is_running("plane"), timeout=WAIT)
    assert exceptions == []
    ((message, details),) = errors
    assert message == "unexpected Exploded: the solver exploded"
    assert "Traceback" in details and "_explode" in details


def test_an_error_of_a_replaced_job_is_dropped(qtbot, runner):
    """A job cancelled (replaced) before it fails reports nothing, handler or not."""
    release = threading.Event()

    def late_failure(progress, should_cancel, publish):
        release.wait(30)
        raise Exploded("too late to matter")

    with qtbot.captureExceptions() as exceptions:
        runner.start("plane", late_failure)
        runner.cancel("plane")
        release.set()
        assert runner.wait(WAIT)
        qtbot.wait(50)
    assert exceptions == []


def test_warnings_in_a_job_are_forwarded_to_that_job(qtbot, runner):
    warned = []
    runner.warned.connect(lambda kind, text: warned.append((kind, text)))
    release = threading.Event()

    def careful(progress, should_cancel, publish):
        warnings.warn("grid ladder answered for 2 ladders", UserWarning, stacklevel=1)
        release.wait(30)
        return "fitted"

    def quiet(progress, should_cancel, publish):
        release.wait(30)
        return "also fitted"

    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # the same warning again in every test
        runner.start("run", careful, on_result=results.append)
        runner.start("plane", quiet, on_result=results.append)
        qtbot.waitUntil(lambda: len(warned) == 1, timeout=WAIT)
        warnings.warn("raised on the GUI thread", UserWarning, stacklevel=1)
        release.set()
        qtbot.waitUntil(lambda: len(results) == 2, timeout=WAIT)
    assert sorted(results) == ["also fitted", "fitted"]
    assert warned == [("run", "UserWarning: grid ladder answered for 2 ladders")]


def test_a_warning_in_a_job_shows_in_the_status_bar(qtbot, window):
    def careful(progress, should_cancel, publish):
        warnings.warn("baselines did not converge", RuntimeWarning, stacklevel=1)
        return "done"

    done = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        window.runs.runner.start("score", careful, on_result=done.append)
        qtbot.waitUntil(lambda: done == ["done"], timeout=WAIT)
    text = window.status.warning.text()
    assert "baselines did not converge" in text and "RuntimeWarning" in text
    assert window.status.warning.isVisible() and not window.status.message.isVisible()
    assert window.messages.level == "info"  # the message line keeps its message
