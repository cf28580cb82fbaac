"""How a failed run ends: one line on stderr naming the problem, and its exit status."""

from __future__ import annotations

import signal
import sys

from ..errors import Cancelled, CostLimitError, InputError, SolverError, WSVMError
from ..io.atomic import Terminated
from .console import one_line
from .limits import refusal
from .output import what_was_written
from .status import EXIT_CANCELLED, EXIT_INPUT, EXIT_INTERNAL, EXIT_SOLVER


def exit_status(exc: BaseException) -> int | None:
    """Say on stderr why the run stopped and return its exit status; None for an
    unexpected error (a bug), which :func:`internal_error` reports."""
    if isinstance(exc, CostLimitError):
        return _say(f"wsvmgui: error: {refusal(exc)}", EXIT_INPUT)
    if isinstance(exc, (InputError, SolverError)):
        status = EXIT_INPUT if isinstance(exc, InputError) else EXIT_SOLVER
        return _say(f"wsvmgui: error: {one_line(exc)}", status)
    if isinstance(exc, Cancelled):
        return _say(f"wsvmgui: cancelled; {what_was_written()}", EXIT_CANCELLED)
    if isinstance(exc, KeyboardInterrupt):
        return _say(f"\nwsvmgui: interrupted (SIGINT); {what_was_written()}", EXIT_CANCELLED)
    if isinstance(exc, Terminated):
        name = signal.Signals(exc.signum).name
        return _say(f"wsvmgui: stopped by {name}; {what_was_written()}", 128 + exc.signum)
    if isinstance(exc, WSVMError):
        return _say(f"wsvmgui: error: {one_line(exc)}", EXIT_INPUT)
    if isinstance(exc, MemoryError):
        return _say(
            f"wsvmgui: error: not enough memory for this run ({one_line(exc) or 'MemoryError'}); "
            f"use fewer weights, rows or grid values; {what_was_written()}",
            EXIT_INPUT,
        )
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return _say(f"wsvmgui: error: {exc.strerror or exc}{where}", EXIT_INPUT)
    return None


def internal_error(exc: BaseException) -> int:
    """An unexpected error: its type and message on one line, and how to see more."""
    return _say(
        f"wsvmgui: internal error: {type(exc).__name__}: {one_line(exc)} "
        "(set WSVMGUI_DEBUG=1 for details)",
        EXIT_INTERNAL,
    )


def _say(line: str, status: int) -> int:
    print(line, file=sys.stderr)
    return status
