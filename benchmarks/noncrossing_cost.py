"""The non-crossing estimator's cost estimate against its fit, CPU side by side in one process.

Eighth sitting: ``NonCrossingLadderClassifier``'s plan counted its final ladder at the
tuning's weights (the fit uses a finer grid on small data: 159 fits at n = 100, not 39)
and priced it by a probe at the middle cell, although the ladder is fitted at the tuned
width (a constrained fit cost 20 times more at the narrowest width than at the others on
wuliu2011_ex1, 500 rows); the hinge criterion's tuning was counted as one ladder at one
lambda (the fit runs a ladder per width, each weight over the 7 lambdas: 1638 fits at
n = 100, not 273).  The plan now counts what the fit does and prices the non-crossing
stages at the mean over the width grid (engines ``EVERY_WIDTH``, ``HINGE_EVERY_WIDTH``).
For each (criterion, n, seed) the same data are priced both ways -- "before": the old
counts at the middle cell -- and then fitted; the fit's non-crossing ladders are timed
by wrapping the estimator's ``_ladder`` (the hinge tuning's and the final one's).  Every
number is CPU seconds of this process (BLAS on one thread).  Results:
``benchmarks/results/noncrossing_cost.{md,json}``.

Usage: ``python benchmarks/noncrossing_cost.py [--cases egkl-independent:200 ...]
[--seeds 0 1] [--budget 2] [--out-dir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
#: (criterion, n) of the default run: the default criterion at three sizes, Wu & Liu's
#: hinge criterion at two (its tuning fits 7 lambdas per weight at every width).
CASES = [
    ("egkl-independent", 200),
    ("egkl-independent", 500),
    ("egkl-independent", 1000),
    ("hinge", 200),
    ("hinge", 500),
]
DESIGN = "wuliu2011_ex1"


def _old_plan(fit_plan, prepared, X, codes):
    """The plan as it was: the final ladder at the tuning's weights, the hinge tuning as
    one ladder at one lambda, both probed at the middle cell."""
    import numpy as np

    from wsvmgui.estimators.cost_plan import _ladder_size

    stages = []
    for s in fit_plan.stages:
        if s.kind != "noncrossing":
            stages.append(s)
        elif s.name == "hinge tuning":
            stages.append(replace(s, fits=s.fits // s.tasks, tasks=1, engine="noncrossing"))
        elif s.name == "non-crossing ladder":
            m1 = int(_ladder_size(prepared, np.array([s.rows]))[0])
            stages.append(replace(s, fits=m1, engine="noncrossing"))
        else:
            stages.append(replace(s, engine="noncrossing"))
    return replace(fit_plan, stages=tuple(stages))


def _measure(criterion: str, n: int, seed: int, budget: float) -> dict:
    import numpy as np

    from wsvmgui.estimators.cost import _prepared
    from wsvmgui.estimators.cost_plan import plan_fit
    from wsvmgui.estimators.cost_probe import price_plan
    from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier as NC
    from wsvmgui.evaluation.designs import DESIGNS

    d = DESIGNS[DESIGN].sample(n, seed)
    est = NC(criterion=criterion, random_state=seed, n_jobs=1)
    prepared, X, codes = _prepared(est, d.X, d.y)
    new = plan_fit(prepared, X, codes)
    priced = {"after": price_plan(prepared, X, codes, new, budget=budget)}
    priced["before"] = price_plan(prepared, X, codes, _old_plan(new, prepared, X, codes), budget)
    spent = {"hinge tuning": 0.0, "non-crossing ladder": 0.0}
    counts = {"hinge tuning": 0, "non-crossing ladder": 0}
    real = NC._ladder

    def timed(self, X, y, weights, *args, **kwargs):
        stage = "hinge tuning" if kwargs.get("lam_grid") is not None else "non-crossing ladder"
        per = 1 if kwargs.get("lam_grid") is None else np.size(kwargs["lam_grid"])
        t = time.process_time()
        try:
            return real(self, X, y, weights, *args, **kwargs)
        finally:
            spent[stage] += time.process_time() - t
            counts[stage] += int(np.size(weights)) * int(per)

    NC._ladder = timed
    try:
        fitted = NC(criterion=criterion, random_state=seed, n_jobs=1)
        t0 = time.process_time()
        fitted.fit(d.X, d.y)
        actual = time.process_time() - t0
    finally:
        NC._ladder = real
    sigmas = np.sort(np.asarray(fitted.tuning_.sigmas if criterion == "hinge" else []))
    row = {
        "criterion": criterion,
        "n": n,
        "seed": seed,
        "actual_cpu": actual,
        "actual_stages": spent,
        "actual_counts": counts,
        "n_fits": int(fitted.fit_info_["n_fits"]),
        "sigma": float(fitted.sigma_),
        "tuning_edge": fitted.fit_info_.get("tuning_edge", {}),
        "hinge_sigmas": sigmas.tolist(),
    }
    for when, p in priced.items():
        row[when] = {s.name: c for s, c in zip(p.plan.stages, p.cpu, strict=True)}
        row[f"{when}_fits"] = {s.name: s.fits for s in p.plan.stages}
        row[f"{when}_cpu"] = float(np.sum(p.cpu))
    return row


def _report(rows: list[dict], meta: dict) -> str:
    lines = [
        "# The non-crossing estimator's cost estimate against its fit (CPU seconds)",
        "",
        f"Generated by `benchmarks/noncrossing_cost.py` on {meta['machine']} (load "
        f"{meta['load'][0]:.1f}); design {DESIGN}, `NonCrossingLadderClassifier` at its "
        f"defaults but `criterion`, one thread; probes' budget {meta['budget']} s.  Each "
        "row's estimates and fit in one process.  **before**: the sixth/seventh sittings' "
        "plan (final ladder counted at the tuning's weights, the hinge tuning as one ladder "
        "at one lambda, both probed at the middle cell); **after**: the fit's counts, the "
        "non-crossing stages priced at the mean over the width grid.",
        "",
        "| criterion | n | seed | fit CPU s | estimate before | ratio | estimate after | ratio "
        "| non-crossing stages in the fit | before | ratio | after | ratio | fits: fit / "
        "before / after | sigma chosen |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        nc = sum(r["actual_stages"].values())
        part = {w: sum(c for k, c in r[w].items() if k in r["actual_stages"])
                for w in ("before", "after")}  # fmt: skip
        fits = {w: sum(f for k, f in r[f"{w}_fits"].items() if k in r["actual_stages"])
                for w in ("before", "after")}  # fmt: skip
        lines.append(
            f"| {r['criterion']} | {r['n']} | {r['seed']} | {r['actual_cpu']:.2f} | "
            f"{r['before_cpu']:.2f} | {r['before_cpu'] / r['actual_cpu']:.2f} | "
            f"{r['after_cpu']:.2f} | {r['after_cpu'] / r['actual_cpu']:.2f} | {nc:.2f} | "
            f"{part['before']:.2f} | {part['before'] / nc:.2f} | {part['after']:.2f} | "
            f"{part['after'] / nc:.2f} | {sum(r['actual_counts'].values())} / "
            f"{fits['before']} / {fits['after']} | {r['sigma']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=[f"{c}:{n}" for c, n in CASES],
                        help="criterion:n")  # fmt: skip
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--budget", type=float, default=2.0)
    parser.add_argument("--out-dir", type=Path, default=HERE / "results")
    args = parser.parse_args()
    cases = [(c.split(":")[0], int(c.split(":")[1])) for c in args.cases]
    rows = []
    for criterion, n in cases:
        for seed in args.seeds:
            rows.append(_measure(criterion, n, seed, args.budget))
            r = rows[-1]
            print(f"{criterion} {n} {seed}: fit {r['actual_cpu']:.2f} s, before "
                  f"{r['before_cpu']:.2f}, after {r['after_cpu']:.2f}", flush=True)  # fmt: skip
    write_results(args.out_dir / "noncrossing_cost", rows, args.budget, _report)


def write_results(out: Path, rows: list[dict], budget: float, report) -> None:
    """``out``.json (the rows and the machine's meta) and ``out``.md (``report(rows,
    meta)``), also printed."""
    from wsvmgui.io.atomic import atomic_write_text

    meta = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load": os.getloadavg(),
        "budget": budget,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out.with_suffix(".json"), json.dumps({"meta": meta, "rows": rows}, indent=1))
    atomic_write_text(out.with_suffix(".md"), report(rows, meta))
    print(report(rows, meta))


if __name__ == "__main__":
    main()
