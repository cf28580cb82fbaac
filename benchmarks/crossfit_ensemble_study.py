"""Does the recalibration map fit the estimate it is applied to? (issue 23, eighth sitting)

The binary default fits its map ``g`` on the *fold fits'* out-of-fold estimates (each fold
fit on 2/3 of the rows at n = 2000, 4/5 at n <= 500; C kept, lambda rescaled) and applies
it to the *full fit's* ``p_hat``.  This study caches, per draw of the benchmark of record
(``accuracy_vs_peers.load`` and ``method_estimator("wsvmgui")``: the same draws,
standardisation, test points and estimator), the full fit's raw ``p_hat`` at the test
points, every fold fit's raw ``p_hat`` there, the cross-fitted pairs (with the fold of
each), the full fit's in-sample ``p_hat`` at the training rows, the same fold fits with
lambda *not* rescaled (C larger by n / n_fold) and their pairs, and the CPU of each part
(final fit, fold fits, map, prediction by the full ladder and by the fold ladders) and the
ladders' sizes.  ``--eval`` then scores the variants offline (:data:`VARIANTS`):

* ``a_full``: today, ``g(p_full)`` (checked against the estimator's ``predict_proba``);
* ``b_ens``: ``mean_f g(p_f)`` (scikit-learn's ``CalibratedClassifierCV(ensemble=True)``);
* ``c_meanp``: ``g(mean_f p_f)``;
* ``d_ab`` / ``d_ac``: the averages of a and b, a and c;
* ``b_perfold``: each fold fit through a map fitted on its own pairs only (what
  ``CalibratedClassifierCV(ensemble=True)`` does);
* ``a_u``, ``b_ens_u``, ``c_meanp_u``, ``d_ab_u``: the same with the unrescaled fold fits
  and the map fitted on their pairs; ``e_insample``: a map fitted on the full fit's
  in-sample ``p_hat``; ``e_mean4``: ``g`` of the mean of the full and the fold fits'
  ``p_hat``; ``e_sig`` / ``e_sig4``: c / e_mean4 where the chosen map is the sigmoid,
  today's estimate otherwise.

Diagnostics: the raw estimates' spread at the test points (full, folds, unrescaled folds,
pairs), and maps fitted in hindsight on the truth (isotonic regression of the true p on
the full fit's or the pooled fold fits' p_hat), which separate the mismatch from the
map's own estimation error.  ``--multiclass DESIGN`` fits the multiclass default on the
design at n = 2000 (``--mc-n``) and couples each pair's a, b and c (``<cache>/mc/``).

Stages::

    nice -n 5 python benchmarks/crossfit_ensemble_study.py --fit first --seeds 0 1 2
    nice -n 5 python benchmarks/crossfit_ensemble_study.py --fit designs2000 --seeds $(seq 0 9)
    nice -n 5 python benchmarks/crossfit_ensemble_study.py --fit designs100 --seeds $(seq 0 9)
    nice -n 5 python benchmarks/crossfit_ensemble_study.py --fit breast --seeds 3 4 5 6 7 8 9
    nice -n 5 python benchmarks/crossfit_ensemble_study.py --multiclass wu2010_ex1 --seeds 0 1 2
    python benchmarks/crossfit_ensemble_study.py --eval
    python benchmarks/crossfit_ensemble_study.py --report

Cache: ``/tmp/acc-xens/<data>_<n>_<seed>.npz``; results
``benchmarks/results/crossfit_ensemble_study.{md,json}``.
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

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULTS = ROOT / "benchmarks" / "results"
NAME = "crossfit_ensemble_study"
CACHE = Path("/tmp/acc-xens")
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
N_TEST = 10_000
CASES = {
    "first": [("wuliu2011_ex1", 2000), ("wang2008_ex1", 2000), ("breast_cancer", None)],
    "designs2000": [(d, 2000) for d in DESIGNS],
    "designs100": [(d, 100) for d in DESIGNS],
    "breast": [("breast_cancer", None)],
}


def _path(data: str, n, seed: int) -> Path:
    return CACHE / f"{data}_{n or 'split'}_{seed}.npz"


def _nbytes(obj, seen=None) -> int:
    """Bytes of the numpy arrays reachable from ``obj`` (dataclass fields, attributes)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o, seen) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(o, seen) for o in obj.values())
    d = getattr(obj, "__dict__", None)
    if d is None and hasattr(obj, "__slots__"):
        d = {s: getattr(obj, s, None) for s in obj.__slots__}
    return 0 if d is None else sum(_nbytes(o, seen) for o in d.values())


def _estimate(fit, X: np.ndarray, Xt: np.ndarray, rule: str, step: int = 2000) -> np.ndarray:
    """A FittedLadder's raw estimate at ``Xt`` (m,), in blocks of ``step`` rows."""
    Xs = X[fit.support]
    return np.concatenate(
        [fit.ladder.estimate(fit.kernel(Xt[i : i + step], Xs), rule).p
         for i in range(0, Xt.shape[0], step)]
    )  # fmt: skip


def fit_case(data: str, n, seed: int) -> None:
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import binary
    from wsvmgui.ladder import recalibration as rc

    out = _path(data, n, seed)
    if out.exists():
        return
    X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
    est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
    assert isinstance(est, binary.WeightedSVMClassifier), type(est)
    cap: dict = {"fits": [], "fold_cpu": [], "final_cpu": 0.0, "map_cpu": 0.0}
    orig = (rc.fold_fits, binary.fit_ladders, binary.fit_calibration, binary.cross_fitted)

    def fold_fits(*a, **k):
        gen = orig[0](*a, **k)
        while True:
            t0 = time.process_time()
            try:
                item = next(gen)
            except StopIteration:
                return
            cap["fold_cpu"].append(time.process_time() - t0)
            cap["fits"].append(item)
            yield item

    def fit_ladders(*a, **k):
        t0 = time.process_time()
        r = orig[1](*a, **k)
        cap["final_cpu"] += time.process_time() - t0
        return r

    def fit_calibration(name, p, y, seed=0):
        cap["pairs"] = (name, np.array(p), np.array(y), seed)
        t0 = time.process_time()
        g = orig[2](name, p, y, seed=seed)
        cap["map_cpu"] += time.process_time() - t0
        return g

    def cross_fitted(*a, **k):
        cap["cf_args"] = (a, dict(k))
        t0 = time.process_time()
        r = orig[3](*a, **k)
        cap["cf_cpu"] = time.process_time() - t0
        return r

    rc.fold_fits, binary.fit_ladders = fold_fits, fit_ladders
    binary.fit_calibration, binary.cross_fitted = fit_calibration, cross_fitted
    try:
        t0 = time.process_time()
        est.fit(X, codes)
        fit_cpu = time.process_time() - t0
    finally:
        rc.fold_fits, binary.fit_ladders, binary.fit_calibration, binary.cross_fitted = orig
    rule = est.rule
    t0 = time.process_time()
    P = est.predict_proba(Xt)
    pred_cpu_full = time.process_time() - t0
    p_full = est._raw_estimate(Xt).p
    fits = list(cap["fits"])
    t0 = time.process_time()
    p_fold = np.array([_estimate(f, X, Xt, rule) for f, _, _ in fits])
    pred_cpu_folds = time.process_time() - t0
    te_rows = np.concatenate([te for _, te, _ in fits])
    fold_of_pair = np.concatenate([np.full(te.size, i) for i, (_, te, _) in enumerate(fits)])
    p_full_train = est._raw_estimate(X).p
    name, p_cf, y_cf, map_seed = cap["pairs"]

    # the same folds with lambda not rescaled (the full fit's lambda on each fold's rows)
    a, k = cap["cf_args"]
    ufits: list = []

    def record(*aa, **kk):
        for item in orig[0](*aa, **kk):
            ufits.append(item)
            yield item

    rescale = rc.rescale_lambda
    rc.rescale_lambda = lambda lam, n_tuned, n_final: float(lam)
    rc.fold_fits = record
    try:
        t0 = time.process_time()
        kk = {**k, "spread": False}
        p_cf_u, y_cf_u = orig[3](*a, **kk)
        ufit_cpu = time.process_time() - t0
    finally:
        rc.rescale_lambda, rc.fold_fits = rescale, orig[0]
    p_fold_u = np.array([_estimate(f, X, Xt, rule) for f, _, _ in ufits])

    mem_full = _nbytes(est.ladder_) + int(est.X_support_.nbytes)
    mem_folds = sum(_nbytes(f.ladder) + int(X[f.support].nbytes) for f, _, _ in fits)
    info = {
        "data": data, "n": int(codes.size), "seed": seed, "fit_cpu": fit_cpu,
        "final_cpu": cap["final_cpu"], "fold_cpu": cap["fold_cpu"], "cf_cpu": cap["cf_cpu"],
        "map_cpu": cap["map_cpu"], "ufit_cpu": ufit_cpu, "pred_cpu_full": pred_cpu_full,
        "pred_cpu_folds": pred_cpu_folds, "mem_full": mem_full, "mem_folds": mem_folds,
        "map": est.calibration_.name, "map_name": name, "map_seed": int(map_seed),
        "lambda": est.lambda_, "sigma": est.sigma_, "n_test": int(Xt.shape[0]),
        "fold_lams": [f.lam for f, _, _ in fits], "ufold_lams": [f.lam for f, _, _ in ufits],
        "fold_rows": [float(f.n_train) for f, _, _ in fits],
        "support_full": int(est.X_support_.shape[0]),
        "support_folds": [int(f.support.size) for f, _, _ in fits],
    }  # fmt: skip
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(
        tmp, P1=P[:, 1], p_full=p_full, p_fold=p_fold, p_fold_u=p_fold_u, p_cf=p_cf,
        y_cf=y_cf, p_cf_u=p_cf_u, y_cf_u=y_cf_u, te_rows=te_rows, fold_of_pair=fold_of_pair,
        p_full_train=p_full_train, codes=codes, yt=yt,
        p_true=np.zeros(0) if P_true is None else P_true[:, 1], info=json.dumps(info),
    )  # fmt: skip
    tmp.replace(out)
    print(
        f"{time.strftime('%H:%M:%S')} {out.name} fit {fit_cpu:.1f} s (final "
        f"{cap['final_cpu']:.1f}, folds {sum(cap['fold_cpu']):.1f}, unrescaled {ufit_cpu:.1f})"
        f" predict {pred_cpu_full:.2f} / folds {pred_cpu_folds:.2f}",
        flush=True,
    )


MC_CACHE = CACHE / "mc"


def fit_multiclass(data: str, n, seed: int) -> None:
    """The multiclass default on one draw: its probabilities today (a: each pair's map on
    the full pair fit), with each pair's raw estimate replaced by the mean of its fold
    fits' (c) and with the mean of the mapped fold estimates (b), coupled as the estimator
    couples; and each pair's raw estimates' spread at the test points."""
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import multiclass
    from wsvmgui.ladder import recalibration as rc
    from wsvmgui.ladder.rules import LadderEstimate

    out = MC_CACHE / f"{data}_{n}_{seed}.npz"
    if out.exists():
        return
    X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
    est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
    assert isinstance(est, multiclass.MulticlassWeightedSVMClassifier), type(est)
    fits: list = []
    orig = rc.fold_fits

    def fold_fits(*a, **k):
        for item in orig(*a, **k):
            fits.append(item)
            yield item

    rc.fold_fits = fold_fits
    try:
        t0 = time.process_time()
        est.fit(X, codes)
        fit_cpu = time.process_time() - t0
    finally:
        rc.fold_fits = orig
    maps = est.calibrations_
    n_pairs = len(maps)
    k = len(fits) // n_pairs
    rule = est.rule
    raw = est.subproblems_.estimates(Xt, rule)
    folds = [np.array([_estimate(f, X, Xt, rule) for f, _, _ in fits[i * k : (i + 1) * k]])
             for i in range(n_pairs)]  # fmt: skip
    P_a = est.predict_proba(Xt)

    def with_raw(ps):
        return [LadderEstimate(p, p, p, e.monotone) for p, e in zip(ps, raw, strict=True)]

    est._estimates = lambda X_: with_raw(  # type: ignore[method-assign]
        [g(f.mean(axis=0)) for g, f in zip(maps, folds, strict=True)]
    )
    P_c = est.predict_proba(Xt)
    est._estimates = lambda X_: with_raw(  # type: ignore[method-assign]
        [g(f).mean(axis=0) for g, f in zip(maps, folds, strict=True)]
    )
    P_b = est.predict_proba(Xt)
    del est._estimates
    spread = {
        "mad_half_full": [float(np.mean(np.abs(e.p - 0.5))) for e in raw],
        "mad_half_fold": [float(np.mean(np.abs(f - 0.5))) for f in folds],
        "maps": [g.name for g in maps], "fit_cpu": fit_cpu, "k": k,
    }  # fmt: skip
    MC_CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, P_a=P_a, P_b=P_b, P_c=P_c, P_true=P_true, yt=yt,
                        info=json.dumps(spread))  # fmt: skip
    tmp.replace(out)
    print(f"{time.strftime('%H:%M:%S')} {out.name} fit {fit_cpu:.1f} s", flush=True)


def multiclass_summary() -> dict:
    """Per multiclass draw: L1 of a (today), b and c against the truth, and the spread."""
    from wsvmgui.evaluation.metrics import l1_error

    rows = {}
    for path in sorted(MC_CACHE.glob("*.npz")):
        with np.load(path) as z:
            d = {k: z[k] for k in z.files}
        info = json.loads(str(d["info"]))
        rows[path.stem] = {
            **{f"L1_{v}": float(l1_error(d[f"P_{v}"], d["P_true"])) for v in "abc"},
            **info,
        }
    return rows


def load_case(path: Path) -> dict:
    with np.load(path) as z:
        d = {k: z[k] for k in z.files}
    d["info"] = json.loads(str(d["info"]))
    return d


#: Variants scored by :func:`variants` (see the module docstring).
VARIANTS = (
    "a_full", "b_ens", "b_perfold", "c_meanp", "d_ab", "d_ac",
    "a_u", "b_ens_u", "c_meanp_u", "d_ab_u", "e_insample", "e_mean4", "e_sig", "e_sig4",
)  # fmt: skip


def variants(d: dict) -> dict[str, np.ndarray]:
    """Every variant's P(class 1) at the test points of cached case ``d``; shape (m,)."""
    from wsvmgui.ladder.recalibration import fit_calibration

    info = d["info"]
    name, seed = info["map_name"], info["map_seed"]
    g = fit_calibration(name, d["p_cf"], d["y_cf"], seed=seed)
    g_u = fit_calibration(name, d["p_cf_u"], d["y_cf_u"], seed=seed)
    g_in = fit_calibration(name, d["p_full_train"], d["codes"].astype(float), seed=seed)
    pf, pfu, fold = d["p_fold"], d["p_fold_u"], d["fold_of_pair"]
    per_fold = []
    for f in range(pf.shape[0]):
        sel = fold == f
        g_f = fit_calibration(name, d["p_cf"][sel], d["y_cf"][sel], seed=seed)
        per_fold.append(g_f(pf[f]))
    out = {
        "a_full": g(d["p_full"]),
        "b_ens": g(pf).mean(axis=0),
        "b_perfold": np.mean(per_fold, axis=0),
        "c_meanp": g(pf.mean(axis=0)),
        "a_u": g_u(d["p_full"]),
        "b_ens_u": g_u(pfu).mean(axis=0),
        "c_meanp_u": g_u(pfu.mean(axis=0)),
        "e_insample": g_in(d["p_full"]),
    }
    # the full fit and the fold fits averaged (weights 1/4 each at k = 3; 1/(k + 1))
    out["e_mean4"] = g((d["p_full"] + pf.sum(axis=0)) / (pf.shape[0] + 1))
    # c (or e_mean4) where the chosen map is the sigmoid, today's estimate otherwise
    sig = g.name == "sigmoid"
    out["e_sig"] = out["c_meanp"] if sig else out["a_full"]
    out["e_sig4"] = out["e_mean4"] if sig else out["a_full"]
    out["d_ab"] = (out["a_full"] + out["b_ens"]) / 2
    out["d_ac"] = (out["a_full"] + out["c_meanp"]) / 2
    out["d_ab_u"] = (out["a_u"] + out["b_ens_u"]) / 2
    return {k: out[k] for k in VARIANTS}


def scores(p: np.ndarray, d: dict) -> dict[str, float]:
    """L1 (both classes) against the truth (designs), log loss and Brier (sum over
    classes) against the test labels, of P(class 1) = ``p`` (m,)."""
    from wsvmgui.evaluation.metrics import cross_entropy

    y = d["yt"]
    P = np.column_stack([1 - p, p])
    out = {
        "log_loss": float(cross_entropy(P, y, np.arange(2))),
        "brier": float(2 * np.mean((p - y) ** 2)),
    }
    if d["p_true"].size:
        out["L1"] = float(2 * np.mean(np.abs(p - d["p_true"])))
    return out


def _sharpness(p: np.ndarray) -> dict[str, float]:
    """How spread out estimates ``p`` (...) are: mean |p - 1/2|, sd, and quantiles."""
    q = np.quantile(p, [0.05, 0.25, 0.5, 0.75, 0.95])
    return {"mad_half": float(np.mean(np.abs(p - 0.5))), "sd": float(np.std(p)),
            "q": [float(v) for v in q]}  # fmt: skip


def diagnose(d: dict) -> dict:
    """The distribution claim at the test points: the full fit's raw p_hat against each
    fold fit's (rescaled and not), and each against the truth before the map."""
    out = {
        "full": _sharpness(d["p_full"]),
        "fold": _sharpness(d["p_fold"]),
        "fold_u": _sharpness(d["p_fold_u"]),
        "meanp": _sharpness(d["p_fold"].mean(axis=0)),
        "pairs": _sharpness(d["p_cf"]),
        "pairs_u": _sharpness(d["p_cf_u"]),
        "full_train": _sharpness(d["p_full_train"]),
        # rank agreement of the full fit's and the fold fits' estimates at the test points
        "corr_full_fold": float(np.mean([np.corrcoef(d["p_full"], f)[0, 1] for f in d["p_fold"]])),
    }
    if d["p_true"].size:
        t = d["p_true"]
        out["raw_L1_full"] = float(2 * np.mean(np.abs(d["p_full"] - t)))
        out["raw_L1_fold"] = float(np.mean([2 * np.mean(np.abs(f - t)) for f in d["p_fold"]]))
        out.update(_hindsight(d))
    return out


def _hindsight(d: dict) -> dict[str, float]:
    """Maps fitted in hindsight on the truth at the test points (designs): isotonic
    regression of p on the full fit's p_hat (``h_full``) and on the fold fits' p_hat
    pooled (``h_fold``, the population the map's pairs come from).  L1 of
    ``h_full(p_full)`` (the best any monotone map of p_full can do), of ``h_fold(p_full)``
    (the fold fits' best map applied to the full fit: the mismatch with the map known
    exactly) and of ``h_fold(p_f)`` averaged over the folds."""
    from sklearn.isotonic import IsotonicRegression

    t, pf = d["p_true"], d["p_fold"]
    h_full = IsotonicRegression(out_of_bounds="clip").fit(d["p_full"], t)
    h_fold = IsotonicRegression(out_of_bounds="clip").fit(pf.ravel(), np.tile(t, pf.shape[0]))

    def l1(q: np.ndarray) -> float:
        return float(2 * np.mean(np.abs(q - t)))

    return {
        "oracle_full": l1(h_full.predict(d["p_full"])),
        "oracle_fold_on_full": l1(h_fold.predict(d["p_full"])),
        "oracle_fold_on_fold": float(np.mean([l1(h_fold.predict(f)) for f in pf])),
        "oracle_fold_on_meanp": l1(h_fold.predict(pf.mean(axis=0))),
    }


def evaluate(paths: list[Path]) -> dict:
    rows = []
    for path in paths:
        d = load_case(path)
        info = d["info"]
        v = variants(d)
        check = float(np.max(np.abs(v["a_full"] - d["P1"])))
        rows.append({
            "data": info["data"], "n": info["n"], "seed": info["seed"], "map": info["map"],
            "check_max_abs": check,
            "scores": {k: scores(p, d) for k, p in v.items()},
            "single_fold_L1": (
                [scores(np.asarray(f), d).get("L1") for f in _single_fold(d)]
                if d["p_true"].size else None
            ),
            "diag": diagnose(d),
            "cpu": {k: info[k] for k in ("fit_cpu", "final_cpu", "cf_cpu", "map_cpu",
                                          "ufit_cpu", "pred_cpu_full", "pred_cpu_folds")}
                   | {"fold_cpu": float(sum(info["fold_cpu"]))},
            "mem": {"full": info["mem_full"], "folds": info["mem_folds"]},
            "n_test": info["n_test"], "support_full": info["support_full"],
            "support_folds": info["support_folds"],
        })  # fmt: skip
    return {"rows": rows, "summary": summarise(rows)}


def _single_fold(d: dict) -> list[np.ndarray]:
    from wsvmgui.ladder.recalibration import fit_calibration

    info = d["info"]
    g = fit_calibration(info["map_name"], d["p_cf"], d["y_cf"], seed=info["map_seed"])
    return [g(f) for f in d["p_fold"]]


ORACLES = ("oracle_full", "oracle_fold_on_full", "oracle_fold_on_fold", "oracle_fold_on_meanp")


def _group(row: dict) -> str:
    return f"{row['data']} n={row['n']}"


def summarise(rows: list[dict]) -> dict:
    """Per (data, n) and seed set (0-4, 5-9): each variant's mean score, its ratio to
    ``a_full``, and per-draw better / worse counts."""
    out: dict = {}
    for key in sorted({_group(r) for r in rows}):
        for seeds, label in ((range(5), "0-4"), (range(5, 10), "5-9")):
            rs = [r for r in rows if _group(r) == key and r["seed"] in seeds]
            if not rs:
                continue
            metric_names = ["L1"] if "L1" in rs[0]["scores"]["a_full"] else ["log_loss", "brier"]
            entry: dict = {"seeds": sorted(r["seed"] for r in rs), "variants": {}}
            for v in VARIANTS:
                e = {}
                for m in metric_names:
                    base = np.array([r["scores"]["a_full"][m] for r in rs])
                    val = np.array([r["scores"][v][m] for r in rs])
                    e[m] = float(val.mean())
                    e[f"{m}_ratio"] = float(val.mean() / base.mean())
                    e[f"{m}_better"] = int(np.sum(val < base - 1e-12))
                    e[f"{m}_worse"] = int(np.sum(val > base + 1e-12))
                entry["variants"][v] = e
            cpu = {k: float(np.mean([r["cpu"][k] for r in rs])) for k in rs[0]["cpu"]}
            entry["cpu"] = cpu
            entry["mem"] = {k: float(np.mean([r["mem"][k] for r in rs])) for k in ("full", "folds")}
            entry["check_max_abs"] = float(max(r["check_max_abs"] for r in rs))
            entry["diag"] = {
                k: float(np.mean([r["diag"][k] for r in rs]))
                for k in ("corr_full_fold", "raw_L1_full", "raw_L1_fold", *ORACLES)
                if k in rs[0]["diag"]
            }
            for k in ("full", "fold", "fold_u", "meanp", "pairs", "pairs_u", "full_train"):
                entry["diag"][f"mad_half_{k}"] = float(
                    np.mean([r["diag"][k]["mad_half"] for r in rs])
                )
            if rs[0]["single_fold_L1"] is not None:
                entry["diag"]["single_fold_L1"] = float(
                    np.mean([np.mean(r["single_fold_L1"]) for r in rs])
                )
            out[f"{key} seeds {label}"] = entry
    return out


def write_report(table: dict, stem: Path) -> None:
    stem.parent.mkdir(parents=True, exist_ok=True)
    tmp = stem.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(table, indent=1))
    tmp.replace(stem.with_suffix(".json"))
    tmp = stem.with_suffix(".md.tmp")
    tmp.write_text(report_md(table["summary"], table.get("multiclass")))
    tmp.replace(stem.with_suffix(".md"))


def multiclass_md(rows: dict) -> list[str]:
    """The multiclass check's table (one row per draw)."""
    if not rows:
        return []
    lines = [
        "",
        "Multiclass (the default pairwise scheme, each pair's map; L1 against the truth of "
        "the coupled probabilities; mean |q - 1/2| of each pair's raw estimate, full fit / "
        "fold fits):",
        "",
        "| draw | a (today) | b mean g(q_f) | c g(mean q_f) | maps | pairs' mean abs(q - 1/2) "
        "full / folds |",
        "|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, str], list[dict]] = {}
    for key, r in rows.items():
        data, n, seed = key.rsplit("_", 2)
        label = "0-4" if int(seed) < 5 else "5-9"
        groups.setdefault((f"{data} n={n}", label), []).append(r)
    for (name, label), rs in groups.items():
        a = np.mean([r["L1_a"] for r in rs])
        cells = []
        for v in "bc":
            m = np.mean([r[f"L1_{v}"] for r in rs])
            better = sum(r[f"L1_{v}"] < r["L1_a"] for r in rs)
            worse = sum(r[f"L1_{v}"] > r["L1_a"] for r in rs)
            cells.append(f"{m:.4f} ({m / a:.3f}; {better}/{worse})")
        lines.append(f"| **{name} seeds {label} (mean)** | {a:.4f} | {cells[0]} | {cells[1]} | | |")
    for key, r in rows.items():
        sharp = ", ".join(
            f"{a:.3f} / {b:.3f}"
            for a, b in zip(r["mad_half_full"], r["mad_half_fold"], strict=True)
        )
        lines.append(
            f"| {key} | {r['L1_a']:.4f} | {r['L1_b']:.4f} ({r['L1_b'] / r['L1_a']:.3f}) | "
            f"{r['L1_c']:.4f} ({r['L1_c'] / r['L1_a']:.3f}) | {', '.join(r['maps'])} | "
            f"{sharp} |"
        )
    return lines


def report_md(summary: dict, multiclass: dict | None = None) -> str:
    lines = [
        "# Cross-fit ensemble study (branch acc-xens)",
        "",
        "Written by `benchmarks/crossfit_ensemble_study.py --report` from the cache in "
        "/tmp/acc-xens/ (the benchmark of record's draws and default estimator). Ratio: "
        "mean score over the seeds / today's `a_full` (g(p_full)); better / worse: draws. "
        "Metric: L1 (both classes) on the designs, log loss (Brier in the second table) on "
        "breast cancer.",
        "",
        "| rows | seeds | " + " | ".join(VARIANTS) + " |",
        "|---|---|" + "---|" * len(VARIANTS),
    ]
    for key, e in summary.items():
        m = "L1" if "L1" in e["variants"]["a_full"] else "log_loss"
        cells = []
        for v in VARIANTS:
            x = e["variants"][v]
            if v == "a_full":
                cells.append(f"{x[m]:.4f}")
            else:
                cells.append(f"{x[m + '_ratio']:.3f} ({x[m + '_better']}/{x[m + '_worse']})")
        rows_name = key.rsplit(" seeds ", 1)
        lines.append(f"| {rows_name[0]} ({m}) | {rows_name[1]} | " + " | ".join(cells) + " |")
    lines += ["", "Brier (breast cancer):", "",
              "| rows | seeds | " + " | ".join(VARIANTS) + " |",
              "|---|---|" + "---|" * len(VARIANTS)]  # fmt: skip
    for key, e in summary.items():
        if "brier" not in e["variants"]["a_full"]:
            continue
        cells = []
        for v in VARIANTS:
            x = e["variants"][v]
            cells.append(
                f"{x['brier']:.4f}" if v == "a_full"
                else f"{x['brier_ratio']:.3f} ({x['brier_better']}/{x['brier_worse']})"
            )  # fmt: skip
        rows_name = key.rsplit(" seeds ", 1)
        lines.append(f"| {rows_name[0]} | {rows_name[1]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Distribution at the test points (mean |p - 1/2| of the raw estimates; raw L1 "
        "before the map; corr: Pearson of p_full with each fold fit's p):",
        "",
        "| rows | seeds | full | fold | fold unrescaled | mean of folds | pairs | pairs "
        "unrescaled | full in-sample | corr | raw L1 full | raw L1 fold | g(one fold) L1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, e in summary.items():
        g = e["diag"]
        rows_name = key.rsplit(" seeds ", 1)
        vals = [g[f"mad_half_{k}"] for k in
                ("full", "fold", "fold_u", "meanp", "pairs", "pairs_u", "full_train")]  # fmt: skip
        extra = [g.get("corr_full_fold"), g.get("raw_L1_full"), g.get("raw_L1_fold"),
                 g.get("single_fold_L1")]  # fmt: skip
        lines.append(
            f"| {rows_name[0]} | {rows_name[1]} | "
            + " | ".join(f"{v:.3f}" for v in vals)
            + " | "
            + " | ".join("" if v is None else f"{v:.4f}" for v in extra)
            + " |"
        )
    lines += [
        "",
        "Maps in hindsight (designs; isotonic regression of the true p at the test points on "
        "the raw estimate): L1 of `g(p_full)` (today), `h_full(p_full)` (the best monotone map "
        "of the full fit), `h_fold(p_full)` (the fold fits' best map applied to the full fit: "
        "the mismatch with the map known exactly), `h_fold(p_f)` (one fold fit, mean over "
        "folds) and `h_fold(mean_f p_f)`:",
        "",
        "| rows | seeds | g(p_full) | h_full(p_full) | h_fold(p_full) | h_fold(p_f) | "
        "h_fold(mean p_f) |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, e in summary.items():
        g = e["diag"]
        if "oracle_full" not in g:
            continue
        rows_name = key.rsplit(" seeds ", 1)
        lines.append(
            f"| {rows_name[0]} | {rows_name[1]} | {e['variants']['a_full']['L1']:.4f} | "
            + " | ".join(f"{g[k]:.4f}" for k in ORACLES)
            + " |"
        )
    lines += [
        "",
        "CPU seconds (mean per draw; `final`: the full fit's ladder, `folds`: the "
        "calibration's fold fits, `predict`: the test points by the full ladder / by the "
        "fold ladders) and memory (MB of the ladders and their support rows):",
        "",
        "| rows | seeds | fit | final | folds | map | predict full | predict folds | "
        "fit without final | mem full | mem folds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, e in summary.items():
        c, mm = e["cpu"], e["mem"]
        rows_name = key.rsplit(" seeds ", 1)
        lines.append(
            f"| {rows_name[0]} | {rows_name[1]} | {c['fit_cpu']:.2f} | {c['final_cpu']:.2f} | "
            f"{c['fold_cpu']:.2f} | {c['map_cpu']:.3f} | {c['pred_cpu_full']:.3f} | "
            f"{c['pred_cpu_folds']:.3f} | {c['fit_cpu'] - c['final_cpu']:.2f} | "
            f"{mm['full'] / 1e6:.2f} | {mm['folds'] / 1e6:.2f} |"
        )
    lines += multiclass_md(multiclass or {})
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", choices=sorted(CASES))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--multiclass", nargs="*", metavar="DESIGN")
    ap.add_argument("--mc-n", type=int, default=2000, help="rows of the multiclass draws")
    ap.add_argument("--eval", action="store_true")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if args.fit:
        for seed in args.seeds:
            for data, n in CASES[args.fit]:
                fit_case(data, n, seed)
    if args.multiclass is not None:
        for seed in args.seeds:
            for data in args.multiclass or ["wu2010_ex1"]:
                fit_multiclass(data, args.mc_n, seed)
    if args.eval or args.report:
        table = evaluate(sorted(CACHE.glob("*.npz")))
        table["multiclass"] = multiclass_summary()
        if args.report:
            write_report(table, RESULTS / NAME)
        else:
            print(json.dumps(table["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
