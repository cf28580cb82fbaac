"""Choosing the default number of weight intervals M by measurement.

For the binary designs ``wang2008_ex1``, ``wuliu2011_ex1`` and ``wuliu2011_ex6``, training
sizes n in {100, 400, 1000} and a few seeds, this runs the default pipeline of
``WeightedSVMClassifier()`` (EGKL tuning over the default lambda and sigma grids by
stratified 5-fold cross-validation for n <= 500 and on a stratified 70/30 split above,
``random_state=0``; then the ladder on all n points with the tuned C kept; count rule)
with the weight grid ``m / M``, M = M(n), for each candidate rule, and scores the estimate
against the true probabilities on a large test set (5000 points):

* mean |p_hat - p| per point (= L1 / 2 for two classes), and EGKL (KL divergence from the
  truth, METHODS section 7);
* cost: the number of weighted fits and their summed CPU time.

Each weighted fit depends only on (data, sigma, lambda, pi), so fits are shared between
rules whose grids contain the same weight; the answers are those of separate
``WeightedSVMClassifier`` runs with the rule patched in (checked at the start of a run on
one small case in both tuning modes: ``identity check``), and a rule's cost is the summed
CPU time of the fits it uses.

Writes ``benchmarks/results/default_weight_grid.{md,json}``.  Run::

    python benchmarks/default_weight_grid.py           # 3 designs x 3 sizes x 3 seeds
    python benchmarks/default_weight_grid.py --quick   # n in {100, 400}, 2 seeds
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np
import sklearn
from threadpoolctl import threadpool_limits

import wsvmgui.estimators._ladder as ladder_params
from wsvmgui.errors import SolverError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import egkl
from wsvmgui.ladder.rules import probabilities_from_signs
from wsvmgui.ladder.splits import AUTO_CV_MAX_N, holdout_split, kfold_splits
from wsvmgui.ladder.tuning import (
    default_lambda_grid,
    default_n_weights,
    egkl_binary,
)
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.solvers.kernels import Kernel, default_sigma_grid
from wsvmgui.solvers.wsvm import fit_weighted_svm

RESULTS = Path(__file__).resolve().parent / "results"
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex6")
TUNE_FRACTION = 0.3  # WeightedSVMClassifier default
CV_FOLDS = 5  # WeightedSVMClassifier default
SPLIT_SEED = 0  # WeightedSVMClassifier default random_state


def _isqrt(n: int) -> int:
    return int(np.floor(np.sqrt(n)))


#: Candidate rules M(n).
RULES: dict[str, Callable[[int], int]] = {
    "10": lambda n: 10,
    "floor(sqrt n / 2)": lambda n: max(int(np.floor(np.sqrt(n) / 2)), 2),
    "floor(sqrt n)": _isqrt,
    "20": lambda n: 20,
    "40": lambda n: 40,
    "80": lambda n: 80,
    "max(floor(sqrt n), 20)": lambda n: max(_isqrt(n), 20),
    "floor(2 sqrt n)": lambda n: int(np.floor(2 * np.sqrt(n))),
    "max(floor(sqrt n), 40)": lambda n: max(_isqrt(n), 40),
    "max(floor(2 sqrt n), 40)": lambda n: max(int(np.floor(2 * np.sqrt(n))), 40),
}


#: Rules checked against the estimator itself (one of each kind, to keep the check short).
IDENTITY_RULES = ("floor(sqrt n)", "40", "floor(2 sqrt n)")


#: Reference rules of the paired comparisons: the previous default and the papers' rule.
PAIRED_BASES = ("max(floor(sqrt n), 20)", "floor(sqrt n)")


class FitCache:
    """Weighted fits keyed by (cell, pi), with each fit's CPU time."""

    def __init__(self, K: np.ndarray, y: np.ndarray, lam: float) -> None:
        self.K, self.y, self.lam = K, y, lam
        self.fits: dict[float, object] = {}
        self.cpu: dict[float, float] = {}

    def get(self, pi: float):
        if pi not in self.fits:
            t0 = time.process_time()
            try:
                self.fits[pi] = fit_weighted_svm(self.K, self.y, pi, self.lam)
            except SolverError as exc:
                self.fits[pi] = exc
            self.cpu[pi] = time.process_time() - t0
        return self.fits[pi]

    def ladder_decision(self, weights: np.ndarray, K_cross: np.ndarray) -> np.ndarray | None:
        """Decision values (m, M - 1), or None when a fit of the grid failed."""
        fits = [self.get(float(pi)) for pi in weights]
        if any(isinstance(f, SolverError) for f in fits):
            return None
        coef = np.vstack([f.coef for f in fits])
        b = np.array([f.intercept for f in fits])
        return K_cross @ coef.T + b[None, :]

    def cost(self, weights: np.ndarray) -> float:
        return float(sum(self.cpu[float(pi)] for pi in weights))


def run_case(
    design: str, n: int, seed: int, rules: dict, n_test: int, tuning: str = "auto"
) -> dict:
    """Every rule on one (design, n, seed) through the estimator's default pipeline.

    Mirrors ``WeightedSVMClassifier(cv=...).fit``: stratified 5-fold CV (n <= 500
    under "auto") or a 70/30 split, the default lambda grid for the first fold's training
    size, the default sigma grid of all points, EGKL pooled over the tuning points, ties
    to the first cell; then the ladder on all n points with the tuned C kept.
    """
    data = simulate(design, n, seed=seed)
    test = simulate(design, n_test, seed=10_000 + seed)
    X, y = data.X, data.y.astype(float)
    mode = ("cv" if n <= AUTO_CV_MAX_N else "split") if tuning == "auto" else tuning
    if mode == "cv":
        folds = kfold_splits(y, CV_FOLDS, SPLIT_SEED)
    else:
        folds = [holdout_split(y, TUNE_FRACTION, SPLIT_SEED)]
    n_tr = folds[0][0].size
    n_tune = sum(tu.size for _, tu in folds)
    lambdas = default_lambda_grid(n_tr)
    sigmas = default_sigma_grid(X, y, seed=SPLIT_SEED)
    grids = {r: weight_grid(f(n)) for r, f in rules.items()}
    loss = {r: np.zeros((lambdas.size, sigmas.size)) for r in rules}
    cost = dict.fromkeys(rules, 0.0)
    n_fits = dict.fromkeys(rules, 0)
    for j, sig in enumerate(sigmas):
        K_all = Kernel("rbf", sigma=float(sig))(X)
        for tr, tu in folds:
            K, K_tu = K_all[np.ix_(tr, tr)], K_all[np.ix_(tu, tr)]
            for i, lam in enumerate(lambdas):
                cache = FitCache(K, y[tr], float(lam))
                for r, w in grids.items():
                    n_fits[r] += w.size
                    if not np.isfinite(loss[r][i, j]):
                        continue
                    D = cache.ladder_decision(w, K_tu)
                    cost[r] += cache.cost(w)
                    if D is None:
                        loss[r][i, j] = np.inf
                        continue
                    p = probabilities_from_signs(D > 0, w).p
                    loss[r][i, j] += egkl_binary(p, y[tu]) * tu.size
    # Final ladder on all points at each rule's tuned cell (fits shared between rules).
    finals: dict[tuple[int, int], tuple[FitCache, np.ndarray]] = {}
    out = {
        "design": design,
        "n": n,
        "seed": seed,
        "tuning": mode,
        "n_train_fold": n_tr,
        "rules": {},
    }
    for r in rules:
        s = loss[r] / n_tune
        best = int(np.flatnonzero(s.ravel() == s.min())[0])  # ties: first, as the estimator
        i, j = np.unravel_index(best, s.shape)
        if (i, j) not in finals:
            kern = Kernel("rbf", sigma=float(sigmas[j]))
            lam_final = float(lambdas[i]) * n_tr / n  # the tuned C is kept
            finals[(i, j)] = (FitCache(kern(X), y, lam_final), kern(test.X, X))
        cache, K_te = finals[(i, j)]
        w = grids[r]
        D = cache.ladder_decision(w, K_te)
        if D is None:
            out["rules"][r] = {"failed": True}
            continue
        p_hat = probabilities_from_signs(D > 0, w).p
        P_hat = np.column_stack([1 - p_hat, p_hat])
        out["rules"][r] = {
            "M": int(w.size + 1),
            "abs_err": float(np.mean(np.abs(p_hat - test.p[:, 1]))),
            "egkl": egkl(P_hat, test.p),
            "tune_egkl": float(s.min()),
            "lambda": float(lambdas[i]),
            "sigma": float(sigmas[j]),
            "n_fits": n_fits[r] + w.size,
            "fit_cpu_s": cost[r] + cache.cost(w),
        }
    return out


def identity_check(rules: dict, n_test: int) -> dict:
    """The shared-fit evaluation equals WeightedSVMClassifier with the rule patched in.

    Checked on one small case in both tuning modes (cross-validation and split).
    """
    design, n, seed = "wuliu2011_ex1", 100, 0
    rules = {r: rules[r] for r in IDENTITY_RULES if r in rules} or rules
    test = simulate(design, n_test, seed=10_000 + seed)
    data = simulate(design, n, seed=seed)
    diffs, walls = {}, {}
    for mode in ("cv", "split"):
        mine = run_case(design, n, seed, rules, n_test, tuning=mode)
        for r, f in rules.items():
            with mock.patch.object(ladder_params, "default_n_weights", f):
                t0 = time.perf_counter()
                cv = CV_FOLDS if mode == "cv" else TUNE_FRACTION
                clf = WeightedSVMClassifier(cv=cv).fit(data.X, data.y)
                walls[f"{mode}|{r}"] = time.perf_counter() - t0
            p = clf.predict_proba(test.X)[:, 1]
            diffs[f"{mode}|{r}"] = float(
                np.mean(np.abs(p - test.p[:, 1])) - mine["rules"][r]["abs_err"]
            )
    return {
        "case": f"{design}, n={n}, seed={seed}, tuning cv and split",
        "rules": list(rules),
        "abs_err_diff": diffs,
        "max_abs_diff": float(max(abs(d) for d in diffs.values())),
        "wall_s": walls,
    }


# ----------------------------------------------------------------------------- summary
def summarise(records: list[dict], rules: dict) -> dict:
    """Means over seeds per (design, n, rule) and over designs per (n, rule)."""
    table: dict = {}
    for rec in records:
        for r, v in rec["rules"].items():
            if v.get("failed"):
                continue
            table.setdefault((rec["design"], rec["n"], r), []).append(v)
    per = {}
    for (d, n, r), vs in table.items():
        per[f"{d}|{n}|{r}"] = {
            "design": d,
            "n": n,
            "rule": r,
            "M": vs[0]["M"],
            "seeds": len(vs),
            "abs_err": float(np.mean([v["abs_err"] for v in vs])),
            "abs_err_se": float(np.std([v["abs_err"] for v in vs], ddof=1) / np.sqrt(len(vs)))
            if len(vs) > 1
            else float("nan"),
            "egkl": float(np.mean([v["egkl"] for v in vs])),
            "n_fits": float(np.mean([v["n_fits"] for v in vs])),
            "fit_cpu_s": float(np.mean([v["fit_cpu_s"] for v in vs])),
        }
    overall = {}
    sizes = sorted({rec["n"] for rec in records})
    for n in sizes:
        for r in rules:
            rows = [v for v in per.values() if v["n"] == n and v["rule"] == r]
            if not rows:
                continue
            overall[f"{n}|{r}"] = {
                "n": n,
                "rule": r,
                "M": rows[0]["M"],
                "abs_err": float(np.mean([v["abs_err"] for v in rows])),
                "egkl": float(np.mean([v["egkl"] for v in rows])),
                "n_fits": float(np.mean([v["n_fits"] for v in rows])),
                "fit_cpu_s": float(np.mean([v["fit_cpu_s"] for v in rows])),
            }
    # Paired comparisons: per case, relative change in error against a reference rule.
    paired: dict = {}
    for base in PAIRED_BASES:
        if base not in rules:
            continue
        for r in rules:
            for n in [*sizes, "all"]:
                rel_abs, rel_kl, wins_kl, wins_abs = [], [], 0, 0
                for rec in records:
                    if n != "all" and rec["n"] != n:
                        continue
                    a, b = rec["rules"].get(r, {}), rec["rules"].get(base, {})
                    if not a or not b or a.get("failed") or b.get("failed"):
                        continue
                    rel_abs.append(a["abs_err"] / b["abs_err"] - 1)
                    rel_kl.append(a["egkl"] / b["egkl"] - 1)
                    wins_kl += a["egkl"] < b["egkl"]
                    wins_abs += a["abs_err"] < b["abs_err"]
                paired[f"{base}|{r}|{n}"] = {
                    "base": base,
                    "rule": r,
                    "n": n,
                    "cases": len(rel_kl),
                    "mean_rel_abs_err": float(np.mean(rel_abs)),
                    "mean_rel_egkl": float(np.mean(rel_kl)),
                    "abs_err_better_in": int(wins_abs),
                    "egkl_better_in": int(wins_kl),
                }
    return {"per_design": per, "overall": overall, "paired": paired}


def write_markdown(res: dict, path: Path) -> None:
    meta, summ = res["meta"], res["summary"]
    rules = list(res["rules"])
    sizes = sorted({v["n"] for v in summ["overall"].values()})
    L = [
        "# Default weight grid: how many weight intervals M?",
        "",
        f"Generated by `python benchmarks/default_weight_grid.py {' '.join(meta['argv'])}`".rstrip()
        + f" on {meta['date']} ({meta['cpus']} shared CPUs, load {meta['load_start']}"
        f" -> {meta['load_end']}, BLAS threads 1, {meta['total_s']:.0f} s).  scikit-learn "
        f"{meta['sklearn']}."
        + (
            "  Merged from the runs `"
            + "`, `".join(" ".join(a) for a in meta["merged_argv"])
            + "` (the same results as one run; split to use both cores)."
            if meta.get("merged_argv")
            else ""
        ),
        "",
        f"Designs {', '.join(f'`{d}`' for d in meta['designs'])}; n in {meta['sizes']}; seeds "
        f"{meta['seeds']}; test sets of {meta['n_test']} points.  Pipeline of "
        "`WeightedSVMClassifier()`: EGKL tuning over the "
        "default 7 lambdas x 6 sigmas by stratified 5-fold CV (n <= 500) or a 70/30 split "
        "(n > 500), then the ladder on all n with the tuned C kept, count rule; M = M(n).  "
        "`|p_hat - p|` is the mean absolute error per test point; EGKL the mean KL divergence "
        "from the truth; cost is the number of weighted fits and their summed CPU seconds "
        "(tuning + final fit).  The bracket width 1/M alone puts about 1/(4M) under |p_hat - p| "
        "(0.0125 for M = 20, 0.00625 for M = 40, 0.0031 for M = 80).",
        "",
        (
            f"Identity check ({res['identity']['case']}): the shared-fit evaluation and "
            "`WeightedSVMClassifier` with the rule patched in give the same test error for the "
            f"rules {', '.join(res['identity']['rules'])} (largest difference "
            f"{res['identity']['max_abs_diff']:.1e})."
            if res.get("identity")
            else "Identity check: not run."
        ),
        "",
        "## Averaged over the designs",
        "",
    ]
    for n in sizes:
        L += [
            f"### n = {n}",
            "",
            "| rule | M | mean abs err x100 | EGKL x100 | weighted fits | fit CPU s |",
            "|---|---|---|---|---|---|",
        ]
        rows = [summ["overall"][f"{n}|{r}"] for r in rules if f"{n}|{r}" in summ["overall"]]
        best_a = min(v["abs_err"] for v in rows)
        best_k = min(v["egkl"] for v in rows)
        for v in rows:
            a = f"{100 * v['abs_err']:.2f}" + (" **" if v["abs_err"] == best_a else "")
            k = f"{100 * v['egkl']:.2f}" + (" **" if v["egkl"] == best_k else "")
            L.append(
                f"| {v['rule']} | {v['M']} | {a} | {k} | {v['n_fits']:.0f} | {v['fit_cpu_s']:.1f} |"
            )
        L.append("")
    for base in PAIRED_BASES:
        if f"{base}|{base}|all" not in summ["paired"]:
            continue
        L += [
            f"## Paired against {base}",
            "",
            "Per case (design x seed), the relative change in error against the reference "
            "rule, averaged; negative is better; then in how many cases the rule's error was "
            "lower (abs err / EGKL).",
            "",
            "| rule | " + " | ".join(f"n = {n}" for n in sizes) + " | all |",
            "|---|" + "---|" * (len(sizes) + 1),
        ]
        for r in rules:
            cells = []
            for n in [*sizes, "all"]:
                v = summ["paired"].get(f"{base}|{r}|{n}")
                cells.append(
                    "-"
                    if v is None
                    else f"{100 * v['mean_rel_abs_err']:+.1f}% / "
                    f"{100 * v['mean_rel_egkl']:+.1f}%; {v['abs_err_better_in']}/"
                    f"{v['egkl_better_in']} of {v['cases']}"
                )
            L.append(f"| {r} | " + " | ".join(cells) + " |")
        L.append("")
    L += ["## Per design (means over seeds ± standard error, x100; abs err / EGKL)", ""]
    designs = meta["designs"]
    for n in sizes:
        L += [
            f"### n = {n}",
            "",
            "| rule | " + " | ".join(designs) + " |",
            "|---|" + "---|" * len(designs),
        ]
        for r in rules:
            cells = []
            for d in designs:
                v = summ["per_design"].get(f"{d}|{n}|{r}")
                cells.append(
                    "-"
                    if v is None
                    else f"{100 * v['abs_err']:.2f} ± {100 * v['abs_err_se']:.2f} / "
                    f"{100 * v['egkl']:.2f}"
                )
            L.append(f"| {r} | " + " | ".join(cells) + " |")
        L.append("")
    if res.get("choice"):
        L += ["## Choice", "", *res["choice"], ""]
    path.write_text("\n".join(L) + "\n")


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return []


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="n in 100, 400; 2 seeds")
    ap.add_argument("--sizes", type=int, nargs="+", default=None)
    ap.add_argument("--seeds", type=int, default=None, help="seeds 0 .. S-1")
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS))
    ap.add_argument("--rules", nargs="+", default=None, help="subset of rule names")
    ap.add_argument("--n-test", type=int, default=5000)
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--no-identity", action="store_true", help="skip the identity check")
    ap.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        default=None,
        help="merge the JSON of runs over disjoint sizes into --out-dir",
    )
    ap.add_argument(
        "--from-json",
        type=Path,
        default=None,
        help="only rewrite the markdown (and the choice) from an earlier run's JSON",
    )
    args = ap.parse_args(argv)
    if args.merge:
        runs = [json.loads(p.read_text()) for p in args.merge]
        merged_argv = [r["meta"]["argv"] for r in runs]
        res = runs[0]
        for other in runs[1:]:
            res["records"] += other["records"]
            res["meta"]["sizes"] = sorted(set(res["meta"]["sizes"]) | set(other["meta"]["sizes"]))
            res["meta"]["designs"] += [
                d for d in other["meta"]["designs"] if d not in res["meta"]["designs"]
            ]
            res["meta"]["total_s"] += other["meta"]["total_s"]
            if not res.get("identity") or not res["identity"].get("rules"):
                res["identity"] = other["identity"]
        res["meta"]["argv"] = ["--merge", *(str(p) for p in args.merge)]
        res["meta"]["merged_argv"] = merged_argv
        args.out_dir.mkdir(parents=True, exist_ok=True)
        args.from_json = args.out_dir / "default_weight_grid.json"
        args.from_json.write_text(json.dumps(res, indent=1))
    if args.from_json is not None:
        res = json.loads(args.from_json.read_text())
        res["summary"] = summarise(res["records"], {r: RULES[r] for r in res["rules"]})
        res["choice"] = CHOICE
        args.from_json.write_text(json.dumps(res, indent=1))
        write_markdown(res, args.from_json.with_suffix(".md"))
        return 0
    if args.sizes is None:
        args.sizes = [100, 400] if args.quick else [100, 400, 1000]
    if args.seeds is None:
        args.seeds = 2 if args.quick else 3
    rules = RULES if args.rules is None else {r: RULES[r] for r in args.rules}
    if "max(floor(sqrt n), 20)" not in rules:
        rules["max(floor(sqrt n), 20)"] = RULES["max(floor(sqrt n), 20)"]
    start = time.perf_counter()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "argv": sys.argv[1:],
        "cpus": os.cpu_count(),
        "load_start": _load(),
        "python": platform.python_version(),
        "sklearn": sklearn.__version__,
        "designs": args.designs,
        "sizes": args.sizes,
        "seeds": args.seeds,
        "n_test": args.n_test,
        "current_default_n_weights": {n: default_n_weights(n) for n in args.sizes},
    }
    records = []
    with threadpool_limits(1):
        ident = {} if args.no_identity else identity_check(rules, args.n_test)
        if ident:
            print(f"identity check: max diff {ident['max_abs_diff']:.1e}", flush=True)
        for n in args.sizes:
            for design in args.designs:
                for seed in range(args.seeds):
                    rec = run_case(design, n, seed, rules, args.n_test)
                    records.append(rec)
                    best = min(rec["rules"].items(), key=lambda kv: kv[1].get("egkl", np.inf))
                    print(
                        f"{design} n={n} seed={seed}: best EGKL {best[0]} "
                        f"({time.perf_counter() - start:.0f} s)",
                        flush=True,
                    )
    meta["load_end"] = _load()
    meta["total_s"] = time.perf_counter() - start
    res = {
        "meta": meta,
        "rules": {r: [f(n) for n in args.sizes] for r, f in rules.items()},
        "identity": ident,
        "records": records,
        "summary": summarise(records, rules),
    }
    res["choice"] = CHOICE
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "default_weight_grid.json").write_text(json.dumps(res, indent=1))
    write_markdown(res, args.out_dir / "default_weight_grid.md")
    print(f"wrote {args.out_dir / 'default_weight_grid.md'} in {meta['total_s']:.0f} s")
    return 0


#: The decision, written after reading the measurements (kept in the results file).
CHOICE: list[str] = [
    "**Chosen: M = max(floor(2 sqrt n), 40)** (`wsvmgui.ladder.tuning.default_n_weights`): "
    "40 up to n = 400, 44 at n = 500, 63 at n = 1000, 89 at n = 2000.",
    "",
    "- Accuracy.  In the paired comparison it is the best of the ten rules over all 27 "
    "cases: against the papers' floor(sqrt n) it lowers the mean |p_hat - p| by 8.5% and "
    "the EGKL by 13% (lower error in 26 and 24 of 27 cases), against the previous default "
    "max(floor(sqrt n), 20) by 6% and 10% (23 and 24 of 27).  The gain is largest where "
    "the old grids were coarse relative to the attainable accuracy (n = 100-400: M = 40 "
    "instead of 10-20).",
    "- Diminishing returns.  A fixed M = 80 is as accurate at n = 100 and 400 (within 1%) "
    "at twice the cost, and 1-3% better at n = 1000 (EGKL lower in 9 of 9 cases there) at "
    "1.3x the cost of M = 63; so finer grids still pay a little as n grows, which the "
    "2 sqrt(n) growth follows.  Coarser grids (M = 10, floor(sqrt n / 2)) are clearly "
    "worse from n = 400 on (+16% to +42% abs error).",
    "- Cost.  Fits are linear in M: about twice those of the previous default (n = 400: "
    "8229 vs 4009 weighted fits in the default 5-fold CV tuning; n = 1000: 2666 vs 1290 "
    "with the split).  See ladder_speed.md for absolute times (tuned fit at n = 2000: "
    "3784 weighted fits).",
    "- Not measured: n > 1000 (the rule keeps growing like 2 sqrt(n): 126 at n = 4000; if "
    "large-n time matters more than the last percent, a cap such as 80-100 is the "
    "natural option), other kernels, K > 2 (the multiclass schemes use the same default "
    "per binary ladder, so their cost grows alike).",
    "- The 1/(4M) bracket floor (0.006 at M = 40, 0.004 at M = 63) is well below the "
    "measured per-point errors (0.02-0.10), yet finer grids help more than that floor "
    "explains; a plausible reason (not measured separately) is that the EGKL of the "
    "tuning folds separates lambda and sigma better when the estimates are less "
    "quantised.",
]


if __name__ == "__main__":
    raise SystemExit(main())
