"""The one worker type of the app and the runner that owns its thread pool.

A :class:`Worker` is a ``QRunnable`` that calls a plain function
``fn(progress, should_cancel, publish) -> result`` on a thread of a private
``QThreadPool`` and reports through the signals of its :class:`WorkerSignals`: progress
(throttled), partial (live objects), result, error, warned and finished.  :class:`JobRunner`
starts workers by kind ("run", "plane", "baselines"), cancels the previous job of the same
kind, and forwards only the signals of each kind's current job, so stale results are
dropped.

As in superqt's workers, nothing a job does goes unnoticed: an error of a job started
without an error handler is raised again on the GUI thread (where ``sys.excepthook``
reports it), and a warning raised inside a job (``warnings.warn``, after the warning
filters) reaches :attr:`JobRunner.warned` as well as the usual ``warnings.showwarning``.
Warnings are routed by thread, so jobs running side by side, and the GUI thread, keep
their own.
"""

from __future__ import annotations

import threading
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot

from ..errors import Cancelled, WSVMError

#: Smallest interval between two progress signals of one worker, in seconds.
PROGRESS_INTERVAL = 0.05

JobFunction = Callable[
    [Callable[[int, int, Any], None], Callable[[], bool], Callable[[Any], None]], Any
]


#: The worker whose job runs on the current thread (None on other threads).
_current = threading.local()
#: The ``warnings.showwarning`` that :func:`_show_warning` replaced (and calls).
_shown_before: Callable[..., None] | None = None


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` while the app runs jobs: a warning raised in a job also
    goes to its worker's ``warned`` signal."""
    worker = getattr(_current, "worker", None)
    if worker is not None:
        worker.warn(f"{category.__name__}: {message}")
    if _shown_before is not None:
        _shown_before(message, category, filename, lineno, file, line)


def route_warnings() -> None:
    """Install :func:`_show_warning` (again, if something replaced it since)."""
    global _shown_before
    if warnings.showwarning is not _show_warning:
        _shown_before = warnings.showwarning
        warnings.showwarning = _show_warning


class WorkerSignals(QObject):
    """Signals of one worker; every signal carries the job id first."""

    progress = Signal(int, int, int, float)  # job id, done, total, elapsed seconds
    partial = Signal(int, object)  # job id, live object
    result = Signal(int, object)  # job id, result
    error = Signal(int, str, str, object)  # job id, message, details (traceback), exception
    warned = Signal(int, str)  # job id, "Category: message"
    finished = Signal(int, str)  # job id, "ok" | "cancelled" | "error"


class Worker(QRunnable):
    """Run ``fn(progress, should_cancel, publish)`` on a pool thread.

    Parameters
    ----------
    job_id : int
    fn : callable
    interval : float
        Progress throttle in seconds; the last progress (done == total) always goes out.
    """

    def __init__(self, job_id: int, fn: JobFunction, interval: float = PROGRESS_INTERVAL):
        super().__init__()
        self.setAutoDelete(False)
        self.job_id = job_id
        self.fn = fn
        self.interval = interval
        self.signals = WorkerSignals()
        self._cancel = threading.Event()
        self._last = 0.0
        self._start = 0.0

    def cancel(self) -> None:
        """Ask the job to stop at its next check (between fits)."""
        self._cancel.set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def _progress(self, done: int, total: int, partial: Any = None) -> None:
        now = time.perf_counter()
        if done >= total or now - self._last >= self.interval:
            self._last = now
            self.signals.progress.emit(self.job_id, int(done), int(total), now - self._start)

    def _publish(self, obj: Any) -> None:
        if not self._cancel.is_set():
            self.signals.partial.emit(self.job_id, obj)

    def warn(self, text: str) -> None:
        """Forward a warning raised in the job (called on the job's thread)."""
        if not self._cancel.is_set():
            self.signals.warned.emit(self.job_id, text)

    @Slot()
    def run(self) -> None:
        self._start = time.perf_counter()
        status = "ok"
        _current.worker = self
        try:
            if self._cancel.is_set():
                raise Cancelled("cancelled before it started")
            result = self.fn(self._progress, self._cancel.is_set, self._publish)
            if self._cancel.is_set():
                raise Cancelled("cancelled by the user")
            self.signals.result.emit(self.job_id, result)
        except Cancelled:
            status = "cancelled"
        except Exception as exc:  # noqa: BLE001 - every failure must reach the user
            status = "error"
            self.signals.error.emit(self.job_id, error_message(exc), traceback.format_exc(), exc)
        finally:
            _current.worker = None
            self.signals.finished.emit(self.job_id, status)


def error_message(exc: BaseException) -> str:
    """What the user reads: the message of a known failure (the package's errors and bad
    input), the type too of an unexpected one."""
    if isinstance(exc, (WSVMError, ValueError)):  # ValueError includes InputError
        return str(exc)
    return f"unexpected {type(exc).__name__}: {exc}"


@dataclass
class _Job:
    kind: str
    worker: Worker
    on_result: Callable[[Any], None] | None
    on_partial: Callable[[Any], None] | None
    on_error: Callable[[str, str], None] | None
    on_finished: Callable[[str], None] | None


class JobRunner(QObject):
    """Starts workers on a private thread pool and forwards the current jobs' signals.

    Signals
    -------
    progress(kind, done, total, elapsed)
    busy(kind, running)
    warned(kind, text)
        A warning raised inside the current job of ``kind`` ("Category: message").
    """

    progress = Signal(str, int, int, float)
    busy = Signal(str, bool)
    warned = Signal(str, str)

    def __init__(self, parent: QObject | None = None, max_threads: int = 3) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self._next_id = 0
        self._jobs: dict[int, _Job] = {}  # every job not yet finished
        self._current: dict[str, int] = {}  # kind -> id of the job whose signals count
        # Finished workers stay referenced a while: their thread may still be unwinding
        # run() when the queued "finished" signal reaches this thread.
        self._retired: deque[Worker] = deque(maxlen=16)

    # ------------------------------------------------------------------------ control
    def start(
        self,
        kind: str,
        fn: JobFunction,
        on_result: Callable[[Any], None] | None = None,
        on_partial: Callable[[Any], None] | None = None,
        on_error: Callable[[str, str], None] | None = None,
        on_finished: Callable[[str], None] | None = None,
    ) -> int:
        """Cancel the running job of ``kind`` (its results are dropped) and start ``fn``.

        Without ``on_error`` a failure of the job is raised again on the GUI thread.
        """
        route_warnings()
        self.cancel(kind)
        self._next_id += 1
        job_id = self._next_id
        worker = Worker(job_id, fn)
        sig = worker.signals
        queued = Qt.ConnectionType.QueuedConnection
        sig.progress.connect(self._on_progress, queued)
        sig.partial.connect(self._on_partial, queued)
        sig.result.connect(self._on_result, queued)
        sig.error.connect(self._on_error, queued)
        sig.warned.connect(self._on_warned, queued)
        sig.finished.connect(self._on_finished, queued)
        self._jobs[job_id] = _Job(kind, worker, on_result, on_partial, on_error, on_finished)
        self._current[kind] = job_id
        self.busy.emit(kind, True)
        self.pool.start(worker)
        return job_id

    def cancel(self, kind: str) -> bool:
        """Cancel the current job of ``kind``; True if one was running."""
        job_id = self._current.pop(kind, None)
        if job_id is None or job_id not in self._jobs:
            return False
        self._jobs[job_id].worker.cancel()
        self.busy.emit(kind, False)
        return True

    def cancel_all(self) -> None:
        for kind in list(self._current):
            self.cancel(kind)

    def is_running(self, kind: str) -> bool:
        return kind in self._current

    def any_running(self) -> bool:
        """A job of any kind is running."""
        return bool(self._current)

    def wait(self, msecs: int = 5000) -> bool:
        """Block until every pool thread is idle (for shutdown and tests)."""
        return self.pool.waitForDone(msecs)

    # -------------------------------------------------------------------------- slots
    def _live(self, job_id: int) -> _Job | None:
        job = self._jobs.get(job_id)
        if job is None or self._current.get(job.kind) != job_id:
            return None
        return job

    @Slot(int, int, int, float)
    def _on_progress(self, job_id: int, done: int, total: int, elapsed: float) -> None:
        job = self._live(job_id)
        if job is not None:
            self.progress.emit(job.kind, done, total, elapsed)

    @Slot(int, object)
    def _on_partial(self, job_id: int, obj: Any) -> None:
        job = self._live(job_id)
        if job is not None and job.on_partial is not None:
            job.on_partial(obj)

    @Slot(int, object)
    def _on_result(self, job_id: int, result: Any) -> None:
        job = self._live(job_id)
        if job is not None and job.on_result is not None:
            job.on_result(result)

    @Slot(int, str, str, object)
    def _on_error(self, job_id: int, message: str, details: str, exc: BaseException) -> None:
        job = self._live(job_id)
        if job is None:
            return
        if job.on_error is None:
            raise exc  # no handler: sys.excepthook reports it, with the job's traceback
        job.on_error(message, details)

    @Slot(int, str)
    def _on_warned(self, job_id: int, text: str) -> None:
        job = self._live(job_id)
        if job is not None:
            self.warned.emit(job.kind, text)

    @Slot(int, str)
    def _on_finished(self, job_id: int, status: str) -> None:
        job = self._live(job_id)
        done = self._jobs.pop(job_id, None)
        if done is not None:
            self._retired.append(done.worker)
        if job is None:
            return
        del self._current[job.kind]
        self.busy.emit(job.kind, False)
        if job.on_finished is not None:
            job.on_finished(status)
