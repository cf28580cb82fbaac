"""The command line: plain outputs, safe model round trip, and one clear line for bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wsvmgui.app.settings import RunSettings
from wsvmgui.cli import EXIT_CANCELLED, EXIT_INPUT, main
from wsvmgui.evaluation.designs import simulate
from wsvmgui.io import atomic
from wsvmgui.io.modelfile import load_model
from wsvmgui.io.results import read_probabilities_csv, read_results

FAST = ["--lambda", "0.01", "--sigma", "1.0", "--weights", "5", "--quiet"]


def _csv(path, X, y, names=("x1", "x2"), label="label"):
    frame = pd.DataFrame(X, columns=list(names))
    if y is not None:
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
    return _csv(tmp_path / "new.csv", d.X, None)  # no label column needed


def _run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _assert_one_line_error(code, err, *needles):
    assert code == EXIT_INPUT, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("wsvmgui: error:"), err
    assert "Traceback" not in err and "internal error" not in err
    for needle in needles:
        assert needle in lines[0], (needle, err)


def _fit(capsys, train, out, *extra):
    code, stdout, err = _run(capsys, ["fit", train, "--label", "label", "--out", out, *extra])
    assert code == 0, err
    return stdout, err


# ---------------------------------------------------------------------- success
def test_fit_writes_plain_csv_and_sidecar(capsys, tmp_path, train_csv):
    out = tmp_path / "probs.csv"
    stdout, _ = _fit(capsys, train_csv, out, *FAST)
    assert "60 rows" in stdout
    frame = pd.read_csv(out)  # a plain CSV: no options needed
    assert list(frame.columns) == [
        "row",
        "predicted",
        "observed",
        "p_bad",
        "p_good",
        "p_bad_lower",
        "p_bad_upper",
        "p_good_lower",
        "p_good_upper",
        "non_monotone",
    ]
    assert frame["row"].tolist() == list(range(1, 61))
    np.testing.assert_allclose(frame["p_bad"] + frame["p_good"], 1.0, atol=1e-9)
    assert np.all(frame["p_good_lower"] <= frame["p_good"] + 1e-9)
    assert np.all(frame["p_good"] <= frame["p_good_upper"] + 1e-9)
    truth = pd.read_csv(train_csv)["label"]
    assert frame["observed"].tolist() == truth.tolist()
    assert set(frame["predicted"]) <= {"good", "bad"}
    _, sidecar = read_results(out)
    s = RunSettings.from_dict(sidecar["settings"])
    assert s.lambdas == [0.01] and s.sigmas == [1.0] and s.n_weights == 5 and s.standardize
    meta = sidecar["meta"]
    assert meta["fitted"]["classes"] == ["bad", "good"] and meta["features"] == ["x1", "x2"]
    assert meta["training data"]["file"] == "train.csv"
    assert meta["training data"]["rows_used"] == 60
    assert meta["preprocessing"]["standardize"] is True
    text = (tmp_path / "probs.csv.json").read_text()
    assert str(tmp_path) not in text  # no absolute paths


def test_model_then_predict_reproduces_the_same_bytes(capsys, tmp_path, train_csv, new_csv):
    out1, out2, model = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "m.wsvm"
    _fit(capsys, train_csv, out1, "--model", model, "--predict", new_csv, *FAST)
    code, _, err = _run(capsys, ["predict", model, new_csv, "--out", out2])
    assert code == 0, err
    assert out1.read_bytes() == out2.read_bytes()
    assert "observed" not in pd.read_csv(out1).columns  # the new rows carry no label
    loaded = load_model(model)
    assert loaded.feature_names == ("x1", "x2") and loaded.label == "label"
    raw = pd.read_csv(new_csv).to_numpy()
    p = loaded.estimator.predict_proba(loaded.preprocessing.transform(raw))[:, 1]
    np.testing.assert_allclose(p, pd.read_csv(out1)["p_good"], rtol=1e-9, atol=1e-10)
    _, sidecar = read_results(out2)
    assert sidecar["meta"]["model"]["file"] == "m.wsvm"
    assert sidecar["meta"]["model"]["training data"]["file"] == "train.csv"


def test_same_seed_same_bytes(capsys, tmp_path, train_csv):
    args = ["--weights", "5", "--lambda", "0.1,0.01", "--cv", "3", "--seed", "4", "--quiet"]
    _fit(capsys, train_csv, tmp_path / "a.csv", "--model", tmp_path / "a.wsvm", *args)
    _fit(capsys, train_csv, tmp_path / "b.csv", "--model", tmp_path / "b.wsvm", *args)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    a = json.loads((tmp_path / "a.csv.json").read_text())
    b = json.loads((tmp_path / "b.csv.json").read_text())
    assert a["csv_sha256"] == b["csv_sha256"]
    for side, name in ((a, "a"), (b, "b")):
        assert side.pop("csv") == f"{name}.csv"
        assert side["meta"]["model"].pop("file") == f"{name}.wsvm"
        side["meta"]["model"].pop("sha256")  # the model holds its fit times
    assert a == b


def test_tuned_fit_with_tuning_file(capsys, tmp_path, train_csv):
    d = simulate("wuliu2011_ex1", 30, seed=9)
    tune = _csv(tmp_path / "tune.csv", d.X, np.where(d.y > 0, "good", "bad"))
    out = tmp_path / "p.csv"
    grid = ["--lambda", "0.05,0.005", "--sigma", "0.7,1.4", "--weights", "5", "--quiet"]
    _fit(capsys, train_csv, out, "--tune", tune, *grid)
    _, settings, meta = read_probabilities_csv(out)
    assert settings["tuning"] == "tune-set"
    fitted = meta["fitted"]
    best = fitted["tuning_best"]
    assert best["lambda"] in (0.05, 0.005) and best["sigma"] in (0.7, 1.4)
    assert fitted["sigma"] == best["sigma"]
    # The refit on training + tuning rows keeps the tuned C = 1 / (2 n lambda).
    assert fitted["lambda"] == pytest.approx(best["lambda"] * 60 / 90)
    assert meta["tuning data"]["rows_used"] == 30


def test_standardisation_by_default_rescues_a_badly_scaled_feature(capsys, tmp_path):
    """x2 in thousandths: the RBF kernel sees only x2 unless the features are standardised."""
    train, test = simulate("wuliu2011_ex1", 120, seed=1), simulate("wuliu2011_ex1", 800, seed=2)
    scale = np.array([1.0, 1000.0])
    path = _csv(tmp_path / "t.csv", train.X * scale, train.y)
    rows = _csv(tmp_path / "r.csv", test.X * scale, None)
    errors = {}
    for flag in ([], ["--no-standardize"]):
        out = tmp_path / f"o{len(flag)}.csv"
        _fit(capsys, path, out, "--predict", rows, "--weights", "10", "--quiet", *flag)
        frame = pd.read_csv(out)
        p_hat = frame[[f"p_{c}" for c in test.classes]].to_numpy()
        errors[bool(flag)] = float(np.mean(np.abs(p_hat - test.p).sum(axis=1)) / 2)
    assert errors[False] < 0.12, errors  # standardised: close to the truth
    assert errors[False] < errors[True] / 2, errors


def test_missing_values_error_drop_and_impute(capsys, tmp_path):
    d = simulate("wuliu2011_ex1", 40, seed=3)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"]).astype(object)
    frame["label"] = np.where(d.y > 0, "a", "b")
    frame.loc[4, "x1"] = "NA"
    frame.loc[9, "x2"] = ""
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "o.csv"
    code, _, err = _run(capsys, ["fit", path, "--label", "label", "--out", out, *FAST])
    _assert_one_line_error(
        code, err, "2 of 40 training rows", "first row 5", "'x1': 1", "--missing"
    )
    assert not out.exists()

    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", out, "--missing", "drop", *FAST[:-1]]
    )
    assert code == 0 and "left out 2 of 40 training rows" in err
    assert 5 not in pd.read_csv(out)["row"].tolist() and len(pd.read_csv(out)) == 38

    model = tmp_path / "m.wsvm"
    _fit(capsys, path, out, "--missing", "impute", "--model", model, *FAST)
    result = pd.read_csv(out)
    assert len(result) == 40
    medians = load_model(model).preprocessing.medians
    present = pd.to_numeric(frame["x1"], errors="coerce")
    assert medians[0] == pytest.approx(float(np.nanmedian(present)))
    new = tmp_path / "n.csv"
    new.write_text("x2,x1\n0.5,NA\n")
    code, _, err = _run(capsys, ["predict", model, new, "--out", tmp_path / "q.csv"])
    assert code == 0, err
    assert len(pd.read_csv(tmp_path / "q.csv")) == 1


def test_predict_missing_override(capsys, tmp_path, train_csv):
    model = tmp_path / "m.wsvm"
    _fit(capsys, train_csv, tmp_path / "a.csv", "--model", model, *FAST)
    rows = tmp_path / "r.csv"
    rows.write_text("x1,x2\n0.1,0.2\n,0.3\n0.4,0.5\n")
    out = tmp_path / "o.csv"
    code, _, err = _run(capsys, ["predict", model, rows, "--out", out])
    _assert_one_line_error(code, err, "1 of 3 rows to predict", "--missing")
    code, _, err = _run(capsys, ["predict", model, rows, "--out", out, "--missing", "impute"])
    _assert_one_line_error(code, err, "no training medians")
    code, _, err = _run(capsys, ["predict", model, rows, "--out", out, "--missing", "drop"])
    assert code == 0 and "left out 1 of 3 rows" in err
    assert pd.read_csv(out)["row"].tolist() == [1, 3]


def test_id_column_and_observed_labels(capsys, tmp_path):
    d = simulate("wuliu2011_ex1", 30, seed=5)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"])
    frame.insert(0, "sample", [f"s{i:02d}" for i in range(30)])
    frame["label"] = np.where(d.y > 0, "01", "1")  # two classes that look like one number
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "o.csv"
    _fit(capsys, path, out, "--id", "sample", *FAST)
    result = pd.read_csv(out, dtype=str)
    assert list(result.columns[:3]) == ["sample", "predicted", "observed"]
    assert result["sample"].tolist() == frame["sample"].tolist()
    assert {"p_01", "p_1"} <= set(result.columns)
    assert result["observed"].tolist() == frame["label"].tolist()


def test_a_class_named_NA_is_a_class_unless_told(capsys, tmp_path):
    d = simulate("wuliu2011_ex1", 30, seed=6)
    path = _csv(tmp_path / "d.csv", d.X, np.where(d.y > 0, "NA", "ok"))
    out = tmp_path / "o.csv"
    _fit(capsys, path, out, *FAST)
    assert {"p_NA", "p_ok"} <= set(pd.read_csv(out).columns)
    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", out, "--na-values", "NA", *FAST]
    )
    _assert_one_line_error(code, err, "missing values", "'label'")


def test_one_feature_model_predicts_a_one_column_table(capsys, tmp_path, train_csv):
    model = tmp_path / "m.wsvm"
    _fit(capsys, train_csv, tmp_path / "a.csv", "--features", "x1", "--model", model, *FAST)
    rows = tmp_path / "one.csv"
    rows.write_text("x1\n-1.5\n0\n2.5\n")
    code, _, err = _run(capsys, ["predict", model, rows, "--out", tmp_path / "o.csv"])
    assert code == 0, err
    assert len(pd.read_csv(tmp_path / "o.csv")) == 3


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
        capsys, ["fit", tmp_path / "nope.csv", "--label", "y", "--out", tmp_path / "o.csv", *FAST]
    )
    _assert_one_line_error(code, err, "not found", "nope.csv")


def test_label_column_absent(capsys, tmp_path, train_csv):
    code, _, err = _run(
        capsys, ["fit", train_csv, "--label", "class", "--out", tmp_path / "o.csv", *FAST]
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


@pytest.mark.parametrize(
    "cell, needles",
    [
        ("abc", ["'x2' row 4", "'abc' is not numeric"]),
        ("inf", ["'x2' row 4", "infinite"]),
        ("-inf", ["'x2' row 4", "infinite"]),
        ("nan", ["missing values", "first row 4"]),
    ],
)
def test_bad_cells_name_column_and_row(capsys, tmp_path, cell, needles):
    path = _table_with(tmp_path, cell, row=4)
    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", tmp_path / "o.csv", *FAST]
    )
    _assert_one_line_error(code, err, *needles)


def test_single_class(capsys, tmp_path):
    d = simulate("wuliu2011_ex1", 20, seed=3)
    path = _csv(tmp_path / "one.csv", d.X, ["a"] * 20)
    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", tmp_path / "o.csv", *FAST]
    )
    _assert_one_line_error(code, err, "one class")


def test_class_too_small_for_five_folds_tunes_on_fewer(capsys, tmp_path):
    """cv="auto" adapts to a class of three points (3-fold CV, said in a warning) where it
    used to refuse the data (issue 19)."""
    from wsvmgui.ladder.splits import TuningWarning

    d = simulate("wuliu2011_ex1", 30, seed=3)
    path = _csv(tmp_path / "small.csv", d.X, np.array(["a"] * 27 + ["b"] * 3))
    grid = ["--lambda", "0.1,0.01", "--sigma", "1", "--weights", "4", "--quiet"]
    with pytest.warns(TuningWarning, match="'b' has only 3 points: 3-fold"):
        code, _, err = _run(
            capsys, ["fit", path, "--label", "label", "--out", tmp_path / "o.csv", *grid]
        )
    assert code == 0, err


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--seed", "-1"], ["--seed", "-1"]),
        (["--seed", "4294967296"], ["--seed"]),
        (["--sigma", "inf"], ["--sigma", "inf"]),
        (["--sigma", "nan"], ["--sigma", "nan"]),
        (["--sigma", "0"], ["--sigma", "0"]),
        (["--lambda", "1,-2"], ["--lambda", "-2"]),
        (["--lambda", "1e999"], ["--lambda", "inf"]),
        (["--weights", "1"], ["--weights"]),
        (["--cv", "1"], ["--cv"]),
        (["--tune-fraction", "1.5"], ["--tune-fraction"]),
        (["--degree", "0"], ["--degree"]),
        (["--n-jobs", "-2"], ["--n-jobs"]),
        (["--missing", "guess"], ["--missing", "guess"]),
        (["--scheme", "probing", "--option", "n_thresholds=abc"], ["n_thresholds", "abc"]),
        (["--scheme", "probing", "--option", "n_thresholds=2.5"], ["n_thresholds", "2.5"]),
        (["--option", "colour=red"], ["no option 'colour'"]),
        (["--option", "level=NaN", "--scheme", "preconditioned"], ["level", "finite"]),
        (["--option", "=3"], ["KEY=VALUE"]),
    ],
)
def test_bad_values_get_one_line_and_exit_2(capsys, tmp_path, train_csv, args, needles):
    out = tmp_path / "o.csv"
    code, _, err = _run(capsys, ["fit", train_csv, "--label", "label", "--out", out, *args])
    _assert_one_line_error(code, err, *needles)
    assert sorted(os.listdir(tmp_path)) == ["train.csv"]


@pytest.mark.parametrize(
    "content, needles",
    [
        (b"\xff\xfe\x00{", ["not UTF-8"]),
        (b'{"seed": -1}', ["seed", "-1"]),
        (b'{"sigmas": [1e999]}', ["sigmas", "finite"]),
        (b'{"missing": 3}', ["missing"]),
        (b'{"na_values": "NA"}', ["na_values"]),
        (b"[1, 2]", ["JSON object"]),
        (b"{", ["not valid JSON"]),
    ],
)
def test_bad_settings_files(capsys, tmp_path, train_csv, content, needles):
    path = tmp_path / "s.json"
    path.write_bytes(content)
    code, _, err = _run(
        capsys,
        ["fit", train_csv, "--label", "label", "--out", tmp_path / "o.csv", "--settings", path],
    )
    _assert_one_line_error(code, err, "s.json", *needles)


def test_values_near_the_float_limit_are_named(capsys, tmp_path):
    path = _table_with(tmp_path, "1e308", row=6)
    out = tmp_path / "o.csv"
    code, _, err = _run(
        capsys, ["fit", path, "--label", "label", "--out", out, "--no-standardize", *FAST]
    )
    _assert_one_line_error(code, err, "'x2' row 6", "too large for the kernel")
    _fit(capsys, path, out, *FAST)  # standardised, the same table fits


@pytest.mark.parametrize("where", ["missing_folder", "parent_is_file", "is_folder", "device"])
def test_output_path_not_writable(capsys, tmp_path, train_csv, where):
    out = {
        "missing_folder": tmp_path / "no" / "such" / "o.csv",
        "parent_is_file": tmp_path / "train.csv" / "o.csv",
        "is_folder": tmp_path,
        "device": "/dev/null",
    }[where]
    code, _, err = _run(capsys, ["fit", train_csv, "--label", "label", "--out", out, *FAST])
    _assert_one_line_error(code, err, "cannot write")
    assert os.path.exists("/dev/null")


def test_outputs_that_would_destroy_inputs(capsys, tmp_path, train_csv, new_csv):
    settings = tmp_path / "s.json"
    settings.write_text("{}")
    before = {p: Path(p).read_bytes() for p in (train_csv, new_csv, settings)}
    base = ["fit", train_csv, "--label", "label", *FAST]
    cases = [
        (["--out", train_csv], "would overwrite the training data"),
        (["--out", "o.csv", "--model", "o.csv"], "o.csv would overwrite the --out"),
        (["--out", "o.csv", "--model", "o.csv.json"], "would overwrite the sidecar"),
        (["--out", "x.csv", "--predict", new_csv, "--model", new_csv], "rows to predict"),
        (["--out", str(settings), "--settings", str(settings)], "settings file"),
        (["--out", train_csv + "/../train.csv"], "training data"),
    ]
    for extra, needle in cases:
        extra = [str(tmp_path / e) if e in ("o.csv", "o.csv.json", "x.csv") else e for e in extra]
        code, _, err = _run(capsys, [*base, *extra])
        _assert_one_line_error(code, err, needle)
    for path, data in before.items():
        assert Path(path).read_bytes() == data
    model = tmp_path / "m.wsvm"
    _fit(capsys, train_csv, tmp_path / "a.csv", "--model", model, *FAST)
    code, _, err = _run(capsys, ["predict", model, new_csv, "--out", model])
    _assert_one_line_error(code, err, "would overwrite the model file")
    code, _, err = _run(capsys, ["predict", model, new_csv, "--out", new_csv])
    _assert_one_line_error(code, err, "would overwrite the rows to predict")


def test_named_pipe_input_is_refused(capsys, tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    code, _, err = _run(capsys, ["fit", fifo, "--label", "label", "--out", tmp_path / "o.csv"])
    _assert_one_line_error(code, err, "named pipe")


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"not a model at all", "not a wsvmgui model file"),
        (b"\x80\x04\x95", "old pickle/joblib model file"),
        (b"PK\x03\x04 truncated", "damaged"),
        (b"", "not a wsvmgui model file"),
    ],
)
def test_predict_with_malformed_model_files(capsys, tmp_path, new_csv, content, needle):
    bogus = tmp_path / "model.wsvm"
    bogus.write_bytes(content)
    code, _, err = _run(capsys, ["predict", bogus, new_csv, "--out", tmp_path / "o.csv"])
    _assert_one_line_error(code, err, needle, "model.wsvm")
    code, _, err = _run(capsys, ["predict", tmp_path / "none", new_csv, "--out", tmp_path / "o"])
    _assert_one_line_error(code, err, "not found")


def test_predict_rows_missing_a_feature(capsys, tmp_path, train_csv):
    model = tmp_path / "m.wsvm"
    _fit(capsys, train_csv, tmp_path / "a.csv", "--model", model, *FAST)
    rows = tmp_path / "rows.csv"
    rows.write_text("x1,x3\n1,2\n3,4\n")
    code, _, err = _run(capsys, ["predict", model, rows, "--out", tmp_path / "o.csv"])
    _assert_one_line_error(code, err, "'x2'")


# ------------------------------------------------------------------ atomic writes
def test_failure_while_writing_model_keeps_existing_files(capsys, tmp_path, train_csv, monkeypatch):
    model = tmp_path / "m.wsvm"
    model.write_bytes(b"previous model")
    out = tmp_path / "o.csv"
    out.write_text("previous csv\n")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    code, _, err = _run(
        capsys, ["fit", train_csv, "--label", "label", "--out", out, "--model", model, *FAST]
    )
    _assert_one_line_error(code, err, "No space left")
    assert model.read_bytes() == b"previous model"
    assert out.read_text() == "previous csv\n"
    assert sorted(os.listdir(tmp_path)) == ["m.wsvm", "o.csv", "train.csv"]


# ------------------------------------------------------------------ subprocess
def _subprocess(*args, cwd):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("WSVMGUI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "wsvmgui", *map(str, args)],
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
    usage = _subprocess("fit", train_csv, "--label", "label", "--seed", "x", cwd=tmp_path)
    assert usage.returncode == EXIT_INPUT and len(usage.stderr.strip().splitlines()) == 1
    ok = _subprocess("fit", train_csv, "--label", "label", "--out", "o.csv", *FAST, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "o.csv").is_file() and (tmp_path / "o.csv.json").is_file()


_INTERRUPTIBLE = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from wsvmgui.cli import main\n"
    "print('imported', flush=True)\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_interrupt_during_a_fit_leaves_nothing(tmp_path):
    # a fit far longer than the second before the interrupt on any machine (n = 400 with
    # 60 weights and 4 lambdas took 1.8 s here, and a fast machine finished it before the
    # interrupt came), so that the interrupt lands inside it
    d = simulate("wuliu2011_ex1", 1200, seed=1)
    train = _csv(tmp_path / "t.csv", d.X, d.y)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    args = ["fit", train, "--label", "label", "--out", "o.csv", "--model", "m.wsvm"]
    args += [
        "--weights",
        "200",
        "--lambda",
        "1e-5,3e-5,1e-4,3e-4,1e-3,3e-3,1e-2,3e-2,1e-1",
        "--cv",
        "5",
        "--n-jobs",
        "2",
        "--quiet",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTIBLE, *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout.readline().strip() == "imported"
        time.sleep(1.0)  # inside the fit now (it takes far longer)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_CANCELLED, err
    assert "interrupted" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == ["t.csv"]


def test_without_scheme_three_classes_get_the_k3_default_and_a_note(capsys, tmp_path):
    from wsvmgui.app.presets import default_scheme

    d = simulate("wu2010_ex1", 90, seed=0)
    train = _csv(
        tmp_path / "k3.csv", d.X, np.array(["a", "b", "c"])[np.unique(d.y, return_inverse=True)[1]]
    )
    out = tmp_path / "p.csv"
    _stdout, err = _fit(capsys, train, out, "--weights", "4", "--lambda", "0.01", "--sigma", "1")
    frame, settings, _meta = read_probabilities_csv(out)
    assert settings["scheme"] == default_scheme(3) != "binary"
    assert f"scheme {default_scheme(3)}" in err and "--scheme" in err
    p = frame[["p_a", "p_b", "p_c"]].to_numpy()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("choice", [None, "holdout"])
def test_pair_tuning_reaches_the_fitted_estimator_and_the_sidecar(capsys, tmp_path, choice):
    """--pair-tuning sets the pair schemes' tuning: the saved model's estimator has it, and
    its tuning tables show it (holdout: one 30% split over 7 C x 6 sigma per pair; the
    default, folds: 3 folds over 4 x 4); the sidecar's settings record it."""
    d = simulate("wu2010_ex1", 90, seed=0)
    train = _csv(
        tmp_path / "k3.csv", d.X, np.array(["a", "b", "c"])[np.unique(d.y, return_inverse=True)[1]]
    )
    out, model = tmp_path / "p.csv", tmp_path / "m.wsvm"
    extra = [] if choice is None else ["--pair-tuning", choice]
    _fit(capsys, train, out, "--scheme", "pairwise", "--model", model, "--quiet", *extra)
    est = load_model(model).estimator
    assert est.get_params()["pair_tuning"] == (choice or "folds")
    cells, folds = (42, 1) if choice == "holdout" else (16, 3)
    assert len(est.tuning_) == 3  # one table per pair
    for table in est.tuning_.values():
        assert table.score.size == cells
        assert sum(table.engines.values()) == cells * folds  # (cell, fold) fits
    _, settings, _meta = read_probabilities_csv(out)
    assert settings["pair_tuning"] == choice
    assert RunSettings.from_dict(settings).pair_tuning == choice


def test_a_bad_pair_tuning_is_named(capsys, tmp_path, train_csv):
    out = tmp_path / "o.csv"
    code, _, err = _run(
        capsys, ["fit", train_csv, "--label", "label", "--out", out, "--pair-tuning", "fold"]
    )
    _assert_one_line_error(code, err, "--pair-tuning", "'fold'", "folds", "holdout")
    settings = tmp_path / "s.json"
    settings.write_text('{"pair_tuning": "3folds"}')
    code, _, err = _run(
        capsys, ["fit", train_csv, "--label", "label", "--out", out, "--settings", settings]
    )
    _assert_one_line_error(code, err, "s.json", "pair_tuning", "'3folds'", "folds, holdout")


def test_a_pair_tuning_that_changes_nothing_says_so(capsys, tmp_path, train_csv):
    """Two classes (the binary ladder), or a pair scheme given its split and grids: the
    fit runs and a note says the setting changed nothing; where it applies, no note."""
    out = tmp_path / "o.csv"
    base = ["fit", train_csv, "--label", "label", "--out", out, *FAST[:-1]]
    code, _, err = _run(capsys, [*base, "--pair-tuning", "holdout"])
    assert code == 0, err
    assert "pair tuning 'holdout' changes nothing" in err and "scheme binary on 2" in err
    d = simulate("wu2010_ex1", 60, seed=0)
    k3 = _csv(tmp_path / "k3.csv", d.X, d.y.astype(int))
    given = ["fit", k3, "--label", "label", "--out", out, "--scheme", "bp1", *FAST[:-1]]
    code, _, err = _run(capsys, [*given, "--tune-fraction", "0.3", "--pair-tuning", "holdout"])
    assert code == 0, err
    assert "changes nothing: the tuning mode" in err
    code, _, err = _run(capsys, [*given, "--pair-tuning", "holdout"])  # it sets the split
    assert code == 0, err
    assert "pair tuning" not in err
