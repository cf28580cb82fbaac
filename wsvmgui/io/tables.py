"""Reading data tables and writing probability tables (pandas; outside the pure core).

Errors are :class:`~wsvmgui.errors.InputError` with one line naming the file, the
column and the row, so the command line and the app can show them as they are.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from ..errors import InputError
from ..estimators._validation import check_finite, check_numeric
from ..estimators.report import ProbabilityReport
from .atomic import atomic_writer

HEADER_PREFIX = "# "


def read_table(path: str | os.PathLike, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV or TSV file.

    The separator is a tab for ``.tsv``/``.tab`` files, a comma for ``.csv``, and sniffed
    otherwise.  Lines starting with ``#`` are comments.

    Parameters
    ----------
    path : path-like
    sep : str, optional
        Force a separator.

    Returns
    -------
    DataFrame, shape (n, columns)
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a data file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\x00" in head:
        raise InputError(f"{path} is not a text table (it holds binary data)")
    if sep is None:
        sep = {".tsv": "\t", ".tab": "\t", ".csv": ","}.get(path.suffix.lower())
    try:
        frame = pd.read_csv(
            path,
            sep=sep,
            comment="#",
            engine="python" if sep is None else "c",
            skipinitialspace=True,
        )
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a text table (it is not valid UTF-8 text)") from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty") from None
    except (pd.errors.ParserError, ValueError, csv_error()) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path} is not a readable CSV/TSV table: {first}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if frame.shape[0] == 0:
        raise InputError(f"{path} has a header but no data rows")
    if frame.shape[1] < 2:
        raise InputError(
            f"{path} has only one column; a data table needs a label and at least one feature"
            " (is the separator right?)"
        )
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def csv_error() -> type[Exception]:
    """The csv module's error type (pandas' python engine raises it)."""
    import csv

    return csv.Error


def select_xy(
    frame: pd.DataFrame, label: str, features: list[str] | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Pick the label column and the feature columns, checking every value.

    Parameters
    ----------
    frame : DataFrame
    label : str
        Label column; labels of any type are kept as they are.
    features : list of str, optional
        Feature columns; default every column but the label.

    Returns
    -------
    X : ndarray of float, shape (n, p)
    y : ndarray, shape (n,)
    feature_names : list of str, length p
    """
    if label not in frame.columns:
        raise InputError(
            f"label column {label!r} is not in the table; columns are: {', '.join(frame.columns)}"
        )
    if features is None:
        features = [c for c in frame.columns if c != label]
    else:
        missing = [c for c in features if c not in frame.columns]
        if missing:
            raise InputError(f"feature column {missing[0]!r} is not in the table")
        if label in features:
            raise InputError(f"column {label!r} cannot be both the label and a feature")
    if not features:
        raise InputError("no feature columns chosen")
    y_series = frame[label]
    if y_series.isna().any():
        row = int(np.flatnonzero(y_series.isna().to_numpy())[0])
        raise InputError(f"label column {label!r} has a missing value at row {row + 1}")
    sub = frame[features]
    names = [f"feature {c!r}" for c in features]
    check_numeric(sub, names)
    X = sub.to_numpy(dtype=float)
    check_finite(X, names)
    y = y_series.to_numpy()
    if y.dtype == object:
        y = np.asarray([v.strip() if isinstance(v, str) else v for v in y], dtype=object)
        if all(isinstance(v, str) for v in y):
            y = y.astype(str)
    return X, y, list(features)


def report_frame(
    report: ProbabilityReport, index: np.ndarray | None = None, split: np.ndarray | None = None
) -> pd.DataFrame:
    """The report as a table: optional ``row`` and ``split`` columns, then its columns."""
    data: dict[str, Any] = {}
    if index is not None:
        data["row"] = np.asarray(index)
    if split is not None:
        data["split"] = np.asarray(split)
    data.update(report.columns())
    return pd.DataFrame(data)


def write_probabilities_csv(
    path: str | os.PathLike,
    report: ProbabilityReport,
    settings: Any,
    meta: dict[str, Any] | None = None,
    index: np.ndarray | None = None,
    split: np.ndarray | None = None,
) -> None:
    """Write probabilities as CSV with the run's settings in ``#`` header lines, atomically.

    Parameters
    ----------
    path : path-like
    report : ProbabilityReport
    settings : RunSettings or dict
        Recorded as JSON on a ``# settings:`` line.
    meta : dict, optional
        Further provenance (data file, model, metrics), on a ``# meta:`` line.
    index : ndarray, shape (n,), optional
        Row numbers in the source data.
    split : ndarray of str, shape (n,), optional
        Which part each row belongs to (train, tune, test, new).
    """
    settings_dict = settings.to_dict() if hasattr(settings, "to_dict") else dict(settings)
    frame = report_frame(report, index, split)
    buf = io.StringIO()
    buf.write(f"{HEADER_PREFIX}wsvmgui {__version__} probabilities\n")
    settings_json = json.dumps(settings_dict, sort_keys=True, default=str)
    buf.write(f"{HEADER_PREFIX}settings: {settings_json}\n")
    buf.write(f"{HEADER_PREFIX}meta: {json.dumps(meta or {}, sort_keys=True, default=str)}\n")
    frame.to_csv(buf, index=False, float_format="%.6g")
    with atomic_writer(path) as handle:
        handle.write(buf.getvalue())


def read_probabilities_csv(path: str | os.PathLike) -> tuple[pd.DataFrame, dict, dict]:
    """Read a file written by :func:`write_probabilities_csv`.

    Returns
    -------
    frame : DataFrame
    settings : dict
    meta : dict
    """
    settings: dict = {}
    meta: dict = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.startswith("#"):
                break
            body = line[1:].strip()
            if body.startswith("settings:"):
                settings = json.loads(body[len("settings:") :])
            elif body.startswith("meta:"):
                meta = json.loads(body[len("meta:") :])
    return pd.read_csv(path, comment="#"), settings, meta
