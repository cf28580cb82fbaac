"""Regime-consistent tuning of the binary default: ``calibration="auto_midtune"`` (issue 23).

Since the tenth sitting the binary ``calibration="auto"`` returns Platt's sigmoid on the
middle rung's decision value ``f_1/2`` where more than half of the final cell's
cross-fitted count estimates lie outside the grid's end weights, but its tuning search
still scores every cell on the EGKL of the raw count estimate.  ``"auto_midtune"``
(:func:`wsvmgui.ladder.search.search_ladders` ``midrung``) scores a cell whose pooled
cross-validated estimates are saturated on the EGKL terms of the middle rung's sigmoid,
cross-validated on the tuning rows, as ``"auto"`` would return it there; other cells as
today.  This script measures what the benchmark of record does not:

* ``--shares``: per tuning cell, the saturated share on design draws (``--designs``,
  ``--sizes``, ``--seeds``): where no cell saturates, ``"auto_midtune"`` is the default's
  computation; each fit's L1 is set against the record's default run of the same draw.
* ``--pairs``: out of sample, acc-bcsat's ten two-class sub-problems
  (``saturation_study.PAIRS``, stratified 70/30 splits 0-9) under ``"auto_midtune"``,
  against today's default and Platt held fixed from acc-realbin's cache
  (``/tmp/acc-realbin/cache``, ``real_binary_gap_study.py --fit``; its refit reproduces
  the stored figures): test log loss and errors per split.
* ``--cpu``: CPU seconds and peak memory side by side (``_worker.side_by_side``, a fresh
  single-threaded process per fit, methods alternated): ``wsvmgui_midtune``, today's
  default and ``wsvmgui_plain`` on breast cancer splits 0-2 and wuliu2011_ex1 at n = 2000
  seeds 0-1.
* ``--min-rule``: a diagnostic, breast cancer splits 0-9 with ``tuning_rule="min"`` under
  the default and ``"auto_midtune"``; with ``--pairs`` also today's default with
  ``tuning_rule="min"`` on the sub-problems.
* ``--report``: ``benchmarks/results/midtune_study.{md,json}`` (with the record's breast
  cancer and design runs of ``wsvmgui_midtune`` from ``--record``, a folder of
  ``accuracy_vs_peers.py --out-dir``).

Usage::

    nice -n 5 python benchmarks/midtune_study.py --pairs
    nice -n 5 python benchmarks/midtune_study.py --shares --sizes paper --seeds 0 1 2
    nice -n 5 python benchmarks/midtune_study.py --shares --sizes 2000 --seeds 0 1
    nice -n 5 python benchmarks/midtune_study.py --min-rule
    nice -n 5 python benchmarks/midtune_study.py --cpu
    python benchmarks/midtune_study.py --report --record /tmp/acc-midtune/rec
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RESULTS = HERE / "results"
CACHE = Path(os.environ.get("MIDTUNE_CACHE", "/tmp/acc-midtune/cache"))
REALBIN = Path(os.environ.get("REAL_BINARY_GAP_CACHE", "/tmp/acc-realbin/cache"))
OUT = RESULTS / "midtune_study"
CPU_CASES = (("breast_cancer", "split", (0, 1, 2)), ("wuliu2011_ex1", "2000", (0, 1)))
CPU_METHODS = ("wsvmgui_midtune", "wsvmgui", "wsvmgui_plain")
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")


def _losses(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-point log loss of (m, 2) probabilities for labels ``y`` (m,)."""
    return -np.log(np.maximum(P[np.arange(y.size), y], 1e-15))


def _spied_fit(est, X, codes) -> tuple[list[float], float]:
    """Fit ``est``, logging the saturated share of every pooled tuning cell; (shares, CPU s)."""
    import wsvmgui.ladder.search as search
    from wsvmgui.ladder.midrung import saturated_share

    shares: list[float] = []
    orig = search.saturated

    def spy(p, weights, share=None):
        shares.append(saturated_share(p, weights))
        return orig(p, weights, share)

    search.saturated = spy
    try:
        t0 = time.process_time()
        est.fit(X, codes)
        cpu = time.process_time() - t0
    finally:
        search.saturated = orig
    return shares, cpu


def _case(data: str, n: int | None, seed: int) -> dict:
    """``wsvmgui_midtune`` on one draw (a design at ``n`` rows or a sub-problem split)."""
    import accuracy_vs_peers as avp
    import saturation_study as ss

    X, codes, Xt, yt, P_true, K = ss._load(data, n, seed)
    est, X2, c2, _ = avp.method_estimator("wsvmgui_midtune", K, X, codes)
    shares, cpu = _spied_fit(est, X2, c2)
    P = est.predict_proba(Xt)
    out = {
        "data": data, "n": None if n is None else int(n), "seed": seed, "cpu": cpu,
        "shares": shares, "C": float(est.C_), "sigma": float(est.sigma_),
        "input": est.calibration_input_, "share": est.fit_info_.get("saturated_share"),
        "log_loss": float(_losses(P, yt).mean()), "errors": int(np.sum(P.argmax(1) != yt)),
        "n_test": int(yt.size),
    }  # fmt: skip
    if P_true is not None:
        out["L1"] = float(avp.metrics(P, yt, P_true)["L1"])
    return out


def _cached(name: str, make) -> dict:
    path = CACHE / f"{name}.json"
    if path.exists():
        return json.loads(path.read_text())
    out = make()
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out))
    return out


def pairs_stage(splits) -> None:
    """``wsvmgui_midtune`` on every sub-problem split, with the default and Platt from
    acc-realbin's cache."""
    import saturation_study as ss

    for d, a, b in ss.PAIRS:
        for s in splits:
            data = f"{d}_{a}v{b}"
            row = _cached(f"pair_{data}_{s}", lambda data=data, s=s: _case(data, None, s))
            with open(REALBIN / f"{data}_{s}.pkl", "rb") as fh:
                ref = pickle.load(fh)
            yt = ref["yt"]
            row["default"] = float(_losses(ref["P"], yt).mean())
            row["default_errors"] = int(np.sum(ref["P"].argmax(1) != yt))
            row["default_C"], row["default_sigma"] = ref["C"], ref["sigma"]
            row["default_input"] = ref["input"]
            platt = ref["P_peer"]["platt"]
            row["platt"] = float(_losses(platt, yt).mean())
            row["platt_errors"] = int(np.sum(platt.argmax(1) != yt))
            (CACHE / f"pair_{data}_{s}.json").write_text(json.dumps(row))
            print(
                f"{data} {s}: midtune {row['log_loss']:.4f} ({row['errors']} err, C "
                f"{row['C']:.3g}, {row['input']}) default {row['default']:.4f} "
                f"({row['default_errors']} err, C {row['default_C']:.3g}) platt "
                f"{row['platt']:.4f} ({row['platt_errors']} err); cells saturated "
                f"{sum(x > 0.5 for x in row['shares'])}/{len(row['shares'])}",
                flush=True,
            )


def shares_stage(designs, sizes, seeds) -> None:
    """Per-cell saturated shares (and the fit) of ``wsvmgui_midtune`` on design draws."""
    for d in designs:
        for size in sizes:
            from wsvmgui.evaluation.designs import get_design

            n = get_design(d).default_n if size == "paper" else int(size)
            for s in seeds:
                row = _cached(f"design_{d}_{n}_{s}", lambda d=d, n=n, s=s: _case(d, n, s))
                sh = np.asarray(row["shares"])
                print(
                    f"{d} n={n} seed {s}: cells {sh.size}, saturated {int(np.sum(sh > 0.5))}, "
                    f"largest share {sh.max():.3f}; L1 {row['L1']:.5f}",
                    flush=True,
                )


def min_rule_stage(splits) -> None:
    """Diagnostic: breast cancer under ``tuning_rule="min"`` (no one-SE rule), the default
    and ``"auto_midtune"``: is the middle rung's CV score a better selector by itself?"""
    import accuracy_vs_peers as avp

    def fit(seed: int) -> dict:
        X, codes, Xt, yt, _, K = avp.load("breast_cancer", None, seed, 10_000)
        row: dict = {"data": "breast_cancer", "seed": seed}
        for group in ("wsvmgui", "wsvmgui_midtune"):
            est, X2, c2, _ = avp.method_estimator(group, K, X, codes)
            est.set_params(tuning_rule="min").fit(X2, c2)
            P = est.predict_proba(Xt)
            row[group] = {"log_loss": float(_losses(P, yt).mean()), "C": float(est.C_),
                          "sigma": float(est.sigma_), "input": est.calibration_input_}  # fmt: skip
        return row

    for s in splits:
        row = _cached(f"minrule_breast_cancer_{s}", lambda s=s: fit(s))
        print(s, {g: round(row[g]["log_loss"], 5) for g in ("wsvmgui", "wsvmgui_midtune")})


def min_rule_pairs_stage(splits) -> None:
    """Diagnostic: today's default with ``tuning_rule="min"`` on the sub-problems, against
    the default from acc-realbin's cache (does breast cancer's lead hold out of sample?)."""
    import accuracy_vs_peers as avp
    import saturation_study as ss

    def fit(data: str, seed: int) -> dict:
        X, codes, Xt, yt, _, K = ss._load(data, None, seed)
        est, X2, c2, _ = avp.method_estimator("wsvmgui", K, X, codes)
        est.set_params(tuning_rule="min").fit(X2, c2)
        P = est.predict_proba(Xt)
        with open(REALBIN / f"{data}_{seed}.pkl", "rb") as fh:
            ref = pickle.load(fh)
        return {
            "data": data, "seed": seed, "log_loss": float(_losses(P, yt).mean()),
            "errors": int(np.sum(P.argmax(1) != yt)), "C": float(est.C_),
            "default": float(_losses(ref["P"], yt).mean()),
            "default_errors": int(np.sum(ref["P"].argmax(1) != yt)),
        }  # fmt: skip

    for d, a, b in ss.PAIRS:
        for s in splits:
            data = f"{d}_{a}v{b}"
            row = _cached(f"minpair_{data}_{s}", lambda data=data, s=s: fit(data, s))
            print(data, s, round(row["log_loss"], 5), round(row["default"], 5), flush=True)


# ------------------------------------------------------------------------ CPU
def _measure(data: str, size: str, seed: int, method: str) -> dict:
    """Fit and predict ``method`` on the record's draw in this (fresh) worker process."""
    import _worker as bench

    acc = bench.record_module()
    n = None if size == "split" else int(size)
    X, codes, Xt, yt, P_true, K = acc.load(data, n, seed, 10_000)
    est, X, codes, _ = acc.method_estimator(method, K, X, codes)
    cost = bench.timed_fit(est, X, codes)
    P = est.predict_proba(Xt)
    score = acc.metrics(P, yt, P_true)
    return {
        "data": data, "size": size, "seed": seed, "method": method, "n": int(codes.size),
        "cpu": cost["cpu"], "before_mb": cost["before_mb"], "peak_mb": cost["peak_mb"],
        "model_mb": len(pickle.dumps(est)) / 2**20,
        "score": score["L1"] if P_true is not None else score["log_loss"],
    }  # fmt: skip


def cpu_stage() -> list[dict]:
    import _worker as bench

    cases = [([d, size, str(s)], s) for d, size, seeds in CPU_CASES for s in seeds]
    rows = bench.side_by_side(
        Path(__file__), cases, CPU_METHODS, HERE.parent,
        lambda r: f"cpu {r['cpu']:.1f} s, peak {r['peak_mb']:.0f} MB, score {r['score']:.5f}",
    )  # fmt: skip
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "cpu.json").write_text(json.dumps(rows))
    return rows


# --------------------------------------------------------------------- report
PEERS = ("platt", "sigmoid", "isotonic", "venn_abers")
SETS = ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))


def _record_rows(record: Path) -> dict:
    """The record's rows of ``wsvmgui_midtune`` beside the default's and the peers' runs:
    (data, size) -> seed -> {"new", "default", peer...: score}."""
    runs = json.loads((record / "accuracy_vs_peers.json").read_text())["runs"]
    out: dict = {}
    for key, rr in runs.items():
        data, size, seed, method = key.split("|")
        if method != "wsvmgui_midtune":
            continue
        metric = "log_loss" if size == "split" else "L1"
        base = f"{data}|{size}|{seed}|"
        row = {"new": rr[0][metric], "default": runs[base + "wsvmgui"][0][metric]}
        row["C_new"], row["C_default"] = rr[0].get("C"), runs[base + "wsvmgui"][0].get("C")
        for peer in runs.get(base + "svm", []):
            row[peer["method"]] = peer[metric]
        out.setdefault((data, size), {})[int(seed)] = row
    return out


def _ratio_cell(rows: list[dict], a: str, b: str) -> str:
    """Mean of ``a`` over mean of ``b``, and the draws better / worse (beyond 1e-12)."""
    x = np.array([r[a] for r in rows])
    y = np.array([r[b] for r in rows])
    better, worse = int(np.sum(x < y - 1e-12)), int(np.sum(x > y + 1e-12))
    return f"{x.mean() / y.mean():.3f} ({better}/{worse})"


def _record_table(rows: dict) -> list[str]:
    lines = [
        "| row | seeds | default | midtune | midtune / default (better/worse) | best SVM peer "
        "(least mean of the four on these seeds) | default / peer | midtune / peer |",
        "|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for (data, size), by in sorted(rows.items()):
        for seeds in SETS:
            rr = [by[s] for s in seeds if s in by]
            if not rr:
                continue
            peer = min(
                (np.mean([r[p] for r in rr]) for p in PEERS if all(p in r for r in rr)),
                default=np.nan,
            )
            new, old = np.mean([r["new"] for r in rr]), np.mean([r["default"] for r in rr])
            lines.append(
                f"| {data} {size} | {seeds[0]}-{seeds[-1]} ({len(rr)}) | {old:.5f} | {new:.5f} "
                f"| {_ratio_cell(rr, 'new', 'default')} | {peer:.5f} | {old / peer:.3f} "
                f"| {new / peer:.3f} |"
            )
    return lines


def _load_cache(prefix: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(CACHE.glob(f"{prefix}*.json"))]


def _pairs_table(rows: list[dict]) -> list[str]:
    lines = [
        "| sub-problem | splits | default | midtune | midtune / default (better/worse) | "
        "Platt | midtune / Platt | default / Platt | errors default / midtune / Platt | "
        "median C default / midtune |",
        "|---|---|---:|---:|---|---:|---:|---:|---|---|",
    ]
    tot: dict = {}
    for data in dict.fromkeys(r["data"] for r in rows):
        for seeds in SETS:
            rr = [r for r in rows if r["data"] == data and r["seed"] in seeds]
            if not rr:
                continue
            new, old, pl = (sum(r[k] for r in rr) for k in ("log_loss", "default", "platt"))
            for k, v in (("new", new), ("old", old), ("platt", pl)):
                tot.setdefault(seeds, {}).setdefault(k, []).append(v)
            err = "/".join(
                str(sum(r[k] for r in rr)) for k in ("default_errors", "errors", "platt_errors")
            )
            c_old, c_new = (np.median([r[k] for r in rr]) for k in ("default_C", "C"))
            cs = f"{c_old:g} / {c_new:g}"
            lines.append(
                f"| {data} | {seeds[0]}-{seeds[-1]} | {old:.4f} | {new:.4f} | "
                f"{_ratio_cell(rr, 'log_loss', 'default')} | {pl:.4f} | {new / pl:.3f} | "
                f"{old / pl:.3f} | {err} | {cs} |"
            )
    lines.append("")
    lines.append(
        "| splits | summed default | summed midtune | midtune / default | midtune / Platt | "
        "default / Platt | rows > 2 % worse than the default | rows > 2 % better |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for seeds, t in tot.items():
        new, old, pl = (np.array(t[k]) for k in ("new", "old", "platt"))
        lines.append(
            f"| {seeds[0]}-{seeds[-1]} | {old.sum():.4f} | {new.sum():.4f} | "
            f"{new.sum() / old.sum():.3f} | {new.sum() / pl.sum():.3f} | "
            f"{old.sum() / pl.sum():.3f} | {int(np.sum(new > 1.02 * old))} of {new.size} | "
            f"{int(np.sum(new < old / 1.02))} |"
        )
    return lines


def _shares_table(rows: list[dict], record: Path) -> list[str]:
    lines = [
        "| design | n | seed | tuning cells pooled | saturated (> 1/2) | largest share | "
        "L1 midtune | L1 default (record) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    runs = json.loads((record / "accuracy_vs_peers.json").read_text())["runs"]
    for r in rows:
        sh = np.asarray(r["shares"])
        default = runs.get(f"{r['data']}|{r['n']}|{r['seed']}|wsvmgui")
        dflt = None if default is None else default[0]["L1"]
        lines.append(
            f"| {r['data']} | {r['n']} | {r['seed']} | {sh.size} | {int(np.sum(sh > 0.5))} | "
            f"{sh.max():.3f} | {r['L1']:.5f} | {'' if dflt is None else f'{dflt:.5f}'} |"
        )
    return lines


def _min_rule_table(rows: list[dict]) -> list[str]:
    lines = [
        "| splits | default, min rule | midtune, min rule | ratio (better/worse) | "
        "C default / midtune per split |",
        "|---|---:|---:|---|---|",
    ]
    for seeds in SETS:
        rr = [
            {"a": r["wsvmgui_midtune"]["log_loss"], "b": r["wsvmgui"]["log_loss"], **r}
            for r in rows
            if r["seed"] in seeds
        ]
        if not rr:
            continue
        cs = ", ".join(f"{r['wsvmgui']['C']:g}/{r['wsvmgui_midtune']['C']:g}" for r in rr)
        lines.append(
            f"| {seeds[0]}-{seeds[-1]} | {np.mean([r['b'] for r in rr]):.5f} | "
            f"{np.mean([r['a'] for r in rr]):.5f} | {_ratio_cell(rr, 'a', 'b')} | {cs} |"
        )
    return lines


def _min_pairs_table(rows: list[dict]) -> list[str]:
    lines = [
        "| splits | summed default | summed default, min rule | ratio | rows > 2 % worse | "
        "rows > 2 % better | errors default / min rule |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for seeds in SETS:
        rr = [r for r in rows if r["seed"] in seeds]
        if not rr:
            continue
        by: dict = {}
        for r in rr:
            t = by.setdefault(r["data"], [0.0, 0.0])
            t[0] += r["default"]
            t[1] += r["log_loss"]
        old, new = np.array(list(by.values())).T
        err = f"{sum(r['default_errors'] for r in rr)} / {sum(r['errors'] for r in rr)}"
        lines.append(
            f"| {seeds[0]}-{seeds[-1]} | {old.sum():.4f} | {new.sum():.4f} | "
            f"{new.sum() / old.sum():.3f} | {int(np.sum(new > 1.02 * old))} of {old.size} | "
            f"{int(np.sum(new < old / 1.02))} | {err} |"
        )
    return lines


def _cpu_table(rows: list[dict]) -> list[str]:
    import _worker as bench

    lines = [
        "| data | seeds | CPU s midtune | default | plain | midtune / default | "
        "midtune / plain | default / plain | peak MB midtune / default | model MB midtune / "
        "default |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for data, g in bench.paired(rows, CPU_METHODS).items():
        new, old, plain = CPU_METHODS
        lines.append(
            f"| {data} | {','.join(map(str, g.seeds))} | {g.cells('cpu', '.2f')} | "
            f"{g.ratios([(new, old), (new, plain), (old, plain)])} | "
            f"{g.ratio(new, old, 'peak_mb'):.3f} | {g.ratio(new, old, 'model_mb'):.3f} |"
        )
    return lines


def report(record: Path) -> None:
    import _worker as bench

    rec = _record_rows(record)
    pairs = _load_cache("pair_")
    shares = _load_cache("design_")
    min_rule = _load_cache("minrule_")
    min_pairs = _load_cache("minpair_")
    cpu_path = CACHE / "cpu.json"
    cpu = json.loads(cpu_path.read_text()) if cpu_path.exists() else []
    lines = [
        '# Regime-consistent tuning: `calibration="auto_midtune"` (acc-midtune)',
        "",
        "Generated by `benchmarks/midtune_study.py --report`.  **midtune**: the binary "
        "default with the tuning search scoring every cell whose pooled cross-validated count "
        "estimates are saturated (more than `SATURATION_SHARE` = 1/2 outside the end "
        "weights) on the EGKL of the middle rung's sigmoid cross-validated on the tuning "
        'rows (the estimate `calibration="auto"` returns there); other cells as today '
        '(the EGKL of the raw count).  **default**: today\'s `calibration="auto"`.  '
        "Ratios of means (of sums for the sub-problems); (better/worse): draws.",
        "",
        "## The benchmark of record (`accuracy_vs_peers.py`, `wsvmgui_midtune`)",
        "",
        "Log loss for breast cancer, L1 for the designs.",
        "",
        *_record_table(rec),
        "",
        "## Saturated tuning cells on design draws (`--shares`)",
        "",
        *_shares_table(shares, record),
        "",
        "## Out of sample: the ten two-class sub-problems (`--pairs`)",
        "",
        "Summed test log loss over the splits; default and Platt (held fixed) from "
        "acc-realbin's cache.",
        "",
        *_pairs_table(pairs),
        "",
        "## Diagnostic: breast cancer with the smallest score (`--min-rule`)",
        "",
        'Both methods with `tuning_rule="min"` instead of the widest one-SE cell.',
        "",
        *_min_rule_table(min_rule),
        "",
        'Today\'s default with `tuning_rule="min"` on the ten sub-problems '
        "(`--min-rule --pairs`), against the default:",
        "",
        *_min_pairs_table(min_pairs),
        "",
        "## CPU and memory side by side (`--cpu`)",
        "",
        "Fresh single-threaded worker per fit, methods alternated; medians over the seeds, "
        "ratios per seed then the median.",
        "",
        *_cpu_table(cpu),
        "",
    ]
    payload = {
        "machine": bench.machine(),
        "record": {f"{d}|{s}": by for (d, s), by in rec.items()},
        "pairs": pairs,
        "shares": shares,
        "cpu": cpu,
        "min_rule": min_rule,
        "min_rule_pairs": min_pairs,
    }
    bench.write_results(OUT, payload, "\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("--splits", type=int, nargs="*", default=list(range(10)))
    ap.add_argument("--shares", action="store_true")
    ap.add_argument("--designs", nargs="*", default=list(DESIGNS))
    ap.add_argument("--sizes", nargs="*", default=["paper"])
    ap.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--min-rule", action="store_true")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--record", type=Path, default=Path("/tmp/acc-midtune/rec"))
    ap.add_argument("--worker", nargs=4)
    args = ap.parse_args()
    if args.worker:
        d, size, seed, method = args.worker
        print(json.dumps(_measure(d, size, int(seed), method)))
        return
    if args.pairs and not args.min_rule:
        pairs_stage(args.splits)
    if args.shares:
        shares_stage(args.designs, args.sizes, args.seeds)
    if args.min_rule:
        min_rule_stage(args.splits)
        if args.pairs:
            min_rule_pairs_stage(args.splits)
    if args.cpu:
        cpu_stage()
    if args.report:
        report(args.record)


if __name__ == "__main__":
    main()
