"""Accuracy of the non-crossing ladder against the independent ladder (issue 23).

Writes ``benchmarks/results/noncrossing_accuracy.{md,json}``.  On Wu & Liu's binary designs
(``wuliu2011_ex1``, ``ex2``, ``ex6`` of :mod:`wsvmgui.evaluation.designs`), for each size
and seed, the same training draw is given to:

* ``independent``: the binary ladder at its defaults (``WeightedSVMClassifier()``: the
  exact path, lambda and sigma tuned by EGKL);
* ``nc``: the non-crossing ladder at its defaults (``NonCrossingLadderClassifier()``:
  lambda and sigma tuned by the same search, the ladder from the path, count rule);
* ``nc-interp``: the same with ``rule="interpolate"``;
* ``nc-hinge``: Wu & Liu's own tuning (``criterion="hinge"``: lambda per weight by the
  hinge loss on a 30% hold-out, sigma by that ladder's EGKL on it), interpolate rule;
* ``nc-egkl`` (``--egkl``): lambda and sigma by the non-crossing ladder's own EGKL.

Every estimate is scored against the true probabilities of an independent test draw
(10,000 points): L1 = mean over points of sum_k |p_hat_k - p_k| and EGKL = mean
sum_k p_k log(p_k / p_hat_k).  CPU seconds of each fit (single-threaded BLAS).

Usage: ``python benchmarks/noncrossing_accuracy.py [--seeds 5] [--sizes 100 500]
[--no-hinge] [--egkl] [--quick] [--name STEM]``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from wsvmgui.estimators.binary import WeightedSVMClassifier  # noqa: E402
from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier  # noqa: E402
from wsvmgui.evaluation.designs import simulate  # noqa: E402
from wsvmgui.evaluation.metrics import egkl, l1_error  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
DESIGNS = ("wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")


def methods(hinge: bool, own_egkl: bool) -> dict:
    out = {
        "independent": lambda: WeightedSVMClassifier(),
        "nc": lambda: NonCrossingLadderClassifier(),
        "nc-interp": lambda: NonCrossingLadderClassifier(rule="interpolate"),
    }
    if hinge:
        out["nc-hinge"] = lambda: NonCrossingLadderClassifier(criterion="hinge", rule="interpolate")
    if own_egkl:
        out["nc-egkl"] = lambda: NonCrossingLadderClassifier(criterion="egkl", rule="interpolate")
    return out


def run_one(design: str, n: int, seed: int, makers: dict, n_test: int) -> list[dict]:
    train = simulate(design, n, seed)
    test = simulate(design, n_test, 10_000 + seed)
    rows = []
    for name, make in makers.items():
        start = time.process_time()
        est = make().fit(train.X, train.y)
        cpu = time.process_time() - start
        P = est.predict_proba(test.X)
        row = {
            "design": design,
            "n": n,
            "seed": seed,
            "method": name,
            "l1": l1_error(P, test.p),
            "egkl": egkl(P, test.p),
            "cpu": cpu,
            "lambda": float(est.lambda_),
            "sigma": float(est.sigma_),
        }
        if hasattr(est, "diagnostics_"):
            dg = est.diagnostics_
            row.update(repairs=dg["n_active_set"], qps=dg["n_qp"], shortcuts=dg["n_shortcut"])
        rows.append(row)
        print(
            f"{design} n={n} seed={seed} {name:12s} L1 {row['l1']:.4f} EGKL {row['egkl']:.4f} "
            f"cpu {cpu:.1f}",
            flush=True,
        )
    return rows


def summarise(rows: list[dict], names: list[str]) -> list[str]:
    text = []
    keys = sorted({(r["design"], r["n"]) for r in rows}, key=lambda k: (k[1], k[0]))
    text.append(
        "| design | n | method | L1 | EGKL | CPU s | L1 - independent (paired, SE) | wins (L1) |"
    )
    text.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for design, n in keys:
        mine = [r for r in rows if r["design"] == design and r["n"] == n]
        base = {r["seed"]: r for r in mine if r["method"] == "independent"}
        for name in names:
            sel = [r for r in mine if r["method"] == name]
            if not sel:
                continue
            l1 = np.array([r["l1"] for r in sel])
            eg = np.array([r["egkl"] for r in sel])
            cpu = np.array([r["cpu"] for r in sel])
            if name == "independent":
                diff, wins = "", ""
            else:
                d = np.array([r["l1"] - base[r["seed"]]["l1"] for r in sel])
                se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else float("nan")
                diff = f"{d.mean():+.4f} ({se:.4f})"
                wins = f"{int((d < 0).sum())}/{d.size}"
            text.append(
                f"| {design} | {n} | {name} | {l1.mean():.4f} | {eg.mean():.4f} | "
                f"{cpu.mean():.1f} | {diff} | {wins} |"
            )
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 500])
    ap.add_argument("--n-test", type=int, default=10_000)
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS))
    ap.add_argument("--no-hinge", action="store_true", help="leave out criterion='hinge'")
    ap.add_argument("--egkl", action="store_true", help="add criterion='egkl' (slow)")
    ap.add_argument("--quick", action="store_true", help="2 seeds, n = 100")
    ap.add_argument("--out-dir", type=Path, default=OUT)
    ap.add_argument("--name", default="noncrossing_accuracy", help="results file stem")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.sizes = 2, [100]
    makers = methods(not args.no_hinge, args.egkl)
    start = time.time()
    rows = []
    for n in args.sizes:
        for design in args.designs:
            for seed in range(1, args.seeds + 1):
                rows += run_one(design, n, seed, makers, args.n_test)
    meta = {
        "seeds": args.seeds,
        "sizes": args.sizes,
        "n_test": args.n_test,
        "designs": args.designs,
        "wall_seconds": time.time() - start,
        "methods": list(makers),
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{args.name}.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=1)
    )
    text = [
        "# Non-crossing ladder against the independent ladder (Wu & Liu designs)",
        "",
        f"Seeds 1..{args.seeds}; test draws of {args.n_test} points with their true "
        "probabilities; L1 = mean sum_k |p_hat_k - p_k|, EGKL = mean sum_k p_k log(p_k / "
        "p_hat_k); CPU seconds of each fit, one BLAS thread.  Paired differences over the "
        "same training draws; wins = seeds where the method's L1 is below the independent "
        f"ladder's.  Wall time {meta['wall_seconds']:.0f} s.",
        "",
        *summarise(rows, list(makers)),
        "",
    ]
    (args.out_dir / f"{args.name}.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
