"""Recalibration maps compared on cached fits (issue 23 item 2: a monotone spline).

Stage ``--fit`` fits the default ``WeightedSVMClassifier`` once per (design, n, seed) and
breast cancer split -- the draws, splits and standardisation of
``benchmarks/accuracy_vs_peers.py`` (its ``load``), the estimator as its method
``wsvmgui`` builds it -- and keeps, in ``<cache>/<data>_<n>_<seed>.npz``: the
cross-fitted pairs ``(p_cf, y_cf)`` the calibration was fitted on (captured at
``fit_calibration``), the full fit's raw ladder estimate ``raw`` on the test points, the
default's reported ``proba`` (check), the truth ``p_true`` (designs) and the test labels
``y_test``.  Stage ``--eval`` fits every candidate map on the cached pairs, applies it to
``raw`` and scores it (L1 both classes against the truth; log loss and Brier against the
labels) into ``benchmarks/results/map_study.{md,json}``.  Offline, so cheap::

    nice -n 5 python benchmarks/map_study.py --fit      # ~ the default's fits
    python benchmarks/map_study.py --eval
    # a check on fresh draws (results in map_study_seeds5_9.{md,json})
    nice -n 5 python benchmarks/map_study.py --fit --seeds 5 6 7 8 9
    python benchmarks/map_study.py --eval --seeds 5 6 7 8 9 --name map_study_seeds5_9 \
        --only sigmoid isotonic bagged_iso splineS_cv auto_si one_se blend min_S1_0.1_1_10 \
        min_S1_0.03_0.3_3 min_si_S1_0.1_1_10 guard1_S1_0.03_0.3_3 guard1_S0.75_0.03_0.3_3 \
        guard0.5_S1_0.03_0.3_3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.special import expit, logit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULTS = ROOT / "benchmarks" / "results"
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
SIZES = (100, 2000)
SEEDS = (0, 1, 2, 3, 4)
N_TEST = 10_000


@contextlib.contextmanager
def spline_guard(z: float | None):
    """``recalibration``'s spline guard set to ``z`` at every pair count while the block
    runs (``AUTO_SPLINE_MIN_PAIRS`` 0: the studies measure the guard itself, their
    variants set their own minimum), both restored after."""
    from wsvmgui.ladder import recalibration as rc

    saved = rc.AUTO_SPLINE_GUARD, rc.AUTO_SPLINE_MIN_PAIRS
    rc.AUTO_SPLINE_GUARD, rc.AUTO_SPLINE_MIN_PAIRS = z, 0
    try:
        yield
    finally:
        rc.AUTO_SPLINE_GUARD, rc.AUTO_SPLINE_MIN_PAIRS = saved


def cases(seeds=SEEDS):
    for n in SIZES:
        for d in DESIGNS:
            for s in seeds:
                yield d, n, s
    for s in seeds:
        yield "breast_cancer", None, s


def _path(cache: Path, data: str, n, seed: int) -> Path:
    return cache / f"{data}_{n or 'split'}_{seed}.npz"


def fit_stage(cache: Path, seeds=SEEDS) -> None:
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import binary

    captured: list[tuple[np.ndarray, np.ndarray]] = []
    original = binary.fit_calibration

    def recording(name, p, y, seed=0):
        captured.append((np.array(p, dtype=float), np.array(y, dtype=float)))
        return original(name, p, y, seed=seed)

    binary.fit_calibration = recording
    cache.mkdir(parents=True, exist_ok=True)
    for data, n, seed in cases(seeds):
        out = _path(cache, data, n, seed)
        if out.exists():
            continue
        X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
        est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
        captured.clear()
        t0 = time.process_time()
        est.fit(X, codes)
        proba = est.predict_proba(Xt)[:, 1]
        cpu = time.process_time() - t0
        assert len(captured) == 1, "expected one calibration fit"
        p_cf, y_cf = captured[0]
        raw = est._raw_estimate(est._check_X(Xt)).p
        np.savez(
            out,
            p_cf=p_cf,
            y_cf=y_cf,
            raw=raw,
            proba=proba,
            p_true=np.zeros(0) if P_true is None else P_true[:, 1],
            y_test=yt.astype(float),
            cpu=cpu,
            calibration=est.fit_info_.get("calibration", ""),
        )
        print(f"{time.strftime('%H:%M:%S')} {out.name} cpu {cpu:.1f} s", flush=True)


MC_DATA = ("wu2010_ex1", "wu2010_ex2", "wu2010_ex4", "zeng_ex1", "zeng_ex2", "zeng_ex3",
           "zeng_ex4", "iris", "wine", "penguins", "digits")  # fmt: skip


#: Stricter guards scored beside the library's: the spline only with at least ``least``
#: pairs, or only where it wins by more than ``z`` standard errors.
GUARD_VARIANTS = {"m150": (150, 1.0), "m300": (300, 1.0), "z2": (0, 2.0)}


def mc_stage(seeds=SEEDS, data=MC_DATA, size: int | None = None) -> dict:
    """The multiclass default fitted once per (design at its paper size or real split,
    seed) with ``auto`` and the guarded spline (z = 1); its maps then replaced by
    ``auto`` without the spline refitted on the same captured pairs, and both scored on
    the same test points (paired).  Also the CPU of each map choice against the fit's."""
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import multiclass
    from wsvmgui.evaluation.designs import DESIGNS as D
    from wsvmgui.ladder import recalibration as rc

    captured: list[tuple[np.ndarray, np.ndarray, int, float]] = []
    original = multiclass.fit_calibration

    def recording(name, p, y, seed=0):
        t0 = time.process_time()
        g = original(name, p, y, seed=seed)
        captured.append((np.array(p, dtype=float), np.array(y, dtype=float), seed,
                         time.process_time() - t0))  # fmt: skip
        return g

    multiclass.fit_calibration = recording
    rows = []
    try:
        with spline_guard(1.0):  # the fit's "auto" is the guarded rule measured
            for name in data:
                for seed in seeds:
                    n = (size or D[name].default_n) if name in D else None
                    X, codes, Xt, yt, P_true, K = avp.load(name, n, seed, N_TEST)
                    est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
                    captured.clear()
                    t0 = time.process_time()
                    est.fit(X, codes)
                    cpu = time.process_time() - t0
                    new = avp.metrics(est.predict_proba(Xt), yt, P_true)
                    names_new = [g.name for g in est.calibrations_]
                    t0 = time.process_time()
                    est.calibrations_ = [rc.choose_map(p, y, seed=sd, spline=False)
                                         for p, y, sd, _ in captured]  # fmt: skip
                    cpu_old = time.process_time() - t0
                    old = avp.metrics(est.predict_proba(Xt), yt, P_true)
                    variants = {}
                    for tag, (least, z) in GUARD_VARIANTS.items():
                        with spline_guard(z):
                            est.calibrations_ = [
                                rc.choose_map(p, y, seed=sd, spline=p.size >= least)
                                for p, y, sd, _ in captured
                            ]
                        variants[tag] = avp.metrics(est.predict_proba(Xt), yt, P_true)
                    rows.append({
                        "data": name, "n": n, "seed": seed, "K": K, "cpu_fit": cpu,
                        "cpu_maps_guarded": float(sum(c[3] for c in captured)),
                        "cpu_maps_auto": cpu_old, "pairs": [int(c[0].size) for c in captured],
                        "maps_guarded": names_new, "guarded": new, "auto": old, **variants,
                    })  # fmt: skip
                    key = "L1" if P_true is not None else "log_loss"
                    print(f"{time.strftime('%H:%M:%S')} {name} {seed} {key} {new[key]:.4f} / "
                          f"{old[key]:.4f} spline {names_new.count('spline')}/{len(names_new)}",
                          flush=True)  # fmt: skip
    finally:
        multiclass.fit_calibration = original
    return {"rows": rows}


def mc_report(res: dict) -> str:
    rows = res["rows"]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["data"], r["n"]), []).append(r)
    lines = [
        "# Multiclass: the guarded spline in `auto` against `auto` without it (paired)",
        "",
        "`benchmarks/map_study.py --mc`: the default multiclass estimator fitted once per"
        " draw; every sub-problem's map refitted without the spline on the same cross-fitted"
        " pairs; L1 against the truth (designs, 10,000 test points) or test log loss (real"
        " sets).  CPU: the map choices' share of the fit (single-threaded, same process).",
        "",
        "| data | n | seeds | guarded | auto | ratio | seeds better/worse | spline maps |"
        " pairs per map (mean) | map CPU guarded / auto / fit (s, mean) | "
        + " | ".join(f"ratio {v}" for v in GUARD_VARIANTS)
        + " |",
        "|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(GUARD_VARIANTS),
    ]
    for (d, n), rs in groups.items():
        key = "L1" if "L1" in rs[0]["auto"] else "log_loss"
        a = np.array([r["guarded"][key] for r in rs])
        b = np.array([r["auto"][key] for r in rs])
        spl = sum(r["maps_guarded"].count("spline") for r in rs)
        tot = sum(len(r["maps_guarded"]) for r in rs)
        lines.append(
            f"| {d} | {n or 'split'} | {len(rs)} | {a.mean():.4f} | {b.mean():.4f} | "
            f"{a.mean() / b.mean():.3f} | {int(np.sum(a < b - 1e-12))}/{int(np.sum(a > b + 1e-12))}"
            f" | {spl}/{tot} | {np.mean([np.mean(r['pairs']) for r in rs]):.0f} | "
            f"{np.mean([r['cpu_maps_guarded'] for r in rs]):.2f} / "
            f"{np.mean([r['cpu_maps_auto'] for r in rs]):.2f} / "
            f"{np.mean([r['cpu_fit'] for r in rs]):.2f} | "
            + " | ".join(f"{np.mean([r[v][key] for r in rs]) / b.mean():.3f}"
                         for v in GUARD_VARIANTS if v in rs[0]) + " |"
        )  # fmt: skip
    return "\n".join(lines) + "\n"


def cpu_stage(
    plan=(
        ("wuliu2011_ex2", 100, (0, 1, 2, 3, 4)),
        ("wang2008_ex1", 100, (0, 1, 2, 3, 4)),
        ("wuliu2011_ex2", 2000, (0, 1)),
        ("wang2008_ex1", 2000, (0, 1)),
    ),
) -> dict:
    """The binary default fitted twice per draw in one process, ``auto`` with the guarded
    spline at every pair count and without (:func:`spline_guard` None), the order alternating:
    CPU of each fit (``time.process_time``) and of its map choice."""
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import binary

    spent = [0.0]
    original = binary.fit_calibration

    def timed(name, p, y, seed=0):
        t0 = time.process_time()
        g = original(name, p, y, seed=seed)
        spent[0] += time.process_time() - t0
        return g

    binary.fit_calibration = timed
    guard = 1.0  # the guard measured, at every pair count
    rows = []
    try:
        X0, codes0, *_ = avp.load(plan[0][0], plan[0][1], 99, 10)  # warm-up: imports, JIT
        est, X, codes, _ = avp.method_estimator("wsvmgui", 2, X0, codes0)
        est.fit(X, codes)
        for k, (name, n, seeds) in enumerate(plan):
            for seed in seeds:
                X0, codes0, Xt, yt, P_true, K = avp.load(name, n, seed, 2000)
                rec = {"data": name, "n": n, "seed": seed}
                order = (guard, None) if (k + seed) % 2 == 0 else (None, guard)
                for g in order:
                    est, X, codes, _ = avp.method_estimator("wsvmgui", K, X0, codes0)
                    spent[0] = 0.0
                    t0 = time.process_time()
                    with spline_guard(g):
                        est.fit(X, codes)
                    tag = "guarded" if g is not None else "auto"
                    rec[tag] = {"cpu": time.process_time() - t0, "cpu_map": spent[0],
                                "map": est.calibration_.name}  # fmt: skip
                rows.append(rec)
                done = [f"{t} {rec[t]['cpu']:.2f} (map {rec[t]['cpu_map']:.3f})"
                        for t in ("guarded", "auto")]  # fmt: skip
                print(f"{name} {n} {seed} " + " ".join(done), flush=True)
    finally:
        binary.fit_calibration = original
    return {"rows": rows}


def cpu_report(res: dict) -> str:
    groups: dict = {}
    for r in res["rows"]:
        groups.setdefault((r["data"], r["n"]), []).append(r)
    lines = [
        "# CPU: the binary default with the guarded spline in `auto` and without",
        "",
        "`benchmarks/map_study.py --cpu`: both fits of a draw in one single-threaded process,"
        " order alternating; `time.process_time` of the fit and of its map choice.",
        "",
        "| data | n | draws | fit CPU guarded / auto (s, mean) | ratio | map choice guarded /"
        " auto (s, mean) | map share of the guarded fit |",
        "|---|---|---|---|---|---|---|",
    ]
    for (d, n), rs in groups.items():
        a = np.mean([r["guarded"]["cpu"] for r in rs])
        b = np.mean([r["auto"]["cpu"] for r in rs])
        ma = np.mean([r["guarded"]["cpu_map"] for r in rs])
        mb = np.mean([r["auto"]["cpu_map"] for r in rs])
        lines.append(f"| {d} | {n} | {len(rs)} | {a:.2f} / {b:.2f} | {a / b:.3f} | "
                     f"{ma:.3f} / {mb:.3f} | {ma / a:.1%} |")  # fmt: skip
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ candidates
#: Logits of estimates are taken after clipping to [EPS, 1 - EPS].
EPS = 1e-6


def _basis(t: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Monotone ramp basis of t (m,) at sorted knots (J,): (m, J + 1) columns, each
    non-decreasing in t and linear on one interval between knots (constant elsewhere)."""
    cols = [np.minimum(t, knots[0]) - knots[0]]
    cols += [np.clip(t, a, b) - a for a, b in zip(knots[:-1], knots[1:], strict=True)]
    cols.append(np.maximum(t, knots[-1]) - knots[-1])
    return np.column_stack(cols)


class Spline:
    """``g(p) = expit(a + sum_j c_j r_j(logit p))``, c_j >= 0: monotone, piecewise linear
    in logit p (slope c_j between knots j and j + 1)."""

    name = "spline"

    def __init__(self, knots, w, lo, hi):
        self.knots, self.w, self.lo, self.hi = knots, w, lo, hi

    def __call__(self, p):
        t = logit(np.clip(p, EPS, 1 - EPS))
        z = self.w[0] + _basis(t, self.knots) @ self.w[1:]
        return np.clip(expit(z), self.lo, self.hi)


def fit_spline(p, y, n_knots=5, lam=3.0, ridge=1e-4) -> Spline:
    """Penalised logistic fit of y on the ramp basis of logit p, knots at the
    ``n_knots`` interior quantiles, slopes >= 0; penalty ``lam / m`` times the squared
    differences of adjacent slopes (lam -> infinity: the sigmoid map), plus the sigmoid
    map's ridge on a common slope."""
    from scipy.optimize import minimize

    t = logit(np.clip(p, EPS, 1 - EPS))
    knots = np.unique(np.quantile(t, np.linspace(0, 1, n_knots + 2)[1:-1]))
    B = _basis(t, knots)
    m, d = y.size, B.shape[1]
    Z = np.column_stack([np.ones(m), B])
    D = np.diff(np.eye(d), axis=0)
    # the ridge is spread over the d slopes (d * (ridge / d) c^2 for a common slope c, the
    # sigmoid map's ridge): a ridge per slope would shrink the slope with the knot count
    P = lam / m * (D.T @ D) + ridge / d * np.eye(d)

    def f(w):
        z = Z @ w
        v = np.mean(np.logaddexp(0, z) - y * z) + w[1:] @ P @ w[1:]
        g = Z.T @ (expit(z) - y) / m
        g[1:] += 2 * P @ w[1:]
        return v, g

    r = np.clip(y.mean(), 1e-3, 1 - 1e-3)
    w0 = np.r_[np.log(r / (1 - r)), np.full(d, 0.5)]
    bounds = [(None, None)] + [(0, None)] * d
    res = minimize(f, w0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 500, "gtol": 1e-9})  # fmt: skip
    floor = 1.0 / (2.0 * (m + 1))
    return Spline(knots, res.x, floor, 1 - floor)


def sqrt_knots(m: int, div: float = 1.0) -> int:
    """Knots growing with the pairs: ceil(sqrt(m) / div), at least 3."""
    return int(max(3, np.ceil(np.sqrt(m) / div)))


def _oof(fits: dict, p, y, k=5, seed=0) -> dict:
    """Out-of-fold predictions of every map of ``fits`` (name -> fit(p, y)) on the same
    stratified folds as ``recalibration.map_scores``."""
    from sklearn.model_selection import StratifiedKFold

    k = int(min(k, y.sum(), (1 - y).sum()))
    q = {n: np.empty(p.size) for n in fits}
    for tr, te in StratifiedKFold(k, shuffle=True, random_state=seed).split(p[:, None], y):
        for n, fit in fits.items():
            q[n][te] = fit(p[tr], y[tr])(p[te])
    return q


def _terms(q, y):
    q = np.clip(q, 1e-12, 1 - 1e-12)
    return -(y * np.log(q) + (1 - y) * np.log1p(-q))


def spline_cv(p, y, lams, n_knots, seed=0) -> Spline:
    """The spline with the penalty of ``lams`` of least inner-CV log loss."""
    fits = {v: (lambda a, b, v=v: fit_spline(a, b, n_knots, v)) for v in lams}
    q = _oof(fits, p, y, seed=seed)
    return fit_spline(p, y, n_knots, min(lams, key=lambda v: _terms(q[v], y).mean()))


class Blend:
    name = "blend"

    def __init__(self, w, a, b):
        self.w, self.a, self.b = w, a, b

    def __call__(self, p):
        return self.w * self.a(p) + (1 - self.w) * self.b(p)


def blend(p, y, fits, seed=0) -> Blend:
    """w sigmoid + (1 - w) isotonic, w in {0, 0.1, ..., 1} of least CV log loss."""
    q = _oof({m: fits[m] for m in ("sigmoid", "isotonic")}, p, y, seed=seed)
    w = min(np.linspace(0, 1, 11),
            key=lambda w: _terms(w * q["sigmoid"] + (1 - w) * q["isotonic"], y).mean())  # fmt: skip
    return Blend(w, fits["sigmoid"](p, y), fits["isotonic"](p, y))


def min_choice(p, y, fits, seed=0):
    """The map of least CV log loss (what ``"auto"`` does, over ``fits``)."""
    q = _oof(fits, p, y, seed=seed)
    return fits[min(fits, key=lambda n: _terms(q[n], y).mean())](p, y)


def one_se(p, y, fits, seed=0):
    """The first map of ``fits`` (simplest first) within one SE of the paired CV
    log-loss difference to the best."""
    q = _oof(fits, p, y, seed=seed)
    T = {n: _terms(q[n], y) for n in fits}
    best = min(fits, key=lambda n: T[n].mean())
    for n in fits:
        d = T[n] - T[best]
        if n == best or d.mean() <= d.std(ddof=1) / np.sqrt(d.size):
            return fits[n](p, y)
    raise AssertionError


def guarded(p, y, old, new, fits, seed=0, z=1.0):
    """The best of ``old`` (today's auto) unless the best of ``new`` beats it in CV log
    loss by more than ``z`` standard errors of the paired difference."""
    q = _oof(fits, p, y, seed=seed)
    T = {n: _terms(q[n], y) for n in fits}
    bo = min(old, key=lambda n: T[n].mean())
    bn = min(new, key=lambda n: T[n].mean())
    d = T[bn] - T[bo]
    return fits[bn](p, y) if d.mean() < -z * d.std(ddof=1) / np.sqrt(d.size) else fits[bo](p, y)


def _bagged_isotonic(p, y, B=30, seed=0):
    from wsvmgui.ladder.recalibration import fit_map

    rng = np.random.default_rng(seed)
    maps = []
    for _ in range(B):
        i = rng.integers(0, p.size, p.size)
        if y[i].min() != y[i].max():
            maps.append(fit_map("isotonic", p[i], y[i]))
    return lambda q: np.mean([g(q) for g in maps], axis=0)


def _venn_abers(p, y, grid_size=400):
    """Inductive Venn-ABERS (Vovk & Petej), p1 / (1 - p0 + p1), on a grid of estimates."""
    from sklearn.isotonic import IsotonicRegression

    grid = np.unique(np.quantile(np.r_[p, EPS, 1 - EPS], np.linspace(0, 1, grid_size)))
    p0, p1 = np.empty(grid.size), np.empty(grid.size)
    for j, g in enumerate(grid):
        for lab, out in ((0.0, p0), (1.0, p1)):
            ir = IsotonicRegression(out_of_bounds="clip").fit(np.r_[p, g], np.r_[y, lab])
            out[j] = ir.predict([g])[0]
    v = p1 / (1 - p0 + p1)
    return lambda q: np.interp(q, grid, v)


def _variant(p, y, seed, least, z):
    """``recalibration.choose_map`` with the guard of a :data:`GUARD_VARIANTS` entry."""
    from wsvmgui.ladder import recalibration as rc

    with spline_guard(z):
        return rc.choose_map(p, y, seed=seed, spline=p.size >= least)


def candidates() -> dict:
    """name -> fit(p, y, seed) -> callable map."""
    from wsvmgui.ladder import recalibration as rc

    old = ("sigmoid", "beta", "isotonic")  # the fifth sitting's auto (with beta)
    base = {m: (lambda a, b, m=m: rc.fit_map(m, a, b)) for m in old}

    def with_splines(div, lams, names=old):
        spl = {f"spline{v:g}": (lambda a, b, v=v: fit_spline(a, b, sqrt_knots(b.size, div), v))
               for v in lams}  # fmt: skip
        return {**{m: base[m] for m in names}, **spl}, tuple(spl)

    out = {
        # today's auto without the spline; "library": recalibration.choose_map as built
        # (the guarded spline with the library's converged fit, knots ceil(sqrt(m) / 0.75))
        "auto": lambda p, y, s: rc.choose_map(p, y, seed=s, spline=False),
        "library": lambda p, y, s: _variant(p, y, s, 0, 1.0),
        **{
            f"library_{v}": (lambda p, y, s, v=v: _variant(p, y, s, *GUARD_VARIANTS[v]))
            for v in GUARD_VARIANTS
        },  # fmt: skip
        "sigmoid": lambda p, y, s: rc.fit_map("sigmoid", p, y),
        "isotonic": lambda p, y, s: rc.fit_map("isotonic", p, y),
        "bagged_iso": lambda p, y, s: _bagged_isotonic(p, y, seed=s),
        "venn_abers": lambda p, y, s: _venn_abers(p, y),
        "spline5_cv": lambda p, y, s: spline_cv(p, y, (0.3, 3, 30, 300), 5, s),
        "spline20_cv": lambda p, y, s: spline_cv(p, y, (0.01, 0.1, 1, 10, 100), 20, s),
        "splineS_cv": lambda p, y, s: spline_cv(
            p, y, (0.01, 0.1, 1, 10, 100), sqrt_knots(y.size), s
        ),
        "auto_si": lambda p, y, s: rc.choose_map(p, y, maps=("sigmoid", "isotonic"), seed=s),
        "one_se": lambda p, y, s: one_se(p, y, base, s),
        "blend": lambda p, y, s: blend(p, y, base, s),
    }
    for div, lams in ((1.0, (0.03, 0.3, 3)), (1.0, (0.1, 1, 10)), (0.75, (0.03, 0.3, 3))):
        tag = f"S{div:g}_" + "_".join(f"{v:g}" for v in lams)
        fits, new = with_splines(div, lams)
        out[f"min_{tag}"] = lambda p, y, s, f=fits: min_choice(p, y, f, s)
        fits_si, _ = with_splines(div, lams, ("sigmoid", "isotonic"))
        out[f"min_si_{tag}"] = lambda p, y, s, f=fits_si: min_choice(p, y, f, s)
        for z in (0.5, 1.0):
            out[f"guard{z:g}_{tag}"] = lambda p, y, s, f=fits, n=new, z=z: guarded(
                p, y, old, n, f, s, z
            )
        # the guard against today's auto (sigmoid or isotonic: recalibration.AUTO_MAPS)
        out[f"guard1si_{tag}"] = lambda p, y, s, f=fits_si, n=new: guarded(
            p, y, rc.AUTO_MAPS, n, f, s, 1.0
        )
    return out


def score(q, row):
    q = np.clip(q, 1e-12, 1 - 1e-12)
    yt = row["y_test"]
    out = {
        "log_loss": float(-np.mean(yt * np.log(q) + (1 - yt) * np.log1p(-q))),
        "brier": float(np.mean(2 * (q - yt) ** 2)),
    }
    if row["p_true"].size:
        out["L1"] = float(2 * np.mean(np.abs(q - row["p_true"])))
    return out


def eval_stage(cache: Path, only: list[str] | None, seeds=SEEDS) -> dict:
    cands = candidates()
    if only:
        cands = {k: v for k, v in cands.items() if k in only or k == "auto"}
    rows = []
    for data, n, seed in cases(seeds):
        f = _path(cache, data, n, seed)
        if not f.exists():
            continue
        row = dict(np.load(f))
        check = float(np.max(np.abs(cands["auto"](row["p_cf"], row["y_cf"], 0)(row["raw"])
                                    - row["proba"])))  # fmt: skip
        rec = {"data": data, "n": n, "seed": seed, "auto_check": check,
               "default_map": str(row["calibration"]), "cpu_fit": float(row["cpu"])}  # fmt: skip
        rec["none"] = score(row["raw"], row)
        for name, fit in cands.items():
            t0 = time.process_time()
            g = fit(row["p_cf"], row["y_cf"], 0)
            q = g(row["raw"])
            rec[name] = {**score(q, row), "cpu": time.process_time() - t0}
            rec[name]["map"] = str(getattr(g, "name", ""))
        rows.append(rec)
    return {"rows": rows}


def _label(data: str, n) -> str:
    return f"{data} {n}" if n else "breast cancer"


def report(res: dict) -> str:
    """Two tables, candidates in rows: means over seeds (wins/losses against ``auto``
    over the seeds), and ratios to ``auto`` with the count of lower design rows."""
    rows = res["rows"]
    names = [k for k in rows[0] if isinstance(rows[0][k], dict)]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["data"], r["n"]), []).append(r)
    head = "| map | " + " | ".join(_label(*k) for k in groups) + " |"
    rule = "|---|" + "---|" * len(groups)
    seeds = sorted({r["seed"] for r in rows})
    lines = [
        "# Recalibration maps on cached fits (`benchmarks/map_study.py`)",
        "",
        f"Seeds {seeds}; designs: L1 (both classes) against the truth on 10,000 test points;"
        " breast cancer: log loss on the 30% test split.  Every map is fitted on the"
        " cross-fitted pairs the default's calibration used and applied to the full fit's"
        " raw estimate.  `auto` is today's default; `none` the raw estimate.  Names:"
        " docs/notes/calibration.md (section 'Map study').",
        "",
        "## Means (wins/losses against `auto` over the seeds)",
        "",
        head,
        rule,
    ]
    ratios = {}
    for m in names:
        cells, ratios[m] = [], []
        for rs in groups.values():
            key = "L1" if "L1" in rs[0]["none"] else "log_loss"
            base = np.array([r["auto"][key] for r in rs])
            v = np.array([r[m][key] for r in rs])
            w, lo = int(np.sum(v < base - 1e-12)), int(np.sum(v > base + 1e-12))
            cells.append(f"{v.mean():.4f} ({w}/{lo})")
            ratios[m].append(v.mean() / base.mean())
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Ratio of means to `auto`; design rows lower, worst design row, map CPU",
        "",
        head[:-1] + "| design rows lower | worst | map fit CPU s (mean) |",
        rule + "---|---|---|",
    ]
    for m in names:
        d = np.array(ratios[m][:-1]) if len(ratios[m]) > 8 else np.array(ratios[m])
        cpu = np.mean([r[m].get("cpu", 0.0) for r in rows])
        lines.append(
            f"| {m} | " + " | ".join(f"{x:.3f}" for x in ratios[m])
            + f" | {int(np.sum(d < 1 - 1e-9))} | {d.max():.3f} | {cpu:.3f} |"
        )  # fmt: skip
    bc = groups.get(("breast_cancer", None), [])
    if bc:
        lines += ["", "Breast cancer Brier (both classes): " + ", ".join(
            f"{m} {np.mean([r[m]['brier'] for r in bc]):.4f}" for m in names)]  # fmt: skip
    worst = max(r["auto_check"] for r in rows)
    lines += ["", f"Max |offline auto - estimator's proba|: {worst:.2e} (the cache is the default)"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--eval", action="store_true")
    ap.add_argument("--cache", default="/tmp/acc-maps")
    ap.add_argument("--report", action="store_true", help="rewrite the .md from the .json")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--seeds", nargs="*", type=int, default=list(SEEDS))
    ap.add_argument("--out-dir", default=str(RESULTS))
    ap.add_argument("--name", default="map_study", help="results file name (no suffix)")
    ap.add_argument("--mc", action="store_true", help="the paired multiclass check")
    ap.add_argument("--cpu", action="store_true", help="CPU with and without the spline")
    ap.add_argument("--data", nargs="*", default=list(MC_DATA), help="with --mc")
    ap.add_argument("--n", type=int, default=None, help="with --mc: designs at this n")
    args = ap.parse_args(argv)
    cache = Path(args.cache)
    out = Path(args.out_dir) / args.name
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.fit:
        fit_stage(cache, args.seeds)
    if args.cpu:
        from wsvmgui.io.atomic import atomic_write_text

        res = cpu_stage()
        atomic_write_text(Path(str(out) + ".json"), json.dumps(res, indent=1))
        atomic_write_text(Path(str(out) + ".md"), cpu_report(res))
        print(cpu_report(res))
    if args.mc:
        from wsvmgui.io.atomic import atomic_write_text

        res = mc_stage(args.seeds, args.data, args.n)
        atomic_write_text(Path(str(out) + ".json"), json.dumps(res, indent=1))
        atomic_write_text(Path(str(out) + ".md"), mc_report(res))
        print(mc_report(res))
    if args.report:
        from wsvmgui.io.atomic import atomic_write_text

        res = json.loads(Path(str(out) + ".json").read_text())
        atomic_write_text(Path(str(out) + ".md"), report(res))
    if args.eval:
        res = eval_stage(cache, args.only, args.seeds)
        from wsvmgui.io.atomic import atomic_write_text

        atomic_write_text(Path(str(out) + ".json"), json.dumps(res, indent=1))
        atomic_write_text(Path(str(out) + ".md"), report(res))
        print(report(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
