"""Run one benchmark measurement in a fresh single-threaded worker process.

The speed benchmarks (``binary_default_speed.py``, ``scheme_speed.py``, the ``*_cost.py``
and ``*_memory.py`` scripts) measure each (case, method) in its own process, so that CPU
seconds (``time.process_time``) and peak memory (``ru_maxrss``) are the measurement's
alone: the script is re-run with ``--worker ...`` arguments, BLAS on one thread, and
prints its result as one JSON object on its last line of standard output
(:func:`run_worker`).  The side-by-side driver: :func:`side_by_side` runs the methods of
every case alternated (:func:`alternated`), the worker measures with :func:`timed_fit`,
and :func:`paired` groups the results for per-seed ratios and medians; :func:`write_results`
writes them with their report, which :func:`rewrite_report` regenerates.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

#: Thread-count variables pinned to 1 in the worker (BLAS and OpenMP).
SINGLE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class WorkerFailed(RuntimeError):
    """The worker exited non-zero; the message is the last line of its standard error
    (empty when it wrote none)."""


def run_worker(script: str | Path, worker_args: list[str], code: str | Path) -> dict:
    """Run ``python script --worker *worker_args`` single-threaded and read its result.

    Parameters
    ----------
    script : str or Path
        The benchmark script to re-run as the worker.
    worker_args : list of str
        The arguments after ``--worker``.
    code : str or Path
        The ``PYTHONPATH`` of the worker: the source tree whose ``wsvmgui`` it imports
        (the checkout's root, or another tree to compare against).

    Returns
    -------
    dict
        The JSON object on the worker's last line of standard output.

    Raises
    ------
    WorkerFailed
        When the worker exits with a non-zero status.
    """
    env = dict(os.environ)
    env.update({var: "1" for var in SINGLE_THREAD})
    env["PYTHONPATH"] = str(code)
    proc = subprocess.run(
        [sys.executable, str(script), "--worker", *worker_args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise WorkerFailed(lines[-1] if lines else "")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def peak_mb() -> float:
    """Peak resident memory of this process so far, in MB (``ru_maxrss``, KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> str:
    """The machine line of a report: architecture and Python version."""
    return f"{platform.machine()}, python {platform.python_version()}"


def record_module() -> ModuleType:
    """The benchmark of record's module (``accuracy_vs_peers.py`` next to this file: its
    data, ``load``, and estimators, ``method_estimator``)."""
    path = Path(__file__).resolve().parent / "accuracy_vs_peers.py"
    spec = importlib.util.spec_from_file_location("accuracy_vs_peers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed_fit(est: Any, X: Any, y: Any) -> dict[str, float]:
    """Fit ``est`` to rows ``X`` (n, p) and labels ``y`` (n,) in this (fresh) process.

    Returns
    -------
    dict
        ``cpu``: CPU seconds of the fit (``time.process_time``); ``before_mb``: the peak
        resident memory before it (imports, data, compiled kernels); ``peak_mb``: at its
        end (:func:`peak_mb`).
    """
    before = peak_mb()
    t0 = time.process_time()
    est.fit(X, y)
    return {"cpu": time.process_time() - t0, "before_mb": before, "peak_mb": peak_mb()}


def alternated(methods: Sequence[str], seed: int) -> list[str]:
    """``methods`` in the order run on ``seed``: each seed starts one method later, so
    that no method always runs first (or last) on a shared machine."""
    k = seed % len(methods)
    return [*methods[k:], *methods[:k]]


def side_by_side(
    script: str | Path,
    cases: Iterable[tuple[list[str], int]],
    methods: Sequence[str],
    code: str | Path,
    show: Callable[[dict], str],
) -> list[dict]:
    """Run every method on every case, each in a fresh worker (:func:`run_worker`).

    Parameters
    ----------
    script : str or Path
        The benchmark script; its worker takes ``--worker *args METHOD``.
    cases : iterable of (list of str, int)
        Each case's worker arguments before the method, and its seed (the methods'
        order: :func:`alternated`).
    methods : sequence of str
    code : str or Path
        The workers' ``PYTHONPATH``.
    show : callable
        A worker's result -> the progress line printed after the case and method.

    Returns
    -------
    list of dict
        The workers' results, in the order run.
    """
    rows = []
    for args, seed in cases:
        for method in alternated(methods, seed):
            rows.append(run_worker(script, [*args, method], code))
            print(f"{' '.join(args)} {method}: {show(rows[-1])}", flush=True)
    return rows


@dataclass(frozen=True)
class Paired:
    """One data set's results of every method, on the seeds where all of them ran.

    Attributes
    ----------
    by : dict of (int, str) to dict
        (seed, method) -> the worker's result.
    seeds : list of int
        The seeds with a result of every method, increasing (at least one).
    methods : tuple of str
    """

    by: dict[tuple[int, str], dict]
    seeds: list[int]
    methods: tuple[str, ...]

    @property
    def first(self) -> dict:
        """The first seed's result of the first method (the data set's n, K, ...)."""
        return self.by[(self.seeds[0], self.methods[0])]

    def median(self, key: str, method: str) -> float:
        """The median over the seeds of ``method``'s ``key``."""
        return statistics.median(self.by[(s, method)][key] for s in self.seeds)

    def cells(self, key: str, spec: str) -> str:
        """Every method's :meth:`median` of ``key`` formatted by ``spec`` (e.g. ``".2f"``),
        as Markdown table cells joined by ``" | "``."""
        return " | ".join(format(self.median(key, m), spec) for m in self.methods)

    def ratio(self, a: str, b: str, key: str = "cpu") -> float:
        """``key`` of method ``a`` over method ``b`` per seed, then the median."""
        return statistics.median(self.by[(s, a)][key] / self.by[(s, b)][key] for s in self.seeds)

    def ratios(self, pairs: Sequence[tuple[str, str]], key: str = "cpu", spec: str = ".2f") -> str:
        """:meth:`ratio` of ``key`` for every ``(a, b)`` of ``pairs`` formatted by ``spec``,
        as Markdown table cells joined by ``" | "``."""
        return " | ".join(format(self.ratio(a, b, key), spec) for a, b in pairs)

    def added(self, method: str) -> float:
        """The median over the seeds of what ``method``'s fit added to the peak memory
        (``peak_mb - before_mb``, MB)."""
        return statistics.median(
            self.by[(s, method)]["peak_mb"] - self.by[(s, method)]["before_mb"] for s in self.seeds
        )


def paired(rows: Iterable[dict], methods: Sequence[str]) -> dict[str, Paired]:
    """Results (each with ``data``, ``seed`` and ``method``) grouped by data set, in order
    of first appearance; data sets without a seed of every method are left out."""
    rows = list(rows)
    out = {}
    for data in dict.fromkeys(r["data"] for r in rows):
        by = {(r["seed"], r["method"]): r for r in rows if r["data"] == data}
        seeds = sorted({s for s, _ in by if all((s, m) in by for m in methods)})
        if seeds:
            out[data] = Paired(by, seeds, tuple(methods))
    return out


def arguments(
    doc: str, worker: Sequence[str], seeds: Sequence[int], out_dir: Path
) -> argparse.ArgumentParser:
    """A side-by-side script's command line: its description (the first line of ``doc``),
    ``--seeds`` (default ``seeds``), ``--out-dir`` (default ``out_dir``),
    ``--report-only`` (:func:`rewrite_report`) and ``--worker`` taking the arguments
    named ``worker``; the script adds its own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(seeds))
    parser.add_argument("--out-dir", type=Path, default=out_dir)
    parser.add_argument("--report-only", action="store_true", help="rewrite the .md")
    parser.add_argument("--worker", nargs=len(worker), metavar=tuple(worker))
    return parser


def write_results(out: Path, payload: dict, report: str) -> None:
    """Write ``payload`` to ``out.json`` and ``report`` (Markdown) to ``out.md``, each
    atomically, and print the report."""
    from wsvmgui.io.atomic import atomic_write_text

    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out.with_suffix(".json"), json.dumps(payload, indent=1))
    atomic_write_text(out.with_suffix(".md"), report)
    print(report)


def rewrite_report(out: Path, report: Callable[[list[dict], str], str]) -> None:
    """Rewrite ``out.md`` from the results in ``out.json`` (a script's ``--report-only``):
    ``report(rows, machine)`` of its ``"rows"`` and ``"machine"``, through
    :func:`write_results` (the .json rewritten as read)."""
    payload = json.loads(out.with_suffix(".json").read_text())
    write_results(out, payload, report(payload["rows"], payload["machine"]))
