"""The phases of a run: what each is expected to cost, and progress over all of them.

A run of the desktop app has phases (the fit, its stages, the comparison fit, the exact
path, the views).  :class:`CostEstimate` holds their estimated times
(:func:`wsvmgui.app.cost.estimate_cost` measures them); :class:`PhasedProgress` maps the
progress of each phase onto one fraction of the whole run, weighted by those times, and
gives the remaining time.  Plain data and arithmetic (no Qt, no fitting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Runs expected to take longer than this ask first (seconds).
CONFIRM_SECONDS = 60.0


@dataclass(frozen=True)
class Phase:
    """One phase of a run.

    Attributes
    ----------
    name : str
    fits : int
        Fits the estimator announced for it (0 when unknown).
    seconds : float
        Estimated wall-clock seconds.
    exact : bool
        The probe ran it to the end: ``seconds`` was measured.
    lower_bound : bool
        The first fit did not finish within :data:`wsvmgui.app.cost.PROBE_CAP`:
        ``seconds`` is a minimum.
    group : str
        The fit the phase belongs to ("main", "comparison", "views"): progress moves to the
        next phase by itself only within one group (a fit's next stage).
    """

    name: str
    fits: int
    seconds: float
    exact: bool = False
    lower_bound: bool = False
    group: str = "main"


@dataclass(frozen=True)
class CostEstimate:
    """The estimated cost of a run: its phases in order.

    Attributes
    ----------
    phases : tuple of Phase
    fitted : dict
        "main" and/or "comparison" -> the estimator a probe fitted completely (a run
        reuses it instead of fitting again).
    """

    phases: tuple[Phase, ...]
    fitted: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def fits(self) -> int:
        return int(sum(p.fits for p in self.phases))

    @property
    def seconds(self) -> float:
        return float(sum(p.seconds for p in self.phases))

    @property
    def lower_bound(self) -> bool:
        return any(p.lower_bound for p in self.phases)

    def needs_confirmation(self, limit: float = CONFIRM_SECONDS) -> bool:
        return self.seconds > limit

    def describe(self) -> str:
        """``"about 35 min, 12,600 fits"`` (``"more than ..."`` for a lower bound)."""
        head = "more than " if self.lower_bound else "about "
        return f"{head}{format_seconds(self.seconds)}, {self.fits:,} fits"

    def details(self) -> str:
        """One line per phase."""
        return "\n".join(
            f"{p.name}: {p.fits:,} fits, {format_seconds(p.seconds)}"
            + (" (measured)" if p.exact else " (at least)" if p.lower_bound else "")
            for p in self.phases
        )


def format_seconds(seconds: float) -> str:
    """``"0.4 s"``, ``"12 s"``, ``"3 min"``, ``"1.5 h"``."""
    if not math.isfinite(seconds):
        return "unknown"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class PhasedProgress:
    """One fraction and remaining time over the phases of a run.

    Parameters
    ----------
    phases : sequence of Phase
        The plan, in order (from :func:`estimate_cost`, or fits alone).

    Each phase's fit reports ``(done, total)``; when an estimator moves on to a next stage
    (its total changes, or ``done`` falls), the phase's next planned stage begins.
    """

    def __init__(self, phases: tuple[Phase, ...] | list[Phase]) -> None:
        self.phases = list(phases) or [Phase("run", 1, 1.0)]
        weights = np.array([max(p.seconds, 1e-3) for p in self.phases], dtype=float)
        self.weights = weights / weights.sum()
        self.index = 0
        self.fraction_in_phase = 0.0
        self._last: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.phases[self.index].name

    def begin(self, group: str) -> None:
        """Jump to the first planned phase of ``group`` ("comparison", "views")."""
        for i, p in enumerate(self.phases):
            if i >= self.index and p.group == group:
                self.index, self.fraction_in_phase, self._last = i, 0.0, None
                return

    def update(self, done: int, total: int) -> float:
        """Record progress of the current phase; returns the fraction of the whole run.

        Within a phase the fraction never falls: a stage the plan does not know (its
        estimator's total changed, but no planned phase follows) continues from where the
        phase was.
        """
        moved_on = self._last is not None and (total != self._last[1] or done < self._last[0])
        nxt = self.index + 1
        same_fit = (
            nxt < len(self.phases) and self.phases[nxt].group == self.phases[self.index].group
        )
        if moved_on and same_fit:
            self.index, self.fraction_in_phase = nxt, 0.0
        self._last = (done, total)
        here = min(done / total, 1.0) if total > 0 else 0.0
        self.fraction_in_phase = max(self.fraction_in_phase, here)
        return self.fraction

    @property
    def fraction(self) -> float:
        before = float(self.weights[: self.index].sum())
        return min(before + float(self.weights[self.index]) * self.fraction_in_phase, 1.0)

    def remaining(self, elapsed: float) -> float | None:
        """Seconds left, from the time spent so far and the fraction done (None early on)."""
        f = self.fraction
        if f <= 0.02 or elapsed <= 0:
            return None
        return elapsed * (1.0 - f) / f
