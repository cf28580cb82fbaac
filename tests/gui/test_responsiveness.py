"""The event loop stays responsive while the demo runs: no gap of 50 ms or more.

Two measurements of the same runs (a 5 ms timer on the GUI thread):

* the GUI thread's own CPU time within any gap between two ticks stays below 50 ms: the
  app never does 50 ms of work without returning to the event loop; this holds however
  busy the machine is, so it is always asserted;
* the wall-clock gap stays below 50 ms; on a machine whose load average exceeds its CPU
  count, a thread can wait longer than that for a CPU whatever it does, so this test is
  skipped then (with the measured value in the reason).

The assertion is on the best of up to three demo runs, so a single unrelated scheduling
hiccup does not fail it, while a run that blocks the loop blocks it every time.
benchmarks/gui_event_loop.py records the full distribution.
"""

from __future__ import annotations

import pytest

from wsvmgui.gui.main_window import DEMO_SETTINGS
from wsvmgui.gui.responsiveness import machine_busy, measure_run

LIMIT_MS = 50.0


def _measure(window, key: str):
    window.tabs.setCurrentWidget(window.boundary_view)  # the busiest view: live boundaries
    measures = []
    for _ in range(3):
        m = measure_run(window, DEMO_SETTINGS)
        assert window.result is not None, window.messages.text()
        assert m.ticks > 20  # the timer really ran during the run
        measures.append(m)
        if getattr(m, key) < LIMIT_MS:
            break
    return measures


def test_gui_thread_never_works_50_ms_without_returning_to_the_loop(window):
    measures = _measure(window, "worst_cpu_ms")
    best = min(m.worst_cpu_ms for m in measures)
    assert best < LIMIT_MS, [round(m.worst_cpu_ms, 1) for m in measures]


def test_event_loop_gap_below_50_ms(window):
    measures = _measure(window, "worst_ms")
    best = min(m.worst_ms for m in measures)
    if best >= LIMIT_MS and machine_busy():
        pytest.skip(
            f"machine overloaded (load average above CPU count): worst gap "
            f"{best:.0f} ms, GUI-thread CPU in it {measures[-1].worst_cpu_ms:.0f} ms"
        )
    assert best < LIMIT_MS, [round(m.worst_ms, 1) for m in measures]
