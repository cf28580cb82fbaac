"""Memory and scale: peak memory near one kernel, kernel values on the fly, a Dask cluster.

Three measurements, each fit in a fresh subprocess (so that its peak resident memory,
``VmHWM`` of ``/proc/self/status``, is its own), BLAS on one thread:

* **memory**: binary RBF (design ``wuliu2011_ex1``) at n = 6000, a fixed-(lambda, sigma)
  ladder on one thread and a tuned one on two threads (3 sigmas x 2 lambdas on the
  default 30% hold-out, then the refit), M = 10 weights; predictions on the training
  rows included.  Target (issue 13): peak at most 1.5 dense kernels + 400 MB
  (one float64 kernel at n = 6000 is 275 MB).  With ``--baseline DIR`` the same probes
  also run on the code in ``DIR`` (e.g. ``git archive`` of the commit before), side by
  side.
* **large n**: a fixed-(lambda, sigma) ladder (C = 1, sigma = sigma_M, M = 10: 9
  weighted fits) at n = 20,000 with the dense kernel and with kernel values on the fly,
  and at n = 50,000 on the fly (its dense kernel, 18.6 GB, is not run on this shared
  machine); time, CPU and peak memory.
* **cluster**: a tuned binary run (n = 3000, 3 sigmas x 3 lambdas x 3 folds, M = 40)
  and a tuned One-vs-All run (Zeng Example 3, 5 classes, n = 1000, 3 lambdas x 3 folds,
  M = 20) on 1 and 2 local threads and on a Dask ``LocalCluster`` of 2 worker processes
  x 1 thread on the same machine (its start-up reported apart); the probabilities must
  be identical.

Writes ``benchmarks/results/scale.{md,json}``::

    python benchmarks/scale.py                       # everything (~40 min here)
    python benchmarks/scale.py --quick               # n = 2000 / 5000, small cluster runs
    python benchmarks/scale.py --only memory --baseline /tmp/before
    python benchmarks/scale.py --report --notes notes.md   # rewrite the report only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "scale"
HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
MB = 2**20


# ----------------------------------------------------------------------------- child
def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def probe(spec: dict) -> dict:
    """One fit in this process: peak memory and times (run in a fresh subprocess)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.evaluation.designs import simulate
    from wsvmgui.solvers.kernels import median_between_class_distance

    n = spec["n"]
    d = simulate("wuliu2011_ex1", n, seed=0)
    sm = median_between_class_distance(d.X, d.y)
    engine = {"engine": spec["engine"]} if spec.get("engine") else {}
    if spec["kind"] == "fixed":
        est = WeightedSVMClassifier(
            lam=1 / (2 * n), sigma=sm, n_weights=spec["M"], n_jobs=spec["n_jobs"], **engine
        )
    else:
        est = WeightedSVMClassifier(
            lambdas=[1 / (2 * 0.7 * n), 1 / (2 * 0.7 * n * 10)],
            sigmas=[0.5 * sm, sm, 1.5 * sm],
            n_weights=spec["M"],
            n_jobs=spec["n_jobs"],
            **engine,
        )
    rss_before = _status_mb("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time()
    with threadpool_limits(1):
        if spec.get("storage", "auto") != "auto":
            from wsvmgui.solvers.memory import memory_limits

            with memory_limits(storage=spec["storage"]):
                est.fit(d.X, d.y)
        else:
            est.fit(d.X, d.y)
        t_fit, c_fit = time.perf_counter() - t0, time.process_time() - c0
        p = est.predict_proba(d.X)[:, 1]
    return {
        **spec,
        "rss_before_mb": rss_before,
        "peak_mb": _status_mb("VmHWM"),
        "fit_wall_s": t_fit,
        "fit_cpu_s": c_fit,
        "total_wall_s": time.perf_counter() - t0,
        "kernel": est.fit_info_.get("kernel", "dense (before this change)"),
        "engines": est.fit_info_.get("final_engines", {"grid": 1}),
        "mean_p": float(np.mean(p)),
        "kernel_mb": 8 * n * n / MB,
    }


def run_probe(spec: dict, code_dir: Path | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code_dir or REPO)
    out = subprocess.run(
        [sys.executable, str(HERE), "--probe", json.dumps(spec)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"probe {spec} failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["code"] = "baseline" if code_dir else "this"
    print(json.dumps(result), flush=True)
    return result


# ----------------------------------------------------------------------------- cluster
def _worker_peak_mb() -> float:
    return _status_mb("VmHWM")


def _worker_cpu_s() -> float:
    return time.process_time()


def cluster_runs(quick: bool) -> dict:
    import logging

    import numpy as np
    from distributed import Client, LocalCluster
    from threadpoolctl import threadpool_limits

    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
    from wsvmgui.evaluation.designs import simulate
    from wsvmgui.executor import use_scheduler

    n_bin, n_ova = (1000, 400) if quick else (3000, 1000)
    bin_data = simulate("wuliu2011_ex1", n_bin, seed=0)
    ova_data = simulate("zeng_ex3", n_ova, seed=0)
    cases = {
        "binary": (
            lambda jobs: WeightedSVMClassifier(
                lambdas=[1 / (2 * n_bin * c) for c in (0.3, 1, 3)],
                sigmas=[0.5, 1.0, 2.0],
                n_weights=40,
                cv=3,
                n_jobs=jobs,
            ),
            bin_data,
            f"binary, n = {n_bin}, 3 sigmas x 3 lambdas x 3 folds, M = 40",
        ),
        "ova": (
            lambda jobs: MulticlassWeightedSVMClassifier(
                scheme="ova",
                lambdas=[1 / (2 * n_ova * c) for c in (0.3, 1, 3)],
                sigma=1.0,
                n_weights=20,
                cv=3,
                n_jobs=jobs,
            ),
            ova_data,
            f"One-vs-All, Zeng Ex. 3 (5 classes), n = {n_ova}, 3 lambdas x 3 folds, M = 20",
        ),
    }
    results: dict = {}
    t0 = time.perf_counter()
    with (
        LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        results["cluster_start_s"] = time.perf_counter() - t0
        client.run(lambda: __import__("wsvmgui.ladder.search"))  # workers import once
        for name, (make, d, what) in cases.items():
            row: dict = {"what": what}
            probas = {}
            for label in ("local_1", "local_2", "cluster_2x1"):
                jobs = 1 if label == "local_1" else 2
                start, cpu = time.perf_counter(), time.process_time()
                workers_cpu = sum(client.run(_worker_cpu_s).values())
                with threadpool_limits(1):
                    if label.startswith("cluster"):
                        with use_scheduler(client):
                            est = make(jobs).fit(d.X, d.y)
                    else:
                        est = make(jobs).fit(d.X, d.y)
                row[label] = {
                    "wall_s": time.perf_counter() - start,
                    "driver_cpu_s": time.process_time() - cpu,
                    "workers_cpu_s": sum(client.run(_worker_cpu_s).values()) - workers_cpu,
                    "fits": est.fit_info_["n_fits"],
                }
                probas[label] = est.predict_proba(d.X)
                print(name, label, row[label], flush=True)
            row["identical"] = all(np.array_equal(probas["local_1"], p) for p in probas.values())
            results[name] = row
        results["worker_peak_mb"] = list(client.run(_worker_peak_mb).values())
    return results


# ----------------------------------------------------------------------------- report
def _engines(r: dict) -> str:
    """The engine that answered the final fit (grid before the path existed)."""
    return ", ".join(r.get("engines", {"grid": 1})) or "grid"


def _planned(r: dict) -> str:
    """The plan's estimate from ``fit_info_['kernel']`` ('-' before the plan existed)."""
    text = r.get("kernel", "")
    return text.split("; ")[1].removesuffix(" planned") if " planned" in text else "-"


def _fmt(x: float, d: int = 0) -> str:
    return f"{x:,.{d}f}"


def write(results: dict, args: argparse.Namespace) -> None:
    lines = [
        "# Scale: memory near one kernel, kernel values on the fly, a Dask cluster",
        "",
        "Generated by `benchmarks/scale.py`"
        + (" --quick" if args.quick else "")
        + f" on {platform.node()} ({os.cpu_count()} cores, shared with other jobs; BLAS on "
        "one thread). Each memory figure is the peak resident memory (`VmHWM`) of a fresh "
        "process that simulates the data, fits and predicts the training rows; `before fit`"
        " is its resident memory just before `fit` (interpreter, libraries, data).",
        "",
    ]
    mem = results.get("memory", [])
    if mem:
        lines += [
            f"## Peak memory at n = {mem[0]['n']} (target: 1.5 kernels + 400 MB)",
            "",
            "`planned` is the final fit's estimate (`fit_info_['kernel']`), beside the "
            "memory held before the fit.",
            "",
            "| code | engine | run | threads | kernel (MB) | before fit (MB) | peak (MB) | "
            "target (MB) | target met | peak / kernel | fit wall (s) | fit CPU (s) | planned |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in mem:
            target = 1.5 * r["kernel_mb"] + 400
            lines.append(
                f"| {r['code']} | {_engines(r)} | {r['kind']} | {r['n_jobs']} | "
                f"{_fmt(r['kernel_mb'])} | "
                f"{_fmt(r['rss_before_mb'])} | {_fmt(r['peak_mb'])} | {_fmt(target)} | "
                f"{'yes' if r['peak_mb'] <= target else '**no**'} | "
                f"{r['peak_mb'] / r['kernel_mb']:.2f} | {r['fit_wall_s']:.1f} | "
                f"{r['fit_cpu_s']:.1f} | {_planned(r)} |"
            )
        lines.append("")
    large = results.get("large", [])
    if large:
        lines += [
            "## Large n: dense kernel against kernel values on the fly",
            "",
            "Fixed lambda = 1/(2n) (C = 1), sigma = sigma_M, M = 10 (the grid's 9 weighted "
            "fits; the path covers every weight), one thread; `on-the-fly` was forced where "
            "the dense kernel would also fit (the default engine, the path, needs the dense "
            "matrix: the grid takes its place there).",
            "",
            "| n | kernel | engine | dense kernel (MB) | before fit (MB) | peak (MB) | "
            "fit wall (s) | fit CPU (s) | fit + predict wall (s) | planned |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in large:
            lines.append(
                f"| {_fmt(r['n'])} | {r['storage']} | {_engines(r)} | {_fmt(r['kernel_mb'])} | "
                f"{_fmt(r['rss_before_mb'])} | {_fmt(r['peak_mb'])} | {r['fit_wall_s']:.0f} | "
                f"{r['fit_cpu_s']:.0f} | {r['total_wall_s']:.0f} | {_planned(r)} |"
            )
        lines.append("")
    cl = results.get("cluster")
    if cl:
        lines += [
            "## Local threads against a Dask cluster",
            "",
            f"`LocalCluster(n_workers=2, processes=True, threads_per_worker=1)` on the same "
            f"machine; starting it took {cl['cluster_start_s']:.1f} s (not counted below). "
            "`driver CPU` is the CPU time of the process calling `fit` (near zero on the "
            "cluster: the workers fit), `CPU` the CPU time of all processes that fitted "
            "(this one locally; this one and the workers on the cluster), the figure to "
            "compare on a shared machine. Worker peak memory: "
            + ", ".join(f"{m:.0f} MB" for m in cl["worker_peak_mb"])
            + ".",
            "",
            "| run | wall: 1 thread / 2 threads / cluster 2 x 1 (s) | cluster / 2 threads "
            "(wall) | CPU: 1 thread / 2 threads / cluster (s) | cluster / 1 thread (CPU) | "
            "driver CPU on the cluster (s) | identical probabilities |",
            "|---|---|---|---|---|---|---|",
        ]
        for name in ("binary", "ova"):
            r = cl[name]
            one, two, dask = r["local_1"], r["local_2"], r["cluster_2x1"]
            cpu = [one["driver_cpu_s"], two["driver_cpu_s"]]
            cpu.append(dask["driver_cpu_s"] + dask.get("workers_cpu_s", float("nan")))
            lines.append(
                f"| {r['what']} | {one['wall_s']:.1f} / {two['wall_s']:.1f} / "
                f"{dask['wall_s']:.1f} | {dask['wall_s'] / two['wall_s']:.2f} | "
                f"{cpu[0]:.1f} / {cpu[1]:.1f} / {cpu[2]:.1f} | {cpu[2] / cpu[0]:.2f} | "
                f"{dask['driver_cpu_s']:.1f} | {r['identical']} |"
            )
        lines.append("")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    md = OUT.with_suffix(".md")
    notes = results.get("notes", "")
    md.write_text("\n".join(lines) + ("\n" + notes if notes else ""))
    OUT.with_suffix(".json").write_text(json.dumps(results, indent=1))
    print(f"wrote {md}")


def _large_key(r: dict) -> tuple:
    return r["n"], r["storage"], r.get("engine")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["memory", "large", "cluster"], action="append")
    ap.add_argument("--baseline", type=Path, help="also run the memory probes on this code")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    ap.add_argument("--out-dir", type=Path)
    ap.add_argument("--notes", type=Path, help="markdown appended to the report (kept)")
    ap.add_argument("--report", action="store_true", help="only rewrite the report from the JSON")
    ap.add_argument(
        "--large",
        nargs="+",
        metavar="N:STORAGE[:ENGINE]",
        help="large-n probes to run (e.g. 20000:dense:grid); the others keep their last rows",
    )
    args = ap.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(json.loads(args.probe))))
        return 0
    # This checkout, also in the cluster's worker processes (inherit the environment).
    sys.path.insert(0, str(REPO))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    global OUT
    if args.out_dir:
        OUT = args.out_dir / "scale"
    parts = [] if args.report else args.only or ["memory", "large", "cluster"]
    previous = OUT.with_suffix(".json")
    keep = (args.only or args.report) and previous.exists()
    results: dict = json.loads(previous.read_text()) if keep else {}
    n_mem = 2000 if args.quick else 6000
    if "memory" in parts:
        mem = []
        for code in [None, *([args.baseline] if args.baseline else [])]:
            for engine in ["path", "grid"] if code is None else [None]:
                for kind, jobs in (("fixed", 1), ("tuned", 2)):
                    spec = {"kind": kind, "n": n_mem, "n_jobs": jobs, "M": 10, "engine": engine}
                    mem.append(run_probe(spec, code))
        results["memory"] = mem
    if "large" in parts:
        if args.large:
            sizes = [tuple(s.split(":")) for s in args.large]
        elif args.quick:
            sizes = [("5000", "dense", "path"), ("5000", "dense", "grid"), ("5000", "on-the-fly")]
        else:
            sizes = [
                ("20000", "dense", "path"),
                ("20000", "dense", "grid"),
                ("20000", "on-the-fly"),
                ("50000", "on-the-fly"),
            ]
        rows = {_large_key(r): r for r in results.get("large", [])} if args.large else {}
        for n, storage, *engine in sizes:
            spec = {"kind": "fixed", "n": int(n), "n_jobs": 1, "M": 10, "storage": storage}
            spec["engine"] = engine[0] if engine else None
            rows[_large_key(spec)] = run_probe(spec)
        results["large"] = list(rows.values())
    if "cluster" in parts:
        results["cluster"] = cluster_runs(args.quick)
    if args.notes:
        results["notes"] = args.notes.read_text()
    write(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
