"""Session files: round trip, reproduction check, and refusal of bad files."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from wsvmgui.app.analysis import RunRequest, run_analysis
from wsvmgui.app.datasets import load_builtin, split_dataset
from wsvmgui.app.session import (
    Session,
    check_data_file,
    compare_results,
    load_session,
    results_record,
    save_session,
)
from wsvmgui.app.settings import RunSettings
from wsvmgui.errors import InputError

TINY = RunSettings(n_weights=5, lambdas=[0.005], sigmas=[0.5], n_jobs=1)


@pytest.fixture(scope="module")
def result():
    sp = split_dataset(load_builtin("demo"), 0.0, 0.3, 0, standardise=True)
    return run_analysis(RunRequest(TINY, sp))


def _session(data, results=None):
    return Session(
        data,
        {"test_fraction": 0.3, "standardise": True},
        TINY,
        "custom",
        False,
        {"tab": "Boundaries", "ix": 0, "iy": 1, "reference": None, "follow": True, "selected": 4},
        results,
    )


def test_round_trip_with_results(tmp_path, result):
    path = tmp_path / "s.wsvm-session.json"
    save_session(path, _session({"kind": "builtin", "name": "demo"}, results_record(result)))
    back = load_session(path)
    assert back.settings == TINY and back.data == {"kind": "builtin", "name": "demo"}
    assert back.view["selected"] == 4 and back.split["standardise"] is True
    # the saved probabilities are those of the run, and a rerun reproduces them
    np.testing.assert_allclose(back.results["proba"], result.report.proba, atol=1e-12)
    again = run_analysis(RunRequest(TINY, result.split))
    assert compare_results(back.results, again) == (True, pytest.approx(0.0, abs=1e-12))
    other = run_analysis(RunRequest(replace(TINY, lambdas=[0.05]), result.split))
    same, diff = compare_results(back.results, other)
    assert not same and diff > 1e-3
    assert list(tmp_path.glob(".*tmp")) == []


def test_data_file_reference_records_its_digest(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x,label\n1,a\n2,b\n")
    path = tmp_path / "s.json"
    save_session(
        path, _session({"kind": "file", "path": str(data), "label": "label", "features": ["x"]})
    )
    back = load_session(path)
    assert len(back.data["sha256"]) == 64
    assert check_data_file(back.data) == ""
    data.write_text("x,label\n1,a\n3,b\n")
    assert "changed" in check_data_file(back.data)
    data.unlink()
    with pytest.raises(InputError, match="not there"):
        check_data_file(back.data)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not a session file"),
        ('{"a": 1}', "not a wsvmgui session"),
        ('{"session_version": 9}', "version 9"),
        ('{"session_version": 1}', "lacks 'data'"),
    ],
)
def test_bad_files_are_refused_with_one_line(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        load_session(path)
    assert "\n" not in str(info.value)


def test_bad_fields_are_refused(tmp_path):
    good = _session({"kind": "builtin", "name": "demo"}).to_dict()
    cases = [
        (("data", "kind"), "tape", "unknown data kind"),
        (("split", "test_fraction"), 1.5, "not in"),
        (("split", "standardise"), "yes", "wrong type"),
        (("settings", "n_weights"), "many", "n_weights"),
        (("settings", "colour"), "red", "unknown setting"),
    ]
    for (part, key), value, message in cases:
        body = json.loads(json.dumps(good))
        body[part][key] = value
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(body))
        with pytest.raises(InputError, match=message):
            load_session(path)
    with pytest.raises(InputError, match="cannot read"):
        load_session(tmp_path / "missing.json")


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"session_version": 1, "data": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
        ('{"session_version": ' + "1" * 5001 + "}", "4300 digits"),
        ('{"session_version": NaN}', "NaN is not a JSON number"),
    ],
)
def test_session_files_that_are_not_strict_json_are_refused(tmp_path, text, needle):
    path = tmp_path / "s.wsvm-session.json"
    path.write_text(text)
    with pytest.raises(InputError, match=needle):
        load_session(path)


def test_a_session_file_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "s.wsvm-session.json"
    path.write_bytes(b'{"session_version": 1, "x": "\xe9\xff"}')
    with pytest.raises(InputError, match="not UTF-8"):
        load_session(path)
