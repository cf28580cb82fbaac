"""Which (C, sigma) cell should the recalibrated binary default take at n > 500 (issue 23 item 3)?

The default (``WeightedSVMClassifier()``: EGKL, minimum, ``cv="auto"``) tunes on one 30%
hold-out above n = 500 (screened: every cell on a third of the training rows, the 6 best
on all) and then cross-fits the chosen cell on 3 stratified folds for its map.  This
study caches, per draw of the benchmark of record (``accuracy_vs_peers.load``, n = 2000 or
1000, 10,000 test points), the fits that candidate choices on the 3 calibration folds
need, and compares the choices offline on the same fits:

* ``cache``: on the 3 folds of ``calibration_folds`` (those the calibration reuses),
  (1) the screening round: every cell fitted on a third of each fold's training rows
  (:class:`~wsvmgui.ladder.screening.Screening`, C kept), its estimates of the fold's
  tuning rows; (2) the full round for the union of the 6 best screening cells by EGKL,
  by the recalibrated Brier score and by the recalibrated log loss, plus the cell the
  default chose in the record: each cell's cross-fitted estimates of all rows on the full
  folds, and its fit on all rows' estimate of the test points.  CPU seconds of every fit.
  ``--side-by-side`` also fits ``wsvmgui_plain`` (calibration none) and the default in the
  same process (CPU, and the default's L1 to check the cache reproduces it).
* ``report``: the candidate rules' L1 (the chosen cell's full-fit estimate mapped by the
  ``"auto"`` map fitted to its cross-fitted estimates, as the estimator computes it),
  paired against the default's record, and their CPU from the cached fit times.

* ``records``: the candidate implemented on branch ``acc-cells-impl`` (the screening
  round's best cell by the recalibrated Brier score) run by ``accuracy_vs_peers.py
  --methods wsvmgui --out-dir DIR``, per seed against the default's record.

Run::

    nice -n 5 python benchmarks/cell_choice_study.py cache --seeds 0 1 2 3 4
    python benchmarks/cell_choice_study.py report
    python benchmarks/cell_choice_study.py records --records DIR/accuracy_vs_peers.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
CACHE = Path("/tmp/acc-cells")
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
N_TEST = 10_000
KEEP = 6


def _record(data: str, n: int, seed: int, method: str = "wsvmgui") -> dict | None:
    state = json.loads((HERE / "results" / "accuracy_vs_peers.json").read_text())
    rows = state["runs"].get(f"{data}|{n}|{seed}|{method}")
    return rows[0] if rows else None


def _fit_cells(X, problem, folds, kernel0, cells, weights, n_all):
    """Cross-fitted estimates (m,) of every cell on ``folds`` and CPU seconds per cell."""
    from wsvmgui.ladder.recalibration import fold_fits
    from wsvmgui.ladder.tuning import kernel_with_sigma
    from wsvmgui.progress import ProgressTracker

    ps, cpus = [], []
    for C, sigma in cells:
        t0 = time.process_time()
        kernel = kernel_with_sigma(kernel0, sigma)
        lam = 1.0 / (2.0 * n_all * C)
        p = []
        for fit, te, _ in fold_fits(
            X, problem, folds, kernel, lam, n_all, weights, tracker=ProgressTracker(0)
        ):
            p.append(fit.ladder.estimate(fit.kernel(X[te], X[fit.support]), "count").p)
        ps.append(np.concatenate(p))
        cpus.append(time.process_time() - t0)
    return np.array(ps), np.array(cpus)


def _full_fits(X, Xt, problem, kernel0, cells, weights, n_all):
    """Each cell's fit on all rows: its raw estimate of the test points, CPU seconds."""
    from wsvmgui.ladder.final import fit_ladders
    from wsvmgui.ladder.tuning import kernel_with_sigma
    from wsvmgui.progress import ProgressTracker

    ps, cpus = [], []
    for C, sigma in cells:
        t0 = time.process_time()
        kernel = kernel_with_sigma(kernel0, sigma)
        lam = 1.0 / (2.0 * n_all * C)
        fit = fit_ladders(
            X, [problem], np.arange(n_all), kernel, [(lam, sigma)], [weights],
            tracker=ProgressTracker(0),
        )[0]  # fmt: skip
        cpus.append(time.process_time() - t0)
        p = [
            fit.ladder.estimate(fit.kernel(Xt[a : a + 2000], X[fit.support]), "count").p
            for a in range(0, Xt.shape[0], 2000)
        ]
        ps.append(np.concatenate(p))
    return np.array(ps), np.array(cpus)


def _crit(p: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Per-row terms of each criterion on cross-fitted estimates p (m,)."""
    from wsvmgui.ladder.recalibration import recalibrated_terms
    from wsvmgui.ladder.search import brier_terms, egkl_terms, log_loss_terms

    return {
        "egkl": egkl_terms(p, y),
        "brier_raw": brier_terms(p, y),
        "brier_recal": recalibrated_terms(p, y, "auto", brier_terms),
        "ll_recal": recalibrated_terms(p, y, "auto", log_loss_terms),
    }


def cache_draw(data: str, n: int, seed: int, side_by_side: bool) -> Path:
    from accuracy_vs_peers import load

    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.ladder.problems import LadderProblem
    from wsvmgui.ladder.recalibration import calibration_folds
    from wsvmgui.ladder.screening import Screening
    from wsvmgui.ladder.tuning import DEFAULT_C_GRID

    out = CACHE / f"{data}_{n}_{seed}.npz"
    if out.exists():
        return out
    X, codes, Xt, _, P_true, _ = load(data, n, seed, N_TEST)
    est = WeightedSVMClassifier()
    est.classes_ = np.array([0, 1])
    sigmas = est._sigma_grid(X, codes, None)
    kernel0 = est._kernel_template()
    weights = est._weight_grid(float(n))
    problem = LadderProblem(np.arange(n), np.where(codes == 1, 1.0, -1.0))
    folds = calibration_folds(None, codes, 0)
    small = Screening(seed=0).subsample(folds)
    y_cf = np.concatenate([(codes[te] == 1).astype(float) for _, te in folds])
    cells = [(C, s) for C in DEFAULT_C_GRID for s in sigmas]
    rough_p, rough_cpu = _fit_cells(X, problem, small, kernel0, cells, weights, n)
    crit = {k: [] for k in ("egkl", "brier_recal", "ll_recal")}
    for p in rough_p:
        t = _crit(p, y_cf)
        for k in crit:
            crit[k].append(t[k].mean())
    chosen: set[int] = set()
    for v in crit.values():
        chosen |= {int(i) for i in np.argsort(v, kind="stable")[:KEEP]}
    rec = _record(data, n, seed)
    default_cell = -1
    if rec is not None:
        i_c = int(np.argmin(np.abs(np.log(np.array(DEFAULT_C_GRID) / rec["C"]))))
        i_s = int(np.argmin(np.abs(np.log(sigmas / rec["sigma"]))))
        default_cell = i_c * sigmas.size + i_s
        chosen.add(default_cell)
    full_idx = np.array(sorted(chosen))
    full_cells = [cells[i] for i in full_idx]
    full_p, full_cpu = _fit_cells(X, problem, folds, kernel0, full_cells, weights, n)
    test_p, test_cpu = _full_fits(X, Xt, problem, kernel0, full_cells, weights, n)
    extra: dict[str, float] = {}
    if side_by_side:
        from accuracy_vs_peers import metrics

        for name, params in (("plain", {"calibration": "none"}), ("default", {})):
            t0 = time.process_time()
            e = WeightedSVMClassifier(n_jobs=1, **params).fit(X, codes)
            P = e.predict_proba(Xt)
            extra[f"cpu_{name}"] = time.process_time() - t0
            extra[f"L1_{name}"] = metrics(P, np.zeros(Xt.shape[0], int), P_true)["L1"]
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez(
        tmp, Cs=np.array(DEFAULT_C_GRID), sigmas=sigmas, y_cf=y_cf,
        rough_p=rough_p, rough_cpu=rough_cpu, full_idx=full_idx, full_p=full_p,
        full_cpu=full_cpu, test_p=test_p, test_cpu=test_cpu, p_true=P_true[:, 1],
        default_cell=default_cell, extra=json.dumps(extra),
    )  # fmt: skip
    os.replace(tmp, out)
    return out


# ------------------------------------------------------------------------------ report
def _l1(g, p_raw: np.ndarray, p_true: np.ndarray) -> float:
    """L1 over both classes of the recalibrated estimate ``g(p_raw)``."""
    return float(2.0 * np.mean(np.abs(g(p_raw) - p_true)))


def _one_se(terms: np.ndarray, order_key: np.ndarray) -> int:
    """Index of the smoothest cell (smallest ``order_key``) within one SE of the best mean."""
    mean = terms.mean(axis=1)
    best = int(np.argmin(mean))
    se = terms[best].std(ddof=1) / np.sqrt(terms.shape[1])
    ok = np.flatnonzero(mean <= mean[best] + se)
    return int(ok[np.argmin(order_key[ok])])


def evaluate_draw(z) -> dict[str, dict[str, float]]:
    """L1 and estimated CPU of every candidate rule on one cached draw."""
    from wsvmgui.ladder.recalibration import choose_map

    y, p_true = z["y_cf"], z["p_true"]
    Cs, sigmas = z["Cs"], z["sigmas"]
    S = sigmas.size
    full_idx = [int(i) for i in z["full_idx"]]
    rough = {k: [] for k in ("egkl", "brier_recal", "ll_recal")}
    for p in z["rough_p"]:
        t = _crit(p, y)
        for k in rough:
            rough[k].append(t[k].mean())
    rough = {k: np.array(v) for k, v in rough.items()}
    terms = {k: [] for k in ("egkl", "brier_raw", "brier_recal", "ll_recal")}
    maps, l1 = [], []
    for j, _ in enumerate(full_idx):
        t = _crit(z["full_p"][j], y)
        for k in terms:
            terms[k].append(t[k])
        g = choose_map(z["full_p"][j], y, seed=0)
        maps.append(g)
        l1.append(_l1(g, z["test_p"][j], p_true))
    terms = {k: np.array(v) for k, v in terms.items()}
    l1 = np.array(l1)
    # smoothest first: smallest C, then largest sigma
    smooth = np.array([(i // S) * 100 - (i % S) for i in full_idx], dtype=float)
    rough_cpu = float(z["rough_cpu"].sum())
    pos = {i: j for j, i in enumerate(full_idx)}

    def finalists(by: str, keep: int = KEEP) -> list[int]:
        return [pos[int(i)] for i in np.argsort(rough[by], kind="stable")[:keep]]

    out: dict[str, dict[str, float]] = {}

    def add(name: str, fin: list[int], pick: int | list[int], w=None) -> None:
        picks = [pick] if isinstance(pick, int) else pick
        cpu = rough_cpu + float(z["full_cpu"][fin].sum()) + float(z["test_cpu"][picks].sum())
        if len(picks) == 1:
            err = l1[picks[0]]
        else:
            w = np.ones(len(picks)) if w is None else np.asarray(w, float)
            q = sum(wi * maps[j](z["test_p"][j]) for wi, j in zip(w, picks, strict=True)) / w.sum()
            err = float(2.0 * np.mean(np.abs(q - p_true)))
        cell = full_idx[picks[0]]
        out[name] = {
            "L1": float(err),
            "cpu": cpu,
            "C": float(Cs[cell // S]),
            "sigma_i": int(cell % S),
        }

    for screen, keep in [(s, k) for s in ("egkl", "brier_recal", "ll_recal") for k in (3, 6)]:
        fin = finalists(screen, keep)
        for crit in ("egkl", "brier_recal", "ll_recal"):
            m = terms[crit][fin].mean(axis=1)
            order = [fin[i] for i in np.argsort(m, kind="stable")]
            tag = f"s:{screen}{keep}/c:{crit}"
            add(f"{tag}/min", fin, order[0])
            add(f"{tag}/one_se", fin, fin[_one_se(terms[crit][fin], smooth[fin])])
            for k in (2, 3):
                add(f"{tag}/avg{k}", fin, order[:k])
    for crit in ("egkl", "brier_recal", "ll_recal"):  # screening round only, no full round
        j = pos[int(np.argmin(rough[crit]))]
        add(f"rough:{crit}/min", [j], j)
    j_all = {c: int(np.argmin(terms[c].mean(axis=1))) for c in terms}
    for c in ("brier_recal", "ll_recal", "egkl"):
        add(f"allfull:{c}/min", list(range(len(full_idx))), j_all[c])
    add("oracle", list(range(len(full_idx))), int(np.argmin(l1)))
    d = int(z["default_cell"])
    if d in pos:
        add("default_cell", [pos[d]], pos[d])
    return out


def report(args) -> None:
    rows: dict[tuple[str, int], list[tuple[int, dict, dict | None, dict]]] = {}
    for n in args.sizes:
        for d in args.designs:
            for seed in args.seeds:
                f = CACHE / f"{d}_{n}_{seed}.npz"
                if not f.exists():
                    continue
                z = np.load(f)
                ev = evaluate_draw(z)
                rows.setdefault((d, n), []).append(
                    (seed, ev, _record(d, n, seed), json.loads(str(z["extra"])))
                )
    names = sorted({k for v in rows.values() for _, ev, _, _ in v for k in ev})
    table = {}
    for (d, n), draws in rows.items():
        base = [r["L1"] if r else ex.get("L1_default", np.nan) for _, _, r, ex in draws]
        plain = [
            r["cpu"] if r else np.nan
            for _, _, r, _ in [(s, e, _record(d, n, s, "wsvmgui_plain"), x) for s, e, _, x in draws]
        ]
        entry = {
            "seeds": [s for s, *_ in draws],
            "default_L1": float(np.mean(base)),
            "plain_cpu_record": float(np.nanmean(plain)),
            "rules": {},
        }
        for name in names:
            if not all(name in ev for _, ev, _, _ in draws):
                continue
            l1 = [ev[name]["L1"] for _, ev, _, _ in draws]
            cpu = [ev[name]["cpu"] for _, ev, _, _ in draws]
            entry["rules"][name] = {
                "L1": float(np.mean(l1)),
                "ratio": float(np.mean(l1) / np.mean(base)),
                "wins": int(sum(a < b for a, b in zip(l1, base, strict=True))),
                "cpu_est": float(np.mean(cpu)),
                "C": [ev[name]["C"] for _, ev, _, _ in draws],
            }
        sbs = [x for *_, x in draws if "cpu_plain" in x]
        entry["side_by_side"] = sbs
        table[f"{d}|{n}"] = entry
    out = HERE / "results" / "cell_choice_study.json"
    kept = json.loads(out.read_text()) if out.exists() else {}
    kept = {k: v for k, v in kept.items() if k == "implemented_candidate_record_runs"}
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps({"offline": table, **kept}, indent=1))
    os.replace(tmp, out)
    keys = list(table)
    lines = ["| rule | " + " | ".join(keys) + " | rows better |", "|---" * (len(keys) + 2) + "|"]
    lines.append(
        "| default (record) | " + " | ".join(f"{table[k]['default_L1']:.4f}" for k in keys) + " | |"
    )
    for name in names:
        if not all(name in table[k]["rules"] for k in keys):
            continue
        cells = [table[k]["rules"][name] for k in keys]
        better = sum(c["ratio"] < 1 for c in cells)
        lines.append(
            f"| {name} | "
            + " | ".join(
                f"{c['L1']:.4f} ({c['ratio']:.2f}, {c['wins']}/{len(table[k]['seeds'])}, "
                f"{c['cpu_est']:.1f}s)"
                for c, k in zip(cells, keys, strict=True)
            )
            + f" | {better} |"
        )
    for k in keys:
        lines.append("")
        lines.append(
            f"- {k}: seeds {table[k]['seeds']}, plain CPU (record) "
            f"{table[k]['plain_cpu_record']:.1f} s, side by side "
            + "; ".join(
                f"plain {x['cpu_plain']:.1f} s L1 {x['L1_plain']:.4f}, default "
                f"{x['cpu_default']:.1f} s L1 {x['L1_default']:.4f}"
                for x in table[k]["side_by_side"]
            )
        )
    head = [
        "# Cell choice on the calibration folds (issue 23 item 3; branch acc-cells)",
        "",
        "Generated by `benchmarks/cell_choice_study.py report` from the fits cached by its",
        "`cache` step (docstring).  Per rule and row: mean L1 over the cached seeds (ratio to",
        "the default's record on the same draws, seeds better, estimated CPU s: the sum of",
        "the fits the rule needs, each with its own kernel, so above what the library spends).",
        "`s:X k/c:Y/R`: screening round on the 3 folds ranked by X, its k best cells on the",
        "full folds, chosen by Y with rule R (`min`, `one_se`, `avgK`: the recalibrated",
        "estimates of the K best averaged); `rough:X/min`: the screening round's best by X",
        "(no full round); `allfull`: every cell fitted on the full folds; `oracle`: the best",
        "of those by test L1.",
        "",
    ]
    md = "\n".join(head + lines) + "\n"
    (HERE / "results" / "cell_choice_study.md").write_text(md)
    print(md)


def records(path: Path) -> None:
    """Per seed: the default's record against ``wsvmgui`` runs of a candidate in the
    ``accuracy_vs_peers.py --out-dir`` JSON ``path``; stored under the study's JSON key
    ``implemented_candidate_record_runs``."""
    old = json.loads((HERE / "results" / "accuracy_vs_peers.json").read_text())["runs"]
    new = json.loads(Path(path).read_text())["runs"]
    out = {}
    for d in (*DESIGNS, "breast_cancer"):
        key = "log_loss" if d == "breast_cancer" else "L1"
        for n in ("split",) if d == "breast_cancer" else ("100", "2000"):
            rows = []
            for s in range(5):
                o, v = old.get(f"{d}|{n}|{s}|wsvmgui"), new.get(f"{d}|{n}|{s}|wsvmgui")
                if not (o and v):
                    continue
                o, v = o[0], v[0]
                rows.append({
                    "seed": s, "default": o[key], "candidate": v[key], "cpu_default": o["cpu"],
                    "cpu_candidate": v["cpu"], "C_default": o.get("C"),
                    "C_candidate": v.get("C"), "map_candidate": v.get("calibration"),
                })  # fmt: skip
            out[f"{d}|{n}"] = {"metric": key, "seeds": rows}
    res = HERE / "results" / "cell_choice_study.json"
    state = json.loads(res.read_text()) if res.exists() else {}
    state["implemented_candidate_record_runs"] = out
    tmp = res.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    os.replace(tmp, res)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["cache", "one", "report", "records"])
    ap.add_argument("--records", default="/tmp/acc-cells/rec/accuracy_vs_peers.json")
    ap.add_argument("--designs", nargs="*", default=list(DESIGNS))
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--sizes", nargs="*", type=int, default=[2000])
    ap.add_argument("--side-by-side", nargs="*", type=int, default=[0, 1])
    args = ap.parse_args(argv)
    if args.what == "one":
        cache_draw(
            args.designs[0], args.sizes[0], args.seeds[0], args.seeds[0] in args.side_by_side
        )
        return 0
    if args.what == "cache":
        import subprocess

        for n in args.sizes:
            for seed in args.seeds:
                for d in args.designs:
                    if (CACHE / f"{d}_{n}_{seed}.npz").exists():
                        continue
                    t0 = time.time()
                    cmd = [
                        sys.executable,
                        __file__,
                        "one",
                        "--designs",
                        d,
                        "--seeds",
                        str(seed),
                        "--sizes",
                        str(n),
                        "--side-by-side",
                        *map(str, args.side_by_side),
                    ]
                    rc = subprocess.run(cmd).returncode
                    print(f"{d} n={n} seed={seed} rc={rc} {time.time() - t0:.0f}s", flush=True)
        return 0
    if args.what == "records":
        records(Path(args.records))
        return 0
    report(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
