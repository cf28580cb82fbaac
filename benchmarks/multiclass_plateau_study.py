"""The plateau map for the multiclass pairs (issue 23, ninth sitting, branch acc-mcplateau).

The binary default now chooses among the sigmoid, isotonic and plateau maps
(``g(p) = l + (h - l) expit(a + b logit p)``, :func:`wsvmgui.ladder.recalibration.fit_plateau`).
The multiclass pair schemes map each pair's p_hat by the sigmoid up to 1000 rows
(``PAIR_AUTO_MAP``) and by the guarded choice among ``PAIR_LARGE_MAPS`` and the spline
above.  This script replays the captured fits of ``multiclass_midrung_study.py``
(``/tmp/acc-mcmid/``: per pair the cross-fitted rows and the full fit's p_hat at the test
points) with per-pair candidates, coupled by the fitted estimator's own ``_combine``:

* ``default``: today's map (``est._pair_map``; equals the record);
* ``plateau``: the plateau map alone;
* ``cv``: :func:`~wsvmgui.ladder.recalibration.choose_map` among ("sigmoid", "plateau")
  by 5-fold CV log loss on the pair's rows, no spline;
* ``guard{k}``: the plateau only where its 5-fold CV log loss beats the sigmoid's by more
  than k standard errors of the paired per-row difference (same folds), else the sigmoid
  (k = 1, 2, 3; ``guard1`` is ``guarded_choice``'s rule with the plateau as challenger);
* ``screened``: :func:`challenge`, ``guard2`` where the plateau fitted on all the pair's
  rows lowers their total log loss by more than 2 nats, else the sigmoid (a screen that
  skips the cross-validation on 90 % of the pairs; the candidate implemented and timed);
* ``large_plateau`` (above 1000 rows only): ``choose_map`` among
  ``PAIR_LARGE_MAPS + ("plateau",)`` with today's guarded spline.

The folds' seed is the estimator's (``seed_of(random_state)``), as in the library.
Results: ``benchmarks/results/multiclass_plateau_study.{md,json}``
(docs/notes/multiclass_accuracy.md, section 11).

    nice -n 5 python benchmarks/multiclass_plateau_study.py [--data ...] [--sizes paper real 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multiclass_midrung_study as mm  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "multiclass_plateau_study"
GUARDS = (1.0, 2.0, 3.0)
SMALL = ("default", "plateau", "cv", *(f"guard{z:g}" for z in GUARDS), "screened")
LARGE = ("large_plateau",)
PAIR_MAPS = ("sigmoid", "plateau")


def challenge(p: np.ndarray, y: np.ndarray, seed: int, guard: float = 2.0, screen: float = 2.0):
    """The ``screened`` candidate: the sigmoid fitted to estimates ``p`` (m,) and labels
    ``y`` (m,), or the plateau map where (1) fitted on all pairs it lowers their total log
    loss by more than ``screen`` nats and (2) its 5-fold CV per-row log loss (the folds of
    ``choose_map``) beats the sigmoid's by more than ``guard`` standard errors of the
    paired difference; a MonotoneMap."""
    from wsvmgui.ladder import recalibration as rc

    p, y = rc._check(p, y)
    g_sig = rc.fit_map("sigmoid", p, y, seed=seed)
    folds = rc._folds(y, 5, seed)
    if not folds:
        return g_sig
    g_plat = rc.fit_map("plateau", p, y, seed=seed)
    gain = float(np.sum(rc._log_loss_terms(g_sig(p), y) - rc._log_loss_terms(g_plat(p), y)))
    if not gain > screen:
        return g_sig
    q = rc._out_of_fold(p, y, rc._candidates(PAIR_MAPS, False, seed), folds)
    d = rc._log_loss_terms(q["plateau"], y) - rc._log_loss_terms(q["sigmoid"], y)
    se = float(d.std(ddof=1)) / np.sqrt(d.size)
    return g_plat if float(d.mean()) < -guard * se else g_sig


def pair_candidates(entry: dict) -> tuple[dict[str, list[np.ndarray]], dict[str, int]]:
    """Candidate name -> each pair's mapped test estimate (m,); and per candidate the
    number of pairs that took the plateau map."""
    from wsvmgui.estimators._base import seed_of
    from wsvmgui.estimators.multiclass import PAIR_LARGE_MAPS
    from wsvmgui.ladder import recalibration as rc

    est = entry["est"]
    seed = seed_of(est.random_state)
    large = entry["n"] > 1000
    names = SMALL + (LARGE if large else ())
    out: dict[str, list] = {k: [] for k in names}
    took = dict.fromkeys(names, 0)
    for pr in entry["pairs"]:
        p, y, pt = pr["p_cf"], pr["y_cf"], pr["p_t"]
        out["default"].append(pr["map"](pt))
        took["default"] += pr["map"].name == "plateau"
        plat = rc.fit_map("plateau", p, y, seed=seed)
        out["plateau"].append(plat(pt))
        took["plateau"] += 1
        g = rc.choose_map(p, y, maps=PAIR_MAPS, seed=seed, spline=False)
        out["cv"].append(g(pt))
        took["cv"] += g.name == "plateau"
        # guard: same folds as choose_map's, paired per-row differences
        pp, yy = rc._check(p, y)
        folds = rc._folds(yy, 5, seed)
        z_stat = 0.0
        if folds:
            fits = rc._candidates(PAIR_MAPS, False, seed)
            q = rc._out_of_fold(pp, yy, fits, folds)
            d = rc._log_loss_terms(q["plateau"], yy) - rc._log_loss_terms(q["sigmoid"], yy)
            se = float(d.std(ddof=1)) / np.sqrt(d.size)
            z_stat = -float(d.mean()) / se if se > 0 else 0.0
        sig = rc.fit_map("sigmoid", p, y, seed=seed)(pt)
        for z in GUARDS:
            pick = bool(z_stat > z)
            out[f"guard{z:g}"].append(plat(pt) if pick else sig)
            took[f"guard{z:g}"] += int(pick)
        gs = challenge(p, y, seed)
        out["screened"].append(gs(pt))
        took["screened"] += gs.name == "plateau"
        if large:
            gl = rc.choose_map(p, y, maps=(*PAIR_LARGE_MAPS, "plateau"), seed=seed)
            out["large_plateau"].append(gl(pt))
            took["large_plateau"] += gl.name == "plateau"
            took["default_spline"] = took.get("default_spline", 0) + (pr["map"].name == "spline")
            took["large_plateau_spline"] = took.get("large_plateau_spline", 0) + (
                gl.name == "spline"
            )
    return out, took


def replay_one(entry: dict) -> dict:
    import accuracy_vs_peers as avp

    t0 = time.process_time()
    maps, took = pair_candidates(entry)
    cpu = time.process_time() - t0
    row = {"data": entry["data"], "n": entry["n"], "seed": entry["seed"], "K": entry["K"]}
    row["record_default"] = entry["default"]
    for name, qs in maps.items():
        row[name] = avp.metrics(mm.couple_rows(entry, qs), entry["yt"], entry["P_true"])
    row["plateau_pairs"] = took
    row["pairs"] = len(entry["pairs"])
    row["map_cpu"] = cpu
    row["fit_cpu"] = entry["cpu"]
    return row


def summarise(rows: list[dict]) -> str:
    """Markdown: per data set, size and seed set, each candidate's mean over the
    default's (replayed), draws better / worse; and over the record's best SVM peer."""
    runs = mm._record()
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        size = "real" if r["data"] in mm.REAL else ("2000" if r["n"] == 2000 else "paper")
        groups.setdefault((size, r["data"]), []).append(r)
    order = {"paper": 0, "real": 1, "2000": 2}
    cands = ("plateau", "cv", "guard1", "guard2", "guard3", "screened", "large_plateau")
    lines = [
        "# The plateau map for the multiclass pairs",
        "",
        "(`benchmarks/multiclass_plateau_study.py`, replaying the captured fits of",
        "`multiclass_midrung_study.py`.)  Cell: candidate mean / default mean (L1 on designs,",
        "log loss on real sets), draws better / worse.  `/ peer`: the record's best SVM peer",
        "(seeds 0-4).  `plateau pairs`: pairs that took the plateau map / all pairs.",
        "`max |replay - record|`: the replayed default against the record (seeds 0-4).",
        "",
        "| data | n | seeds | default | "
        + " | ".join(cands)
        + " | default / peer | cv / peer | guard1 / peer | screened / peer | large_plateau / peer"
        + " | plateau pairs cv / guard1 / guard2 / screened / large | max abs(replay - record) |",
        "|" + "---|" * (4 + len(cands) + 7),
    ]
    for (_size, data), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
        key = "log_loss" if data in mm.REAL else "L1"
        for lo, hi, sub in mm.seed_blocks(rs):
            seeds = [r["seed"] for r in sub]
            base = np.array([r["default"][key] for r in sub])
            cells = []
            for c in cands:
                if c not in sub[0]:
                    cells.append("")
                    continue
                cells.append(mm.ratio_cell(np.array([r[c][key] for r in sub]), base))
            peer = mm._peer_mean(runs, data, sub[0]["n"], seeds, key)
            pr = [f"{base.mean() / peer:.2f}"] + [
                f"{np.mean([r[c][key] for r in sub]) / peer:.2f}" if c in sub[0] else ""
                for c in ("cv", "guard1", "screened", "large_plateau")
            ]
            tot = sum(r["pairs"] for r in sub)
            took = " / ".join(
                str(sum(r["plateau_pairs"].get(c, 0) for r in sub))
                for c in ("cv", "guard1", "guard2", "screened", "large_plateau")
            )
            rec = [abs(r["default"][key] - mm._record_default(runs, data, r["n"], r["seed"], key))
                   for r in sub if r["seed"] <= 4]  # fmt: skip
            recs = f"{max(rec):.1e}" if rec and np.isfinite(max(rec)) else ""
            lines.append(
                f"| {data} | {sub[0]['n']} | {lo}-{hi} ({len(sub)}) | {base.mean():.4f} | "
                + " | ".join(cells)
                + " | "
                + " | ".join(pr)
                + f" | {took} of {tot} | {recs} |"
            )
    lines += [
        "",
        "Map-fitting CPU of the replay per draw, all candidates (s), / the captured fit's:",
        "",
    ]
    for (_s, d), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
        cpu = np.mean([r["map_cpu"] for r in rs])
        lines.append(f"- {d} n={rs[0]['n']}: {cpu:.2f} / {np.mean([r['fit_cpu'] for r in rs]):.1f}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["paper", "2000"])
    ap.add_argument("--data", nargs="+", default=[*mm.DESIGNS, *mm.REAL])
    ap.add_argument("--seeds", default="0-14")
    ap.add_argument("--out-dir", type=Path, default=OUT.parent)
    ap.add_argument("--summarise-only", action="store_true")
    args = ap.parse_args()
    out = args.out_dir / OUT.name
    if args.summarise_only:
        rows = json.loads(out.with_suffix(".json").read_text())
        out.with_suffix(".md").write_text(summarise(rows))
        return
    seeds = set(mm._seeds(args.seeds))
    paths = [
        p
        for p in sorted(mm.CACHE.glob("*.pkl"))
        if p.stem.rsplit("_", 2)[0] in args.data
        and p.stem.rsplit("_", 2)[1] in args.sizes
        and int(p.stem.rsplit("_", 2)[2]) in seeds
    ]
    rows = mm.replay(
        paths,
        replay_one,
        (*SMALL, *LARGE),
        lambda row: (
            f" plateau pairs {row['plateau_pairs']} of {row['pairs']} cpu {row['map_cpu']:.1f}s"
        ),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=float))
    out.with_suffix(".md").write_text(summarise(rows))


if __name__ == "__main__":
    main()
