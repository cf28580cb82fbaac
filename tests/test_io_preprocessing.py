"""Missing values (error, drop, impute) and standardisation by the training rows."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.io.preprocessing import (
    MissingValuesError,
    Preprocessing,
    prepare_rows,
    prepare_training,
)
from wsvmgui.io.tables import read_data


def _data(tmp_path, text, name="t.csv", **kw):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_data(path, "label", **kw)


TRAIN = "a,b,label\n1,10,x\n2,,y\n3,30,x\n,40,y\n5,50,\n7,70,y\n"


def test_error_counts_missing_per_column_and_hints(tmp_path):
    data = _data(tmp_path, TRAIN)
    with pytest.raises(MissingValuesError) as info:
        prepare_training(data, "error")
    msg = str(info.value)
    assert "3 of 6 training rows have missing values (first row 2" in msg
    assert info.value.counts == {"label": 1, "a": 1, "b": 1}
    assert "--missing drop" in msg and "--missing impute" in msg


def test_drop_leaves_out_incomplete_rows_and_fits_on_the_rest(tmp_path):
    data = _data(tmp_path, TRAIN)
    pre, rows = prepare_training(data, "drop", standardize=True)
    assert rows.n_read == 6 and rows.n_dropped == 3
    assert rows.data.rows.tolist() == [1, 3, 6]
    assert rows.data.y.tolist() == ["x", "x", "y"]
    kept = np.array([[1, 10], [3, 30], [7, 70]], dtype=float)
    np.testing.assert_allclose(pre.means, kept.mean(axis=0))
    np.testing.assert_allclose(pre.scales, kept.std(axis=0))
    np.testing.assert_allclose(rows.X, (kept - kept.mean(0)) / kept.std(0))
    np.testing.assert_allclose(rows.X.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(rows.X.std(0), 1)


def test_impute_uses_training_medians_for_training_and_new_rows(tmp_path):
    data = _data(tmp_path, TRAIN.replace("5,50,\n", "5,50,x\n"))
    pre, rows = prepare_training(data, "impute", standardize=False)
    # medians of the present values: a in {1,2,3,5,7} -> 3; b in {10,30,40,50,70} -> 40
    assert pre.medians.tolist() == [3.0, 40.0]
    assert rows.n_dropped == 0
    assert rows.X[1].tolist() == [2.0, 40.0] and rows.X[3].tolist() == [3.0, 40.0]
    new = _data(tmp_path, "a,b\n,1\n9,\n", name="new.csv", require_label=False)
    pred = prepare_rows(pre, new)
    assert pred.X.tolist() == [[3.0, 1.0], [9.0, 40.0]]
    restored = Preprocessing.from_dict(pre.to_dict())
    assert restored.to_dict() == pre.to_dict()
    np.testing.assert_array_equal(restored.transform(new.X), pred.X)


def test_impute_refuses_rows_without_label(tmp_path):
    with pytest.raises(InputError, match="1 training rows have no label.*cannot be imputed"):
        prepare_training(_data(tmp_path, TRAIN), "impute")


def test_rows_to_predict_need_no_label_but_drop_missing_features(tmp_path):
    pre, _ = prepare_training(_data(tmp_path, TRAIN), "drop")
    new = _data(tmp_path, "a,b,label\n1,2,\n,3,x\n4,5,y\n", name="n.csv", require_label=False)
    rows = prepare_rows(pre, new)
    assert rows.data.rows.tolist() == [1, 3] and rows.n_dropped == 1
    assert rows.data.y.tolist() == [None, "y"]  # an unlabelled row is still predicted


def test_standardisation_of_new_rows_uses_training_statistics(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal([5.0, -300.0, 0.0], [2.0, 100.0, 1e-3], size=(50, 3))
    pre = Preprocessing.fit(X, ["a", "b", "c"], standardize=True)
    X_new = rng.normal(size=(7, 3))
    np.testing.assert_allclose(pre.transform(X_new), (X_new - X.mean(0)) / X.std(0))
    const = Preprocessing.fit(np.column_stack([X[:, 0], np.full(50, 4.0)]), ["a", "k"])
    assert const.scales[1] == 1.0 and const.means[1] == 4.0
    plain = Preprocessing.fit(X, ["a", "b", "c"], standardize=False)
    assert not plain.standardize
    np.testing.assert_array_equal(plain.transform(X_new), X_new)


def test_huge_values_standardise_without_overflow(tmp_path):
    X = np.array([[1e308, 1.0], [-1e308, 2.0], [5e307, 3.0]])
    pre = Preprocessing.fit(X, ["big", "small"])
    Z = pre.transform(X)
    assert np.isfinite(Z).all()
    np.testing.assert_allclose(Z.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(Z.std(0), 1)


def test_values_too_large_for_the_kernel_are_named(tmp_path):
    data = _data(tmp_path, "a,b,label\n1,1e200,x\n2,3,y\n")
    with pytest.raises(InputError) as info:
        prepare_training(data, standardize=False)
    msg = str(info.value)
    assert "'b' row 1" in msg and "too large for the kernel" in msg
    pre, _ = prepare_training(_data(tmp_path, "a,b,label\n1,1,x\n2,1.000001,y\n"))
    far = _data(tmp_path, "a,b\n1,1e308\n", name="far.csv", require_label=False)
    with pytest.raises(InputError, match="'b' row 1: value 1e\\+308 is too large"):
        prepare_rows(pre, far)


@pytest.mark.parametrize(
    "change, pattern",
    [
        ({"missing": "guess"}, "unknown missing-value choice"),
        ({"feature_names": []}, "feature_names"),
        ({"means": [0.0]}, "means must hold 2 finite numbers"),
        ({"scales": [1.0, 0.0]}, "scales must be positive"),
        ({"scales": None}, "means and scales go together"),
        ({"medians": [1.0, 2.0]}, "medians must be given exactly when imputing"),
        ({"means": ["a", "b"]}, "means must be a list of numbers"),
        ({"standardize": False}, "standardize does not match"),
    ],
)
def test_from_dict_refuses_bad_entries(change, pattern):
    good = Preprocessing.fit(np.array([[1.0, 2.0], [3.0, 5.0]]), ["a", "b"]).to_dict()
    with pytest.raises(InputError, match=pattern):
        Preprocessing.from_dict({**good, **change})


def test_feature_mismatch_is_refused(tmp_path):
    pre, _ = prepare_training(_data(tmp_path, "a,b,label\n1,2,x\n3,4,y\n"))
    other = _data(tmp_path, "b,a\n1,2\n", name="o.csv", require_label=False)
    assert other.feature_names == ("b", "a")
    with pytest.raises(InputError, match="do not match the fitted"):
        prepare_rows(pre, other)
