"""The pair schemes' cells and maps at n = 2000, replayed offline (issue 23, acc-mc2000).

At n = 2000 the multiclass default (pairwise for K = 3-4, BP1 with ``ties="table"`` for
K >= 5; each pair tuned on 3 folds over the coarse 4 x 4 grid, EGKL minimum, sigmoid pair
map) is 1.16-1.77x the best SVM peer's L1 on five of the seven designs.  This study
replays, from the caches of :mod:`multiclass_sixth_study` (``--coarse``: per draw and
sub-problem, every coarse cell fitted on all rows with estimates at the 10,000 test points,
and on the 3 tuning folds with cross-fitted estimates at every training row), candidate
rules without refitting:

cell rules (each pair's cell; the sigmoid map, :data:`PAIR_AUTO_MAP`)
    ``min`` (today), ``widest_<m>se`` (the widest kernel within m standard errors of the
    smallest EGKL; 0.5 is ``tuning_rule="auto"`` below 1000 rows), ``paired_<z>`` (the
    widest cell whose paired per-row EGKL difference to the minimum is within z of its
    own standard error: the profile along sigma is flat in paired terms), ``recal_min``
    and ``recal_widest_0.5se`` (the same choices on the cross-validated log loss of the
    sigmoid-recalibrated cross-fits instead of the raw EGKL).
maps (the minimum's cell)
    ``map_<name>`` for the sigmoid, ``auto`` (sigmoid / isotonic by cross-validated log
    loss, the guarded spline above 500 pairs: the binary default), isotonic, beta and the
    spline; ``w05_auto``: the widest 0.5-SE cells with the ``auto`` maps (the library's
    ``large_n_auto="widest_auto"``); ``w05_sigspline``: the same without isotonic (the
    sigmoid, or the spline where the guard takes it).
the map as a curvature test
    ``switch_pair``: where ``auto`` at the minimum's cell takes a map other than the
    sigmoid (the pair's distortion is not a sigmoid: a curved design), that cell and map;
    elsewhere the widest 0.5-SE cell and the sigmoid.  ``switch_draw``: the same decided
    once for all pairs (any pair curved: every pair keeps the minimum with its ``auto``
    map).
one shared cell
    ``shared``: the cell of the 16 whose recalibrated cross-fits, coupled into K classes at
    every training row (the pairs' table, BP1's rebuilt from its baseline pairs, by least
    squares), have the smallest log loss; every pair takes it (the tie pairs keep the
    minimum's borrowed cells).
oracles (chosen on the truth: bounds, not rules)
    ``oracle_pair`` (each pair's cell of least error against its true conditional
    ``p_a / (p_a + p_b)``, weighted by ``p_a + p_b``, over the test points) and
    ``oracle_shared`` (the shared cell of least coupled L1).

The sub-problems are combined as at prediction (the tie pairs are the cached default's);
replaying ``min`` reproduces the library's record (column ``record``).  Means over the
cached draws, per-draw better / worse counts against ``min``, and the ratio to the best SVM
peer of the benchmark of record over the same seeds::

    python benchmarks/multiclass_large_n_study.py --caches /tmp/acc-mc2000/n2000 --report
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
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from multiclass_one_se_study import best_peer  # noqa: E402
from multiclass_sixth_study import COARSE  # noqa: E402

#: Cell rules: name -> (score "egkl" | "recal", preference, multiple).
CELL_RULES: dict[str, tuple[str, str | None, float]] = {
    "min": ("egkl", None, 0.0),
    "widest_0.5se": ("egkl", "widest", 0.5),
    "widest_0.25se": ("egkl", "widest", 0.25),
    "widest_0.1se": ("egkl", "widest", 0.1),
    "paired_1": ("egkl", "paired", 1.0),
    "paired_0.5": ("egkl", "paired", 0.5),
    "recal_min": ("recal", None, 0.0),
    "recal_widest_0.5se": ("recal", "widest", 0.5),
}
MAP_NAMES = ("sigmoid", "auto", "isotonic", "beta", "spline")
OUT = ROOT / "benchmarks" / "results" / "multiclass_large_n_study"


def _widest_order(c: int) -> tuple[int, int]:
    """Sort key of COARSE cell ``c``: largest sigma first, then largest lambda (small C)."""
    i, j = COARSE[c]
    return (-j, i)


def choose_cell(terms: np.ndarray, prefer: str | None, mult: float) -> int:
    """Index into :data:`COARSE` of a rule's cell from per-row score terms (16, m)."""
    from wsvmgui.ladder.tuning_table import standard_error

    score = terms.mean(axis=1)
    best = int(np.argmin(score))
    if prefer is None:
        return best
    if prefer == "widest":
        se = standard_error(terms[best], float(terms[best].sum()), float(terms.shape[1]))
        close = np.flatnonzero(score <= score[best] + mult * se)
    else:  # paired: the difference to the minimum within mult of its own standard error
        d = terms - terms[best]
        se = d.std(axis=1, ddof=1) / np.sqrt(terms.shape[1])
        close = np.flatnonzero(d.mean(axis=1) <= mult * se)
    return int(min(close, key=_widest_order))


def load_draw(path: str) -> dict:
    """A cached draw: per sub-problem its rows (cross-fit order), labels, cells'
    cross-fitted estimates (16, m) and test estimates (16, T), and the estimator."""
    z = dict(np.load(path))
    with open(Path(path).with_suffix(".pkl"), "rb") as fh:
        saved = pickle.load(fh)
    est, codes, fold_of = saved["est"], z["codes"], z["fold_of"]
    subs = []
    for s, f in enumerate(est.subproblems_.fitted):
        a, b = f.spec.positive, f.spec.negative[0]
        r = np.flatnonzero((codes == a) | (codes == b))
        r = r[np.argsort(fold_of[r], kind="stable")]
        subs.append(
            {
                "a": a,
                "b": b,
                "rows": r,
                "y": (codes[r] == a).astype(float),
                "fp": np.array([z["fold_p"][s, i, j, r] for i, j in COARSE]),
                "fp_all": np.array([z["fold_p"][s, i, j] for i, j in COARSE]),
                "tp": np.array([z["test_p"][s, i, j] for i, j in COARSE]),
            }
        )
    est.ties = "table"
    if est.tie_pairs_ is not None:  # the tie pairs' test estimates once, not per rule
        fixed = est._tie_pair_estimates(saved["Xt"])
        est._tie_pair_estimates = lambda X, _f=fixed: _f
    return {"est": est, "Xt": saved["Xt"], "subs": subs, "codes": codes, "P": z["P"],
            "P_def": z["P_def"]}  # fmt: skip


def _combined(draw: dict, tps: list[np.ndarray]) -> np.ndarray:
    from wsvmgui.ladder.rules import LadderEstimate

    ests = [LadderEstimate(p, p, p, np.ones(p.size, bool)) for p in tps]
    return draw["est"]._combine(ests, draw["Xt"])["proba"]


def _coupled_train(draw: dict, qs: list[np.ndarray]) -> np.ndarray:
    """K-class probabilities at the training rows from each pair's estimates there
    (n,): the pairwise table (BP1: rebuilt from the baseline pairs, which keep their
    own values), coupled by least squares."""
    from wsvmgui.ladder.search import EGKL_FLOOR
    from wsvmgui.multiclass import coupling

    est, n = draw["est"], draw["codes"].size
    K = est.classes_.size
    Q = coupling.empty_table(n, K)
    for sub, q in zip(draw["subs"], qs, strict=True):
        coupling.set_pair(Q, sub["a"], sub["b"], coupling.clip_pair(q))
    if est.scheme != "pairwise":
        k = est._baseline_index()
        table = coupling.rebuild_table(coupling.saturate(Q[:, :, k], EGKL_FLOOR), k)
        table[:, k, :], table[:, :, k] = Q[:, k, :], Q[:, :, k]
        Q = table
    return coupling.couple_least_squares(Q)


def replay_draw(path: str) -> dict:
    """Every candidate's L1 on one cached draw, the cells chosen and the CPU seconds of
    each choice (the replay's own work, not the fits)."""
    from wsvmgui.estimators.multiclass import PAIR_AUTO_MAP
    from wsvmgui.evaluation.metrics import l1_error
    from wsvmgui.ladder.recalibration import choose_map, fit_calibration, recalibrated_terms
    from wsvmgui.ladder.search import egkl_terms, log_loss_terms

    draw = load_draw(path)
    subs, P = draw["subs"], draw["P"]
    res: dict = {"record": float(l1_error(draw["P_def"], P)), "cells": {}, "maps": {}}
    terms = {
        "egkl": [np.array([egkl_terms(p, s["y"]) for p in s["fp"]]) for s in subs],
        "recal": [
            np.array([recalibrated_terms(p, s["y"], "sigmoid", log_loss_terms) for p in s["fp"]])
            for s in subs
        ],
    }

    def mapped(s: dict, c: int, name: str = PAIR_AUTO_MAP) -> np.ndarray:
        return fit_calibration(name, s["fp"][c], s["y"], 0)(s["tp"][c])

    def score(cells: list[int], name: str = PAIR_AUTO_MAP) -> float:
        if any(not np.all(np.isfinite(s["tp"][c])) for s, c in zip(subs, cells, strict=True)):
            return float("nan")  # a partial cache without that cell's full fit
        return float(l1_error(_combined(draw, [mapped(s, c, name) for s, c in zip(
            subs, cells, strict=True)]), P))  # fmt: skip

    for rule, (kind, prefer, mult) in CELL_RULES.items():
        cells = [choose_cell(t, prefer, mult) for t in terms[kind]]
        res[rule] = score(cells)
        res["cells"][rule] = [list(COARSE[c]) for c in cells]
    cmin = [choose_cell(t, None, 0.0) for t in terms["egkl"]]
    for name in MAP_NAMES:
        t0 = time.process_time()
        res[f"map_{name}"] = score(cmin, name)
        res["maps"][name] = time.process_time() - t0
    # the map as the curvature test: where calibration="auto" at the minimum's cell takes
    # a map other than the sigmoid, the minimum and that map; else the widest 0.5-SE cell
    # and the sigmoid (per pair, or for every pair of the draw at once)
    cw = [choose_cell(t, "widest", 0.5) for t in terms["egkl"]]
    auto = [fit_calibration("auto", s["fp"][c], s["y"], 0) for s, c in zip(subs, cmin, strict=True)]
    res["auto_names"] = [g.name for g in auto]
    res["w05_auto"] = score(cw, "auto")
    # the same without isotonic: the sigmoid, or the guarded spline where it wins
    tps = [
        choose_map(s["fp"][c], s["y"], maps=("sigmoid",), seed=0)(s["tp"][c])
        for s, c in zip(subs, cw, strict=True)
    ]
    ok = all(np.all(np.isfinite(t)) for t in tps)
    res["w05_sigspline"] = float(l1_error(_combined(draw, tps), P)) if ok else float("nan")
    curved = [g.name != "sigmoid" for g in auto]
    for key, flags in (("switch_pair", curved), ("switch_draw", [any(curved)] * len(subs))):
        tps = []
        for s, c0, c1, g, f in zip(subs, cmin, cw, auto, flags, strict=True):
            tps.append(g(s["tp"][c0]) if f else mapped(s, c1))
        ok = all(np.all(np.isfinite(t)) for t in tps)
        res[key] = float(l1_error(_combined(draw, tps), P)) if ok else float("nan")
    # one shared cell on the coupled, recalibrated cross-fits' log loss at every row
    codes = draw["codes"]
    shared_loss = []
    for c in range(len(COARSE)):
        qs = [fit_calibration(PAIR_AUTO_MAP, s["fp"][c], s["y"], 0)(s["fp_all"][c]) for s in subs]
        pr = _coupled_train(draw, qs)
        shared_loss.append(float(-np.mean(np.log(np.clip(pr[np.arange(codes.size), codes],
                                                         1e-12, None)))))  # fmt: skip
    c_sh = int(np.argmin(shared_loss))
    res["shared"] = score([c_sh] * len(subs))
    res["cells"]["shared"] = list(COARSE[c_sh])
    res["shared_loss"] = shared_loss
    # oracles on the truth
    full = all(np.all(np.isfinite(s["tp"])) for s in subs)
    if P.size and full:
        cells = []
        for s in subs:
            tot = P[:, s["a"]] + P[:, s["b"]]
            t = P[:, s["a"]] / np.maximum(tot, 1e-300)
            err = [float(np.sum(tot * np.abs(mapped(s, c) - t))) for c in range(len(COARSE))]
            cells.append(int(np.argmin(err)))
        res["oracle_pair"] = score(cells)
        res["cells"]["oracle_pair"] = [list(COARSE[c]) for c in cells]
        each = [score([c] * len(subs)) for c in range(len(COARSE))]
        res["oracle_shared"] = float(np.min(each))
        res["cells"]["oracle_shared"] = list(COARSE[int(np.argmin(each))])
    return res


def _draws(caches: list[str]) -> dict[tuple[str, int], str]:
    """(name, seed) -> cache path; a cache with every cell's full fit wins over a partial
    one (the first folder given wins among equals)."""
    out: dict[tuple[str, int], tuple[bool, str]] = {}
    for folder in caches:
        for path in sorted(glob.glob(str(Path(folder) / "*_2000_*.npz"))):
            stem = Path(path).stem
            if "." in stem or stem.endswith("_ties"):
                continue
            name, seed = stem.rsplit("_", 1)
            tp = np.load(path)["test_p"]
            full = all(np.isfinite(tp[:, i, j, 0]).all() for i, j in COARSE)
            key = (name, int(seed))
            if key not in out or (full and not out[key][0]):
                out[key] = (full, path)
    return {k: v[1] for k, v in sorted(out.items())}


def study(caches: list[str]) -> dict:
    out: dict[str, dict] = {}
    for (name, seed), path in _draws(caches).items():
        group = f"{name}, seeds {'0-4' if seed < 5 else '5-9'}"
        d = out.setdefault(group, {"name": name, "seeds": [], "per_seed": [], "paths": []})
        t0 = time.process_time()
        r = replay_draw(path)
        d["seeds"].append(seed)
        d["paths"].append(path)
        d["per_seed"].append(r)
        short = {k: round(v, 4) for k, v in r.items() if isinstance(v, float)}
        print(name, seed, f"{time.process_time() - t0:.0f}s", short, flush=True)
    for d in out.values():
        data, n = d["name"].rsplit("_", 1)
        keys = [k for k, v in d["per_seed"][0].items() if isinstance(v, float)]
        d["mean"], d["n_draws"], d["vs_min"] = {}, {}, {}
        for k in keys:
            ok = [r for r in d["per_seed"] if np.isfinite(r.get(k, np.nan))]
            d["n_draws"][k] = len(ok)
            if not ok:
                continue
            v = np.array([r[k] for r in ok])
            base = np.array([r["min"] for r in ok])
            d["mean"][k] = float(v.mean())
            d["vs_min"][k] = {
                "ratio": float(v.mean() / base.mean()),
                "better": int(np.sum(v < base - 1e-12)),
                "worse": int(np.sum(v > base + 1e-12)),
            }
        peer = best_peer(data, int(n), sorted(d["seeds"]))
        d["best_peer"] = peer
        d["vs_peer"] = (
            None
            if peer is None
            else {k: d["mean"][k] / peer for k in d["mean"] if d["n_draws"][k] == len(d["seeds"])}
        )
    return out


def markdown(out: dict) -> str:
    cols = [*CELL_RULES, *(f"map_{m}" for m in MAP_NAMES)]
    cols += ["w05_auto", "w05_sigspline", "switch_pair", "switch_draw", "shared"]
    cols += ["oracle_pair", "oracle_shared"]
    lines = [
        "# The pair schemes' cells and maps at n = 2000 (offline replay, acc-mc2000)",
        "",
        "`benchmarks/multiclass_large_n_study.py` (module docstring: the rules).  Per design",
        "and seed set: the mean L1 over the cached draws, (ratio to `min`, draws better /",
        "worse than `min`) and [the ratio to the best SVM peer of the benchmark of record over",
        "the same seeds].  `record`: the library's own fit (the cache's default); `min`",
        "replays it.  A value over fewer draws than the row's seeds says `(k draws)` (a",
        "partial cache without that cell's full fit).",
        "",
    ]
    for name in sorted(out):
        d = out[name]
        seeds = ",".join(map(str, sorted(d["seeds"])))
        peer = "" if d["best_peer"] is None else f", best SVM peer {d['best_peer']:.4f}"
        lines += [f"## {name} (seeds {seeds}; record {d['mean']['record']:.4f}{peer})", "",
                  "| rule | L1 | / min | better / worse | / best peer |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for k in cols:
            if k not in d["mean"]:
                continue
            v = d["vs_min"][k]
            peer_r = "" if not d["vs_peer"] or k not in d["vs_peer"] else f"{d['vs_peer'][k]:.3f}"
            few = "" if d["n_draws"][k] == len(d["seeds"]) else f" ({d['n_draws'][k]} draws)"
            lines.append(
                f"| {k} | {d['mean'][k]:.4f}{few} | {v['ratio']:.3f} | "
                f"{v['better']} / {v['worse']} | {peer_r} |"
            )
        lines.append("")
    return "\n".join(lines)


MC_DESIGNS = (
    "wu2010_ex1",
    "wu2010_ex2",
    "wu2010_ex4",
    "zeng_ex1",
    "zeng_ex2",
    "zeng_ex3",
    "zeng_ex4",
)


def records(folders: list[str], candidate: str = "wsvmgui_large") -> dict:
    """The benchmark of record's runs of ``candidate`` against ``wsvmgui`` (and
    ``wsvmgui_plain`` where run) at n = 2000 from the ``accuracy_vs_peers.json`` of each
    folder: per design and seed set, mean L1, draws better / worse, CPU over the same
    draws, and the ratio to the best SVM peer where the record has it."""
    runs: dict[str, list] = {}
    for folder in folders:
        runs.update(json.loads((Path(folder) / "accuracy_vs_peers.json").read_text())["runs"])
    out: dict[str, dict] = {}
    for data in MC_DESIGNS:
        for label, seeds in (("0-4", range(5)), ("5-9", range(5, 10))):
            rows: dict[str, dict[int, dict]] = {}
            for seed in seeds:
                for group in (candidate, "wsvmgui", "wsvmgui_plain"):
                    got = runs.get(f"{data}|2000|{seed}|{group}") or []
                    if got:
                        rows.setdefault(group, {})[seed] = got[0]
            both = sorted(set(rows.get(candidate, {})) & set(rows.get("wsvmgui", {})))
            if not both:
                continue
            cand = np.array([rows[candidate][s]["L1"] for s in both])
            base = np.array([rows["wsvmgui"][s]["L1"] for s in both])
            d = {
                "seeds": both,
                "L1": {candidate: float(cand.mean()), "wsvmgui": float(base.mean())},
                "ratio": float(cand.mean() / base.mean()),
                "better": int(np.sum(cand < base - 1e-12)),
                "worse": int(np.sum(cand > base + 1e-12)),
                "cpu": {
                    g: float(np.mean([rows[g][s]["cpu"] for s in both]))
                    for g in (candidate, "wsvmgui", "wsvmgui_plain")
                    if all(s in rows.get(g, {}) for s in both)
                },
            }
            peer = best_peer(data, 2000, both)
            d["best_peer"] = peer
            if peer is not None:
                d["vs_peer"] = {k: v / peer for k, v in d["L1"].items()}
            out[f"{data}, seeds {label}"] = d
    return out


def records_markdown(rec: dict, candidate: str = "wsvmgui_large") -> str:
    lines = [
        f"## The benchmark of record at n = 2000: `{candidate}` against `wsvmgui`",
        "",
        "`accuracy_vs_peers.py --methods ... --sizes 2000` (the library's fits; seeds 0-4 the",
        "record's draws, 5-9 fresh).  CPU: mean seconds per fit in the runs named (other load",
        "for the record's `wsvmgui` rows of seeds 0-4; side by side on seeds 5-9).",
        "",
        f"| data | seeds | wsvmgui | {candidate} | ratio | better / worse | / best peer "
        "(before -> after) | CPU s (default, candidate, plain) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, d in rec.items():
        data, seeds = key.split(", seeds ")
        peer = ""
        if "vs_peer" in d:
            peer = f"{d['vs_peer']['wsvmgui']:.3f} -> {d['vs_peer'][candidate]:.3f}"
        cpu = ", ".join(
            f"{d['cpu'][g]:.1f}" if g in d["cpu"] else "-"
            for g in ("wsvmgui", candidate, "wsvmgui_plain")
        )
        lines.append(
            f"| {data} | {','.join(map(str, d['seeds']))} | {d['L1']['wsvmgui']:.4f} | "
            f"{d['L1'][candidate]:.4f} | {d['ratio']:.3f} | {d['better']} / {d['worse']} | "
            f"{peer} | {cpu} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--caches", nargs="+", required=True, help="folders of cached draws")
    ap.add_argument("--report", action="store_true", help="write the results files")
    ap.add_argument("--out", default=str(OUT), help="results path without suffix")
    ap.add_argument("--records", nargs="*", default=[], help="folders of accuracy_vs_peers.py runs")
    args = ap.parse_args(argv)
    out = study(args.caches)
    text = markdown(out)
    if args.records:
        rec = records(args.records)
        out = {"replay": out, "records": rec}
        text += "\n" + records_markdown(rec)
    print(text)
    if args.report:
        for suffix, body in ((".json", json.dumps(out, indent=1)), (".md", text)):
            tmp = Path(args.out + suffix + ".tmp")
            tmp.write_text(body)
            tmp.replace(args.out + suffix)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
