"""The phases of a run: what each is expected to cost, and progress and time left over all.

A run of the desktop app has phases: the stages of its fit (tuning, final ladders, the
joint fit's grid fits, ...), the comparison fit's stages, the exact path, the views.
:class:`CostEstimate` holds their expected times (:func:`wsvmgui.app.cost.estimate_cost`
measures them); :class:`PhasedProgress` maps the progress of the run onto one fraction of
the whole, weighted by those times, and :func:`time_left` turns a fraction and the time
spent into the time left.  Plain data and arithmetic (no Qt, no fitting).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..estimators.cost import format_seconds

__all__ = [
    "CONFIRM_SECONDS",
    "CostEstimate",
    "Phase",
    "PhasedProgress",
    "format_seconds",
    "time_left",
]

#: Runs expected to take longer than this ask first (seconds).
CONFIRM_SECONDS = 60.0


@dataclass(frozen=True)
class Phase:
    """One phase of a run.

    Attributes
    ----------
    name : str
    fits : int
        Progress units of the phase (0 when it reports its own ``done`` of ``total``).
    seconds : float
        Expected wall-clock seconds.
    lower_bound : bool
        ``seconds`` is a minimum: the probe did not finish a unit in its budget.
    group : str
        The fit the phase belongs to ("main", "comparison", "path", "views"): a fit's
        progress moves through the phases of its group in order (its stages).
    """

    name: str
    fits: int
    seconds: float
    lower_bound: bool = False
    group: str = "main"


@dataclass(frozen=True)
class CostEstimate:
    """The estimated cost of a run: its phases in order.

    Attributes
    ----------
    phases : tuple of Phase
    probe_seconds : float
        Wall seconds the estimate took (counted in the run's time).
    cpu_seconds : float
        CPU seconds of the fits (all threads).
    busy : float
        How much longer than on an idle machine fits take now (1: idle).
    """

    phases: tuple[Phase, ...]
    probe_seconds: float = 0.0
    cpu_seconds: float = 0.0
    busy: float = 1.0

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
        """One line per phase, then how busy the machine is."""
        lines = [
            (f"{p.name}: {p.fits:,} fits, " if p.fits else f"{p.name}: ")
            + format_seconds(p.seconds)
            + (" (at least)" if p.lower_bound else "")
            for p in self.phases
        ]
        if self.busy >= 1.5:
            lines.append(
                f"(other programs share this machine: its fits run {self.busy:.1f} times "
                "slower than on an idle one; the times above include that)"
            )
        return "\n".join(lines)


def time_left(planned: float, elapsed: float, fraction: float) -> float:
    """Seconds left of a run planned to take ``planned`` seconds, ``fraction`` done after
    ``elapsed`` seconds.

    The planned time of the part left, scaled by how much slower (or faster) than planned
    the run has gone so far; that ratio is trusted more as the run advances (fully from a
    quarter of the run on).  Positive until the run is done.
    """
    f = min(max(fraction, 0.0), 1.0)
    if planned <= 0:
        return elapsed * (1.0 - f) / f if f > 0 else 0.0
    ratio = elapsed / max(f * planned, 1e-9)
    trust = min(f / 0.25, 1.0)
    return (1.0 - f) * planned * ratio**trust


class PhasedProgress:
    """One fraction over the phases of a run, weighted by their expected times.

    Parameters
    ----------
    phases : sequence of Phase
        The plan, in order (from :func:`estimate_cost`, or fits alone).

    A fit reports its progress as ``(done, total)`` units counted over all its stages; the
    units of the phases of its group (their ``fits``) say which stage ``done`` is in.  A
    stage without units at the end of a fit (the calibration map) is entered when the
    units before it are done and left when the next group begins; one between stages with
    units is passed over.  A phase without units of a group of its own (the exact path,
    the views) reports its own ``done`` of ``total``.
    """

    def __init__(self, phases: tuple[Phase, ...] | list[Phase]) -> None:
        self.phases = list(phases) or [Phase("run", 0, 1.0)]
        weights = np.array([max(p.seconds, 1e-3) for p in self.phases], dtype=float)
        self.weights = weights / weights.sum()
        self.index = 0
        self.fraction_in_phase = 0.0

    @property
    def name(self) -> str:
        return self.phases[self.index].name

    def begin(self, group: str) -> None:
        """Jump to the first planned phase of ``group`` ("comparison", "views")."""
        for i, p in enumerate(self.phases):
            if i >= self.index and p.group == group:
                self.index, self.fraction_in_phase = i, 0.0
                return

    def _group(self) -> list[int]:
        group = self.phases[self.index].group
        first = self.index
        while first > 0 and self.phases[first - 1].group == group:
            first -= 1
        return [i for i in range(first, len(self.phases)) if self.phases[i].group == group]

    def update(self, done: int, total: int) -> float:
        """Record progress of the current fit or phase; returns the fraction of the run.

        The fraction never falls.
        """
        members = self._group()
        units = [self.phases[i].fits for i in members]
        if sum(units) > 0:
            before = 0
            for i, u in zip(members, units, strict=True):
                if done < before + u or i == members[-1]:
                    break
                before += u
            if i >= self.index:
                # a last phase without units (the calibration map, chosen after the last
                # cross-fit's unit) is reached at its start: it ends when the next begins
                here = min((done - before) / u, 1.0) if u > 0 else 0.0
                if i > self.index:
                    self.index, self.fraction_in_phase = i, 0.0
                self.fraction_in_phase = max(self.fraction_in_phase, here)
        else:
            here = min(done / total, 1.0) if total > 0 else 0.0
            self.fraction_in_phase = max(self.fraction_in_phase, here)
        return self.fraction

    @property
    def fraction(self) -> float:
        before = float(self.weights[: self.index].sum())
        return min(before + float(self.weights[self.index]) * self.fraction_in_phase, 1.0)
