"""The speed benchmarks' shared worker launcher (benchmarks/_worker.py): the worker runs
single-threaded on the given source tree and its last JSON line is the result; a failing
worker raises with its last error line."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parents[1] / "benchmarks" / "_worker.py"

SCRIPT = """
import json, os, sys
args = sys.argv[sys.argv.index("--worker") + 1:]
if args[0] == "fail":
    print("some progress", file=sys.stderr)
    raise SystemExit("ValueError: " + args[1])
print("a line that is not the result")
threads = {v: os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                          "MKL_NUM_THREADS")}
print(json.dumps({"args": args, "threads": threads,
                  "pythonpath": os.environ["PYTHONPATH"]}))
"""


@pytest.fixture(scope="module")
def worker():
    spec = importlib.util.spec_from_file_location("_bench_worker", MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_worker_result_is_its_last_json_line_single_threaded(worker, tmp_path, monkeypatch):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    out = worker.run_worker(script, ["case", '{"n": 3}'], tmp_path / "src")
    assert out["args"] == ["case", '{"n": 3}']
    assert out["threads"] == dict.fromkeys(worker.SINGLE_THREAD, "1")
    assert out["pythonpath"] == str(tmp_path / "src")


def test_failed_worker_raises_its_last_error_line(worker, tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    with pytest.raises(worker.WorkerFailed, match=r"^ValueError: bad case$"):
        worker.run_worker(script, ["fail", "bad case"], tmp_path)


def test_side_by_side_alternates_the_methods_from_seed_to_seed(worker, tmp_path, capsys):
    """Every method runs once per case, each seed starting one method later, each in its
    own worker with the case's arguments before the method."""
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    cases = [(["d", "0"], 0), (["d", "1"], 1), (["e", "4"], 4)]
    rows = worker.side_by_side(script, cases, ["a", "b", "c"], tmp_path, lambda r: "done")
    assert [r["args"] for r in rows] == [
        ["d", "0", "a"], ["d", "0", "b"], ["d", "0", "c"],
        ["d", "1", "b"], ["d", "1", "c"], ["d", "1", "a"],
        ["e", "4", "b"], ["e", "4", "c"], ["e", "4", "a"],
    ]  # fmt: skip
    assert capsys.readouterr().out.splitlines()[3] == "d 1 b: done"


def test_paired_takes_ratios_per_seed_then_the_median_on_complete_seeds(worker):
    def row(data, seed, method, cpu, before=100.0, peak=150.0):
        return {"data": data, "seed": seed, "method": method, "cpu": cpu,
                "before_mb": before, "peak_mb": peak}  # fmt: skip

    rows = [
        row("x", 0, "new", 2.0), row("x", 0, "old", 1.0, peak=130.0),
        row("x", 1, "new", 3.0), row("x", 1, "old", 6.0, peak=190.0),
        row("x", 2, "new", 9.0), row("x", 2, "old", 3.0, peak=110.0),
        row("x", 3, "new", 100.0),  # no "old" on seed 3: left out
        row("y", 0, "new", 1.0),  # no seed of both: the data set is left out
    ]  # fmt: skip
    groups = worker.paired(rows, ["new", "old"])
    assert list(groups) == ["x"]
    g = groups["x"]
    assert g.seeds == [0, 1, 2] and g.first is rows[0]
    assert g.ratio("new", "old") == 2.0  # median of 2, 0.5, 3 (not 14 / 10)
    assert g.median("cpu", "new") == 3.0
    assert g.added("old") == 30.0  # median of 30, 90, 10
    assert g.ratio("old", "new", key="peak_mb") == pytest.approx(130 / 150)
    # as table cells: the medians per method, the ratios per pair
    assert g.cells("cpu", ".1f") == "3.0 | 3.0"
    assert g.ratios([("new", "old"), ("old", "new")]) == "2.00 | 0.50"


FIT_SCRIPT = """
import json
from _worker import peak_mb, timed_fit

class Touch:
    def fit(self, X, y):
        # 64 MB more than the peak so far: the peak must rise by at least 64 MB
        self.block = bytearray(int((peak_mb() + 64) * 2**20))
        for i in range(0, len(self.block), 4096):  # make every page resident
            self.block[i] = 1
        return self

print(json.dumps(timed_fit(Touch(), None, None)))
"""


def test_timed_fit_reports_the_memory_the_fit_added(worker, tmp_path):
    """In a fresh process, a fit that makes 64 MB more than the peak so far resident
    raises the peak by at least 64 MB (and by at most that and what was resident)."""
    script = tmp_path / "fit.py"
    script.write_text(FIT_SCRIPT)
    cost = worker.run_worker(script, [], MODULE.parent)
    assert set(cost) == {"cpu", "before_mb", "peak_mb"}
    assert 64 <= cost["peak_mb"] - cost["before_mb"] <= 64 + cost["before_mb"] + 4


def test_rewrite_report_regenerates_the_report_from_the_stored_results(worker, tmp_path, capsys):
    """``--report-only``: the .md is the report of the .json's rows and machine, and the
    .json is left as it was."""
    out = tmp_path / "results" / "bench"
    rows = [{"data": "a", "cpu": 1.5}, {"data": "b", "cpu": 0.25}]
    worker.write_results(out, {"machine": "m1", "rows": rows}, "stale report\n")
    stored = out.with_suffix(".json").read_bytes()

    def report(rows, host):
        return f"{host}: " + ", ".join(f"{r['data']} {r['cpu']}" for r in rows) + "\n"

    worker.rewrite_report(out, report)
    assert out.with_suffix(".md").read_text() == "m1: a 1.5, b 0.25\n"
    assert out.with_suffix(".json").read_bytes() == stored
    assert "m1: a 1.5, b 0.25" in capsys.readouterr().out


def test_arguments_take_the_shared_options_and_the_named_worker_arguments(worker, tmp_path):
    parser = worker.arguments("Title line.\n\nMore.", ("CASE", "SEED"), [0, 1], tmp_path)
    assert parser.description == "Title line."
    args = parser.parse_args([])
    assert (args.seeds, args.out_dir, args.report_only, args.worker) == (
        [0, 1],
        tmp_path,
        False,
        None,
    )
    args = parser.parse_args(["--report-only", "--seeds", "3", "--worker", "a", "7"])
    assert (args.seeds, args.report_only, args.worker) == ([3], True, ["a", "7"])
    with pytest.raises(SystemExit):
        parser.parse_args(["--worker", "a"])  # one argument short
