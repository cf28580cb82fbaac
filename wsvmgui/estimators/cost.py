"""What a fit will cost, and the one cost guard of the library, the command line and the app.

Before a fit starts (``BaseProbabilityClassifier.fit`` calls :func:`check_fit`):

1. its plan is counted (:func:`~wsvmgui.estimators.cost_plan.plan_fit`): stages, fits,
   rows; a tuning split that cannot work is refused here, before anything is fitted;
2. hard caps: a plan whose arrays would not fit in memory (an absurd ``n_weights``, a
   simplex grid of ``C(N - 1, K - 1)`` weights held for every tuning candidate, many
   classes) is refused with :class:`~wsvmgui.errors.MemoryBudgetError` before any of it
   is allocated;
3. the time limit: a fit estimated to take longer than the limit raises
   :class:`~wsvmgui.errors.CostLimitError`, with the estimate, unless the limit is
   lifted.  The limit is :data:`DEFAULT_MAX_MINUTES`, the environment variable
   ``WSVMGUI_MAX_MINUTES`` (0 or ``none``: no limit), or what :func:`cost_limit` sets
   inside a ``with`` block (None: no limit)::

       with wsvmgui.cost_limit(minutes=None):
           est.fit(X, y)

The estimate (:func:`estimate_fit`) prices the plan's units by probes on the data itself
(:mod:`wsvmgui.estimators.cost_probe`; under a second).  The guard probes only a fit
that a deliberately pessimistic static bound (:func:`quick_bound`) cannot already clear,
so that small fits pay nothing for it.  The command line applies the same guard with its
``--max-minutes`` flag, the desktop app asks before a run whose estimate exceeds a
minute (:mod:`wsvmgui.app.cost`) and then fits with the limit lifted.
"""

from __future__ import annotations

import contextvars
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import CostLimitError, InputError
from .cost_plan import FitPlan, Stage, check_memory, plan_fit
from .cost_probe import (
    PROBE_BUDGET,
    PROBE_PATIENCE,
    PricedPlan,
    in_probe,
    machine_cores,
    price_plan,
)

__all__ = [
    "DEFAULT_MAX_MINUTES",
    "CostLimitError",
    "FitCost",
    "check_fit",
    "cost_limit",
    "current_limit",
    "estimate_fit",
    "format_seconds",
    "plan",
]

#: Minutes a fit may be estimated to take before the library and the command line refuse.
DEFAULT_MAX_MINUTES = 60.0
#: Environment variable that sets the limit (minutes; 0 or "none": no limit).
ENV_VAR = "WSVMGUI_MAX_MINUTES"

_UNSET = object()
_limit: contextvars.ContextVar[Any] = contextvars.ContextVar("wsvmgui_cost_limit", default=_UNSET)


def format_seconds(seconds: float) -> str:
    """``"0.4 s"``, ``"12 s"``, ``"3 min"``, ``"1.5 h"``, ``"4.2 days"``."""
    if not math.isfinite(seconds):
        return "unknown"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


@dataclass(frozen=True)
class FitCost:
    """The estimated cost of one fit.

    Attributes
    ----------
    priced : PricedPlan
        The plan, each stage's CPU seconds and the probes' measurements.
    cores : int
        Cores of the machine the threads share.
    """

    priced: PricedPlan
    cores: int

    @property
    def plan(self) -> FitPlan:
        return self.priced.plan

    @property
    def stages(self) -> tuple[Stage, ...]:
        return self.priced.plan.stages

    @property
    def fits(self) -> int:
        return self.plan.fits

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of the whole fit."""
        return float(sum(self.priced.cpu))

    @property
    def idle_seconds(self) -> list[float]:
        """Wall seconds of each stage on an idle machine."""
        return self.priced.stage_seconds(self.cores)

    @property
    def busy(self) -> float:
        """How much longer than on an idle machine fits take now (1 when idle)."""
        return self.priced.busy

    @property
    def stage_seconds(self) -> list[float]:
        """Expected wall seconds of each stage, as busy as the machine is now (at least
        what a probe's unfinished first unit has taken)."""
        return self.priced.wall_seconds(self.cores)

    @property
    def seconds(self) -> float:
        """Expected wall seconds of the whole fit."""
        return float(sum(self.stage_seconds))

    @property
    def lower_bound(self) -> bool:
        """Some stage's price is a minimum (its probe did not finish a unit in time)."""
        return any(self.priced.lower_bound)

    @property
    def probe_seconds(self) -> float:
        """Wall seconds the probes took."""
        return self.priced.probe_wall

    def describe(self) -> str:
        """``"about 35 min, 12,600 fits"`` (``"more than ..."`` for a lower bound)."""
        head = "more than " if self.lower_bound else "about "
        return f"{head}{format_seconds(self.seconds)}, {self.fits:,} fits"


def plan(estimator: Any, X: Any, y: Any) -> FitPlan:
    """The plan of ``estimator.fit(X, y)``, counted without fitting.

    Raises
    ------
    InputError
        Bad data or parameters, or a tuning split the fit would stop on.
    """
    est, X, codes = _prepared(estimator, X, y)
    return plan_fit(est, X, codes)


def estimate_fit(
    estimator: Any,
    X: Any,
    y: Any,
    budget: float = PROBE_BUDGET,
    should_cancel: Callable[[], bool] | None = None,
    extra_stages: tuple[Stage, ...] = (),
    patience: float | None = None,
    enough: float | None = None,
) -> FitCost:
    """The estimated cost of ``estimator.fit(X, y)``: its plan priced by probes.

    Parameters
    ----------
    estimator : BaseProbabilityClassifier
        Unfitted (it is cloned; nothing of it changes).
    X : array-like, shape (n, p)
    y : array-like, shape (n,)
    budget : float
        Wall seconds the probes may take.
    should_cancel : callable, optional
        The user's cancel (raises :class:`~wsvmgui.errors.Cancelled`).
    extra_stages : tuple of Stage
        Work after the fit to price with it (e.g. the app's exact path), appended to
        the plan's stages.
    patience, enough : float, optional
        On a busy machine the probes measure on up to ``patience`` wall seconds unless
        the fit already looks longer than ``enough`` seconds after ``budget``
        (:func:`~wsvmgui.estimators.cost_probe.price_plan`).

    Returns
    -------
    FitCost

    Raises
    ------
    InputError
        Bad data or parameters, or a tuning split the fit would stop on.
    MemoryBudgetError
        The fit's arrays would not fit in memory.
    """
    est, X, codes = _prepared(estimator, X, y)
    fit_plan = plan_fit(est, X, codes)
    check_memory(fit_plan)
    if extra_stages:
        fit_plan = replace(fit_plan, stages=(*fit_plan.stages, *extra_stages))
    priced = price_plan(est, X, codes, fit_plan, budget, should_cancel, patience, enough)
    return FitCost(priced, machine_cores())


def _prepared(estimator: Any, X: Any, y: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """A clone of ``estimator`` with checked parameters and ``classes_``, and the data
    as its ``fit`` sees them."""
    from sklearn.base import clone

    from ._validation import validate_fit_data

    est = clone(estimator)
    est._validate_params()
    X, classes, codes = validate_fit_data(est, X, y, n_classes=est._n_classes)
    est.classes_ = classes
    return est, X, codes


# -------------------------------------------------------------------------------- limit
@contextmanager
def cost_limit(minutes: float | None) -> Iterator[None]:
    """Fits inside the block may be estimated to take up to ``minutes`` (None: any time).

    Raises
    ------
    InputError
        ``minutes`` is negative or not a number.
    """
    token = _limit.set(_check_minutes(minutes))
    try:
        yield
    finally:
        _limit.reset(token)


def _check_minutes(minutes: Any) -> float | None:
    if minutes is None:
        return None
    try:
        value = float(minutes)
    except (TypeError, ValueError):
        raise InputError(f"the cost limit must be a number of minutes, got {minutes!r}") from None
    if not (value >= 0 and math.isfinite(value)):
        raise InputError(f"the cost limit must be a positive number of minutes, got {minutes!r}")
    return value


def current_limit() -> float | None:
    """The limit in minutes (None: no limit): :func:`cost_limit`'s, ``WSVMGUI_MAX_MINUTES``
    or :data:`DEFAULT_MAX_MINUTES`.  A limit of 0 means no limit."""
    value = _limit.get()
    if value is _UNSET:
        text = os.environ.get(ENV_VAR, "").strip().lower()
        if not text:
            value = DEFAULT_MAX_MINUTES
        elif text in ("none", "off", "inf"):
            value = None
        else:
            value = _check_minutes(text)
    return None if value is None or value == 0 else float(value)


# ------------------------------------------------------------------------------ guard
#: Pessimistic CPU seconds of a task's start and of each unit at 100 rows, per kind of
#: work: 20 to 50 times what the probes measure on a 2-core machine of 2026, enough to
#: cover a machine several times busier.  Only used to skip the probes of fits far below
#: the limit, never as an estimate.
_PESSIMISTIC = {
    "ladder": (0.2, 0.01),
    "noncrossing": (0.2, 0.2),
    "joint": (2.0, 5.0),
    "svm": (0.2, 0.0),  # a task: a preconditioned level's plain SVMs over its lambdas
    "map": (1.0, 0.0),  # a task: a problem's calibration map chosen (0.04-0.09 s measured)
    "estimator": (1.0, 0.5),  # a learner's fit (Probing), a constrained ladder's
}


#: Exponent of the rows in :func:`quick_bound` per kind of work (default
#: :data:`_PESSIMISTIC_EXPONENT`): a map's fits grow with its points no faster than
#: linearly (:data:`~wsvmgui.estimators.cost_kinds.MAP_ROW_EXPONENT`).
_PESSIMISTIC_EXPONENTS = {"map": 1.0}
_PESSIMISTIC_EXPONENT = 2.5


#: Wall seconds the guard's probes may take at most, when a shorter probe gave only a lower
#: bound under the limit for a fit :func:`quick_bound` finds longer than it.
PATIENCE_CAP = 64.0


def quick_bound(fit_plan: FitPlan) -> float:
    """A pessimistic bound on the fit's seconds, without probing (rows scaled by a power
    of 2.5, above the probes' :data:`~wsvmgui.estimators.cost_probe.ROW_EXPONENT`; a
    map's by their first power)."""
    total = 0.0
    for stage in fit_plan.stages:
        per = _PESSIMISTIC.get(stage.kind, _PESSIMISTIC["estimator"])
        power = _PESSIMISTIC_EXPONENTS.get(stage.kind, _PESSIMISTIC_EXPONENT)
        scale = max(stage.rows / 100.0, 1.0) ** power
        total += (stage.tasks * per[0] + stage.fits * per[1]) * scale
    return total


def check_fit(estimator: Any, X: np.ndarray, codes: np.ndarray) -> FitPlan:
    """The cost guard at the start of ``fit`` (``classes_`` set, data validated).

    Plans the fit, refuses what cannot work or would not fit in memory, and refuses a fit
    estimated to take longer than :func:`current_limit` (:class:`CostLimitError`).  Fits
    inside a probe are only planned and checked for memory.

    Returns
    -------
    FitPlan
    """
    fit_plan = plan_fit(estimator, X, codes)
    check_memory(fit_plan)
    limit = current_limit()
    if limit is None or in_probe():
        return fit_plan
    if quick_bound(fit_plan) <= 60.0 * limit:
        return fit_plan
    patience = PROBE_PATIENCE
    while True:
        priced = price_plan(
            estimator, X, codes, fit_plan, PROBE_BUDGET, None, patience, 60.0 * limit
        )
        cost = FitCost(priced, machine_cores())
        # a lower bound under the limit proves nothing about a fit the quick bound finds
        # long (e.g. a start so slow that no unit finished): probe longer, within a cap
        if not (cost.lower_bound and cost.seconds <= 60.0 * limit) or patience >= PATIENCE_CAP:
            break
        patience *= 4.0
    if cost.seconds > 60.0 * limit:
        raise CostLimitError(
            f"{type(estimator).__name__}: this fit is estimated to take "
            f"{cost.describe()}, over the limit of {format_seconds(60.0 * limit)}; to run "
            f"it anyway, raise the limit (wsvmgui.cost_limit(minutes=...), "
            f"{ENV_VAR}, or --max-minutes on the command line)",
            cost,
            limit,
        )
    return fit_plan
