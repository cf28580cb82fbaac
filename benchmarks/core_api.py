"""Before/after guard of the issue-19 core change (one search, one vocabulary, weights).

Runs the same fits with two source trees side by side, each fit in a fresh process, the
trees alternating case by case so that machine load hits both alike:

* speed: the default tuned binary estimator (``WeightedSVMClassifier()``: path engine,
  5-fold CV up to 500 points, a screened 30% hold-out above) at n = 500 and n = 2000;
* accuracy and speed of the defaults of ``benchmarks/core_regression.py``: the binary
  ladder and One-vs-All (the same choices are expected), and the joint simplex fit with
  its grid N = 20, whose default kernel changed from linear to RBF.

CPU seconds are the child process's (``resource.getrusage(RUSAGE_CHILDREN)``), BLAS and
OpenMP pinned to one thread, after one untimed fit per tree (numba compiles the path's
kernels once per source tree); ratios are after / before within one run.

Usage::

    python benchmarks/core_api.py --before /path/to/old/tree --seeds 0 1 2

Writes benchmarks/results/core_api.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

#: (label, estimator expression, design, n); the estimator is built in the child.
CASES = [
    ("binary default, speed", "WeightedSVMClassifier()", "wuliu2011_ex1", 500),
    ("binary default, speed", "WeightedSVMClassifier()", "wuliu2011_ex1", 2000),
    ("binary default", "WeightedSVMClassifier()", "wang2008_ex1", 100),
    ("binary default", "WeightedSVMClassifier()", "wuliu2011_ex6", 600),
    ("ova default", "MulticlassWeightedSVMClassifier()", "zeng_ex3", 300),
    ("joint default, N = 20", "JOINT", "wu2010_ex1", 200),
    ("joint default, N = 20", "JOINT", "wu2010_ex2", 150),
]

CHILD = r"""
import json, sys, warnings
import numpy as np
from wsvmgui import *
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import truth_metrics
expr, design, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if expr == "JOINT":  # the default joint estimator with the grid N = 20, in either tree
    import inspect
    names = inspect.signature(JointWSVMClassifier).parameters
    est = JointWSVMClassifier(n_weights=20) if "n_weights" in names else JointWSVMClassifier(N=20)
else:
    est = eval(expr)
train, test = simulate(design, n, seed=seed), simulate(design, 5000, seed=10_000 + seed)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    est.fit(train.X, train.y)
m = truth_metrics(est.predict_proba(test.X), test.p)
print(json.dumps({"L1": m["L1"], "EGKL": m["EGKL"], "kernel": str(getattr(est, "kernel", ""))}))
"""


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_one(tree: Path, expr: str, design: str, n: int, seed: int) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    before = _child_cpu()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, expr, design, str(n), str(seed)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd="/tmp",
    )
    cpu = _child_cpu() - before
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "cpu_s": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="source tree of the old code")
    ap.add_argument("--after", type=Path, default=HERE.parent, help="source tree of the new")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = ap.parse_args()
    for tree in (args.before, args.after):  # numba compiles (and caches) the path once per tree
        run_one(tree, "WeightedSVMClassifier(lam=0.01, sigma=1.0)", "wuliu2011_ex1", 50, 0)
    rows = []
    for label, expr, design, n in CASES:
        for seed in args.seeds:
            pair = {}
            for side, tree in (("before", args.before), ("after", args.after)):
                pair[side] = run_one(tree, expr, design, n, seed)
            rows.append({"case": label, "design": design, "n": n, "seed": seed, **pair})
            b, a = pair["before"], pair["after"]
            print(
                f"{label:24s} {design:14s} n={n:5d} seed={seed}  "
                f"L1 {b['L1']:.4f} -> {a['L1']:.4f}  EGKL {b['EGKL']:.4f} -> {a['EGKL']:.4f}  "
                f"cpu {b['cpu_s']:.1f} -> {a['cpu_s']:.1f} s",
                flush=True,
            )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "core_api.json").write_text(json.dumps(rows, indent=1) + "\n")
    (RESULTS / "core_api.md").write_text(report(rows))


def report(rows: list[dict]) -> str:
    lines = [
        "# Issue 19 core change: before / after",
        "",
        "Each fit in a fresh process, the two trees alternating case by case; CPU seconds",
        "of the child (BLAS pinned to one thread); means over the seeds; test sets of 5000",
        "points against the true probabilities.  Written by `benchmarks/core_api.py`.",
        "",
        "| case | design | n | L1 before | L1 after | EGKL before | EGKL after "
        "| CPU s before | CPU s after | CPU ratio |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    keys = list(dict.fromkeys((r["case"], r["design"], r["n"]) for r in rows))
    for case, design, n in keys:
        mine = [r for r in rows if (r["case"], r["design"], r["n"]) == (case, design, n)]

        def mean(side: str, key: str, mine: list[dict] = mine) -> float:
            return sum(r[side][key] for r in mine) / len(mine)

        ratio = mean("after", "cpu_s") / mean("before", "cpu_s")
        lines.append(
            f"| {case} | {design} | {n} | {mean('before', 'L1'):.4f} | {mean('after', 'L1'):.4f} "
            f"| {mean('before', 'EGKL'):.4f} | {mean('after', 'EGKL'):.4f} "
            f"| {mean('before', 'cpu_s'):.1f} | {mean('after', 'cpu_s'):.1f} | {ratio:.2f} |"
        )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
