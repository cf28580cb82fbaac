"""Test-wide setup: headless Qt with a UTF-8 locale, fixed before anything imports Qt."""

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"
if os.environ.get("LANG", "C") in ("", "C", "POSIX"):
    os.environ["LANG"] = "C.UTF-8"

import time  # noqa: E402

import pytest  # noqa: E402


class ScaledClock:
    """``time.perf_counter`` run ``factor`` times faster: with a factor of 1000 every fit
    looks 1000 times as long to the cost estimate, so that "this run is long" holds by
    construction and not by the machine's speed.  Changing ``factor`` keeps the clock
    continuous (it never jumps back)."""

    def __init__(self, factor: float = 1.0) -> None:
        self._factor = float(factor)
        self._real = time.perf_counter()
        self._virtual = 0.0

    def __call__(self) -> float:
        return self._virtual + (time.perf_counter() - self._real) * self._factor

    @property
    def factor(self) -> float:
        return self._factor

    @factor.setter
    def factor(self, value: float) -> None:
        self._virtual, self._real, self._factor = self(), time.perf_counter(), float(value)


@pytest.fixture
def slow_clock(monkeypatch):
    """The cost estimate's clock, 1000 times as fast as real time (see ScaledClock)."""
    clock = ScaledClock(1000.0)
    monkeypatch.setattr("wsvmgui.app.cost.clock", clock)
    return clock
