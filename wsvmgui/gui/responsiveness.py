"""Measuring how long the event loop is blocked while the app works.

A 5 ms QTimer records the time between its ticks; a tick that comes late shows the event
loop was busy (or waiting for the GIL, or for a CPU) for that long.  Each gap also records
the GUI thread's own CPU time in it: on a machine shared with other work, a wall-clock gap
can be long because the thread waited for a CPU, while the CPU time is what the app itself
spent without returning to the loop.  Used by
``tests/gui/test_responsiveness.py`` and ``benchmarks/gui_event_loop.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from PySide6.QtCore import QEventLoop, QObject, QTimer

from ..app.settings import RunSettings

TICK_MS = 5


class GapMeter(QObject):
    """Records the gaps between ticks of a 5 ms timer on the GUI thread."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = TICK_MS) -> None:
        super().__init__(parent)
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self.cpu: list[float] = []
        self._last = 0.0
        self._last_cpu = 0.0

    def start(self) -> None:
        self.gaps = []
        self.cpu = []
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        cpu = time.thread_time()
        self.gaps.append(now - self._last)
        self.cpu.append(cpu - self._last_cpu)
        self._last = now
        self._last_cpu = cpu

    @property
    def worst(self) -> float:
        """Largest gap in seconds (0 without ticks)."""
        return max(self.gaps, default=0.0)


@dataclass
class GapMeasurement:
    """One measured run: worst gaps and tick statistics, in milliseconds.

    ``worst_ms`` is wall-clock time between ticks; ``worst_cpu_ms`` the GUI thread's CPU
    time within one gap (its own uninterrupted work).
    """

    worst_ms: float
    worst_cpu_ms: float
    p99_ms: float
    ticks: int
    run_seconds: float
    view: str
    ok: bool = True
    gaps_ms: list[float] = field(default_factory=list, repr=False)


def measure_run(
    window, settings: RunSettings, timeout: float = 120.0, settle: float = 0.2
) -> GapMeasurement:
    """Run ``settings`` in ``window`` and record the event-loop gaps until it has drawn.

    The event loop runs normally (a nested QEventLoop) the whole time; nothing here sleeps
    on the GUI thread.
    """
    import numpy as np

    window.settings_panel.set_settings(settings)
    # let pending paints (a tab just switched to, the settings just set) finish first
    settle_loop = QEventLoop()
    QTimer.singleShot(int(settle * 1000), settle_loop.quit)
    settle_loop.exec()
    meter = GapMeter(window)
    loop = QEventLoop()
    start = time.perf_counter()
    finished_at: list[float] = []

    def check() -> None:
        now = time.perf_counter()
        idle = not window.is_busy()
        if idle and not finished_at:
            finished_at.append(now)
        if (finished_at and now - finished_at[0] >= settle) or now - start > timeout:
            loop.quit()

    poll = QTimer()
    poll.setInterval(20)
    poll.timeout.connect(check)
    meter.start()
    if window.start_run() is None:
        meter.stop()
        raise RuntimeError(f"the run did not start: {window.messages.text()}")
    poll.start()
    loop.exec()
    poll.stop()
    meter.stop()
    gaps = np.asarray(meter.gaps) * 1000.0
    cpu = np.asarray(meter.cpu) * 1000.0
    return GapMeasurement(
        worst_ms=float(gaps.max()) if gaps.size else 0.0,
        worst_cpu_ms=float(cpu.max()) if cpu.size else 0.0,
        p99_ms=float(np.percentile(gaps, 99)) if gaps.size else 0.0,
        ticks=int(gaps.size),
        run_seconds=(finished_at[0] if finished_at else time.perf_counter()) - start,
        view=window.tabs.tabText(window.tabs.currentIndex()),
        ok=window.result is not None and window.result.settings == settings,
        gaps_ms=gaps.tolist(),
    )
