"""Reading tables, writing probability tables, and atomic file writes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from wsvmgui.app.settings import RunSettings
from wsvmgui.errors import InputError
from wsvmgui.estimators.report import ProbabilityReport
from wsvmgui.io import atomic
from wsvmgui.io.atomic import atomic_write_text, atomic_writer
from wsvmgui.io.tables import read_probabilities_csv, read_table, select_xy, write_probabilities_csv


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


def test_read_csv_tsv_and_comments(tmp_path):
    csv = _write(tmp_path / "a.csv", "# made by hand\nx1, x2, label\n1, 2, a\n3, 4, b\n")
    frame = read_table(csv)
    assert list(frame.columns) == ["x1", "x2", "label"]
    assert frame.shape == (2, 3)
    tsv = _write(tmp_path / "a.tsv", "x1\tx2\tlabel\n1\t2\ta\n3\t4\tb\n")
    assert read_table(tsv).shape == (2, 3)
    sniffed = _write(tmp_path / "a.txt", "x1;x2;label\n1;2;a\n3;4;b\n")
    assert read_table(sniffed).shape == (2, 3)


@pytest.mark.parametrize(
    "name, content, pattern",
    [
        ("empty.csv", "", "empty"),
        ("header.csv", "x1,x2,label\n", "no data rows"),
        ("one.csv", "x\n1\n2\n", "one column"),
        ("garbage.csv", bytes(range(256)) * 8, "not a text table"),
        ("noise.csv", np.random.default_rng(0).bytes(4096), "not a text table"),
        ("latin.csv", "x,label\n1,caf\xe9\n".encode("latin-1"), "UTF-8"),
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
    with pytest.raises(InputError, match="folder"):
        read_table(tmp_path)


@pytest.fixture
def frame(tmp_path):
    text = "x1,x2,label\n" + "".join(
        f"{i * 0.1:.1f},{(i % 3) * 0.5:.1f},{'yes' if i % 2 else 'no'}\n" for i in range(12)
    )
    return read_table(_write(tmp_path / "d.csv", text))


def test_select_xy(frame):
    X, y, names = select_xy(frame, "label")
    assert X.shape == (12, 2) and X.dtype == float
    assert names == ["x1", "x2"]
    assert set(y) == {"yes", "no"}
    X1, _, names1 = select_xy(frame, "label", ["x2"])
    assert names1 == ["x2"] and X1.shape == (12, 1)


def test_select_xy_label_absent_lists_columns(frame):
    with pytest.raises(InputError) as info:
        select_xy(frame, "class")
    msg = _msg(info)
    assert "'class'" in msg and "x1" in msg and "label" in msg


def test_select_xy_bad_feature_choices(frame):
    with pytest.raises(InputError, match="'x9'"):
        select_xy(frame, "label", ["x1", "x9"])
    with pytest.raises(InputError, match="both"):
        select_xy(frame, "label", ["x1", "label"])


def test_select_xy_non_numeric_names_column_and_row(tmp_path):
    path = _write(tmp_path / "d.csv", "x1,x2,label\n1,2,a\n3,4,b\n5,five,a\n")
    with pytest.raises(InputError) as info:
        select_xy(read_table(path), "label")
    msg = _msg(info)
    assert "'x2'" in msg and "row 3" in msg and "five" in msg


@pytest.mark.parametrize("token, what", [("nan", "missing"), ("", "missing"), ("inf", "infinite")])
def test_select_xy_non_finite_names_column_and_row(tmp_path, token, what):
    path = _write(tmp_path / "d.csv", f"x1,x2,label\n1,2,a\n3,4,b\n{token},6,a\n")
    with pytest.raises(InputError) as info:
        select_xy(read_table(path), "label")
    msg = _msg(info)
    assert "'x1'" in msg and "row 3" in msg and what in msg


def test_select_xy_missing_label(tmp_path):
    path = _write(tmp_path / "d.csv", "x1,label\n1,a\n2,\n3,b\n")
    with pytest.raises(InputError, match=r"'label'.*row 2"):
        select_xy(read_table(path), "label")


def test_string_labels_stripped(tmp_path):
    path = _write(tmp_path / "d.csv", "x1,label\n1, cat\n2,dog \n3,cat\n")
    _, y, _ = select_xy(read_table(path), "label")
    assert sorted(set(y)) == ["cat", "dog"]


# ------------------------------------------------------------------ writing
def _report():
    classes = np.array(["no", "yes"])
    proba = np.array([[0.25, 0.75], [0.9, 0.1]])
    extra = {"lo_yes": np.array([0.7, 0.05]), "hi_yes": np.array([0.8, 0.15])}
    return ProbabilityReport.from_proba(classes, proba, extra)


def test_probabilities_csv_round_trip(tmp_path):
    out = tmp_path / "p.csv"
    settings = RunSettings(seed=4)
    write_probabilities_csv(out, _report(), settings, {"train": "d.csv"}, index=np.array([1, 2]))
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# wsvmgui")
    frame, s, meta = read_probabilities_csv(out)
    assert list(frame.columns) == ["row", "label", "p_no", "p_yes", "lo_yes", "hi_yes"]
    np.testing.assert_allclose(frame["p_yes"], [0.75, 0.1])
    assert list(frame["label"]) == ["yes", "no"]
    assert RunSettings.from_dict(s) == settings
    assert meta == {"train": "d.csv"}


def test_atomic_writer_failure_keeps_existing_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old content\n")
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write("new partial content")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old content\n"
    assert os.listdir(tmp_path) == ["out.csv"]  # no temporary left behind


def test_atomic_writer_failure_leaves_no_new_file(tmp_path):
    target = tmp_path / "new.csv"
    with pytest.raises(KeyboardInterrupt), atomic_writer(target, "wb") as handle:
        handle.write(b"partial")
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_write_probabilities_failure_during_flush(tmp_path, monkeypatch):
    target = tmp_path / "p.csv"
    target.write_text("previous\n")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    with pytest.raises(OSError):
        write_probabilities_csv(target, _report(), RunSettings())
    assert target.read_text() == "previous\n"
    assert os.listdir(tmp_path) == ["p.csv"]


def test_atomic_write_success_replaces(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("a")
    atomic_write_text(target, "b")
    assert target.read_text() == "b"
    with pytest.raises(InputError, match="does not exist"):
        atomic_write_text(tmp_path / "no" / "such" / "t.txt", "x")
