"""Where the count measure saturates, and estimates that order the points it is surest of
(issue 23: breast cancer's log loss, 1.10x the best SVM peer over splits 0-9).

The binary default reads ``p_hat`` off the exact path in pi (the measure of
``{pi : f_pi(x) > 0}``) and maps it with the 5-fold CV choice among the sigmoid, isotonic
and plateau maps; on breast cancer the sigmoid's slope sends most points past the final
bounds ``[1/(2(m+1)), 1 - 1/(2(m+1))]``, where they are no longer ordered.  Stage
``--fit CASES`` fits the default (``accuracy_vs_peers.method_estimator("wsvmgui")``, the
record's draws) once per case and stores, in ``/tmp/acc-bcsat/cache/``: the cross-fitted
pairs the map is fitted on (captured at ``binary.fit_calibration``), each pair's fold fit's
decision values at the weights :data:`Q` and at the grid's end weights, the same of the
final fit at the test rows, the raw and returned test estimates, the truth (designs) and,
for breast cancer, the record's best SVM peer refitted at its recorded cell.  Stage
``--eval`` replays the default's map on the cached pairs (it reproduces ``predict_proba``)
and scores the candidates of :func:`candidates` paired with it; ``--gap`` splits breast
cancer's gap to the peer into the points at the final bounds and the rest.  ``--report``
writes ``benchmarks/results/saturation_study.{md,json}``::

    nice -n 5 python benchmarks/saturation_study.py --fit bc04 dev100 bc59 conf100 more100 \
        n2000 pairs
    python benchmarks/saturation_study.py --eval --gap
    nice -n 5 python benchmarks/saturation_study.py --pairs
    nice -n 5 python benchmarks/saturation_study.py --cpu
    python benchmarks/saturation_study.py --report --record DIR/accuracy_vs_peers.json

``--pairs`` fits the default and ``calibration="auto_midrung"`` (the library's) on the
two-class sub-problems :data:`PAIRS` of iris, wine and digits, which were neither
development nor confirmation data; ``--fit pairs`` caches them for the replay.
``--cpu``: ``wsvmgui_plain``, the default and ``wsvmgui_midrung`` side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULTS = ROOT / "benchmarks" / "results"
CACHE = Path("/tmp/acc-bcsat/cache")
RECORD = ROOT / "benchmarks" / "results" / "accuracy_vs_peers.json"
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
N_TEST = 10_000
#: Weights at which the fold fits' and the final fit's decision values are kept.
Q = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99)
CASESETS = {
    "bc04": [("breast_cancer", None, s) for s in range(5)],
    "bc59": [("breast_cancer", None, s) for s in range(5, 10)],
    "dev100": [(d, 100, s) for d in DESIGNS for s in range(3)],
    "conf100": [(d, 100, s) for d in DESIGNS for s in range(5, 10)],
    "more100": [(d, 100, s) for d in DESIGNS for s in (3, 4)],
    "n2000": [(d, 2000, s) for d in DESIGNS for s in range(2)],
}


def _load(data: str, n, seed: int):
    """``accuracy_vs_peers.load``'s draw, or for a two-class sub-problem of
    :data:`PAIRS` (``"<set>_<a>v<b>"``) its stratified 70/30 split, standardised on the
    training part: X, codes, Xt, codes_t, P_true_t (None), K."""
    import accuracy_vs_peers as avp

    if "v" not in data.rsplit("_", 1)[-1] or data in DESIGNS:
        return avp.load(data, n, seed, N_TEST)
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    name, ab = data.rsplit("_", 1)
    a, b = (int(v) for v in ab.split("v"))
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    keep = (y == a) | (y == b)
    X, y = X[keep], (y[keep] == b).astype(int)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    sc = StandardScaler().fit(Xa)
    return sc.transform(Xa), ya, sc.transform(Xb), yb, None, 2


def _path(data: str, n, seed: int) -> Path:
    return CACHE / f"{data}_{n or 'split'}_{seed}.pkl"


def _peer(X, codes, Xt, data: str, seed: int):
    """The record's best SVM peer of this split (least test log loss), refitted: (m, 2)."""
    from wsvmgui.evaluation.peers import fit_calibrated_svc

    rec = json.loads(RECORD.read_text())
    rows = rec["runs"].get(f"{data}|split|{seed}|svm")
    if not rows:
        return None, None
    best = min(rows, key=lambda r: r["log_loss"])
    cal = fit_calibrated_svc(X, codes, best["C"], best["g"] / X.shape[1],
                             venn=best["method"] == "venn_abers")  # fmt: skip
    return cal.predict_proba(best["method"], Xt), best


def fit_stage(which: list[str]) -> None:
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import binary
    from wsvmgui.ladder import recalibration as rc

    fits: list = []
    pairs: list = []
    orig_folds, orig_cal = rc.fold_fits, binary.fit_calibration

    def folds(*a, **k):
        for fit, te, y_te in orig_folds(*a, **k):
            fits.append((fit, te))
            yield fit, te, y_te

    def cal(name, p, y, seed=0):
        pairs.append((np.array(p), np.array(y), name, seed))
        return orig_cal(name, p, y, seed=seed)

    rc.fold_fits, binary.fit_calibration = folds, cal
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        for key in which:
            for data, n, seed in CASESETS[key]:
                out = _path(data, n, seed)
                if out.exists():
                    continue
                X, codes, Xt, yt, P_true, K = _load(data, n, seed)
                est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
                fits.clear()
                pairs.clear()
                t0 = time.process_time()
                est.fit(X, codes)
                P = est.predict_proba(Xt)
                cpu = time.process_time() - t0
                w = est.weights_
                q = np.array(sorted(set(Q) | {float(w[0]), float(w[-1])}))
                p_cf, y_cf, cname, cseed = pairs[0]
                F_cf = np.vstack([
                    np.asarray(f.ladder.path.decision_at(f.kernel(X[te], X[f.support]), q))
                    for f, te in fits
                ])  # fmt: skip
                Xc = est._check_X(Xt)
                raw = est._raw_estimate(Xc).p
                F_t = np.vstack([
                    np.asarray(est.ladder_.path.decision_at(Kb, q))
                    for Kb in est._kernel_blocks(Xc)
                ])  # fmt: skip
                case = {"data": data, "n": n, "seed": seed, "q": q, "weights": w,
                        "p_cf": p_cf, "y_cf": y_cf, "F_cf": F_cf, "cal_name": cname,
                        "cal_seed": cseed, "map": est.calibration_, "raw": raw, "F_t": F_t,
                        "P": P, "yt": yt, "P_true": P_true, "cpu": cpu}  # fmt: skip
                if data == "breast_cancer":
                    case["P_peer"], case["peer"] = _peer(X, codes, Xt, data, seed)
                with out.with_suffix(".tmp").open("wb") as fh:
                    pickle.dump(case, fh)
                out.with_suffix(".tmp").replace(out)
                print(f"{time.strftime('%H:%M:%S')} {out.name} cpu {cpu:.1f} s", flush=True)
    finally:
        rc.fold_fits, binary.fit_calibration = orig_folds, orig_cal


def load_case(data: str, n, seed: int) -> dict:
    with _path(data, n, seed).open("rb") as fh:
        return pickle.load(fh)


# ------------------------------------------------------------------- the replay
def _losses(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-point log loss of (m, 2) probabilities for labels ``y`` (m,)."""
    return -np.log(np.maximum(P[np.arange(y.size), y], 1e-15))


def _score(q: np.ndarray, case: dict) -> float:
    """L1 against the truth (designs) or log loss (real set) of P(class 1) = ``q`` (m,)."""
    import accuracy_vs_peers as avp

    if case["P_true"] is not None:  # the record's L1 (both classes' absolute errors)
        return float(avp.metrics(np.c_[1 - q, q], case["yt"], case["P_true"])["L1"])
    return float(np.mean(_losses(np.c_[1 - q, q], case["yt"])))


def _col(case: dict, pi: float, which: str) -> np.ndarray:
    return case[which][:, list(case["q"]).index(pi)]


def _sig(x: np.ndarray, y: np.ndarray):
    """Platt's sigmoid in ``x`` (the sigmoid map of ``expit(x)``), final bounds as the maps'."""
    from wsvmgui.ladder import recalibration as rc
    from wsvmgui.ladder.midrung import midrung_score

    g = rc.fit_map("sigmoid", midrung_score(x), y)
    return lambda z: g(midrung_score(z))


def _ext_features(p: np.ndarray, F: np.ndarray, case: dict) -> tuple[np.ndarray, np.ndarray]:
    """The end-rung extension: logit of p clipped to the grid's end weights, and the end
    rung's decision value beyond them (f at pi_1 where p < pi_1, at pi_{M-1} where
    p > pi_{M-1}, signed as the side; 0 inside)."""
    from scipy.special import logit

    w = case["weights"]
    q = list(case["q"])
    i1, i2 = q.index(float(w[0])), q.index(float(w[-1]))
    lo = np.where(p < w[0], np.minimum(F[:, i1], 0.0), 0.0)
    hi = np.where(p > w[-1], np.maximum(F[:, i2], 0.0), 0.0)
    return logit(np.clip(p, w[0], w[-1])), lo + hi


def candidates(case: dict) -> dict[str, np.ndarray]:
    """Every candidate's P(class 1) at the test rows, fitted on the case's cached pairs.

    ``default``: today's ``auto`` (replayed: equal to ``predict_proba``);
    ``midrung_rule``: ``calibration="auto_midrung"`` (the middle rung's sigmoid where more
    than half of the pairs lie outside the end weights, else the default); ``mid``: the
    middle rung's sigmoid always; ``mid2``: a logistic in (logit p_hat, f_1/2), slopes
    >= 0; ``ext_fit``: the end-rung extension (the count inside the end weights, the end
    rung's decision value beyond them) in a logistic with a slope for each, >= 0;
    ``ext_auto``: the extended score ``expit(logit(clip p) + f_end)`` into today's
    ``auto`` choice; ``rule_ext``: the rule with ``ext_fit`` instead of the middle rung;
    ``rule_mid2``: the rule with ``mid2``; ``rule_cv``: the rule with the 5-fold CV choice
    among today's ``auto``, ``mid`` and ``mid2`` (:func:`_cv_choice`).
    """
    from scipy.special import expit, logit

    from wsvmgui.estimators import binary
    from wsvmgui.ladder import recalibration as rc
    from wsvmgui.ladder.midrung import saturated

    p, y, raw = case["p_cf"], case["y_cf"], case["raw"]
    seed = case["cal_seed"]
    out: dict[str, np.ndarray] = {}
    g = rc.fit_calibration(binary.AUTO_CALIBRATION, p, y, seed=seed)
    out["default"] = g(raw)
    d_cf, d_t = _col(case, 0.5, "F_cf"), _col(case, 0.5, "F_t")
    out["mid"] = _sig(d_cf, y)(d_t)
    sat = saturated(p, case["weights"])
    out["midrung_rule"] = out["mid"] if sat else out["default"]
    floor = 1.0 / (2.0 * (y.size + 1))
    lp = logit(np.clip(p, rc.P_EPS, 1 - rc.P_EPS))
    c, a, b = rc._logistic(np.c_[lp, d_cf], y, [(None, None), (0.0, None), (0.0, None)])
    lt = logit(np.clip(raw, rc.P_EPS, 1 - rc.P_EPS))
    out["mid2"] = np.clip(expit(c + a * lt + b * d_t), floor, 1 - floor)
    x_cf, e_cf = _ext_features(p, case["F_cf"], case)
    x_t, e_t = _ext_features(raw, case["F_t"], case)
    c, a, b = rc._logistic(np.c_[x_cf, e_cf], y, [(None, None), (0.0, None), (0.0, None)])
    out["ext_fit"] = np.clip(expit(c + a * x_t + b * e_t), floor, 1 - floor)
    h = rc.fit_calibration(binary.AUTO_CALIBRATION, expit(x_cf + e_cf), y, seed=seed)
    out["ext_auto"] = h(expit(x_t + e_t))
    out["rule_ext"] = out["ext_fit"] if sat else out["default"]
    out["rule_mid2"] = out["mid2"] if sat else out["default"]
    out["rule_cv"] = out["default"]
    if sat:
        out["rule_cv"] = out[_cv_choice(case)]
    return out


def _cv_choice(case: dict) -> str:
    """Of today's ``auto`` (refitted in each fold, its own choice inside), ``mid`` and
    ``mid2``, the one of least 5-fold CV log loss on the pairs (folds as ``auto``'s)."""
    from scipy.special import expit, logit

    from wsvmgui.estimators import binary
    from wsvmgui.ladder import recalibration as rc

    p, y, seed = case["p_cf"], case["y_cf"], case["cal_seed"]
    d = _col(case, 0.5, "F_cf")
    lp = logit(np.clip(p, rc.P_EPS, 1 - rc.P_EPS))
    floor = 1.0 / (2.0 * (y.size + 1))
    q = {k: np.empty(y.size) for k in ("default", "mid", "mid2")}
    for tr, te in rc._folds(y, 5, seed):
        q["default"][te] = rc.fit_calibration(binary.AUTO_CALIBRATION, p[tr], y[tr],
                                              seed=seed)(p[te])  # fmt: skip
        q["mid"][te] = _sig(d[tr], y[tr])(d[te])
        c, a, b = rc._logistic(np.c_[lp[tr], d[tr]], y[tr],
                               [(None, None), (0.0, None), (0.0, None)])  # fmt: skip
        q["mid2"][te] = np.clip(expit(c + a * lp[te] + b * d[te]), floor, 1 - floor)
    return min(q, key=lambda k: (float(rc._log_loss_terms(q[k], y).mean()), k != "default"))


def eval_stage(which: list[str]) -> dict:
    """Per case: the saturation shares, every candidate's score and its ratio to the
    default's, and the check that the replay reproduces ``predict_proba``."""
    from wsvmgui.ladder.midrung import saturated_share

    out: dict = {}
    for key in which:
        for data, n, seed in CASESETS[key]:
            case = load_case(data, n, seed)
            cand = candidates(case)
            g = case["map"]
            gcf = g(case["p_cf"])
            row = {
                "set": key, "data": data, "n": n, "seed": seed,
                "replay_max_diff": float(np.max(np.abs(cand["default"] - case["P"][:, 1]))),
                "map": g.name, "pairs": int(case["y_cf"].size),
                "share_outside_end_weights": saturated_share(case["p_cf"], case["weights"]),
                "share_pairs_at_final_bounds": float(np.mean((gcf <= g.lo) | (gcf >= g.hi))),
                "share_test_at_final_bounds": float(
                    np.mean((case["P"][:, 1] <= g.lo) | (case["P"][:, 1] >= g.hi))),
                "score": {k: _score(v, case) for k, v in cand.items()},
            }  # fmt: skip
            base = row["score"]["default"]
            row["ratio"] = {k: v / base for k, v in row["score"].items()}
            if case.get("P_peer") is not None:
                row["peer"] = case["peer"]["method"]
                row["peer_score"] = float(np.mean(_losses(case["P_peer"], case["yt"])))
            out[f"{data}|{n}|{seed}"] = row
            print(f"{data} {n} {seed} share {row['share_outside_end_weights']:.2f} " + " ".join(
                f"{k} {v:.3f}" for k, v in row["ratio"].items()), flush=True)  # fmt: skip
    return out


def gap_stage(seeds=range(10)) -> dict:
    """Breast cancer: our log loss against the record's best SVM peer per test point,
    split into the points at the map's final bounds (where the count map no longer
    orders them), those outside the end weights before the map, and the rest."""
    rows = []
    for seed in seeds:
        c = load_case("breast_cancer", None, seed)
        y, P, g = c["yt"], c["P"], c["map"]
        ours, theirs = _losses(P, y), _losses(c["P_peer"], y)
        d = ours - theirs
        atb = (P[:, 1] <= g.lo) | (P[:, 1] >= g.hi)
        w = c["weights"]
        out_end = (c["raw"] < w[0]) | (c["raw"] > w[-1])
        wrong = ours > np.log(2)
        m = y.size
        rows.append({
            "seed": seed, "ours": float(ours.mean()), "peer": float(theirs.mean()),
            "peer_method": c["peer"]["method"], "gap": float(d.mean()),
            "share_at_bounds": float(atb.mean()), "gap_at_bounds": float(d[atb].sum() / m),
            "ours_at_bounds": float(ours[atb].sum() / m),
            "peer_at_bounds": float(theirs[atb].sum() / m),
            "share_outside_end_weights": float(out_end.mean()),
            "gap_outside_end_weights": float(d[out_end].sum() / m),
            "gap_interior": float(d[~atb].sum() / m), "wrong": int(wrong.sum()),
            "gap_on_wrong": float(d[wrong].sum() / m),
            "wrong_at_bounds": int((wrong & atb).sum()),
            "top3_share": float(np.sort(d)[::-1][:3].sum() / d.sum()) if d.sum() > 0 else None,
        })  # fmt: skip
    return {"rows": rows}


# ------------------------------------------------------------------------- CPU
CPU_METHODS = ("wsvmgui_plain", "wsvmgui", "wsvmgui_midrung")


def cpu_draw(data: str, n, seed: int) -> dict:
    """The methods of :data:`CPU_METHODS` fitted and predicted side by side in this
    process (a warm-up fit first): CPU seconds, score, pickled size, the map's input."""
    import accuracy_vs_peers as avp

    X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
    warm, Xw, cw, _ = avp.method_estimator("wsvmgui", K, X[:60], codes[:60])
    warm.fit(Xw, cw)
    out: dict = {}
    for method in CPU_METHODS:
        est, X2, c2, _ = avp.method_estimator(method, K, X, codes)
        t0 = time.process_time()
        est.fit(X2, c2)
        P = est.predict_proba(Xt)
        cpu = time.process_time() - t0
        q = P[:, 1]
        case = {"P_true": P_true, "yt": yt}
        out[method] = {"cpu": cpu, "score": _score(q, case), "bytes": len(pickle.dumps(est)),
                       "input": getattr(est, "calibration_input_", None)}  # fmt: skip
    print(f"{time.strftime('%H:%M:%S')} cpu {data} {n} {seed}: "
          + ", ".join(f"{m} {v['cpu']:.2f} s" for m, v in out.items()), flush=True)  # fmt: skip
    return out


CPU_CASES = (
    [("breast_cancer", None, s) for s in range(3)]
    + [(d, 100, s) for d in DESIGNS for s in range(2)]
    + [(d, 2000, s) for d in DESIGNS for s in range(2)]
)


def cpu_stage() -> dict:
    return {f"{d}|{n}|{s}": cpu_draw(d, n, s) for d, n, s in CPU_CASES}


# ------------------------------------------------- binary sub-problems, out of sample
#: Two-class sub-problems of the real multiclass sets, fixed before they were run: neither
#: development nor confirmation data of the rule (breast cancer and the designs were).
PAIRS = (("iris", 1, 2), ("wine", 0, 1), ("wine", 0, 2), ("wine", 1, 2), ("digits", 3, 5),
         ("digits", 3, 8), ("digits", 4, 9), ("digits", 7, 9), ("digits", 1, 7),
         ("digits", 5, 8))  # fmt: skip
CASESETS["pairs"] = [(f"{d}_{a}v{b}", None, s) for d, a, b in PAIRS for s in range(5)]
CASESETS["pairs59"] = [(f"{d}_{a}v{b}", None, s) for d, a, b in PAIRS for s in range(5, 10)]


def pairs_stage(splits=range(5)) -> dict:
    """Each pair of :data:`PAIRS` (digits: all 1797 rows), stratified 70/30 splits,
    standardised on the training part: the default and ``calibration="auto_midrung"``
    side by side (log loss, whether the rule fired, the share outside the end weights)."""
    import accuracy_vs_peers as avp
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    load = {"iris": datasets.load_iris, "wine": datasets.load_wine,
            "digits": datasets.load_digits}  # fmt: skip
    out: dict = {}
    for data, a, b in PAIRS:
        X, y = load[data](return_X_y=True)
        keep = (y == a) | (y == b)
        X, y = X[keep], (y[keep] == b).astype(int)
        for seed in splits:
            Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
            sc = StandardScaler().fit(Xa)
            Xa, Xb = sc.transform(Xa), sc.transform(Xb)
            row: dict = {}
            for method in ("wsvmgui", "wsvmgui_midrung"):
                est, X2, c2, _ = avp.method_estimator(method, 2, Xa, ya)
                est.fit(X2, c2)
                P = est.predict_proba(Xb)
                row[method] = float(np.mean(_losses(P, yb)))
                row["share"] = est.fit_info_["saturated_share"]
                row["input"] = getattr(est, "calibration_input_", "count")
            row["ratio"] = row["wsvmgui_midrung"] / max(row["wsvmgui"], 1e-300)
            out[f"{data}_{a}v{b}|{seed}"] = row
            print(
                f"{data} {a}v{b} {seed}: share {row['share']:.2f} {row['input']} "
                f"default {row['wsvmgui']:.4f} midrung {row['wsvmgui_midrung']:.4f}",
                flush=True,
            )
    return out


def pair_peers_stage(which=("pairs", "pairs59")) -> dict:
    """The record's SVM peers (the same search and refit as ``accuracy_vs_peers``'s
    ``svm`` group) on each cached two-class sub-problem split: test log loss per peer."""
    from threadpoolctl import threadpool_limits

    from wsvmgui.evaluation.peers import SVM_PEERS, fit_svm_peers, search_svm_peers

    out: dict = {}
    for key in which:
        for data, n, seed in CASESETS[key]:
            X, codes, Xt, yt, _, _ = _load(data, n, seed)
            with threadpool_limits(1):
                search = search_svm_peers(X, codes, seed=seed)
                fitted = fit_svm_peers(X, codes, search)
                out[f"{data}|{n}|{seed}"] = {
                    m: float(np.mean(_losses(fitted[m].predict_proba(m, Xt), yt)))
                    for m in SVM_PEERS
                }
            print(f"{time.strftime('%H:%M:%S')} peers {data} {seed}: "
                  f"{min(out[f'{data}|{n}|{seed}'].values()):.4f}", flush=True)  # fmt: skip
    return out


# ---------------------------------------------------------------------- report
SHOWN = ("midrung_rule", "rule_mid2", "rule_cv", "mid", "mid2", "ext_fit", "ext_auto", "rule_ext")


def _eval_table(ev: dict) -> list[str]:
    """Ratio of the summed score to the default's per (set, row), draws better / worse."""
    rows: dict = {}
    for r in ev.values():
        rows.setdefault((r["set"], r["data"], r["n"]), []).append(r)
    out = ["| set | row | draws | share outside end weights | default | "
           + " | ".join(SHOWN) + " |", "|" + "---|" * (5 + len(SHOWN))]  # fmt: skip
    for (key, data, n), rs in rows.items():
        base = sum(r["score"]["default"] for r in rs)
        cells = []
        for c in SHOWN:
            v = sum(r["score"][c] for r in rs) / base
            bet = sum(r["score"][c] < r["score"]["default"] * (1 - 1e-9) for r in rs)
            wor = sum(r["score"][c] > r["score"]["default"] * (1 + 1e-9) for r in rs)
            cells.append(f"{v:.3f} ({bet}/{wor})")
        shares = [r["share_outside_end_weights"] for r in rs]
        out.append(f"| {key} | {data} {n or ''} | {len(rs)} | {min(shares):.2f}-{max(shares):.2f} "
                   f"| {base / len(rs):.4f} | " + " | ".join(cells) + " |")  # fmt: skip
    return out


def _record_rows(path: Path) -> tuple[list[str], dict]:
    """The record runs: per row and seed set the default, ``wsvmgui_midrung`` and the
    best SVM peer of each draw (least score of the four)."""
    rec = json.loads(path.read_text())["runs"]
    rows: dict = {}
    for key, runs in rec.items():
        data, n, seed, group = key.split("|")
        if group != "wsvmgui_midrung":
            continue
        base = rec.get(f"{data}|{n}|{seed}|wsvmgui")
        peers = rec.get(f"{data}|{n}|{seed}|svm")
        if not base or not peers:
            continue
        m = "log_loss" if n == "split" else "L1"
        sset = "0-4" if int(seed) < 5 else "5-9"
        rows.setdefault((data, n, sset), []).append({
            "seed": int(seed), "default": base[0][m], "midrung": runs[0][m],
            "peer": min(r[m] for r in peers), "cpu_default": base[0]["cpu"],
            "cpu_midrung": runs[0]["cpu"]})  # fmt: skip
    out = [
        "| row | seeds | draws | default | midrung | midrung / default (better/worse) "
        "| best SVM peer | default / peer | midrung / peer |",
        "|" + "---|" * 9,
    ]
    summary: dict = {}
    for (data, n, sset), rs in sorted(rows.items()):
        d = np.mean([r["default"] for r in rs])
        c = np.mean([r["midrung"] for r in rs])
        p = np.mean([r["peer"] for r in rs])
        bet = sum(r["midrung"] < r["default"] * (1 - 1e-9) for r in rs)
        wor = sum(r["midrung"] > r["default"] * (1 + 1e-9) for r in rs)
        name = f"{data} n = {n}" if n != "split" else f"{data} (log loss)"
        out.append(f"| {name} | {sset} | {len(rs)} | {d:.4f} | {c:.4f} | {c / d:.3f} ({bet}/{wor}) "
                   f"| {p:.4f} | {d / p:.2f} | {c / p:.2f} |")  # fmt: skip
        summary[f"{data}|{n}|{sset}"] = {
            "draws": rs,
            "ratio": c / d,
            "better": bet,
            "worse": wor,
            "default_vs_peer": d / p,
            "midrung_vs_peer": c / p,
        }
    return out, summary


def report(record: Path | None = None) -> None:
    """``benchmarks/results/saturation_study.{md,json}`` from the stages' files."""
    names = ("gap", "eval", "pairs", "cpu", "pair_peers")
    parts = {k: json.loads((CACHE / f"{k}.json").read_text())
             for k in names if (CACHE / f"{k}.json").exists()}  # fmt: skip
    md = ["# Saturation of the count measure, and the middle rung (tenth sitting, acc-bcsat)", "",
          "Generated by `benchmarks/saturation_study.py`; docs/notes/calibration.md, "
          '"Tenth sitting (branch acc-bcsat)".', ""]  # fmt: skip
    if "gap" in parts:
        md += ["## Breast cancer: where the gap to the best SVM peer is", "",
               "Mean log loss per test point; `at bounds`: points the default's map puts on "
               "its final bounds; `outside`: raw p_hat outside the grid's end weights.", "",
               "| split | peer | ours | peer loss | gap | share at bounds | gap at bounds "
               "| ours at bounds | peer at bounds | share outside | gap outside | gap interior "
               "| wrong (at bounds) | gap on wrong | top-3 share |", "|" + "---|" * 15]  # fmt: skip
        for r in parts["gap"]["rows"]:
            md.append(
                f"| {r['seed']} | {r['peer_method']} | {r['ours']:.4f} | {r['peer']:.4f} | "
                f"{r['gap']:+.4f} | {r['share_at_bounds']:.2f} | {r['gap_at_bounds']:+.4f} | "
                f"{r['ours_at_bounds']:.4f} | {r['peer_at_bounds']:.4f} | "
                f"{r['share_outside_end_weights']:.2f} | {r['gap_outside_end_weights']:+.4f} | "
                f"{r['gap_interior']:+.4f} | {r['wrong']} ({r['wrong_at_bounds']}) | "
                f"{r['gap_on_wrong']:+.4f} | "
                + (f"{r['top3_share']:.2f}" if r["top3_share"] is not None else "-")
                + " |"
            )
        for lo, hi in ((0, 5), (5, 10)):
            rs = parts["gap"]["rows"][lo:hi]
            mean = {k: float(np.mean([r[k] for r in rs])) for k in (
                "ours", "peer", "gap", "gap_at_bounds", "ours_at_bounds", "peer_at_bounds",
                "gap_outside_end_weights", "gap_interior", "gap_on_wrong")}  # fmt: skip
            md.append(f"| mean {lo}-{hi - 1} | | {mean['ours']:.4f} | {mean['peer']:.4f} | "
                      f"{mean['gap']:+.4f} | | {mean['gap_at_bounds']:+.4f} | "
                      f"{mean['ours_at_bounds']:.4f} | {mean['peer_at_bounds']:.4f} | | "
                      f"{mean['gap_outside_end_weights']:+.4f} | {mean['gap_interior']:+.4f} | | "
                      f"{mean['gap_on_wrong']:+.4f} | |")  # fmt: skip
        md.append("")
    if "eval" in parts:
        md += ["## Candidates replayed on the cached pairs", "",
               "Ratio of the summed score (L1 on the designs, log loss on breast cancer) to the "
               "default's, draws better / worse.  Development: bc04, dev100; confirmation: "
               "bc59, conf100, more100, n2000.  "
               + " ".join(f"`{c}`" for c in SHOWN) + ": :func:`candidates`.", ""]  # fmt: skip
        md += _eval_table(parts["eval"]) + [""]
    if "pairs" in parts:
        md += ["## Two-class sub-problems of the real multiclass sets (out of sample)", "",
               "| pair | splits | rule fired | share outside end weights | default | "
               "auto_midrung | ratio (better/worse) |", "|" + "---|" * 7]  # fmt: skip
        by: dict = {}
        for key, r in parts["pairs"].items():
            by.setdefault(key.split("|")[0], []).append(r)
        for name, rs in by.items():
            d = np.mean([r["wsvmgui"] for r in rs])
            c = np.mean([r["wsvmgui_midrung"] for r in rs])
            fired = sum(r["input"] == "midrung" for r in rs)
            bet = sum(r["wsvmgui_midrung"] < r["wsvmgui"] * (1 - 1e-9) for r in rs)
            wor = sum(r["wsvmgui_midrung"] > r["wsvmgui"] * (1 + 1e-9) for r in rs)
            sh = [r["share"] for r in rs]
            md.append(f"| {name} | {len(rs)} | {fired} | {min(sh):.2f}-{max(sh):.2f} | {d:.4f} | "
                      f"{c:.4f} | {c / d:.3f} ({bet}/{wor}) |")  # fmt: skip
        md.append("")
    if "pair_peers" in parts and "eval" in parts:
        md += ["## The sub-problems against the SVM peers", "",
               "Mean test log loss; peer: each split's least of the four SVM peers (the "
               "record's search and refit).", "",
               "| set | pair | default | midrung_rule | rule_mid2 | best SVM peer | default / peer "
               "| midrung_rule / peer | rule_mid2 / peer |", "|" + "---|" * 9]  # fmt: skip
        by: dict = {}
        for key, r in parts["eval"].items():
            if key in parts["pair_peers"]:
                by.setdefault((r["set"], r["data"]), []).append(
                    (r["score"], min(parts["pair_peers"][key].values()))
                )
        for (sset, data), rs in by.items():
            cols = np.array([(sc["default"], sc["midrung_rule"], sc["rule_mid2"], pe)
                             for sc, pe in rs])  # fmt: skip
            d, c, c2, p = (float(v) for v in cols.mean(axis=0))
            md.append(f"| {sset} | {data} | {d:.4f} | {c:.4f} | {c2:.4f} | {p:.4f} | "
                      f"{d / p:.2f} | {c / p:.2f} | {c2 / p:.2f} |")  # fmt: skip
        md.append("")
    if "cpu" in parts:
        md += ["## CPU and memory side by side", "",
               "One process per draw, a warm-up fit, then the methods in turn (fit + predict; "
               "10,000 test points on a design); bytes: the pickled fitted estimator.", "",
               "| draw | plain s | default s | midrung s | midrung / plain | midrung / default "
               "| input | bytes midrung / default |", "|" + "---|" * 8]  # fmt: skip
        for key, r in parts["cpu"].items():
            a, b, c = (r[m]["cpu"] for m in CPU_METHODS)
            name = key.replace("|None|", " split ").replace("|", " n = ", 1).replace("|", " seed ")
            md.append(f"| {name} | {a:.2f} | {b:.2f} | {c:.2f} | {c / a:.2f} | {c / b:.2f} | "
                      f"{r['wsvmgui_midrung']['input']} | "
                      f"{r['wsvmgui_midrung']['bytes'] / r['wsvmgui']['bytes']:.3f} |")  # fmt: skip
        groups: dict = {}
        for key, r in parts["cpu"].items():
            data, n, _ = key.split("|")
            groups.setdefault(f"{data} {n}", []).append(r)
        md += [
            "",
            "| rows | draws | midrung / plain (summed CPU) | midrung / default |",
            "|---|---|---|---|",
        ]
        for g, rs in groups.items():
            a, b, c = (sum(r[m]["cpu"] for r in rs) for m in CPU_METHODS)
            md.append(f"| {g} | {len(rs)} | {c / a:.2f} | {c / b:.2f} |")
        md.append("")
    if record is not None:
        lines, summary = _record_rows(record)
        parts["record"] = summary
        md += ["## The benchmark of record (`wsvmgui_midrung`)", "",
               "`accuracy_vs_peers.py --methods wsvmgui_midrung`, seeds 0-9 (runs in "
               "`benchmarks/results/acc_bcsat_records.json`); best SVM peer: each draw's "
               "least of the four.", ""] + lines + [""]  # fmt: skip
    (RESULTS / "saturation_study.md").write_text("\n".join(md))
    (RESULTS / "saturation_study.json").write_text(json.dumps(parts, indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", nargs="+", choices=sorted(CASESETS))
    ap.add_argument("--eval", nargs="*", choices=sorted(CASESETS))
    ap.add_argument("--gap", action="store_true")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("--pair-peers", action="store_true")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--record", type=Path, help="a results file holding wsvmgui_midrung runs")
    args = ap.parse_args(argv)
    if args.fit:
        fit_stage(args.fit)
    if args.eval is not None:
        res = eval_stage(args.eval or sorted(CASESETS))
        (CACHE / "eval.json").write_text(json.dumps(res, indent=1))
    if args.gap:
        (CACHE / "gap.json").write_text(json.dumps(gap_stage(), indent=1))
    if args.cpu:
        (CACHE / "cpu.json").write_text(json.dumps(cpu_stage(), indent=1))
    if args.pairs:
        (CACHE / "pairs.json").write_text(json.dumps(pairs_stage(), indent=1))
    if args.pair_peers:
        (CACHE / "pair_peers.json").write_text(json.dumps(pair_peers_stage(), indent=1))
    if args.report:
        report(args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
