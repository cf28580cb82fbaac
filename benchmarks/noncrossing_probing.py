"""Reproductions for issue 6: non-crossing ladder, preconditioned SVM and Probing.

Writes ``benchmarks/results/noncrossing_probing.{md,json}``:

1. Wu & Liu (2011) Example 1 (linear, n = 100, pi_k = 0.01 (k - 1), k = 1..101, lambda per
   weight by the weighted hinge loss on a tuning set of size n): crossings and test GKL of
   the independent (Wang et al.) and the non-crossing ladder.
2. Examples 2 (linear) and 6 (RBF): test error of the plain SVM and of the preconditioned
   SVM at the paper's levels (pi_k = 0.05 (k - 1) ladder, tuning set of size n, test set of
   size 100 n).
3. Probing on Wu & Liu Example 1 with n = 300: squared error of a tree learner against the
   number of thresholds, and an SVM learner against the weighted-SVM ladder with the same
   C, sigma and number of classifiers.
4. Time of the non-crossing RBF ladder at n = 100, 200, 400 next to the independent
   ladder's (same run, same lambda and sigma, M = 20).

Usage: ``python benchmarks/noncrossing_probing.py [--seeds 20] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from wsvmgui.estimators.preconditioned import PreconditionedSVC
from wsvmgui.estimators.probing import ProbingClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import egkl, l2_error
from wsvmgui.ladder.crossing import crossing_diagnostics
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.noncrossing import fit_noncrossing_ladder
from wsvmgui.ladder.precondition import DEFAULT_PT_GRID
from wsvmgui.ladder.rules import probabilities_from_signs
from wsvmgui.ladder.splits import with_tuning_set
from wsvmgui.ladder.tuning import default_lambda_grid
from wsvmgui.solvers.kernels import Kernel, median_between_class_distance

OUT = Path(__file__).resolve().parent / "results"


def _pm(y):
    return np.where(np.asarray(y) > 0, 1.0, -1.0)


def independent_ladder_hinge(X, y, weights, lambdas, kernel, X_tu, y_tu):
    """Wang et al.'s ladder with lambda per weight by the tuning hinge loss."""
    K, K_tu = kernel(X), kernel(X_tu, X)
    coef, icpt = [], []
    for pi in weights:
        best = None
        for lam in lambdas:
            lad = fit_ladder(K, y, np.array([pi]), float(lam))
            f = K_tu @ lad.coef[0] + lad.intercept[0]
            S = np.where(y_tu > 0, 1 - pi, pi)
            score = float(np.mean(S * np.maximum(1 - y_tu * f, 0)))
            if best is None or score < best[0] - 1e-12:
                best = (score, lad.coef[0], lad.intercept[0])
        coef.append(best[1])
        icpt.append(best[2])
    coef, icpt = np.array(coef), np.array(icpt)
    return lambda Z: kernel(Z, X) @ coef.T + icpt[None, :]


def binary_gkl(p_hat, p_true):
    """Wu & Liu's eGKL: mean two-sided binary KL (= EGKL over both class columns)."""
    return egkl(np.column_stack([1 - p_hat, p_hat]), np.column_stack([1 - p_true, p_true]))


def example1(seeds: int) -> dict:
    weights = np.arange(1, 100) / 100
    kern = Kernel("linear")
    rows = []
    for seed in range(seeds):
        tr = simulate("wuliu2011_ex1", 100, seed)
        tu = simulate("wuliu2011_ex1", 100, 10_000 + seed)
        te = simulate("wuliu2011_ex1", 10_000, 20_000 + seed)
        y, y_tu = _pm(tr.y), _pm(tu.y)
        lambdas = default_lambda_grid(100)
        t0 = time.perf_counter()
        ind = independent_ladder_hinge(tr.X, y, weights, lambdas, kern, tu.X, y_tu)
        t1 = time.perf_counter()
        nc = fit_noncrossing_ladder(
            tr.X, y, weights, 0.0, kern, lam_grid=lambdas, X_tune=tu.X, y_tune=y_tu
        )
        t2 = time.perf_counter()
        row = {
            "seed": seed,
            "t_independent": t1 - t0,
            "t_noncrossing": t2 - t1,
            "n_qp": nc.diagnostics["n_qp"],
            "max_gap": nc.diagnostics["max_duality_gap"],
        }
        for name, dec in (("independent", ind), ("noncrossing", nc.decision_at)):
            cr = crossing_diagnostics(
                dec, tr.X, weights, space="input", n_samples=20_000, seed=seed
            )
            for part, d in (("train", tr), ("test", te)):
                p = probabilities_from_signs(dec(d.X) > 0, weights, "count").p
                row[f"{name}_{part}_gkl"] = binary_gkl(p, d.p[:, 1])
                # Wang et al.'s own reading of the ladder (the paper's comparison).
                p = probabilities_from_signs(dec(d.X) > 0, weights, "extreme").p
                row[f"{name}_{part}_gkl_extreme"] = binary_gkl(p, d.p[:, 1])
                row[f"{name}_{part}_nonmonotone"] = float(
                    np.mean(~probabilities_from_signs(dec(d.X) > 0, weights).monotone)
                )
            row[f"{name}_crossing_pairs"] = cr.n_crossing_pairs
            row[f"{name}_hull_nonmonotone"] = cr.share_nonmonotone
        rows.append(row)
        print(
            f"ex1 seed {seed}: ind pairs {row['independent_crossing_pairs']}, nc pairs "
            f"{row['noncrossing_crossing_pairs']}, test GKL {row['independent_test_gkl']:.4f}"
            f" vs {row['noncrossing_test_gkl']:.4f}",
            flush=True,
        )
    return {"rows": rows}


def precondition(design: str, kernel: str, seeds: int) -> dict:
    rows = []
    for seed in range(seeds):
        tr = simulate(design, 100, seed)
        tu = simulate(design, 100, 10_000 + seed)
        te = simulate(design, 10_000, 20_000 + seed)
        t0 = time.perf_counter()
        X, y, cv = with_tuning_set(tr.X, tr.y, tu.X, tu.y)
        m = PreconditionedSVC(
            pt=None, pt_grid=DEFAULT_PT_GRID, kernel=kernel, n_weights=20, cv=cv, refit=False
        ).fit(X, y)
        row = {
            "seed": seed,
            "seconds": time.perf_counter() - t0,
            "chosen_pt": m.pt_,
            "sigma": m.sigma_,
        }
        for pt in m.level_svms_:
            pred = np.where(m.svm_decision(te.X, pt) > 0, 1, -1)
            row[f"err_{pt:.2f}"] = float(np.mean(pred != te.y))
            row[f"relabeled_{pt:.2f}"] = int(
                np.sum((m.p_train_ < pt) & (tr.y > 0) | (m.p_train_ > 1 - pt) & (tr.y < 0))
            )
        row["err_tuned"] = float(np.mean(m.predict(te.X) != te.y))
        rows.append(row)
        print(
            f"{design} seed {seed}: plain {row['err_0.00']:.4f}, tuned pt={m.pt_} "
            f"{row['err_tuned']:.4f}",
            flush=True,
        )
    return {"rows": rows}


def probing(seeds: int) -> dict:
    Ts = [1, 3, 7, 15, 31]
    tree_rows, svm_rows = [], []
    for seed in range(seeds):
        tr = simulate("wuliu2011_ex1", 300, seed)
        te = simulate("wuliu2011_ex1", 5000, 20_000 + seed)
        row = {"seed": seed}
        for T in Ts:
            m = ProbingClassifier("tree", n_thresholds=T, random_state=seed).fit(tr.X, tr.y)
            row[f"L2_T{T}"] = l2_error(m.predict_proba(te.X), te.p)
        tree_rows.append(row)
        sigma = median_between_class_distance(tr.X, tr.y)
        lam = default_lambda_grid(300)[3]  # C = 3
        C = 1 / (2 * 300 * lam)
        kern = Kernel("rbf", sigma=sigma)
        y = _pm(tr.y)
        lad = fit_ladder(kern(tr.X), y, np.arange(1, 20) / 20, lam)
        p_lad = lad.estimate(kern(te.X, tr.X)).p
        m = ProbingClassifier(
            "svm", {"C": C, "gamma": 1 / sigma**2}, n_thresholds=19, random_state=seed
        ).fit(tr.X, tr.y)
        svm_rows.append(
            {
                "seed": seed,
                "ladder_L2": l2_error(np.column_stack([1 - p_lad, p_lad]), te.p),
                "probing_svm_L2": l2_error(m.predict_proba(te.X), te.p),
                "probing_svm_ce_L2": l2_error(
                    ProbingClassifier(
                        "svm",
                        {"C": C, "gamma": 1 / sigma**2},
                        n_thresholds=19,
                        loss="cross_entropy",
                        random_state=seed,
                    )
                    .fit(tr.X, tr.y)
                    .predict_proba(te.X),
                    te.p,
                ),
            }
        )
        print(
            f"probing seed {seed}: tree {[round(row[f'L2_T{T}'], 4) for T in Ts]}, svm "
            f"{svm_rows[-1]['probing_svm_L2']:.4f} vs ladder {svm_rows[-1]['ladder_L2']:.4f}",
            flush=True,
        )
    return {"tree": tree_rows, "svm": svm_rows, "Ts": Ts}


def timing(reps: int) -> dict:
    rows = []
    weights = np.arange(1, 20) / 20
    for n in (100, 200, 400):
        tr = simulate("wuliu2011_ex1", n, 0)
        y = _pm(tr.y)
        kern = Kernel("rbf", sigma=median_between_class_distance(tr.X, tr.y))
        lam = default_lambda_grid(n)[4]  # C = 10
        t_ind, t_nc = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            fit_ladder(kern(tr.X), y, weights, lam)
            t1 = time.perf_counter()
            nc = fit_noncrossing_ladder(tr.X, y, weights, lam, kern)
            t2 = time.perf_counter()
            t_ind.append(t1 - t0)
            t_nc.append(t2 - t1)
        row = {
            "n": n,
            "independent_s": float(np.median(t_ind)),
            "noncrossing_s": float(np.median(t_nc)),
            "n_qp": nc.diagnostics["n_qp"],
            "constraints": ",".join(nc.diagnostics["constraints_used"]),
            "max_rows": nc.diagnostics["max_rows"],
            "feature_crossings": nc.crossing().n_crossing_pairs,
        }
        row["ratio"] = row["noncrossing_s"] / row["independent_s"]
        rows.append(row)
        print(f"timing n={n}: {row}", flush=True)
    return {"rows": rows}


def _mean_se(values):
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0


def write(results: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "noncrossing_probing.json").write_text(json.dumps(results, indent=1))
    lines = [
        "# Non-crossing ladder, preconditioned SVM, Probing",
        "",
        f"Seeds: {results['seeds']}; wall time {results['seconds']:.0f} s.",
        "",
    ]
    ex1 = results["example1"]["rows"]
    lines += [
        "## Wu & Liu Example 1 (linear, n = 100, 99 weights, lambda per weight by hinge)",
        "",
        "| ladder | train GKL | test GKL | seeds with crossings | crossing pairs "
        "(mean) | hull points non-monotone | test points non-monotone |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in ("independent", "noncrossing"):
        tr_m, tr_s = _mean_se([r[f"{name}_train_gkl"] for r in ex1])
        te_m, te_s = _mean_se([r[f"{name}_test_gkl"] for r in ex1])
        crossing = sum(r[f"{name}_crossing_pairs"] > 0 for r in ex1)
        lines.append(
            f"| {name} | {tr_m:.4f} ({tr_s:.4f}) | {te_m:.4f} ({te_s:.4f}) | {crossing}/{len(ex1)}"
            f" | {np.mean([r[f'{name}_crossing_pairs'] for r in ex1]):.1f} | "
            f"{np.mean([r[f'{name}_hull_nonmonotone'] for r in ex1]):.4f} | "
            f"{np.mean([r[f'{name}_test_nonmonotone'] for r in ex1]):.4f} |"
        )
    tr_m, tr_s = _mean_se([r["independent_train_gkl_extreme"] for r in ex1])
    te_m, te_s = _mean_se([r["independent_test_gkl_extreme"] for r in ex1])
    lines.append(
        f"| independent, extreme rule | {tr_m:.4f} ({tr_s:.4f}) | {te_m:.4f} ({te_s:.4f}) | | | | |"
    )
    diffs = [r["noncrossing_test_gkl"] - r["independent_test_gkl"] for r in ex1]
    dm, ds = _mean_se(diffs)
    lines += [
        "",
        "GKL is Wu & Liu's eGKL (two-sided binary KL against the true p; the count "
        "rule unless stated). Non-crossing minus independent (count rule) test GKL, "
        f"paired: {dm:+.4f} (SE {ds:.4f}).",
        "",
        "Paper (Table 1, 100 repetitions, GKL apparently x 100): non-crossing "
        "2.0639 / 2.1501, Wang et al. 2.0907 / 2.1591 (train / test).",
        "",
    ]
    for key, title, paper in (
        (
            "example2",
            "Example 2 (linear)",
            "SVM .1294; pt .10-.40: .1289 .1286 .1244 .1228 .1222 .1224 .1243",
        ),
        (
            "example6",
            "Example 6 (RBF)",
            "SVM .1302; pt .10-.40: .1295 .1287 .1267 .1263 .1256 .1267 .1283",
        ),
    ):
        rows = results[key]["rows"]
        levels = sorted(k for k in rows[0] if k.startswith("err_") and k != "err_tuned")
        lines += [
            f"## Preconditioned SVM, Wu & Liu {title}, n = 100, test 10,000",
            "",
            "| level | " + " | ".join(lv[4:] for lv in levels) + " | tuned |",
            "| --- |" + " --- |" * (len(levels) + 1),
        ]
        means = [_mean_se([r[lv] for r in rows]) for lv in levels]
        tuned = _mean_se([r["err_tuned"] for r in rows])
        lines.append(
            "| test error | "
            + " | ".join(f"{m:.4f} ({s:.4f})" for m, s in means)
            + f" | {tuned[0]:.4f} ({tuned[1]:.4f}) |"
        )
        rel = [np.mean([r[lv.replace("err_", "relabeled_")] for r in rows]) for lv in levels]
        lines.append("| relabelled (mean) | " + " | ".join(f"{v:.1f}" for v in rel) + " | |")
        best = int(np.argmin([m for m, _ in means[1:]])) + 1
        diffs = [r[levels[best]] - r["err_0.00"] for r in rows]
        dm, ds = _mean_se(diffs)
        lines += [
            "",
            f"Best level {levels[best][4:]}: error {means[best][0]:.4f} against plain "
            f"{means[0][0]:.4f} (paired difference {dm:+.4f}, SE {ds:.4f}).",
            f"Paper: {paper}.",
            "",
        ]
    pr = results["probing"]
    lines += [
        "## Probing, Wu & Liu Example 1, n = 300, test 5,000 (L2 against the truth)",
        "",
        "| tree learner, thresholds | " + " | ".join(str(T) for T in pr["Ts"]) + " |",
        "| --- |" + " --- |" * len(pr["Ts"]),
        "| L2 | "
        + " | ".join(f"{_mean_se([r[f'L2_T{T}'] for r in pr['tree']])[0]:.4f}" for T in pr["Ts"])
        + " |",
        "",
    ]
    lad = _mean_se([r["ladder_L2"] for r in pr["svm"]])
    psv = _mean_se([r["probing_svm_L2"] for r in pr["svm"]])
    pce = _mean_se([r["probing_svm_ce_L2"] for r in pr["svm"]])
    lines += [
        f"SVM learner (same C = 3 and sigma = sigma_M as the ladder, 19 classifiers): "
        f"Probing squared-loss L2 {psv[0]:.4f} ({psv[1]:.4f}), cross-entropy rule "
        f"{pce[0]:.4f} ({pce[1]:.4f}); weighted-SVM ladder M = 20: {lad[0]:.4f} "
        f"({lad[1]:.4f}); ratio {psv[0] / lad[0]:.2f}.",
        "",
    ]
    lines += [
        "## Time of the RBF ladder (19 weights, C = 10, sigma = sigma_M; median of runs)",
        "",
        "| n | independent (s) | non-crossing (s) | ratio | QP fits | constraints | "
        "max rows | feature-space crossings |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results["timing"]["rows"]:
        lines.append(
            f"| {r['n']} | {r['independent_s']:.3f} | {r['noncrossing_s']:.2f} | "
            f"{r['ratio']:.0f} | {r['n_qp']} | {r['constraints']} | {r['max_rows']} | "
            f"{r['feature_crossings']} |"
        )
    (OUT / "noncrossing_probing.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3 seeds, one timing run")
    args = parser.parse_args()
    seeds = 3 if args.quick else args.seeds
    start = time.perf_counter()
    results = {"seeds": seeds}
    results["timing"] = timing(1 if args.quick else 2)
    results["example1"] = example1(seeds)
    results["example2"] = precondition("wuliu2011_ex2", "linear", seeds)
    results["example6"] = precondition("wuliu2011_ex6", "rbf", seeds)
    results["probing"] = probing(min(seeds, 10))
    results["seconds"] = time.perf_counter() - start
    write(results)
    print((OUT / "noncrossing_probing.md").read_text())


if __name__ == "__main__":
    main()
