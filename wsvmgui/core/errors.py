"""Exception types raised by the core library.

Every error a user can cause or meet carries a message that names the problem in one line,
so the command line and the desktop app can show it as it is.
"""

from __future__ import annotations


class WSVMError(Exception):
    """Base class for every error the core raises on purpose."""


class InputError(WSVMError, ValueError):
    """Bad input data or parameters (NaN, one class, unknown column, ...)."""


class SolverError(WSVMError, RuntimeError):
    """A solver failed, did not converge, or returned an answer that fails its check."""


class Cancelled(WSVMError):
    """A long computation was stopped by its cancellation check."""
