"""Fuzzing the command line: malformed tables, options, settings and model files.

Every generated case must end with exit status 2 and one line on stderr that names the
problem, no traceback, and no file left behind.  Runs in-process (``wsvmgui.cli.main``);
hypothesis is derandomised so the suite is deterministic.  About 330 cases.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wsvmgui.cli import EXIT_INPUT, main
from wsvmgui.evaluation.designs import simulate

FUZZ = settings(
    max_examples=110,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
FAST = ["--lambda", "0.01", "--sigma", "1.0", "--weights", "5", "--quiet"]
DATA = simulate("wuliu2011_ex1", 24, seed=11)


def _rows() -> list[list[str]]:
    return [
        [repr(float(a)), repr(float(b)), "yes" if c > 0 else "no"]
        for (a, b), c in zip(DATA.X, DATA.y, strict=True)
    ]


def _text(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(",".join(r) for r in [header, *rows]) + "\n"


def _run(argv: list, folder: Path, inputs: set[str]) -> str:
    """Run the CLI; assert exit 2, one clean line, nothing new in ``folder``; return it."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    text = err.getvalue()
    lines = text.strip().splitlines()
    assert code == EXIT_INPUT, (argv, code, text)
    assert len(lines) == 1 and lines[0].startswith("wsvmgui: error: "), (argv, text)
    assert "Traceback" not in text and "internal error" not in text, text
    assert set(os.listdir(folder)) == inputs, (argv, os.listdir(folder))
    return lines[0]


_NOT_A_NUMBER = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters='\r\n",\x00'),
    min_size=1,
    max_size=8,
).filter(lambda s: s.strip() not in {"", "NA", "N/A", "#N/A", "NaN", "nan", "null", "NULL"})


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@st.composite
def broken_tables(draw):
    """(file bytes, extra arguments, needle expected in the message)."""
    header, rows = ["x1", "x2", "label"], _rows()
    i = draw(st.integers(0, len(rows) - 1))
    j = draw(st.integers(0, 1))
    kind = draw(
        st.sampled_from(
            [
                "duplicate",
                "unnamed",
                "ragged",
                "text",
                "infinite",
                "missing",
                "latin1",
                "nul",
                "empty",
                "header_only",
                "quote",
                "huge",
                "no_label",
                "bad_feature",
                "one_class",
            ]
        )
    )
    args: list[str] = []
    if kind == "duplicate":
        header[draw(st.sampled_from([0, 2]))] = "x2"
        needle = "'x2' appears 2 times"
    elif kind == "unnamed":
        header[j] = draw(st.sampled_from(["", " ", "  "]))
        needle = f"column {j + 1} of the header has no name"
    elif kind == "ragged":
        rows[i] = rows[i][:-1] if draw(st.booleans()) else [*rows[i], "1"]
        needle = "cells, the header has 3"
    elif kind == "text":
        value = draw(_NOT_A_NUMBER.filter(lambda s: not _is_float(s)))
        rows[i][j] = value
        needle = f"row {i + 1}: "
    elif kind == "infinite":
        rows[i][j] = draw(st.sampled_from(["inf", "-inf", "Infinity", "-Infinity", "1e999"]))
        needle = f"'x{j + 1}' row {i + 1}: infinite value"
    elif kind == "missing":
        rows[i][j] = draw(st.sampled_from(["", "NA", "NaN", "nan", "null"]))
        needle = f"first row {i + 1}"
    elif kind == "latin1":
        data = _text(header, rows).encode()
        cut = len(_text(header, rows[:i]).encode())
        return data[:cut] + b"\xe9\xff" + data[cut:], args, "not UTF-8"
    elif kind == "nul":
        return _text(header, rows).encode().replace(b",", b"\x00", 1), args, "binary data"
    elif kind == "empty":
        return draw(st.sampled_from([b"", b"\n", b"\n\n  \n"])), args, "is empty"
    elif kind == "header_only":
        return _text(header, []).encode(), args, "no data rows"
    elif kind == "quote":
        rows[i][j] = '"' + rows[i][j]
        needle = "not a readable table"
    elif kind == "huge":
        rows[i][j] = draw(st.sampled_from(["1e200", "-3e250", "1.7e308", "9e307"]))
        args = ["--no-standardize"]
        needle = f"'x{j + 1}' row {i + 1}"
    elif kind == "no_label":
        args = ["--label", draw(st.sampled_from(["Label", "class", "y", "label "]))]
        needle = "is not in the table"
    elif kind == "bad_feature":
        args = ["--features", "x1", draw(st.sampled_from(["x3", "X2", "label", "x1"]))]
        needle = "column"
    else:
        for r in rows:
            r[2] = "yes"
        needle = "class"
    return _text(header, rows).encode(), args, needle


@FUZZ
@given(case=broken_tables())
def test_malformed_tables(case):
    content, args, needle = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "t.csv").write_bytes(content)
        argv = ["fit", folder / "t.csv", "--label", "label", "--out", folder / "o.csv"]
        if "--label" in args:
            argv = argv[:2] + argv[4:]
        line = _run([*argv, *FAST, *args], folder, {"t.csv"})
        assert needle in line, (needle, line)


_NUMBERS = {
    "--seed": st.one_of(st.integers(max_value=-1), st.integers(min_value=2**32)),
    "--weights": st.integers(max_value=1),
    "--cv": st.integers(max_value=1),
    "--joint-n": st.integers(max_value=2),
    "--degree": st.integers(max_value=0),
    "--n-jobs": st.integers(max_value=-1),
    "--n": st.integers(max_value=1),
}
_BAD_FLOATS = st.one_of(
    st.sampled_from(["inf", "-inf", "nan", "0", "-0", "1e999", "abc", ",", "1,,x", "0x10"]),
    st.floats(max_value=0.0, allow_nan=False).map(repr),
    st.tuples(st.floats(0.01, 10), st.sampled_from(["nan", "-1", "0", "inf"])).map(
        lambda t: f"{t[0]},{t[1]}"
    ),
)
_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=10)


@st.composite
def bad_options(draw):
    """(arguments, needle) of one invalid option for ``fit`` (or ``demo`` for --n)."""
    kind = draw(st.sampled_from(["number", "float", "fraction", "choice", "option", "text"]))
    if kind == "number":
        flag = draw(st.sampled_from(sorted(_NUMBERS)))
        return [flag, str(draw(_NUMBERS[flag]))], flag
    if kind == "float":
        flag = draw(st.sampled_from(["--sigma", "--lambda"]))
        return [flag, draw(_BAD_FLOATS)], flag
    if kind == "fraction":
        value = draw(st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0)))
        return ["--tune-fraction", repr(value)], "--tune-fraction"
    if kind == "choice":
        flag = draw(st.sampled_from(["--scheme", "--kernel", "--rule", "--missing", "--solver"]))
        value = draw(_WORDS.filter(lambda w: w not in {"binary", "rbf", "count", "drop", "qp"}))
        return [flag, value], flag
    if kind == "option":
        which = draw(st.sampled_from(["unknown", "n_thresholds", "learner", "non_finite"]))
        if which == "unknown":
            key = draw(_WORDS)
            return ["--option", f"{key}=1"], f"no option {key!r}"
        if which == "n_thresholds":
            value = draw(
                st.one_of(
                    _WORDS,
                    st.floats(allow_nan=False, allow_infinity=False)
                    .filter(lambda v: v != int(v))
                    .map(repr),
                    st.integers(max_value=0).map(str),
                )
            )
            return ["--scheme", "probing", "--option", f"n_thresholds={value}"], "n_thresholds"
        if which == "learner":
            value = draw(_WORDS.filter(lambda w: w not in {"svm", "tree", "forest", "logistic"}))
            return ["--scheme", "probing", "--option", f"learner={value}"], "learner"
        return ["--option", f"level={draw(st.sampled_from(['NaN', 'Infinity', '-Infinity']))}"], (
            "finite"
        )
    flag = draw(st.sampled_from(["--seed", "--weights", "--cv", "--degree"]))
    value = draw(_WORDS)
    return [flag, value], flag


@FUZZ
@given(case=bad_options())
def test_bad_options(case):
    args, needle = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "t.csv").write_text(_text(["x1", "x2", "label"], _rows()))
        if args[0] == "--n":
            argv = ["demo", *args]
        else:
            argv = ["fit", folder / "t.csv", "--label", "label", "--out", folder / "o.csv"]
            argv += ["--quiet", *args]
        line = _run(argv, folder, {"t.csv"})
        assert needle in line, (needle, line)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def model_bytes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    (folder / "t.csv").write_text(_text(["x1", "x2", "label"], _rows()))
    argv = ["fit", folder / "t.csv", "--label", "label", "--out", folder / "o.csv"]
    assert main([str(a) for a in [*argv, "--model", folder / "m.wsvm", *FAST]]) == 0
    return (folder / "m.wsvm").read_bytes()


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _rezip(data: bytes, edit) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members.pop("manifest.json"))
    manifest = edit(manifest)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for name, value in members.items():
            zf.writestr(name, value)
    return buf.getvalue()


_KEYS = [
    "format",
    "schema",
    "wsvmgui_version",
    "libraries",
    "label",
    "classes",
    "feature_names",
    "preprocessing",
    "settings",
    "meta",
    "estimator",
    "check",
    "n_arrays",
]


@st.composite
def broken_models(draw, valid: bytes):
    """(file bytes, needle or None when a harmless change may still load)."""
    kind = draw(st.sampled_from(["truncate", "random", "pickle", "drop_key", "set_key", "flip"]))
    if kind == "truncate":
        return valid[: draw(st.integers(0, len(valid) - 1))], "m.wsvm"
    if kind == "random":
        return draw(st.binary(max_size=300)), "m.wsvm"
    if kind == "pickle":
        protocol = draw(st.integers(2, pickle.HIGHEST_PROTOCOL))
        return pickle.dumps({"x": _Payload("MARKER")}, protocol=protocol), "old pickle/joblib"
    if kind == "drop_key":
        key = draw(st.sampled_from(_KEYS))
        return _rezip(valid, lambda m: {k: v for k, v in m.items() if k != key}), "m.wsvm"
    if kind == "set_key":
        key = draw(
            st.sampled_from([k for k in _KEYS if k not in ("meta", "settings", "libraries")])
        )
        value = draw(_JSON)

        def edit(m):
            m[key] = value
            return m

        return _rezip(valid, edit), "m.wsvm"
    position = draw(st.integers(0, len(valid) - 1))
    flipped = bytearray(valid)
    flipped[position] ^= 1 << draw(st.integers(0, 7))
    return bytes(flipped), None


@FUZZ
@given(data=st.data())
def test_malformed_model_files(model_bytes, data):
    content, needle = data.draw(broken_models(model_bytes))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "m.wsvm").write_bytes(content.replace(b"MARKER", str(folder / "ran").encode()))
        (folder / "r.csv").write_text("x1,x2\n0.1,0.2\n-1,1\n")
        argv = ["predict", folder / "m.wsvm", folder / "r.csv", "--out", folder / "o.csv"]
        if needle is None:  # a flipped bit: refused in one line, or harmless and identical
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = main([str(a) for a in argv])
            if code == 0:
                return
            needle = "m.wsvm"
        line = _run(argv, folder, {"m.wsvm", "r.csv"})
        assert needle in line, (needle, line)
        assert not (folder / "ran").exists()
