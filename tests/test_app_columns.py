"""Id columns: proposed, never features, carried into exports (issue 21 items 2 and 3)."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.app.datasets import (
    dataset_from_table,
    guess_columns,
    id_like_name,
    load_builtin,
    text_column_message,
)
from wsvmgui.io.tables import read_table


def _write(path, header, rows):
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path


@pytest.fixture
def wine_with_id(tmp_path):
    """Wine with an ``id`` column in class order (the leak of issue 21 item 2)."""
    ds = load_builtin("sklearn:wine")
    header = "id," + ",".join(ds.feature_names) + ",label"
    rows = [[i + 1, *ds.X[i], f"c{ds.y[i]}"] for i in range(len(ds.y))]
    return _write(tmp_path / "wine.csv", header, rows), ds


def test_an_id_named_column_is_proposed_as_id_never_a_feature(wine_with_id):
    path, ds = wine_with_id
    guess = guess_columns(read_table(path))
    assert guess.label == "label" and guess.id_column == "id"
    assert guess.features == list(ds.feature_names)  # 13 features, not 14
    assert (
        len(guess.notes) == 1 and "'id'" in guess.notes[0] and "not as a feature" in guess.notes[0]
    )
    loaded = dataset_from_table(path, guess.label, guess.features, id_column=guess.id_column)
    assert loaded.X.shape == ds.X.shape
    np.testing.assert_array_equal(loaded.ids, [str(i) for i in range(1, len(ds.y) + 1)])
    np.testing.assert_array_equal(loaded.row_numbers, np.arange(1, len(ds.y) + 1))
    assert loaded.id_name == "id" and "rows named by 'id'" in loaded.summary()


def test_row_numbers_and_sample_ids_are_proposed_too(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 2)).round(3)
    rows = [[10 + i, 500 + 7 * i, *x[i], "ab"[i % 2]] for i in range(8)]
    path = _write(tmp_path / "t.csv", "index,sample_ID,a,b,y", rows)
    guess = guess_columns(read_table(path))
    # "index" steps by one (row numbers); "sample_ID" is named like an id: both stay out
    assert guess.id_column == "index" and guess.features == ["a", "b"]
    assert any("stepping by one" in n for n in guess.notes)
    assert any("'sample_ID'" in n and "left out" in n for n in guess.notes)
    assert id_like_name("sample_id") and id_like_name(" ID ") and not id_like_name("idle")


def test_integer_features_that_do_not_step_by_one_stay_features(tmp_path):
    rows = [[3, 1, 0], [1, 2, 1], [2, 2, 0], [5, 4, 1]]  # unique, but a gap: not row numbers
    path = _write(tmp_path / "t.csv", "count,level,label", rows)
    guess = guess_columns(read_table(path))
    assert guess.id_column is None and guess.features == ["count", "level"] and not guess.notes


def test_a_text_id_column_loads_and_a_text_feature_is_named(tmp_path):
    rows = [[f"p{i:02d}", i * 0.5, i % 2] for i in range(6)]
    path = _write(tmp_path / "t.csv", "patient,a,label", rows)
    guess = guess_columns(read_table(path))
    # a different text in every row: the id, with a note; the load is not blocked
    assert guess.id_column == "patient" and guess.features == ["a"] and guess.text == {}
    assert "'patient' holds a different text in every row" in guess.notes[0]
    # a text column that repeats is no id: named, with its first text cell's row
    rows = [[f"g{i % 2}", i * 0.5, i % 2] for i in range(6)]
    path2 = _write(tmp_path / "t2.csv", "group,a,label", rows)
    guess2 = guess_columns(read_table(path2))
    assert guess2.id_column is None and guess2.text == {"group": (1, "g0")}  # row 1 = first
    message = text_column_message("patient", 1, "p00", unique=True)
    assert "id column" in message and "'patient'" in message and "--" not in message
    ds = dataset_from_table(path, "label", ["a"], id_column="patient")
    assert ds.feature_names == ["a"] and list(ds.ids) == [f"p{i:02d}" for i in range(6)]


def test_rows_keep_their_file_numbers_when_rows_are_dropped(tmp_path):
    rows = [[1, 0.1, 0], [2, "", 1], [3, 0.3, 0], [4, 0.4, 1], [5, 0.5, 0]]
    path = _write(tmp_path / "t.csv", "id,a,label", rows)
    ds = dataset_from_table(path, "label", ["a"], missing="drop", id_column="id")
    np.testing.assert_array_equal(ds.row_numbers, [1, 3, 4, 5])
    np.testing.assert_array_equal(ds.input_rows(), [0, 2, 3, 4])
    assert ds.n_dropped == 1 and list(ds.row_ids) == ["1", "3", "4", "5"]
    cols = ds.input_columns()
    assert list(cols) == ["id", "a", "label"] and len(cols["id"]) == 5  # every row as read


def test_the_digest_names_the_data():
    a, b = load_builtin("sklearn:wine"), load_builtin("sklearn:iris")
    assert a.digest() == load_builtin("sklearn:wine").digest() != b.digest()
    assert len(a.digest()) == 64


def test_table_with_probabilities_appends_columns_and_keeps_every_row():
    from wsvmgui.estimators.report import ProbabilityReport
    from wsvmgui.io.results import table_with_probabilities

    proba = np.array([[0.8, 0.2], [0.3, 0.7], [0.5, 0.5]])
    report = ProbabilityReport.from_proba(np.array(["a", "b"]), proba)
    table = {
        "id": np.array(["x", "y", "z", "w"]),
        "p_a": np.array(["1", "2", "3", "4"]),
        "label": np.array(["a", "b", "a", "b"]),
    }
    cols, desc = table_with_probabilities(table, report, np.array([0, 1, 3]))
    assert list(cols) == ["id", "p_a", "label", "predicted", "p_a_2", "p_b"]
    assert list(cols["id"]) == ["x", "y", "z", "w"]  # ids untouched
    assert list(cols["p_a"]) == ["1", "2", "3", "4"]  # the table's own column kept
    np.testing.assert_allclose(cols["p_a_2"][[0, 1, 3]].astype(float), proba[:, 0])
    assert cols["p_b"][2] is None and cols["predicted"][2] is None  # row not used: empty
    assert set(desc) == set(cols)
