"""wu2010_ex2 at n = 2000: can the pair scheme reach Platt's L1? (issue 23, eleventh sitting)

The benchmark of record has the multiclass default (pairwise, K = 3) at 0.93 of the best
SVM peer (Platt's) on wu2010_ex2 at the paper's n = 100 but 1.48 at n = 2000.  This study
bounds what the method can reach there, against the truth:

map oracles (``--report``, from the captures of :mod:`multiclass_midrung_study` in
    /tmp/acc-mcmid/, n = 100 seeds 0-9 and n = 2000 seeds 0-14): per pair, fitted on the
    test points' truth ``t = p_a / (p_a + p_b)`` weighted by ``p_a + p_b``, the best
    sigmoid of p_hat, the best monotone (isotonic) map of p_hat, of f_1/2, and the best
    logistic in (logit p_hat, f_1/2); coupled by the estimator's own ``_combine``.  Per pair:
    its error, and the coupled L1 with that pair alone replaced by its truth.
Platt's pairs (``--peer``, seeds 0-4, cached in :data:`CACHE`): the record's peer refitted at
    its recorded cell (:func:`wsvmgui.evaluation.peers.fit_calibrated_svc`; the coupled L1
    reproduces the record), its pairs' errors, its pairs coupled by our least squares, our
    pairs with one of Platt's swapped in, and the best monotone map of Platt's decision
    values (its ordering's bound).
cell oracles (``--cells``: every pair refitted at C in {0.1, 1, 3, 10, 100} x
    {0.5, 1, 1.5, 2.5, 4} sigma_M on all rows and on the 3 tuning folds, by
    :func:`multiclass_sixth_study.cache` with its grid widened; then ``--report``): per pair
    the cell of least error against the truth with the sigmoid fitted on its cross-fitted
    labels (a bound for any cell rule under today's map), and with the isotonic oracle (a
    bound for any cell and map of p_hat); the best shared cell.

Results: ``benchmarks/results/multiclass_ex2_study.{md,json}``
(docs/notes/multiclass_accuracy.md, "Eleventh sitting")::

    nice -n 5 python benchmarks/multiclass_ex2_study.py --cells 2000 --seeds 0 1 2 3 4
    nice -n 5 python benchmarks/multiclass_ex2_study.py --peer --seeds 0 1 2 3 4
    nice -n 5 python benchmarks/multiclass_ex2_study.py --cells 2000 --seeds 5 6 7
    nice -n 5 python benchmarks/multiclass_ex2_study.py --cells paper
    nice -n 5 python benchmarks/multiclass_ex2_study.py --peer --seeds 5 6 7 8 9 --records \
        benchmarks/results/multiclass_ex2_study_records.json
    nice -n 5 python benchmarks/multiclass_ex2_study.py --report --records \
        benchmarks/results/multiclass_ex2_study_records.json

``--records``: runs beside the record's (the default and the peers at n = 200, 500, 1000,
the peers at n = 2000 seeds 5-9); ``--markdown`` rewrites the report from the stored JSON.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import multiclass_large_n_study as large  # noqa: E402
import multiclass_midrung_study as mid  # noqa: E402
import multiclass_sixth_study as six  # noqa: E402

DATA = "wu2010_ex2"
CACHE = Path("/tmp/acc-mcex2")
OUT = ROOT / "benchmarks" / "results" / "multiclass_ex2_study"
#: The cell oracles' grid: sigma factors (of sigma_M) and the cells (indices into
#: ``six.CS`` x :data:`SF`): C in {0.1, 1, 3, 10, 100} x {0.5, 1, 1.5, 2.5, 4} sigma_M.
SF = (0.25, 0.5, 1.0, 1.5, 2.5, 4.0)
CELLS = [(i, j) for i in (0, 2, 3, 4, 6) for j in (1, 2, 3, 4, 5)]
#: The map oracles' columns.
ORACLES = ("default", "oracle_sig", "oracle_p", "oracle_d", "oracle_pd")


def _wide_grid() -> None:
    """Point the reused studies at :data:`SF` / :data:`CELLS` (module globals they read)."""
    six.SF, six.COARSE, large.COARSE = SF, CELLS, CELLS


# ------------------------------------------------------------------------- map oracles
def _iso(x: np.ndarray, t: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The weighted isotonic fit of ``t`` on ``x`` (both (m,)), at ``x``."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=1e-6, y_max=1 - 1e-6, out_of_bounds="clip")
    return iso.fit(x, t, sample_weight=w).predict(x)


def _iso_at(x: np.ndarray, t: np.ndarray, w: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The weighted isotonic fit of ``t`` on ``x`` (both (m,)), at ``at`` (k,)."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=1e-6, y_max=1 - 1e-6, out_of_bounds="clip")
    return iso.fit(x, t, sample_weight=w).predict(at)


def oracle_maps(entry: dict) -> dict[str, list[np.ndarray]]:
    """Each pair's test estimate (m,) under today's map and the truth-fitted oracles."""
    from scipy.special import logit

    from wsvmgui.ladder import recalibration as rc

    P = entry["P_true"]
    out: dict[str, list] = {k: [] for k in ORACLES}
    for pr in entry["pairs"]:
        t, w = mid._truth(P, pr), mid._pair_weight(P, pr)
        lp = logit(np.clip(pr["p_t"], rc.P_EPS, 1 - rc.P_EPS))
        out["default"].append(pr["map"](pr["p_t"]))
        out["oracle_sig"].append(mid._soft_sigmoid(pr["p_t"], t, w)(pr["p_t"]))
        out["oracle_p"].append(_iso(pr["p_t"], t, w))
        out["oracle_d"].append(_iso(pr["d_t"], t, w))
        c, a, b = mid._soft_logistic(np.column_stack([lp, pr["d_t"]]), t, w)
        out["oracle_pd"].append(1.0 / (1.0 + np.exp(-(c + a * lp + b * pr["d_t"]))))
    return out


def pair_error(entry: dict, pr: dict, q: np.ndarray) -> float:
    """Mean |q - t| over the test points of the pair's two classes (section 1's measure)."""
    P, a, b = entry["P_true"], pr["pos"], pr["neg"]
    at = np.isin(entry["yt"], (a, b))
    return float(np.mean(np.abs(q[at] - mid._truth(P[at], pr))))


def l1(entry: dict, qs: list[np.ndarray]) -> float:
    import accuracy_vs_peers as avp

    return float(avp.metrics(mid.couple_rows(entry, qs), entry["yt"], entry["P_true"])["L1"])


def map_row(entry: dict, platt: dict | None) -> dict:
    """One draw: coupled L1 and per-pair errors of today's map and the oracles; the L1 with
    each pair alone at its truth; with ``platt`` (:func:`peer_pairs`), Platt's pairs."""
    maps = oracle_maps(entry)
    P, pairs = entry["P_true"], entry["pairs"]
    row = {"n": entry["n"], "seed": entry["seed"], "record": entry["default"]["L1"]}
    row["names"] = [pr["name"] for pr in pairs]
    sig_m = six_sigma_m(entry["n"], entry["seed"])
    row["cells"] = [(pr["C"], pr["sigma"] / sig_m) for pr in pairs]
    row["maps"] = [getattr(pr["map"], "name", "?") for pr in pairs]
    for k, qs in maps.items():
        row[k] = l1(entry, qs)
        row[f"err_{k}"] = [pair_error(entry, pr, q) for pr, q in zip(pairs, qs, strict=True)]
    truth = [mid._truth(P, pr) for pr in pairs]
    row["one_true"] = [
        l1(entry, [truth[j] if j == i else q for j, q in enumerate(maps["default"])])
        for i in range(len(pairs))
    ]
    if platt is not None:
        qp = platt["q"]
        row["platt_record"], row["platt_refit"] = platt["record"], platt["L1"]
        row["platt_ls"] = l1(entry, qp)
        row["err_platt"] = [pair_error(entry, pr, q) for pr, q in zip(pairs, qp, strict=True)]
        row["one_platt"] = [
            l1(entry, [qp[j] if j == i else q for j, q in enumerate(maps["default"])])
            for i in range(len(pairs))
        ]
        iso = [
            _iso(d, mid._truth(P, pr), mid._pair_weight(P, pr))
            for pr, d in zip(pairs, platt["d"], strict=True)
        ]
        row["platt_oracle_d"] = l1(entry, iso)
        row["err_platt_oracle_d"] = [
            pair_error(entry, pr, q) for pr, q in zip(pairs, iso, strict=True)
        ]
    return row


# ---------------------------------------------------------------------- Platt's pairs
def peer_pairs(n: int | None, seed: int, runs: dict | None = None) -> dict:
    """The record's Platt peer refitted at its recorded cell on one draw; its pairs'
    estimates (our pairs' orientation and order, each (m,)) and decision values, cached."""
    path = CACHE / f"platt_{n or 'paper'}_{seed}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    import accuracy_vs_peers as avp
    from scipy.special import expit

    from wsvmgui.evaluation.peers import _ovo, fit_calibrated_svc

    X, codes, Xt, yt, P, K = avp.load(DATA, n, seed, avp.RECORD_N_TEST)
    size = str(codes.size)
    runs = mid._record() if runs is None else runs
    rec = next(r for r in runs[f"{DATA}|{size}|{seed}|svm"] if r["method"] == "platt")
    fit = fit_calibrated_svc(X, codes, rec["C"], rec["g"] / X.shape[1], methods=("platt",))
    d = _ovo(fit.svc, Xt)
    cap = pickle.loads(mid._path(DATA, n, seed).read_bytes())
    q, dd = [], []
    for pr in cap["pairs"]:
        for col, (a, b, A, B) in enumerate(fit.calibrators["platt"]):
            if {a, b} == {pr["pos"], pr["neg"]}:
                r = np.clip(expit(-(A * d[:, col] + B)), 1e-7, 1 - 1e-7)  # P(a | a or b)
                q.append(r if pr["pos"] == a else 1.0 - r)
                da = -np.sign(A) * d[:, col]  # increasing in P(a | a or b)
                dd.append(da if pr["pos"] == a else -da)
    out = {
        "q": q, "d": dd, "record": rec["L1"], "C": rec["C"], "g": rec["g"],
        "L1": float(avp.metrics(fit.predict_proba("platt", Xt), yt, P)["L1"]),
    }  # fmt: skip
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


# ------------------------------------------------------------------------ cell oracles
#: Label-fitted maps of the cell oracles: name -> ``fit(p, y)`` returning a map.
def _label_maps() -> dict:
    from wsvmgui.estimators.multiclass import PAIR_LARGE_MAPS
    from wsvmgui.ladder.recalibration import choose_map, fit_map

    return {
        "sig": lambda p, y: fit_map("sigmoid", p, y, seed=0),
        "today": lambda p, y: choose_map(p, y, maps=PAIR_LARGE_MAPS, seed=0),
        "spline": lambda p, y: fit_map("spline", p, y, seed=0),
        "isotonic": lambda p, y: fit_map("isotonic", p, y, seed=0),
    }


#: The cell oracles' maps: the label-fitted ones; the isotonic fit to the truth at the
#: test points (``iso_truth``) and at the cross-fitted training rows (``iso_truth_cf``:
#: the fold fits' p_hat standing in for the full fit's, without label noise).
CELL_MAPS = ("sig", "today", "spline", "isotonic", "iso_truth_cf", "iso_truth")
#: A fixed cell (C, sigma factor) reported for every map.
FIXED = (100.0, 4.0)


def cell_row(path: Path) -> dict:
    """One cached draw of ``--cells``: the replayed default; per map of
    :data:`CELL_MAPS` the per-pair truth-oracle cell, the best shared cell and the
    :data:`FIXED` cell; computable rules (per pair the cell of least 5-fold CV log loss of
    the map recalibrated on its cross-fitted labels, for the sigmoid and the spline)."""
    from wsvmgui.evaluation.metrics import l1_error
    from wsvmgui.ladder.recalibration import recalibrated_terms
    from wsvmgui.ladder.search import log_loss_terms

    _wide_grid()
    draw = large.load_draw(str(path))
    subs, P, est = draw["subs"], draw["P"], draw["est"]
    out: dict = {"record": float(l1_error(draw["P_def"], P))}
    fits = _label_maps()

    def couple(qs: list[np.ndarray]) -> float:
        return float(l1_error(large._combined(draw, qs), P))

    def name_of(c: int) -> list[float]:
        return [six.CS[CELLS[c][0]], SF[CELLS[c][1]]]

    P_train = _train_truth(path)
    q: dict[str, list] = {k: [] for k in CELL_MAPS}
    err: dict[str, list] = {k: [] for k in CELL_MAPS}
    for s in subs:
        tot = P[:, s["a"]] + P[:, s["b"]]
        t = P[:, s["a"]] / np.maximum(tot, 1e-300)
        tot_cf = P_train[s["rows"], s["a"]] + P_train[s["rows"], s["b"]]
        t_cf = P_train[s["rows"], s["a"]] / np.maximum(tot_cf, 1e-300)
        for k in CELL_MAPS:
            if k == "iso_truth":
                qk = [_iso(s["tp"][c], t, tot) for c in range(len(CELLS))]
            elif k == "iso_truth_cf":
                qk = [_iso_at(s["fp"][c], t_cf, tot_cf, s["tp"][c]) for c in range(len(CELLS))]
            else:
                qk = [fits[k](s["fp"][c], s["y"])(s["tp"][c]) for c in range(len(CELLS))]
            q[k].append(qk)
            err[k].append([float(np.sum(tot * np.abs(v - t)) / tot.sum()) for v in qk])
    # the default's own cells (the fitted pairs' C and sigma) under today's map: the check
    _, n, seed = path.stem.rsplit("_", 2)
    sf = np.array(SF) * six_sigma_m(None if n == "None" else int(n), int(seed))
    own = []
    for f in est.subproblems_.fitted:
        C = 1.0 / (2.0 * f.n_train * f.lam)
        i = int(np.argmin(np.abs(np.log(np.array(six.CS)) - np.log(C))))
        j = int(np.argmin(np.abs(sf - f.sigma)))
        own.append(CELLS.index((i, j)) if (i, j) in CELLS else None)  # 0.25 sigma_M: not in
    out["own_cells"] = [None if c is None else name_of(c) for c in own]
    out["own_today"] = (
        couple([q["today"][k][c] for k, c in enumerate(own)]) if None not in own else np.nan
    )
    fixed = CELLS.index((six.CS.index(FIXED[0]), SF.index(FIXED[1])))
    for k in CELL_MAPS:
        best = [int(np.argmin(e)) for e in err[k]]
        out[f"oracle_{k}"] = couple([q[k][j][c] for j, c in enumerate(best)])
        out[f"cells_{k}"] = [name_of(c) for c in best]
        each = [couple([q[k][j][c] for j in range(len(subs))]) for c in range(len(CELLS))]
        out[f"shared_{k}"] = float(np.min(each))
        out[f"shared_cell_{k}"] = name_of(int(np.argmin(each)))
        out[f"fixed_{k}"] = each[fixed]
        out[f"each_{k}"] = each
    for k, name in (("sig", "sigmoid"), ("spline", "spline")):
        pick = []
        for s in subs:
            loss = [recalibrated_terms(s["fp"][c], s["y"], name, log_loss_terms).mean()
                    for c in range(len(CELLS))]  # fmt: skip
            pick.append(int(np.argmin(loss)))
        out[f"rule_{k}"] = couple([q[k][j][c] for j, c in enumerate(pick)])
        out[f"cells_rule_{k}"] = [name_of(c) for c in pick]
    return out


def _train_truth(path: Path) -> np.ndarray:
    """The true probabilities at the training rows of a ``--cells`` draw; (n, K)."""
    from wsvmgui.evaluation.designs import get_design

    _, n, seed = path.stem.rsplit("_", 2)
    d = get_design(DATA)
    return d.sample(d.default_n if n == "None" else int(n), int(seed)).p


def six_sigma_m(n: int | None, seed: int) -> float:
    """sigma_M of a draw (n None: the paper's), as the estimator and
    :func:`multiclass_sixth_study.cache` compute it (seed 0)."""
    import accuracy_vs_peers as avp

    from wsvmgui.solvers.kernels import default_sigma_grid

    X, codes, *_ = avp.load(DATA, n, seed, 10)
    return float(default_sigma_grid(X, codes, (1.0,), 0)[0])


# ------------------------------------------------------------------------------ report
def _peer(runs: dict, n: int, seeds: list[int], method: str = "wsvmgui") -> float:
    """Mean L1 of ``method`` (or the best SVM peer: ``"peer"``) over ``seeds``; NaN if any
    is missing."""
    if method == "peer":
        return mid._peer_mean(runs, DATA, n, seeds, "L1")
    v = [mid._record_default(runs, DATA, n, s, "L1") for s in seeds]
    return float(np.mean(v))


def report(rows: dict, runs: dict) -> str:
    """Markdown of the study's rows (``rows["maps"]``, ``rows["cells"]``)."""
    s04 = [0, 1, 2, 3, 4]
    lines = [
        "# wu2010_ex2: the pair scheme against Platt, bounded on the truth",
        "",
        "(`benchmarks/multiclass_ex2_study.py`; docs/notes/multiclass_accuracy.md, eleventh",
        "sitting.)  L1 against the truth, 10,000 test points, the record's draws.",
        "",
        "## The rate: the default and the best SVM peer by n (seeds 0-4)",
        "",
        "| n | default | best SVM peer | default / peer |",
        "|---|---|---|---|",
    ]
    for n in sorted({int(k.split("|")[1]) for k in runs if k.startswith(f"{DATA}|")}):
        d, p = _peer(runs, n, s04), _peer(runs, n, s04, "peer")
        if np.isfinite(d) and np.isfinite(p):
            lines.append(f"| {n} | {d:.4f} | {p:.4f} | {d / p:.3f} |")
    lines += [
        "",
        "## Map oracles (per pair, fitted on the test truth), coupled by `_combine`",
        "",
        "Mean L1 of the replayed default; the others: mean over the default's (draws better /",
        "worse) and, seeds 0-4, over the record's best SVM peer.  `oracle_sig`: best sigmoid of",
        "p_hat; `oracle_p` / `oracle_d`: best monotone map of p_hat / f_1/2; `oracle_pd`: best",
        "logistic in (logit p_hat, f_1/2) (slopes >= 0).",
        "",
        "| n | seeds | default | / peer | "
        + " | ".join(f"{k} | {k} / peer" for k in ORACLES[1:])
        + " |",
        "|" + "---|" * (4 + 2 * (len(ORACLES) - 1)),
    ]
    maps = rows["maps"]
    for n in sorted({r["n"] for r in maps}):
        for lo, hi, sub in mid.seed_blocks([r for r in maps if r["n"] == n]):
            base = np.array([r["default"] for r in sub])
            peer = _peer(runs, n, [r["seed"] for r in sub], "peer")
            cells = [f"{base.mean():.4f}", f"{base.mean() / peer:.2f}"]
            for k in ORACLES[1:]:
                v = np.array([r[k] for r in sub])
                cells += [mid.ratio_cell(v, base), f"{v.mean() / peer:.2f}"]
            lines.append(f"| {n} | {lo}-{hi} ({len(sub)}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Per pair (all draws of the size; `pair` = positive | negative, positive)",
        "",
        "Error: mean |q - t| over the test points of the pair's two classes.  `L1, pair at",
        "truth`: the coupled L1 with that pair alone replaced by its true conditional, over the",
        "default's.  Platt columns (the draws with the record's peer runs: seeds 0-4, at",
        "n = 2000 0-9): the peer refitted at its recorded cell; `L1,",
        "Platt's pair`: ours with that pair alone replaced by Platt's.",
        "",
        "| n | pair | err default | err oracle_sig | err oracle_p | err oracle_d | err Platt "
        "| err Platt oracle_d | L1, pair at truth | L1, Platt's pair | maps taken "
        "| cells (C, sigma / sigma_M) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sorted({r["n"] for r in maps}):
        sub = [r for r in maps if r["n"] == n]
        pl = [r for r in sub if "err_platt" in r]
        for i, name in enumerate(sub[0]["names"]):

            def m(k, rs=sub, i=i):
                return float(np.mean([r[k][i] for r in rs])) if rs else np.nan

            base = np.mean([r["default"] for r in sub])
            base_pl = np.mean([r["default"] for r in pl]) if pl else np.nan
            took = {}
            for r in sub:
                took[r["maps"][i]] = took.get(r["maps"][i], 0) + 1
            cells = {}
            for r in sub:
                c = (f"{r['cells'][i][0]:.3g}", f"{r['cells'][i][1]:.3g}")
                cells[c] = cells.get(c, 0) + 1
            lines.append(
                f"| {n} | {name} | {m('err_default'):.4f} | {m('err_oracle_sig'):.4f} | "
                f"{m('err_oracle_p'):.4f} | {m('err_oracle_d'):.4f} | "
                f"{m('err_platt', pl):.4f} | {m('err_platt_oracle_d', pl):.4f} | "
                f"{m('one_true') / base:.3f} | {m('one_platt', pl) / base_pl:.3f} | "
                + ", ".join(f"{k} {v}" for k, v in took.items())
                + " | "
                + ", ".join(f"({a}, {b}) x{v}" for (a, b), v in sorted(cells.items()))
                + " |"
            )
    lines += [
        "",
        "## Platt's pairs (the draws with peer runs: seeds 0-4, at n = 2000 seeds 0-9)",
        "",
        "Mean L1: the record's Platt, its refit here (must agree), Platt's pairs coupled by our",
        "least squares, the best monotone map of Platt's decision values per pair (its",
        "ordering's bound) coupled by ours; the default and its `oracle_p` / `oracle_d` beside.",
        "",
        "| n | Platt (record) | Platt (refit) | Platt's pairs, our coupling | Platt oracle_d "
        "| default | default oracle_p | default oracle_d |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in sorted({r["n"] for r in maps}):
        pl = [r for r in maps if r["n"] == n and "platt_ls" in r]
        if pl:
            ks = ("platt_record", "platt_refit", "platt_ls", "platt_oracle_d", "default",
                  "oracle_p", "oracle_d")  # fmt: skip
            lines.append(
                f"| {n} | " + " | ".join(f"{np.mean([r[k] for r in pl]):.4f}" for k in ks) + " |"
            )
    cells = rows.get("cells", [])
    if cells:
        lines += [
            "",
            "## Cell oracles (each pair refitted at C {0.1, 1, 3, 10, 100} x {0.5, 1, 1.5, 2.5, 4}"
            " sigma_M)",
            "",
            "Mean L1 over the draws' best SVM peer (the record's, same draws; the default's",
            "row first).  Maps: `sig` the sigmoid and `today` today's map (the sigmoid or the",
            "guarded spline), `spline`, `isotonic`, all fitted on the pair's cross-fitted labels;",
            "`iso_truth_cf` the isotonic fit to the true conditionals at the cross-fitted rows",
            "(no label noise; the fold fits' p_hat stands in for the full fit's);",
            "`iso_truth` the isotonic fit to the truth at the test points.  Columns: `oracle`",
            "per pair the cell of least truth error; `shared` the one cell of least coupled L1;",
            f"`fixed` the cell (C, sigma) = {FIXED}; `rule` per pair the cell of least 5-fold",
            "CV log loss of the map recalibrated on its labels (a computable rule).",
            "",
            f"Draws: n = {sorted({r['n'] for r in cells})}, seeds "
            f"{[r['seed'] for r in cells]}.  The replayed default (its own cells, today's map)"
            " equals the record on every draw: max |difference| "
            f"{np.nanmax([abs(r['own_today'] - r['record']) for r in cells]):.1e} (draws"
            " whose default took a cell off this grid, 0.25 sigma_M, not checked: "
            f"{[(r['n'], r['seed']) for r in cells if not np.isfinite(r['own_today'])]}).",
            "",
            "| n | map | oracle / peer | shared / peer | fixed / peer | rule / peer | "
            "oracle / default | cells of the oracle (C, sigma factor) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for n, sub in [
            (n, sub)
            for n in sorted({r["n"] for r in cells})
            for _, _, sub in mid.seed_blocks([r for r in cells if r["n"] == n])
        ]:
            pk = float(np.mean([_peer(runs, n, [r["seed"]], "peer") for r in sub]))
            d = float(np.mean([r["record"] for r in sub]))
            seeds = f"{n}, seeds {sub[0]['seed']}-{sub[-1]['seed']}"
            lines.append(f"| {seeds} | default (record) | {d / pk:.2f} | | | | 1.000 | |")
            for k in CELL_MAPS:

                def m(key, sub=sub):
                    return float(np.mean([r[key] for r in sub]))

                rule = f"{m(f'rule_{k}') / pk:.2f}" if f"rule_{k}" in sub[0] else ""
                cnt: dict = {}
                for r in sub:
                    for c in r[f"cells_{k}"]:
                        cnt[tuple(c)] = cnt.get(tuple(c), 0) + 1
                lines.append(
                    f"| {seeds} | {k} | {m(f'oracle_{k}') / pk:.2f} | "
                    f"{m(f'shared_{k}') / pk:.2f} | {m(f'fixed_{k}') / pk:.2f} | {rule} | "
                    f"{m(f'oracle_{k}') / d:.3f} | "
                    + ", ".join(f"({a:g}, {b:g}) x{v}" for (a, b), v in sorted(cnt.items()))
                    + " |"
                )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", metavar="N", help="cache every cell's fits at this n ('paper')")
    ap.add_argument("--peer", action="store_true", help="refit Platt's pairs (n = 100, 2000)")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--markdown", action="store_true", help="the report from the stored JSON")
    ap.add_argument("--records", nargs="*", default=[], help="more runs (JSON) for the rates")
    args = ap.parse_args(argv)
    if args.cells:
        _wide_grid()
        n = None if args.cells == "paper" else int(args.cells)
        for seed in args.seeds:
            six.cache(str(CACHE / "cells"), DATA, n, seed, True)
    runs = mid._record()
    for f in args.records:
        runs.update(json.loads(Path(f).read_text())["runs"])
    if args.peer:
        for n in (None, 2000):
            for seed in args.seeds:
                if f"{DATA}|{n or 100}|{seed}|svm" in runs:
                    peer_pairs(n, seed, runs)
    if args.markdown:
        rows = json.loads(OUT.with_suffix(".json").read_text())
        OUT.with_suffix(".md").write_text(report(rows, runs))
    if args.report:
        rows: dict = {"maps": [], "cells": []}
        for path in sorted(mid.CACHE.glob(f"{DATA}_*.pkl")):
            entry = pickle.loads(path.read_bytes())
            n = None if entry["n"] == 100 else entry["n"]
            pp = CACHE / f"platt_{n or 'paper'}_{entry['seed']}.pkl"
            rows["maps"].append(
                map_row(entry, peer_pairs(n, entry["seed"]) if pp.exists() else None)
            )
            print(path.name, {k: round(rows["maps"][-1][k], 4) for k in ORACLES}, flush=True)
        for path in sorted((CACHE / "cells").glob(f"{DATA}_*.npz")):
            r = cell_row(path)
            _, n, seed = path.stem.rsplit("_", 2)
            r.update(n=100 if n == "None" else int(n), seed=int(seed))
            rows["cells"].append(r)
            print(path.name, {k: v for k, v in r.items() if not k.startswith("each")}, flush=True)
        rows["maps"].sort(key=lambda r: (r["n"], r["seed"]))
        rows["cells"].sort(key=lambda r: (r["n"], r["seed"]))
        OUT.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=float))
        OUT.with_suffix(".md").write_text(report(rows, runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
