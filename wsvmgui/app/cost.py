"""What a run of the desktop app will cost, before it starts (no Qt).

A run fits its scheme (and, when asked for, the non-crossing comparison), may trace the
exact path behind a binary ladder fitted on the grid, and prepares its views.  Its cost
is the library's estimate of each fit (:func:`wsvmgui.estimators.cost.estimate_fit`: the
fit's plan, counted from the settings and the data's shape, priced by a few real fits of
a representative size timed on the data, under a second in all), one phase per stage of
each fit, then the path and the views (their work counted, :func:`view_work`, and priced
by :func:`view_seconds`; the training hull's slice timed on the data).
:func:`plan_request` counts the fits without timing anything (fast enough for the GUI
thread): a run that cannot work (a class too small for the tuning split) is refused
before it starts.

The phases and the progress over them are plain data (:mod:`wsvmgui.app.phases`; their
names are importable from here too).  This module sits above the run's inputs
(:mod:`wsvmgui.app.run_inputs`) and below the run (:mod:`wsvmgui.app.analysis`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from ..errors import InputError
from ..estimators import cost_probe
from ..estimators.cost import estimate_fit, plan
from ..estimators.cost_plan import FitPlan, Stage
from .phases import CONFIRM_SECONDS, CostEstimate, Phase, PhasedProgress, format_seconds
from .run_inputs import RunRequest, comparison_scheme, fit_inputs
from .schemes import prepare_scheme
from .settings import RunSettings

__all__ = [
    "CONFIRM_SECONDS",
    "CostEstimate",
    "Phase",
    "PhasedProgress",
    "estimate_cost",
    "format_seconds",
    "plan_request",
    "ViewWork",
    "view_seconds",
    "view_work",
]

#: Wall seconds all probes of a run's estimate take together, and may take on a busy
#: machine to measure a run that does not already look longer than ENOUGH_SECONDS.
PROBE_SECONDS = cost_probe.PROBE_BUDGET
PROBE_PATIENCE = cost_probe.PROBE_PATIENCE
ENOUGH_SECONDS = 30 * 60.0

#: The clock of the estimate's own time (counted in the run's time; tests replace it).
clock: Callable[[], float] = time.perf_counter
#: CPU seconds of the views after the fits (:func:`view_seconds`): a fixed part (the report,
#: the calibration entries, the surface colours), each boundary drawn (its contours and
#: crossings on the plane grid), and each evaluation of a fitted decision function (a
#: point, row or grid point, against a training row of the function's ladder): least
#: squares (relative) over the app's runs of 14 small and medium cases (24 with the other
#: schemes), one thread, a 2-core x86_64 machine of 2026 (``benchmarks/view_cost.py
#: --fit``, five runs: 0.007-0.016 s, 1.2-2.9e-4 s, 2.3-2.6e-8 s).  Up to main 30bebae:
#: 0.3 s and 0.003 s per boundary, 4-12x the views of small data sets.  The hull's slice
#: is timed on the data (:func:`view_work`).
VIEW_SECONDS = 0.015
VIEW_SECONDS_PER_BOUNDARY = 1.5e-4
VIEW_SECONDS_PER_EVALUATION = 2.3e-8


class ViewWork(NamedTuple):
    """What the views of a run compute (:func:`view_work`).

    Attributes
    ----------
    boundaries : int
        Boundaries drawn on the plane (a ladder's weights between its rungs, or a joint
        fit's class borders), the comparison's included.
    evaluations : float
        Fitted decision functions evaluated at the data's rows and the plane grid's
        points: points x the training rows of each function's ladder, summed.
    hull : float
        CPU seconds of the training hull's slice (:func:`~wsvmgui.app.slices.slice_hull_seconds`,
        timed on the data; 0 with two features).
    """

    boundaries: int
    evaluations: float
    hull: float


def view_work(request: RunRequest, hull: bool = True) -> ViewWork:
    """What the views of ``request`` compute, counted from its settings and data shape;
    the hull's slice timed by a probe of two of its linear programs (``hull=False``: not
    timed, 0)."""
    from ..ladder.tuning import default_n_weights
    from .plane import default_reference
    from .run_inputs import fit_rows
    from .slices import slice_hull_seconds

    settings = request.settings.validate()
    split = request.split
    K = max(split.dataset.n_classes, 2)
    rows = fit_rows(settings, split)
    n = int(rows.size)
    if settings.scheme.startswith("joint") or settings.scheme == "probing":
        boundaries, functions = K, 1
    else:
        M = settings.n_weights or default_n_weights(n)
        subs = {"pairwise": K * (K - 1) // 2, "ova": K}.get(settings.scheme, K - 1)
        boundaries = max(subs, 1) * (M - 1)
        # a pair's ladder is fitted on its two classes' rows: each row is in K - 1 pairs
        functions = {"pairwise": K - 1, "ova": K}.get(settings.scheme, K - 1)
    if len(_fits(request)) > 1:  # the non-crossing comparison: one binary ladder
        boundaries += (settings.n_weights or default_n_weights(n)) - 1
        functions += 1
    points = split.X_all.shape[0] + request.grid_size**2
    seconds = 0.0
    X = split.dataset.X
    if hull and X.shape[1] > 2 and request.ix != request.iy:
        ref = default_reference(split) if request.reference is None else request.reference
        try:
            seconds = slice_hull_seconds(X[rows], ref, request.ix, request.iy)
        except InputError:  # a plane the views will refuse: the run says what is wrong
            seconds = 0.0
    return ViewWork(int(boundaries), float(points) * n * max(functions, 1), float(seconds))


def view_seconds(work: ViewWork) -> float:
    """CPU seconds of the views phase on an idle machine: the fixed part, each boundary,
    each evaluation, and the hull's slice as timed."""
    return (
        VIEW_SECONDS
        + VIEW_SECONDS_PER_BOUNDARY * work.boundaries
        + VIEW_SECONDS_PER_EVALUATION * work.evaluations
        + work.hull
    )


def _fits(request: RunRequest) -> list[tuple[str, RunSettings]]:
    """The fits of a run: ``("main", settings)`` and the comparison's when asked for."""
    settings = request.settings.validate()
    fits = [("main", settings)]
    if request.compare:
        name, _why = comparison_scheme(settings, request.split.dataset.n_classes)
        if name is not None:
            fits.append(("comparison", replace(settings, scheme=name, options={})))
    return fits


def _prefix(group: str) -> str:
    """What a phase's name starts with: "comparison " for the comparison fit's stages."""
    return "comparison " if group == "comparison" else ""


def _traces_path(request: RunRequest) -> bool:
    """A binary ladder fitted on the grid: the run traces its exact path afterwards."""
    from .path_view import MAX_PATH_ROWS

    s = request.settings
    rows = request.split.train.size + (0 if s.tuning == "tune-set" else request.split.tune.size)
    return (
        request.split.dataset.n_classes == 2
        and s.scheme == "binary"
        and s.engine != "path"  # a path-engine fit keeps its own path
        and rows <= MAX_PATH_ROWS
    )


def plan_request(request: RunRequest) -> list[tuple[str, FitPlan]]:
    """The plans of a run's fits, counted without fitting (milliseconds).

    Raises
    ------
    InputError
        A fit that could not work: bad settings, or a tuning split that leaves a class
        too few rows (said before the run starts, not after).
    """
    X, y, X_tune, y_tune = fit_inputs(request.settings.validate(), request.split)
    out = []
    for group, settings in _fits(request):
        estimator, X_fit, y_fit = prepare_scheme(settings, X, y, X_tune, y_tune)
        out.append((group, plan(estimator, X_fit, y_fit)))
    return out


def estimate_cost(
    request: RunRequest,
    budget: float = PROBE_SECONDS,
    should_cancel: Callable[[], bool] | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> CostEstimate:
    """Estimate the cost of a run of the desktop app, fitting nothing but the probes.

    Parameters
    ----------
    request : RunRequest
        What Run would do.
    budget : float
        Wall seconds the probes of all fits may take together.
    should_cancel : callable, optional
        The user's cancel (raises :class:`~wsvmgui.errors.Cancelled`).
    on_phase : callable, optional
        Told "main" and "comparison" as each fit's probes start.

    Returns
    -------
    CostEstimate
        One phase per stage of the main fit ("tuning", "final ladder", ...), of the
        comparison fit (named "comparison ..."), "exact path" when the run traces one,
        and "views"; ``probe_seconds`` the wall time the estimate took.
    """
    began = clock()  # the run's own time (the probes' clock may be a test's)
    settings = request.settings.validate()
    X, y, X_tune, y_tune = fit_inputs(settings, request.split)
    fits = _fits(request)
    path = _traces_path(request)
    # The estimators first: the first request of a session imports their modules and
    # loads compiled kernels (seconds on a busy machine), which must not eat the probes'
    # budget (the first estimate was then a lower bound, a third of the next ones).
    prepared = [prepare_scheme(fit, X, y, X_tune, y_tune) for _, fit in fits]
    start = cost_probe.wall_clock()
    phases: list[Phase] = []
    cpu, busy = 0.0, 1.0
    for i, ((group, _), (estimator, X_fit, y_fit)) in enumerate(zip(fits, prepared, strict=True)):
        if on_phase is not None:
            on_phase(group)
        extra: tuple[Stage, ...] = ()
        if path and group == "main":
            # one task of one unit, as the path probe measures a trace (its events(1)): a
            # trace's price is then the probe's whole task however it splits the time
            # between start and unit (priced as a start alone it was 0 s when the split
            # put it all in the unit, as it does under load)
            extra = (Stage("exact path", 1, 1, y_fit.size, "ladder", "path"),)
        left = budget - (cost_probe.wall_clock() - start)
        share = max(left, 0.0) / (len(fits) - i)
        patience = max(PROBE_PATIENCE - (cost_probe.wall_clock() - start), 0.0) / (len(fits) - i)
        cost = estimate_fit(
            estimator, X_fit, y_fit, share, should_cancel, extra, patience, ENOUGH_SECONDS
        )
        cpu += cost.cpu_seconds
        busy = max(busy, cost.busy)
        prefix = _prefix(group)
        for stage, seconds, lower in zip(
            cost.stages, cost.stage_seconds, cost.priced.lower_bound, strict=True
        ):
            if stage.name == "exact path":
                phases.append(Phase("exact path", 0, seconds, lower, group="path"))
            else:
                phases.append(Phase(prefix + stage.name, stage.fits, seconds, lower, group))
    views = view_seconds(view_work(request))
    main = [p for p in phases if p.group == "main"]
    rest = [p for p in phases if p.group != "main"]
    ordered = [*main, *[p for p in rest if p.group == "comparison"]]
    ordered += [p for p in rest if p.group == "path"]
    ordered.append(Phase("views", 0, views * busy, group="views"))
    return CostEstimate(tuple(ordered), clock() - began, cpu, busy)


def run_plan(request: RunRequest) -> list[Phase]:
    """The phases of a run without an estimate (fits counted, each unit one second)."""
    try:
        plans = plan_request(request)
    except InputError:  # the run itself will say what is wrong
        plans = []
    phases = [
        Phase(_prefix(group) + s.name, s.fits, 1.0 + s.fits, group=group)
        for group, fit_plan in plans
        for s in fit_plan.stages
    ] or [Phase("fit", 0, 1.0)]
    if _traces_path(request):
        phases.append(Phase("exact path", 0, 0.5, group="path"))
    return [*phases, Phase("views", 0, 0.2, group="views")]
