"""Fresh-seed check of the sixth sitting's multiclass default (issue 23; branch acc-mc2).

Runs the benchmark of record's wsvmgui methods (:mod:`accuracy_vs_peers`: the same draws,
standardisation, 10,000 test points and command-line settings) on every multiclass design
at its paper's size and on iris, wine, penguins and the digits subsample, on seeds the
record has not used (5-9 by default), in one process with BLAS on one thread; CPU is
``time.process_time`` of each fit and prediction.  Run it once from the tree under test
(``--tag after``, methods ``wsvmgui`` and ``wsvmgui_plain``: the CPU ratio is measured
side by side) and once with another checkout's package first on ``PYTHONPATH`` (``--tag
before --methods wsvmgui``); ``--report`` writes the table of both to
``benchmarks/results/multiclass_sixth_check.md`` (and the rows to ``.json``)::

    python benchmarks/multiclass_sixth_check.py --tag after
    PYTHONPATH=/path/to/main python benchmarks/multiclass_sixth_check.py --tag before \\
        --methods wsvmgui --bench /path/to/main/benchmarks
    python benchmarks/multiclass_sixth_check.py --report
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
NAME = "multiclass_sixth_check"
DATA = (
    ("wu2010_ex1", None), ("wu2010_ex2", None), ("wu2010_ex4", None), ("zeng_ex1", None),
    ("zeng_ex2", None), ("zeng_ex3", None), ("zeng_ex4", None),
    ("iris", None), ("wine", None), ("penguins", None), ("digits", None),
)  # fmt: skip


def _runs_path(tag: str) -> Path:
    return RESULTS / f"{NAME}_{tag}.json"


def run(tag: str, methods: list[str], seeds: list[int], bench: str | None) -> None:
    """Fit ``methods`` on every data set and seed; save the rows to ``_runs_path(tag)``."""
    sys.path.insert(0, bench or str(ROOT / "benchmarks"))
    import accuracy_vs_peers as avp

    path = _runs_path(tag)
    rows = json.loads(path.read_text()) if path.exists() else []
    done = {(r["data"], r["seed"], r["method"]) for r in rows}
    for seed in seeds:  # every data set on one seed first: a partial run covers them all
        for data, n in DATA:
            X, codes, Xt, yt, P, K = avp.load(data, n, seed, avp.RECORD_N_TEST)
            for method in methods:
                if (data, seed, method) in done:
                    continue
                t0 = time.process_time()
                proba, _ = avp._wsvmgui(X, codes, Xt, K, method)
                cpu = time.process_time() - t0
                m = avp.metrics(proba, yt, P)
                rows.append({"data": data, "seed": seed, "method": method, "cpu": cpu, **m})
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(rows, indent=1))
                os.replace(tmp, path)
                print(data, seed, method, f"{m.get('L1', m['log_loss']):.4f}", f"{cpu:.2f}s")


def report() -> None:
    """The table of the ``before`` and ``after`` runs (means over the seeds both have)."""
    import numpy as np

    before = json.loads(_runs_path("before").read_text())
    after = json.loads(_runs_path("after").read_text())

    def cell(rows, data, method):
        return {r["seed"]: r for r in rows if r["data"] == data and r["method"] == method}

    lines = [
        "# The sixth sitting's multiclass default on fresh seeds (issue 23)",
        "",
        "`benchmarks/multiclass_sixth_check.py`: the benchmark of record's draws and "
        "settings, seeds 5-9, 10,000 test points; before = main before the change, after = "
        'this branch (`ties="table"`, sigmoid pair maps), `wsvmgui_plain` = the default '
        "before issue 23 (CPU reference, same process as after).  Measure: L1 on the "
        "designs, log loss on the real sets.",
        "",
        "| data | seeds | before | after | after / before | worse seeds | CPU after / plain |",
        "|---|---|---|---|---|---|---|",
    ]
    out = []
    for data, _ in DATA:
        b = cell(before, data, "wsvmgui")
        a = cell(after, data, "wsvmgui")
        p = cell(after, data, "wsvmgui_plain")
        seeds = sorted(set(a) & set(b))
        if not seeds:
            continue
        key = "L1" if "L1" in a[seeds[0]] else "log_loss"
        vb = np.mean([b[s][key] for s in seeds])
        va = np.mean([a[s][key] for s in seeds])
        worse = sum(a[s][key] > b[s][key] for s in seeds)
        ps = [s for s in seeds if s in p]
        cpu = (
            np.sum([a[s]["cpu"] for s in ps]) / np.sum([p[s]["cpu"] for s in ps])
            if ps
            else float("nan")
        )
        out.append({"data": data, "seeds": seeds, "measure": key, "before": vb, "after": va,
                    "cpu_after_over_plain": cpu})  # fmt: skip
        lines.append(
            f"| {data} | {len(seeds)} | {vb:.4f} | {va:.4f} | {va / vb:.3f} | "
            f"{worse}/{len(seeds)} | {cpu:.2f} |"
        )
    (RESULTS / f"{NAME}.md").write_text("\n".join(lines) + "\n")
    (RESULTS / f"{NAME}.json").write_text(json.dumps(out, indent=1))
    print("\n".join(lines))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tag", choices=("before", "after"))
    ap.add_argument("--methods", nargs="*", default=["wsvmgui", "wsvmgui_plain"])
    ap.add_argument("--seeds", nargs="*", type=int, default=[5, 6, 7, 8, 9])
    ap.add_argument("--bench", help="the benchmarks folder whose accuracy_vs_peers to use")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if args.report:
        report()
        return 0
    if args.tag is None:
        ap.error("--tag or --report")
    run(args.tag, args.methods, args.seeds, args.bench)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
