"""Input checks: one clear message naming the problem, its column and its (1-based) row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wsvmgui.errors import InputError
from wsvmgui.estimators._validation import (
    check_finite,
    check_labels,
    check_numeric,
    validate_fit_data,
    validate_predict_data,
)
from wsvmgui.estimators.binary import WeightedSVMClassifier


def _one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and msg
    return msg


def test_check_numeric_frame_names_column_and_row():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["1", "2", "x7"]})
    with pytest.raises(InputError) as info:
        check_numeric(frame)
    msg = _one_line(info)
    assert "'b'" in msg and "row 3" in msg and "x7" in msg


def test_check_numeric_accepts_numeric_strings():
    check_numeric(pd.DataFrame({"a": ["1.5", "2"], "b": [1, 2]}))
    check_numeric(np.array([["1", "2"], ["3", "4.5"]], dtype=object))


def test_check_numeric_array_names_column_and_row():
    X = np.array([[1, 2], [3, "oops"], [5, 6]], dtype=object)
    with pytest.raises(InputError) as info:
        check_numeric(X)
    msg = _one_line(info)
    assert "column 2" in msg and "row 2" in msg and "oops" in msg


def test_complex_features_rejected():
    with pytest.raises(InputError, match="Complex"):
        check_numeric(np.array([[1 + 2j, 1]]))


@pytest.mark.parametrize(
    "value, what", [(np.nan, "missing value"), (np.inf, "infinite"), (-np.inf, "infinite")]
)
def test_check_finite_names_column_and_row(value, what):
    X = np.ones((5, 3))
    X[3, 1] = value
    with pytest.raises(InputError) as info:
        check_finite(X)
    msg = _one_line(info)
    assert "column 2" in msg and "row 4" in msg and what in msg


def test_check_finite_counts_and_uses_names():
    X = np.ones((5, 2))
    X[1, 1] = X[2, 1] = X[4, 0] = np.nan
    with pytest.raises(InputError) as info:
        check_finite(X, ["feature 'age'", "feature 'dose'"])
    msg = _one_line(info)
    # First bad column in column order, its first bad row; total count mentioned.
    assert "'age'" in msg and "row 5" in msg and "3 non-finite" in msg


def test_check_labels():
    assert list(check_labels(np.array(["b", "a", "b"]))) == ["a", "b"]
    with pytest.raises(InputError, match="one class"):
        check_labels(np.array([1, 1, 1]))
    with pytest.raises(InputError, match="row 2"):
        check_labels(np.array([1.0, np.nan, 2.0]))
    with pytest.raises(InputError, match="missing"):
        check_labels(np.array(["a", None, "b"], dtype=object))
    with pytest.raises(InputError, match="'c'"):
        check_labels(np.array(["a"] * 5 + ["b"] * 5 + ["c"]), min_per_class=2)
    with pytest.raises(InputError, match="Only binary"):
        check_labels(np.array([1, 2, 3]), n_classes=2)
    with pytest.raises(InputError, match="continuous"):
        check_labels(np.linspace(0, 1, 20) + 0.01, n_classes=2)
    # scikit-learn's rule: non-integer numbers are a continuous target, even two of them.
    with pytest.raises(InputError, match="Unknown label type: continuous"):
        check_labels(np.array([0.5, 1.5, 0.5]), n_classes=2)
    # Integers held in an object array (a pandas column) name classes like integers.
    assert check_labels(np.array([2, 1, 2], dtype=object)).tolist() == [1, 2]
    with pytest.raises(InputError, match="mixes kinds"):
        check_labels(np.array([1, "a", 1], dtype=object))


def test_validate_fit_data_with_frame_names_columns():
    est = WeightedSVMClassifier()
    frame = pd.DataFrame({"age": [1.0, 2.0, 3.0, 4.0], "dose": [1.0, np.nan, 3.0, 4.0]})
    with pytest.raises(InputError) as info:
        validate_fit_data(est, frame, np.array([1, -1, 1, -1]))
    msg = _one_line(info)
    assert "'dose'" in msg and "row 2" in msg
    frame.loc[1, "dose"] = 2.0
    X, classes, codes = validate_fit_data(est, frame, np.array([1, -1, 1, -1]))
    assert X.dtype == float and X.shape == (4, 2)
    assert classes.tolist() == [-1, 1] and codes.tolist() == [1, 0, 1, 0]
    assert list(est.feature_names_in_) == ["age", "dose"]


def test_validate_predict_data_checks_values_and_width():
    est = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=3)
    rng = np.random.default_rng(0)
    est.fit(rng.normal(size=(20, 2)), np.array([1, -1] * 10))
    Xn = np.zeros((3, 2))
    Xn[2, 0] = np.inf
    with pytest.raises(InputError, match=r"column 1.*row 3"):
        validate_predict_data(est, Xn)
    with pytest.raises(ValueError, match="3 features"):
        validate_predict_data(est, np.zeros((2, 3)))


def test_y_none_raises():
    with pytest.raises(ValueError, match="requires y"):
        validate_fit_data(WeightedSVMClassifier(), np.zeros((3, 2)), None)
