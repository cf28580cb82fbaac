"""Maps with less statistical error on the binary step designs (issue 23, ninth sitting).

acc-xens found that at n = 2000 the binary default's remaining gap to the peers on the
step designs (wang2008_ex1, wuliu2011_ex2, wuliu2011_ex6: the truth takes two values) is
the recalibration map's own estimation error from 2000 labelled pairs, not the mismatch
between the fold fits the map is fitted on and the full fit it is applied to.  This study
caches, per draw of the benchmark of record (:func:`accuracy_vs_peers.load` and
:func:`accuracy_vs_peers.method_estimator`: the same draws, standardisation, 10,000 test
points and estimator), the full fit's raw ``p_hat`` at the test points, the cross-fitted
pairs ``(p, y)`` the map is fitted on (captured from ``binary.fit_calibration``) and the
truth, for the default (``--rule default``) and for ``tuning_rule="widest"``
(``--rule widest``: the one-SE widest cell on the hold-out too, above 500 rows), and
replays candidate maps (:data:`CANDIDATES`) on the cached pairs offline.

The candidates: the library's maps (``auto``, sigmoid, isotonic, spline, and the plateau
map ``l + (h - l) expit(a + b logit p)``), bagged isotonic, the isotonic map smoothed by
the spline, splines with finer penalties or more knots, and choices among more candidates
(``auto_plateau``: the library's ``calibration="auto_plateau"``; ``min_sig_iso_plateau``:
without the spline; ``*_500``: the extra map above 500 pairs only; ``auto_guard_*``: the
extra map only where it beats today's choice by more than one SE).

    nice -n 5 python benchmarks/binary_map_study.py --fit --n 2000 100 --seeds 0 1 2 3 4
    nice -n 5 python benchmarks/binary_map_study.py --fit --n 2000 --rule widest --seeds 0
    nice -n 5 python benchmarks/binary_map_study.py --eval            # every candidate
    python benchmarks/binary_map_study.py --report
    nice -n 5 python benchmarks/binary_map_study.py --cpu FILE --n 2000 100 --seeds 0 1
    python benchmarks/binary_map_study.py --cpu-table FILE
    python benchmarks/binary_map_study.py --record DIR/accuracy_vs_peers.json

``--cpu`` fits the default and ``wsvmgui_plain`` side by side (:func:`cpu_draw`; when
measured, also the variants ``wsvmgui_plateau`` / ``wsvmgui_plateau_widest``, which the
ninth sitting made the default); ``--record`` tabulates a results file of
``accuracy_vs_peers.py`` holding those variants' runs (``acc_binmap_records.json``).

Cache: ``/tmp/acc-binmap/<rule>_<data>_<n>_<seed>.npz``; results
``benchmarks/results/binary_map_study.{md,json}``, ``binary_map_cpu.json``,
``binary_map_record.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULTS = ROOT / "benchmarks" / "results"
NAME = "binary_map_study"
CACHE = Path("/tmp/acc-binmap")
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
N_TEST = 10_000


def _path(rule: str, data: str, n: int, seed: int) -> Path:
    return CACHE / f"{rule}_{data}_{n}_{seed}.npz"


def fit_case(rule: str, data: str, n: int, seed: int) -> None:
    """Fit the default (or ``tuning_rule="widest"``) on one draw and cache what the maps
    need: the pairs, the full fit's raw test estimate, the returned estimate, the truth.

    Since the ninth sitting adopted both, the binary default's ``tuning_rule="auto"`` is
    the widest one-SE cell at every size and its ``calibration="auto"`` chooses among
    the plateau map too: ``"default"`` pins the cell of the eighth sitting's default
    (``"min"`` above 500 rows); the returned estimate cached is today's map."""
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import binary

    out = _path(rule, data, n, seed)
    if out.exists():
        return
    X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
    est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
    assert isinstance(est, binary.WeightedSVMClassifier), type(est)
    if rule == "default" and n > 500:
        est.set_params(tuning_rule="min")
    cap: dict = {}
    orig = binary.fit_calibration

    def fit_calibration(name, p, y, seed=0):
        cap["pairs"] = (name, np.array(p), np.array(y), seed)
        t0 = time.process_time()
        g = orig(name, p, y, seed=seed)
        cap["map_cpu"] = time.process_time() - t0
        return g

    binary.fit_calibration = fit_calibration
    try:
        t0 = time.process_time()
        est.fit(X, codes)
        fit_cpu = time.process_time() - t0
    finally:
        binary.fit_calibration = orig
    t0 = time.process_time()
    P = est.predict_proba(Xt)
    pred_cpu = time.process_time() - t0
    p_full = est._raw_estimate(Xt).p
    name, p_cf, y_cf, map_seed = cap["pairs"]
    t = est.tuning_
    info = {
        "rule": rule, "data": data, "n": int(codes.size), "seed": seed, "fit_cpu": fit_cpu,
        "pred_cpu": pred_cpu, "map_cpu": cap["map_cpu"], "map": est.calibration_.name,
        "map_name": name, "map_seed": int(map_seed), "lambda": est.lambda_,
        "sigma": est.sigma_, "C": est.C_, "tuning_rule": None if t is None else t.rule,
    }  # fmt: skip
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(
        tmp, P1=P[:, 1], p_full=p_full, p_cf=p_cf, y_cf=y_cf, yt=yt,
        p_true=P_true[:, 1], info=json.dumps(info),
    )  # fmt: skip
    tmp.replace(out)
    print(
        f"{time.strftime('%H:%M:%S')} {out.name} fit {fit_cpu:.1f} s, map {cap['map_cpu']:.2f}"
        f" ({est.calibration_.name}), predict {pred_cpu:.2f}",
        flush=True,
    )


def load_case(path: Path) -> dict:
    with np.load(path) as z:
        d = {k: z[k] for k in z.files}
    d["info"] = json.loads(str(d["info"]))
    return d


# ---------------------------------------------------------------------------- candidates
MapFit = Callable[[np.ndarray, np.ndarray, int], Callable[[np.ndarray], np.ndarray]]


def _auto(p, y, seed):
    from wsvmgui.ladder.recalibration import choose_map

    return choose_map(p, y, seed=seed)


def _named(name: str) -> MapFit:
    def fit(p, y, seed):
        from wsvmgui.ladder.recalibration import fit_map

        return fit_map(name, p, y, seed=seed)

    return fit


def _bagged_isotonic(B: int) -> MapFit:
    """Mean of the smoothed isotonic map fitted on B bootstrap resamples of the pairs."""

    def fit(p, y, seed):
        from wsvmgui.ladder.recalibration import fit_map

        rng = np.random.default_rng(seed)
        maps = []
        for _ in range(B):
            i = rng.integers(0, p.size, p.size)
            if y[i].min() == y[i].max():
                continue
            maps.append(fit_map("isotonic", p[i], y[i]))
        return lambda q: np.mean([g(q) for g in maps], axis=0)

    return fit


def _fit_4pl(p, y, seed=0):
    """``g(p) = lo + (hi - lo) expit(a + b logit p)``, ``b >= 0``, ``0 <= lo < hi <= 1``
    by maximum likelihood (the sigmoid with free floor and ceiling)."""
    from scipy.optimize import minimize
    from scipy.special import expit, logit

    from wsvmgui.ladder.recalibration import P_EPS, fit_map

    t = logit(np.clip(p, P_EPS, 1 - P_EPS))
    s = fit_map("sigmoid", p, y)
    c0, b0 = s.coef[0], s.coef[1]
    m = y.size

    def unpack(w):
        a, b, u, v = w
        lo = expit(u)
        hi = lo + (1 - lo) * expit(v)
        return a, b, lo, hi

    def nll(w):
        a, b, lo, hi = unpack(w)
        q = lo + (hi - lo) * expit(a + b * t)
        q = np.clip(q, 1e-12, 1 - 1e-12)
        return -np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)) + 1e-4 * (a * a + b * b) / m

    best = None
    for u0, v0 in ((-8.0, 8.0), (-2.0, 2.0), (-1.0, 1.0)):
        r = minimize(nll, np.array([c0, b0, u0, v0]), method="L-BFGS-B",
                     bounds=[(None, None), (0.0, None), (-20, 20), (-20, 20)])  # fmt: skip
        if best is None or r.fun < best.fun:
            best = r
    a, b, lo, hi = unpack(best.x)
    return lambda q: lo + (hi - lo) * expit(a + b * logit(np.clip(q, P_EPS, 1 - P_EPS)))


def _spline(penalties, knots_div: float) -> MapFit:
    """The library's spline with other penalties / knot counts, penalty by 5-fold CV."""

    def fit(p, y, seed):
        from wsvmgui.ladder import recalibration as rc

        old = (rc.SPLINE_PENALTIES, rc.spline_knots)

        def knots(t):
            count = int(max(3, np.ceil(np.sqrt(t.size) / knots_div)))
            return np.unique(np.quantile(t, np.linspace(0.0, 1.0, count + 2)[1:-1]))

        rc.SPLINE_PENALTIES, rc.spline_knots = tuple(penalties), knots
        try:
            g = rc.fit_map("spline", p, y, seed=seed)
        finally:
            rc.SPLINE_PENALTIES, rc.spline_knots = old
        return g

    return fit


def _soft_spline(p: np.ndarray, soft: np.ndarray, lam: float):
    """The library's spline (:func:`~wsvmgui.ladder.recalibration.fit_spline`) fitted to
    soft labels ``soft`` (m,) in [0, 1] (the same objective: the log loss is defined for
    them)."""
    from scipy.special import expit, logit

    from wsvmgui.ladder import recalibration as rc

    p = np.clip(p, rc.P_EPS, 1 - rc.P_EPS)
    x = expit(rc.spline_knots(logit(p)))
    knots = logit(x)
    B = rc.spline_basis(logit(p), knots)
    m, d = soft.size, B.shape[1]
    Z = np.column_stack([np.ones(m), B])
    D = np.diff(np.eye(d), axis=0)
    Q = np.zeros((d + 1, d + 1))
    Q[1:, 1:] = lam / m * (D.T @ D) + rc.RIDGE / d * np.eye(d)
    c, slope = rc._logistic(logit(p)[:, None], soft, [(None, None), (0.0, None)])
    w = rc._projected_newton(Z, soft, Q, np.r_[c + slope * knots[0], np.full(d, slope)])
    floor = 1.0 / (2.0 * (m + 1))
    return rc.MonotoneMap("spline", x, np.zeros(0), w, floor, 1 - floor)


def _iso_spline(p, y, seed):
    """The isotonic map smoothed by the spline: the spline fitted to the isotonic map's
    values at the pairs as soft labels, its penalty (of the library's) by 5-fold CV log
    loss against the labels (the isotonic map refitted on each fold's training part)."""
    from wsvmgui.ladder import recalibration as rc

    folds = rc._folds(y, 5, seed)
    loss = {}
    for lam in rc.SPLINE_PENALTIES:
        q = np.zeros(p.size)
        for tr, te in folds:
            soft = rc.fit_map("isotonic", p[tr], y[tr])(p[tr])
            q[te] = _soft_spline(p[tr], soft, lam)(p[te])
        loss[lam] = rc._log_loss_terms(q, y).mean()
    lam = min(loss, key=loss.get)
    return _soft_spline(p, rc.fit_map("isotonic", p, y)(p), lam)


def _auto_plus(extra: dict[str, MapFit], min_pairs: int = 0) -> MapFit:
    """``calibration="auto"`` with ``extra`` maps beside the sigmoid and the isotonic map
    (the least CV log loss; the spline guard over that choice as today), the extras only
    on more than ``min_pairs`` pairs: what adding them to ``AUTO_MAPS`` would do."""

    def fit(p, y, seed):
        from wsvmgui.ladder import recalibration as rc

        if p.size <= min_pairs:
            return _auto(p, y, seed)
        guard = rc.auto_guard(p.size)
        folds = rc._folds(y, 5, seed)
        fits = rc._candidates(rc.AUTO_MAPS, guard is not None, seed)
        fits.update({k: (lambda a, b, f=f: f(a, b, seed)) for k, f in extra.items()})
        q = rc._out_of_fold(p, y, fits, folds)
        terms = {k: rc._log_loss_terms(v, y) for k, v in q.items()}
        key = rc.guarded_choice(terms, (*rc.AUTO_MAPS, *extra), guard)
        return fits[key](p, y)

    return fit


def _cv_choice(
    cands: dict[str, MapFit], guard_base: tuple[str, ...] | None = None, z: float = 1.0
) -> MapFit:
    """Of ``cands``, the least 5-fold CV log loss on the pairs (the library's folds); with
    ``guard_base``, the least of those unless another beats it by more than ``z``
    standard errors of the paired per-row difference."""

    def fit(p, y, seed):
        from wsvmgui.ladder import recalibration as rc

        folds = rc._folds(y, 5, seed)
        q = {k: np.zeros(p.size) for k in cands}
        for tr, te in folds:
            for k, f in cands.items():
                q[k][te] = f(p[tr], y[tr], seed)(p[te])
        terms = {k: rc._log_loss_terms(v, y) for k, v in q.items()}
        base = list(guard_base or cands)
        key = min(base, key=lambda k: terms[k].mean())
        if guard_base is not None:
            for k in cands:
                if k in base:
                    continue
                d = terms[k] - terms[key]
                se = d.std(ddof=1) / np.sqrt(d.size)
                if d.mean() < -z * se and terms[k].mean() < terms[key].mean():
                    key = k
        return cands[key](p, y, seed)

    return fit


def _today_parts() -> dict[str, MapFit]:
    return {"sigmoid": _named("sigmoid"), "isotonic": _named("isotonic")}


def _guarded(extra: dict[str, MapFit], z: float = 1.0) -> MapFit:
    """Today's guarded choice (sigmoid / isotonic, the spline above 500 pairs) with
    ``extra`` candidates entering through the same guard (more than ``z`` SE better)."""

    def fit(p, y, seed):
        from wsvmgui.ladder import recalibration as rc

        base = _auto(p, y, seed)
        folds = rc._folds(y, 5, seed)
        q_base = np.zeros(p.size)
        q = {k: np.zeros(p.size) for k in extra}
        for tr, te in folds:
            q_base[te] = _auto(p[tr], y[tr], seed)(p[te])
            for k, f in extra.items():
                q[k][te] = f(p[tr], y[tr], seed)(p[te])
        t0 = rc._log_loss_terms(q_base, y)
        best, best_v = None, t0.mean()
        for k, v in q.items():
            d = rc._log_loss_terms(v, y) - t0
            se = d.std(ddof=1) / np.sqrt(d.size)
            if d.mean() < -z * se and t0.mean() + d.mean() < best_v:
                best, best_v = k, t0.mean() + d.mean()
        return base if best is None else extra[best](p, y, seed)

    return fit


def candidates() -> dict[str, MapFit]:
    fine = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
    return {
        "auto": _auto,
        "sigmoid": _named("sigmoid"),
        "isotonic": _named("isotonic"),
        "spline": _named("spline"),
        "bag_iso50": _bagged_isotonic(50),
        "4pl": _fit_4pl,
        "plateau": _named("plateau"),
        "spline_fine": _spline(fine, 0.75),
        "spline_knots2x": _spline((0.03, 0.3, 3.0), 0.375),
        "spline_fine_knots2x": _spline(fine, 0.375),
        "iso_spline": _iso_spline,
        "auto_plateau": _auto_plus({"plateau": _named("plateau")}),
        "min_sig_iso_plateau": _cv_choice({**_today_parts(), "plateau": _named("plateau")}),
        "auto_plateau_500": _auto_plus({"plateau": _named("plateau")}, 500),
        "auto_guard_plateau": _guarded({"plateau": _named("plateau")}),
        "auto_isospline_500": _auto_plus({"iso_spline": _iso_spline}, 500),
        "auto_guard_bag": _guarded({"bag_iso50": _bagged_isotonic(50)}),
    }


# ---------------------------------------------------------------------------- evaluation
def l1(q: np.ndarray, t: np.ndarray) -> float:
    """Binary L1 (both classes): 2 mean |q - t|."""
    return float(2 * np.mean(np.abs(q - t)))


def evaluate_case(path: Path, names: list[str] | None = None) -> dict:
    from sklearn.isotonic import IsotonicRegression

    d = load_case(path)
    info = d["info"]
    seed = info["map_seed"]
    t = d["p_true"]
    out: dict = {"info": info, "L1": {}, "cpu": {}}
    cands = candidates()
    for k in names or list(cands):
        t0 = time.process_time()
        g = cands[k](d["p_cf"], d["y_cf"], seed)
        out["cpu"][k] = time.process_time() - t0
        out["L1"][k] = l1(g(d["p_full"]), t)
    out["L1_returned"] = l1(d["P1"], t)
    h = IsotonicRegression(out_of_bounds="clip").fit(d["p_full"], t)
    out["L1_hindsight"] = l1(h.predict(d["p_full"]), t)
    out["L1_raw"] = l1(d["p_full"], t)
    return out


def summarise(res: dict) -> dict:
    """Per (data, n, seed set): every candidate's mean L1 on the default's cache and on the
    widest rule's, its ratio to today's (the default's ``auto``) and the draws better /
    worse than today's; per draw the map today picks and the hindsight gap."""
    sets = {"0-4": range(0, 5), "5-9": range(5, 10)}
    out: dict = {"rows": {}, "draws": {}}
    for data in DESIGNS:
        for n in (2000, 100):
            for label, seeds in sets.items():
                base = [res.get(f"default_{data}_{n}_{s}") for s in seeds]
                if any(b is None for b in base):
                    continue
                today = np.array([b["L1"]["auto"] for b in base])
                row: dict = {"today": float(today.mean()),
                             "hindsight": float(np.mean([b["L1_hindsight"] for b in base])),
                             "maps": [b["info"]["map"] for b in base], "cand": {}}  # fmt: skip
                for rule in ("default", "widest"):
                    cases = [res.get(f"{rule}_{data}_{n}_{s}") for s in seeds]
                    if any(c is None for c in cases):
                        continue
                    for k in cases[0]["L1"]:
                        v = np.array([c["L1"][k] for c in cases])
                        key = k if rule == "default" else f"widest+{k}"
                        row["cand"][key] = {
                            "mean": float(v.mean()),
                            "ratio": float(v.mean() / today.mean()),
                            "better": int(np.sum(v < today - 1e-12)),
                            "worse": int(np.sum(v > today + 1e-12)),
                            "cpu": float(np.mean([c["cpu"][k] for c in cases])),
                        }
                out["rows"][f"{data} n={n} seeds {label}"] = row
    for key, r in res.items():
        out["draws"][key] = {
            "map": r["info"]["map"], "auto": r["L1"]["auto"], "hindsight": r["L1_hindsight"],
            "raw": r["L1_raw"], "sigma": r["info"]["sigma"], "C": r["info"]["C"],
            "fit_cpu": r["info"]["fit_cpu"],
        }  # fmt: skip
    return out


def write_report(summary: dict, stem: Path) -> None:
    stem.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    rows = summary["rows"]
    cands = sorted({k for r in rows.values() for k in r["cand"]},
                   key=lambda k: (k.startswith("widest+"), k))  # fmt: skip
    lines = [
        "# Binary map study (issue 23, ninth sitting, branch acc-binmap)",
        "",
        "Generated by `benchmarks/binary_map_study.py --report` from the cache of "
        "/tmp/acc-binmap/ (see the script's docstring).  Ratio of each candidate's mean L1 "
        "to today's (`auto` on the default's pairs, which reproduces `predict_proba` "
        "exactly), draws better / worse in brackets; `widest+X`: map X on the pairs and "
        'raw estimate of `tuning_rule="widest"` (its own fit), against today\'s default.',
        "",
        "| row | today | hindsight | maps today | " + " | ".join(cands) + " |",
        "|---|---|---|---|" + "---|" * len(cands),
    ]
    for key, r in rows.items():
        maps = "/".join(m[:3] for m in r["maps"])
        cells = []
        for k in cands:
            c = r["cand"].get(k)
            cells.append("" if c is None else f"{c['ratio']:.3f} ({c['better']}/{c['worse']})")
        lines.append(f"| {key} | {r['today']:.4f} | {r['hindsight']:.4f} | {maps} | "
                     + " | ".join(cells) + " |")  # fmt: skip
    lines += [
        "",
        "Per draw (the default): map today, L1 today, hindsight L1 (isotonic "
        "regression of the truth on the full fit's raw estimate), gap, raw L1:",
        "",
        "| draw | map | today | hindsight | gap | raw |",
        "|---|---|---|---|---|---|",
    ]
    for key, dr in sorted(summary["draws"].items()):
        if not key.startswith("default_"):
            continue
        lines.append(
            f"| {key[8:]} | {dr['map']} | {dr['auto']:.4f} | {dr['hindsight']:.4f} | "
            f"{dr['auto'] - dr['hindsight']:.4f} | {dr['raw']:.4f} |"
        )
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")


#: The variants ``wsvmgui_plateau`` and ``wsvmgui_plateau_widest`` of the measurement became
#: the default (the latter's records were re-keyed as ``wsvmgui``'s), so the stage now fits
#: the default against ``wsvmgui_plain``; ``binary_map_cpu.json`` holds the four side by side.
CPU_METHODS = ("wsvmgui_plain", "wsvmgui")


def cpu_draw(data: str, n: int, seed: int) -> dict:
    """Fit :data:`CPU_METHODS` on one draw side by side in this process (a small warm-up
    fit first, then the methods in turn): CPU seconds of ``fit`` + ``predict_proba``
    (10,000 test points on a design), L1 (log loss on a real set) and the pickled fitted
    estimator's size (bytes)."""
    import pickle

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
        # L1 against the truth on a design, the log loss on a real set
        score = (
            avp.metrics(P, yt, None)["log_loss"] if P_true is None else l1(P[:, 1], P_true[:, 1])
        )
        out[method] = {"cpu": cpu, "score": score, "bytes": len(pickle.dumps(est)),
                       "map": getattr(est, "fit_info_", {}).get("calibration")}  # fmt: skip
    print(f"{time.strftime('%H:%M:%S')} cpu {data} {n} {seed}: "
          + ", ".join(f"{m} {v['cpu']:.1f} s" for m, v in out.items()), flush=True)  # fmt: skip
    return out


RECORD_METHODS = ("wsvmgui", "wsvmgui_plateau", "wsvmgui_plateau_widest")
RECORD_PEERS = ("platt", "sigmoid", "isotonic", "venn_abers")


def record_table(path: Path) -> str:
    """Markdown: from a results file of ``accuracy_vs_peers.py``, per binary row and seed
    set, the mean L1 (log loss on breast cancer) of :data:`RECORD_METHODS`, their ratio
    to the default and to the best SVM peer (the peer of least mean over those seeds),
    and the draws better / worse than the default."""
    runs = json.loads(path.read_text())["runs"]

    def value(data: str, n, seed: int, method: str) -> float | None:
        group = "svm" if method in RECORD_PEERS else method
        for row in runs.get(f"{data}|{n or 'split'}|{seed}|{group}", []):
            if row.get("method") == method:
                return row["L1"] if "L1" in row and data in DESIGNS else row["log_loss"]
        return None

    lines = [
        "| row | seeds | default | plateau | plateau + widest | plateau / default "
        "(better/worse) | plateau + widest / default (better/worse) | best SVM peer | "
        "default / peer | plateau / peer | plateau + widest / peer |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = [(d, n) for n in (2000, 100) for d in DESIGNS] + [("breast_cancer", None)]
    for data, n in rows:
        for label, seeds in (("0-4", range(5)), ("5-9", range(5, 10))):
            v = {m: [value(data, n, s, m) for s in seeds] for m in RECORD_METHODS}
            if any(x is None for x in v["wsvmgui"]):
                continue
            base = np.array(v["wsvmgui"])
            cells, means = [], {}
            for m in RECORD_METHODS:
                means[m] = float(np.mean(v[m])) if None not in v[m] else float("nan")
            peers = {m: [value(data, n, s, m) for s in seeds] for m in RECORD_PEERS}
            peers = {m: float(np.mean(x)) for m, x in peers.items() if None not in x}
            best = min(peers.values()) if peers else float("nan")
            for m in RECORD_METHODS[1:]:
                if None in v[m]:
                    cells.append("")
                    continue
                a = np.array(v[m])
                better, worse = int(np.sum(a < base - 1e-12)), int(np.sum(a > base + 1e-12))
                cells.append(f"{means[m] / means['wsvmgui']:.3f} ({better}/{worse})")
            name = f"{data} n = {n}" if n else f"{data} (log loss)"
            lines.append(
                f"| {name} | {label} | "
                + " | ".join(f"{means[m]:.4f}" for m in RECORD_METHODS)
                + " | "
                + " | ".join(cells)
                + f" | {best:.4f} | "
                + " | ".join(f"{means[m] / best:.2f}" for m in RECORD_METHODS)
                + " |"
            )
    return "\n".join(lines) + "\n"


def cpu_table(path: Path) -> str:
    """Markdown: the side-by-side CPU (:func:`cpu_draw`) summed per row, as ratios."""
    done = json.loads(path.read_text())
    lines = [
        "| row | draws | " + " | ".join(f"{m} CPU s" for m in CPU_METHODS)
        + " | plateau / plain | plateau / default | plateau + widest / plain | "
        "plateau + widest / default | pickled size plateau / default | "
        "pickled size plateau + widest / default |",
        "|---|---|" + "---|" * (len(CPU_METHODS) + 6),
    ]  # fmt: skip
    groups: dict = {}
    for key, row in done.items():
        groups.setdefault(key.rsplit("_", 1)[0], []).append(row)
    for name, rows in sorted(groups.items()):
        cpu = {m: sum(r[m]["cpu"] for r in rows) for m in CPU_METHODS}
        size = {m: sum(r[m]["bytes"] for r in rows) for m in CPU_METHODS}
        plain, default = cpu["wsvmgui_plain"], cpu["wsvmgui"]
        pl, pw = cpu["wsvmgui_plateau"], cpu["wsvmgui_plateau_widest"]
        lines.append(
            f"| {name} | {len(rows)} | "
            + " | ".join(f"{cpu[m]:.1f}" for m in CPU_METHODS)
            + f" | {pl / plain:.2f} | {pl / default:.2f} | {pw / plain:.2f} | "
            f"{pw / default:.2f} | {size['wsvmgui_plateau'] / size['wsvmgui']:.3f} | "
            f"{size['wsvmgui_plateau_widest'] / size['wsvmgui']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--rule", choices=("default", "widest"), default="default")
    ap.add_argument("--n", type=int, nargs="+", default=[2000])
    ap.add_argument("--data", nargs="+", default=list(DESIGNS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--eval", nargs="*", metavar="CANDIDATE")
    ap.add_argument("--glob", default="*.npz", help="cache files to evaluate")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--record", metavar="FILE", help="tables of a results file of the record")
    ap.add_argument("--cpu-table", metavar="FILE", help="table of a --cpu file")
    ap.add_argument("--cpu", metavar="FILE", help="fit CPU_METHODS side by side; append to FILE")
    args = ap.parse_args(argv)
    if args.fit:
        for seed in args.seeds:
            for n in args.n:
                for data in args.data:
                    fit_case(args.rule, data, n, seed)
    if args.record:
        print(record_table(Path(args.record)))
    if args.cpu_table:
        print(cpu_table(Path(args.cpu_table)))
    if args.cpu:
        path = Path(args.cpu)
        done = json.loads(path.read_text()) if path.exists() else {}
        for seed in args.seeds:
            for n in args.n:
                for data in args.data:
                    key = f"{data}_{n if data in DESIGNS else 'split'}_{seed}"
                    if key not in done:
                        done[key] = cpu_draw(data, n, seed)
                        path.write_text(json.dumps(done, indent=1))
    if args.eval is not None:
        store = CACHE / "eval.json"
        res = json.loads(store.read_text()) if store.exists() else {}
        want = args.eval or list(candidates())
        for path in sorted(CACHE.glob(args.glob)):
            if path.name.endswith(".tmp.npz"):
                continue
            old = res.get(path.stem)
            if old is not None and all(k in old["L1"] for k in want):
                continue
            new = evaluate_case(path, [k for k in want if old is None or k not in old["L1"]])
            if old is not None:
                old["L1"].update(new["L1"])
                old["cpu"].update(new["cpu"])
                new = old
            res[path.stem] = new
            print(path.stem, json.dumps({k: round(v, 4) for k, v in res[path.stem]["L1"].items()}),
                  flush=True)  # fmt: skip
            store.write_text(json.dumps(res))
    if args.report:
        res = json.loads((CACHE / "eval.json").read_text())
        write_report(summarise(res), RESULTS / NAME)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
