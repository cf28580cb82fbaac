"""Reading data tables as written: exact cells, checked header, parsed features."""

from __future__ import annotations

import hashlib
import os
import threading

import numpy as np
import pytest

from wsvmgui.errors import InputError
from wsvmgui.io.tables import labelled_data, read_data, read_table, select_xy


def _write(path, text: str | bytes):
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _msg(info) -> str:
    msg = str(info.value)
    assert msg and "\n" not in msg
    return msg


def test_read_csv_tsv_and_sniffed_separators(tmp_path):
    csv = _write(tmp_path / "a.csv", "x1,x2,label\n1,2,a\n3,4,b\n")
    table = read_table(csv)
    assert table.columns == ("x1", "x2", "label")
    assert table.shape == (2, 3)
    assert table.sha256 == hashlib.sha256(csv.read_bytes()).hexdigest()
    tsv = _write(tmp_path / "a.tsv", "x1\tx2\tlabel\n1\t2\ta\n3\t4\tb\n")
    assert read_table(tsv).shape == (2, 3)
    sniffed = _write(tmp_path / "a.txt", "x1;x2;label\n1;2;a\n3;4;b\n")
    assert read_table(sniffed).shape == (2, 3)


def test_hash_is_ordinary_and_rows_count_from_one(tmp_path):
    path = _write(tmp_path / "h.csv", "x,label\n# 1,A#1\n\n2,B#2\n#3,C\n")
    with pytest.raises(InputError, match="row 1: '# 1' is not numeric"):
        read_data(path, "label")
    path = _write(tmp_path / "h2.csv", "id,x,label\n#a,1,A#1\n\n#b,2,B#2\n")
    data = read_data(path, "label", id_column="id")
    assert list(data.y) == ["A#1", "B#2"]  # nothing after '#' is lost
    assert list(data.ids) == ["#a", "#b"]  # rows starting with '#' are rows
    assert list(data.rows) == [1, 2]  # the blank line is not a row
    assert data.feature_names == ("x",)


def test_labels_are_the_exact_strings(tmp_path):
    path = _write(tmp_path / "l.csv", 'x,label\n1,01\n2,1\n3," a"\n4,a\n5,NA\n6,1.0\n')
    data = read_data(path, "label")
    assert list(data.y) == ["01", "1", " a", "a", "NA", "1.0"]
    assert np.unique(data.y.astype(str)).size == 6
    marked = read_data(path, "label", na_values=["NA"])
    assert list(marked.label_missing()) == [False] * 4 + [True, False]


def test_missing_feature_cells_become_nan(tmp_path):
    path = _write(tmp_path / "m.csv", "x1,x2,label\n1,,a\n2,NA,b\nNaN,3,a\n4,?,b\n5,6,\n")
    with pytest.raises(InputError, match=r"'x2' row 4: '\?' is not numeric"):
        read_data(path, "label")
    data = read_data(path, "label", na_values=["?"])
    assert np.isnan(data.X).tolist() == [
        [False, True],
        [False, True],
        [True, False],
        [False, True],
        [False, False],
    ]
    assert list(data.label_missing()) == [False, False, False, False, True]


def test_duplicate_column_names_are_refused_by_name(tmp_path):
    path = _write(tmp_path / "d.csv", "x,label,y,label\n1,a,2,3\n")
    with pytest.raises(InputError) as info:
        read_table(path)
    msg = _msg(info)
    assert "'label' appears 2 times (columns 2, 4)" in msg and "d.csv" in msg


def test_unnamed_column_is_refused(tmp_path):
    path = _write(tmp_path / "r.csv", '"","x","label"\n"1",0.5,"a"\n')
    with pytest.raises(InputError, match="column 1 of the header has no name"):
        read_table(path)


def test_ragged_rows_name_the_line(tmp_path):
    path = _write(tmp_path / "g.csv", "x1,x2,label\n1,2,a\n3,4\n")
    with pytest.raises(InputError, match="line 3: 2 cells, the header has 3"):
        read_table(path)


def test_quoted_cells_and_byte_order_mark(tmp_path):
    path = _write(tmp_path / "q.csv", '\ufeffx,label\n1,"a, b"\n2,"say ""hi"""\n'.encode())
    data = read_data(path, "label")
    assert data.feature_names == ("x",)
    assert list(data.y) == ["a, b", 'say "hi"']


@pytest.mark.parametrize(
    "name, content, pattern",
    [
        ("empty.csv", "", "empty"),
        ("blank.csv", "\n\n", "empty"),
        ("header.csv", "x1,x2,label\n", "no data rows"),
        ("garbage.csv", bytes(range(256)) * 8, "not a text table"),
        ("noise.csv", np.random.default_rng(0).bytes(4096), "not a text table"),
        ("latin.csv", "x,label\n1,caf\xe9\n".encode("latin-1"), "line 2 is not UTF-8"),
        ("quote.csv", 'x,label\n1,"a\n', "line 2: a double quote opened on this line is never"),
        ("quote2.csv", 'x,label\n1,"a\n2,b\n3,c\n', "line 2: a double quote opened"),
    ],
)
def test_unreadable_tables(tmp_path, name, content, pattern):
    path = _write(tmp_path / name, content)
    with pytest.raises(InputError) as info:
        read_table(path)
    msg = _msg(info)
    assert pattern in msg and name in msg


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="is a folder"):
        read_table(tmp_path)


def test_named_pipe_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    outcome: list[str] = []

    def read():
        try:
            read_table(fifo)
        except InputError as exc:
            outcome.append(str(exc))

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "reading a named pipe blocked"
    assert outcome and "named pipe" in outcome[0]


@pytest.fixture
def table(tmp_path):
    return read_table(_write(tmp_path / "d.csv", "x1,x2,id,label\n1,2,r1,a\n3,4,r2,b\n5,6,r3,a\n"))


def test_select_columns(table):
    X, y, names = select_xy(table, "label", ["x1", "x2"])
    assert X.shape == (3, 2) and names == ["x1", "x2"]
    assert y.tolist() == ["a", "b", "a"]
    data = labelled_data(table, "label", id_column="id")
    assert data.feature_names == ("x1", "x2") and data.id_name == "id"
    assert data.row_ids.tolist() == ["r1", "r2", "r3"]


@pytest.mark.parametrize(
    "label, features, id_column, pattern",
    [
        ("class", None, None, "label column 'class' is not in the table"),
        ("Label ", None, None, "did you mean 'label'"),
        ("label", ["x1", "x9"], None, "feature column 'x9'"),
        ("label", ["x1", "x1"], None, "chosen twice"),
        ("label", ["x1", "label"], None, "both the label and a feature"),
        ("label", ["x1", "id"], "id", "both the id column and a feature"),
        ("label", [], None, "no feature columns"),
        ("label", None, "label", "both the label and the id column"),
        ("label", None, "ID", "id column 'ID'"),
        ("label", None, None, "'id' row 1: 'r1' is not numeric"),
    ],
)
def test_bad_column_choices(table, label, features, id_column, pattern):
    with pytest.raises(InputError) as info:
        labelled_data(table, label, features, id_column=id_column)
    assert pattern in _msg(info)


def test_one_feature_table_without_label_is_valid_for_prediction(tmp_path):
    path = _write(tmp_path / "one.csv", "x\n1.5\n-2\n")
    data = read_data(path, "label", ["x"], require_label=False)
    assert data.X.tolist() == [[1.5], [-2.0]] and data.y is None and data.label is None
    with pytest.raises(InputError, match="no feature columns"):
        read_data(_write(tmp_path / "lab.csv", "label\na\nb\n"), "label")


@pytest.mark.parametrize("cell", ["inf", "-inf", "Infinity"])
def test_infinite_feature_names_column_and_row(tmp_path, cell):
    path = _write(tmp_path / "i.csv", f"x1,x2,label\n1,2,a\n3,{cell},b\n")
    with pytest.raises(InputError) as info:
        read_data(path, "label")
    assert "'x2' row 2: infinite value" in _msg(info)


def test_select_xy_refuses_missing_values(tmp_path):
    path = _write(tmp_path / "n.csv", "x1,x2,label\n1,2,a\n,4,b\n5,NA,\n")
    with pytest.raises(InputError) as info:
        select_xy(read_table(path), "label")
    msg = _msg(info)
    assert "2 of 3 rows have missing values" in msg and "first row 2" in msg
    assert "'label': 1, 'x1': 1, 'x2': 1" in msg and "--missing" in msg
