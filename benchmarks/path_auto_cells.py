"""Per tuning cell: the exact path, the path stopped at ``auto_max_elbow``, the grid ladder.

The question this answers (issue 10): should the default engine be ``"auto"`` -- the path,
stopped with ``PathTooCostly`` once its elbow exceeds ``auto_max_elbow(n) = 0.2 n`` and
replaced by the grid ladder for that cell -- rather than the plain path?  It runs the
default tuned binary estimator on each design with an engine that, for every (lambda,
sigma, fold) cell, fits all three and times them (CPU, one thread), and times the
scoring of the cell's tuning rows by each (the path's grid-free estimate, the grid's
count rule).  The tuning itself continues with the path's answer.

Per cell it reports: rows, lambda, sigma, the path's largest elbow and breakpoints, CPU of
path / stopped path / grid (fit + scoring), and whether the stopped path stopped.  The
summary gives, per design and n, the total CPU of the cells under each engine, where
auto's cost of a stopped cell is the stopped path plus the grid ladder.

Usage: python benchmarks/path_auto_cells.py [--designs ...] [--sizes 500 2000] [--seed 0]
Writes benchmarks/results/path_auto_cells.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


import numpy as np  # noqa: E402

import wsvmgui.ladder.search as search  # noqa: E402
from wsvmgui.estimators.binary import WeightedSVMClassifier  # noqa: E402
from wsvmgui.evaluation.designs import simulate  # noqa: E402
from wsvmgui.ladder.engines import PathLadder  # noqa: E402
from wsvmgui.ladder.grid import fit_ladder  # noqa: E402
from wsvmgui.ladder.path import PathBreakdown, PathTooCostly, auto_max_elbow, fit_path  # noqa: E402
from wsvmgui.ladder.rules import LadderEstimate  # noqa: E402

DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
RESULTS = Path(__file__).parent / "results"


def _cpu(fn):
    c0 = time.process_time()
    try:
        out = fn()
    except PathBreakdown as exc:
        out = exc
    return out, time.process_time() - c0


class _Measured:
    """The path's ladder for the search; times every engine's scoring of the cell."""

    def __init__(self, row: dict, path, grid) -> None:
        self.row, self.path, self.grid = row, path, grid

    def estimate(self, K_cross, rule="count"):
        out, self.row["path_score_cpu"] = _cpu(lambda: self.path.estimate(K_cross, rule))
        _, self.row["grid_score_cpu"] = _cpu(lambda: self.grid.estimate(K_cross, rule))
        return out


class _Skipped:
    """A cell not measured (``--stride``): p = 1/2 at every tuning row, no cost."""

    def estimate(self, K_cross, rule="count"):
        m = K_cross.shape[0]
        return LadderEstimate(np.full(m, 0.5), np.zeros(m), np.ones(m), np.ones(m, dtype=bool))


def measuring_engine(rows: list[dict], stride: int = 1):
    seen = [0]

    def make(engine="path", *args, **kwargs):
        def run(K, X, y, weights, lam, kernel, progress=None, should_cancel=None):
            seen[0] += 1
            if (seen[0] - 1) % stride:
                return _Skipped()
            n = y.size
            row = {"rows": int(n), "lam": float(lam), "sigma": float(kernel.sigma)}
            path, row["path_cpu"] = _cpu(lambda: fit_path(K, y, lam))
            stopped, row["auto_cpu"] = _cpu(
                lambda: fit_path(K, y, lam, max_elbow=auto_max_elbow(n))
            )
            grid, row["grid_cpu"] = _cpu(lambda: fit_ladder(K, y, weights, lam))
            row["stopped"] = isinstance(stopped, PathTooCostly)
            if isinstance(path, PathBreakdown):
                row["path_breakdown"] = str(path)
                rows.append(row)
                return grid
            row.update(
                breakpoints=int(path.pis.size),
                max_elbow=int(path.max_elbow),
                work=float(path.work),
                M=int(weights.size + 1),
            )
            rows.append(row)
            return _Measured(row, PathLadder(path, weights), grid)

        return run

    return make


def run(design: str, n: int, seed: int, stride: int = 1) -> list[dict]:
    rows: list[dict] = []
    search.make_engine = measuring_engine(rows, stride)
    train = simulate(design, n, seed=seed)
    WeightedSVMClassifier(random_state=seed).fit(train.X, train.y)
    for r in rows:
        r.update(design=design, n=n, seed=seed, stride=stride)
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    out = []
    for key in sorted({(r["design"], r["n"]) for r in rows}, key=lambda k: (k[1], k[0])):
        rs = [r for r in rows if (r["design"], r["n"]) == key and "max_elbow" in r]
        path = sum(r["path_cpu"] + r["path_score_cpu"] for r in rs)
        grid = sum(r["grid_cpu"] + r["grid_score_cpu"] for r in rs)
        auto = sum(
            r["auto_cpu"]
            + (r["grid_cpu"] + r["grid_score_cpu"] if r["stopped"] else r["path_score_cpu"])
            for r in rs
        )
        big = [r for r in rs if r["stopped"]]
        out.append(
            {
                "design": key[0],
                "n": key[1],
                "cells": len(rs),
                "stride": max((r.get("stride", 1) for r in rs), default=1),
                "breakdowns": sum(
                    "path_breakdown" in r for r in rows if (r["design"], r["n"]) == key
                ),
                "stopped": len(big),
                "path": path,
                "auto": auto,
                "grid": grid,
                "stopped_path_over_grid": (
                    sum(r["path_cpu"] for r in big) / sum(r["grid_cpu"] for r in big)
                    if big
                    else None
                ),
                "kept_path_over_grid": (
                    sum(r["path_cpu"] for r in rs if not r["stopped"])
                    / max(sum(r["grid_cpu"] for r in rs if not r["stopped"]), 1e-12)
                ),
                "max_elbow_frac": max(r["max_elbow"] / r["rows"] for r in rs),
            }
        )
    return out


def cells_note(s: dict) -> str:
    return f" (every {s['stride']}th)" if s.get("stride", 1) > 1 else ""


def report(res: dict) -> str:
    lines = [
        "# Path, path stopped at auto_max_elbow, or grid: CPU per tuning cell",
        "",
        "Default tuned `WeightedSVMClassifier` (7 lambdas x 6 sigmas; 5-fold CV up to n = "
        "500, a 30% hold-out above); every (lambda, sigma, fold) cell fitted by all three "
        "engines in one process, CPU = process time (fit + scoring of the cell's tuning "
        "rows), BLAS on one thread.  auto = the path stopped once its elbow exceeds 0.2 "
        "rows (`auto_max_elbow`), then the grid ladder for that cell: its cost is the "
        "stopped path plus the grid.  Runs (the JSON's cells name theirs by design and n):",
        "",
    ]
    for m in res["runs"]:
        lines.append(
            f"* `{m['command']}` on {m['date']} ({m['machine']}; load average {m['load'][0]} "
            f"at start, {m['load'][1]} at end; total {m['seconds']:.0f} s; seed {m['seed']}), "
            f"Python {m['python']}."
        )
    lines += [
        "",
        "| design | n | cells | stopped | path CPU | auto CPU | grid CPU | auto / path | "
        "path / grid on stopped cells | path / grid on the others | largest elbow / n |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in res["summary"]:
        spg = s["stopped_path_over_grid"]
        lines.append(
            f"| {s['design']} | {s['n']} | {s['cells']}{cells_note(s)} | {s['stopped']} | "
            f"{s['path']:.1f} | "
            f"{s['auto']:.1f} | {s['grid']:.1f} | {s['auto'] / s['path']:.2f} | "
            f"{'-' if spg is None else format(spg, '.2f')} | {s['kept_path_over_grid']:.2f} | "
            f"{s['max_elbow_frac']:.2f} |"
        )
    lines.append("")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS))
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stride", type=int, default=1, help="measure every k-th cell only")
    opts = ap.parse_args()
    start, load0 = time.time(), [round(x, 1) for x in os.getloadavg()]
    out = RESULTS / "path_auto_cells.json"
    old = json.loads(out.read_text()) if out.exists() else {"cells": [], "runs": []}
    # Cells of (design, n) not run this time are kept from the previous runs.
    run_now = {(d, n) for d in opts.designs for n in opts.sizes}
    kept = [r for r in old["cells"] if (r["design"], r["n"]) not in run_now]
    rows: list[dict] = []
    for n in opts.sizes:
        for d in opts.designs:
            rows += run(d, n, opts.seed, opts.stride)
            print(
                json.dumps(summarise([r for r in rows if r["design"] == d and r["n"] == n])),
                flush=True,
            )
    this = {
        "command": "python benchmarks/path_auto_cells.py " + " ".join(os.sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs shared with other jobs",
        "load": [load0, [round(x, 1) for x in os.getloadavg()]],
        "python": platform.python_version(),
        "seconds": time.time() - start,
        "seed": opts.seed,
    }
    cells = kept + rows
    res = {"runs": [*old.get("runs", []), this], "summary": summarise(cells), "cells": cells}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "path_auto_cells.json").write_text(json.dumps(res, indent=1))
    (RESULTS / "path_auto_cells.md").write_text(report(res))


if __name__ == "__main__":
    main()
