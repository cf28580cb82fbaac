"""Probability tables: a plain CSV any reader opens, and a sidecar that belongs to it."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from wsvmgui.app.settings import RunSettings
from wsvmgui.errors import InputError
from wsvmgui.estimators.report import ProbabilityReport
from wsvmgui.io.results import (
    probability_columns,
    read_probabilities_csv,
    read_results,
    write_probabilities_csv,
    write_results,
)


def _binary_report() -> ProbabilityReport:
    p = np.array([0.25, 0.8, 0.5])
    lo, hi = p - 0.05, p + 0.05
    extra = {
        "lo_no": 1 - hi,
        "hi_no": 1 - lo,
        "lo_yes": lo,
        "hi_yes": hi,
        "monotone": np.array([True, False, True]),
    }
    return ProbabilityReport.from_proba(np.array(["no", "yes"]), np.column_stack([1 - p, p]), extra)


def test_columns_in_order_with_readable_names(tmp_path):
    path = tmp_path / "p.csv"
    write_results(path, _binary_report(), observed=np.array(["no", None, "yes"], dtype=object))
    frame = pd.read_csv(path)  # no options
    assert list(frame.columns) == [
        "row",
        "predicted",
        "observed",
        "p_no",
        "p_yes",
        "p_no_lower",
        "p_no_upper",
        "p_yes_lower",
        "p_yes_upper",
        "non_monotone",
    ]
    assert frame["row"].tolist() == [1, 2, 3]
    assert frame["predicted"].tolist() == ["no", "yes", "no"]
    assert frame["observed"].iloc[0] == "no" and pd.isna(frame["observed"].iloc[1])
    np.testing.assert_allclose(frame["p_yes"], [0.25, 0.8, 0.5])
    assert frame["non_monotone"].tolist() == [0, 1, 0]
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][0] == "row" and len(rows) == 4  # the first line is the header


def test_multiclass_subproblem_brackets_are_named():
    k = np.array(["a", "b", "c"])
    proba = np.full((2, 3), 1 / 3)
    extra = {"lo_b|a,b": np.zeros(2), "hi_b|a,b": np.ones(2), "lo_c|rest": np.zeros(2)}
    cols, desc = probability_columns(ProbabilityReport.from_proba(k, proba, extra), np.arange(2))
    assert "p_b_given_a_or_b_lower" in cols and "p_b_given_a_or_b_upper" in cols
    assert "p_c_vs_rest_lower" in cols
    assert set(desc) == set(cols)


def test_sidecar_records_hash_settings_and_describes_columns(tmp_path):
    path = tmp_path / "p.csv"
    settings = RunSettings(seed=3)
    write_probabilities_csv(path, _binary_report(), settings, {"data": "d.csv"})
    sidecar = json.loads((tmp_path / "p.csv.json").read_text())
    assert sidecar["csv"] == "p.csv" and sidecar["rows"] == 3
    assert [c["name"] for c in sidecar["columns"]][:2] == ["row", "predicted"]
    frame, s, meta = read_probabilities_csv(path)
    assert s == settings.to_dict() and meta == {"data": "d.csv"}
    assert len(frame) == 3


def test_a_sidecar_from_another_run_is_refused(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    write_results(a, _binary_report())
    write_results(b, _binary_report(), ids=np.array([7, 8, 9]))
    shutil.copy(tmp_path / "b.csv.json", tmp_path / "a.csv.json")
    with pytest.raises(InputError, match="does not belong to"):
        read_results(a)


def test_same_input_same_bytes(tmp_path):
    for name in ("a.csv", "b.csv"):
        write_results(tmp_path / name, _binary_report(), settings={"seed": 1}, meta={"x": 1.5})
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    side_a = json.loads((tmp_path / "a.csv.json").read_text())
    side_b = json.loads((tmp_path / "b.csv.json").read_text())
    side_b["csv"] = "a.csv"
    assert side_a == side_b


def test_id_column_carried_and_clashes_refused(tmp_path):
    path = tmp_path / "p.csv"
    ids = np.array(["id 1", "x,y", '"q"'], dtype=object)
    write_results(path, _binary_report(), ids=ids, id_name="sample")
    frame = pd.read_csv(path)
    assert frame.columns[0] == "sample" and frame["sample"].tolist() == ids.tolist()
    with pytest.raises(InputError, match="'predicted' would appear twice"):
        write_results(path, _binary_report(), ids=ids, id_name="predicted")


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="R is not installed")
def test_r_read_csv_opens_it(tmp_path):
    path = tmp_path / "p.csv"
    write_results(path, _binary_report())
    out = subprocess.run(
        ["Rscript", "-e", f'd <- read.csv("{path}"); cat(ncol(d), nrow(d), names(d)[1])'],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["9", "3", "row"]
