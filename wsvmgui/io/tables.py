"""Reading data tables as written: exact cells, checked header, numbers parsed per column.

Rules (README "Command line"):

- UTF-8 text (a byte-order mark is allowed), comma-separated for ``.csv``, tab-separated
  for ``.tsv``/``.tab``, otherwise the separator among tab, comma and semicolon that the
  header line holds most of.  Double quotes quote cells.  There is no comment character:
  ``#`` is an ordinary character.  Blank lines are skipped.
- The first line is the header.  Every column needs a name and names must be unique.
  Every line must have as many cells as the header.
- Labels are text, kept exactly: ``1``, ``01`` and `` 1`` are three classes.  A label is
  missing only when its cell is blank or is one of ``na_values``.
- Feature cells are numbers in ASCII decimal notation, as pandas and R read them
  (:mod:`wsvmgui.io.numbers`: ``1_000``, full-width and Arabic-Indic digits are text).
  A feature cell is missing when it is blank, one of
  :data:`FEATURE_NA` (what R, pandas and spreadsheets write for a missing value) or one of
  ``na_values``.  Infinite values are refused.
- Rows are numbered from 1 = the first data row after the header (blank lines are not
  counted); messages and the output's ``row`` column use these numbers.

Errors are :class:`~wsvmgui.errors.InputError` with one line naming the file, the column
and the row.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import InputError
from .atomic import check_input
from .numbers import parse_numbers

FEATURE_NA = ("", "NA", "N/A", "#N/A", "NaN", "nan", "null", "NULL")
FEATURE_NA_SET = frozenset(FEATURE_NA)
SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_SNIFF = ("\t", ",", ";")


@dataclass(frozen=True)
class Table:
    """The cells of a data file as written.

    Attributes
    ----------
    source : str
        The file name as given, for messages.
    columns : tuple of str
        Header names, exactly as written.
    cells : ndarray of str (object), shape (n, c)
    rows : ndarray of int, shape (n,)
        1-based data row numbers.
    sha256 : str
        Hex digest of the file's bytes.
    """

    source: str
    columns: tuple[str, ...]
    cells: np.ndarray
    rows: np.ndarray
    sha256: str

    @property
    def shape(self) -> tuple[int, int]:
        return self.cells.shape

    def column(self, name: str) -> np.ndarray:
        """The cells of column ``name``; shape (n,)."""
        return self.cells[:, self.columns.index(name)]

    def require(self, name: str, what: str = "column") -> None:
        """Raise InputError naming ``name`` (and a near spelling) if it is not a column."""
        if name in self.columns:
            return
        near = [c for c in self.columns if c.strip().lower() == name.strip().lower()]
        hint = f"; did you mean {near[0]!r}?" if near else ""
        listed = ", ".join(repr(c) for c in self.columns[:20])
        more = ", ..." if len(self.columns) > 20 else ""
        raise InputError(
            f"{self.source}: {what} {name!r} is not in the table{hint} (columns: {listed}{more})"
        )


def read_table(path: str | os.PathLike, sep: str | None = None) -> Table:
    """Read a CSV or TSV file's cells exactly as written.

    Parameters
    ----------
    path : path-like
        A regular file (named pipes and devices are refused, never read).
    sep : str, optional
        Force a separator.

    Returns
    -------
    Table
    """
    source = str(path)
    check_input(path, "data")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc.strerror or exc}") from None
    utf16 = _utf16(data)
    if utf16:
        raise InputError(f"{source} is {utf16} text; save it as UTF-8 (wsvmgui reads UTF-8)")
    if b"\x00" in data[:65536]:
        raise InputError(f"{source} is not a text table (it holds binary data)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{source} is not a text table: line {line} is not UTF-8 text (save it as UTF-8)"
        ) from None
    if sep is None:
        sep = SEPARATORS.get(Path(source).suffix.lower()) or _sniff(text)
    header, body, lines = _parse(text, sep, source)
    _check_header(header, source)
    if not body:
        raise InputError(f"{source} has a header but no data rows")
    width = len(header)
    for fields, line in zip(body, lines, strict=True):
        if len(fields) != width:
            raise InputError(
                f"{source} line {line}: {len(fields)} cells, the header has {width}"
                + (" (is the separator right?)" if width == 1 or len(fields) == 1 else "")
            )
    cells = np.empty((len(body), width), dtype=object)
    cells[:] = body
    return Table(
        source,
        tuple(header),
        cells,
        np.arange(1, len(body) + 1),
        hashlib.sha256(data).hexdigest(),
    )


def _utf16(data: bytes) -> str:
    """'UTF-16' (with its byte order) when ``data`` looks like UTF-16 text, else ''."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 " + ("little-endian" if data[0] == 0xFF else "big-endian")
    head = data[:4096]
    if len(head) >= 4:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
            return "UTF-16 little-endian"
        if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
            return "UTF-16 big-endian"
    return ""


def _sniff(text: str) -> str:
    first = text.split("\n", 1)[0]
    counts = [first.count(s) for s in _SNIFF]
    return _SNIFF[int(np.argmax(counts))] if max(counts) else ","


def _parse(text: str, sep: str, source: str) -> tuple[list[str], list[list[str]], list[int]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    rows: list[list[str]] = []
    lines: list[int] = []
    start = 1  # line where the record being read starts
    try:
        for fields in reader:
            if fields and not (len(fields) == 1 and fields[0].strip() == ""):
                rows.append(fields)
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        if reader.line_num >= start and _opens_quote(text, start, sep):
            more = f" (read on to line {reader.line_num})" if reader.line_num > start else ""
            raise InputError(
                f"{source} line {start}: a double quote opened on this line is never closed"
                f"{more}; close it or remove it"
            ) from None
        raise InputError(f"{source} line {reader.line_num}: not a readable table ({exc})") from None
    if not rows:
        raise InputError(f"{source} is empty")
    return rows[0], rows[1:], lines[1:]


def _opens_quote(text: str, line: int, sep: str) -> bool:
    """Whether line ``line`` (1-based) leaves a double quote open at its end."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return False
    open_ = False
    for cell in lines[line - 1].split(sep):
        if not open_ and cell.lstrip().startswith('"'):
            open_ = cell.count('"') % 2 == 1
        elif open_:
            open_ = cell.count('"') % 2 == 0
    return open_


def _check_header(header: list[str], source: str) -> None:
    for k, name in enumerate(header):
        if name.strip() == "":
            raise InputError(
                f"{source}: column {k + 1} of the header has no name; every column needs one"
                " (from R: write.csv(..., row.names = FALSE))"
            )
    seen: dict[str, list[int]] = {}
    for k, name in enumerate(header):
        seen.setdefault(name, []).append(k + 1)
    dups = {n: ks for n, ks in seen.items() if len(ks) > 1}
    if dups:
        name, ks = next(iter(dups.items()))
        where = ", ".join(str(k) for k in ks)
        more = f" (and {len(dups) - 1} more duplicated names)" if len(dups) > 1 else ""
        raise InputError(
            f"{source}: column name {name!r} appears {len(ks)} times (columns {where}){more};"
            " column names must be unique"
        )


@dataclass(frozen=True)
class LabelledData:
    """Feature matrix, labels and row identity of a table.

    Attributes
    ----------
    source : str
        File name for messages.
    X : ndarray of float, shape (n, p)
        Features; NaN where a cell is missing.
    y : ndarray of str (object), shape (n,), or None
        Labels as written; None entries are missing.  None when the table has no label
        column (rows to predict).
    feature_names : tuple of str, length p
    label : str or None
        Label column name (None when absent).
    rows : ndarray of int, shape (n,)
        1-based data row numbers in the file.
    ids : ndarray of str (object), shape (n,), or None
        The id column's cells, when one was named.
    id_name : str
        Name of the row identity in outputs: the id column's name, or ``"row"``.
    sha256 : str
        Digest of the file.
    """

    source: str
    X: np.ndarray
    y: np.ndarray | None
    feature_names: tuple[str, ...]
    label: str | None
    rows: np.ndarray
    ids: np.ndarray | None
    id_name: str
    sha256: str

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def row_ids(self) -> np.ndarray:
        """The id of each row: the id column's cells, else the row numbers; shape (n,)."""
        return self.ids if self.ids is not None else self.rows

    def subset(self, keep: np.ndarray) -> LabelledData:
        """The rows where ``keep`` (bool, shape (n,)) is true."""
        return replace(
            self,
            X=self.X[keep],
            y=None if self.y is None else self.y[keep],
            rows=self.rows[keep],
            ids=None if self.ids is None else self.ids[keep],
        )

    def labels(self) -> np.ndarray:
        """The labels as text, shape (n,); refused when the table has no label column."""
        if self.y is None:
            raise InputError(f"{self.source}: the rows have no label column")
        return self.y.astype(str)

    def label_missing(self) -> np.ndarray:
        """Rows whose label is missing; bool, shape (n,) (all false without labels)."""
        if self.y is None:
            return np.zeros(self.n, dtype=bool)
        return np.asarray([v is None for v in self.y], dtype=bool)


def labelled_data(
    table: Table,
    label: str | None,
    features: Sequence[str] | None = None,
    *,
    id_column: str | None = None,
    na_values: Iterable[str] = (),
    require_label: bool = True,
) -> LabelledData:
    """Pick the label, feature and id columns of a table and parse the features.

    Parameters
    ----------
    table : Table
    label : str or None
        Label column.  With ``require_label=False`` it may be absent from the table (rows
        to predict); then ``y`` is None.
    features : sequence of str, optional
        Feature columns; default every column but the label and the id column.
    id_column : str, optional
        A column carried through as the rows' identity (not a feature).
    na_values : iterable of str
        Further cell values that mean "missing", in every column.
    require_label : bool

    Returns
    -------
    LabelledData
    """
    src = table.source
    extra_na = {str(v).strip() for v in na_values}
    has_label = label is not None and label in table.columns
    if label is not None and not has_label and require_label:
        table.require(label, "label column")
    if id_column is not None:
        table.require(id_column, "id column")
        if id_column == label:
            raise InputError(f"column {label!r} cannot be both the label and the id column")
    if features is None:
        features = [c for c in table.columns if c not in (label, id_column)]
        if not features:
            raise InputError(f"{src}: no feature columns (the table has only {_names(table)})")
    else:
        features = list(features)
        if not features:
            raise InputError("no feature columns chosen")
        for name in features:
            table.require(name, "feature column")
        dup = next((f for f in features if features.count(f) > 1), None)
        if dup is not None:
            raise InputError(f"feature column {dup!r} is chosen twice")
        for column, what in ((label, "the label"), (id_column, "the id column")):
            if column is not None and column in features:
                raise InputError(f"column {column!r} cannot be both {what} and a feature")
    X = np.column_stack([_parse_feature(table, f, FEATURE_NA_SET | extra_na) for f in features])
    y = None
    if label is not None and has_label:
        cells = table.column(label)
        missing = np.asarray([c.strip() == "" or c.strip() in extra_na for c in cells])
        y = np.asarray(cells, dtype=object).copy()
        y[missing] = None
    ids = None
    if id_column is not None:
        ids = np.asarray(table.column(id_column), dtype=object).copy()
    return LabelledData(
        source=src,
        X=X,
        y=y,
        feature_names=tuple(features),
        label=label if has_label else None,
        rows=table.rows.copy(),
        ids=ids,
        id_name=id_column if id_column is not None else "row",
        sha256=table.sha256,
    )


def _names(table: Table) -> str:
    return ", ".join(repr(c) for c in table.columns)


def _parse_feature(table: Table, name: str, na: set[str] | frozenset[str]) -> np.ndarray:
    """Column ``name`` as floats (NaN where missing); InputError naming a bad cell."""
    cells = table.column(name)
    stripped = np.asarray([c.strip() for c in cells], dtype=object)
    missing = np.asarray([c in na for c in stripped], dtype=bool)
    out = np.full(cells.shape[0], np.nan)
    present = np.flatnonzero(~missing)
    values, bad_at = parse_numbers(stripped[present])
    if bad_at >= 0:
        i = int(present[bad_at])
        raise InputError(
            f"{table.source}: feature {name!r} row {table.rows[i]}: {cells[i]!r} is not "
            "numeric (numbers are ASCII digits as pandas and R read them; choose the feature "
            "columns with --features; if the value means missing, add it to --na-values)"
        )
    out[present] = values
    bad = np.isinf(out)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{table.source}: feature {name!r} row {table.rows[i]}: infinite value {cells[i]!r}"
        )
    return out


def read_data(
    path: str | os.PathLike,
    label: str | None,
    features: Sequence[str] | None = None,
    *,
    id_column: str | None = None,
    na_values: Iterable[str] = (),
    require_label: bool = True,
) -> LabelledData:
    """:func:`read_table` then :func:`labelled_data`."""
    return labelled_data(
        read_table(path),
        label,
        features,
        id_column=id_column,
        na_values=na_values,
        require_label=require_label,
    )


def select_xy(
    table: Table,
    label: str,
    features: Sequence[str] | None = None,
    na_values: Iterable[str] = (),
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Label and feature columns of a complete table (a missing value is an error).

    Returns
    -------
    X : ndarray of float, shape (n, p)
    y : ndarray of str, shape (n,)
    feature_names : list of str, length p
    """
    from .preprocessing import check_complete

    data = labelled_data(table, label, features, na_values=na_values)
    check_complete(data)
    return data.X, data.labels(), list(data.feature_names)
