"""The event loop stays responsive while the demo runs (a 5 ms timer on the GUI thread).

The GUI thread's own CPU time within any gap between two ticks stays below 50 ms: the app
never does 50 ms of work without returning to the event loop.  This holds however busy or
idle the machine is, so it is asserted on every machine.  The wall-clock gap is not
asserted here: on a loaded machine a thread can wait longer than 50 ms for a CPU whatever
it does, so a test of it would pass or fail with the machine's load; the wall gaps are
recorded, with the load, by benchmarks/gui_event_loop.py.

The assertion is on the best of up to three demo runs, so a single unrelated scheduling
hiccup does not fail it, while a run that blocks the loop blocks it every time.
"""

from __future__ import annotations

from wsvmgui.gui.main_window import DEMO_SETTINGS
from wsvmgui.gui.responsiveness import measure_run

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
