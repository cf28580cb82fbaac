"""A wider sigma grid above 1000 rows and the fold average for the pair schemes (issue 23,
ninth sitting, branch acc-mcwide).

Per draw of the benchmark of record (``accuracy_vs_peers.load`` and
``method_estimator("wsvmgui")``: the same draws, standardisation, 10,000 test points and
estimator) the multiclass default is fitted once per sigma grid:

* ``default``: today's library (:data:`~wsvmgui.estimators.multiclass.PAIR_SIGMA_FACTORS`
  (0.25, 0.5, 1, 1.5) sigma_M);
* ``wide``: the same with the pair schemes' sigma factors :data:`WIDE_FACTORS`
  (0.25, 0.5, 1, 1.5, 2.5, 4) where the draw has more than
  ``PAIR_AUTO_ONE_SE_MAX_ROWS`` (1000) rows (at or below it ``wide`` is not fitted: the
  grid there is unchanged).

From each fit two estimates are scored: the fit's ``predict_proba`` (``a``), and the
fold average (``c``): each recalibrated pair's raw estimate replaced by the mean of its
cross-fitting fold fits' raw estimates at the test points before its map (the fold fits
are the ones the map was fitted on; captured from
:func:`wsvmgui.ladder.recalibration.fold_fits`), coupled as the estimator couples (the
baseline schemes' tie pairs, which are not recalibrated, unchanged).  So the variants are
``default_a`` (today), ``default_c`` (the fold average), ``wide_a`` (the wider grid) and
``wide_c`` (both); ``wide25_a``: a milder extension, (0.25, 0.5, 1, 1.5, 2.5) sigma_M above
1000 rows (grid ``wide25``, ``a`` only); and two post-hoc blends of cached probabilities
(no new fit): ``mix_ac`` (today's and the fold average's mean) and ``mix_wide`` (today's and
the wide grid's).  Each fit also records its CPU (fit; prediction by the full ladders and
by the fold ladders), each pair's chosen cell (sigma over sigma_M, C) and the axes on which
the chosen and the smallest-score cells sit at the grid's edge (``fit_info_``).

Stages::

    nice -n 5 python benchmarks/multiclass_wide_study.py --fit --designs wu2010_ex1 \
        --sizes 2000 --seeds 0 1 2 3 4 --grids default wide
    nice -n 5 python benchmarks/multiclass_wide_study.py --fit --real iris wine --seeds 0 1
    nice -n 5 python benchmarks/multiclass_wide_study.py --fit --designs wu2010_ex1 --grids wide25
    python benchmarks/multiclass_wide_study.py --report

Cache: ``/tmp/acc-mcwide/<grid>/<data>_<n>_<seed>.npz``; results
``benchmarks/results/multiclass_wide_study.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULTS = ROOT / "benchmarks" / "results"
NAME = "multiclass_wide_study"
CACHE = Path("/tmp/acc-mcwide")
N_TEST = 10_000
#: The pair schemes' sigma factors of the ``wide`` grid (above 1000 rows).
WIDE_FACTORS = (0.25, 0.5, 1.0, 1.5, 2.5, 4.0)
#: A milder extension (``wide25``): one more width, 2.5 sigma_M.
WIDE25_FACTORS = (0.25, 0.5, 1.0, 1.5, 2.5)
GRID_FACTORS = {"wide": WIDE_FACTORS, "wide25": WIDE25_FACTORS}
GRIDS = ("default", "wide", "wide25")
MC_DESIGNS = (
    "wu2010_ex1", "wu2010_ex2", "wu2010_ex4", "zeng_ex1", "zeng_ex2", "zeng_ex3", "zeng_ex4",
)  # fmt: skip
MC_REAL = ("iris", "wine", "penguins", "digits")


def _path(grid: str, data: str, n, seed: int) -> Path:
    return CACHE / grid / f"{data}_{n or 'paper'}_{seed}.npz"


def _estimate(fit, X: np.ndarray, Xt: np.ndarray, rule: str, step: int = 2000) -> np.ndarray:
    """A FittedLadder's raw estimate at ``Xt`` (m,), in blocks of ``step`` rows."""
    Xs = X[fit.support]
    return np.concatenate(
        [fit.ladder.estimate(fit.kernel(Xt[i : i + step], Xs), rule).p
         for i in range(0, Xt.shape[0], step)]
    )  # fmt: skip


def fold_average_proba(est, X: np.ndarray, Xt: np.ndarray, folds: list[np.ndarray]) -> np.ndarray:
    """``est``'s probabilities at ``Xt`` (m, p) with each recalibrated sub-problem's raw
    estimate replaced by ``folds[i].mean(axis=0)`` (folds[i]: (k, m), its fold fits' raw
    estimates) before its map; shape (m, K)."""
    from wsvmgui.ladder.rules import LadderEstimate

    maps = est.calibrations_
    raw = est.subproblems_.estimates(Xt, est.rule)
    ests = [
        LadderEstimate(g(f.mean(axis=0)), g(f.mean(axis=0)), g(f.mean(axis=0)), e.monotone)
        for g, f, e in zip(maps, folds, raw, strict=True)
    ]
    return est._combine(ests, Xt)["proba"]


def _cells(est) -> list[dict]:
    """Each sub-problem's chosen cell: sigma over sigma_M (the grid's factor), C, indices."""
    out = []
    for f in est.subproblems_.fitted:
        t = f.tuning
        row = {"name": f.spec.name, "C": 1.0 / (2.0 * f.n_train * f.lam), "sigma": f.sigma}
        if t is not None:
            i, j = t.best
            mi, mj = t.min_cell
            row.update(
                sigma_index=int(j), n_sigmas=int(len(t.sigmas)), min_sigma_index=int(mj),
                lambda_index=int(i), min_lambda_index=int(mi),
            )  # fmt: skip
        out.append(row)
    return out


def fit_draw(grid: str, data: str, n, seed: int) -> None:
    """Fit the default on one draw with sigma grid ``grid`` and cache a, c and the rest."""
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import multiclass
    from wsvmgui.ladder import recalibration as rc

    out = _path(grid, data, n, seed)
    if out.exists():
        return
    X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
    if grid != "default" and codes.size <= multiclass.PAIR_AUTO_ONE_SE_MAX_ROWS:
        return
    est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
    assert isinstance(est, multiclass.MulticlassWeightedSVMClassifier), type(est)
    fits: list = []
    orig_ff, orig_factors = rc.fold_fits, multiclass.PAIR_SIGMA_FACTORS

    def fold_fits(*a, **k):
        for item in orig_ff(*a, **k):
            fits.append(item)
            yield item

    rc.fold_fits = fold_fits
    if grid != "default":
        multiclass.PAIR_SIGMA_FACTORS = GRID_FACTORS[grid]
    try:
        t0 = time.process_time()
        est.fit(X, codes)
        fit_cpu = time.process_time() - t0
    finally:
        rc.fold_fits, multiclass.PAIR_SIGMA_FACTORS = orig_ff, orig_factors
    maps = est.calibrations_
    n_pairs = len(maps)
    k = len(fits) // n_pairs
    assert k * n_pairs == len(fits), (len(fits), n_pairs)
    t0 = time.process_time()
    P_a = est.predict_proba(Xt)
    pred_full = time.process_time() - t0
    t0 = time.process_time()
    folds = [np.array([_estimate(f, X, Xt, est.rule) for f, _, _ in fits[i * k : (i + 1) * k]])
             for i in range(n_pairs)]  # fmt: skip
    pred_folds = time.process_time() - t0
    P_c = fold_average_proba(est, X, Xt, folds)
    info = {
        "grid": grid, "data": data, "n": int(codes.size), "seed": seed, "K": int(K),
        "scheme": est.scheme, "fit_cpu": fit_cpu, "pred_cpu_full": pred_full,
        "pred_cpu_folds": pred_folds, "k": k, "maps": [g.name for g in maps],
        "cells": _cells(est), "tuning_edge": est.fit_info_.get("tuning_edge", {}),
        "tuning_min_edge": est.fit_info_.get("tuning_min_edge", {}),
        "sigmas": [float(s) for s in next(iter(est.tuning_.values())).sigmas]
        if est.tuning_ else [],
    }  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(
        tmp, P_a=P_a, P_c=P_c, yt=yt, P_true=np.zeros(0) if P_true is None else P_true,
        info=json.dumps(info, default=str),
    )  # fmt: skip
    tmp.replace(out)
    print(
        f"{time.strftime('%H:%M:%S')} {grid} {out.name} fit {fit_cpu:.1f} s, predict "
        f"{pred_full:.1f} / folds {pred_folds:.1f} s",
        flush=True,
    )


def _score(P: np.ndarray, yt: np.ndarray, P_true: np.ndarray) -> float:
    """L1 against the truth (designs) or the log loss (real sets)."""
    from wsvmgui.evaluation.metrics import cross_entropy, l1_error

    if P_true.size:
        return float(l1_error(P, P_true))
    return float(cross_entropy(P, yt, np.arange(P.shape[1])))


def collect() -> dict:
    """Per draw: each variant's score, CPU and the chosen cells' edge counts."""
    rows: dict = {}
    probs: dict = {}
    for grid in GRIDS:
        for path in sorted((CACHE / grid).glob("*.npz")):
            if path.name.endswith(".tmp.npz"):
                continue
            with np.load(path) as z:
                d = {k: z[k] for k in z.files}
            info = json.loads(str(d["info"]))
            key = path.stem
            r = rows.setdefault(key, {"data": info["data"], "n": info["n"], "seed": info["seed"]})
            for v in "ac":
                r[f"{grid}_{v}"] = _score(d[f"P_{v}"], d["yt"], d["P_true"])
                probs[(key, grid, v)] = (d[f"P_{v}"], d["yt"], d["P_true"])
            r[f"{grid}_cpu"] = info["fit_cpu"]
            r[f"{grid}_pred_full"] = info["pred_cpu_full"]
            r[f"{grid}_pred_folds"] = info["pred_cpu_folds"]
            cells = [c for c in info["cells"] if "sigma_index" in c]
            r[f"{grid}_pairs"] = len(cells)
            r[f"{grid}_sigma_top"] = sum(c["sigma_index"] == c["n_sigmas"] - 1 for c in cells)
            r[f"{grid}_min_sigma_top"] = sum(
                c["min_sigma_index"] == c["n_sigmas"] - 1 for c in cells
            )
            r[f"{grid}_sigma_above"] = sum(c["sigma_index"] >= 4 for c in cells)
            r[f"{grid}_factors"] = [
                round(c["sigma"] / info["sigmas"][2], 3) if info["sigmas"] else None for c in cells
            ]
            r[f"{grid}_maps"] = info["maps"]
    # post-hoc blends of the cached probabilities (no new fit): today's and the fold
    # average's, today's and the wide grid's
    for (key, grid, v), (P, yt, P_true) in probs.items():
        if (grid, v) != ("default", "a"):
            continue
        for name, other in (("mix_ac", ("default", "c")), ("mix_wide", ("wide", "a"))):
            if (key, *other) in probs:
                rows[key][name] = _score((P + probs[(key, *other)][0]) / 2, yt, P_true)
    return rows


VARIANTS = ("default_c", "wide_a", "wide_c", "mix_ac", "mix_wide", "wide25_a")


def summarise(rows: dict) -> list[dict]:
    """Per (data, n, seed set): mean of each variant, ratio to today's, better / worse."""
    groups: dict = {}
    for r in rows.values():
        sset = "0-4" if r["seed"] < 5 else "5-9"
        groups.setdefault((r["data"], r["n"], sset), []).append(r)
    out = []
    for (data, n, sset), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])
    ):
        rs = sorted(rs, key=lambda r: r["seed"])
        base_all = [r["default_a"] for r in rs if "default_a" in r]
        row = {"data": data, "n": n, "seeds": sset, "draws": len(rs)}
        row["default_a"] = float(np.mean(base_all)) if base_all else float("nan")
        for v in VARIANTS:
            both = [r for r in rs if v in r and "default_a" in r]
            if not both:
                continue
            m = float(np.mean([r[v] for r in both]))
            base = float(np.mean([r["default_a"] for r in both]))
            row[v] = m
            row[f"{v}_ratio"] = m / base
            row[f"{v}_bw"] = (
                sum(r[v] < r["default_a"] for r in both),
                sum(r[v] > r["default_a"] for r in both),
            )
            row[f"{v}_draws"] = len(both)
        for g in GRIDS:
            have = [r for r in rs if f"{g}_cpu" in r]
            if have:
                row[f"{g}_cpu"] = float(np.mean([r[f"{g}_cpu"] for r in have]))
                row[f"{g}_sigma_top"] = sum(r[f"{g}_sigma_top"] for r in have)
                row[f"{g}_min_sigma_top"] = sum(r[f"{g}_min_sigma_top"] for r in have)
                row[f"{g}_pairs"] = sum(r[f"{g}_pairs"] for r in have)
                row[f"{g}_sigma_above"] = sum(r[f"{g}_sigma_above"] for r in have)
                row[f"{g}_pred_full"] = float(np.mean([r[f"{g}_pred_full"] for r in have]))
                row[f"{g}_pred_folds"] = float(np.mean([r[f"{g}_pred_folds"] for r in have]))
        out.append(row)
    return out


def report_md(summary: list[dict]) -> str:
    lines = [
        "# Multiclass: wider sigma grid above 1000 rows, fold average (acc-mcwide)",
        "",
        "Generated by `benchmarks/multiclass_wide_study.py` (see its docstring).  Mean L1 "
        "against the truth (log loss on the real sets) of today's default (`default_a`) and "
        "each variant's ratio to it on the same draws, draws better / worse in brackets.  "
        "`edge`: pairs whose chosen sigma is the grid's largest (chosen / smallest-score "
        "cell) over all pairs of the row's draws; `> 1.5`: pairs choosing 2.5 or 4 sigma_M.  "
        "`grid to 2.5`: the sigma factors (0.25, 0.5, 1, 1.5, 2.5) above 1000 rows.",
        "",
        "| data | n | seeds | draws | today | fold avg (c) | wide grid | wide + fold avg "
        "| (today + c) / 2 | (today + wide) / 2 | grid to 2.5 "
        "| edge today | edge wide | > 1.5 | CPU wide / today | predict folds / full |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(r, v):
        if v not in r:
            return ""
        b, w = r[f"{v}_bw"]
        return f"{r[f'{v}_ratio']:.3f} ({b}/{w})"

    for r in summary:
        edge = (
            f"{r['default_sigma_top']} / {r['default_min_sigma_top']} of {r['default_pairs']}"
            if "default_pairs" in r
            else ""
        )
        wedge = (
            f"{r['wide_sigma_top']} / {r['wide_min_sigma_top']} of {r['wide_pairs']}"
            if "wide_pairs" in r
            else ""
        )
        above = str(r["wide_sigma_above"]) if "wide_pairs" in r else ""
        cpu = f"{r['wide_cpu'] / r['default_cpu']:.2f}" if "wide_cpu" in r else ""
        pred = (
            f"{r['default_pred_folds'] / max(r['default_pred_full'], 1e-9):.2f}"
            if "default_pred_full" in r
            else ""
        )
        lines.append(
            f"| {r['data']} | {r['n']} | {r['seeds']} | {r['draws']} | {r['default_a']:.4f} | "
            f"{cell(r, 'default_c')} | {cell(r, 'wide_a')} | {cell(r, 'wide_c')} | "
            f"{cell(r, 'mix_ac')} | {cell(r, 'mix_wide')} | {cell(r, 'wide25_a')} | {edge} | "
            f"{wedge} | {above} | {cpu} | {pred} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--designs", nargs="*", default=[])
    ap.add_argument("--real", nargs="*", default=[])
    ap.add_argument("--sizes", nargs="*", default=["2000"], help="n, or 'paper' (the design's)")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0])
    ap.add_argument("--grids", nargs="*", default=list(GRIDS), choices=GRIDS)
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if args.fit:
        for seed in args.seeds:
            for data in args.designs:
                for size in args.sizes:
                    n = None if size == "paper" else int(size)
                    for grid in args.grids:
                        fit_draw(grid, data, n, seed)
            for data in args.real:
                fit_draw("default", data, None, seed)
    if args.report:
        rows = collect()
        summary = summarise(rows)
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{NAME}.json").write_text(
            json.dumps({"draws": rows, "summary": summary}, indent=1, default=str)
        )
        (RESULTS / f"{NAME}.md").write_text(report_md(summary))
        print(report_md(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
