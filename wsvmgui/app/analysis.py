"""The run behind the desktop app's Run button, as plain functions (numpy, no Qt).

The worker thread calls :func:`run_checked`: it estimates the run's cost before fitting
anything (:func:`wsvmgui.app.cost.estimate_cost`), and returns :class:`NeedsConfirmation`
when the run would exceed its time limit.  Otherwise :func:`run_analysis` fits the scheme
(and the non-crossing comparison), traces the exact path behind a binary ladder fitted on the grid,
and prepares everything the views draw (:class:`~wsvmgui.app.view_data.RunResult`); while
it fits it publishes where it is (:class:`~wsvmgui.app.view_data.RunStatus`) and the final
fits' boundaries (:class:`~wsvmgui.app.view_data.LiveBoundary`).

The modules it builds on, lowest first: :mod:`~wsvmgui.app.phases` (a run's phases),
:mod:`~wsvmgui.app.plane` (plane geometry and colours), :mod:`~wsvmgui.app.view_data`
(what the views draw), :mod:`~wsvmgui.app.run_inputs` (the request and what it fits on),
:mod:`~wsvmgui.app.capabilities` (what an estimator shows), :mod:`~wsvmgui.app.boundaries`
(a plane's boundaries), :mod:`~wsvmgui.app.measures`, :mod:`~wsvmgui.app.cost` (what
the run will cost) and :mod:`~wsvmgui.app.baselines`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import Cancelled
from ..estimators.cost import cost_limit
from ..estimators.report import with_intervals
from .boundaries import compute_plane
from .calibration import CalibrationEntry, calibration_entry
from .capabilities import (
    crossing_checks,
    fit_notes,
    ladders_of,
    live_boundary,
    simplex_of,
)
from .cost import CONFIRM_SECONDS, CostEstimate, Phase, PhasedProgress, estimate_cost, run_plan
from .datasets import DataSplit
from .measures import aligned_report, part_metrics
from .path_view import PathInfo, exact_path, stored_paths
from .plane import plane_grid
from .run_inputs import RunRequest, comparison_scheme, fit_inputs, fit_rows, scheme_label
from .schemes import fit_scheme
from .settings import RunSettings
from .tuning_view import tuning_surfaces
from .view_data import LadderInfo, RunResult, RunStatus

#: Smallest interval between two live boundaries (seconds): with many fast fits, the
#: boundaries in between are skipped live and drawn when the run finishes.
LIVE_INTERVAL = 0.05
#: Smallest interval between two :class:`RunStatus` of a run (seconds).
STATUS_INTERVAL = 0.1

Publish = Callable[[Any], None]
Progress = Callable[[int, int, Any], None]
COMPARISON = "Non-crossing ladder"


def _never() -> bool:
    return False


class _Reporter:
    """A run's progress over its phases: ``progress`` in thousandths of the whole run, and
    (when ``publish`` is given) throttled :class:`RunStatus` and live boundaries."""

    def __init__(
        self,
        plan: list[Phase],
        progress: Progress | None,
        publish: Publish | None,
        grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    ) -> None:
        self.phased = PhasedProgress(plan)
        self.progress, self.publish, self.grid = progress, publish, grid
        self._last_status = -np.inf
        self._last_live = -np.inf

    def begin(self, group: str) -> None:
        """The run moves on to the first planned phase of ``group``."""
        self.phased.begin(group)

    def step(self, done: int, total: int, partial: Any = None) -> None:
        """Progress of the current phase (``done`` of ``total``)."""
        fraction = self.phased.update(done, total)
        if self.progress is not None:
            self.progress(int(round(1000 * fraction)), 1000, None)
        now = time.perf_counter()
        if self.publish is not None and (
            now - self._last_status >= STATUS_INTERVAL or done >= total
        ):
            self._last_status = now
            self.publish(RunStatus(self.phased.name, int(done), int(total), fraction))

    def fit_step(self, done: int, total: int, partial: Any = None) -> None:
        """Progress of a fit: also its final fits' boundaries, live."""
        self.step(done, total)
        now = time.perf_counter()
        if self.publish is None or now - self._last_live < LIVE_INTERVAL:
            return
        live = live_boundary(partial, self.grid, done, total)
        if live is not None:
            self._last_live = now
            self.publish(live)


def _live_grid(
    request: RunRequest, publish: Publish | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The plane grid live boundaries are drawn on (None when nothing is published)."""
    if publish is None:
        return None
    return plane_grid(request.split, request.ix, request.iy, request.grid_size, request.reference)


def _plan(request: RunRequest) -> list[Phase]:
    if request.cost is not None:
        return list(request.cost.phases)
    return run_plan(request)


@dataclass(frozen=True)
class _Fitted:
    """A run's fits, before its views (what :func:`compute_plane` reads, and more)."""

    settings: RunSettings
    split: DataSplit
    estimator: Any
    comparison: Any
    fit_rows: np.ndarray
    X_fit: np.ndarray
    paths: list[PathInfo | None]
    notes: list[str]
    ladders: list[LadderInfo] = field(default_factory=list)


def _fit(
    request: RunRequest, settings: RunSettings, reporter: _Reporter, cancel: Callable[[], bool]
) -> _Fitted:
    """Fit the scheme, the comparison (when asked for) and the exact path of a binary
    ladder fitted on the grid."""
    split = request.split
    X_fit, y_fit, X_tune, y_tune = fit_inputs(settings, split)
    estimator = fit_scheme(
        settings, X_fit, y_fit, X_tune, y_tune, progress=reporter.fit_step, should_cancel=cancel
    )
    notes: list[str] = fit_notes(estimator.fit_info_)
    comparison = None
    if request.compare:
        name, why = comparison_scheme(settings, split.dataset.n_classes)
        if name is None:
            notes.append(f"Side-by-side comparison not shown: {why}.")
        else:
            reporter.begin("comparison")
            comparison = fit_scheme(
                replace(settings, scheme=name, options={}),
                X_fit,
                y_fit,
                X_tune,
                y_tune,
                progress=reporter.step,
                should_cancel=cancel,
            )
    paths = stored_paths(estimator)
    if settings.scheme == "binary" and not any(paths):
        # a ladder fitted on the grid: trace its exact path now (the plain weighted SVM's;
        # the non-crossing ladder's constrained fits have no such path)
        reporter.begin("path")
        path_info, why = exact_path(estimator, X_fit, y_fit, reporter.step, cancel)
        paths = [path_info]
        if why:
            notes.append(f"Exact path in \u03c0 not traced: {why}.")
    rows = fit_rows(settings, split)
    return _Fitted(settings, split, estimator, comparison, rows, X_fit, paths, notes)


def _result(
    request: RunRequest, fits: _Fitted, reporter: _Reporter, cancel: Callable[[], bool]
) -> RunResult:
    """Everything the views draw of a run's fits (the views phase, in four steps)."""
    settings, split = fits.settings, fits.split
    classes, X_all = split.dataset.classes, split.X_all
    title = scheme_label(settings.scheme)
    report = fits.estimator.report(X_all)
    if settings.intervals:
        report = with_intervals(report, fits.estimator, X_all)
    report_all = aligned_report(report, classes)
    ladders = ladders_of(fits.estimator, X_all, classes)
    target = split.test if split.test.size else split.train

    def calibration(label: str, proba: np.ndarray) -> CalibrationEntry:
        return calibration_entry(
            label, proba[target.index], target.y, classes, p_true=target.p_true
        )

    entries = [calibration(title, report_all.proba)]
    reporter.step(1, 4)
    comparison_report, comparison_metrics = None, {}
    if fits.comparison is not None:
        comparison_report = aligned_report(fits.comparison.report(X_all), classes)
        comparison_metrics = part_metrics(split, comparison_report.proba)
        entries.append(calibration(COMPARISON, comparison_report.proba))
    checks = {}
    for name, est in ((title, fits.estimator), (COMPARISON, fits.comparison)):
        found = crossing_checks(est, fits.X_fit) if est is not None else {}
        if found:
            checks[name] = found
    reporter.step(2, 4)
    plane = compute_plane(
        replace(fits, ladders=ladders),
        request.ix,
        request.iy,
        request.grid_size,
        cancel,
        request.reference,
    )
    reporter.step(4, 4)
    return RunResult(
        settings=settings,
        split=split,
        estimator=fits.estimator,
        report=report_all,
        metrics=part_metrics(split, report_all.proba),
        ladders=ladders,
        simplex=simplex_of(fits.estimator, X_all),
        tunings=tuning_surfaces(fits.estimator),
        plane=plane,
        comparison=fits.comparison,
        notes=fits.notes,
        comparison_metrics=comparison_metrics,
        comparison_report=comparison_report,
        calibration=entries,
        calibration_part=target.name,
        crossing_checks=checks,
        fit_rows=fits.fit_rows,
        paths=fits.paths,
    )


def run_analysis(
    request: RunRequest,
    progress: Progress | None = None,
    should_cancel: Callable[[], bool] | None = None,
    publish: Publish | None = None,
) -> RunResult:
    """Fit the scheme (and the comparison) and prepare every view's data.

    Parameters
    ----------
    request : RunRequest
    progress : callable, optional
        ``progress(done, total, None)`` in thousandths of the whole run: every phase
        (fit stages, comparison fit, views) weighted by its estimated time.
    should_cancel : callable, optional
    publish : callable, optional
        Receives live objects while fitting: :class:`~wsvmgui.app.view_data.LiveBoundary`
        (binary fits of the final stage) and :class:`~wsvmgui.app.view_data.RunStatus`
        (phase and its fits).

    Returns
    -------
    RunResult
        ``seconds``: the run's wall time, the cost estimate's included.
    """
    start = time.perf_counter()
    cancel = should_cancel or _never
    settings = request.settings.validate()
    if publish is not None and request.cost is not None:
        publish(request.cost)  # the time left is reckoned from it
    reporter = _Reporter(_plan(request), progress, publish, _live_grid(request, publish))
    with cost_limit(None):  # the app asked before a long run (run_checked)
        fits = _fit(request, settings, reporter, cancel)
    if cancel():
        raise Cancelled("cancelled by the user")
    reporter.begin("views")
    reporter.step(0, 4)
    result = _result(request, fits, reporter, cancel)
    probe = request.cost.probe_seconds if request.cost is not None else 0.0
    result.seconds = time.perf_counter() - start + probe
    return result


@dataclass(frozen=True)
class NeedsConfirmation:
    """A run that would take longer than the limit: the estimate, for the user to decide."""

    estimate: CostEstimate


def run_checked(
    request: RunRequest,
    progress: Progress | None = None,
    should_cancel: Callable[[], bool] | None = None,
    publish: Publish | None = None,
    limit: float | None = CONFIRM_SECONDS,
) -> RunResult | NeedsConfirmation:
    """Run ``request`` unless its estimated time exceeds ``limit`` seconds.

    The run's cost is estimated first (:func:`wsvmgui.app.cost.estimate_cost`: its fits
    counted and priced by probes, under a second); a run estimated to exceed ``limit``
    returns the estimate for the user to decide, before anything is fitted.  Otherwise
    it runs, its progress weighted by the estimate's phases.  ``limit=None`` runs
    whatever it costs; a request that carries its estimate (the user agreed to it) is
    not estimated again.

    Returns
    -------
    RunResult (``seconds`` counts the estimate), or NeedsConfirmation with the estimate.
    """
    cancel = should_cancel or _never
    if request.cost is None:

        def on_phase(group: str) -> None:
            if publish is not None:
                name = "timing the comparison fit" if group == "comparison" else "timing the fit"
                publish(RunStatus(name, 0, 0, 0.0))

        estimate = estimate_cost(request, should_cancel=cancel, on_phase=on_phase)
        if limit is not None and estimate.needs_confirmation(limit):
            return NeedsConfirmation(estimate)
        request = replace(request, cost=estimate)
    return run_analysis(request, progress, cancel, publish)
