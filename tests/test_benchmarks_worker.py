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
