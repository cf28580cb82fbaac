"""Progress reporting and cooperative cancellation for long computations.

Long computations in wsvmgui (below the gui) are plain functions that accept two optional
callables: ``progress(done, total, partial)`` and ``should_cancel()``.  They call
``progress`` after each unit of work (one fit) and poll ``should_cancel`` between units,
raising :class:`~wsvmgui.errors.Cancelled` when it returns True.  The GUI runs such
functions on a worker thread and turns the callbacks into Qt signals; the CLI passes
nothing or a text progress printer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .errors import Cancelled

#: ``progress(done, total, partial)``: ``partial`` is an optional object describing the
#: unit that just finished (for live views), or None.
ProgressCallback = Callable[[int, int, Any], None]
#: ``should_cancel() -> bool``.
CancelCheck = Callable[[], bool]


def no_progress(done: int, total: int, partial: Any = None) -> None:
    """Progress callback that ignores everything."""


def never_cancel() -> bool:
    """Cancellation check that never asks to stop."""
    return False


class ProgressTracker:
    """Thread-safe counter that forwards progress and checks cancellation.

    Parameters
    ----------
    total : int
        Number of units of work expected.
    progress : callable or None
        ``progress(done, total, partial)``.
    should_cancel : callable or None
        ``should_cancel() -> bool``.
    """

    def __init__(
        self,
        total: int,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCheck | None = None,
    ) -> None:
        self.total = int(total)
        self.done = 0
        self._progress = progress or no_progress
        self._should_cancel = should_cancel or never_cancel
        self._lock = threading.Lock()

    def cancel_requested(self) -> bool:
        """Whether the caller asked to stop (without raising)."""
        return bool(self._should_cancel())

    def check(self) -> None:
        """Raise :class:`Cancelled` if the caller asked to stop."""
        if self._should_cancel():
            raise Cancelled("cancelled by the user")

    def step(self, n: int = 1, partial: Any = None) -> None:
        """Record ``n`` finished units, report them, then check for cancellation."""
        with self._lock:
            self.done += n
            done = self.done
        self._progress(done, self.total, partial)
        self.check()

    def add_total(self, n: int) -> None:
        """Grow the expected total by ``n`` units (when work is discovered late)."""
        with self._lock:
            self.total += int(n)
