"""Runs of the desktop app: the worker, the run's state machine, and the jobs that follow.

:class:`RunController` owns the app's :class:`~wsvmgui.gui.worker.JobRunner` and the one
source of truth, :attr:`RunController.result` (the last finished run).  A run moves
through three states::

    idle --start--> running --result--------------------------> idle  (finished)
                      |  \\--error---------------------------> idle  (failed)
                      |   \\--cancel / start again-----------> idle  (cancelled)
                      \\--estimate over the limit--> confirming --confirm--> running
                                                       \\--decline--> idle

and says so through signals; it shows nothing and asks nothing itself (the main window
draws the views, writes the status bar and puts the cost question to the user).  After a
run it also computes what the views ask of that run: another plane, the boundary at a
chosen pi (from the exact path), and the baselines; their answers are dropped when a newer
run has replaced the result they belong to.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from ..app.analysis import NeedsConfirmation, run_checked
from ..app.baselines import run_baselines
from ..app.boundaries import compute_plane
from ..app.phases import format_seconds
from ..app.plane import DEFAULT_GRID, plane_grid
from ..app.view_data import LiveBoundary, RunStatus
from .worker import JobRunner

if TYPE_CHECKING:
    import numpy as np

    from ..app.path_view import PathInfo
    from ..app.phases import CostEstimate
    from ..app.run_inputs import RunRequest
    from ..app.view_data import Baselines, RunResult

IDLE, RUNNING, CONFIRMING = "idle", "running", "confirming"


def format_progress(
    phase: str, done: int, total: int, elapsed: float, remaining: float | None
) -> str:
    """``"fit: fits 12 of 90, 1.2 s elapsed, about 3 s left"``."""
    text = f"{phase}: " if phase else ""
    if phase == "exact path" and total > 0:
        text += f"\u03c0 reached {done / total:.2f}, "
    elif total > 0:
        text += f"fits {done} of {total}, "
    text += f"{elapsed:.1f} s elapsed"
    if remaining is not None:
        text += f", about {format_seconds(remaining)} left"
    return text


class RunController(QObject):
    """The run's state machine and the worker jobs of the app.

    Parameters
    ----------
    parent : QObject, optional
    clock : callable, optional
        Seconds for the elapsed time of a run (tests pass a fake one).

    Signals
    -------
    state_changed(state)
        "idle", "running" or "confirming".
    started(request)
        A run of ``request`` (a RunRequest) began on the worker.
    progressed(percent, text)
        Share of the run done (0-100) and a line for the status bar.
    live(boundary)
        A LiveBoundary of the final fit while it runs.
    status(status)
        A RunStatus: the phase and its fits.
    confirmation_needed(request, estimate)
        The run would exceed its time limit; :meth:`confirm` or :meth:`decline` it.
    finished(result)
        A RunResult, now :attr:`result`.
    failed(message, details)
    cancelled()
    plane_ready(plane)
        The PlaneData of :meth:`request_plane`, already stored in :attr:`result`.
    pi_boundary_ready(pi, segments, subproblem)
    baselines_ready(baselines)
    job_failed(message, details)
        A plane, boundary or baselines job failed (the result stays).
    """

    state_changed = Signal(str)
    started = Signal(object)
    progressed = Signal(int, str)
    live = Signal(object)
    status = Signal(object)
    confirmation_needed = Signal(object, object)
    finished = Signal(object)
    failed = Signal(str, str)
    cancelled = Signal()
    plane_ready = Signal(object)
    pi_boundary_ready = Signal(float, object, int)
    baselines_ready = Signal(object)
    job_failed = Signal(str, str)

    def __init__(
        self, parent: QObject | None = None, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        super().__init__(parent)
        self.runner = JobRunner(self)
        self.clock = clock
        self.state = IDLE
        self.result: RunResult | None = None
        self.baselines: Baselines | None = None
        self._started = 0.0
        self._phase = ""
        self._fits = (0, 0)
        self._fraction = 0.0
        self._baselines_due = False
        self.runner.progress.connect(self._on_progress)

    # -------------------------------------------------------------------------- state
    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    def is_running(self) -> bool:
        """A run (or its cost estimate) is on the worker."""
        return self.state == RUNNING

    def is_busy(self) -> bool:
        """A run, a question about one, or any other job of the worker is not done yet."""
        return self.state != IDLE or self.runner.any_running()

    def elapsed(self) -> float:
        """Seconds since the current run started."""
        return self.clock() - self._started

    # --------------------------------------------------------------------------- runs
    def start(self, request: RunRequest, limit: float | None) -> int:
        """Start ``request`` (a run already going is cancelled first); returns the job id.

        The worker first times the fit (:func:`wsvmgui.app.analysis.run_checked`); a run
        whose estimate exceeds ``limit`` seconds stops and :attr:`confirmation_needed`
        follows (``limit=None``: run whatever it costs).
        """
        if self.state == RUNNING:
            self.cancel()
        self.runner.cancel("plane")
        self.runner.cancel("baselines")
        self._baselines_due = False
        self._started = self.clock()
        self._phase, self._fits, self._fraction = "estimating the cost", (0, 0), 0.0

        def job(progress, should_cancel, publish):
            return run_checked(request, progress, should_cancel, publish, limit)

        job_id = self.runner.start(
            "run",
            job,
            on_result=lambda out: self._on_output(out, request),
            on_partial=self._on_partial,
            on_error=self._on_error,
            on_finished=self._on_finished,
        )
        self._set_state(RUNNING)
        self.started.emit(request)
        self.progressed.emit(0, "estimating the cost\u2026")
        return job_id

    def cancel(self) -> bool:
        """Stop the run; True if one was running (:attr:`cancelled` follows)."""
        if self.state == CONFIRMING:
            self.decline()
            return False
        if not self.runner.cancel("run"):
            return False
        self._set_state(IDLE)
        self.progressed.emit(0, "cancelled")
        self.cancelled.emit()
        return True

    def confirm(self, request: RunRequest, estimate: CostEstimate) -> int:
        """Run a request that asked for confirmation, whatever it costs."""
        return self.start(replace(request, cost=estimate), None)

    def decline(self) -> None:
        """Do not run the request that asked for confirmation."""
        if self.state == CONFIRMING:
            self._set_state(IDLE)

    def _on_output(self, out: Any, request: RunRequest) -> None:
        if isinstance(out, NeedsConfirmation):
            self.runner.cancel("run")  # its work is done: the question is not a running job
            self._set_state(CONFIRMING)
            # asked in a later turn, once the worker's last signals are handled
            QTimer.singleShot(0, lambda: self._ask(request, out.estimate))
            return
        self.result = out
        self.baselines = None
        self._baselines_due = True
        self._set_state(IDLE)
        self.progressed.emit(100, f"done in {out.seconds:.2f} s")
        self.finished.emit(out)

    def _ask(self, request: RunRequest, estimate: CostEstimate) -> None:
        if self.state == CONFIRMING:
            self.confirmation_needed.emit(request, estimate)

    def _on_error(self, message: str, details: str) -> None:
        self._set_state(IDLE)
        self.progressed.emit(0, "failed")
        self.failed.emit(message, details)

    def _on_finished(self, status: str) -> None:
        if status == "cancelled" and self.state == RUNNING:  # stopped by itself
            self._set_state(IDLE)
            self.progressed.emit(0, "cancelled")
            self.cancelled.emit()

    # ----------------------------------------------------------------------- progress
    def _on_partial(self, obj: Any) -> None:
        if isinstance(obj, LiveBoundary):
            self.live.emit(obj)
        elif isinstance(obj, RunStatus):
            self._phase = obj.phase
            self._fits = (obj.done, obj.total)
            self.status.emit(obj)
            self._emit_progress(self.elapsed())

    def _on_progress(self, kind: str, done: int, total: int, elapsed: float) -> None:
        if kind == "run" and self.state == RUNNING:
            self._fraction = done / max(total, 1)
            self._emit_progress(elapsed)

    def _emit_progress(self, elapsed: float) -> None:
        f = self._fraction
        remaining = elapsed * (1 - f) / f if f > 0.02 else None
        text = format_progress(self._phase, *self._fits, elapsed, remaining)
        self.progressed.emit(int(100 * min(f, 1.0)), text)

    def clear_result(self) -> None:
        """Forget the last result (new data): the jobs that follow it stop."""
        for kind in ("plane", "pi", "baselines"):
            self.runner.cancel(kind)
        self.result, self.baselines, self._baselines_due = None, None, False

    # ------------------------------------------------------------------ follow-up jobs
    def start_due_baselines(self) -> None:
        """Fit the baselines of a finished run once (call it when its views are drawn:
        their scikit-learn fits compete with the drawing for the interpreter otherwise)."""
        if self._baselines_due and self.result is not None:
            self._baselines_due = False
            self.request_baselines()

    def request_baselines(self) -> None:
        """Fit the baselines on the shown run's split (worker); :attr:`baselines_ready`."""
        result = self.result
        if result is None:
            return
        sigma = result.estimator.sigma_

        def job(progress, should_cancel, publish):
            return run_baselines(result.split, sigma, should_cancel)

        def done(baselines: Baselines) -> None:
            if result is self.result:
                self.baselines = baselines
                self.baselines_ready.emit(baselines)

        self.runner.start("baselines", job, on_result=done, on_error=self.job_failed.emit)

    def request_plane(self, ix: int, iy: int, reference: np.ndarray | None) -> None:
        """Compute the shown run's plane of features ``ix``, ``iy`` through ``reference``."""
        result = self.result
        if result is None:
            return

        def job(progress, should_cancel, publish):
            return compute_plane(result, ix, iy, DEFAULT_GRID, should_cancel, reference)

        def done(plane) -> None:
            if result is self.result:
                result.plane = plane
                self.plane_ready.emit(plane)

        self.runner.start("plane", job, on_result=done, on_error=self.job_failed.emit)

    def request_pi_boundary(self, pi: float, info: PathInfo | None, subproblem: int) -> None:
        """The boundary at ``pi`` in the shown plane, from the exact path ``info``."""
        result = self.result
        if result is None or info is None or result.plane is None:
            return
        plane, split = result.plane, result.split

        def job(progress, should_cancel, publish):
            from ..app.path_view import boundary_at

            xs, ys, X_grid = plane_grid(split, plane.ix, plane.iy, plane.xs.size, plane.reference)
            return boundary_at(info, X_grid, xs, ys, pi)

        def done(segments) -> None:
            if result is self.result and result.plane is plane:
                self.pi_boundary_ready.emit(pi, segments, subproblem)

        self.runner.start("pi", job, on_result=done, on_error=self.job_failed.emit)

    def shutdown(self, msecs: int = 3000) -> bool:
        """Cancel every job and wait up to ``msecs`` for the worker threads."""
        self.runner.cancel_all()
        return self.runner.wait(msecs)
