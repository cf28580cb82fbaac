"""Local task execution: results in task order, groups one after another, the first
failure stops the rest, cancellation; choosing an executor and reaching a scheduler."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from wsvmgui.errors import Cancelled, InputError, SolverError
from wsvmgui.executor import LocalExecutor, Task, current_executor, use_scheduler
from wsvmgui.progress import ProgressTracker


def _record(ctx, log, lock, name, seconds, together=None):
    with lock:
        log.append(("start", name))
    if together is not None:
        together.wait()  # raises BrokenBarrierError unless the group's tasks run at once
    time.sleep(seconds)
    ctx.step()
    with lock:
        log.append(("end", name))
    return name


def test_results_in_task_order_and_groups_run_one_after_another():
    log: list = []
    lock = threading.Lock()
    # Each group's three tasks meet at a barrier: they can pass it only when they run at
    # the same time (a generous timeout, so that a loaded machine is not a failure).
    barriers = {g: threading.Barrier(3, timeout=60) for g in "ab"}
    tasks = [
        Task(_record, (log, lock, f"{g}{k}", 0.05 * (3 - k), barriers[g]), units=1, group=g)
        for g in "ab"
        for k in range(3)
    ]
    tracker = ProgressTracker(len(tasks))
    out = LocalExecutor(n_jobs=3).run(tasks, tracker)
    assert out == ["a0", "a1", "a2", "b0", "b1", "b2"]
    assert tracker.done == len(tasks)
    # one group's shared object at a time: every task of "a" ended before "b" started
    order = [(kind, name[0]) for kind, name in log]
    assert order.index(("start", "b")) > max(
        i for i, event in enumerate(order) if event == ("end", "a")
    )


def _fail_or_wait(ctx, fail, stopped):
    if fail:
        time.sleep(0.05)
        raise SolverError("fit 3 broke")
    try:
        for _ in range(6000):  # a long task (60 s) that polls cancellation between "fits"
            ctx.check()
            time.sleep(0.01)
    except Cancelled:
        stopped.append("cancelled")
        raise
    stopped.append("finished")
    return "finished"


def test_first_failure_stops_the_others_and_is_raised():
    stopped: list = []
    tasks = [Task(_fail_or_wait, (k == 1, stopped)) for k in range(4)]
    start = time.perf_counter()
    with pytest.raises(SolverError, match="fit 3 broke"):
        LocalExecutor(n_jobs=2).run(tasks, ProgressTracker(0))
    # The running long tasks stopped at their next poll (one, or two when a thread freed
    # by the failure started another before the abort): none ran its 60 s to the end.
    # The time bound is generous so that it holds on a loaded machine too.
    assert stopped and set(stopped) == {"cancelled"}
    assert time.perf_counter() - start < 30


def test_cancellation_stops_a_run():
    flag = threading.Event()
    tracker = ProgressTracker(0, should_cancel=flag.is_set)
    timer = threading.Timer(0.1, flag.set)
    timer.start()
    with pytest.raises(Cancelled):
        LocalExecutor(n_jobs=2).run([Task(_fail_or_wait, (False, [])) for _ in range(3)], tracker)


def test_without_a_cluster_work_runs_on_threads():
    ex = current_executor(3)
    assert isinstance(ex, LocalExecutor) and ex.n_jobs == 3 and ex.name == "3 threads"
    assert ex.memory_slots() == (None, 3)


def test_an_unreachable_scheduler_is_one_line_input_error():
    start = time.perf_counter()
    refused = pytest.raises(
        InputError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"
    )
    with refused, use_scheduler("tcp://127.0.0.1:9", timeout=1):
        pass
    assert time.perf_counter() - start < 30


def test_a_scheduler_without_the_cluster_extra_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    missing = pytest.raises(InputError, match=r"pip install 'wsvmgui\[cluster\]'")
    with missing, use_scheduler("tcp://127.0.0.1:8786"):
        pass
