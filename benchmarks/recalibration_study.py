"""Where the ladder's calibration distortion comes from, and which model-free repair works.

Issue 23, item 2 (and the research behind item 3).  For each binary design, size and seed:

1. the default binary estimator (standardised features, every parameter at its default) is
   fitted; its tuned (C, sigma) is kept, and its p_hat on ``--n-test`` new points scored
   against the truth (L1 = sum over both classes, as METHODS section 7);
2. cross-fitted p_hat of every training point: the ladder at the tuned (C, sigma) fitted on
   5 stratified folds' training parts (``cf5``), or only on the tuning hold-out's training
   part (``cf_tune``: the fold the default tuning already fitted at that cell, so reusing
   it costs nothing but keeping its p_hat);
3. monotone maps from the cross-fitted p_hat to the labels, applied to the final fit's
   p_hat: isotonic regression, a sigmoid on logit(p_hat), beta calibration (a sigmoid on
   log p and -log(1 - p), kept only when both slopes are >= 0), and ``auto`` (the one of
   the three with the smallest 5-fold log loss on the cross-fitted points);
4. the smoothed count rule p = mean_m Phi(f_{pi_m}(x) / h) over 199 weights, h chosen on
   the cross-fitted points by log loss;
5. the distortion itself: the slope b of logit(p_true) = a + b logit(p_hat) on the test
   points (b < 1: p_hat too extreme; b > 1: too timid), and the mean true p in ten bins of
   p_hat;
6. ``--cells``: every (C, sigma) cell of the default grid fitted on all rows and scored
   against the truth (raw, and recalibrated by the map chosen on its cross-fitted
   estimates), next to criteria from 3-fold cross-fitted estimates of every training
   row: EGKL (floor 1e-2, today's criterion), Brier, and the cross-validated log loss of
   the recalibrated estimate; per-point losses are kept for one-standard-error rules.

Writes ``benchmarks/results/recalibration_study.{md,json}`` (``--out-dir``).  The
committed ``cells_study.json`` keeps only each cell's mean losses (the per-point losses
take megabytes), so ``--report-only`` on it leaves out the one-standard-error rows that
the committed ``cells_study.md`` was made with.  CPU seconds
are ``time.process_time`` of this process, one thread.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import logit  # noqa: E402
from scipy.stats import norm  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from wsvmgui.estimators.binary import WeightedSVMClassifier  # noqa: E402
from wsvmgui.evaluation.designs import get_design  # noqa: E402
from wsvmgui.ladder.recalibration import (  # noqa: E402
    MAPS,
    LocalInterval,
    choose_map,
    fit_map,
    map_scores,
)
from wsvmgui.ladder.splits import holdout_split  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BINARY = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
EPS = 1e-3
H_GRID = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def l1(p: np.ndarray, p_true: np.ndarray) -> float:
    return float(2 * np.mean(np.abs(p - p_true)))


def ll(p: np.ndarray, y01: np.ndarray, eps: float = EPS) -> float:
    p = np.clip(p, eps, 1 - eps)
    return float(-np.mean(y01 * np.log(p) + (1 - y01) * np.log(1 - p)))


def at_cell(C: float, sigma: float, n: int, n_weights: int | None = None) -> WeightedSVMClassifier:
    return WeightedSVMClassifier(
        lam=1.0 / (2.0 * n * C), sigma=sigma, n_jobs=1, n_weights=n_weights
    )


def smooth_count(D: np.ndarray, h: float) -> np.ndarray:
    """mean_m Phi(f_m / h) for decision values D (n, M - 1)."""
    return norm.cdf(D / h).mean(axis=1)


def one(design: str, n: int, seed: int, n_test: int, cells: bool) -> dict:
    d = get_design(design)
    tr, te = d.sample(n, seed), d.sample(n_test, 10_000 + seed)
    sc = StandardScaler().fit(tr.X)
    X, Xt = sc.transform(tr.X), sc.transform(te.X)
    y01 = (tr.y == 1).astype(float)
    p_true = te.p[:, 1]
    out: dict = {"design": design, "n": n, "seed": seed}
    t0 = time.process_time()
    est = WeightedSVMClassifier(n_jobs=1, n_weights=200).fit(X, tr.y)
    out["cpu_default"] = time.process_time() - t0
    C = 1.0 / (2.0 * n * est.lambda_)
    out.update(C=C, sigma=est.sigma_, sigma_grid=est.tuning_.sigmas.tolist())
    p_hat = est.predict_proba(Xt)[:, 1]
    D_test = est.ladder_decision(Xt)
    out["L1"] = {"default": l1(p_hat, p_true)}
    # distortion: slope of logit(p_true) on logit(p_hat)
    z = logit(np.clip(p_hat, EPS, 1 - EPS))
    b, a = np.polyfit(z, logit(np.clip(p_true, EPS, 1 - EPS)), 1)
    out["slope"], out["intercept"] = float(b), float(a)
    edges = np.linspace(0, 1, 11)
    bins = np.clip(np.digitize(p_hat, edges) - 1, 0, 9)
    out["bins"] = [
        [float(p_hat[bins == k].mean()), float(p_true[bins == k].mean()), int((bins == k).sum())]
        for k in range(10)
        if (bins == k).any()
    ]
    # cross-fitted p_hat
    t1 = time.process_time()
    p_cf = np.full(n, np.nan)
    D_cf = np.full((n, 199), np.nan)
    for ftr, fte in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, tr.y):
        e = at_cell(C, est.sigma_, ftr.size, 200).fit(X[ftr], tr.y[ftr])
        p_cf[fte] = e.predict_proba(X[fte])[:, 1]
        D_cf[fte] = e.ladder_decision(X[fte])
    out["cpu_cf5"] = time.process_time() - t1
    t1 = time.process_time()
    p_cf3 = np.full(n, np.nan)
    for ftr, fte in StratifiedKFold(3, shuffle=True, random_state=seed).split(X, tr.y):
        e = at_cell(C, est.sigma_, ftr.size).fit(X[ftr], tr.y[ftr])
        p_cf3[fte] = e.predict_proba(X[fte])[:, 1]
    out["cpu_cf3"] = time.process_time() - t1
    ftr, fte = (
        holdout_split(tr.y, 0.3, 0)
        if n > 500
        else next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, tr.y))
    )
    e = at_cell(C, est.sigma_, ftr.size).fit(X[ftr], tr.y[ftr])
    p_tune, y_tune = e.predict_proba(X[fte])[:, 1], y01[fte]
    for src, (pc, yc) in {
        "cf5": (p_cf, y01),
        "cf3": (p_cf3, y01),
        "cf_tune": (p_tune, y_tune),
    }.items():
        for m in MAPS:
            try:
                f = fit_map(m, pc, yc)
            except ValueError:
                continue
            out["L1"][f"{src}_{m}"] = l1(f(p_hat), p_true)
        best = choose_map(pc, yc, seed=seed)
        out["L1"][f"{src}_auto"] = l1(best(p_hat), p_true)
        out[f"{src}_auto_choice"] = best.name
    g = choose_map(p_cf, y01, seed=seed)
    for level in (0.8, 0.9):
        lo, hi = LocalInterval.fit(p_cf, y01)(p_hat, g(p_hat), level)
        out[f"coverage_{level}"] = float(np.mean((lo <= p_true) & (p_true <= hi)))
        out[f"width_{level}"] = float(np.mean(hi - lo))
    hs = [ll(smooth_count(D_cf, h), y01) for h in H_GRID]
    h = H_GRID[int(np.argmin(hs))]
    out["smooth_h"] = h
    out["L1"]["smooth_count"] = l1(smooth_count(D_test, h), p_true)
    out["L1"]["count_on_grid199"] = l1((D_test > 0).mean(axis=1), p_true)
    if cells:
        out["cells"] = cell_table(X, tr.y, y01, Xt, p_true, est)
    return out


def cell_table(X, y, y01, Xt, p_true, est) -> list[dict]:
    """Every cell of the default grid: truth L1 of the full fit against criteria computed
    from 3-fold cross-fitted estimates of all training rows (per-point losses kept, so
    one-standard-error rules can be applied afterwards)."""
    n = y.size
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    rows = []
    for lam_t in est.tuning_.lambdas:
        C = 1.0 / (2.0 * (0.7 * n) * lam_t)  # the default grid's C (0.1 ... 100)
        for sg in est.tuning_.sigmas:
            p = np.empty(n)
            for tr, te in folds:
                p[te] = at_cell(C, sg, tr.size).fit(X[tr], y[tr]).predict_proba(X[te])[:, 1]
            scores = map_scores(p, y01, seed=0)
            g = fit_map(min(MAPS, key=lambda m: (scores[m], MAPS.index(m))), p, y01)
            pt = at_cell(C, sg, n).fit(X, y).predict_proba(Xt)[:, 1]
            q = np.clip(p, 1e-2, 1 - 1e-2)
            rows.append(
                {
                    "C": C,
                    "sigma": float(sg),
                    "loss_egkl": (-(y01 * np.log(q) + (1 - y01) * np.log(1 - q))).tolist(),
                    "loss_brier": ((p - y01) ** 2).tolist(),
                    "recal_cv_logloss": float(min(scores.values())),
                    "map": g.name,
                    "L1_truth": l1(pt, p_true),
                    "L1_truth_recal": l1(g(pt), p_true),
                }
            )
    return rows


def _pick(C, S, L, LR, M=None, v=None, one_se=False) -> tuple[float, float, float, float]:
    """The cell a criterion picks: (C, sigma, L1, L1 recalibrated).  ``M``: per-point
    losses (cells, m); ``one_se``: the smoothest cell (smallest C, then largest sigma)
    within one standard error of the paired difference to the best."""
    v = M.mean(axis=1) if v is None else v
    i = int(np.argmin(v))
    if one_se and M is not None:
        se = (M - M[i]).std(axis=1, ddof=1) / np.sqrt(M.shape[1])
        cand = np.flatnonzero(v <= v[i] + se)
        i = int(cand[np.lexsort((-S[cand], C[cand]))[0]])
    return float(C[i]), float(S[i]), float(L[i]), float(LR[i])


def report(runs: list[dict]) -> str:
    """Markdown: the L1 of every variant, the distortion, and the tuning criteria."""
    lines = [
        "# Recalibration study (issue 23, items 2, 3 and 5)",
        "",
        "Generated by `benchmarks/recalibration_study.py` (its docstring defines every",
        "column).  L1 over both classes against the truth on 5000 test points; one draw per",
        "row.  `cf5`/`cf3`: cross-fitted on 5/3 folds; `cf_tune`: on the tuning hold-out",
        "only; `auto`: the map of smallest cross-validated log loss; `slope`: of",
        "logit(p) on logit(p_hat); `cov90`/`width90`: the local interval's coverage of the",
        "true p at level 0.9 and mean width; CPU seconds of the default fit and of the",
        "3-fold cross-fitting.",
        "",
    ]
    keys = [
        "default", "cf3_sigmoid", "cf3_beta", "cf3_isotonic", "cf3_auto", "cf5_auto",
        "cf_tune_auto", "smooth_count",
    ]  # fmt: skip
    lines += [
        "| design | n | seed | slope | " + " | ".join(keys) + " | auto (cf3) | cov90 | width90 | "
        "CPU default | CPU cf3 |",
        "|---|---|---|---|" + "---|" * len(keys) + "---|---|---|---|---|",
    ]
    for r in runs:
        vals = " | ".join(f"{r['L1'][k]:.4f}" if k in r["L1"] else "" for k in keys)
        lines.append(
            f"| {r['design']} | {r['n']} | {r['seed']} | {r['slope']:.2f} | {vals} | "
            f"{r.get('cf3_auto_choice', '')} | {r.get('coverage_0.9', float('nan')):.2f} | "
            f"{r.get('width_0.9', float('nan')):.3f} | {r['cpu_default']:.1f} | "
            f"{r.get('cpu_cf3', float('nan')):.1f} |"
        )
    cells = [r for r in runs if r.get("cells")]
    if cells:
        lines += [
            "",
            "## Tuning: which criterion picks the better cell",
            "",
            "Every cell of the default grid; criteria from 3-fold cross-fitted estimates of",
            "all training rows.  `L1` of the cell's full fit, `recal` after its own",
            "cross-fitted map; `1-SE`: the smoothest cell within one standard error.",
            "",
            "| design | n | criterion | C | sigma | L1 | recal |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in cells:
            cs = r["cells"]
            C = np.array([c["C"] for c in cs])
            S = np.array([c["sigma"] for c in cs])
            L = np.array([c["L1_truth"] for c in cs])
            LR = np.array([c["L1_truth_recal"] for c in cs])
            full = "loss_egkl" in cs[0]  # the committed JSON keeps only the means
            E = np.array([c["loss_egkl"] if full else [c["mean_egkl"]] for c in cs])
            B = np.array([c["loss_brier"] if full else [c["mean_brier"]] for c in cs])
            RC = np.array([c["recal_cv_logloss"] for c in cs])
            picks = {
                "default fit (its own tuning)": (
                    r["C"],
                    r["sigma"],
                    r["L1"]["default"],
                    float("nan"),
                ),
                "best cell by truth (oracle)": _pick(C, S, L, LR, v=L),
                "best recalibrated cell (oracle)": _pick(C, S, L, LR, v=LR),
                "EGKL": _pick(C, S, L, LR, E),
                "Brier": _pick(C, S, L, LR, B),
                **(
                    {
                        "EGKL, 1-SE": _pick(C, S, L, LR, E, one_se=True),
                        "Brier, 1-SE": _pick(C, S, L, LR, B, one_se=True),
                    }
                    if full
                    else {}
                ),
                "recalibrated CV log loss": _pick(C, S, L, LR, v=RC),
            }
            for name, (c, sg, l1v, lr) in picks.items():
                lines.append(
                    f"| {r['design']} | {r['n']} | {name} | {c:.3g} | {sg:.3f} | "
                    f"{l1v:.4f} | {lr:.4f} |"
                )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--designs", nargs="*", default=list(BINARY))
    ap.add_argument("--sizes", nargs="*", type=int, default=[2000])
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1])
    ap.add_argument("--n-test", type=int, default=5000)
    ap.add_argument("--cells", action="store_true")
    ap.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--tag", default="recalibration_study")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    out = Path(args.out_dir) / f"{args.tag}.json"
    runs = json.loads(out.read_text()) if out.exists() else []
    done = {(r["design"], r["n"], r["seed"]) for r in runs}
    for n in [] if args.report_only else args.sizes:
        for seed in args.seeds:
            for d in args.designs:
                if (d, n, seed) in done:
                    continue
                print(time.strftime("%H:%M:%S"), d, n, seed, flush=True)
                runs.append(one(d, n, seed, args.n_test, args.cells))
                out.write_text(json.dumps(runs, indent=1))
                out.with_suffix(".md").write_text(report(runs))
    if args.report_only or runs:
        out.with_suffix(".md").write_text(report(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
