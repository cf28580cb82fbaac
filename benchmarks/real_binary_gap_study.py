"""Where the binary default's gap to the SVM peers on real two-class problems is (issue 23).

The ten two-class sub-problems of iris, wine and digits fixed by acc-bcsat
(``saturation_study.PAIRS``; stratified 70/30 splits 0-9, standardised on the training
part) put the binary default (``calibration="auto"``: the count's auto map, or Platt's
sigmoid on the middle rung's decision value ``f_1/2`` where more than half of the
cross-fitted ``p_hat`` lie outside the grid's end weights) at 1.31x / 1.19x the best SVM
peer's summed log loss on splits 0-4 / 5-9.

Stage ``--fit`` fits the default once per split (``accuracy_vs_peers.method_estimator``,
as the record does) and caches, in ``/tmp/acc-realbin/cache/``: the cross-fitted pairs
of the count and of the middle rung, the test rows' count estimate and middle-rung value,
the returned probabilities, the chosen cell (lambda, sigma, C = 1 / (2 n lambda),
gamma = 1 / sigma^2) and the map; and the four SVM peers (the record's 7 x 7 search and
refit) with their test probabilities and cells.  Stage ``--gap`` splits each row's gap to
its best peer (each split's least of the four) into (a) the points we misclassify
confidently (our p(y) < 0.05), (b) the correctly classified points (our p(y) >= 1/2:
where the map's floor and ceiling cost log loss on separable pairs) and the rest; and
tabulates the cells.  Stage ``--eval`` replays the candidates on the cached pairs
(:func:`candidates`), stage ``--designs`` the same on acc-bcsat's cached binary design
draws and breast cancer (``/tmp/acc-bcsat/cache``), and ``--report`` writes
``benchmarks/results/real_binary_gap_study.{md,json}``::

    nice -n 5 python benchmarks/real_binary_gap_study.py --fit
    python benchmarks/real_binary_gap_study.py --gap --eval --designs --report
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
CACHE = Path(os.environ.get("REAL_BINARY_GAP_CACHE", "/tmp/acc-realbin/cache"))
#: Our p(y) below this is a confident miss (part (a) of the gap).
CONFIDENT = 0.05
SPLITS = range(10)


def _cases():
    import saturation_study as ss

    return [(f"{d}_{a}v{b}", s) for d, a, b in ss.PAIRS for s in SPLITS]


def _path(data: str, seed: int) -> Path:
    return CACHE / f"{data}_{seed}.pkl"


def _losses(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-point log loss of (m, 2) probabilities for labels ``y`` (m,)."""
    return -np.log(np.maximum(P[np.arange(y.size), y], 1e-15))


# ------------------------------------------------------------------------ fits
def fit_stage() -> None:
    """The default and the four SVM peers per split, cached (see the module docstring)."""
    import accuracy_vs_peers as avp
    import saturation_study as ss
    from threadpoolctl import threadpool_limits

    from wsvmgui.estimators import binary
    from wsvmgui.evaluation.peers import SVM_PEERS, fit_svm_peers, search_svm_peers
    from wsvmgui.ladder.midrung import middle_decision

    got: dict = {}
    orig = binary.cross_fitted

    def hooked(X, *a, **k):
        out = orig(X, *a, **k)
        # the middle rung's pairs now: the estimator releases its fold fits after the map
        s_cf, _ = binary._midrung_pairs(X, k["fits_out"], k["rows_out"])
        got.update(out=out, s_cf=s_cf)
        return out

    binary.cross_fitted = hooked
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        for data, seed in _cases():
            dest = _path(data, seed)
            if dest.exists():
                continue
            X, codes, Xt, yt, _, K = ss._load(data, None, seed)
            est, X2, c2, _ = avp.method_estimator("wsvmgui", K, X, codes)
            got.clear()
            t0 = time.process_time()
            est.fit(X2, c2)
            P = est.predict_proba(Xt)
            cpu = time.process_time() - t0
            p_cf, y_cf, _ = got["out"]
            s_cf = got["s_cf"]
            Xc = est._check_X(Xt)
            raw = est._raw_estimate(Xc).p
            blocks = est._kernel_blocks(Xc)
            d_t = np.concatenate([middle_decision(est.ladder_, Kb) for Kb in blocks])
            with threadpool_limits(1):
                search = search_svm_peers(X, codes, seed=seed)
                fitted = fit_svm_peers(X, codes, search)
                P_peer = {m: fitted[m].predict_proba(m, Xt) for m in SVM_PEERS}
            case = {
                "data": data, "seed": seed, "p_cf": np.asarray(p_cf), "y_cf": np.asarray(y_cf),
                "s_cf": s_cf, "raw": raw, "d_t": d_t, "P": P, "yt": yt, "cpu": cpu,
                "weights": est.weights_, "map": est.calibration_,
                "input": est.calibration_input_, "share": est.fit_info_["saturated_share"],
                "lambda": float(est.lambda_), "sigma": float(est.sigma_), "C": float(est.C_),
                "gamma": 1.0 / float(est.sigma_) ** 2, "n_train": int(X.shape[0]),
                "P_peer": P_peer, "peer_cells": {m: tuple(map(float, search.best[m]))
                                                 for m in search.best},
                "peer_edges": {m: list(v) for m, v in search.edges.items()},
            }  # fmt: skip
            with dest.with_suffix(".tmp").open("wb") as fh:
                pickle.dump(case, fh)
            dest.with_suffix(".tmp").replace(dest)
            print(f"{time.strftime('%H:%M:%S')} {dest.name} cpu {cpu:.1f} s", flush=True)
    finally:
        binary.cross_fitted = orig


def load_case(data: str, seed: int) -> dict:
    with _path(data, seed).open("rb") as fh:
        return pickle.load(fh)


def _best_peer(case: dict) -> tuple[str, np.ndarray]:
    y = case["yt"]
    m = min(case["P_peer"], key=lambda k: float(np.mean(_losses(case["P_peer"][k], y))))
    return m, case["P_peer"][m]


# ------------------------------------------------------------------------- gap
def gap_stage() -> dict:
    """Per split: our and the best peer's mean log loss, the gap split into (a) our
    confident misses (p(y) < :data:`CONFIDENT`), (b) our correctly classified points
    (p(y) >= 1/2) and (c) the rest, each as its share of the mean; the map's bounds and
    the share of test points on them; our cell against the peer's."""
    rows: dict = {}
    for data, seed in _cases():
        c = load_case(data, seed)
        y, P = c["yt"], c["P"]
        meth, Pp = _best_peer(c)
        ours, theirs = _losses(P, y), _losses(Pp, y)
        d = ours - theirs
        py = P[np.arange(y.size), y]
        conf = py < CONFIDENT
        right = py >= 0.5
        mid = ~conf & ~right
        g = c["map"]
        atb = (P[:, 1] <= g.lo + 1e-12) | (P[:, 1] >= g.hi - 1e-12)
        m = y.size
        C_p, g_p = c["peer_cells"]["sigmoid" if meth == "venn_abers" else meth]
        rows[f"{data}|{seed}"] = {
            "data": data, "seed": seed, "ours": float(ours.mean()),
            "peer": float(theirs.mean()), "peer_method": meth, "gap": float(d.mean()),
            "n_test": int(m), "n_conf": int(conf.sum()),
            "gap_conf": float(d[conf].sum() / m), "peer_on_conf": float(theirs[conf].sum() / m),
            "ours_on_conf": float(ours[conf].sum() / m),
            "gap_right": float(d[right].sum() / m), "ours_right": float(ours[right].sum() / m),
            "peer_right": float(theirs[right].sum() / m),
            "gap_mid": float(d[mid].sum() / m), "n_mid": int(mid.sum()),
            "input": c["input"], "share": c["share"], "map": g.name,
            "bound": float(g.lo), "at_bounds": float(atb.mean()),
            "ours_at_bounds": float(ours[atb].sum() / m),
            "cell": {"C": c["C"], "gamma": c["gamma"]}, "peer_cell": {"C": C_p, "gamma": g_p},
            "errors": int(np.sum(P.argmax(1) != y)), "peer_errors": int(np.sum(Pp.argmax(1) != y)),
            "cf_errors_outside": _cf_errors_outside(c),
            "each_peer": {k: float(np.mean(_losses(v, y))) for k, v in c["P_peer"].items()},
            "peer_certain": int(np.sum(Pp[np.arange(m), y] >= 1.0 - 1e-12)),
            "ours_no_bounds": _no_bounds(c),
        }  # fmt: skip
    return rows


def _no_bounds(c: dict) -> float:
    """Diagnostic of part (b), not a candidate: our test log loss with the fitted map's
    final floor and ceiling removed (``lo = 0, hi = 1``; the same map otherwise)."""
    from dataclasses import replace

    from scipy.special import expit

    g = replace(c["map"], lo=0.0, hi=1.0)
    q = g(expit(c["d_t"]) if c["input"] == "midrung" else c["raw"])
    return float(np.mean(_losses(np.c_[1 - q, q], c["yt"])))


def _cf_errors_outside(c: dict) -> int:
    """Cross-fitted pairs misclassified by the count although outside the end weights."""
    p, y, w = c["p_cf"], c["y_cf"], c["weights"]
    out = (p < w[0]) | (p > w[-1])
    return int(np.sum(out & ((p > 0.5) != (y == 1))))


def cells_stage() -> dict:
    """Per split: the default refitted at the Platt peer's searched cell (lambda =
    1 / (2 n C), sigma = gamma^-1/2, nothing tuned): its test log loss and errors; and
    the peers' own search (rerun, as ``fit_stage``'s): each searched method's least
    outer-fold log loss, so that a peer can be chosen without the test rows."""
    import accuracy_vs_peers as avp
    import saturation_study as ss
    from threadpoolctl import threadpool_limits

    from wsvmgui.evaluation.peers import search_svm_peers

    out: dict = {}
    for data, seed in _cases():
        c = load_case(data, seed)
        X, codes, Xt, yt, _, K = ss._load(data, None, seed)
        C, gamma = c["peer_cells"]["platt"]
        est, X2, c2, _ = avp.method_estimator("wsvmgui", K, X, codes)
        est.set_params(lam=1.0 / (2.0 * X.shape[0] * C), sigma=float(gamma) ** -0.5)
        est.fit(X2, c2)
        P = est.predict_proba(Xt)
        with threadpool_limits(1):
            search = search_svm_peers(X, codes, seed=seed)
        out[f"{data}|{seed}"] = {
            "at_platt_cell": float(np.mean(_losses(P, yt))),
            "errors_at_platt_cell": int(np.sum(P.argmax(1) != yt)),
            "C_check": float(est.C_), "gamma_check": 1.0 / float(est.sigma_) ** 2,
            "input_at_platt_cell": est.calibration_input_,
            "peer_cv": {m: float(np.min(v)) for m, v in search.loss.items()},
        }  # fmt: skip
        print(f"{time.strftime('%H:%M:%S')} cells {data} {seed}: C {C} / {est.C_:.4g}, "
              f"gamma {gamma:.4g} / {1 / est.sigma_**2:.4g}", flush=True)  # fmt: skip
    return out


# ------------------------------------------------------------------ candidates
def _platt_targets(y: np.ndarray) -> np.ndarray:
    """Platt's (1999) targets: (N+ + 1) / (N+ + 2) for positives, 1 / (N- + 2) for negatives."""
    n1, n0 = int(np.sum(y == 1)), int(np.sum(y == 0))
    return np.where(y == 1, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))


def _platt_fit(d: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Platt's sigmoid ``expit(c + a d)`` fitted to Platt's targets (cross-entropy), a >= 0."""
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    t = _platt_targets(y)

    def f(w):
        z = w[0] + w[1] * d
        q = expit(z)
        loss = -np.sum(t * log_expit(z) + (1 - t) * log_expit(-z))
        g = q - t
        return loss, np.array([g.sum(), (g * d).sum()])

    r = minimize(f, np.zeros(2), jac=True, method="L-BFGS-B", bounds=[(None, None), (0.0, None)])
    return float(r.x[0]), float(r.x[1])


def candidates(c: dict) -> dict[str, np.ndarray]:
    """P(class 1) at the test rows of the default (replayed) and the two candidates, each
    fitted on the cached cross-fitted pairs only (defined before they were scored).

    ``default``: today's ``auto`` (the count's auto map; the middle rung's sigmoid where
    saturated).  ``platt_targets``: where the default takes the middle rung, Platt's
    sigmoid in ``f_1/2`` fitted to Platt's targets (Laplace's rule of succession per
    class) with no floor or ceiling besides the targets' own; else the default.
    ``mid_if_cf_errors``: the middle rung only where the saturated pairs include a pair the
    count misclassifies outside the end weights (acc-mcsat's suggestion); else the
    count's auto map.
    """
    from scipy.special import expit, logit

    from wsvmgui.estimators import binary
    from wsvmgui.ladder import recalibration as rc

    p, y, s = c["p_cf"], c["y_cf"], c["s_cf"]
    raw, d_t = c["raw"], c["d_t"]
    seed = 0
    count = rc.fit_calibration(binary.AUTO_CALIBRATION, p, y, seed=seed)(raw)
    mid = rc.fit_map("sigmoid", s, y)(expit(d_t))
    sat = c["input"] == "midrung"
    out = {"default": mid if sat else count}
    d_cf = logit(np.clip(s, 1e-300, 1 - 1e-16))
    a0, a1 = _platt_fit(d_cf, y)
    out["platt_targets"] = expit(a0 + a1 * d_t) if sat else out["default"]
    out["mid_if_cf_errors"] = mid if (sat and _cf_errors_outside(c) > 0) else count
    return out


def eval_stage() -> dict:
    rows: dict = {}
    for data, seed in _cases():
        c = load_case(data, seed)
        cand = candidates(c)
        y = c["yt"]
        meth, Pp = _best_peer(c)
        sc = {k: float(np.mean(_losses(np.c_[1 - v, v], y))) for k, v in cand.items()}
        rows[f"{data}|{seed}"] = {
            "data": data, "seed": seed, "score": sc, "peer": float(np.mean(_losses(Pp, y))),
            "replay_max_diff": float(np.max(np.abs(cand["default"] - c["P"][:, 1]))),
        }  # fmt: skip
    return rows


def designs_stage() -> dict:
    """The candidates on acc-bcsat's cached draws (breast cancer splits 0-9, the four
    binary designs at n = 100 seeds 0-4): ratio of each to the replayed default."""
    import saturation_study as ss
    from scipy.special import expit

    from wsvmgui.estimators import binary
    from wsvmgui.ladder import recalibration as rc
    from wsvmgui.ladder.midrung import saturated

    out: dict = {}
    draws = [("breast_cancer", None, s) for s in range(10)]
    draws += [(d, 100, s) for d in ss.DESIGNS for s in range(5)]
    for data, n, seed in draws:
        case = ss.load_case(data, n, seed)
        p, y, raw = case["p_cf"], case["y_cf"], case["raw"]
        d_cf, d_t = ss._col(case, 0.5, "F_cf"), ss._col(case, 0.5, "F_t")
        count = rc.fit_calibration(binary.AUTO_CALIBRATION, p, y, seed=case["cal_seed"])(raw)
        mid = ss._sig(d_cf, y)(d_t)
        sat = saturated(p, case["weights"])
        a0, a1 = _platt_fit(d_cf, y)
        c2 = {"p_cf": p, "y_cf": y, "weights": case["weights"]}
        cand = {
            "default": mid if sat else count,
            "platt_targets": expit(a0 + a1 * d_t) if sat else (mid if sat else count),
            "mid_if_cf_errors": mid if (sat and _cf_errors_outside(c2) > 0) else count,
        }
        sc = {k: ss._score(v, case) for k, v in cand.items()}
        out[f"{data}|{n}|{seed}"] = {
            "data": data,
            "n": n,
            "seed": seed,
            "sat": bool(sat),
            "cf_errors_outside": _cf_errors_outside(c2),
            "score": sc,
        }
    return out


# ---------------------------------------------------------------------- report
def _sets():
    return (("0-4", range(5)), ("5-9", range(5, 10)))


def _gap_table(gap: dict) -> list[str]:
    """Per row and split set: sums over the splits of each part of the gap."""
    import saturation_study as ss

    keys = ("ours", "peer", "gap", "gap_conf", "ours_on_conf", "peer_on_conf", "gap_right",
            "ours_right", "peer_right", "gap_mid", "ours_no_bounds")  # fmt: skip
    out = ["| pair | splits | ours | peer | ours / peer | gap | (a) gap on confident misses "
           "(ours / peer there) | confident misses | (b) gap on correct points (ours / peer "
           "there) | (c) gap on the rest | middle rung | map bound | test points on the "
           "bounds | ours without the bounds (diagnostic) |", "|" + "---|" * 14]  # fmt: skip
    tot = {s: dict.fromkeys(keys, 0.0) for s, _ in _sets()}
    for d, a, b in ss.PAIRS:
        name = f"{d}_{a}v{b}"
        for label, seeds in _sets():
            rs = [gap[f"{name}|{s}"] for s in seeds]
            t = {k: sum(r[k] for r in rs) for k in keys}
            for k in keys:
                tot[label][k] += t[k]
            out.append(
                f"| {name} | {label} | {t['ours']:.4f} | {t['peer']:.4f} | "
                f"{t['ours'] / max(t['peer'], 1e-12):.2f} | {t['gap']:+.4f} | "
                f"{t['gap_conf']:+.4f} ({t['ours_on_conf']:.4f} / {t['peer_on_conf']:.4f}) | "
                f"{sum(r['n_conf'] for r in rs)} | "
                f"{t['gap_right']:+.4f} ({t['ours_right']:.4f} / {t['peer_right']:.4f}) | "
                f"{t['gap_mid']:+.4f} | {sum(r['input'] == 'midrung' for r in rs)} of 5 | "
                f"{np.mean([r['bound'] for r in rs]):.4f} | "
                f"{np.mean([r['at_bounds'] for r in rs]):.2f} | {t['ours_no_bounds']:.4f} |"
            )
    for label, _ in _sets():
        t = tot[label]
        out.append(
            f"| **all** | {label} | {t['ours']:.4f} | {t['peer']:.4f} | "
            f"{t['ours'] / t['peer']:.2f} | {t['gap']:+.4f} | {t['gap_conf']:+.4f} "
            f"({t['ours_on_conf']:.4f} / {t['peer_on_conf']:.4f}) | | {t['gap_right']:+.4f} "
            f"({t['ours_right']:.4f} / {t['peer_right']:.4f}) | {t['gap_mid']:+.4f} | | | | "
            f"{t['ours_no_bounds']:.4f} |"
        )
    return out


def _peer_table(gap: dict) -> list[str]:
    """Ours against each SVM peer held fixed (summed log loss ratios), against the split's
    least of the four (the test set picks it), and how many test points that peer is
    certain of (p(y) = 1 to 1e-12: zero loss, which no bounded map can match)."""
    import saturation_study as ss

    peers = ("platt", "sigmoid", "isotonic", "venn_abers")
    out = ["| pair | splits | ours | " + " | ".join(f"ours / {k}" for k in peers)
           + " | ours / least of four | test points the least is certain of (of all) |",
           "|" + "---|" * (5 + len(peers))]  # fmt: skip
    tot = {s: dict.fromkeys(("ours", "best", *peers), 0.0) for s, _ in _sets()}
    for d, a, b in ss.PAIRS:
        name = f"{d}_{a}v{b}"
        for label, seeds in _sets():
            rs = [gap[f"{name}|{s}"] for s in seeds]
            t = {k: sum(r["each_peer"][k] for r in rs) for k in peers}
            t["ours"] = sum(r["ours"] for r in rs)
            t["best"] = sum(r["peer"] for r in rs)
            for k in t:
                tot[label][k] += t[k]
            out.append(
                f"| {name} | {label} | {t['ours']:.4f} | "
                + " | ".join(f"{t['ours'] / max(t[k], 1e-12):.2f}" for k in peers)
                + f" | {t['ours'] / max(t['best'], 1e-12):.2f} | "
                f"{sum(r['peer_certain'] for r in rs)} of {sum(r['n_test'] for r in rs)} |"
            )
    for label, _ in _sets():
        t = tot[label]
        out.append(
            f"| **all (summed)** | {label} | {t['ours']:.4f} | "
            + " | ".join(f"{t['ours'] / t[k]:.2f}" for k in peers)
            + f" | {t['ours'] / t['best']:.2f} | |"
        )
    return out


def _honest(r: dict, cells: dict) -> float:
    """The test log loss of the peer the search itself prefers (least outer-fold log loss
    among the searched methods: no test row chooses it)."""
    cv = cells["peer_cv"]
    return r["each_peer"][min(cv, key=cv.get)]


def _cells_summary(gap: dict, cells: dict) -> list[str]:
    """Per row: our cell against Platt's (medians), ours refitted at Platt's cell, and the
    peer chosen by the search's own CV loss."""
    import saturation_study as ss

    out = ["| pair | splits | our C (median) | Platt's C | our gamma | Platt's gamma | ours | "
           "ours at Platt's cell | Platt | peer chosen by its CV | ours / CV-chosen peer | "
           "ours at Platt's cell / ours | our errors / at Platt's cell / the least peer's |",
           "|" + "---|" * 13]  # fmt: skip
    tot = {s: dict.fromkeys(("ours", "at", "platt", "honest"), 0.0) for s, _ in _sets()}
    for d, a, b in ss.PAIRS:
        name = f"{d}_{a}v{b}"
        for label, seeds in _sets():
            ks = [f"{name}|{s}" for s in seeds]
            rs, cs = [gap[k] for k in ks], [cells[k] for k in ks]
            t = {"ours": sum(r["ours"] for r in rs), "at": sum(c["at_platt_cell"] for c in cs),
                 "platt": sum(r["each_peer"]["platt"] for r in rs),
                 "honest": sum(_honest(r, c) for r, c in zip(rs, cs, strict=True))}  # fmt: skip
            for k in t:
                tot[label][k] += t[k]
            out.append(
                f"| {name} | {label} | {np.median([r['cell']['C'] for r in rs]):.3g} | "
                f"{np.median([c['C_check'] for c in cs]):.3g} | "
                f"{np.median([r['cell']['gamma'] for r in rs]):.3g} | "
                f"{np.median([c['gamma_check'] for c in cs]):.3g} | {t['ours']:.4f} | "
                f"{t['at']:.4f} | {t['platt']:.4f} | {t['honest']:.4f} | "
                f"{t['ours'] / max(t['honest'], 1e-12):.2f} | "
                f"{t['at'] / max(t['ours'], 1e-12):.2f} | "
                f"{sum(r['errors'] for r in rs)} / "
                f"{sum(c['errors_at_platt_cell'] for c in cs)} / "
                f"{sum(r['peer_errors'] for r in rs)} |"
            )
    for label, _ in _sets():
        t = tot[label]
        out.append(
            f"| **all (summed)** | {label} | | | | | {t['ours']:.4f} | {t['at']:.4f} | "
            f"{t['platt']:.4f} | {t['honest']:.4f} | {t['ours'] / t['honest']:.2f} | "
            f"{t['at'] / t['ours']:.2f} | |"
        )
    return out


def _cell_table(gap: dict) -> list[str]:
    """Per row and split: our cell (C, gamma) against the best peer's."""
    out = ["| pair | split | ours | peer | peer method | our C | peer C | our gamma | "
           "peer gamma | our errors | peer errors | confident misses |",
           "|" + "---|" * 12]  # fmt: skip
    for r in gap.values():
        out.append(
            f"| {r['data']} | {r['seed']} | {r['ours']:.4f} | {r['peer']:.4f} | "
            f"{r['peer_method']} | {r['cell']['C']:.3g} | {r['peer_cell']['C']:.3g} | "
            f"{r['cell']['gamma']:.3g} | {r['peer_cell']['gamma']:.3g} | {r['errors']} | "
            f"{r['peer_errors']} | {r['n_conf']} |"
        )
    return out


def _eval_table(ev: dict) -> list[str]:
    import saturation_study as ss

    names = ("default", "platt_targets", "mid_if_cf_errors")
    out = ["| pair | splits | " + " | ".join(names) + " | best peer | " +
           " | ".join(f"{k} / default (better/worse)" for k in names[1:]) + " |",
           "|" + "---|" * (3 + 2 * len(names) - 1)]  # fmt: skip
    tot = {s: dict.fromkeys((*names, "peer"), 0.0) for s, _ in _sets()}
    for d, a, b in ss.PAIRS:
        name = f"{d}_{a}v{b}"
        for label, seeds in _sets():
            rs = [ev[f"{name}|{s}"] for s in seeds]
            t = {k: sum(r["score"][k] for r in rs) for k in names}
            t["peer"] = sum(r["peer"] for r in rs)
            for k in t:
                tot[label][k] += t[k]
            cnt = {k: (sum(r["score"][k] < r["score"]["default"] - 1e-12 for r in rs),
                       sum(r["score"][k] > r["score"]["default"] + 1e-12 for r in rs))
                   for k in names[1:]}  # fmt: skip
            out.append(
                f"| {name} | {label} | "
                + " | ".join(f"{t[k]:.4f}" for k in names)
                + f" | {t['peer']:.4f} | "
                + " | ".join(
                    f"{t[k] / max(t['default'], 1e-12):.3f} ({cnt[k][0]}/{cnt[k][1]})"
                    for k in names[1:]
                )
                + " |"  # fmt: skip
            )
    for label, _ in _sets():
        t = tot[label]
        out.append(
            f"| **all (summed)** | {label} | "
            + " | ".join(f"{t[k]:.4f}" for k in names)
            + f" | {t['peer']:.4f} | "
            + " | ".join(f"{t[k] / t['default']:.3f}" for k in names[1:])
            + " |"
        )
        out.append(
            f"| **/ peer** | {label} | "
            + " | ".join(f"{t[k] / t['peer']:.3f}" for k in names)
            + " | 1 | | |"
        )
    return out


def _designs_table(des: dict) -> list[str]:
    names = ("default", "platt_targets", "mid_if_cf_errors")
    rows: dict = {}
    for r in des.values():
        key = (r["data"], r["n"], "0-4" if r["seed"] < 5 else "5-9")
        rows.setdefault(key, []).append(r)
    out = ["| row | seeds | middle rung (default) | pairs misclassified outside the end "
           "weights | " + " | ".join(names) + " | "
           + " | ".join(f"{k} / default" for k in names[1:]) + " |",
           "|" + "---|" * (4 + 2 * len(names) - 1)]  # fmt: skip
    for (data, n, label), rs in rows.items():
        t = {k: np.mean([r["score"][k] for r in rs]) for k in names}
        out.append(
            f"| {data} {n or ''} | {label} | {sum(r['sat'] for r in rs)} of {len(rs)} | "
            f"{[r['cf_errors_outside'] for r in rs]} | "
            + " | ".join(f"{t[k]:.4f}" for k in names)
            + " | "
            + " | ".join(f"{t[k] / t['default']:.4f}" for k in names[1:])
            + " |"
        )
    return out


def report() -> None:
    """``benchmarks/results/real_binary_gap_study.{md,json}`` from the cached stages."""
    names = ("gap", "eval", "designs", "cells")
    parts = {k: json.loads((CACHE / f"{k}.json").read_text())
             for k in names if (CACHE / f"{k}.json").exists()}  # fmt: skip
    (RESULTS / "real_binary_gap_study.json").write_text(json.dumps(parts, indent=1))
    md = [
        "# The binary default's gap to the SVM peers on real two-class sub-problems",
        "",
        '`benchmarks/real_binary_gap_study.py`; docs/notes/calibration.md, "Tenth sitting '
        '(branch acc-realbin)".  Log loss summed over the splits; the peer is each '
        "split's least of the four SVM peers.",
        "",
        "Conclusions: the per-split least of the four peers is chosen by the test rows "
        "(isotonic on 69 of 100 splits: certain, loss 0, on most test points of the "
        "separable pairs); against any one peer held fixed, or the peer the search's own "
        "CV picks, the default is 0.16-0.81x.  Of the gap to the least of four, the "
        "correctly classified points are in our favour overall (the floor costs only on "
        "the separable rows), the confident misses are a few points (iris split 9), and "
        "the rest is wine 1v2's classification errors.  Neither candidate (Platt's targets "
        "in the middle rung's sigmoid; the middle rung only where saturated pairs include "
        "misclassified ones) improves the sub-problems; the designs are unchanged.",
        "",
    ]
    if "gap" in parts:
        md += ["## Where the gap is", "", *_gap_table(parts["gap"]), "",
               "## Against each peer held fixed", "", *_peer_table(parts["gap"]), "",
               "## The cells (per split)", "", *_cell_table(parts["gap"]), ""]  # fmt: skip
    if "gap" in parts and "cells" in parts:
        md += ["## The cell, and a peer chosen without the test rows", "",
               *_cells_summary(parts["gap"], parts["cells"]), ""]  # fmt: skip
    if "eval" in parts:
        md += ["## Candidates on the sub-problems", "", *_eval_table(parts["eval"]), ""]
    if "designs" in parts:
        md += ["## Candidates on breast cancer and the designs (n = 100; L1 / log loss, "
               "mean)", "", *_designs_table(parts["designs"]), ""]  # fmt: skip
    (RESULTS / "real_binary_gap_study.md").write_text("\n".join(md))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--cells", action="store_true")
    ap.add_argument("--gap", action="store_true")
    ap.add_argument("--eval", action="store_true")
    ap.add_argument("--designs", action="store_true")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if args.fit:
        fit_stage()
    stages = (("cells", cells_stage), ("gap", gap_stage), ("eval", eval_stage),
              ("designs", designs_stage))  # fmt: skip
    for flag, fn in stages:
        if getattr(args, flag):
            (CACHE / f"{flag}.json").write_text(json.dumps(fn(), indent=1))
    if args.report:
        report()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
