"""Accuracy guard for the estimator-core refactor (issue 9): default fits against the truth.

Fits the default binary ladder (:class:`WeightedSVMClassifier`), the default One-vs-All
divide-and-conquer estimator and the default joint simplex estimator (with the app's grid
N = 20) on simulation designs with fixed seeds, and reports the L1 and EGKL against the
true probabilities on a large test sample, with the process CPU time of each fit.  Run it
before and after a change to the core; the results file keeps one section per label.

Usage::

    python benchmarks/core_regression.py --label before   # or --label after
    python benchmarks/core_regression.py --quick --label smoke

Writes (appends a section to) benchmarks/results/core_regression.md and .json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import truth_metrics

RESULTS = Path(__file__).parent / "results"

#: (estimator name, factory, design, training size)
CASES = [
    ("binary", lambda: WeightedSVMClassifier(), "wang2008_ex1", 100),
    ("binary", lambda: WeightedSVMClassifier(), "wuliu2011_ex1", 100),
    ("binary", lambda: WeightedSVMClassifier(), "wuliu2011_ex6", 600),
    ("ova", lambda: MulticlassWeightedSVMClassifier(scheme="ova"), "wu2010_ex2", 150),
    ("ova", lambda: MulticlassWeightedSVMClassifier(scheme="ova"), "zeng_ex3", 300),
    ("joint", lambda: JointWSVMClassifier(N=20), "wu2010_ex1", 200),
    ("joint", lambda: JointWSVMClassifier(N=20), "wu2010_ex2", 150),
]


def run(seeds: list[int], n_test: int, quick: bool) -> list[dict]:
    rows = []
    cases = CASES[::3] if quick else CASES
    for name, factory, design, n in cases:
        for seed in seeds:
            train = simulate(design, n, seed=seed)
            test = simulate(design, n_test, seed=10_000 + seed)
            est = factory()
            t0 = time.process_time()
            with threadpool_limits(1):
                est.fit(train.X, train.y)
            cpu = time.process_time() - t0
            m = truth_metrics(est.predict_proba(test.X), test.p)
            rows.append(
                {
                    "estimator": name,
                    "design": design,
                    "n": n,
                    "seed": seed,
                    "L1": m["L1"],
                    "EGKL": m["EGKL"],
                    "cpu_s": cpu,
                }
            )
            print(
                f"{name:7s} {design:14s} n={n:4d} seed={seed} L1={m['L1']:.4f} "
                f"EGKL={m['EGKL']:.4f} cpu={cpu:.1f}s",
                flush=True,
            )
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| estimator | design | n | seeds | mean L1 | mean EGKL | mean CPU s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    keys = sorted({(r["estimator"], r["design"], r["n"]) for r in rows}, key=str)
    for key in keys:
        sel = [r for r in rows if (r["estimator"], r["design"], r["n"]) == key]
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {len(sel)} | "
            f"{np.mean([r['L1'] for r in sel]):.4f} | {np.mean([r['EGKL'] for r in sel]):.4f} | "
            f"{np.mean([r['cpu_s'] for r in sel]):.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", required=True, help="section name, e.g. before / after")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-test", type=int, default=3000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    args = ap.parse_args()
    rows = run(list(range(args.seeds)), args.n_test, args.quick)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    jpath = args.out_dir / "core_regression.json"
    data = json.loads(jpath.read_text()) if jpath.exists() else {}
    data[args.label] = rows
    jpath.write_text(json.dumps(data, indent=1))
    md = [
        "# Estimator-core regression guard (issue 9)",
        "",
        "Default fits (joint: N = 20) against the true probabilities on a test sample of "
        f"{args.n_test} points; mean over seeds 0..{args.seeds - 1}; CPU time of the fit with "
        "one BLAS thread.  Written by `benchmarks/core_regression.py`.",
    ]
    for label, sect in data.items():
        md += ["", f"## {label}", "", table(sect)]
    (args.out_dir / "core_regression.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
