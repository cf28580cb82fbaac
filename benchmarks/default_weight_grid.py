"""Choosing the default number of weight intervals M by measurement.

For the binary designs ``wang2008_ex1``, ``wuliu2011_ex1`` and ``wuliu2011_ex6``, training
sizes n in {100, 400, 1000} and a few seeds, this runs the default pipeline of
``WeightedSVMClassifier()`` (stratified 70/30 tuning split with ``random_state=0``, EGKL
tuning over the default lambda and sigma grids, refit on all n points, count rule) with
the weight grid ``m / M`` given by each candidate rule ``M(n)``, and scores the estimate
against the true probabilities on a large test set (5000 points):

* mean |p_hat - p| per point (= L1 / 2 for two classes), and EGKL (KL divergence from the
  truth, METHODS section 7);
* cost: the number of weighted fits and their summed CPU time.

Like the estimator, every rule is evaluated at the tuning-split size during tuning and at
the full size for the refit.  Each weighted fit depends only on (data, sigma, lambda,
pi), so fits are shared between rules whose grids contain the same weight; the answers
are exactly those of separate ``WeightedSVMClassifier`` runs (checked at the start of a
run for every rule on one small case: ``identity check``), and a rule's cost is the
summed CPU time of the fits it uses.

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

import wsvmgui.core.binary as binary_mod
from wsvmgui.core.binary import WeightedSVMClassifier
from wsvmgui.core.designs import simulate
from wsvmgui.core.errors import SolverError
from wsvmgui.core.kernels import Kernel, default_sigma_grid
from wsvmgui.core.ladder import probabilities_from_signs, weight_grid
from wsvmgui.core.metrics import egkl
from wsvmgui.core.tuning import (
    default_lambda_grid,
    default_n_weights,
    egkl_binary,
    stratified_split,
)
from wsvmgui.core.wsvm import fit_weighted_svm

RESULTS = Path(__file__).resolve().parent / "results"
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex6")
TUNE_FRACTION = 0.3  # WeightedSVMClassifier default
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


def run_case(design: str, n: int, seed: int, rules: dict, n_test: int) -> dict:
    """Every rule on one (design, n, seed); the estimator's default pipeline."""
    data = simulate(design, n, seed=seed)
    test = simulate(design, n_test, seed=10_000 + seed)
    X, y = data.X, data.y.astype(float)
    X_tr, X_tu, y_tr, y_tu = stratified_split(X, y, TUNE_FRACTION, SPLIT_SEED)
    n_tr = y_tr.size
    lambdas = default_lambda_grid(n_tr)
    sigmas = default_sigma_grid(X_tr, y_tr, seed=SPLIT_SEED)
    grids_tune = {r: weight_grid(f(n_tr)) for r, f in rules.items()}
    scores = {r: np.full((lambdas.size, sigmas.size), np.inf) for r in rules}
    cost = dict.fromkeys(rules, 0.0)
    n_fits = dict.fromkeys(rules, 0)
    for j, sig in enumerate(sigmas):
        kern = Kernel("rbf", sigma=float(sig))
        K, K_tu = kern(X_tr), kern(X_tu, X_tr)
        for i, lam in enumerate(lambdas):
            cache = FitCache(K, y_tr, float(lam))
            for r, w in grids_tune.items():
                D = cache.ladder_decision(w, K_tu)
                cost[r] += cache.cost(w)
                n_fits[r] += w.size
                if D is not None:
                    p = probabilities_from_signs(D > 0, w).p
                    scores[r][i, j] = egkl_binary(p, y_tu)
    # Refit on all points at each rule's tuned cell (fits shared between rules per cell).
    X_fit, y_fit = np.vstack([X_tr, X_tu]), np.concatenate([y_tr, y_tu])
    refit_caches: dict[tuple[int, int], tuple[FitCache, np.ndarray]] = {}
    out = {"design": design, "n": n, "seed": seed, "n_tune_split": n_tr, "rules": {}}
    for r, f in rules.items():
        s = scores[r]
        best = int(np.flatnonzero(s.ravel() == s.min())[0])  # ties: first, as tune_ladder
        i, j = np.unravel_index(best, s.shape)
        if (i, j) not in refit_caches:
            kern = Kernel("rbf", sigma=float(sigmas[j]))
            refit_caches[(i, j)] = (
                FitCache(kern(X_fit), y_fit, float(lambdas[i])), kern(test.X, X_fit)
            )
        cache, K_te = refit_caches[(i, j)]
        w = weight_grid(f(n))
        D = cache.ladder_decision(w, K_te)
        if D is None:
            out["rules"][r] = {"failed": True}
            continue
        p_hat = probabilities_from_signs(D > 0, w).p
        P_hat = np.column_stack([1 - p_hat, p_hat])
        out["rules"][r] = {
            "M_tune": int(f(n_tr)), "M": int(f(n)),
            "abs_err": float(np.mean(np.abs(p_hat - test.p[:, 1]))),
            "egkl": egkl(P_hat, test.p),
            "tune_egkl": float(s.min()), "lambda": float(lambdas[i]), "sigma": float(sigmas[j]),
            "n_fits": n_fits[r] + w.size, "fit_cpu_s": cost[r] + cache.cost(w),
        }
    return out


def identity_check(rules: dict, n_test: int) -> dict:
    """The shared-fit evaluation equals WeightedSVMClassifier with the rule patched in."""
    design, n, seed = "wuliu2011_ex1", 100, 0
    rules = {r: rules[r] for r in IDENTITY_RULES if r in rules} or rules
    mine = run_case(design, n, seed, rules, n_test)
    test = simulate(design, n_test, seed=10_000 + seed)
    data = simulate(design, n, seed=seed)
    diffs, walls = {}, {}
    for r, f in rules.items():
        with mock.patch.object(binary_mod, "default_n_weights", f):
            t0 = time.perf_counter()
            clf = WeightedSVMClassifier().fit(data.X, data.y)
            walls[r] = time.perf_counter() - t0
        p = clf.predict_proba(test.X)[:, 1]
        diffs[r] = float(np.mean(np.abs(p - test.p[:, 1])) - mine["rules"][r]["abs_err"])
    return {"case": f"{design}, n={n}, seed={seed}", "abs_err_diff": diffs,
            "max_abs_diff": float(max(abs(d) for d in diffs.values())), "wall_s": walls}


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
            "design": d, "n": n, "rule": r, "M": vs[0]["M"], "seeds": len(vs),
            "abs_err": float(np.mean([v["abs_err"] for v in vs])),
            "abs_err_se": float(np.std([v["abs_err"] for v in vs], ddof=1) / np.sqrt(len(vs)))
            if len(vs) > 1 else float("nan"),
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
                "n": n, "rule": r, "M": rows[0]["M"],
                "abs_err": float(np.mean([v["abs_err"] for v in rows])),
                "egkl": float(np.mean([v["egkl"] for v in rows])),
                "n_fits": float(np.mean([v["n_fits"] for v in rows])),
                "fit_cpu_s": float(np.mean([v["fit_cpu_s"] for v in rows])),
            }
    # Paired comparison with the current default: per case, relative change in error.
    paired = {}
    base = "max(floor(sqrt n), 20)"
    for r in rules:
        rel_abs, rel_kl, wins = [], [], 0
        for rec in records:
            a, b = rec["rules"].get(r, {}), rec["rules"].get(base, {})
            if a.get("failed") or b.get("failed") or not a or not b:
                continue
            rel_abs.append(a["abs_err"] / b["abs_err"] - 1)
            rel_kl.append(a["egkl"] / b["egkl"] - 1)
            wins += a["egkl"] < b["egkl"]
        paired[r] = {
            "mean_rel_abs_err": float(np.mean(rel_abs)), "mean_rel_egkl": float(np.mean(rel_kl)),
            "egkl_better_than_current_in": int(wins), "cases": len(rel_kl),
        }
    return {"per_design": per, "overall": overall, "paired_vs_current": paired}


def write_markdown(res: dict, path: Path) -> None:
    meta, summ = res["meta"], res["summary"]
    rules = list(res["rules"])
    sizes = sorted({v["n"] for v in summ["overall"].values()})
    L = [
        "# Default weight grid: how many weight intervals M?", "",
        f"Generated by `python benchmarks/default_weight_grid.py {' '.join(meta['argv'])}`"
        .rstrip() + f" on {meta['date']} ({meta['cpus']} shared CPUs, load {meta['load_start']}"
        f" -> {meta['load_end']}, BLAS threads 1, {meta['total_s']:.0f} s).  scikit-learn "
        f"{meta['sklearn']}.", "",
        f"Designs {', '.join(f'`{d}`' for d in meta['designs'])}; n in {meta['sizes']}; seeds "
        f"{meta['seeds']}; test sets of {meta['n_test']} points.  Pipeline of "
        "`WeightedSVMClassifier()`: 70/30 stratified tuning split, EGKL tuning over the "
        "default 7 lambdas x 6 sigmas, refit on all n, count rule.  The rule M(n) is "
        "applied at the split size for tuning and at n for the refit, as the estimator does.  "
        "`|p_hat - p|` is the mean absolute error per test point; EGKL the mean KL divergence "
        "from the truth; cost is the number of weighted fits and their summed CPU seconds "
        "(tuning + refit).  The bracket width 1/M alone puts about 1/(4M) under |p_hat - p| "
        "(0.0125 for M = 20, 0.00625 for M = 40, 0.0031 for M = 80).", "",
        f"Identity check ({res['identity']['case']}): the shared-fit evaluation and "
        "`WeightedSVMClassifier` with the rule patched in give the same test error for the "
        f"rules {', '.join(res['identity']['abs_err_diff'])} (largest difference "
        f"{res['identity']['max_abs_diff']:.1e}).", "",
        "## Averaged over the three designs", "",
    ]
    for n in sizes:
        L += [f"### n = {n}", "",
              "| rule | M | mean abs err x100 | EGKL x100 | weighted fits | fit CPU s |",
              "|---|---|---|---|---|---|"]
        rows = [summ["overall"][f"{n}|{r}"] for r in rules if f"{n}|{r}" in summ["overall"]]
        best_a = min(v["abs_err"] for v in rows)
        best_k = min(v["egkl"] for v in rows)
        for v in rows:
            a = f"{100 * v['abs_err']:.2f}" + (" **" if v["abs_err"] == best_a else "")
            k = f"{100 * v['egkl']:.2f}" + (" **" if v["egkl"] == best_k else "")
            L.append(f"| {v['rule']} | {v['M']} | {a} | {k} | {v['n_fits']:.0f} "
                     f"| {v['fit_cpu_s']:.1f} |")
        L.append("")
    L += ["## Paired against the current default max(floor(sqrt n), 20)", "",
          "Mean over all cases (design x n x seed) of the relative change in error; "
          "negative is better.", "",
          "| rule | rel. change abs err | rel. change EGKL | EGKL better in |",
          "|---|---|---|---|"]
    for r in rules:
        v = summ["paired_vs_current"][r]
        L.append(f"| {r} | {100 * v['mean_rel_abs_err']:+.1f}% | {100 * v['mean_rel_egkl']:+.1f}% "
                 f"| {v['egkl_better_than_current_in']} / {v['cases']} |")
    L += ["", "## Per design (means over seeds, x100; abs err / EGKL)", ""]
    designs = meta["designs"]
    for n in sizes:
        L += [f"### n = {n}", "", "| rule | " + " | ".join(designs) + " |",
              "|---|" + "---|" * len(designs)]
        for r in rules:
            cells = []
            for d in designs:
                v = summ["per_design"].get(f"{d}|{n}|{r}")
                cells.append("-" if v is None else
                             f"{100 * v['abs_err']:.2f} ± {100 * v['abs_err_se']:.2f} / "
                             f"{100 * v['egkl']:.2f}")
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
    ap.add_argument("--from-json", type=Path, default=None,
                    help="only rewrite the markdown (and the choice) from an earlier run's JSON")
    args = ap.parse_args(argv)
    if args.from_json is not None:
        res = json.loads(args.from_json.read_text())
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
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "argv": sys.argv[1:],
        "cpus": os.cpu_count(), "load_start": _load(), "python": platform.python_version(),
        "sklearn": sklearn.__version__, "designs": args.designs, "sizes": args.sizes,
        "seeds": args.seeds, "n_test": args.n_test,
        "current_default_n_weights": {n: default_n_weights(n) for n in args.sizes},
    }
    records = []
    with threadpool_limits(1):
        ident = identity_check(rules, args.n_test)
        print(f"identity check: max diff {ident['max_abs_diff']:.1e}", flush=True)
        for n in args.sizes:
            for design in args.designs:
                for seed in range(args.seeds):
                    rec = run_case(design, n, seed, rules, args.n_test)
                    records.append(rec)
                    best = min(rec["rules"].items(), key=lambda kv: kv[1].get("egkl", np.inf))
                    print(f"{design} n={n} seed={seed}: best EGKL {best[0]} "
                          f"({time.perf_counter() - start:.0f} s)", flush=True)
    meta["load_end"] = _load()
    meta["total_s"] = time.perf_counter() - start
    res = {"meta": meta, "rules": {r: [f(n) for n in args.sizes] for r, f in rules.items()},
           "identity": ident, "records": records, "summary": summarise(records, rules)}
    res["choice"] = CHOICE
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "default_weight_grid.json").write_text(json.dumps(res, indent=1))
    write_markdown(res, args.out_dir / "default_weight_grid.md")
    print(f"wrote {args.out_dir / 'default_weight_grid.md'} in {meta['total_s']:.0f} s")
    return 0


#: The decision, written after reading the measurements (kept in the results file).
CHOICE: list[str] = []


if __name__ == "__main__":
    raise SystemExit(main())
