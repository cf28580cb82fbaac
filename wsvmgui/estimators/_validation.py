"""Input checks with messages that name the problem, its column and its row.

Used by every estimator's ``fit`` and ``predict`` paths and by the command line.  Rows and
columns in messages are 1-based data positions (the first data row is row 1, the header
does not count), or column names when the input carries them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data

from ..errors import InputError, plain_value


class NonNumericError(InputError, TypeError):
    """A feature value that is not a number (an InputError, and a TypeError as numpy's is).

    Parameters
    ----------
    column : str
        Display name of the column.
    value : object
        The offending value.
    row : int
        Its 0-based row.
    """

    def __init__(self, column: str, value, row: int) -> None:
        super().__init__(
            f"{column} is not numeric: value {value!r} at row {row + 1} (the argument must "
            "be a string or a number that reads as a number)"
        )


def _column_names(X, n_columns: int) -> list[str]:
    names = getattr(X, "columns", None)
    if names is not None:
        return [f"feature {str(c)!r}" for c in names]
    return [f"feature column {j + 1}" for j in range(n_columns)]


def check_numeric(X, names: Sequence[str] | None = None) -> None:
    """Raise InputError naming the first value that is not a number.

    Parameters
    ----------
    X : array-like or DataFrame, shape (n, p)
    names : sequence of str, optional
        Display names of the columns.
    """
    if hasattr(X, "dtypes"):  # pandas DataFrame
        frame = X
        names = list(names or _column_names(frame, frame.shape[1]))
        for j, col in enumerate(frame.columns):
            series = frame[col]
            if series.dtype.kind in "biuf":
                continue
            if series.dtype.kind == "c":
                raise InputError(f"Complex data not supported: {names[j]} holds complex numbers")
            converted = _to_float_or_none(series.to_numpy())
            if converted is not None:
                continue
            bad = _first_non_numeric(series.to_numpy())
            raise NonNumericError(names[j], series.iloc[bad], bad)
        return
    arr = np.asarray(X)
    if arr.dtype.kind in "biuf":
        return
    if arr.dtype.kind == "c":
        raise InputError("Complex data not supported: features must be real numbers")
    if arr.ndim != 2:
        return
    names = list(names or _column_names(X, arr.shape[1]))
    for j in range(arr.shape[1]):
        if _to_float_or_none(arr[:, j]) is None:
            bad = _first_non_numeric(arr[:, j])
            raise NonNumericError(names[j], arr[bad, j], bad)


def _to_float_or_none(values: np.ndarray) -> np.ndarray | None:
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return None


def _first_non_numeric(values: np.ndarray) -> int:
    for i, v in enumerate(values):
        try:
            float(v)
        except (TypeError, ValueError):
            return i
    return 0


def _shape(X) -> tuple[int, ...]:
    """Shape of an array-like without calling numpy functions on it directly."""
    shape = getattr(X, "shape", None)
    return tuple(shape) if shape is not None else np.asarray(X).shape


def check_finite(X: np.ndarray, names: Sequence[str] | None = None) -> None:
    """Raise InputError naming the column and row of the first NaN or infinite value.

    Parameters
    ----------
    X : ndarray of float, shape (n, p)
    names : sequence of str, optional
    """
    bad = ~np.isfinite(X)
    if not bad.any():
        return
    names = list(names or _column_names(None, X.shape[1]))
    cols = np.flatnonzero(bad.any(axis=0))
    j = int(cols[0])
    i = int(np.flatnonzero(bad[:, j])[0])
    what = "a missing value (NaN)" if np.isnan(X[i, j]) else "an infinite value"
    count = int(bad.sum())
    more = f" ({count} non-finite values in all)" if count > 1 else ""
    raise InputError(f"{names[j]} has {what} at row {i + 1}{more}")


def check_labels(y: np.ndarray, min_per_class: int = 1, n_classes: int | None = None) -> np.ndarray:
    """Check class labels and return the sorted classes; see :func:`class_codes`.

    Returns
    -------
    ndarray, shape (K,)
    """
    return class_codes(y, min_per_class, n_classes)[0]


def _check_missing(y: np.ndarray) -> None:
    if y.dtype.kind == "f" and np.isnan(y).any():
        row = int(np.flatnonzero(np.isnan(y))[0]) + 1
        raise InputError(f"the label has a missing value at row {row}")
    if y.dtype == object:
        for i, v in enumerate(y):
            if v is None or (isinstance(v, float) and np.isnan(v)):
                raise InputError(f"the label has a missing value at row {i + 1}")


def _check_label_type(y: np.ndarray) -> None:
    """Refuse targets that do not name classes (scikit-learn's rule, clearer words).

    Object arrays are judged by their values, so a pandas column of integers (dtype
    object) is as good as an integer array.
    """
    values = y
    if y.dtype == object:
        try:
            values = np.asarray(y.tolist())
        except (TypeError, ValueError):  # ragged or exotic entries: judge them as they are
            values = y
    try:
        check_classification_targets(values)
    except ValueError:
        kind = type_of_target(values)
        if kind == "continuous":
            n = np.unique(values).size
            raise InputError(
                f"Unknown label type: continuous; the label holds {n} distinct non-integer "
                "numbers, but it must name classes (integers or text)"
            ) from None
        raise InputError(
            f"Unknown label type: {kind}; the label must be one column of class names "
            "(integers or text)"
        ) from None


def class_codes(
    y, min_per_class: int = 1, n_classes: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Check class labels and code them as class indices.

    Checks, in order: no missing value (naming the row), labels that name classes
    (integers, text, or an object array of either; not continuous numbers), at least two
    classes (exactly ``n_classes`` when given), and at least ``min_per_class`` points per
    class.

    Parameters
    ----------
    y : array-like, shape (n,)
    min_per_class : int
        Fewest points any class may have.
    n_classes : int, optional
        Exact number of classes required.

    Returns
    -------
    classes : ndarray, shape (K,)
        The sorted classes, with the labels' own values and dtype.
    codes : ndarray of int, shape (n,)
        ``classes[codes] == y``.
    """
    y = np.asarray(y)
    _check_missing(y)
    _check_label_type(y)
    try:
        classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    except TypeError:
        raise InputError(
            "the label mixes kinds of values (e.g. numbers and text); use one kind"
        ) from None
    codes = codes.ravel()
    if classes.size < 2:
        only = f" ({plain_value(classes[0])!r})" if classes.size else ""
        raise InputError(
            f"the data hold only one class{only}; probability estimation needs at least two"
        )
    if n_classes is not None and classes.size != n_classes:
        listed = ", ".join(map(str, classes[:10]))
        if n_classes == 2:
            raise InputError(
                f"Only binary classification is supported by this estimator; the data hold "
                f"{classes.size} classes ({listed})"
            )
        raise InputError(
            f"this estimator needs exactly {n_classes} classes, the data hold {classes.size}"
            f" ({listed})"
        )
    small = counts < min_per_class
    if small.any():
        k = int(np.flatnonzero(small)[0])
        raise InputError(
            f"class {plain_value(classes[k])!r} has only {counts[k]} point(s); "
            f"at least {min_per_class} are needed"
        )
    return classes, codes


def validate_fit_data(
    estimator, X, y, n_classes: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate training inputs for ``estimator`` with clear messages.

    Checks, in order: numeric features (naming column and row), scikit-learn's shape and
    dtype rules (which also set ``n_features_in_`` and ``feature_names_in_``), finite
    values (naming column and row), and the labels (:func:`class_codes`).

    Parameters
    ----------
    estimator : BaseEstimator
    X : array-like, shape (n, p)
    y : array-like, shape (n,)
    n_classes : int, optional
        Exact number of classes required.

    Returns
    -------
    X : ndarray of float, shape (n, p)
    classes : ndarray, shape (K,)
    codes : ndarray of int, shape (n,)
        Class index of every row.
    """
    if y is None:
        # scikit-learn's own wording, which its estimator checks look for.
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )
    shape = _shape(X)
    names = _column_names(X, shape[1]) if len(shape) == 2 else None
    check_numeric(X, names)
    X, y = validate_data(
        estimator, X, y, reset=True, dtype=float, ensure_all_finite=False, y_numeric=False
    )
    check_finite(X, names)
    classes, codes = class_codes(y, n_classes=n_classes)
    return X, classes, codes


def validate_predict_data(estimator, X) -> np.ndarray:
    """Validate inputs for prediction against the fitted ``estimator``; shape (m, p)."""
    shape = _shape(X)
    names = _column_names(X, shape[1]) if len(shape) == 2 else None
    check_numeric(X, names)
    X = validate_data(estimator, X, reset=False, dtype=float, ensure_all_finite=False)
    check_finite(X, names)
    return X
