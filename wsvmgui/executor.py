"""Where independent fits run: threads of this process, or a Dask cluster.

Long computations cut their work into independent :class:`Task` objects (a tuning cell,
a sub-problem's final ladder, a segment of the joint grid) and hand them to an
:class:`Executor`, which returns their results in task order, whatever order they
finished in (so the assembled answer does not depend on where or when a task ran):

* :class:`LocalExecutor` runs them on ``n_jobs`` threads of this process (libsvm, the QP
  backends and numpy release the interpreter lock).  Tasks carry a ``group`` (e.g. the
  kernel width): groups run one after another, so that the tasks sharing a large object
  (a kernel matrix) run together and the next one is built only after the last task of
  the previous group is done.
* :class:`ClusterExecutor` submits them to a Dask cluster as ``distributed`` futures,
  in task order.  Data is scattered to every worker once (:meth:`Executor.share`);
  tasks are module-level functions with small arguments (indices, grids), so workers
  build what they need (a kernel matrix) from the scattered data.  Progress is reported
  as tasks finish; cancellation sets a cluster-wide ``distributed.Event`` that running
  tasks poll between fits, and cancels the tasks not yet started.

A task is ``fn(ctx, *args)``: ``ctx`` is a :class:`TaskContext` through which it reports
progress and polls cancellation.  :func:`current_executor` picks the executor: the
cluster of :func:`use_scheduler`, or of an active ``joblib.parallel_config(backend="dask")``
(scikit-learn's way to send work to Dask), else threads.  ``distributed`` is an optional
dependency (``pip install "wsvmgui[cluster]"``), imported only when a cluster is used.
"""

from __future__ import annotations

import contextvars
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .errors import Cancelled, InputError
from .progress import ProgressTracker

#: Seconds between two cancellation polls of a task running on a cluster worker.
CANCEL_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Task:
    """One independent unit of work.

    Attributes
    ----------
    fn : callable
        ``fn(ctx, *args)``; module-level (picklable by reference) for a cluster.
    args : tuple
    units : int
        Progress units the task accounts for (a cluster reports them when it finishes;
        locally the task reports them itself through ``ctx.step``).
    group : hashable
        Locally, groups run one after another in order of first appearance.
    """

    fn: Callable[..., Any]
    args: tuple = ()
    units: int = 0
    group: Hashable = None


@dataclass(frozen=True)
class Shared:
    """Data shared by the tasks of one run: ``value`` and a ``token`` naming it."""

    token: str
    value: Any

    @classmethod
    def new(cls, value: Any) -> Shared:
        """``value`` under a fresh token."""
        return cls(uuid.uuid4().hex, value)


class TaskContext:
    """What a running task reports progress to and asks about cancellation."""

    def step(self, n: int = 1, partial: Any = None) -> None:
        """``n`` units done (``partial``: an object for live views, local runs only)."""

    def cancelled(self) -> bool:
        """Whether the run is being stopped."""
        return False

    def check(self) -> None:
        """Raise :class:`Cancelled` when the run is being stopped."""
        if self.cancelled():
            raise Cancelled("cancelled by the user")

    @property
    def remote(self) -> bool:
        """True on a cluster worker (no live progress)."""
        return False


class Executor:
    """Runs tasks; see :class:`LocalExecutor` and :class:`ClusterExecutor`."""

    #: Short description for ``fit_info_`` and messages.
    name: str = ""

    def share(self, shared: Shared) -> Any:
        """Place ``shared`` where the tasks run, once; pass what it returns to tasks.

        Locally that is ``shared`` itself; on a cluster a future that each worker
        resolves to its own copy.
        """
        raise NotImplementedError

    def release(self, shared: Any) -> None:
        """Forget data placed by :meth:`share`."""

    def everywhere(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` in every process that runs tasks (e.g. to drop caches)."""
        raise NotImplementedError

    def run(self, tasks: Sequence[Task], tracker: ProgressTracker) -> list:
        """Run ``tasks``; their results in task order.

        The first failure stops the others and is re-raised; so is :class:`Cancelled`
        when ``tracker``'s cancellation check turns True.
        """
        raise NotImplementedError

    def memory_slots(self) -> tuple[int | None, int]:
        """(bytes each task process may use or None for this machine's, tasks per process)."""
        raise NotImplementedError


# ----------------------------------------------------------------------------- local
class _LocalContext(TaskContext):
    def __init__(self, tracker: ProgressTracker, abort: threading.Event) -> None:
        self._tracker = tracker
        self._abort = abort

    def step(self, n: int = 1, partial: Any = None) -> None:
        self._tracker.step(n, partial)

    def cancelled(self) -> bool:
        return self._abort.is_set() or self._tracker.cancel_requested()


class LocalExecutor(Executor):
    """Threads of this process.

    Parameters
    ----------
    n_jobs : int
        Threads (at least 1).
    """

    def __init__(self, n_jobs: int = 1) -> None:
        self.n_jobs = max(int(n_jobs), 1)
        self.name = f"{self.n_jobs} thread{'s' if self.n_jobs > 1 else ''}"

    def share(self, shared: Shared) -> Shared:
        return shared

    def everywhere(self, fn: Callable[..., Any], *args: Any) -> None:
        fn(*args)

    def memory_slots(self) -> tuple[int | None, int]:
        return None, self.n_jobs

    def run(self, tasks: Sequence[Task], tracker: ProgressTracker) -> list:
        abort = threading.Event()
        ctx = _LocalContext(tracker, abort)
        results: list[Any] = [None] * len(tasks)
        for group in dict.fromkeys(t.group for t in tasks):
            idx = [i for i, t in enumerate(tasks) if t.group == group]
            calls = [_bind(tasks[i], ctx) for i in idx]
            for i, out in zip(idx, run_threads(calls, self.n_jobs, abort), strict=True):
                results[i] = out
        return results


def _bind(task: Task, ctx: TaskContext) -> Callable[[], Any]:
    return lambda: task.fn(ctx, *task.args)


def run_threads(calls: Sequence[Callable[[], Any]], n_jobs: int, abort: threading.Event) -> list:
    """Run zero-argument callables on ``n_jobs`` threads; results in order.

    The first exception sets ``abort`` (so running calls stop at their next check),
    cancels calls not yet started, and is re-raised.
    """
    if n_jobs <= 1 or len(calls) <= 1:
        return [c() for c in calls]
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        futures = [pool.submit(c) for c in calls]
        wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f.done() and f.exception() is not None]
        if failed:
            abort.set()
            for f in futures:
                f.cancel()
            wait(futures)
            # Prefer the root cause over the Cancelled errors it triggered elsewhere.
            causes = [f.exception() for f in failed]
            raise next((e for e in causes if not isinstance(e, Cancelled)), causes[0])  # type: ignore[misc]
        return [f.result() for f in futures]


# --------------------------------------------------------------------------- cluster
_counts: dict[str, int] = {"started": 0, "finished": 0, "cancelled": 0}
_counts_lock = threading.Lock()


def _count(what: str) -> None:
    with _counts_lock:
        _counts[what] += 1


def task_counts() -> dict[str, int]:
    """Tasks this process ran for a cluster: started, finished, cancelled (for tests)."""
    with _counts_lock:
        return dict(_counts)


class _RemoteContext(TaskContext):
    def __init__(self, event_name: str) -> None:
        self._name = event_name
        self._last = 0.0
        self._set = False

    @property
    def remote(self) -> bool:
        return True

    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self._set and now - self._last >= CANCEL_POLL_SECONDS:
            from distributed import Event

            self._last = now
            self._set = bool(Event(self._name).is_set())
        return self._set


def _remote(fn: Callable[..., Any], event_name: str, *args: Any) -> Any:
    """What a cluster worker runs: ``fn`` with a context polling the run's cancel event."""
    _count("started")
    try:
        out = fn(_RemoteContext(event_name), *args)
    except Cancelled:
        _count("cancelled")
        raise
    _count("finished")
    return out


class ClusterExecutor(Executor):
    """Tasks as futures on a Dask cluster.

    Parameters
    ----------
    client : distributed.Client
    """

    #: Seconds between two looks at the futures.
    poll_seconds = 0.05

    def __init__(self, client: Any) -> None:
        self.client = client
        self.name = f"dask cluster at {client.scheduler.address}"

    def share(self, shared: Shared) -> Any:
        return self.client.scatter(shared, broadcast=True, hash=False)

    def release(self, shared: Any) -> None:
        shared.release()

    def everywhere(self, fn: Callable[..., Any], *args: Any) -> None:
        self.client.run(fn, *args)

    def memory_slots(self) -> tuple[int | None, int]:
        try:
            info = self.client.scheduler_info(n_workers=-1)
        except TypeError:  # distributed before 2025 lists every worker by default
            info = self.client.scheduler_info()
        workers = info["workers"].values()
        limits = [int(w.get("memory_limit") or 0) for w in workers]
        threads = max([int(w.get("nthreads", 1)) for w in workers] or [1])
        known = [m for m in limits if m > 0]
        return (min(known) if known and len(known) == len(limits) else None), threads

    def run(self, tasks: Sequence[Task], tracker: ProgressTracker) -> list:
        from distributed import Event

        if not tasks:
            return []
        run_id = uuid.uuid4().hex
        event_name = f"wsvmgui-cancel-{run_id}"
        futures = [
            self.client.submit(
                _remote,
                t.fn,
                event_name,
                *t.args,
                key=f"wsvmgui-{getattr(t.fn, '__name__', 'task')}-{run_id}-{i}",
                priority=len(tasks) - i,
                pure=False,
            )
            for i, t in enumerate(tasks)
        ]
        results: list[Any] = [None] * len(tasks)
        pending = dict(zip(futures, range(len(tasks)), strict=True))
        try:
            while pending:
                finished = [f for f in pending if f.done()]
                if not finished:
                    tracker.check()
                    time.sleep(self.poll_seconds)
                    continue
                for f in finished:
                    i = pending.pop(f)
                    results[i] = f.result()  # re-raises a task's error here
                    tracker.step(tasks[i].units)
        except BaseException:
            try:  # running tasks stop at their next fit; the others never start
                Event(event_name, client=self.client).set()
                self.client.cancel(futures)
            except Exception:  # pragma: no cover - a lost connection: nothing to stop
                pass
            raise
        finally:
            del futures, pending
        return results


# ----------------------------------------------------------------------- choosing one
_client: contextvars.ContextVar[Any] = contextvars.ContextVar("wsvmgui_client", default=None)


def _joblib_dask_client() -> Any:
    """The client of an active ``joblib.parallel_config(backend="dask")``, if any."""
    try:
        from joblib.parallel import get_active_backend

        backend, _ = get_active_backend()
    except Exception:  # pragma: no cover - joblib internals moved
        return None
    return getattr(backend, "client", None) if type(backend).__name__.startswith("Dask") else None


def current_executor(n_jobs: int = 1) -> Executor:
    """The cluster of :func:`use_scheduler` or joblib's Dask backend, else ``n_jobs`` threads."""
    client = _client.get() or _joblib_dask_client()
    return ClusterExecutor(client) if client is not None else LocalExecutor(n_jobs)


def _wsvmgui_version() -> str:
    from ._version import __version__

    return __version__


@contextmanager
def use_scheduler(address: Any, timeout: float = 10.0) -> Iterator[Any]:
    """Send the fits made inside the block to the Dask cluster at ``address``.

    Parameters
    ----------
    address : str or distributed.Client
        Scheduler address (``tcp://host:8786``), or a client to use as it is.
    timeout : float
        Seconds to wait for the scheduler and for its first worker.

    Yields
    ------
    distributed.Client

    Raises
    ------
    InputError
        ``distributed`` is not installed, the scheduler cannot be reached, no worker joins
        it, or its workers run another wsvmgui (or none).
    """
    try:
        from distributed import Client
    except ImportError:
        raise InputError(
            "a Dask scheduler needs the cluster extra: pip install 'wsvmgui[cluster]'"
        ) from None
    own = not isinstance(address, Client)
    client = address
    if own:
        try:
            client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        _check_workers(client, timeout)
        token = _client.set(client)
        try:
            yield client
        finally:
            _client.reset(token)
    finally:
        if own:
            client.close()


def _check_workers(client: Any, timeout: float) -> None:
    where = client.scheduler.address
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"no Dask worker joined the scheduler at {where} ({exc})") from None
    try:
        versions = set(client.run(_wsvmgui_version).values())
    except Exception as exc:
        raise InputError(f"the Dask workers at {where} cannot run wsvmgui: {exc}") from None
    mine = _wsvmgui_version()
    if versions != {mine}:
        raise InputError(
            f"the Dask workers at {where} run wsvmgui {', '.join(sorted(versions))}, "
            f"this is {mine}: install the same version on the workers"
        )
