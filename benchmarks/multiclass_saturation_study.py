"""The binary saturation rule on the multiclass pairs, replayed (issue 23, tenth sitting).

Since the tenth sitting the binary estimator's ``calibration="auto"`` maps the middle
rung's decision value ``f_1/2`` by Platt's sigmoid (``expit(c + a f_1/2)``) where more than
``SATURATION_SHARE = 0.5`` of the cross-fitted count estimates lie outside the grid's end
weights ``[pi_1, pi_{M-1}]`` (``wsvmgui.ladder.midrung`` on the integration branch;
docs/notes/calibration.md, "Tenth sitting (branch acc-bcsat)").  This script replays the
same rule per pair of the multiclass default (pairwise for K = 3-4, BP1 for K >= 5) on the
captured fits of ``multiclass_midrung_study.py`` (``/tmp/acc-mcmid/*.pkl``: each pair's
cross-fitted ``(p_hat, f_1/2, y)`` and the test points' ``(p_hat, f_1/2)``), coupled by the
fitted estimator's own ``_combine`` (:func:`multiclass_midrung_study.couple_rows`).

Candidates (per pair; ``share``: the pair's cross-fitted p_hat outside its own interior
weights' ends, the grid ``f.weights`` the pair was cross-fitted on, read from the pickled
estimator's ``subproblems_.fitted``):

* ``default``: today's map replayed (must equal the record);
* ``sat``: where ``share > 0.5``, ``fit_map("sigmoid")`` on ``expit(f_1/2)`` of the
  cross-fitted rows applied to ``expit(f_1/2)`` at the test points (the binary rule,
  unchanged); else today's map;
* ``sat_both``: where ``share > 0.5``, the logistic in ``(logit p_hat, f_1/2)`` (both
  slopes >= 0; the midrung study's ``both``); else today's map;
* ``mid``: the middle rung's sigmoid on every pair (the rule's other branch everywhere,
  for reference).

BP1's tie pairs keep the default's estimates (the replay cannot refit them).  Scores: L1
against the truth on the designs, log loss on the real sets.  Results:
``benchmarks/results/multiclass_saturation_study.{md,json}``
(docs/notes/multiclass_accuracy.md, section 12).

    nice -n 5 python benchmarks/multiclass_saturation_study.py
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import multiclass_midrung_study as mms  # noqa: E402

from wsvmgui.ladder import midrung  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "multiclass_saturation_study"
CANDIDATES = ("sat", "sat_both", "mid")


def _fit_sat_mid(d: np.ndarray, y: np.ndarray):
    """The binary rule's map: ``fit_map("sigmoid")`` on ``expit(f_1/2)``
    (:func:`~wsvmgui.ladder.midrung.midrung_score`); a function of d."""
    from wsvmgui.ladder import recalibration as rc

    g = rc.fit_map("sigmoid", midrung.midrung_score(d), y)
    return lambda dd: g(midrung.midrung_score(dd))


def pair_maps(entry: dict) -> tuple[dict[str, list[np.ndarray]], list[dict]]:
    """Candidate name -> each pair's mapped test estimate (m,); and per pair its share."""
    fitted = entry["est"].subproblems_.fitted
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("default", *CANDIDATES)}
    info = []
    for pr, f in zip(entry["pairs"], fitted, strict=True):
        assert f.spec.name == pr["name"]
        p, d, y = pr["p_cf"], pr["d_cf"], pr["y_cf"]
        share = midrung.saturated_share(p, f.weights)
        fired = share > midrung.SATURATION_SHARE
        base = pr["map"](pr["p_t"])
        mid = _fit_sat_mid(d, y)(pr["d_t"])
        out["default"].append(base)
        out["mid"].append(mid)
        out["sat"].append(mid if fired else base)
        out["sat_both"].append(mms._fit_both(p, d, y)(pr["p_t"], pr["d_t"]) if fired else base)
        info.append(
            {"name": pr["name"], "share": share, "fired": bool(fired),
             "w_ends": [float(f.weights[0]), float(f.weights[-1])], "m_cf": int(p.size)}
        )  # fmt: skip
    return out, info


def replay_one(entry: dict) -> dict:
    import accuracy_vs_peers as avp

    maps, info = pair_maps(entry)
    row = {"data": entry["data"], "n": entry["n"], "seed": entry["seed"], "K": entry["K"]}
    row["scheme"] = entry["scheme"]
    row["record_default"] = entry["default"]
    for name, qs in maps.items():
        row[name] = avp.metrics(mms.couple_rows(entry, qs), entry["yt"], entry["P_true"])
    row["pairs"] = info
    return row


def replay(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        entry = pickle.loads(path.read_bytes())
        row = replay_one(entry)
        key = "L1" if entry["P_true"] is not None else "log_loss"
        fired = sum(p["fired"] for p in row["pairs"])
        print(
            f"{row['data']} n={row['n']} seed={row['seed']}: record "
            f"{row['record_default'][key]:.4f} default {row['default'][key]:.4f} "
            + " ".join(f"{k} {row[k][key]:.4f}" for k in CANDIDATES)
            + f" fired {fired}/{len(row['pairs'])}",
            flush=True,
        )
        rows.append(row)
    return rows


def _size(r: dict) -> str:
    return "real" if r["data"] in mms.REAL else ("2000" if r["n"] == 2000 else "paper")


def summarise(rows: list[dict]) -> str:
    """Markdown: per row and seed set, each candidate's mean over the replayed default's,
    draws better / worse, pairs fired, and the means over the record's best SVM peer."""
    runs = mms._record()
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((_size(r), r["data"]), []).append(r)
    order = {"paper": 0, "real": 1, "2000": 2}
    lines = [
        "# The binary saturation rule on the multiclass pairs (replay)",
        "",
        "(`benchmarks/multiclass_saturation_study.py`, on the captures of",
        "`benchmarks/multiclass_midrung_study.py`.)  Per pair, `sat` maps Platt's sigmoid in",
        "the middle rung's f_1/2 where more than 0.5 of the pair's cross-fitted p_hat lie",
        "outside its interior weights' ends [pi_1, pi_{M-1}], else today's map; `sat_both` the",
        "logistic in (logit p_hat, f_1/2) there; `mid` the middle rung on every pair.  Cell:",
        "candidate mean / default mean (L1 on designs, log loss on real sets), draws",
        "better / worse.  `fired`: pairs over the threshold / pairs, over the row's draws;",
        "`share`: mean and largest share of a pair.  `/ peer`: mean over the record's best SVM",
        "peer's mean over the same seeds (blank where the record lacks them).  `max abs(replay",
        "- record)`: the replayed default against the record's `wsvmgui` rows.",
        "",
        "| data | n | seeds | default | fired | share mean / max | "
        + " | ".join(CANDIDATES)
        + " | default / peer | sat / peer | sat_both / peer | max abs(replay - record) |",
        "|" + "---|" * (6 + len(CANDIDATES) + 4),
    ]
    for (_s, data), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
        key = "log_loss" if data in mms.REAL else "L1"
        for lo, hi, sub in mms.seed_blocks(rs):
            seeds = [r["seed"] for r in sub]
            base = np.array([r["default"][key] for r in sub])
            cells = []
            for c in CANDIDATES:
                cells.append(mms.ratio_cell(np.array([r[c][key] for r in sub]), base))
            shares = [p["share"] for r in sub for p in r["pairs"]]
            fired = sum(p["fired"] for r in sub for p in r["pairs"])
            peer = mms._peer_mean(runs, data, sub[0]["n"], seeds, key)
            pr = [
                f"{np.mean([r[c][key] for r in sub]) / peer:.3f}" if np.isfinite(peer) else ""
                for c in ("default", "sat", "sat_both")
            ]
            rec = [
                abs(r["default"][key] - mms._record_default(runs, data, r["n"], r["seed"], key))
                for r in sub
            ]
            rec = [x for x in rec if np.isfinite(x)]
            recs = f"{max(rec):.1e}" if rec else ""
            lines.append(
                f"| {data} | {sub[0]['n']} | {lo}-{hi} ({len(sub)}) | {base.mean():.4f} | "
                f"{fired}/{len(shares)} | {np.mean(shares):.2f} / {np.max(shares):.2f} | "
                + " | ".join(cells)
                + " | "
                + " | ".join(pr)
                + f" | {recs} |"
            )
    lines += [
        "",
        "Against the bar, per seed set over the rows (design x size, real set): the mean of the",
        "rows' ratios, the rows more than 2 % worse, draws better / worse over all rows.",
        "",
        "| candidate | seeds | rows | mean ratio | rows > 1.02 | draws better / worse |",
        "|---|---|---|---|---|---|",
    ]
    for c in CANDIDATES:
        for lo, hi in ((0, 4), (5, 9), (10, 14)):
            ratios, bad, better, worse = [], [], 0, 0
            for (_s, data), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
                key = "log_loss" if data in mms.REAL else "L1"
                sub = [r for r in rs if lo <= r["seed"] <= hi]
                if not sub:
                    continue
                base = np.array([r["default"][key] for r in sub])
                v = np.array([r[c][key] for r in sub])
                ratios.append(v.mean() / base.mean())
                if ratios[-1] > 1.02:
                    bad.append(f"{data} {sub[0]['n']} {ratios[-1]:.3f}")
                better += int(np.sum(v < base - 1e-12))
                worse += int(np.sum(v > base + 1e-12))
            if ratios:
                lines.append(
                    f"| {c} | {lo}-{hi} | {len(ratios)} | {np.mean(ratios):.4f} | "
                    f"{len(bad)}{': ' + ', '.join(bad) if bad else ''} | {better} / {worse} |"
                )
    lines += ["", "Per draw (rows where some pair fired): pairs fired, sat / default:", ""]
    for (_s, data), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
        key = "log_loss" if data in mms.REAL else "L1"
        cells = [
            f"{r['seed']}: {sum(p['fired'] for p in r['pairs'])} "
            f"{r['sat'][key] / r['default'][key]:.3f}"
            for r in sorted(rs, key=lambda r: r["seed"])
            if any(p["fired"] for p in r["pairs"])
        ]
        if cells:
            lines.append(f"- {data} n={rs[0]['n']}: " + "; ".join(cells))
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", default=None, help="only these data sets")
    ap.add_argument("--out-dir", type=Path, default=OUT.parent)
    ap.add_argument("--report-only", action="store_true", help="re-tabulate the JSON")
    args = ap.parse_args()
    out = args.out_dir / OUT.name
    if args.report_only:
        rows = json.loads(out.with_suffix(".json").read_text())
    else:
        paths = sorted(mms.CACHE.glob("*.pkl"))
        if args.data:
            paths = [p for p in paths if any(p.name.startswith(d + "_") for d in args.data)]
        rows = replay(paths)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=float))
    out.with_suffix(".md").write_text(summarise(rows))


if __name__ == "__main__":
    main()
