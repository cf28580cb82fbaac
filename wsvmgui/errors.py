"""Exception types raised by the library, and the helper that words their messages.

Every error a user can cause or meet carries a message that names the problem in one line,
so the command line and the desktop app can show it as it is.
"""

from __future__ import annotations

import numpy as np


class WSVMError(Exception):
    """Base class for every error the core raises on purpose."""


class InputError(WSVMError, ValueError):
    """Bad input data or parameters (NaN, one class, unknown column, ...)."""


class MemoryBudgetError(InputError):
    """The work would not fit in the available memory (refused before it starts)."""


class CostLimitError(InputError):
    """A fit estimated to take longer than the cost limit (refused before it starts).

    Attributes
    ----------
    cost : FitCost
        The estimate (:class:`wsvmgui.estimators.cost.FitCost`).
    limit : float
        The limit in minutes.
    """

    def __init__(self, message: str, cost=None, limit: float | None = None) -> None:
        super().__init__(message)
        self.cost = cost
        self.limit = limit


class SolverError(WSVMError, RuntimeError):
    """A solver failed, did not converge, or returned an answer that fails its check."""


class Cancelled(WSVMError):
    """A long computation was stopped by its cancellation check."""


class WSVMWarning(UserWarning):
    """Base class of the library's warnings."""


class LibsvmFallbackWarning(WSVMWarning):
    """scikit-learn's private libsvm binding is unusable; fits take the slower public SVC."""


def plain_value(value):
    """A numpy scalar as the Python value it holds (for messages: 'b', not np.str_('b'))."""
    return value.item() if isinstance(value, np.generic) else value
