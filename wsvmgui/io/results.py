"""Probability tables: a plain CSV plus a JSON sidecar that belongs to it.

The CSV's first line is its header, so ``pandas.read_csv(path)`` and R's
``read.csv(path)`` open it with no options.  Columns, in order:

- the row identity: ``row`` (1-based row number in the input table, 1 = first data row
  after the header) or the input's id column, carried through under its own name;
- ``split`` when rows come from several parts of a data set (the app's export);
- ``predicted``: the most probable class;
- ``observed``: the row's label, when the predicted rows carry one;
- ``p_<class>``: the estimated probability of each class;
- ``p_<class>_lower``, ``p_<class>_upper``: the bracket the ladder puts it in;
  for multiclass schemes, ``p_<a>_given_<a>_or_<b>_lower/_upper`` (a pairwise
  sub-problem) or ``p_<a>_vs_rest_lower/_upper`` (One-vs-All);
- ``p_<class>_lo``, ``p_<class>_hi``: a per-point 90% interval for the class's
  probability, when the run asked for intervals (``intervals``; binary scheme with a
  calibration: :meth:`~wsvmgui.estimators.binary.WeightedSVMClassifier.predict_interval`);
- ``non_monotone``: 1 when the point's labels along the weight ladder flip more than once
  (its probability then comes from the chosen rule), else 0 (ladder schemes);
- scheme-specific columns named in the sidecar (e.g. ``svm_decision``, ``share_<class>``).

The sidecar ``<csv>.json`` describes every column and records the settings, the
provenance and the CSV's sha256, so a CSV and a sidecar always belong to the same run.
Numbers are written with 10 significant digits; output depends only on the inputs (no
times, no absolute paths), so the same run gives the same bytes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import InputError
from ..estimators.report import INTERVAL_HI, INTERVAL_LEVEL, INTERVAL_LO, ProbabilityReport
from .atomic import check_input, write_together

FORMAT = "wsvmgui-probabilities"
FORMAT_VERSION = 1
FLOAT_FORMAT = ".10g"


def sidecar_path(path: str | os.PathLike) -> str:
    """The sidecar of a probabilities CSV: ``<path>.json``."""
    return os.fspath(path) + ".json"


def _bracket_name(key: str, classes: list[str]) -> str | None:
    """Readable name of a report's ``lo_*``/``hi_*`` column, or None if it is not one."""
    if not key.startswith(("lo_", "hi_")):
        return None
    end = "lower" if key.startswith("lo_") else "upper"
    what = key[3:]
    if what in classes:
        return f"p_{what}_{end}"
    target, bar, given = what.partition("|")
    if not bar:
        return None
    if given == "rest":
        return f"p_{target}_vs_rest_{end}"
    return f"p_{target}_given_{'_or_'.join(given.split(','))}_{end}"


def _interval_name(key: str, classes: list[str]) -> str | None:
    """``p_<class>_lo``/``_hi`` of a report's interval column, or None if it is not one."""
    for prefix, end in ((INTERVAL_LO, "lo"), (INTERVAL_HI, "hi")):
        if key.startswith(prefix) and key[len(prefix) :] in classes:
            return f"p_{key[len(prefix) :]}_{end}"
    return None


def probability_columns(
    report: ProbabilityReport,
    ids: np.ndarray,
    id_name: str = "row",
    observed: np.ndarray | None = None,
    split: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The output columns of a report, in order, with a description of each.

    Parameters
    ----------
    report : ProbabilityReport
        For n rows.
    ids : ndarray, shape (n,)
        Row identity (1-based row numbers, or an id column's cells).
    id_name : str
        Its column name.
    observed : ndarray, shape (n,), optional
        Labels of the rows (None entries: missing).
    split : ndarray of str, shape (n,), optional

    Returns
    -------
    columns : dict of str to ndarray, shape (n,) each
    descriptions : dict of str to str
    """
    classes = [str(c) for c in report.classes]
    cols: dict[str, np.ndarray] = {}
    desc: dict[str, str] = {}

    def add(name: str, values: Any, text: str) -> None:
        if name in cols:
            raise InputError(
                f"output column {name!r} would appear twice (rename the id column or a class)"
            )
        cols[name] = np.asarray(values)
        desc[name] = text

    if id_name == "row":
        add("row", ids, "row number in the input table (1 = first data row after the header)")
    else:
        add(id_name, ids, f"the input's id column {id_name!r}, carried through")
    if split is not None:
        add("split", split, "part of the data set the row belongs to")
    add("predicted", report.label, "most probable class")
    if observed is not None:
        add("observed", observed, "the row's label in the input (empty: missing)")
    for k, c in enumerate(classes):
        add(f"p_{c}", report.proba[:, k], f"estimated probability of class {c!r}")
    for key, values in report.extra.items():
        bracket = _bracket_name(key, classes)
        interval = _interval_name(key, classes)
        if interval is not None:
            side = "lower" if key.startswith(INTERVAL_LO) else "upper"
            add(
                interval, values,
                f"{side} end of a {INTERVAL_LEVEL:.0%} interval for the probability of "
                f"{interval[2:-3]!r} (the estimate +- z sqrt(Jeffreys variance of the labels of "
                "the cross-fitted points nearest in estimate + the cross-fitted fits' "
                "jackknife variance); docs/notes/calibration.md)",
            )  # fmt: skip
        elif bracket is not None:
            side = "lower" if key.startswith("lo_") else "upper"
            add(bracket, values, f"{side} end of the ladder's bracket of {bracket[2:-6]!r}")
        elif key == "monotone":
            add(
                "non_monotone",
                (~np.asarray(values, dtype=bool)).astype(int),
                "1 when the point's labels along the weight ladder flip more than once "
                "(its probability then comes from the rule), else 0",
            )
        else:
            add(key, values, "scheme-specific column of the estimator's report")
    return cols, desc


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        return "NA" if not math.isfinite(value) else format(float(value), FLOAT_FORMAT)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def csv_bytes(columns: Mapping[str, np.ndarray]) -> bytes:
    """UTF-8 CSV text of ``columns``: header line, ``\\n`` line ends, minimal quoting."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(list(columns))
    n = len(next(iter(columns.values()))) if columns else 0
    lists = [list(v) for v in columns.values()]
    for i in range(n):
        writer.writerow([_cell(col[i]) for col in lists])
    return buf.getvalue().encode("utf-8")


def plain_json(value: Any) -> Any:
    """``value`` with numpy types as Python ones and non-finite floats as None."""
    if isinstance(value, dict):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return [plain_json(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def results_files(
    path: str | os.PathLike,
    report: ProbabilityReport,
    *,
    ids: np.ndarray | None = None,
    id_name: str = "row",
    observed: np.ndarray | None = None,
    split: np.ndarray | None = None,
    settings: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
    """The sidecar and the bytes of the CSV and its sidecar, for :func:`write_together`.

    Parameters are those of :func:`write_results`.

    Returns
    -------
    sidecar : dict
    files : list of (path, bytes)
        The CSV, then the sidecar (renamed last: it vouches for the CSV).
    """
    n = report.proba.shape[0]
    ids = np.arange(1, n + 1) if ids is None else np.asarray(ids)
    columns, descriptions = probability_columns(report, ids, id_name, observed, split)
    return table_files(path, columns, descriptions, settings, meta)


def table_files(
    path: str | os.PathLike,
    columns: Mapping[str, np.ndarray],
    descriptions: Mapping[str, str],
    settings: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
    """A CSV of ``columns`` (name -> (n,) values) and its sidecar describing each column,
    recording ``settings``, ``meta`` and the CSV's sha256 (see :func:`results_files`)."""
    data = csv_bytes(columns)
    n = len(next(iter(columns.values()))) if columns else 0
    sidecar = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "wsvmgui_version": __version__,
        "csv": os.path.basename(os.fspath(path)),
        "csv_sha256": hashlib.sha256(data).hexdigest(),
        "rows": int(n),
        "columns": [{"name": k, "description": descriptions[k]} for k in columns],
        "settings": plain_json(dict(settings or {})),
        "meta": plain_json(dict(meta or {})),
    }
    text = json.dumps(sidecar, indent=2, sort_keys=True, allow_nan=False) + "\n"
    return sidecar, [(os.fspath(path), data), (sidecar_path(path), text.encode("utf-8"))]


def unique_name(name: str, taken: set[str] | list[str]) -> str:
    """``name``, or ``name_2``, ``name_3``, ... the first not in ``taken``."""
    if name not in taken:
        return name
    k = 2
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def table_with_probabilities(
    table: Mapping[str, np.ndarray],
    report: ProbabilityReport,
    at: np.ndarray,
    split: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """An input table with the probability columns appended (the Orange and JASP habit).

    Parameters
    ----------
    table : mapping of str to ndarray, shape (N,) each
        The input table's columns, cells as written (ids among them, untouched).
    report : ProbabilityReport
        For m of its rows.
    at : ndarray of int, shape (m,)
        The table row (0-based) of each report row; the other rows (left out for
        missing values) get empty cells.
    split : ndarray of str, shape (m,), optional
        Part of the data set of each report row.

    Returns
    -------
    columns : dict of str to ndarray, shape (N,) each
        The table's columns, then ``split``, ``predicted`` and ``p_<class>``; a name the
        table already uses gets a suffix (``p_a_2``).
    descriptions : dict of str to str
    """
    cols: dict[str, np.ndarray] = {k: np.asarray(v, dtype=object) for k, v in table.items()}
    desc = {k: "column of the input table, as written" for k in cols}
    n = len(next(iter(cols.values()))) if cols else 0
    at = np.asarray(at, dtype=int)

    def add(name: str, values: Any, text: str) -> None:
        out = np.full(n, None, dtype=object)
        out[at] = list(np.asarray(values))
        key = unique_name(name, set(cols))
        cols[key] = out
        desc[key] = text + " (empty: the row was not used)"

    if split is not None:
        add("split", split, "part of the data set the row belongs to")
    add("predicted", report.label, "most probable class")
    for k, c in enumerate(report.classes):
        add(f"p_{c}", report.proba[:, k], f"estimated probability of class {str(c)!r}")
    return cols, desc


def write_results(
    path: str | os.PathLike,
    report: ProbabilityReport,
    *,
    ids: np.ndarray | None = None,
    id_name: str = "row",
    observed: np.ndarray | None = None,
    split: np.ndarray | None = None,
    settings: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the probabilities CSV and its sidecar together (:func:`write_together`).

    Parameters
    ----------
    path : path-like
        The CSV; the sidecar goes to :func:`sidecar_path`.
    report : ProbabilityReport
        For n rows.
    ids : ndarray, shape (n,), optional
        Row identity; default 1..n.
    id_name, observed, split
        See :func:`probability_columns`.
    settings, meta : mappings, optional
        Recorded in the sidecar (plain JSON).

    Returns
    -------
    dict
        The sidecar's content.
    """
    sidecar, files = results_files(
        path, report, ids=ids, id_name=id_name, observed=observed, split=split,
        settings=settings, meta=meta,
    )  # fmt: skip
    write_together(files)
    return sidecar


def read_results(path: str | os.PathLike):
    """Read a probabilities CSV and its sidecar, checking that they belong together.

    Returns
    -------
    frame : pandas.DataFrame
    sidecar : dict
    """
    import pandas as pd

    check_input(path, "probabilities")
    side = sidecar_path(path)
    check_input(side, "sidecar")
    try:
        with open(side, encoding="utf-8") as handle:
            sidecar = json.load(handle)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        why = "nested too deep" if isinstance(exc, RecursionError) else exc
        raise InputError(f"{side} is not a JSON sidecar: {why}") from None
    with open(path, "rb") as handle:
        data = handle.read()
    if not isinstance(sidecar, dict) or sidecar.get("format") != FORMAT:
        raise InputError(f"{side} is not a wsvmgui probabilities sidecar")
    if sidecar.get("csv_sha256") != hashlib.sha256(data).hexdigest():
        raise InputError(f"{side} does not belong to {path} (the CSV's sha256 differs)")
    return pd.read_csv(io.BytesIO(data)), sidecar


def write_probabilities_csv(
    path: str | os.PathLike,
    report: ProbabilityReport,
    settings: Any,
    meta: dict[str, Any] | None = None,
    ids: np.ndarray | None = None,
    split: np.ndarray | None = None,
    *,
    id_name: str = "row",
    observed: np.ndarray | None = None,
) -> None:
    """The app's export: :func:`write_results` with the rows' ids (1-based row numbers
    by default, or an id column's cells under ``id_name``) and labels.

    ``settings`` is a ``RunSettings`` (its ``to_dict()`` is recorded) or a dict.
    """
    settings_dict = settings.to_dict() if hasattr(settings, "to_dict") else dict(settings)
    write_results(
        path, report, ids=ids, id_name=id_name, observed=observed, split=split,
        settings=settings_dict, meta=meta,
    )  # fmt: skip


def read_probabilities_csv(path: str | os.PathLike):
    """Read a file written by :func:`write_results`: (frame, settings, meta)."""
    frame, sidecar = read_results(path)
    return frame, sidecar.get("settings", {}), sidecar.get("meta", {})
