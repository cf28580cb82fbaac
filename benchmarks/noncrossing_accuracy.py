"""Accuracy of the non-crossing ladder against the independent ladder (issue 23).

Writes ``benchmarks/results/noncrossing_accuracy.{md,json}``.  On Wu & Liu's binary designs
(``wuliu2011_ex1``, ``ex2``, ``ex6`` of :mod:`wsvmgui.evaluation.designs`), for each size
and seed, the same training draw is given to:

* ``independent``: the binary ladder at its defaults (``WeightedSVMClassifier()``: the
  exact path, lambda and sigma tuned by EGKL);
* ``nc``: the non-crossing ladder at its defaults (``NonCrossingLadderClassifier()``:
  lambda and sigma tuned by the same search, the ladder from the path, count rule);
* ``nc-interp``: the same with ``rule="interpolate"``;
* ``nc-M<m>``: the same with ``n_weights=default_n_weights(n)`` (m = 40 at n = 100, 44 at
  n = 500): the final ladder on the tuning's weight grid, the default before the final
  ladder's finer grid (``FINAL_MIN_INTERVALS``), so the run holds before and after;
* ``nc-hinge``: Wu & Liu's own tuning (``criterion="hinge"``: lambda per weight by the
  hinge loss on a 30% hold-out, sigma by that ladder's EGKL on it), interpolate rule;
* ``nc-egkl`` (``--egkl``): lambda and sigma by the non-crossing ladder's own EGKL.

Seeds ``--seed-start`` .. + ``--seeds`` - 1 (default 0-4).  Every estimate is scored
against the true probabilities of an independent test draw (``--n-test`` points, seed
10,000 + seed): L1 = mean over points of sum_k |p_hat_k - p_k| and EGKL = mean
sum_k p_k log(p_k / p_hat_k).  CPU seconds of each fit (single-threaded BLAS).  Crossings
of every fitted ladder (independent ones included) inside the hull of the training
inputs: :func:`~wsvmgui.ladder.crossing.crossing_diagnostics` on ``N_HULL`` hull points
in input space (the non-crossing guarantee of an RBF ladder is in feature space, so a
few input-space crossings remain possible).

Usage: ``python benchmarks/noncrossing_accuracy.py [--seeds 5] [--seed-start 0]
[--sizes 100 500] [--n-test N] [--no-hinge] [--egkl] [--quick] [--name STEM]``.
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
from wsvmgui.ladder.crossing import crossing_diagnostics  # noqa: E402
from wsvmgui.ladder.tuning import default_n_weights  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
DESIGNS = ("wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
#: Hull points sampled (input space) for the crossing counts.
N_HULL = 5000


def methods(hinge: bool, own_egkl: bool, n: int) -> dict:
    m_tune = default_n_weights(n)
    out = {
        "independent": lambda: WeightedSVMClassifier(),
        "nc": lambda: NonCrossingLadderClassifier(),
        "nc-interp": lambda: NonCrossingLadderClassifier(rule="interpolate"),
        # the ladder read off the tuning's own weight grid (the default before issue 23)
        f"nc-M{m_tune}": lambda: NonCrossingLadderClassifier(n_weights=m_tune),
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
        cross = crossing_diagnostics(est, train.X, space="input", n_samples=N_HULL, seed=seed)
        row["nonmonotone"] = cross.n_nonmonotone / cross.n_points
        row["crossing_pairs"] = len(cross.crossing_pairs)
        if hasattr(est, "diagnostics_"):
            dg = est.diagnostics_
            row.update(repairs=dg["n_active_set"], qps=dg["n_qp"], shortcuts=dg["n_shortcut"])
        rows.append(row)
        print(
            f"{design} n={n} seed={seed} {name:12s} L1 {row['l1']:.4f} EGKL {row['egkl']:.4f} "
            f"cpu {cpu:.1f} sigma {row['sigma']:.3g} nonmono {row['nonmonotone']:.4f}",
            flush=True,
        )
    return rows


def summarise(rows: list[dict], names: list[str]) -> list[str]:
    text = []
    keys = sorted({(r["design"], r["n"]) for r in rows}, key=lambda k: (k[1], k[0]))
    text.append(
        "| design | n | method | L1 | EGKL | CPU s | L1 - independent (paired, SE) | wins (L1) "
        "| non-monotone hull share | crossing pairs |"
    )
    text.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
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
            mono = np.mean([r["nonmonotone"] for r in sel])
            pairs = np.mean([r["crossing_pairs"] for r in sel])
            if name == "independent":
                diff, wins = "", ""
            else:
                d = np.array([r["l1"] - base[r["seed"]]["l1"] for r in sel])
                se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else float("nan")
                diff = f"{d.mean():+.4f} ({se:.4f})"
                wins = f"{int((d < 0).sum())}/{d.size}"
            text.append(
                f"| {design} | {n} | {name} | {l1.mean():.4f} | {eg.mean():.4f} | "
                f"{cpu.mean():.1f} | {diff} | {wins} | {mono:.4f} | {pairs:.1f} |"
            )
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed-start", type=int, default=0, help="first seed")
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
    start = time.time()
    rows = []
    names: list[str] = []
    for n in args.sizes:
        makers = methods(not args.no_hinge, args.egkl, n)
        names += [k for k in makers if k not in names]
        for design in args.designs:
            for seed in range(args.seed_start, args.seed_start + args.seeds):
                rows += run_one(design, n, seed, makers, args.n_test)
    meta = {
        "seeds": list(range(args.seed_start, args.seed_start + args.seeds)),
        "sizes": args.sizes,
        "n_test": args.n_test,
        "designs": args.designs,
        "wall_seconds": time.time() - start,
        "methods": names,
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{args.name}.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=1)
    )
    text = [
        "# Non-crossing ladder against the independent ladder (Wu & Liu designs)",
        "",
        f"Seeds {args.seed_start}..{args.seed_start + args.seeds - 1}; test draws of "
        f"{args.n_test} points (seed 10,000 + seed) with their true "
        "probabilities; L1 = mean sum_k |p_hat_k - p_k|, EGKL = mean sum_k p_k log(p_k / "
        "p_hat_k); CPU seconds of each fit, one BLAS thread.  Paired differences over the "
        "same training draws; wins = seeds where the method's L1 is below the independent "
        f"ladder's.  Crossings: {N_HULL} points of the training inputs' hull (random convex "
        "combinations, input space): the share whose signs are not monotone in pi, and the "
        f"mean number of crossing weight pairs.  Wall time {meta['wall_seconds']:.0f} s.",
        "",
        *summarise(rows, names),
        "",
    ]
    (args.out_dir / f"{args.name}.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
