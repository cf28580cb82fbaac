"""Test-wide setup: headless Qt with a UTF-8 locale, fixed before anything imports Qt."""

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"
if os.environ.get("LANG", "C") in ("", "C", "POSIX"):
    os.environ["LANG"] = "C.UTF-8"

import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import pytest  # noqa: E402


class ScaledClock:
    """``source`` (``time.perf_counter``) run ``factor`` times faster: with a factor of
    1000 every fit looks 1000 times as long to the cost estimate, so that "this run is
    long" holds by construction and not by the machine's speed.  Changing ``factor`` keeps
    the clock continuous (it never jumps back)."""

    def __init__(
        self, factor: float = 1.0, source: Callable[[], float] = time.perf_counter
    ) -> None:
        self._source = source
        self._factor = float(factor)
        self._real = source()
        self._virtual = 0.0

    def __call__(self) -> float:
        return self._virtual + (self._source() - self._real) * self._factor

    @property
    def factor(self) -> float:
        return self._factor

    @factor.setter
    def factor(self, value: float) -> None:
        self._virtual, self._real, self._factor = self(), self._source(), float(value)


class ProbeClocks:
    """The cost probes' CPU and wall clocks, scaled by one ``factor``.

    Both run on this process's CPU time: a probe's deadlines then pass only as the process
    computes, so a loaded machine that leaves the probe thread waiting for a core does
    not cut it short before its first unit (the test would then see a lower bound of a
    few seconds where the scaled fit takes hours).  The real wall clock's role, pricing a
    busy machine, has its own tests."""

    def __init__(self, factor: float) -> None:
        self.cpu = ScaledClock(factor, time.process_time)
        self.wall = ScaledClock(factor, time.process_time)

    @property
    def factor(self) -> float:
        return self.wall.factor

    @factor.setter
    def factor(self, value: float) -> None:
        self.cpu.factor = self.wall.factor = value


@pytest.fixture
def slow_clock(monkeypatch):
    """The cost probes' clocks (CPU and wall seconds), 1000 times as fast as real time:
    every probed fit looks 1000 times as long (see ScaledClock)."""
    clocks = ProbeClocks(1000.0)
    monkeypatch.setattr("wsvmgui.estimators.cost_probe.cpu_clock", clocks.cpu)
    monkeypatch.setattr("wsvmgui.estimators.cost_probe.wall_clock", clocks.wall)
    return clocks


class FakeClock:
    """A clock a test moves by hand (``now``, seconds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake_clocks(monkeypatch):
    """The cost probes' CPU and wall clocks, two :class:`FakeClock` a test moves by hand."""
    cpu, wall = FakeClock(), FakeClock()
    monkeypatch.setattr("wsvmgui.estimators.cost_probe.cpu_clock", cpu)
    monkeypatch.setattr("wsvmgui.estimators.cost_probe.wall_clock", wall)
    return cpu, wall
