"""The command line: outputs, model round trip, and one clear line for every bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import joblib
import numpy as np
import pandas as pd
import pytest

from wsvmgui.app.settings import RunSettings
from wsvmgui.cli import EXIT_INPUT, main
from wsvmgui.evaluation.designs import simulate
from wsvmgui.io import atomic
from wsvmgui.io.tables import read_probabilities_csv

FAST = ["--lambda", "0.01", "--sigma", "1.0", "--weights", "5", "--quiet"]


def _csv(path, X, y, names=("x1", "x2"), label="label"):
    frame = pd.DataFrame(X, columns=list(names))
    frame[label] = y
    frame.to_csv(path, index=False)
    return str(path)


@pytest.fixture
def train_csv(tmp_path):
    d = simulate("wuliu2011_ex1", 60, seed=1)
    return _csv(tmp_path / "train.csv", d.X, np.where(d.y > 0, "good", "bad"))


@pytest.fixture
def new_csv(tmp_path):
    d = simulate("wuliu2011_ex1", 15, seed=2)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"])  # no label column needed
    path = tmp_path / "new.csv"
    frame.to_csv(path, index=False)
    return str(path)


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _assert_one_line_error(code, err, *needles):
    assert code == EXIT_INPUT, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("wsvmgui: error:"), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, err)


# ---------------------------------------------------------------------- success
def test_fit_writes_csv_with_settings_and_sidecar(capsys, tmp_path, train_csv):
    out = tmp_path / "probs.csv"
    code, stdout, err = _run(
        capsys, ["fit", train_csv, "--label", "label", "--out", str(out), *FAST]
    )
    assert code == 0, err
    assert "60 rows" in stdout
    frame, settings, meta = read_probabilities_csv(out)
    assert {"row", "label", "p_bad", "p_good", "lo_good", "hi_good", "lo_bad", "hi_bad"} <= set(
        frame.columns
    )
    assert len(frame) == 60
    np.testing.assert_allclose(frame["p_bad"] + frame["p_good"], 1.0, atol=2e-6)
    assert np.all(frame["lo_good"] <= frame["p_good"] + 1e-6)
    assert np.all(frame["p_good"] <= frame["hi_good"] + 1e-6)
    assert set(frame["label"]) <= {"good", "bad"}
    s = RunSettings.from_dict(settings)
    assert s.lambdas == [0.01] and s.sigmas == [1.0] and s.n_weights == 5
    assert meta["classes"] == ["bad", "good"] and meta["features"] == ["x1", "x2"]
    sidecar = json.loads((tmp_path / "probs.csv.json").read_text())
    assert sidecar["settings"] == settings
    assert sidecar["meta"]["label"] == "label"


def test_model_then_predict_reproduces_probabilities(capsys, tmp_path, train_csv, new_csv):
    out1, out2, model = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "m.joblib"
    code, _, err = _run(
        capsys,
        [
            "fit",
            train_csv,
            "--label",
            "label",
            "--out",
            str(out1),
            "--model",
            str(model),
            "--predict",
            new_csv,
            *FAST,
        ],
    )
    assert code == 0, err
    code, _, err = _run(capsys, ["predict", str(model), new_csv, "--out", str(out2)])
    assert code == 0, err
    a, _, _ = read_probabilities_csv(out1)
    b, _, _ = read_probabilities_csv(out2)
    assert len(a) == 15
    pd.testing.assert_frame_equal(a, b)
    saved = joblib.load(model)
    assert saved["features"] == ["x1", "x2"]
    X_new = pd.read_csv(new_csv).to_numpy()
    np.testing.assert_allclose(
        saved["estimator"].predict_proba(X_new)[:, 1], a["p_good"], rtol=1e-5, atol=1e-6
    )


def test_tuned_fit_with_tuning_file(capsys, tmp_path, train_csv):
    d = simulate("wuliu2011_ex1", 30, seed=9)
    tune = _csv(tmp_path / "tune.csv", d.X, np.where(d.y > 0, "good", "bad"))
    out = tmp_path / "p.csv"
    code, _, err = _run(
        capsys,
        [
            "fit",
            train_csv,
            "--label",
            "label",
            "--out",
            str(out),
            "--tune",
            tune,
            "--lambda",
            "0.05,0.005",
            "--sigma",
            "0.7,1.4",
            "--weights",
            "5",
            "--quiet",
        ],
    )
    assert code == 0, err
    _, settings, meta = read_probabilities_csv(out)
    assert settings["tuning"] == "tune-set"
    best = meta["tuning_best"]
    assert best["lambda"] in (0.05, 0.005) and best["sigma"] in (0.7, 1.4)
    assert meta["sigma"] == best["sigma"]
    # The refit on training + tuning rows keeps the tuned C = 1 / (2 n lambda).
    n_train = pd.read_csv(train_csv).shape[0]
    assert meta["lambda"] == pytest.approx(best["lambda"] * n_train / (n_train + 30))


def test_demo_prints_metrics(capsys):
    code, out, err = _run(capsys, ["demo", "--design", "wang2008_ex1", "--n-test", "500"])
    assert code == 0, err
    for key in ("L1", "L2", "EGKL", "GKL", "Bayes error"):
        assert key in out
    l1 = float(next(line.split()[1] for line in out.splitlines() if line.strip().startswith("L1")))
    assert 0 < l1 < 0.8  # both columns: twice the per-point error; the constant 0.5 has 0.6


def test_schemes_lists_binary(capsys):
    code, out, _ = _run(capsys, ["schemes"])
    assert code == 0
    assert any(line.startswith("binary") for line in out.splitlines())


# ------------------------------------------------------------------ bad inputs
def test_missing_file(capsys, tmp_path):
    code, _, err = _run(
        capsys,
        [
            "fit",
            str(tmp_path / "nope.csv"),
            "--label",
            "y",
            "--out",
            str(tmp_path / "o.csv"),
            *FAST,
        ],
    )
    _assert_one_line_error(code, err, "not found", "nope.csv")


def test_label_column_absent(capsys, tmp_path, train_csv):
    code, _, err = _run(
        capsys, ["fit", train_csv, "--label", "class", "--out", str(tmp_path / "o.csv"), *FAST]
    )
    _assert_one_line_error(code, err, "'class'", "x1")


def _table_with(tmp_path, cell: str, row: int = 4, column: str = "x2"):
    d = simulate("wuliu2011_ex1", 30, seed=3)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"]).astype(object)
    frame["label"] = d.y
    frame.loc[row - 1, column] = cell
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_non_numeric_feature_names_column_and_row(capsys, tmp_path):
    path = _table_with(tmp_path, "abc", row=4)
    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", str(tmp_path / "o.csv"), *FAST]
    )
    _assert_one_line_error(code, err, "'x2'", "row 4", "abc")


@pytest.mark.parametrize(
    "cell, what", [("nan", "missing"), ("inf", "infinite"), ("-inf", "infinite")]
)
def test_non_finite_names_column_and_row(capsys, tmp_path, cell, what):
    path = _table_with(tmp_path, cell, row=7)
    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", str(tmp_path / "o.csv"), *FAST]
    )
    _assert_one_line_error(code, err, "'x2'", "row 7", what)


def test_single_class(capsys, tmp_path):
    d = simulate("wuliu2011_ex1", 20, seed=3)
    path = _csv(tmp_path / "one.csv", d.X, ["a"] * 20)
    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", str(tmp_path / "o.csv"), *FAST]
    )
    _assert_one_line_error(code, err, "one class")


def test_class_too_small_for_split(capsys, tmp_path):
    d = simulate("wuliu2011_ex1", 30, seed=3)
    y = np.array(["a"] * 27 + ["b"] * 3)
    path = _csv(tmp_path / "small.csv", d.X, y)
    code, _, err = _run(
        capsys,
        [
            "fit",
            path,
            "--label",
            "label",
            "--out",
            str(tmp_path / "o.csv"),
            "--lambda",
            "0.1,0.01",
            "--sigma",
            "1",
            "--weights",
            "4",
            "--quiet",
        ],
    )
    _assert_one_line_error(code, err, "'b'", "3 point")


@pytest.mark.parametrize("where", ["missing_folder", "parent_is_file", "is_folder"])
def test_output_path_not_writable(capsys, tmp_path, train_csv, where):
    out = {
        "missing_folder": tmp_path / "no" / "such" / "o.csv",
        "parent_is_file": tmp_path / "train.csv" / "o.csv",
        "is_folder": tmp_path,
    }[where]
    code, _, err = _run(capsys, ["fit", train_csv, "--label", "label", "--out", str(out), *FAST])
    _assert_one_line_error(code, err, "cannot write")


def test_output_folder_read_only(capsys, tmp_path, train_csv):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        code, _, err = _run(
            capsys, ["fit", train_csv, "--label", "label", "--out", str(folder / "o.csv"), *FAST]
        )
        _assert_one_line_error(code, err, "not writable")
    finally:
        folder.chmod(0o700)


@pytest.mark.parametrize(
    "content, needle",
    [
        (bytes(range(256)) * 16, "not a text table"),
        (b"", "empty"),
        (b"\xff\xfe\xfa garbage \x81\x82 more\n" * 20, "not a text table"),
    ],
)
def test_not_a_table(capsys, tmp_path, content, needle):
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    code, _, err = _run(
        capsys, ["fit", str(path), "--label", "label", "--out", str(tmp_path / "o.csv"), *FAST]
    )
    _assert_one_line_error(code, err, needle)


def test_predict_with_non_model_file(capsys, tmp_path, new_csv):
    bogus = tmp_path / "model.joblib"
    bogus.write_bytes(b"not a model at all")
    code, _, err = _run(capsys, ["predict", str(bogus), new_csv, "--out", str(tmp_path / "o")])
    _assert_one_line_error(code, err, "not a wsvmgui model")
    code, _, err = _run(
        capsys, ["predict", str(tmp_path / "none.joblib"), new_csv, "--out", str(tmp_path / "o")]
    )
    _assert_one_line_error(code, err, "not found")


def test_predict_rows_missing_a_feature(capsys, tmp_path, train_csv):
    model = tmp_path / "m.joblib"
    assert (
        main(
            [
                "fit",
                train_csv,
                "--label",
                "label",
                "--out",
                str(tmp_path / "a.csv"),
                "--model",
                str(model),
                *FAST,
            ]
        )
        == 0
    )
    capsys.readouterr()
    rows = tmp_path / "rows.csv"
    rows.write_text("x1,x3\n1,2\n3,4\n")
    code, _, err = _run(
        capsys, ["predict", str(model), str(rows), "--out", str(tmp_path / "o.csv")]
    )
    _assert_one_line_error(code, err, "'x2'")


# ------------------------------------------------------------------ atomic writes
def test_failure_while_writing_model_keeps_existing_file(capsys, tmp_path, train_csv, monkeypatch):
    model = tmp_path / "m.joblib"
    model.write_bytes(b"previous model")
    out = tmp_path / "o.csv"
    out.write_text("previous csv\n")

    def half_dump(obj, handle, *args, **kwargs):
        handle.write(b"half a model")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(joblib, "dump", half_dump)
    code, _, err = (
        main(
            ["fit", train_csv, "--label", "label", "--out", str(out), "--model", str(model), *FAST]
        ),
        *capsys.readouterr(),
    )
    _assert_one_line_error(code, err, "No space left")
    assert model.read_bytes() == b"previous model"
    assert out.read_text() == "previous csv\n"
    assert sorted(os.listdir(tmp_path)) == ["m.joblib", "o.csv", "train.csv"]


def test_failure_while_writing_csv_leaves_no_partial_file(capsys, tmp_path, train_csv, monkeypatch):
    out = tmp_path / "o.csv"

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    code, _, err = (
        main(["fit", train_csv, "--label", "label", "--out", str(out), *FAST]),
        *capsys.readouterr(),
    )
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["train.csv"]


# ------------------------------------------------------------------ subprocess
def _subprocess(*args, cwd):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("WSVMGUI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "wsvmgui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def test_subprocess_exit_codes(tmp_path, train_csv):
    bad = _subprocess("fit", "missing.csv", "--label", "y", "--out", "o.csv", cwd=tmp_path)
    assert bad.returncode == EXIT_INPUT
    assert bad.stderr.strip().startswith("wsvmgui: error:")
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    ok = _subprocess("fit", train_csv, "--label", "label", "--out", "o.csv", *FAST, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "o.csv").is_file() and (tmp_path / "o.csv.json").is_file()
