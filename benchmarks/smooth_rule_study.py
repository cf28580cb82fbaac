"""The smoothed count rule against the count rule and the recalibration (issue 23 item 2).

For each design (wuliu2011_ex1, ex2, ex6, wang2008_ex1), n in {100, 2000} and seeds 0-2:
today's default ``WeightedSVMClassifier`` (EGKL, minimum, count rule, no calibration) is
fitted on the training draw (standardised as ``accuracy_vs_peers.py`` does; test: the
draw ``10_000 + seed`` of ``--n-test`` points).  At its tuned (lambda, sigma) the path is
refitted on the calibration folds (5 stratified folds at n <= 500, as the tuning's; 3 at
n > 500, as ``calibration="auto"``), and the held-out rows are estimated at every width
of ``smooth_width.DEFAULT_WIDTHS``.  From those cross-fitted pairs:

* ``count``: the full fit's count rule (today); ``extreme``: its extreme rule;
* ``smooth``: the width of least held-out log loss, applied to the full fit;
* ``recal``: the ``"auto"`` monotone map fitted to the cross-fitted count estimates (what
  ``calibration="auto"`` computes, on these folds);
* ``smooth_recal``: the (width, map) pair of least 5-fold cross-validated log loss of the
  map on the cross-fitted pairs, applied to the full fit's ``p_h``.

Per row: L1 (both classes) and log loss against the test draw, CPU seconds (fit;
cross-fitting; smooth estimates), the chosen width and map, and a diagnosis by bands of
the true p: mean signed error ``p_hat - p`` (positive in the low band and negative in the
high band = shrunk toward 1/2), the slope of p_hat on p, the range of p_hat, and the
share of test points, sorted by true p, whose p_hat equals their neighbour's (to 1e-9:
flat regions of p_hat).  The best SVM peer's
L1 on the same draw comes from ``/work/main/benchmarks/results/accuracy_vs_peers.json``
(its test set is 10,000 points of the same seed; ``--n-test 10000`` makes them equal).

Resumable: each finished row is saved at once.  Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/smooth_rule_study.py
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "smooth_rule_study"
PEERS = Path("/work/main/benchmarks/results/accuracy_vs_peers.json")
DESIGNS = ("wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6", "wang2008_ex1")
METHODS = ("count", "extreme", "smooth", "recal", "smooth_recal")
BANDS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0001)


def load(design: str, n: int, seed: int, n_test: int):
    from sklearn.preprocessing import StandardScaler

    from wsvmgui.evaluation.designs import get_design

    d = get_design(design)
    tr, te = d.sample(n, seed), d.sample(n_test, 10_000 + seed)
    sc = StandardScaler().fit(tr.X)
    return sc.transform(tr.X), (tr.y > 0).astype(int), sc.transform(te.X), te.y > 0, te.p[:, 1]


def scores(p: np.ndarray, yt: np.ndarray, pt: np.ndarray) -> dict:
    q = np.clip(p, 1e-12, 1 - 1e-12)
    out = {
        "L1": float(2 * np.mean(np.abs(p - pt))),
        "log_loss": float(-np.mean(np.where(yt, np.log(q), np.log1p(-q)))),
    }
    band = np.digitize(pt, BANDS) - 1
    out["bias_by_band"] = [
        float(np.mean(p[band == b] - pt[band == b])) if np.any(band == b) else None
        for b in range(len(BANDS) - 1)
    ]
    out["l1_by_band"] = [
        float(2 * np.mean(np.abs(p[band == b] - pt[band == b]))) if np.any(band == b) else None
        for b in range(len(BANDS) - 1)
    ]
    # flat regions: sorted by true p, neighbours with the same p_hat
    dq = np.abs(np.diff(p[np.argsort(pt)]))
    out["range"] = [float(p.min()), float(p.max())]
    out["slope"] = float(np.polyfit(pt, p, 1)[0])  # < 1: shrunk toward the middle
    out["flat_share"] = float(np.mean(dq < 1e-9)) if dq.size else 0.0
    return out


def peer_l1(design: str, n: int, seed: int) -> float | None:
    if not PEERS.exists():
        return None
    runs = json.loads(PEERS.read_text())["runs"]
    rows = runs.get(f"{design}|{n}|{seed}|svm")
    if not rows:
        return None
    return float(min(r["L1"] for r in rows))


def run(design: str, n: int, seed: int, n_test: int) -> dict:
    from threadpoolctl import threadpool_limits

    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.ladder.problems import LadderProblem
    from wsvmgui.ladder.recalibration import (
        CALIBRATION_FOLDS,
        fit_map,
        map_scores,
    )
    from wsvmgui.ladder.smooth_rule import smooth_estimate
    from wsvmgui.ladder.smooth_width import DEFAULT_WIDTHS, cross_fitted_widths, width_scores
    from wsvmgui.ladder.splits import kfold_splits
    from wsvmgui.progress import ProgressTracker

    X, codes, Xt, yt, pt = load(design, n, seed, n_test)
    widths = np.array(DEFAULT_WIDTHS)
    with threadpool_limits(1):
        t0 = time.process_time()
        est = WeightedSVMClassifier(n_jobs=1, random_state=seed).fit(X, codes)
        cpu_fit = time.process_time() - t0
        t0 = time.process_time()
        folds = kfold_splits(codes, 5 if n <= 500 else CALIBRATION_FOLDS, seed)
        problem = LadderProblem(np.arange(n), np.where(codes == 1, 1.0, -1.0))
        P_cf, y_cf = cross_fitted_widths(
            X, problem, folds, est.kernel_, est.lambda_, n, est.weights_, widths,
            tracker=ProgressTracker(1),
        )  # fmt: skip
        cpu_cf = time.process_time() - t0
        t0 = time.process_time()
        P_t = smooth_estimate(est.ladder_, est.kernel_(Xt, est.X_support_), widths)
        cpu_smooth = time.process_time() - t0
        t0 = time.process_time()
        ws = width_scores(P_cf, y_cf)
        h = int(np.argmin(ws))
        # the map of least CV log loss per width (as calibration="auto" chooses)
        combo = []
        for i in range(widths.size):
            s = map_scores(P_cf[i], y_cf, seed=seed)
            name = min(s, key=lambda k: s[k])
            combo.append((s[name], i, name))
        best = min(combo)
        g_count = fit_map(combo[0][2], P_cf[0], y_cf)
        g_best = fit_map(best[2], P_cf[best[1]], y_cf)
        cpu_maps = time.process_time() - t0
    count = est.predict_proba(Xt)[:, 1]
    ests = {
        "count": count,
        "extreme": est.ladder_.estimate(est.kernel_(Xt, est.X_support_), "extreme").p,
        "smooth": P_t[h],
        "recal": g_count(P_t[0]),
        "smooth_recal": g_best(P_t[best[1]]),
    }
    row = {
        "design": design,
        "n": n,
        "seed": seed,
        "lambda": float(est.lambda_),
        "sigma": float(est.sigma_),
        "C": float(est.C_),
        "width": float(widths[h]),
        "width_cv_log_loss": [float(v) for v in ws],
        "smooth_recal_width": float(widths[best[1]]),
        "smooth_recal_map": best[2],
        "recal_map": combo[0][2],
        "recal_cv_log_loss": float(combo[0][0]),
        "smooth_recal_cv_log_loss": float(best[0]),
        "count_vs_h0_max_diff": float(np.max(np.abs(P_t[0] - count))),
        "cpu": {"fit": cpu_fit, "crossfit": cpu_cf, "smooth_test": cpu_smooth, "maps": cpu_maps},
        "peer_L1": peer_l1(design, n, seed),
        "test_L1_by_width": [scores(P_t[i], yt, pt)["L1"] for i in range(widths.size)],
        "methods": {m: scores(ests[m], yt, pt) for m in METHODS},
    }
    return row


def _key(d: str, n: int, s: int) -> str:
    return f"{d}|{n}|{s}"


def summarise(rows: dict) -> str:
    lines = [
        "# Smoothed count rule study (issue 23 item 2)",
        "",
        "`benchmarks/smooth_rule_study.py`; L1 both classes vs the truth on the test draw;",
        "ratios to the best SVM peer (accuracy_vs_peers.json, same training draw).",
        "",
        "| design | n | seed | h | count | extreme | smooth | recal | smooth+recal (h, map) "
        "| peer | CPU fit / cf / smooth / maps |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows.values():
        m = r["methods"]
        c = r["cpu"]
        peer = f"{r['peer_L1']:.4f}" if r["peer_L1"] is not None else "-"
        lines.append(
            f"| {r['design']} | {r['n']} | {r['seed']} | {r['width']:g} | "
            + " | ".join(f"{m[k]['L1']:.4f}" for k in ("count", "extreme", "smooth", "recal"))
            + f" | {m['smooth_recal']['L1']:.4f} ({r['smooth_recal_width']:g}, "
            f"{r['smooth_recal_map']}) | {peer} | {c['fit']:.1f} / {c['crossfit']:.1f} / "
            f"{c['smooth_test']:.1f} / {c['maps']:.1f} |"
        )
    lines += ["", "## Means over seeds (L1; log loss)", ""]
    lines.append("| design | n | seeds | " + " | ".join(METHODS) + " | peer |")
    lines.append("|---" * (len(METHODS) + 4) + "|")
    groups: dict = {}
    for r in rows.values():
        groups.setdefault((r["design"], r["n"]), []).append(r)
    for (d, n), rs in sorted(groups.items()):
        cells = []
        for k in METHODS:
            l1 = np.mean([r["methods"][k]["L1"] for r in rs])
            ll = np.mean([r["methods"][k]["log_loss"] for r in rs])
            cells.append(f"{l1:.4f}; {ll:.4f}")
        peers = [r["peer_L1"] for r in rs if r["peer_L1"] is not None]
        peer = f"{np.mean(peers):.4f} ({len(peers)})" if peers else "-"
        lines.append(f"| {d} | {n} | {len(rs)} | " + " | ".join(cells) + f" | {peer} |")
    lines += ["", "## Diagnosis: mean signed error p_hat - p by band of true p", ""]
    lines.append(
        "| design | n | method | [0,.2) | [.2,.4) | [.4,.6) | [.6,.8) | [.8,1] | slope | flat |"
    )
    lines.append("|---" * 10 + "|")
    for (d, n), rs in sorted(groups.items()):
        for k in METHODS:
            b = np.array(
                [[np.nan if v is None else v for v in r["methods"][k]["bias_by_band"]] for r in rs]
            )
            with warnings.catch_warnings():  # bands a design never visits: nan
                warnings.simplefilter("ignore", RuntimeWarning)
                mb = np.nanmean(b, axis=0)
            sl = np.mean([r["methods"][k]["slope"] for r in rs])
            fl = np.mean([r["methods"][k]["flat_share"] for r in rs])
            lines.append(
                f"| {d} | {n} | {k} | "
                + " | ".join("-" if np.isnan(v) else f"{v:+.3f}" for v in mb)
                + f" | {sl:.2f} | {fl:.2f} |"
            )
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", nargs="*", default=list(DESIGNS))
    ap.add_argument("--sizes", nargs="*", type=int, default=[100, 2000])
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    ap.add_argument("--n-test", type=int, default=10_000)
    ap.add_argument("--summarise", action="store_true", help="only rewrite the .md")
    args = ap.parse_args()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    js = OUT.with_suffix(".json")
    rows = json.loads(js.read_text())["rows"] if js.exists() else {}
    if not args.summarise:
        for n in args.sizes:
            for seed in args.seeds:
                for d in args.designs:
                    k = _key(d, n, seed)
                    if k in rows:
                        continue
                    rows[k] = run(d, n, seed, args.n_test)
                    m = rows[k]["methods"]
                    print(k, {x: round(m[x]["L1"], 4) for x in METHODS}, flush=True)
                    _write(js, json.dumps({"rows": rows}, indent=1))
    _write(OUT.with_suffix(".md"), summarise(rows))


if __name__ == "__main__":
    main()
