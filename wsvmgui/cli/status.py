"""The command line's exit statuses (``128 + signum`` when a signal stops a run)."""

from __future__ import annotations

#: Bad input, a refused fit, an unreadable or unwritable file (and usage errors).
EXIT_INPUT = 2
#: The solver failed.
EXIT_SOLVER = 3
#: An unexpected error (a bug): one line, or the traceback with ``WSVMGUI_DEBUG=1``.
EXIT_INTERNAL = 1
#: Cancelled or interrupted (SIGINT).
EXIT_CANCELLED = 130
