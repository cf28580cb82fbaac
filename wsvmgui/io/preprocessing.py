"""What happens to the features before the estimator: missing values and standardisation.

The command line and the app fit one :class:`Preprocessing` on the training rows, apply it
to every row the estimator sees (training, tuning and predicted rows), and store it in
model files and result sidecars as plain data.  The library estimators themselves stay
plain scikit-learn estimators; scaling there is the user's ``Pipeline``.

Missing values (``missing``):

- ``"error"`` (the default): refuse, with the count per column;
- ``"drop"``: leave out rows with a missing feature (and, in training data, a missing
  label);
- ``"impute"``: fill each feature's missing cells with its training median (labels cannot
  be imputed: a training row without a label is still an error).

Standardisation (on by default): every feature minus its training mean, divided by its
training standard deviation (a constant feature is only centred).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .tables import LabelledData

MISSING_CHOICES = ("error", "drop", "impute")
KERNEL_LIMIT = 1e150  # larger |x| overflows squared distances in float64


class MissingValuesError(InputError):
    """Missing values where the choice is to refuse them; ``counts`` per column."""

    def __init__(self, message: str, counts: dict[str, int]) -> None:
        super().__init__(message)
        self.counts = counts


def check_missing_choice(missing: str) -> str:
    """Return ``missing`` if it is one of :data:`MISSING_CHOICES`, else raise InputError."""
    if missing not in MISSING_CHOICES:
        raise InputError(
            f"unknown missing-value choice {missing!r}; choose one of {', '.join(MISSING_CHOICES)}"
        )
    return missing


def missing_counts(data: LabelledData) -> dict[str, int]:
    """Missing cells per column (the label first), only columns with any."""
    counts: dict[str, int] = {}
    if data.label is not None:
        n = int(data.label_missing().sum())
        if n:
            counts[data.label] = n
    for name, n in zip(data.feature_names, np.isnan(data.X).sum(axis=0), strict=True):
        if n:
            counts[name] = int(n)
    return counts


def check_complete(data: LabelledData, what: str = "rows", labels: bool = True) -> None:
    """Raise :class:`MissingValuesError` if any feature (or label) cell is missing.

    The message counts the incomplete rows and the missing cells of each column, names
    the first incomplete row, and says how to drop or impute them.  ``labels=False``
    ignores the label column (rows to predict need none).
    """
    incomplete = np.isnan(data.X).any(axis=1)
    if labels:
        incomplete |= data.label_missing()
    if not incomplete.any():
        return
    counts = missing_counts(data)
    if not labels and data.label is not None:
        counts.pop(data.label, None)
    first = int(data.rows[np.flatnonzero(incomplete)[0]])
    per_column = ", ".join(f"{name!r}: {n}" for name, n in counts.items())
    raise MissingValuesError(
        f"{data.source}: {int(incomplete.sum())} of {data.n} {what} have missing values "
        f"(first row {first}; missing per column: {per_column}); leave those rows out "
        "(--missing drop) or fill in training medians (--missing impute)",
        counts,
    )


def check_kernel_range(X: np.ndarray, data: LabelledData, keep: np.ndarray | None = None) -> None:
    """Raise InputError naming the first cell of ``X`` too large for a kernel.

    Parameters
    ----------
    X : ndarray, shape (m, p)
        Model inputs (after preprocessing).
    data : LabelledData
        The rows' source (for names and row numbers); ``keep`` selects the m rows of it.
    keep : ndarray of bool, shape (n,), optional
    """
    bad = ~np.isfinite(X) | (np.abs(X) > KERNEL_LIMIT)
    if not bad.any():
        return
    i, j = (int(v[0]) for v in np.nonzero(bad))
    rows = data.rows if keep is None else data.rows[keep]
    raw = data.X if keep is None else data.X[keep]
    raise InputError(
        f"{data.source}: feature {data.feature_names[j]!r} row {rows[i]}: value {raw[i, j]:.6g} "
        "is too large for the kernel (squared distances overflow); rescale the column"
    )


#: Largest kernel value the solvers can use (libsvm caches kernel rows as float32: 3.4e38).
KERNEL_VALUE_LIMIT = 1e30


def check_kernel_scale(
    rows: PreparedRows, kernel: str, degree: int = 3, coef0: float = 1.0, gamma: float = 1.0
) -> None:
    """Raise InputError when the linear or polynomial kernel of the rows overflows.

    ``K(x, x) = |x|^2`` (linear) or ``(gamma |x|^2 + coef0)^degree`` (polynomial) must stay
    below :data:`KERNEL_VALUE_LIMIT` (1e30); the RBF kernel is at most 1 (its inputs are
    bounded by :func:`check_kernel_range`).  The message names the row, its largest
    feature, and the scale.

    Parameters
    ----------
    rows : PreparedRows
        Model inputs ``rows.X`` (m, p) and where they came from.
    kernel : {"rbf", "linear", "poly"}
    degree, coef0, gamma : polynomial kernel parameters.
    """
    X = rows.X
    if kernel not in ("linear", "poly") or X.size == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.einsum("ij,ij->i", X, X)
    i = int(np.argmax(np.where(np.isnan(sq), np.inf, sq)))
    top = float(sq[i])
    with np.errstate(over="ignore", divide="ignore"):
        base = top if kernel == "linear" else abs(gamma) * top + abs(coef0)
        log10 = np.log10(base) * (1 if kernel == "linear" else degree) if base > 0 else -np.inf
    if not log10 > np.log10(KERNEL_VALUE_LIMIT):
        return
    j = int(np.argmax(np.abs(X[i])))
    data = rows.data
    where = (
        f"{data.source}: row {data.rows[i]} (feature {data.feature_names[j]!r} = "
        f"{data.X[i, j]:.6g})"
    )
    if kernel == "linear":
        raise InputError(
            f"{where} is too large for the linear kernel: its squared norm is about "
            f"1e{log10:.0f}, above 1e30; rescale the features (or drop --no-standardize)"
        )
    raise InputError(
        f"{where}: the polynomial kernel of degree {degree} reaches about 1e{log10:.0f} there, "
        f"above 1e30; use a lower --degree, smaller features, or standardised features"
    )


def _robust_mean_std(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations without overflow for values near 1e308."""
    top = np.max(np.abs(X), axis=0)
    top[top == 0] = 1.0
    Z = X / top
    return np.mean(Z, axis=0) * top, np.std(Z, axis=0) * top


@dataclass(frozen=True)
class Preprocessing:
    """Missing-value handling and standardisation fitted on training rows.

    Attributes
    ----------
    feature_names : tuple of str, length p
    missing : {"error", "drop", "impute"}
    medians : ndarray, shape (p,), or None
        Training medians (``missing == "impute"`` only).
    means, scales : ndarrays, shape (p,), or None
        Training means and standard deviations (1 for a constant feature); None when not
        standardising.
    """

    feature_names: tuple[str, ...]
    missing: str = "error"
    medians: np.ndarray | None = None
    means: np.ndarray | None = None
    scales: np.ndarray | None = None

    @property
    def standardize(self) -> bool:
        return self.means is not None

    @classmethod
    def fit(
        cls,
        X: np.ndarray,
        feature_names: Sequence[str],
        missing: str = "error",
        standardize: bool = True,
    ) -> Preprocessing:
        """Fit on training features ``X`` (n, p), NaN where missing.

        With ``"error"`` or ``"drop"`` only complete rows are used; with ``"impute"`` the
        medians come from each column's present values and the means and scales from
        the imputed rows.

        Raises
        ------
        InputError
            No complete rows (drop), a feature with no value at all (impute), or values
            whose spread cannot be computed.
        """
        check_missing_choice(missing)
        X = np.asarray(X, dtype=float)
        names = tuple(str(n) for n in feature_names)
        if X.ndim != 2 or X.shape[1] != len(names):
            raise InputError(f"expected {len(names)} feature columns, got shape {X.shape}")
        medians = None
        if missing == "impute":
            empty = np.isnan(X).all(axis=0)
            if empty.any():
                raise InputError(
                    f"feature {names[int(np.flatnonzero(empty)[0])]!r} has no values in the "
                    "training rows; there is no median to impute"
                )
            medians = np.nanmedian(X, axis=0)
            X = np.where(np.isnan(X), medians, X)
        else:
            X = X[~np.isnan(X).any(axis=1)]
            if X.shape[0] == 0:
                raise InputError("no training row is complete (every row has a missing value)")
        means = scales = None
        if standardize:
            means, scales = _robust_mean_std(X)
            scales = np.where(scales > 0, scales, 1.0)
            if not (np.isfinite(means).all() and np.isfinite(scales).all()):
                raise InputError("feature values are too large to standardise")
        return cls(names, missing, medians, means, scales)

    def complete(self, data: LabelledData, what: str = "rows", labels: bool = True) -> np.ndarray:
        """Rows of ``data`` this preprocessing can use; bool, shape (n,).

        ``"error"`` raises :class:`MissingValuesError` on any missing feature (and label,
        when ``labels``); ``"drop"`` keeps the complete rows; ``"impute"`` keeps every
        row (but a missing label is still an error when ``labels``).  Rows to predict
        pass ``labels=False``: their label column, if any, is only reported.
        """
        self._check_features(data)
        if self.missing == "error":
            check_complete(data, what, labels)
            return np.ones(data.n, dtype=bool)
        keep = ~data.label_missing() if labels else np.ones(data.n, dtype=bool)
        if self.missing == "impute":
            if not keep.all():
                first = int(data.rows[np.flatnonzero(~keep)[0]])
                raise InputError(
                    f"{data.source}: {int((~keep).sum())} {what} have no label (first row "
                    f"{first}); labels cannot be imputed: fill them in or use --missing drop"
                )
            return keep
        return keep & ~np.isnan(data.X).any(axis=1)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Impute (when chosen) and standardise ``X`` (m, p); returns a new (m, p) array."""
        X = np.array(X, dtype=float)
        if self.medians is not None:
            X = np.where(np.isnan(X), self.medians, X)
        if self.means is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                X = (X - self.means) / self.scales
        return X

    def prepare(
        self, data: LabelledData, what: str = "rows", labels: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Model inputs for the usable rows of ``data`` (``labels`` as in :meth:`complete`).

        Returns
        -------
        X : ndarray, shape (m, p)
            Transformed features of the kept rows, checked to be in the kernel's range.
        keep : ndarray of bool, shape (n,)
            Which rows of ``data`` were kept.
        """
        keep = self.complete(data, what, labels)
        if not keep.any():
            raise InputError(f"{data.source}: no {what} left after dropping missing values")
        X = self.transform(data.X[keep])
        check_kernel_range(X, data, keep)
        return X, keep

    def _check_features(self, data: LabelledData) -> None:
        if tuple(data.feature_names) != self.feature_names:
            raise InputError(
                f"{data.source}: features {list(data.feature_names)} do not match the "
                f"fitted {list(self.feature_names)}"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (lists of floats)."""

        def plain(a):
            return None if a is None else [float(v) for v in a]

        return {
            "feature_names": list(self.feature_names),
            "missing": self.missing,
            "standardize": self.standardize,
            "medians": plain(self.medians),
            "means": plain(self.means),
            "scales": plain(self.scales),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Preprocessing:
        """Rebuild from :meth:`to_dict`; InputError naming the first bad entry."""
        if not isinstance(data, dict):
            raise InputError("preprocessing must be a mapping")
        names = data.get("feature_names")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise InputError("preprocessing: feature_names must be a non-empty list of names")
        missing = data.get("missing")
        if not isinstance(missing, str):
            raise InputError("preprocessing: missing must be a name")
        check_missing_choice(missing)
        arrays: dict[str, np.ndarray | None] = {}
        for key in ("medians", "means", "scales"):
            value = data.get(key)
            if value is None:
                arrays[key] = None
                continue
            try:
                arr = np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                raise InputError(f"preprocessing: {key} must be a list of numbers") from None
            if arr.shape != (len(names),) or not np.isfinite(arr).all():
                raise InputError(f"preprocessing: {key} must hold {len(names)} finite numbers")
            arrays[key] = arr
        if (missing == "impute") != (arrays["medians"] is not None):
            raise InputError("preprocessing: medians must be given exactly when imputing")
        if (arrays["means"] is None) != (arrays["scales"] is None):
            raise InputError("preprocessing: means and scales go together")
        if arrays["scales"] is not None and not (arrays["scales"] > 0).all():
            raise InputError("preprocessing: scales must be positive")
        if data.get("standardize", arrays["means"] is not None) != (arrays["means"] is not None):
            raise InputError("preprocessing: standardize does not match means and scales")
        return cls(tuple(names), missing, **arrays)

    def describe(self) -> str:
        """One line for messages and logs."""
        scale = "standardised by training means and scales" if self.standardize else "unscaled"
        return f"{len(self.feature_names)} features, missing values: {self.missing}, {scale}"


@dataclass(frozen=True)
class PreparedRows:
    """Rows ready for the estimator, with what was done to them.

    Attributes
    ----------
    data : LabelledData
        The kept rows (ids, row numbers, labels).
    X : ndarray, shape (m, p)
        Model inputs.
    n_read : int
        Rows in the file.
    n_dropped : int
        Rows left out for missing values.
    """

    data: LabelledData
    X: np.ndarray
    n_read: int

    @property
    def n_dropped(self) -> int:
        return self.n_read - self.data.n

    def summary(self) -> dict[str, Any]:
        """Provenance: file digest, rows read, used and dropped."""
        return {
            "file": os.path.basename(self.data.source),
            "sha256": self.data.sha256,
            "rows_read": self.n_read,
            "rows_used": self.data.n,
            "rows_dropped_missing": self.n_dropped,
        }


def prepare_training(
    data: LabelledData, missing: str = "error", standardize: bool = True
) -> tuple[Preprocessing, PreparedRows]:
    """Fit the preprocessing on training rows and apply it.

    Rows without a label are dropped (``"drop"``) or refused; the preprocessing is fitted
    on the rows that keep a label.

    Returns
    -------
    preprocessing : Preprocessing
    rows : PreparedRows
    """
    check_missing_choice(missing)
    if data.y is None:
        raise InputError(f"{data.source}: training data need a label column")
    if missing == "error":
        check_complete(data, "training rows")
    labelled = ~data.label_missing()
    pre = Preprocessing.fit(data.X[labelled], data.feature_names, missing, standardize)
    return pre, prepare_rows(pre, data, "training rows", labels=True)


def prepare_rows(
    pre: Preprocessing, data: LabelledData, what: str = "rows", labels: bool = False
) -> PreparedRows:
    """Apply a fitted preprocessing to rows: tuning rows (``labels=True``: a row without
    a label is dropped or refused like a missing feature) or rows to predict."""
    X, keep = pre.prepare(data, what, labels)
    return PreparedRows(data.subset(keep), X, data.n)
