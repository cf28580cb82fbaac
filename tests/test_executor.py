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


def _record(ctx, log, lock, name, seconds):
    with lock:
        log.append(("start", name, time.perf_counter()))
    time.sleep(seconds)
    ctx.step()
    with lock:
        log.append(("end", name, time.perf_counter()))
    return name


def test_results_in_task_order_and_groups_run_one_after_another():
    log: list = []
    lock = threading.Lock()
    tasks = [
        Task(_record, (log, lock, f"{g}{k}", 0.05 * (3 - k)), units=1, group=g)
        for g in "ab"
        for k in range(3)
    ]
    tracker = ProgressTracker(len(tasks))
    out = LocalExecutor(n_jobs=3).run(tasks, tracker)
    assert out == ["a0", "a1", "a2", "b0", "b1", "b2"]
    assert tracker.done == len(tasks)
    last_a_end = max(t for kind, name, t in log if kind == "end" and name[0] == "a")
    first_b_start = min(t for kind, name, t in log if kind == "start" and name[0] == "b")
    assert first_b_start >= last_a_end  # one group's shared object at a time
    starts_a = sorted(t for kind, name, t in log if kind == "start" and name[0] == "a")
    assert starts_a[-1] - starts_a[0] < 0.1  # a group's tasks do run at the same time


def _fail_or_wait(ctx, fail):
    if fail:
        time.sleep(0.05)
        raise SolverError("fit 3 broke")
    for _ in range(200):  # a long task that polls cancellation between its "fits"
        ctx.check()
        time.sleep(0.01)
    return "finished"


def test_first_failure_stops_the_others_and_is_raised():
    tasks = [Task(_fail_or_wait, (k == 1,)) for k in range(4)]
    start = time.perf_counter()
    with pytest.raises(SolverError, match="fit 3 broke"):
        LocalExecutor(n_jobs=2).run(tasks, ProgressTracker(0))
    assert time.perf_counter() - start < 1.5  # the running long task stopped early


def test_cancellation_stops_a_run():
    flag = threading.Event()
    tracker = ProgressTracker(0, should_cancel=flag.is_set)
    timer = threading.Timer(0.1, flag.set)
    timer.start()
    with pytest.raises(Cancelled):
        LocalExecutor(n_jobs=2).run([Task(_fail_or_wait, (False,)) for _ in range(3)], tracker)


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
