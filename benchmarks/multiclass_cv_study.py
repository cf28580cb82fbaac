"""Multiclass study (issue 23, branch acc-mc): One-vs-All tuned on 3 folds, full or coarse grid.

The issue's hold-out note (``cv="auto"`` is a 30% hold-out for the multiclass schemes)
says 5-fold tuning took 12x the CPU for an 11% lower L1 on wu2010_ex2 and zeng_ex3.  This
study measures, on the draws and test points of ``accuracy_vs_peers.py`` (5 seeds, the
designs at the papers' n and iris, wine, penguins, digits), with CPU seconds side by side
in one process (BLAS on one thread, a warm-up fit first):

* ``plain``: the default before issue 23's fourth sitting (``wsvmgui_plain``), the CPU
  reference of the issue's 1.5x budget;
* ``ova_cv3``: One-vs-All, 3-fold tuning (the recalibration maps then cross-fit on the
  same folds), the full grid (7 C x 6 sigma);
* ``ova_cv3_s``: the same on a coarse grid, C in {0.1, 1, 10, 100} x sigma in
  {0.25, 0.5, 1, 1.5} sigma_M (16 cells);
* ``pw_cv3_s`` (K = 3-4 only): pairwise (the default there), 3-fold, the coarse grid;
* ``bp_cv3_s`` (K >= 5 only): BP1 (the default there), 3-fold, the coarse grid.

Rows are saved at once to ``benchmarks/results/multiclass_cv_study.json`` (resumable);
``--report`` prints the ratios to the best SVM peer of the benchmark of record (same
seeds) and the CPU over ``plain``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
OUT = ROOT / "benchmarks" / "results" / "multiclass_cv_study.json"
DESIGNS = ("wu2010_ex1", "wu2010_ex2", "wu2010_ex4", "zeng_ex1", "zeng_ex2", "zeng_ex3", "zeng_ex4")
REAL = ("iris", "wine", "penguins", "digits")
COARSE_C = (0.1, 1.0, 10.0, 100.0)
COARSE_SIGMA = (0.25, 0.5, 1.0, 1.5)
VARIANTS = ("plain", "ova_cv3", "ova_cv3_s", "pw_cv3_s", "bp_cv3_s")


def _estimator(variant: str, X, codes, K):
    import accuracy_vs_peers as avp

    from wsvmgui.app.schemes import prepare_scheme
    from wsvmgui.app.settings import RunSettings
    from wsvmgui.solvers.kernels import default_sigma_grid

    if variant == "plain":
        est, X2, c2, _ = avp.method_estimator("wsvmgui_plain", K, X, codes)
        return est, X2, c2
    scheme = {"ova": "ova", "pw": "pairwise", "bp": "bp1"}[variant.split("_")[0]]
    est, X2, c2 = prepare_scheme(RunSettings(scheme=scheme, n_jobs=1), X, codes)
    est.set_params(cv=3)
    if variant.endswith("_s"):
        sig = default_sigma_grid(X2, c2, seed=0)
        est.set_params(sigmas=sig[[0, 1, 3, 5]])
    return est, X2, c2


def run(data: str, seed: int, variant: str) -> dict:
    import accuracy_vs_peers as avp
    from threadpoolctl import threadpool_limits

    X, codes, Xt, yt, P_true, K = avp.load(data, None, seed, 10_000)
    with threadpool_limits(1):
        t0 = time.process_time()
        est, X2, c2 = _estimator(variant, X, codes, K)
        if variant.endswith("_s"):
            # the coarse C grid as lambdas on the first fold's training rows of a
            # sub-problem (One-vs-All: every row; a pair: its two classes' rows)
            n_tr = codes.size * 2 / 3
            if not variant.startswith("ova"):
                n_tr *= 2 / K
            est.set_params(lambdas=1.0 / (2.0 * n_tr * np.asarray(COARSE_C)))
        est.fit(X2, c2)
        P = est.predict_proba(Xt)
        cpu = time.process_time() - t0
    return {"data": data, "n": int(codes.size), "seed": seed, "K": K, "variant": variant,
            "cpu": cpu, **avp.metrics(P, yt, P_true)}  # fmt: skip


def _warm_up() -> None:
    for v in ("plain", "ova_cv3_s", "pw_cv3_s", "bp_cv3_s"):
        run("wu2010_ex2", 99, v)


def report() -> str:
    import accuracy_vs_peers as avp

    rows = json.loads(OUT.read_text())
    rec = json.loads((ROOT / "benchmarks/results/accuracy_vs_peers.json").read_text())["runs"]
    ref = collections.defaultdict(dict)
    for rs in rec.values():
        for r in rs:
            ref[(r["data"], r["n"], r["seed"])][r["method"]] = r
    g = collections.defaultdict(list)
    for r in rows.values():
        g[(r["data"], r["variant"])].append(r)
    lines = [
        "| data | variant | seeds | L1 or log loss | / best SVM peer | / record's default "
        "| CPU / plain (same run) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (data, v), rs in sorted(g.items()):
        key = "L1" if "L1" in rs[0] else "log_loss"
        val = np.mean([r[key] for r in rs])
        peers = [
            min(ref[(r["data"], r["n"], r["seed"])][p][key] for p in avp.SVM_PEERS) for r in rs
        ]
        dflt = [ref[(r["data"], r["n"], r["seed"])]["wsvmgui"][key] for r in rs]
        plain = [rows.get(f"{r['data']}|{r['seed']}|plain") for r in rs]
        cpu = (
            np.mean([r["cpu"] for r in rs]) / np.mean([p["cpu"] for p in plain])
            if all(plain)
            else np.nan
        )
        lines.append(
            f"| {data} | {v} | {len(rs)} | {val:.4f} | {val / np.mean(peers):.2f} | "
            f"{val / np.mean(dflt):.2f} | {cpu:.2f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="*", default=[*DESIGNS, *REAL])
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if args.report:
        print(report())
        return 0
    rows = json.loads(OUT.read_text()) if OUT.exists() else {}
    _warm_up()
    for seed in args.seeds:
        for data in args.data:
            for v in args.variants:
                key = f"{data}|{seed}|{v}"
                if key in rows:
                    continue
                big = data in (
                    "wu2010_ex4",
                    "zeng_ex1",
                    "zeng_ex2",
                    "zeng_ex3",
                    "zeng_ex4",
                    "digits",
                )
                if (v.startswith("pw") and big) or (v.startswith("bp") and not big):
                    continue
                rows[key] = run(data, seed, v)
                print(key, f"{rows[key].get('L1', rows[key]['log_loss']):.4f}",
                      f"{rows[key]['cpu']:.2f}", flush=True)  # fmt: skip
                tmp = OUT.with_suffix(".tmp")
                tmp.write_text(json.dumps(rows, indent=1))
                tmp.replace(OUT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
