"""Numbers as pandas, R and spreadsheets read them: ASCII decimal notation only.

Python's ``float()`` and ``int()`` also accept ``1_000``, full-width ``１２``, Arabic-Indic
``١٢`` and ``infinity``; a table whose cells read that way elsewhere would be read
differently here.  The strict rule (pandas' C parser):

- optional sign, ASCII digits with at most one decimal point (``1``, ``-2.5``, ``.5``,
  ``5.``), optional exponent (``1e-3``, ``2E+05``);
- ``inf``, ``-inf``, ``Infinity`` (any case) are infinite; ``nan`` (any case) is NaN;
- surrounding spaces are ignored; nothing else is a number.
"""

from __future__ import annotations

import re

import numpy as np

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_SPECIAL = {"inf": np.inf, "+inf": np.inf, "-inf": -np.inf, "infinity": np.inf,
            "+infinity": np.inf, "-infinity": -np.inf, "nan": np.nan, "+nan": np.nan,
            "-nan": np.nan}  # fmt: skip
#: Longest text read as a number (a longer cell is text, not a number).
MAX_DIGITS = 400


def is_number(text: str) -> bool:
    """Whether ``text`` is a number by the strict rule (module docstring)."""
    t = text.strip()
    return len(t) <= MAX_DIGITS and (_NUMBER.fullmatch(t) is not None or t.lower() in _SPECIAL)


def parse_number(text: str) -> float | None:
    """``text`` as a float by the strict rule, or None when it is not a number."""
    t = text.strip()
    if len(t) > MAX_DIGITS:
        return None
    if _NUMBER.fullmatch(t) is not None:
        return float(t)
    return _SPECIAL.get(t.lower())


def parse_integer(text: str) -> int | None:
    """``text`` as an int (ASCII digits, optional sign, at most 30 digits), or None."""
    t = text.strip()
    if len(t) > 30 or _INTEGER.fullmatch(t) is None:
        return None
    return int(t)


def parse_numbers(cells: np.ndarray) -> tuple[np.ndarray, int]:
    """Cells (object array of str, shape (n,)) as floats by the strict rule.

    Returns
    -------
    values : ndarray, shape (n,)
    first_bad : int
        Index of the first cell that is not a number, or -1.
    """
    out = np.empty(cells.shape[0])
    for i, cell in enumerate(cells):
        value = parse_number(cell)
        if value is None:
            return out, i
        out[i] = value
    return out, -1
