"""The per-point intervals' Jeffreys window, replayed on cached draws (tenth sitting).

Reads the draws ``interval_cache.py`` stored (``/tmp/acc-intervals/``: the cross-fitted
pairs, the fold fits' spread, the full fit's raw estimate and returned probability at
5000 test points, and the truth, used only to score) and rebuilds
:class:`~wsvmgui.ladder.recalibration.LocalInterval` with the Jeffreys term over
``kj`` of the ``m`` pairs, for the rules

* ``before``: ``kj = k = ceil(2 sqrt(m))`` (the interval up to the ninth sitting);
* ``m/c``: ``kj = ceil(m / c)`` for ``c`` in ``--shares`` (the spread's window ``k``
  unchanged); ``m/10`` is the tenth sitting's default;
* ``max(2 sqrt m, m/10)``: the former window up to 400 pairs, ``m/10`` above (narrower
  from n = 500 on, unchanged below).

The replay checks that one of the rules reproduces the cached ``predict_interval``
exactly (``before`` for draws cached with the former library, ``m/10`` after).

Per row (design, n) and seed set: mean coverage of the true p at level 0.9, mean width,
and every draw's coverage (a draw's coverage is nearly 0/1 per plateau of the step
designs, so a row's mean over 3-5 seeds moves in steps).  With ``--diagnose``, per draw
and level of the truth (step designs), the median error of the returned probability and
the median standard deviations of the interval's terms against the map's bootstrap
standard deviation (the chosen map refitted to 40 bootstrap resamples of the pairs), and
the draw's share of test points whose returned probability is 0.25 or more from the truth
(the points next to the step) with the share of them the cached interval covers::

    python benchmarks/interval_study.py --seeds 0 1 2 --sizes 100 500 2000
    python benchmarks/interval_study.py --diagnose wang2008_ex1:2000 --seeds 0 1 2
    python benchmarks/interval_study.py --candidates --seeds 0 1 2

``--candidates``: the other intervals measured (:data:`CANDIDATES`: the neighbourhood
size, the spread alone, a pipeline jackknife that refits the map without each fold, the
map's bootstrap variance, a local bias term, the logit scale, a smaller multiplier).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

CACHE = Path("/tmp/acc-intervals")
LEVEL = 0.9


def load(path: Path) -> dict:
    d = dict(np.load(path))
    with open(path.with_suffix(".map.pkl"), "rb") as fh:
        d["map"] = pickle.load(fh)["map"]
    return d


def interval(d: dict, kj: int | None):
    from wsvmgui.ladder.recalibration import LocalInterval, fold_spread

    iv = LocalInterval.fit(d["p_cf"], d["y_cf"], v=fold_spread(d["raw"], d["map"]), kj=kj)
    if kj is None:  # the former interval: J over the spread's window
        iv = LocalInterval(iv.p, iv.y, iv.k, iv.v, None)
    return iv(d["te_raw"], d["te_est"], LEVEL)


def score(d: dict, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
    p = d["te_p"]
    return float(np.mean((lo <= p + 1e-12) & (p <= hi + 1e-12))), float(np.mean(hi - lo))


def draws(cache: Path, seeds, sizes):
    for f in sorted(cache.glob("*.npz")):
        design, n, seed = f.stem.rsplit("_", 2)
        if int(seed) in seeds and int(n) in sizes:
            yield design, int(n), int(seed), f


def table(cache: Path, seeds, sizes, shares) -> list[str]:
    rules: dict = {"before": None, **{f"m/{c}": c for c in shares}, "max(2 sqrt m, m/10)": "max"}
    res: dict = {}
    reproduced: set = set()
    for design, n, seed, f in draws(cache, seeds, sizes):
        d = load(f)
        m = d["p_cf"].size
        for name, c in rules.items():
            if c == "max":
                kj = max(int(np.ceil(2 * np.sqrt(m))), int(np.ceil(m / 10)))
                lo, hi = interval(d, kj)
            else:
                lo, hi = interval(d, None if c is None else int(np.ceil(m / c)))
            if np.array_equal(lo, d["te_lo"]) and np.array_equal(hi, d["te_hi"]):
                reproduced.add((design, n, seed))
            res.setdefault(name, {}).setdefault((design, n), []).append(score(d, lo, hi))
    # the replay reproduces the cached predict_interval exactly (the former interval for
    # draws cached before the change, ``m/10`` after it)
    assert len(reproduced) == sum(len(v) for v in next(iter(res.values())).values())
    rows = sorted(next(iter(res.values())), key=lambda t: (t[1], t[0]))
    head = " | ".join(f"{d} {n}" for d, n in rows)
    out = [
        f"Seeds {', '.join(map(str, seeds))}: coverage / width per row (mean over the seeds)",
        "",
        f"| rule | {head} | mean coverage | lowest row | mean width |",
        "|---" * (len(rows) + 4) + "|",
    ]
    for name, rr in res.items():
        cs = [np.mean([c for c, _ in rr[r]]) for r in rows]
        ws = [np.mean([w for _, w in rr[r]]) for r in rows]
        cells = " | ".join(f"{c:.3f} / {w:.3f}" for c, w in zip(cs, ws, strict=True))
        out.append(
            f"| {name} | {cells} | {np.mean(cs):.3f} | {np.min(cs):.3f} | {np.mean(ws):.3f} |"
        )
    out += ["", "Every draw's coverage (seeds in order):", ""]
    out += [f"| rule | {head} |", "|---" * (len(rows) + 1) + "|"]
    for name, rr in res.items():
        cells = " | ".join(" ".join(f"{c:.2f}" for c, _ in rr[r]) for r in rows)
        out.append(f"| {name} | {cells} |")
    return out + [""]


def diagnose(cache: Path, seeds, targets) -> list[str]:
    from scipy.stats import norm  # noqa: F401  (the interval's z; kept for the reader)

    from wsvmgui.ladder.recalibration import fit_map, fold_spread

    out = [
        "| draw | map | truth | points | median error | sd J (2 sqrt m) | sd J (m/10) | "
        "sd V | bootstrap sd of the map | share off by 0.25 or more (covered) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for target in targets:
        design, n = target.split(":")
        for seed in seeds:
            f = cache / f"{design}_{n}_{seed}.npz"
            if not f.exists():
                continue
            d = load(f)
            g, x, e, p = d["map"], d["te_raw"], d["te_est"], d["te_p"]
            ps, ys = d["p_cf"], d["y_cf"]
            order = np.argsort(ps, kind="stable")
            ps, ys = ps[order], ys[order]
            v = fold_spread(d["raw"], g)[order]
            m = ps.size
            pos = np.searchsorted(ps, x)

            def window(vals, k, pos=pos, m=m):
                start = np.clip(pos - k // 2, 0, m - k)
                cs = np.concatenate([[0.0], np.cumsum(vals)])
                return (cs[start + k] - cs[start]) / k

            def jeff(k, ys=ys, window=window):
                h = window(ys, k) * k
                a, b = h + 0.5, k - h + 0.5
                return np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))

            k2, kj = int(np.ceil(2 * np.sqrt(m))), int(np.ceil(m / 10))
            rng = np.random.default_rng(0)
            boots = []
            for _ in range(40):
                i = rng.integers(0, m, m)
                if ys[i].min() < ys[i].max():
                    boots.append(fit_map(g.name, ps[i], ys[i])(x))
            sd_b = np.std(boots, axis=0)
            far = np.abs(e - p) >= 0.25
            inside = (d["te_lo"] <= p + 1e-12) & (p <= d["te_hi"] + 1e-12)
            far_txt = f"{far.mean():.3f} ({inside[far].mean() if far.any() else np.nan:.2f})"
            for lev in np.unique(p) if np.unique(p).size <= 2 else []:
                sel = (p == lev) & (np.abs(e - lev) < 0.25)
                med = lambda a, sel=sel: float(np.median(a[sel]))  # noqa: E731
                out.append(
                    f"| {design} n = {n} seed {seed} | {g.name} | {lev:g} | {sel.sum()} | "
                    f"{med(e - lev):+.3f} | {med(jeff(k2)):.3f} | {med(jeff(kj)):.3f} | "
                    f"{med(np.sqrt(window(v, k2))):.3f} | {med(sd_b):.3f} | {far_txt} |"
                )
    return out + [""]


def _window(ps: np.ndarray, vals: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    """Mean of ``vals`` over the ``k`` sorted pairs ``ps`` nearest each ``x`` in rank."""
    k = max(2, min(int(k), ps.size))
    start = np.clip(np.searchsorted(ps, x) - k // 2, 0, ps.size - k)
    cs = np.concatenate([[0.0], np.cumsum(vals)])
    return (cs[start + k] - cs[start]) / k


def _jeffreys(ps: np.ndarray, ys: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    k = max(2, min(int(k), ps.size))
    h = _window(ps, ys, x, k) * k
    a, b = h + 0.5, k - h + 0.5
    return a * b / ((a + b) ** 2 * (a + b + 1))


#: The other candidates of the tenth sitting (``--candidates``): name -> terms of the
#: variance, each ``(term, window)``; ``J`` Jeffreys, ``V`` the spread (today's
#: ``fold_spread``), ``P`` the pipeline jackknife (the chosen map refitted without each
#: fold's pairs, applied to that fold fit's estimates: ``(F - 1)`` times their variance),
#: ``B`` the map's bootstrap variance (40 resamples of the pairs, the chosen map refitted),
#: ``b`` the squared local residual of the map (mean of ``y - g(p)`` over the window);
#: windows as multiples of ``sqrt(m)`` (``"2r"``) or shares of ``m`` (``"m/10"``);
#: ``scale`` multiplies the half-width, ``logit`` takes it on the logit scale (delta
#: method).
CANDIDATES: dict[str, dict] = {
    "before (J 2r + V 2r)": {"terms": [("J", "2r"), ("V", "2r")]},
    "J r + V r": {"terms": [("J", "1r"), ("V", "1r")]},
    "J 4r + V 4r": {"terms": [("J", "4r"), ("V", "4r")]},
    "J 8r + V 8r": {"terms": [("J", "8r"), ("V", "8r")]},
    "before x 0.8": {"terms": [("J", "2r"), ("V", "2r")], "scale": 0.8},
    "before, logit scale": {"terms": [("J", "2r"), ("V", "2r")], "logit": True},
    "V alone": {"terms": [("V", "2r")]},
    "P (pipeline jackknife)": {"terms": [("P", "2r")]},
    "P + b 2r": {"terms": [("P", "2r"), ("b", "2r")]},
    "P + b 4r": {"terms": [("P", "2r"), ("b", "4r")]},
    "P + J 2r": {"terms": [("P", "2r"), ("J", "2r")]},
    "V + B": {"terms": [("V", "2r"), ("B", "")]},
    "V + B + J m/4": {"terms": [("V", "2r"), ("B", ""), ("J", "m/4")]},
    "V + B + b 4r": {"terms": [("V", "2r"), ("B", ""), ("b", "4r")]},
    "J m/10 + V 2r (the default)": {"terms": [("J", "m/10"), ("V", "2r")]},
}


def _k(window: str, m: int) -> int:
    if window.endswith("r"):
        return int(np.ceil(float(window[:-1]) * np.sqrt(m)))
    return int(np.ceil(m / float(window.split("/")[1])))


def candidates_table(cache: Path, seeds, sizes) -> list[str]:
    from scipy.special import expit, logit
    from scipy.stats import norm

    from wsvmgui.ladder.recalibration import fit_map, fold_spread

    z = norm.ppf(0.5 + LEVEL / 2)
    res: dict = {}
    for design, n, _seed, f in draws(cache, seeds, sizes):
        d = load(f)
        g, x, est = d["map"], d["te_raw"], d["te_est"]
        order = np.argsort(d["p_cf"], kind="stable")
        ps, ys, m = d["p_cf"][order], d["y_cf"][order], d["p_cf"].size
        F = d["raw"].shape[0]
        refit = [fit_map(g.name, d["p_cf"][d["fold"] != j], d["y_cf"][d["fold"] != j])
                 for j in range(F)]  # fmt: skip
        pipe = (F - 1) * np.var([h(r) for h, r in zip(refit, d["raw"], strict=True)], axis=0)
        rng = np.random.default_rng(0)
        boots = []
        for _ in range(40):
            i = rng.integers(0, m, m)
            if ys[i].min() < ys[i].max():
                boots.append(fit_map(g.name, ps[i], ys[i])(x))
        per_pair = {"V": fold_spread(d["raw"], g)[order], "P": pipe[order], "y-g": ys - g(ps)}
        for name, spec in CANDIDATES.items():
            var = np.zeros_like(x)
            for term, window in spec["terms"]:
                if term == "J":
                    var += _jeffreys(ps, ys, x, _k(window, m))
                elif term in ("V", "P"):
                    var += _window(ps, per_pair[term], x, _k(window, m))
                elif term == "B":
                    var += np.var(boots, axis=0)
                else:
                    var += _window(ps, per_pair["y-g"], x, _k(window, m)) ** 2
            half = z * spec.get("scale", 1.0) * np.sqrt(var)
            if spec.get("logit"):
                e = np.clip(est, 1e-4, 1 - 1e-4)
                lo, hi = (
                    expit(logit(e) - half / (e * (1 - e))),
                    expit(logit(e) + half / (e * (1 - e))),
                )
            else:
                lo, hi = np.clip(est - half, 0, 1), np.clip(est + half, 0, 1)
            res.setdefault(name, {}).setdefault((design, n), []).append(score(d, lo, hi))
    rows = sorted(next(iter(res.values())), key=lambda t: (t[1], t[0]))
    head = " | ".join(f"{d} {n}" for d, n in rows)
    out = [
        f"Seeds {', '.join(map(str, seeds))}: coverage / width per row (mean over the seeds)",
        "",
        f"| candidate | {head} | mean coverage | lowest row | mean width |",
        "|---" * (len(rows) + 4) + "|",
    ]
    for name, rr in res.items():
        cs = [np.mean([c for c, _ in rr[r]]) for r in rows]
        ws = [np.mean([w for _, w in rr[r]]) for r in rows]
        cells = " | ".join(f"{c:.3f} / {w:.3f}" for c, w in zip(cs, ws, strict=True))
        out.append(
            f"| {name} | {cells} | {np.mean(cs):.3f} | {np.min(cs):.3f} | {np.mean(ws):.3f} |"
        )
    return out + [""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(CACHE))
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    ap.add_argument("--sizes", nargs="*", type=int, default=[100, 500, 2000])
    ap.add_argument("--shares", nargs="*", type=int, default=[6, 8, 10, 12])
    ap.add_argument("--diagnose", nargs="*", default=None)
    ap.add_argument("--candidates", action="store_true")
    args = ap.parse_args(argv)
    cache = Path(args.cache)
    if args.candidates:
        print("\n".join(candidates_table(cache, args.seeds, args.sizes)))
    elif args.diagnose:
        print("\n".join(diagnose(cache, args.seeds, args.diagnose)))
    else:
        print("\n".join(table(cache, args.seeds, args.sizes, args.shares)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
