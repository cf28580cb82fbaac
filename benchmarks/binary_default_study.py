"""The binary default study (issue 23 items 2-3): tables from the benchmark of record's runs.

Reads an ``accuracy_vs_peers.json`` (a copy of the record's with this study's runs added,
made by ``accuracy_vs_peers.py --out-dir DIR``) and writes
``benchmarks/results/binary_default_study.{md,json}``: for every binary design at the
papers' size and at n = 2000, and breast cancer, the candidates of the binary default

* ``wsvmgui``: today's default (``calibration="none"``, EGKL, the minimum, the grid as
  given);
* ``wsvmgui_recal``: ``calibration="auto"``;
* ``wsvmgui_recal_ext``: ``calibration="auto"`` and ``tuning_extend=2``;
* (any other ``wsvmgui_*`` method present, e.g. ``wsvmgui_recal_brier``);

their mean L1 against the truth (designs) or log loss (breast cancer) over the seeds each
ran, the ratio to the best SVM-based peer over the seeds both ran (paired draws, as the
record's ``ratio``), the mean over the seeds every candidate ran (paired among
themselves), the CPU ratio to ``wsvmgui`` (paired seeds, one run's workers), and how often
the chosen cell sat on a grid edge or the grid was extended::

    python benchmarks/binary_default_study.py DIR/accuracy_vs_peers.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
SVM_PEERS = ("platt", "sigmoid", "isotonic", "venn_abers")
DATA = [
    ("wang2008_ex1", "100"),
    ("wang2008_ex1", "2000"),
    ("wuliu2011_ex1", "100"),
    ("wuliu2011_ex1", "2000"),
    ("wuliu2011_ex2", "100"),
    ("wuliu2011_ex2", "2000"),
    ("wuliu2011_ex6", "100"),
    ("wuliu2011_ex6", "2000"),
    ("breast_cancer", "split"),
]
CANDIDATES = ("wsvmgui", "wsvmgui_recal", "wsvmgui_recal_ext")


def _rows(runs: dict, data: str, n: str) -> dict[str, dict[int, dict]]:
    """method -> seed -> row, for one (data, n)."""
    out: dict[str, dict[int, dict]] = {}
    for key, rows in runs.items():
        d, size, seed, _ = key.split("|")
        if d == data and size == n:
            for r in rows:
                out.setdefault(r["method"], {})[int(seed)] = r
    return out


def _study(runs: dict) -> list[dict]:
    table = []
    for data, n in DATA:
        by = _rows(runs, data, n)
        measure = "log_loss" if n == "split" else "L1"
        peers = [p for p in SVM_PEERS if p in by]
        peer_seeds = set.intersection(*(set(by[p]) for p in peers)) if peers else set()
        methods = [m for m in CANDIDATES if m in by] + sorted(
            m for m in by if m.startswith("wsvmgui") and m not in CANDIDATES
        )
        common = set.intersection(*(set(by[m]) for m in CANDIDATES if m in by))
        for m in methods:
            seeds = sorted(by[m])
            paired = sorted(set(seeds) & peer_seeds)
            best = min(
                (float(np.mean([by[p][s][measure] for s in paired])) for p in peers),
                default=float("nan"),
            )
            mine = float(np.mean([by[m][s][measure] for s in paired])) if paired else np.nan
            cpu_seeds = sorted(set(seeds) & set(by.get("wsvmgui", {})))
            cpu = (
                float(np.mean([by[m][s]["cpu"] / by["wsvmgui"][s]["cpu"] for s in cpu_seeds]))
                if cpu_seeds
                else float("nan")
            )
            rows = [by[m][s] for s in seeds]
            table.append(
                {
                    "data": data,
                    "n": n,
                    "method": m,
                    "measure": measure,
                    "seeds": seeds,
                    "mean": float(np.mean([r[measure] for r in rows])),
                    "common_seeds": sorted(common),
                    "mean_common": float(np.mean([by[m][s][measure] for s in sorted(common)]))
                    if common and common <= set(seeds)
                    else float("nan"),
                    "peer_seeds": paired,
                    "best_peer": best,
                    "ratio": mine / best if paired else float("nan"),
                    "cpu": float(np.mean([r["cpu"] for r in rows])),
                    "cpu_ratio": cpu,
                    "edge_hits": sum(bool(r.get("tuning_edge")) for r in rows),
                    "extended": sum(bool(r.get("tuning_extended")) for r in rows),
                    "cells": [
                        {
                            "seed": s,
                            "C": by[m][s].get("C"),
                            "sigma": by[m][s].get("sigma"),
                            "edge": by[m][s].get("tuning_edge"),
                            "extended": by[m][s].get("tuning_extended"),
                            "map": by[m][s].get("calibration"),
                            measure: by[m][s][measure],
                        }
                        for s in seeds
                    ],
                }
            )
    return table


def _report(table: list[dict]) -> str:
    lines = [
        "# The binary estimator's default (issue 23 items 2-3)",
        "",
        "Generated by `benchmarks/binary_default_study.py` from the benchmark of record's",
        "runs (`benchmarks/accuracy_vs_peers.py --out-dir DIR` over a copy of the record's",
        "`accuracy_vs_peers.json`, so its peers' and earlier variants' runs are reused; this",
        "study's runs added; every method on the same draws).  L1 against the true",
        "probabilities for the designs (mean over 10,000 test points of sum_k |p_hat_k - p_k|),",
        "log loss for breast cancer (70/30 splits).  `mean`: over the seeds the method ran;",
        "`paired`: over the seeds all three candidates ran; `ratio`: over the best SVM-based",
        "peer on the seeds both ran; `CPU`: the mean over seeds of the method's CPU over",
        "`wsvmgui`'s on the same seed; `edge`/`ext`: runs whose chosen cell sat on an edge of",
        "the (final) grid / whose grid was extended.  Seeds 0-2 of `wsvmgui`,",
        "`wsvmgui_recal` and the peers are the record's runs (earlier sittings); seeds 3-4 and",
        "every `wsvmgui_recal_ext` run are this study's (branch acc-binary, whose code with",
        "`tuning_extend=0` fits as main's), so CPU ratios that mix runs are noisy: the",
        "same-run CPU comparison is `binary_default_speed.md`.",
        "",
        "| data | n | method | seeds | mean | paired | best peer (seeds) | ratio | CPU | edge "
        "| ext |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        seeds = "".join(str(s) for s in r["seeds"])
        peer = "".join(str(s) for s in r["peer_seeds"])
        lines.append(
            f"| {r['data']} | {r['n']} | {r['method']} | {seeds} | {r['mean']:.4f} | "
            f"{r['mean_common']:.4f} | {r['best_peer']:.4f} ({peer}) | {r['ratio']:.2f} | "
            f"{r['cpu_ratio']:.2f} | {r['edge_hits']} | {r['extended']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    runs = json.loads(Path(args[0]).read_text())["runs"]
    table = _study(runs)
    (RESULTS / "binary_default_study.json").write_text(json.dumps(table, indent=1))
    (RESULTS / "binary_default_study.md").write_text(_report(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
