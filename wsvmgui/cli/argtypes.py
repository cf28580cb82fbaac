"""Argument types of the command line: each turns one option's text into its value or
raises :class:`argparse.ArgumentTypeError` with a message naming what is wrong."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from typing import Any

from ..app.settings import VALUE_RANGE
from ..io.numbers import parse_integer, parse_number


def floats(text: str) -> list[float]:
    """``L1,L2,...`` (commas or semicolons) as positive finite numbers within
    :data:`wsvmgui.app.settings.VALUE_RANGE`."""
    items = text.replace(";", ",").split(",")
    if not text.strip():
        raise argparse.ArgumentTypeError("expected at least one number")
    values = []
    for k, item in enumerate(items):
        if not item.strip():
            raise argparse.ArgumentTypeError(
                f"item {k + 1} of {text!r} is empty; expected comma-separated numbers"
            )
        value = parse_number(item)
        if value is None:
            msg = f"{item.strip()!r} in {text!r} is not a number; expected comma-separated numbers"
            raise argparse.ArgumentTypeError(msg)
        values.append(value)
    bad = [v for v in values if not (math.isfinite(v) and v > 0)]
    if bad:
        raise argparse.ArgumentTypeError(f"expected positive finite numbers, got {bad[0]}")
    low, high = VALUE_RANGE
    far = [item.strip() for item, v in zip(items, values, strict=True) if not low <= v <= high]
    if far:
        raise argparse.ArgumentTypeError(
            f"{far[0]} is outside {low:g}..{high:g} (its square would over- or underflow)"
        )
    return values


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """The type of an integer option between ``low`` and ``high`` (None: no upper bound)."""

    def parse(text: str) -> int:
        value = parse_integer(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
        if value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {value}")
        return value

    return parse


def fraction(text: str) -> float:
    """A number strictly between 0 and 1."""
    value = parse_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text}")
    return value


def key_value(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``: the value read as JSON when it is JSON, else kept as text."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    if not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        parsed = value
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise argparse.ArgumentTypeError(f"option {key.strip()} must be finite, got {value!r}")
    return key.strip(), parsed


def tokens(text: str) -> list[str]:
    """``A,B`` as its comma-separated items, stripped."""
    return [t.strip() for t in text.split(",")]


def minutes(text: str) -> float:
    """A number of minutes >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of minutes, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected minutes >= 0, got {text!r}")
    return value
