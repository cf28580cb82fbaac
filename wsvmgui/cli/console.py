"""What a run says on the terminal while it works: progress, notes, and Ctrl-C or a
termination signal cancelling the fit's worker threads."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..io.atomic import TERMINATING, Terminated
from ..io.preprocessing import PreparedRows


class Progress:
    """Single-line progress on stderr, at most ten updates a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = 0.0

    def __call__(self, done: int, total: int, partial: Any = None) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        sys.stderr.write(f"\rfits {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


@contextlib.contextmanager
def interrupt_cancels() -> Iterator[threading.Event]:
    """Ctrl-C (SIGINT) and SIGTERM, SIGHUP, SIGQUIT also set an event the fit's worker
    threads check, so they stop with the main thread instead of finishing their queue."""
    cancelled = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield cancelled
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *TERMINATING)}

    def interrupt(signum: int, frame: Any) -> None:
        cancelled.set()
        old = previous[signum]
        if callable(old):
            old(signum, frame)
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)

    ours = {
        sig
        for sig, old in previous.items()
        if old is signal.default_int_handler or (callable(old) and sig != signal.SIGINT)
    }
    for sig in ours:
        signal.signal(sig, interrupt)
    try:
        yield cancelled
    finally:
        for sig in ours:
            signal.signal(sig, previous[sig])


def note(args: argparse.Namespace, text: str) -> None:
    """``wsvmgui: text`` on stderr, unless ``--quiet``."""
    if not args.quiet:
        print(f"wsvmgui: {text}", file=sys.stderr)


def announce(args: argparse.Namespace) -> Callable[[str], None]:
    """Where the path engine's compile notice goes: stderr, unless ``--quiet``."""

    def say(text: str) -> None:
        if not getattr(args, "quiet", False):
            print(f"wsvmgui: {text}\u2026", file=sys.stderr, flush=True)

    return say


def note_dropped(args: argparse.Namespace, rows: PreparedRows, what: str) -> None:
    """A note of the rows left out for missing values, if any."""
    if rows.n_dropped:
        note(args, f"left out {rows.n_dropped} of {rows.n_read} {what} with missing values")


def one_line(exc: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(exc).split())
