"""One-standard-error rules for the pair schemes' cell, replayed offline (issue 23, acc-mc3).

The multiclass default tunes every pair on 3 stratified folds over the coarse 4 x 4 grid
(C in 0.1, 1, 10, 100 x sigma in 0.25, 0.5, 1, 1.5 sigma_M) and takes the cell of the
smallest EGKL.  This study replays, from the caches of
:mod:`multiclass_sixth_study` (``--cache ... --coarse``: per draw and sub-problem, every
cell's cross-fitted estimates at the training rows on the tuning folds and its full fit's
estimates at the 10,000 test points), other rules for the choice of each pair's cell:

``min``
    The smallest EGKL (the default; replaying it reproduces the library's record).
``widest_<m>se`` / ``smoothest_<m>se``
    Among the cells whose EGKL is at most the smallest plus ``m`` times its standard
    error (the per-row EGKL terms' standard deviation over sqrt(rows), as
    :func:`wsvmgui.ladder.tuning_table.standard_error`), the widest kernel (largest
    sigma, then largest lambda) or the smoothest fit (largest lambda, then largest
    sigma) -- the binary ``tuning_rule="auto"`` and ``"one_se"``.

The chosen cell's test estimate is mapped by the sigmoid fitted to its cross-fitted
estimates (:data:`~wsvmgui.estimators.multiclass.PAIR_AUTO_MAP`) and the sub-problems are
combined as at prediction (``ties="table"``).  For the baseline schemes the tie pairs are
the default's own fits (the library borrows their cells from the chosen baseline pairs,
so a rule that moves those cells moves the tie pairs too: the replay is exact for the
pairwise scheme, K = 3, and approximate for BP1).  Ratios are to the best SVM peer of the
benchmark of record (``accuracy_vs_peers.json``) over the same seeds where it has them::

    python benchmarks/multiclass_one_se_study.py --caches /tmp/acc-mc2 /tmp/acc-mc3/n2000
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from multiclass_sixth_study import COARSE  # noqa: E402

#: rule name -> (preference or None for the minimum, multiple of the standard error).
RULES: dict[str, tuple[str | None, float]] = {
    "min": (None, 0.0),
    "widest_1se": ("widest", 1.0),
    "smoothest_1se": ("smoothest", 1.0),
    "widest_0.5se": ("widest", 0.5),
    "smoothest_0.5se": ("smoothest", 0.5),
    "widest_0.25se": ("widest", 0.25),
}
#: Rules that apply a rule of :data:`RULES` only to sub-problems of at most N rows (the
#: minimum above): ``<rule>_le<N>``.
SIZE_RULES = ["widest_1se_le500", "widest_0.5se_le500", "widest_1se_le1000"]
#: The rule of the library's ``tuning_rule="auto"`` under the pair tuning.
AUTO_RULE = "widest_1se"
OUT = ROOT / "benchmarks" / "results" / "multiclass_one_se_study"


def choose(fold_p: np.ndarray, y01: np.ndarray, rule: str) -> int:
    """Index into :data:`COARSE` of the cell ``rule`` picks.

    Parameters
    ----------
    fold_p : ndarray, shape (len(COARSE), m)
        Every cell's cross-fitted estimates at the sub-problem's m rows.
    y01 : ndarray, shape (m,)
        Their labels in {0, 1}.
    rule : str
        A key of :data:`RULES`, or of :data:`SIZE_RULES`.
    """
    from wsvmgui.ladder.search import egkl_terms
    from wsvmgui.ladder.tuning_table import standard_error

    if "_le" in rule:
        rule, most = rule.rsplit("_le", 1)
        if y01.size > int(most):
            rule = "min"

    terms = np.array([egkl_terms(p, y01) for p in fold_p])
    score = terms.mean(axis=1)
    best = int(np.argmin(score))  # first in grid order, as best_cell
    prefer, mult = RULES[rule]
    if prefer is None:
        return best
    se = standard_error(terms[best], float(terms[best].sum()), float(terms.shape[1]))
    close = np.flatnonzero(score <= score[best] + mult * se)
    # COARSE is (C index i, sigma index j); lambda decreases with i.
    if prefer == "widest":
        key = [(-COARSE[c][1], COARSE[c][0]) for c in close]
    else:
        key = [(COARSE[c][0], -COARSE[c][1]) for c in close]
    return int(close[min(range(close.size), key=key.__getitem__)])


def replay_draw(path: str, rules: list[str], side: str | None = None) -> dict[str, object]:
    """Every rule's L1 (designs) or log loss (real sets) on one cached draw, and the
    cells chosen (C index, sigma index per sub-problem)."""
    from wsvmgui.estimators.multiclass import PAIR_AUTO_MAP
    from wsvmgui.evaluation.metrics import cross_entropy, l1_error
    from wsvmgui.ladder.recalibration import fit_calibration
    from wsvmgui.ladder.rules import LadderEstimate

    z = dict(np.load(path))
    with open(Path(path).with_suffix(".pkl"), "rb") as fh:
        saved = pickle.load(fh)
    side_path = _side(path, side)
    if side_path.exists():  # completed by complete()
        z["P_auto"] = np.load(side_path)["P_auto"]
        with open(side_path.with_suffix(".pkl"), "rb") as fh:
            saved.update(pickle.load(fh))
    Xt = saved["Xt"]
    codes, fold_of = z["codes"], z["fold_of"]

    def score(proba: np.ndarray) -> float:
        if z["P"].size:
            return float(l1_error(proba, z["P"]))
        return float(cross_entropy(proba, z["yt"], np.arange(proba.shape[1])))

    res: dict[str, object] = {"record": score(z["P_def"])}
    if "P_auto" in z:
        res["library_auto"] = score(z["P_auto"])
    cells: dict[str, list] = {}
    for rule in rules:
        # the baseline schemes' tie pairs borrow the chosen cells: the fitted estimator of
        # the minimum for "min", of "auto" (where cached) for the other rules
        est = saved["est"] if rule == "min" else saved.get("est_auto", saved["est"])
        est.ties = "table"
        ests, chosen = [], []
        for s, f in enumerate(saved["est"].subproblems_.fitted):
            a, b = f.spec.positive, f.spec.negative[0]
            r = np.flatnonzero((codes == a) | (codes == b))
            r = r[np.argsort(fold_of[r], kind="stable")]  # the estimator's cross-fit order
            y = (codes[r] == a).astype(float)
            fp = np.array([z["fold_p"][s, i, j, r] for i, j in COARSE])
            c = choose(fp, y, rule)
            i, j = COARSE[c]
            tp = fit_calibration(PAIR_AUTO_MAP, fp[c], y, 0)(z["test_p"][s, i, j])
            ests.append(LadderEstimate(tp, tp, tp, np.ones(tp.size, bool)))
            chosen.append([i // 2, j // 2])
        res[rule] = score(est._combine(ests, Xt)["proba"])
        cells[rule] = chosen
        if rule != "min" and "est_auto" in saved and saved["est"].tie_pairs_ is not None:
            # the same pairs with the tie pairs of the minimum's cells
            saved["est"].ties = "table"
            res[f"{rule}_minties"] = score(saved["est"]._combine(ests, Xt)["proba"])
    res["cells"] = cells
    return res


def cache(folder: str, data: str, n: int | None, seed: int) -> None:
    """Fit the default on one draw and, per sub-problem, every coarse cell on the 3
    tuning folds; fit on all rows only the cells some rule of :data:`RULES` picks (the
    others stay NaN in ``test_p``).  The same files as ``multiclass_sixth_study.py
    --coarse``, for about half its CPU."""
    import accuracy_vs_peers as avp
    from multiclass_sixth_study import SF

    from wsvmgui.app.schemes import prepare_scheme
    from wsvmgui.estimators._base import seed_of
    from wsvmgui.ladder.final import fit_ladders
    from wsvmgui.ladder.recalibration import fold_fits
    from wsvmgui.ladder.tuning import kernel_with_sigma
    from wsvmgui.multiclass.subproblems import (
        SubproblemSet,
        as_ladder_problem,
        fitted_subproblem,
    )
    from wsvmgui.progress import ProgressTracker
    from wsvmgui.solvers.kernels import default_sigma_grid

    out = Path(folder) / f"{data}_{n}_{seed}.npz"
    if out.exists():
        return
    X, codes, Xt, yt, P, K = avp.load(data, n, seed, avp.RECORD_N_TEST)
    settings, _ = avp._settings("wsvmgui", K)
    est, X, codes = prepare_scheme(settings, X, codes)
    lib = library_fits(est, X, codes)
    est = lib["min"]
    plan = est._plan(X, codes, None)
    sig = default_sigma_grid(X, codes, SF, seed_of(est.random_state), None)
    fold_of = np.full(codes.size, -1)
    for f, (_, te) in enumerate(plan.folds):
        fold_of[te] = f
    fitted = est.subproblems_.fitted
    test_p = np.full((len(fitted), len(SF), len(SF), Xt.shape[0]), np.nan)
    fold_p = np.full((len(fitted), len(SF), len(SF), codes.size), np.nan)
    tracker = ProgressTracker(1, None, None)
    # the library's own final fits, reused where the replayed rule picks their cell
    own = {r: (lib[r].subproblems_.fitted, lib[r].subproblems_.estimates(Xt, est.rule))
           for r in ("min", "auto")}  # fmt: skip
    for s, f in enumerate(fitted):
        prob = as_ladder_problem(f.spec, codes, None)
        n_final = prob.size(plan.fit_rows, codes.size, None)
        lams = {i: 1.0 / (2.0 * n_final * c) for i, c in enumerate((0.1, 0.3, 1, 3, 10, 30, 100))}
        for i, j in COARSE:
            kernel = kernel_with_sigma(plan.kernel, sig[j])
            for (ff, _, _), (_, te) in zip(
                fold_fits(X, prob, plan.folds, kernel, lams[i], n_final, f.weights,
                          tracker=tracker),
                plan.folds,
                strict=True,
            ):  # fmt: skip
                fold_p[s, i, j, te] = ff.ladder.estimate(
                    ff.kernel(X[te], X[ff.support]), est.rule
                ).p
        a, b = f.spec.positive, f.spec.negative[0]
        r = np.flatnonzero((codes == a) | (codes == b))
        y = (codes[r] == a).astype(float)
        fp = np.array([fold_p[s, i, j, r] for i, j in COARSE])
        wanted = {COARSE[choose(fp, y, rule)] for rule in RULES}
        for r, rule in (("min", "min"), ("auto", AUTO_RULE)):
            i0, j0 = COARSE[choose(fp, y, rule)]
            g = own[r][0][s]
            if np.isclose(sig[j0], g.sigma) and np.isclose(lams[i0], g.lam, rtol=1e-9):
                test_p[s, i0, j0] = own[r][1][s].p
                wanted.discard((i0, j0))
            else:
                print(f"{out.name}: sub-problem {s}: the replayed {rule} is not the library's")
        for i, j in wanted:
            fit = fit_ladders(
                X, [prob], plan.fit_rows, plan.kernel, [(lams[i], sig[j])], [f.weights],
                tracker=tracker,
            )[0]  # fmt: skip
            one = SubproblemSet([fitted_subproblem(f.spec, fit, f.weights, None)], X)
            test_p[s, i, j] = one.estimates(Xt, est.rule)[0].p
    np.savez_compressed(
        out, test_p=test_p, fold_p=fold_p, fold_of=fold_of, codes=codes, yt=yt,
        P=np.zeros(0) if P is None else P, P_def=lib["min"].predict_proba(Xt),
        P_auto=lib["auto"].predict_proba(Xt), cpu_min=lib["cpu_min"], cpu_auto=lib["cpu_auto"],
    )  # fmt: skip
    with open(out.with_suffix(".pkl"), "wb") as fh:
        pickle.dump({"est": lib["min"], "est_auto": lib["auto"], "Xt": Xt}, fh)
    print(out.name, flush=True)


def library_fits(est, X: np.ndarray, codes: np.ndarray) -> dict:
    """The estimator ``est`` fitted with ``tuning_rule="min"`` and ``"auto"`` (keys), one
    after the other in this process, and the CPU seconds of each fit (``cpu_<rule>``)."""
    import time

    from sklearn.base import clone

    out = {}
    for r in ("min", "auto"):
        t0 = time.process_time()
        out[r] = clone(est).set_params(tuning_rule=r).fit(X, codes)
        out[f"cpu_{r}"] = time.process_time() - t0
    return out


def _side(path: str, side: str | None) -> Path:
    """Where :func:`complete` keeps the auto fit of the cached draw ``path``."""
    return Path(side or Path(path).parent) / (Path(path).stem + ".auto.npz")


def complete(folder: str, side: str | None = None) -> None:
    """Add the library's ``tuning_rule="auto"`` fit (``P_auto``, ``est_auto``) to caches
    written before this study (their default was the minimum), in the folder ``side``
    (default: beside them)."""
    import accuracy_vs_peers as avp

    from wsvmgui.app.schemes import prepare_scheme

    for path in sorted(glob.glob(str(Path(folder) / "*.npz"))):
        side_path = _side(path, side)
        if path.endswith(".auto.npz") or path.endswith("_ties.npz") or side_path.exists():
            continue
        if "P_auto" in np.load(path).files:
            continue
        name, seed = Path(path).stem.rsplit("_", 1)
        data, n = name.rsplit("_", 1)
        X, codes, Xt, _, _, K = avp.load(data, None if n == "None" else int(n), int(seed),
                                         avp.RECORD_N_TEST)  # fmt: skip
        settings, _ = avp._settings("wsvmgui", K)
        est, X, codes = prepare_scheme(settings, X, codes)
        est.set_params(tuning_rule="auto").fit(X, codes)
        with open(side_path.with_suffix(".pkl"), "wb") as fh:
            pickle.dump({"est_auto": est}, fh)
        np.savez_compressed(side_path, P_auto=est.predict_proba(Xt))
        print(side_path.name, flush=True)


def best_peer(data: str, n: int | None, seeds: list[int]) -> float | None:
    """The best SVM peer's mean over ``seeds`` in the benchmark of record (None: missing)."""
    import accuracy_vs_peers as avp

    record = json.loads((ROOT / "benchmarks/results/accuracy_vs_peers.json").read_text())
    metric = "L1" if n is not None else "log_loss"
    means = []
    for peer in avp.SVM_PEERS:
        vals = []
        for key, rows in record["runs"].items():
            d, nn, seed, _ = key.split("|")
            if d != data or int(seed) not in seeds or (n is not None and int(nn) != n):
                continue
            vals += [r[metric] for r in rows if r["method"] == peer]
        if len(vals) != len(seeds):
            return None
        means.append(float(np.mean(vals)))
    return min(means)


def study(caches: list[str], rules: list[str], side: str | None = None) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for folder in caches:
        for path in sorted(glob.glob(str(Path(folder) / "*.npz"))):
            stem = Path(path).stem
            if stem.endswith("_ties") or stem.endswith(".auto"):
                continue
            name, seed = stem.rsplit("_", 1)
            key = f"{name}, seeds {'0-4' if int(seed) < 5 else '5-9'}"
            d = out.setdefault(key, {"name": name, "seeds": [], "per_seed": []})
            if int(seed) in d["seeds"]:
                continue
            d["seeds"].append(int(seed))
            d["per_seed"].append(replay_draw(path, rules, side))
            print(name, seed, {k: round(v, 4) for k, v in d["per_seed"][-1].items()
                               if isinstance(v, float)}, flush=True)  # fmt: skip
    for d in out.values():
        data, n = d["name"].rsplit("_", 1)
        nn = None if n == "None" else int(n)
        keys = ["record", *rules]
        extra = ["library_auto", *(f"{r}_minties" for r in rules)]
        keys += [k for k in extra if all(k in r for r in d["per_seed"])]
        d["mean"] = {k: float(np.mean([r[k] for r in d["per_seed"]])) for k in keys}
        base = np.array([r["min"] for r in d["per_seed"]])
        d["vs_min"] = {
            k: {
                "ratio": d["mean"][k] / d["mean"]["min"],
                "better": int(np.sum(np.array([r[k] for r in d["per_seed"]]) < base - 1e-12)),
                "worse": int(np.sum(np.array([r[k] for r in d["per_seed"]]) > base + 1e-12)),
            }
            for k in keys[1:]
        }
        peer = best_peer(data, nn, sorted(d["seeds"]))
        d["best_peer"] = peer
        d["vs_peer"] = None if peer is None else {k: d["mean"][k] / peer for k in keys[1:]}
    return out


def markdown(out: dict[str, dict], rules: list[str]) -> str:
    columns = [*rules, *(f"{r}_minties" for r in rules if r != "min")]
    lines = [
        "# One-standard-error rules for the pair schemes' cells (offline replay)",
        "",
        "`benchmarks/multiclass_one_se_study.py`; means over the cached draws (L1 on the",
        "designs, log loss on the real sets); `x/y` after a ratio: draws better / worse than",
        "`min`; [peer] the ratio to the best SVM peer of the record over the same seeds.",
        "`<rule>_minties`: the baseline schemes (BP1, K >= 5) with the tie pairs of the",
        "minimum's cells, as the library borrows them; `<rule>` alone there: with the tie",
        "pairs of the cached `auto` fit (seeds 0-4 and n = 2000 seeds 1-2: cells borrowed",
        "from the widest one-SE cells, the first version; fresh seeds: the minimum's).",
        "The JSON's `library_auto` is the library's `auto` of the caching run (one SE;",
        "its tie pairs as just said), kept for the record.",
        "",
        "| data | seeds | record | " + " | ".join(columns) + " |",
        "|---|---|---|" + "---|" * len(columns),
    ]
    for name in sorted(out):
        d = out[name]
        cells = []
        for k in columns:
            if k not in d["mean"]:
                cells.append("")
                continue
            v = d["vs_min"][k]
            peer = "" if d["vs_peer"] is None else f" [{d['vs_peer'][k]:.2f}]"
            cells.append(f"{d['mean'][k]:.4f} ({v['ratio']:.3f}, {v['better']}/{v['worse']}){peer}")
        seeds = ",".join(map(str, sorted(d["seeds"])))
        lines.append(
            f"| {name} | {seeds} | {d['mean']['record']:.4f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--caches", nargs="+", required=True, help="folders of cached draws")
    ap.add_argument("--data", nargs="*", default=[], help="name:n to cache into the first folder")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--complete", action="store_true", help="add the library's auto fits")
    ap.add_argument("--side", help="folder of the auto fits added to read-only caches")
    ap.add_argument("--rules", nargs="*", default=[*RULES, *SIZE_RULES])
    ap.add_argument("--out", default=str(OUT), help="results path without suffix")
    args = ap.parse_args(argv)
    if args.complete:
        for folder in args.caches:
            complete(folder, args.side)
        return 0
    if args.data:
        Path(args.caches[0]).mkdir(parents=True, exist_ok=True)
        for spec in args.data:
            name, n = spec.split(":")
            for seed in args.seeds:
                cache(args.caches[0], name, None if n == "None" else int(n), seed)
        return 0
    out = study(args.caches, args.rules, args.side)
    Path(args.out + ".json").write_text(json.dumps(out, indent=1))
    Path(args.out + ".md").write_text(markdown(out, args.rules))
    print(markdown(out, args.rules))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
