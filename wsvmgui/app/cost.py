"""What a run will cost, before it starts, and progress over all of its phases (no Qt).

:func:`estimate_cost` times the real fit on the real data: it starts the scheme's fit with a
progress callback and stops it after a short budget (``PROBE_SECONDS``), then extrapolates
from the fits finished so far to the number of fits the estimator announced (its
tracker's total, which the estimators compute from the settings: weight grid x penalty
and width grids x folds, per sub-problem, per simplex grid weight).  A fit that finishes
within the budget is timed exactly.  The non-crossing ladder, whose constrained fits cost
more than the tuning fits before them, gets its own probe of its final stage; the
comparison fit of the app's side-by-side view is a phase of its own.

The phases and the progress over them are plain data (:mod:`wsvmgui.app.phases`; their
names are importable from here too).  This module fits, so it sits above the run's inputs
(:mod:`wsvmgui.app.run_inputs`) and below the run (:mod:`wsvmgui.app.analysis`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import Cancelled
from .phases import CONFIRM_SECONDS, CostEstimate, Phase, PhasedProgress, format_seconds
from .run_inputs import RunRequest, comparison_scheme, fit_inputs
from .schemes import fit_scheme
from .settings import RunSettings

__all__ = [
    "CONFIRM_SECONDS",
    "CostEstimate",
    "Phase",
    "PhasedProgress",
    "estimate_cost",
    "estimate_fit",
    "format_seconds",
    "probe_fit",
    "view_seconds",
]

#: Wall-clock seconds a probe may fit before it is stopped and extrapolated.
PROBE_SECONDS = 0.6
#: A probe whose first fit has not finished after this long gives up (a lower bound).
PROBE_CAP = 8.0
#: Seconds for computing the views after the fits (plane grid, ladders, metrics), and
#: per boundary drawn (contours and crossings on the plane grid; measured on this machine).
VIEW_SECONDS = 0.3
VIEW_SECONDS_PER_BOUNDARY = 0.003
#: Seconds per fitted row of the exact path behind a binary ladder (measured here:
#: 0.3 s at n = 140, 2.3 s at n = 400 under load).
PATH_SECONDS_PER_ROW = 0.006

#: The clock every probe reads, in seconds.  Tests replace it (``monkeypatch.setattr``) to
#: make a run "long" by construction rather than by the machine's speed.
clock: Callable[[], float] = time.perf_counter


def view_seconds(settings: RunSettings, n_classes: int, n: int) -> float:
    """Estimated seconds of the views phase: a base plus each boundary drawn."""
    from ..ladder.tuning import default_n_weights

    K = max(n_classes, 2)
    if settings.scheme.startswith("joint") or settings.scheme == "probing":
        boundaries = K
    else:
        M = settings.n_weights or default_n_weights(n)
        subs = {"pairwise": K * (K - 1) // 2, "ova": K}.get(settings.scheme, K - 1)
        boundaries = max(subs, 1) * (M - 1)
    return VIEW_SECONDS + VIEW_SECONDS_PER_BOUNDARY * boundaries


def _project(stages: list[list[tuple[float, int, int]]], elapsed: float) -> tuple[int, float]:
    """Fits and seconds of a fit from its progress so far: finished stages as measured,
    the current one extrapolated from its own fits (stages the estimator has not announced
    yet are not counted)."""
    fits = sum(stage[-1][2] for stage in stages)
    begun = 0.0 if len(stages) == 1 else stages[-2][-1][0]
    current = stages[-1]
    t_first, d_first, total = current[0]
    t_last, d_last, _ = current[-1]
    if d_last > d_first and t_last > t_first:
        seconds = t_first + (total - d_first) * (t_last - t_first) / (d_last - d_first)
    else:
        seconds = begun + (t_last - begun) * total / max(d_last, 1)
    return fits, max(seconds, elapsed)


def probe_fit(
    settings: RunSettings,
    X: np.ndarray,
    y: np.ndarray,
    X_tune: np.ndarray | None = None,
    y_tune: np.ndarray | None = None,
    name: str = "fit",
    budget: float = PROBE_SECONDS,
    should_cancel: Callable[[], bool] | None = None,
    forward: Callable[[int, int, Any], None] | None = None,
    stop_over: float | None = 0.0,
) -> tuple[Phase, Any]:
    """Start the real fit and time it; stop it once it is known to exceed ``stop_over``.

    After ``budget`` seconds (and two fits of the current stage) the fit's total time is
    projected from the fits done; the fit stops when the projection exceeds ``stop_over``
    seconds (0: always stop after the budget, a pure estimate; None: never stop, the
    probe is the fit).  A fit that finishes is timed exactly and returned.

    Parameters
    ----------
    settings : RunSettings
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    X_tune, y_tune : ndarrays, optional
        As :func:`wsvmgui.app.schemes.fit_scheme`.
    name : str
    budget : float
    should_cancel : callable, optional
        The user's cancel; raises :class:`Cancelled`.
    forward : callable, optional
        Receives every progress event of the fit (progress and live views).
    stop_over : float or None

    Returns
    -------
    phase : Phase
        Exact when the fit finished.
    estimator : fitted estimator or None
        The fit itself when it finished.
    """
    stages: list[list[tuple[float, int, int]]] = []  # per stage: (time, done, total)
    start = clock()
    user = should_cancel or (lambda: False)

    def progress(done: int, total: int, partial: Any = None) -> None:
        now = clock() - start
        last = stages[-1][-1] if stages else None
        if last is None or total != last[2] or done < last[1]:
            stages.append([])  # the estimator moved on to its next stage
        stages[-1].append((now, int(done), int(total)))
        if forward is not None:
            forward(done, total, partial)

    def stop() -> bool:
        if user():
            raise Cancelled("cancelled by the user")
        if stop_over is None:
            return False
        elapsed = clock() - start
        if not stages:
            return elapsed > max(PROBE_CAP, budget)
        if elapsed <= budget or len(stages[-1]) < 2:
            return False
        return _project(stages, elapsed)[1] > stop_over

    try:
        fitted = fit_scheme(settings, X, y, X_tune, y_tune, progress=progress, should_cancel=stop)
    except Cancelled:
        if user():
            raise
    else:
        total = sum(stage[-1][2] for stage in stages)
        return Phase(name, total, clock() - start, exact=True), fitted
    elapsed = clock() - start
    if not stages:
        return Phase(name, 0, elapsed, lower_bound=True), None
    fits, seconds = _project(stages, elapsed)
    return Phase(name, fits, seconds, lower_bound=len(stages[-1]) < 2), None


def _fixed_grid(settings: RunSettings, X: np.ndarray, y: np.ndarray) -> RunSettings:
    """Settings with one penalty and one width (the grids' middle): the final stage only."""
    from ..ladder.tuning import default_lambda_grid
    from ..solvers.kernels import default_sigma_grid

    lams = settings.lambdas or list(default_lambda_grid(y.size))
    lam = float(np.sort(lams)[len(lams) // 2])
    sig = None
    if settings.kernel == "rbf":
        sigmas = settings.sigmas if settings.sigmas is not None else list(default_sigma_grid(X, y))
        sig = [float(np.sort(sigmas)[len(sigmas) // 2])]
    return replace(settings, lambdas=[lam], sigmas=sig)


def _needs_tuning(settings: RunSettings) -> bool:
    n_lam = len(settings.lambdas) if settings.lambdas is not None else 7
    n_sig = 1 if settings.kernel != "rbf" else len(settings.sigmas) if settings.sigmas else 6
    return n_lam * n_sig > 1


def estimate_fit(
    settings: RunSettings,
    X: np.ndarray,
    y: np.ndarray,
    X_tune: np.ndarray | None = None,
    y_tune: np.ndarray | None = None,
    label: str = "",
    budget: float = PROBE_SECONDS,
    should_cancel: Callable[[], bool] | None = None,
    forward: Callable[[int, int, Any], None] | None = None,
    stop_over: float | None = 0.0,
) -> tuple[list[Phase], Any]:
    """The phases of one scheme's fit (its first stage, the non-crossing ladder's), and the
    fitted estimator when the probe finished it (see :func:`probe_fit` for ``stop_over``).

    ``label`` names the fit ("comparison") and is the phases' group ("main" if empty).
    """
    prefix = f"{label} " if label else ""
    group = label or "main"
    first, fitted = probe_fit(
        settings, X, y, X_tune, y_tune, f"{prefix}fit", budget, should_cancel, forward, stop_over
    )
    first = replace(first, group=group)
    phases = [first]
    if settings.scheme == "noncrossing" and _needs_tuning(settings) and not first.exact:
        # the constrained fits after the tuning: probed on their own
        final, _ = probe_fit(
            _fixed_grid(settings, X, y),
            X,
            y,
            X_tune,
            y_tune,
            f"{prefix}non-crossing ladder",
            budget,
            should_cancel,
        )
        phases = [replace(first, name=f"{prefix}tuning"), replace(final, group=group)]
    return phases, fitted


def estimate_cost(
    request: RunRequest,
    budget: float = PROBE_SECONDS,
    should_cancel: Callable[[], bool] | None = None,
    forward: Callable[[int, int, Any], None] | None = None,
    limit: float | None = 0.0,
    on_phase: Callable[[str], None] | None = None,
) -> CostEstimate:
    """Estimate the cost of a run of the desktop app, fitting what fits within ``limit``.

    The comparison fit (when asked for) is probed first for ``budget`` seconds; then the
    main fit runs until its projected time plus the comparison's exceeds ``limit`` (0: a
    pure estimate, every fit stopped after the budget; None: no limit).  A fit that
    finishes is kept in ``fitted``, so a run under the limit is not fitted twice.

    Parameters
    ----------
    request : RunRequest
        What Run would do.
    budget : float
        Seconds each probe runs before its projection counts.
    should_cancel : callable, optional
    forward : callable, optional
        Receives the main fit's progress events.
    limit : float or None
    on_phase : callable, optional
        Told "comparison" and "main" as each probe starts.

    Returns
    -------
    CostEstimate
        Phases "fit" (or "tuning" and "non-crossing ladder"), the comparison's phases when
        asked for, and "views".
    """
    settings = request.settings.validate()
    X, y, X_tune, y_tune = fit_inputs(settings, request.split)
    fitted: dict[str, Any] = {}
    comp_phases: list[Phase] = []
    if request.compare:
        name, _why = comparison_scheme(settings, request.split.dataset.n_classes)
        if name is not None:
            if on_phase is not None:
                on_phase("comparison")
            comp_phases, comp = estimate_fit(
                replace(settings, scheme=name, options={}),
                X,
                y,
                X_tune,
                y_tune,
                "comparison",
                budget,
                should_cancel,
                stop_over=0.0,
            )
            if comp is not None:
                fitted["comparison"] = comp
    rest = sum(p.seconds for p in comp_phases if not p.exact)
    main_limit = None if limit is None else max(limit - rest, 0.0) if limit > 0 else 0.0
    if on_phase is not None:
        on_phase("main")
    phases, main = estimate_fit(
        settings, X, y, X_tune, y_tune, "", budget, should_cancel, forward, main_limit
    )
    if main is not None:
        fitted["main"] = main
    views = view_seconds(settings, request.split.dataset.n_classes, y.size)
    if comp_phases:
        views += view_seconds(settings, 2, y.size) - VIEW_SECONDS
    path = []
    if (
        request.split.dataset.n_classes == 2
        and settings.scheme == "binary"
        and settings.engine != "path"  # a path-engine fit keeps its own path
    ):
        from .path_view import MAX_PATH_ROWS

        if y.size <= MAX_PATH_ROWS:
            path = [Phase("exact path", 0, PATH_SECONDS_PER_ROW * y.size, group="path")]
    phases = [*phases, *comp_phases, *path, Phase("views", 0, views, group="views")]
    return CostEstimate(tuple(phases), fitted)
