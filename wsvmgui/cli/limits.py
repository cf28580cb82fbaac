"""``--max-minutes``: the cost guard's limit for one run, and its refusal in one line."""

from __future__ import annotations

import argparse
import contextlib
import math
from contextlib import AbstractContextManager

from ..errors import CostLimitError
from ..estimators.cost import cost_limit


def run_cost_limit(args: argparse.Namespace) -> AbstractContextManager[None]:
    """The cost guard's limit of ``--max-minutes`` (absent: the library's default)."""
    if args.max_minutes is None:
        return contextlib.nullcontext()
    return cost_limit(args.max_minutes or None)


def refusal(exc: CostLimitError) -> str:
    """One line: the estimate, the limit, and the flag that allows the fit."""
    cost, limit = exc.cost, exc.limit or 0.0
    if cost is None:
        return str(exc)
    minutes = cost.seconds / 60.0
    allow = "0" if cost.lower_bound else f"{max(math.ceil(1.5 * minutes), 1)}"
    return (
        f"this fit is estimated to take {cost.describe()}, over the limit of "
        f"{limit:g} min; to run it anyway, pass --max-minutes {allow} (0: no limit)"
    )
