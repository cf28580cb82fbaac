"""How the recalibrated estimate treats the extremes (issue 23: log loss on the real sets).

Stage ``--fit`` fits the default estimator (``accuracy_vs_peers.method_estimator``
``"wsvmgui"``: the benchmark of record's draws, splits, standardisation and estimator)
once per case and pickles, in ``<cache>/<data>_<n>_<seed>.pkl``: the fitted estimator,
every recalibration map's cross-fitted pairs ``(name, p_cf, y_cf, seed)`` (captured at
``fit_calibration``, in the order the estimator fits them), the test rows and labels and
the truth (designs).  Stage ``--eval`` refits every map on the cached pairs under each
candidate (a context in which :mod:`wsvmgui.ladder.recalibration` behaves as the
candidate says), puts the maps into the estimator, and scores its ``predict_proba`` on the
test rows (log loss, Brier; L1 against the truth on the designs): paired with the
default, the whole prediction path (multiclass coupling, clips) included.  The cells are
the default's (the binary default tunes by EGKL, which no map enters; the pair schemes
tune with the sigmoid map on their folds, so a candidate that changes that map would also
move their cells: the record run checks that).  Stage ``--diagnose`` compares per test
point with each split's best SVM peer of the record (refitted at its recorded cell), and
what the maps see before and return at the ends.  Stage ``--refit CASES FOLDS`` refits
the estimator with calibration folds drawn apart from the tuning folds (``fresh``).
Stage ``--report`` writes ``benchmarks/results/<name>.{md,json}`` from the stages' JSON
files in the cache.  Candidates (:func:`candidate`): Platt's smoothed targets in the
sigmoid map (``platt``; ``_binary``: the binary estimator's maps only), Firth's
bias-reduced sigmoid (``firth``), final bounds ``1e-6`` or ``1 / (m + 2)`` instead of
``1 / (2 (m + 1))`` (``floor_tiny``, ``floor_laplace``), the sigmoid's Laplace posterior
predictive (``moderated``), a sigmoid with its own asymptotes (``plateau``), isotonic
blocks shrunk toward the class rate (``iso_prior``), and Platt, Firth or the asymptotes
as a third candidate of ``auto`` (``auto_*``).  Stage ``--midrung`` refits the binary
cases and maps the ladder's decision value at pi = 1/2 instead of (or beside) p_hat::

    nice -n 5 python benchmarks/extremes_study.py --fit all
    python benchmarks/extremes_study.py --diagnose
    python benchmarks/extremes_study.py --eval all --name ev_all --only default platt \
        platt_binary firth firth_binary floor_tiny floor_laplace moderated plateau iso_prior
    python benchmarks/extremes_study.py --eval real --name ev_auto_real --only default \
        auto_platt auto_firth
    python benchmarks/extremes_study.py --eval real --name ev_auto_plateau_real --only \
        default auto_plateau
    python benchmarks/extremes_study.py --eval designs100 --name ev_auto_designs100 \
        --only default auto_platt auto_firth auto_plateau
    nice -n 5 python benchmarks/extremes_study.py --refit real fresh --name refit_fresh_real
    nice -n 5 python benchmarks/extremes_study.py --midrung
    python benchmarks/extremes_study.py --report --name extremes_study
"""

from __future__ import annotations

import argparse
import contextlib
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
CACHE = Path("/tmp/acc-extremes")
REAL_SEEDS = {
    "breast_cancer": range(10),
    "iris": range(10),
    "wine": range(10),
    "penguins": range(5),
    "digits": range(5),
}
DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
DESIGN_SEEDS = {100: range(10), 2000: range(5)}
N_TEST = 10_000


def cases(which: str = "all"):
    if which in ("all", "real"):
        for data, seeds in REAL_SEEDS.items():
            for s in seeds:
                yield data, None, s
    if which in ("all", "designs", "designs100"):
        for n, seeds in DESIGN_SEEDS.items():
            if which == "designs100" and n != 100:
                continue
            for d in DESIGNS:
                for s in seeds:
                    yield d, n, s


def _path(data: str, n, seed: int) -> Path:
    return CACHE / f"{data}_{n or 'split'}_{seed}.pkl"


def fit_stage(which: str) -> None:
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import binary, multiclass

    captured: list[tuple] = []
    originals = binary.fit_calibration, multiclass.fit_calibration

    def recorder(original):
        def recording(name, p, y, seed=0):
            captured.append((name, np.array(p, dtype=float), np.array(y, dtype=float), seed))
            return original(name, p, y, seed=seed)

        return recording

    binary.fit_calibration = recorder(originals[0])
    multiclass.fit_calibration = recorder(originals[1])
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        for data, n, seed in cases(which):
            out = _path(data, n, seed)
            if out.exists():
                continue
            X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
            est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
            captured.clear()
            t0 = time.process_time()
            est.fit(X, codes)
            P = est.predict_proba(Xt)
            cpu = time.process_time() - t0
            tmp = out.with_suffix(".tmp")
            with tmp.open("wb") as fh:
                pickle.dump(
                    {"est": est, "maps": list(captured), "Xt": Xt, "yt": yt, "P_true": P_true,
                     "P": P, "K": K, "cpu": cpu},
                    fh,
                )  # fmt: skip
            tmp.replace(out)
            print(f"{time.strftime('%H:%M:%S')} {out.name} cpu {cpu:.1f} s", flush=True)
    finally:
        binary.fit_calibration, multiclass.fit_calibration = originals


def load_case(data: str, n, seed: int) -> dict:
    with _path(data, n, seed).open("rb") as fh:
        return pickle.load(fh)


def refit_maps(case: dict) -> np.ndarray:
    """The cached estimator's probabilities on the test rows with every map refitted on
    its cached pairs by today's (possibly patched) ``fit_calibration``; shape (m, K)."""
    from wsvmgui.ladder.recalibration import fit_calibration

    est = case["est"]
    _PAIR[0] = hasattr(est, "calibrations_")
    maps = [fit_calibration(name, p, y, seed=s) for name, p, y, s in case["maps"]]
    if hasattr(est, "calibrations_"):
        est.calibrations_ = maps
    else:
        (est.calibration_,) = maps
    return est.predict_proba(case["Xt"])


# ------------------------------------------------------------------------- candidates
def _platt_targets(y: np.ndarray) -> np.ndarray:
    """Platt's (1999) smoothed targets: (N+ + 1)/(N+ + 2) for the positives, 1/(N- + 2)
    for the negatives."""
    pos, neg = y.sum(), y.size - y.sum()
    return np.where(y == 1, (pos + 1) / (pos + 2), 1 / (neg + 2))


@contextlib.contextmanager
def candidate(name: str):
    """``recalibration`` behaving as candidate ``name`` while the block runs."""
    import dataclasses

    from scipy.special import logit

    from wsvmgui.ladder import recalibration as rc

    saved = rc.fit_map, rc.fit_spline
    base_map, base_spline = saved

    def fit_map(mname, p, y, seed=0):
        if mname == "sigmoid_platt":
            return fit_map_platt(p, y)
        if mname == "sigmoid_plateau":
            return _Plateau(base_map("sigmoid", p, y, seed=seed), *rc._check(p, y))
        if mname == "sigmoid_firth":
            pc, yc = rc._check(p, y)
            c, a = _firth(logit(pc), yc)
            return rc.MonotoneMap("sigmoid", np.zeros(0), np.zeros(0), np.array([c, a, a]),
                                  *_bounds(name, yc))  # fmt: skip
        if name.startswith("moderated") and mname == "sigmoid":
            g = base_map(mname, p, y, seed=seed)
            return _Moderated(g, rc._check(p, y)[0], *_bounds(name, np.asarray(y, float)))
        if (
            name.startswith("firth")
            and mname == "sigmoid"
            and not (name == "firth_binary" and _PAIR[0])
        ):
            pc, yc = rc._check(p, y)
            c, a = _firth(logit(pc), yc)
            return rc.MonotoneMap("sigmoid", np.zeros(0), np.zeros(0), np.array([c, a, a]),
                                  *_bounds(name, yc))  # fmt: skip
        if (
            name.startswith("plateau")
            and mname == "sigmoid"
            and not (name == "plateau_binary" and _PAIR[0])
        ):
            g = base_map(mname, p, y, seed=seed)
            return _Plateau(g, *rc._check(p, y))
        if name == "platt_binary" and mname == "sigmoid" and not _PAIR[0]:
            return fit_map_platt(p, y)
        if name.startswith("platt") and mname == "sigmoid" and name != "platt_binary":
            pc, yc = rc._check(p, y)
            t = _platt_targets(yc)
            lt = logit(pc)
            c, a = rc._logistic(lt[:, None], t, [(None, None), (0.0, None)])
            g = rc.MonotoneMap("sigmoid", np.zeros(0), np.zeros(0), np.array([c, a, a]),
                               *_bounds(name, yc))  # fmt: skip
            return g
        g = base_map(mname, p, y, seed=seed)
        if name.startswith("moderated") and mname == "spline":
            return g
        if name.startswith("iso_") and mname == "isotonic":
            g = _iso_variant(name, p, y, g)
        lo_hi = _bounds(name, np.asarray(y, dtype=float))
        return dataclasses.replace(g, lo=lo_hi[0], hi=lo_hi[1])

    def fit_map_platt(p, y):
        pc, yc = rc._check(p, y)
        c, a = rc._logistic(logit(pc)[:, None], _platt_targets(yc), [(None, None), (0.0, None)])
        return rc.MonotoneMap("sigmoid", np.zeros(0), np.zeros(0), np.array([c, a, a]),
                              *_bounds(name, yc))  # fmt: skip

    def _bounds(cname, y):
        m = y.size
        if cname.endswith("floor_tiny"):
            return 1e-6, 1 - 1e-6
        if cname.endswith("floor_laplace"):
            f = 1.0 / (m + 2)
            return f, 1 - f
        if cname.endswith("floor_platt"):
            pos, neg = y.sum(), m - y.sum()
            return 1 / (neg + 2), (pos + 1) / (pos + 2)
        f = 1.0 / (2.0 * (m + 1))
        return f, 1 - f

    def _iso_variant(cname, p, y, g):
        pc, yc = rc._check(p, y)
        if cname == "iso_prior":  # the pseudo-point at the class rate, not 1/2
            x, inverse, w = np.unique(pc, return_inverse=True, return_counts=True)
            w = w.astype(float)
            mean = np.bincount(inverse, weights=yc, minlength=x.size) / w
            fit = rc.isotonic_pav(mean, w)
            block = np.concatenate([[0], np.cumsum(np.diff(fit) != 0)])
            count = np.bincount(block, weights=w)
            total = np.bincount(block, weights=w * mean)
            smooth = ((total + yc.mean()) / (count + 1.0))[block]
            return dataclasses.replace(g, y=rc.isotonic_pav(smooth, w))
        return g

    def fit_spline(p, y, lam):
        g = base_spline(p, y, lam)
        lo, hi = _bounds(name, rc._check(p, y)[1])
        return dataclasses.replace(g, lo=lo, hi=hi)

    saved_cal = rc.fit_calibration

    def fit_calibration(cal, p, y, seed=0):
        if name.startswith("auto_") and cal == "auto":
            extra = {"auto_platt": "sigmoid_platt", "auto_firth": "sigmoid_firth",
                     "auto_plateau": "sigmoid_plateau"}[name]  # fmt: skip
            return rc.choose_map(p, y, maps=("sigmoid", extra, "isotonic"), seed=seed)
        return saved_cal(cal, p, y, seed=seed)

    rc.fit_map, rc.fit_spline, rc.fit_calibration = fit_map, fit_spline, fit_calibration
    try:
        yield
    finally:
        rc.fit_map, rc.fit_spline = saved
        rc.fit_calibration = saved_cal


def _firth(t: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Firth's (1993) bias-reduced logistic regression of ``y`` on ``[1, t]``: the
    maximiser of ``log L + log det(I) / 2`` (Jeffreys prior), by Newton steps on the
    modified score ``Z' (y - q + h (1/2 - q))`` (``h`` the hat values), step halving on the
    penalised likelihood; slope held >= 0."""
    from scipy.special import expit

    Z = np.column_stack([np.ones(t.size), t])

    def pll(w):
        z = Z @ w
        q = expit(z)
        info = (Z.T * (q * (1 - q))) @ Z
        sign, logdet = np.linalg.slogdet(info)
        return float(np.sum(y * z - np.logaddexp(0.0, z)) + 0.5 * logdet) if sign > 0 else -np.inf

    rate = np.clip(y.mean(), 1e-3, 1 - 1e-3)
    w = np.array([np.log(rate / (1 - rate)), 0.0])
    value = pll(w)
    for _ in range(100):
        q = expit(Z @ w)
        W = q * (1 - q)
        info = (Z.T * W) @ Z + 1e-10 * np.eye(2)
        inv = np.linalg.inv(info)
        h = W * np.einsum("ij,jk,ik->i", Z, inv, Z)
        step = inv @ (Z.T @ (y - q + h * (0.5 - q)))
        s = 1.0
        while s > 1e-8:
            new = w + s * step
            new[1] = max(new[1], 0.0)
            v = pll(new)
            if v >= value - 1e-12:
                break
            s *= 0.5
        done = np.max(np.abs(new - w)) < 1e-9
        w, value = new, v
        if done:
            break
    return float(w[0]), float(w[1])


class _Plateau:
    """The sigmoid map with its own asymptotes: ``l + (u - l) expit(c + a t)``, ``t`` the
    logit, by maximum likelihood with ``l, 1 - u`` in ``[floor, 0.25]`` (``floor`` the
    default map's bound ``1 / (2 (m + 1))``), started at the fitted sigmoid."""

    def __init__(self, g, p, y):
        from scipy.optimize import minimize
        from scipy.special import expit, logit

        m = y.size
        self.name = "sigmoid"
        floor = 1.0 / (2.0 * (m + 1))
        self.lo, self.hi = floor, 1 - floor
        t = logit(p)

        def f(w):
            q = w[2] + (1 - w[2] - w[3]) * expit(w[0] + w[1] * t)
            q = np.clip(q, 1e-12, 1 - 1e-12)
            return float(-np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)) + 1e-4 * w[1] ** 2)

        w0 = np.array([g.coef[0], g.coef[1], floor, floor])
        res = minimize(
            f,
            w0,
            method="L-BFGS-B",
            bounds=[(None, None), (0.0, None), (floor, 0.25), (floor, 0.25)],
        )
        self.w = res.x if res.fun <= f(w0) else w0
        self.coef = g.coef

    def __call__(self, p):
        from scipy.special import expit, logit

        from wsvmgui.ladder.recalibration import P_EPS

        t = logit(np.clip(np.asarray(p, dtype=float), P_EPS, 1 - P_EPS))
        w = self.w
        return w[2] + (1 - w[2] - w[3]) * expit(w[0] + w[1] * t)


#: Set while multiclass pair maps are refitted (candidates meant for binary maps only).
_PAIR = [False]


class _Moderated:
    """The sigmoid map's posterior predictive under a Laplace approximation (MacKay 1992):
    ``expit(mu / sqrt(1 + pi v / 8))``, ``mu = c + a t`` and ``v`` its variance from the
    inverse Hessian of the (ridge-penalised) log likelihood at the fit."""

    def __init__(self, g, p, lo, hi):
        from scipy.special import expit, logit

        self.name, self.lo, self.hi, self.coef = "sigmoid", lo, hi, g.coef
        t = logit(p)
        Z = np.column_stack([np.ones(t.size), t])
        q = expit(Z @ g.coef[:2])
        H = (Z.T * (q * (1 - q))) @ Z + np.diag([0.0, 2e-4 * t.size])
        self.cov = np.linalg.inv(H + 1e-9 * np.eye(2))

    def __call__(self, p):
        from scipy.special import expit, logit

        from wsvmgui.ladder.recalibration import P_EPS

        p = np.clip(np.asarray(p, dtype=float), P_EPS, 1 - P_EPS)
        t = logit(p)
        mu = self.coef[0] + self.coef[1] * t
        v = self.cov[0, 0] + 2 * self.cov[0, 1] * t + self.cov[1, 1] * t * t
        return np.clip(expit(mu / np.sqrt(1 + np.pi * v / 8)), self.lo, self.hi)


CANDIDATES = ("default", "platt", "floor_laplace", "floor_platt", "platt_floor_platt",
              "iso_prior")  # fmt: skip


def score(P: np.ndarray, case: dict) -> dict:
    import accuracy_vs_peers as avp

    return avp.metrics(P, case["yt"], case["P_true"])


def eval_stage(which: str, names=CANDIDATES) -> dict:
    out: dict = {}
    for data, n, seed in cases(which):
        if not _path(data, n, seed).exists():
            continue
        case = load_case(data, n, seed)
        row = {"data": data, "n": n, "seed": seed, "record": score(case["P"], case)}
        for cname in names:
            with candidate(cname):
                row[cname] = score(refit_maps(case), case)
        out[f"{data}|{n}|{seed}"] = row
    return out


def summarise(res: dict, names=CANDIDATES) -> str:
    groups: dict = {}
    for row in res.values():
        groups.setdefault((row["data"], row["n"]), []).append(row)
    lines = ["| data | n | seeds | metric | default | " + " | ".join(names[1:]) + " |",
             "|---" * (5 + len(names) - 1) + "|"]  # fmt: skip
    for (data, n), rows in groups.items():
        key = "L1" if "L1" in rows[0]["default"] else "log_loss"
        for part, sel in (("0-4", [r for r in rows if r["seed"] < 5]),
                          ("5-9", [r for r in rows if r["seed"] >= 5])):  # fmt: skip
            if not sel:
                continue
            base = np.mean([r["default"][key] for r in sel])
            cells = [f"{np.mean([r[c][key] for r in sel]) / base:.3f}" for c in names[1:]]
            lines.append(f"| {data} | {n or 'split'} | {part} | {key} | {base:.4f} | "
                         + " | ".join(cells) + " |")  # fmt: skip
    return "\n".join(lines)


# --------------------------------------------------------------- refitted candidates
@contextlib.contextmanager
def folds_variant(name: str):
    """The estimators' calibration folds as variant ``name`` draws them:
    ``"fresh"``: as many folds as the tuning's, drawn with another seed (so that the
    cross-fitted pairs are not the folds the cell was chosen on); ``"fresh3"``: 3."""
    from wsvmgui.estimators import binary, multiclass
    from wsvmgui.ladder.splits import kfold_splits

    saved = binary.calibration_folds, multiclass.calibration_folds
    original = saved[0]

    def folds(tuning, y, seed, sample_weight=None):
        if tuning is None or len(tuning) < 2 or name == "default":
            return original(tuning, y, seed, sample_weight)
        k = len(tuning) if name == "fresh" else int(name.removeprefix("fresh"))
        base = 0 if seed is None else int(seed)
        out = kfold_splits(y, k, np.random.default_rng([base, 1]).integers(2**31 - 1))
        if sample_weight is None:
            return out
        return [(tr[sample_weight[tr] > 0], te[sample_weight[te] > 0]) for tr, te in out]

    binary.calibration_folds = multiclass.calibration_folds = folds
    try:
        yield
    finally:
        binary.calibration_folds, multiclass.calibration_folds = saved


def refit_stage(which: str, variant: str, maps=("default",)) -> dict:
    """Every case refitted with the calibration folds of ``variant``; scored with the
    maps of each candidate of ``maps`` refitted on the new pairs."""
    import accuracy_vs_peers as avp

    from wsvmgui.estimators import binary, multiclass

    captured: list[tuple] = []
    originals = binary.fit_calibration, multiclass.fit_calibration

    def recorder(original):
        def recording(name, p, y, seed=0):
            captured.append((name, np.array(p, dtype=float), np.array(y, dtype=float), seed))
            return original(name, p, y, seed=seed)

        return recording

    out: dict = {}
    binary.fit_calibration = recorder(originals[0])
    multiclass.fit_calibration = recorder(originals[1])
    try:
        for data, n, seed in cases(which):
            if n == 2000:
                continue  # a single hold-out tunes at n > 500: fresh folds already
            X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
            est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
            captured.clear()
            t0 = time.process_time()
            with folds_variant(variant):
                est.fit(X, codes)
            cpu = time.process_time() - t0
            case = {"est": est, "maps": list(captured), "Xt": Xt, "yt": yt, "P_true": P_true}
            row = {"data": data, "n": n, "seed": seed, "cpu": cpu}
            for cname in maps:
                with candidate(cname):
                    row[cname] = score(refit_maps(case), case)
            out[f"{data}|{n}|{seed}"] = row
            print(f"{data} {n} {seed} {variant}: " + " ".join(
                f"{c} {row[c]['L1' if P_true is not None else 'log_loss']:.4f}" for c in maps),
                flush=True)  # fmt: skip
    finally:
        binary.fit_calibration, multiclass.fit_calibration = originals
    return out


# ------------------------------------------------------------ the ladder's middle rung
def _mid(ladder, K: np.ndarray) -> np.ndarray:
    """Decision value of a path ladder at pi = 1/2 for kernel rows ``K`` (m, n); (m,)."""
    return np.asarray(ladder.path.decision_at(K, np.array([0.5])), dtype=float).reshape(-1)


def _fit_mid(p, d, y, how: str):
    """A map from (p_hat, middle-rung decision value) to probabilities, fitted on pairs;
    returns a function of (p, d).  ``how``: ``"mid"`` a sigmoid in d, ``"mid2"`` a
    logistic in (logit p, d), both slopes >= 0."""
    from scipy.special import expit, logit

    from wsvmgui.ladder import recalibration as rc

    p, y = rc._check(p, y)
    floor = 1.0 / (2.0 * (y.size + 1))
    if how == "mid":
        c, a = rc._logistic(d[:, None], y, [(None, None), (0.0, None)])
        return lambda pp, dd: np.clip(expit(c + a * dd), floor, 1 - floor)
    c, a, b = rc._logistic(np.column_stack([logit(p), d]), y,
                           [(None, None), (0.0, None), (0.0, None)])  # fmt: skip
    return lambda pp, dd: np.clip(
        expit(c + a * logit(np.clip(pp, rc.P_EPS, 1 - rc.P_EPS)) + b * dd), floor, 1 - floor
    )


def midrung_stage() -> dict:
    """Binary cases refitted, the fold fits' middle-rung decision values captured beside
    the cross-fitted pairs; maps on them against the default (issue 23 lead: the ladder's
    count measure saturates at the grid's ends, its middle rung does not)."""
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
        pairs.append((np.array(p), np.array(y)))
        return orig_cal(name, p, y, seed=seed)

    rc.fold_fits, binary.fit_calibration = folds, cal
    out: dict = {}
    try:
        todo = [("breast_cancer", None, s) for s in range(10)]
        todo += [(d, 100, s) for d in DESIGNS for s in range(10)]
        for data, n, seed in todo:
            X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
            est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
            fits.clear()
            pairs.clear()
            est.fit(X, codes)
            p_cf, y_cf = pairs[0]
            d_cf = np.concatenate([_mid(f.ladder, f.kernel(X[te], X[f.support])) for f, te in fits])
            Xc = est._check_X(Xt)
            raw = est._raw_estimate(Xc).p
            d_t = np.concatenate([_mid(est.ladder_, Kb) for Kb in est._kernel_blocks(Xc)])
            row = {"data": data, "n": n, "seed": seed,
                   "default": avp.metrics(est.predict_proba(Xt), yt, P_true)}  # fmt: skip
            cands = {"sigmoid": lambda a, b, y: (lambda g: lambda pp, dd: g(pp))(
                         rc.fit_map("sigmoid", a, y)),
                     "isotonic": lambda a, b, y: (lambda g: lambda pp, dd: g(pp))(
                         rc.fit_map("isotonic", a, y)),
                     "mid": lambda a, b, y: _fit_mid(a, b, y, "mid"),
                     "mid2": lambda a, b, y: _fit_mid(a, b, y, "mid2")}  # fmt: skip
            for name, fit in cands.items():
                q = fit(p_cf, d_cf, y_cf)(raw, d_t)
                row[name] = avp.metrics(np.c_[1 - q, q], yt, P_true)
            # the cross-validated choice among all four on the pairs
            cv = {k: np.empty(p_cf.size) for k in cands}
            for tr, te in rc._folds(y_cf, 5, 0):
                for k, fit in cands.items():
                    cv[k][te] = fit(p_cf[tr], d_cf[tr], y_cf[tr])(p_cf[te], d_cf[te])
            terms = {k: rc._log_loss_terms(v, y_cf) for k, v in cv.items()}
            for label, keys in (("auto_mid", ("sigmoid", "isotonic", "mid", "mid2")),
                                ("auto_mid2", ("sigmoid", "isotonic", "mid2"))):  # fmt: skip
                best = min(keys, key=lambda k: float(terms[k].mean()))
                row[label] = {**row[best], "choice": best}
            # guarded: the middle rung only where it beats the sigmoid/isotonic choice by
            # more than z standard errors of the paired per-row CV difference
            base = min(("sigmoid", "isotonic"), key=lambda k: float(terms[k].mean()))
            for z in (1.0, 2.0):
                pick = base
                for k in ("mid", "mid2"):
                    d = terms[k] - terms[base]
                    if d.mean() < -z * d.std(ddof=1) / np.sqrt(d.size) and (
                        pick == base or terms[k].mean() < terms[pick].mean()
                    ):
                        pick = k
                row[f"guard{z:g}_mid"] = {**row[pick], "choice": pick}
            out[f"{data}|{n}|{seed}"] = row
            key = "L1" if P_true is not None else "log_loss"
            print(f"{data} {n} {seed}: " + " ".join(
                f"{k} {row[k][key]:.4f}" for k in ("default", "sigmoid", "mid", "mid2", "auto_mid",
                                                   "auto_mid2")), row["auto_mid"]["choice"],
                  flush=True)  # fmt: skip
    finally:
        rc.fold_fits, binary.fit_calibration = orig_folds, orig_cal
    return out


def _peer_rows() -> dict:
    """(data, seed) -> the record's best SVM peer row (least test log loss), real sets."""
    import accuracy_vs_peers as avp

    rec = json.loads((Path("/work/main") / "benchmarks/results/accuracy_vs_peers.json").read_text())
    out: dict = {}
    for key, rows in rec["runs"].items():
        data, _, seed, group = key.split("|")
        if data in avp.REAL and group == "svm":
            best = min(rows, key=lambda r: r["log_loss"])
            out[(data, int(seed))] = best
    return out


def _point_losses(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    return -np.log(np.maximum(P[np.arange(y.size), y], 1e-15))


def _map_text(g) -> str:
    if g.name == "isotonic":
        return f"isotonic ends {g.y[0]:.4f} .. {g.y[-1]:.4f} ({g.y.size} steps)"
    if g.name == "spline":
        return f"spline ({g.x.size} knots)"
    c, a, _ = g.coef
    return f"{g.name} slope {a:.3f} intercept {c:+.3f}"


def diagnose(which=("breast_cancer", "iris", "wine", "penguins", "digits")) -> dict:
    """Per test point: the default's log-loss terms against the best SVM peer's (the
    record's cell refitted), where the difference comes from, and what the map does at
    the ends."""
    import accuracy_vs_peers as avp

    from wsvmgui.evaluation.peers import fit_calibrated_svc
    from wsvmgui.ladder import recalibration as rc

    peers = _peer_rows()
    out: dict = {}
    for data in which:
        rows = []
        for seed in REAL_SEEDS[data]:
            if (data, seed) not in peers:
                continue
            case = load_case(data, None, seed)
            peer = peers[(data, seed)]
            X, codes, Xt, yt, _, K = avp.load(data, None, seed, N_TEST)
            cal = fit_calibrated_svc(X, codes, peer["C"], peer["g"] / X.shape[1],
                                     venn=peer["method"] == "venn_abers")  # fmt: skip
            Pp = cal.predict_proba(peer["method"], Xt)
            ours = _point_losses(case["P"], yt)
            theirs = _point_losses(Pp, yt)
            d = ours - theirs
            order = np.argsort(-d)
            est = case["est"]
            row = {
                "seed": seed, "peer": peer["method"], "ours": float(ours.mean()),
                "peer_loss": float(theirs.mean()), "peer_record": peer["log_loss"],
                "m": int(yt.size), "gap": float(d.mean()),
                "top3_share": float(d[order[:3]].sum() / d.sum()) if d.sum() > 0 else None,
                "top3": [{"ours_p": float(np.exp(-ours[i])), "peer_p": float(np.exp(-theirs[i]))}
                         for i in order[:3]],
                "ours_below_0.01": int(np.sum(ours > -np.log(0.01))),
                "peer_below_0.01": int(np.sum(theirs > -np.log(0.01))),
                "loss_from_below_0.01": float(ours[ours > -np.log(0.01)].sum() / yt.size),
                "ours_min_p_max": float(case["P"].max(axis=1).max()),
                "ours_min_prob": float(case["P"].min()),
                "peer_min_prob": float(Pp.min()),
            }  # fmt: skip
            # where our loss on points we get right is larger: confident and right
            right = ours < np.log(2)
            row["gap_on_right"] = float(d[right].sum() / yt.size)
            row["gap_on_wrong"] = float(d[~right].sum() / yt.size)
            if K == 2:
                raw = est._raw_estimate(est._check_X(Xt)).p
                _, p_cf, y_cf, _ = case["maps"][0]
                g = est.calibration_
                from sklearn.linear_model import LogisticRegression
                from sklearn.metrics import roc_auc_score

                yf = yt.astype(float)
                dv = cal.svc.decision_function(Xt)
                hind = rc.fit_map("sigmoid", raw, yf)(raw)
                peer_hind = LogisticRegression(C=1e4).fit(dv[:, None], yt)
                ph = peer_hind.predict_proba(dv[:, None])[:, 1]
                row.update({
                    "auc": float(roc_auc_score(yt, raw)), "peer_auc": float(roc_auc_score(yt, dv)),
                    "hindsight_sigmoid": float(np.mean(_point_losses(np.c_[1 - hind, hind], yt))),
                    "peer_hindsight_sigmoid": float(np.mean(_point_losses(np.c_[1 - ph, ph], yt))),
                })  # fmt: skip
                row.update({
                    "raw_test_exact_0_or_1": float(np.mean((raw <= 0) | (raw >= 1))),
                    "raw_cf_exact_0_or_1": float(np.mean((p_cf <= 0) | (p_cf >= 1))),
                    "cf_pairs": int(p_cf.size),
                    "map": _map_text(g), "map_lo": g.lo,
                    "g_at_0": float(g(np.array([0.0]))[0]),
                    "g_at_1": float(g(np.array([1.0]))[0]),
                    "cf_wrong_at_ends": int(np.sum(((p_cf <= 0) & (y_cf == 1))
                                                   | ((p_cf >= 1) & (y_cf == 0)))),
                })  # fmt: skip
            else:
                names = [m[0] for m in case["maps"]]
                row["maps"] = sorted(set(names))
                row["map_texts"] = [_map_text(g) for g in est.calibrations_][:3]
                row["cf_exact_0_or_1"] = float(
                    np.mean(np.concatenate([(m[1] <= 0) | (m[1] >= 1) for m in case["maps"]]))
                )
            rows.append(row)
            print(json.dumps(row), flush=True)
        out[data] = rows
    return out


def pre_map_facts() -> dict:
    """What the maps see at the ends: per data set, how many cross-fitted estimates are
    exactly 0 or 1, the smallest ``min(p, 1 - p)``, and (binary) the chosen maps, their
    slopes and how many test probabilities sit at the final bounds."""
    from scipy.special import logit

    from wsvmgui.ladder import recalibration as rc

    out: dict = {}
    for data, n, seed in cases("all"):
        case = load_case(data, n, seed)
        a = out.setdefault(f"{data}|{n or 'split'}", {"exact_0_or_1": 0, "pairs": 0,
                                                      "min_end": 1.0, "maps": {},
                                                      "slopes": [], "at_bound": []})  # fmt: skip
        for _, p, _, _ in case["maps"]:
            a["exact_0_or_1"] += int(np.sum((p <= 0) | (p >= 1)))
            a["pairs"] += int(p.size)
            a["min_end"] = float(min(a["min_end"], p.min(), 1 - p.max()))
        est = case["est"]
        gs = est.calibrations_ if hasattr(est, "calibrations_") else [est.calibration_]
        for g in gs:
            a["maps"][g.name] = a["maps"].get(g.name, 0) + 1
            if g.name == "sigmoid":
                a["slopes"].append(float(g.coef[1]))
        if not hasattr(est, "calibrations_"):
            g = est.calibration_
            P = case["P"][:, 1]
            at_lo, at_hi = (
                np.isclose(P, g.lo, rtol=0, atol=1e-12),
                np.isclose(P, g.hi, rtol=0, atol=1e-12),
            )
            a["at_bound"].append(float(np.mean(at_lo | at_hi)))
            if g.name == "sigmoid":
                raw = est._raw_estimate(est._check_X(case["Xt"])).p
                _, p, y, _ = case["maps"][0]
                yt = case["yt"].astype(float)
                oracle = rc.fit_map("sigmoid", raw, yt)
                a.setdefault("oracle_slope", []).append(float(oracle.coef[1]))
                a.setdefault("oracle_intercept", []).append(float(oracle.coef[0]))
                a.setdefault("cf_intercept", []).append(float(g.coef[0]))
                a.setdefault("test_logit_sd", []).append(float(logit(raw).std()))
                a.setdefault("cf_logit_sd", []).append(float(logit(p).std()))
    return out


ENDS = (0.0, 0.0035, 0.006, 0.01, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 0.99, 0.994, 0.9965, 1.0)


def reliability(data: str = "breast_cancer", seeds=range(10)) -> list[dict]:
    """Pooled over splits: in bins of the raw estimate, the cross-fitted pairs' label
    mean and the map's mean value, and the test points' label mean."""
    edges = np.array(ENDS)
    rows = [{"bin": [float(edges[k]), float(edges[k + 1])], "cf": 0, "cf_y": 0.0, "map": 0.0,
             "test": 0, "test_y": 0.0} for k in range(edges.size - 1)]  # fmt: skip
    for seed in seeds:
        case = load_case(data, None, seed)
        est = case["est"]
        raw = est._raw_estimate(est._check_X(case["Xt"])).p
        _, p, y, _ = case["maps"][0]
        g = est.calibration_
        b = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, edges.size - 2)
        bt = np.clip(np.searchsorted(edges, raw, side="right") - 1, 0, edges.size - 2)
        for k, r in enumerate(rows):
            r["cf"] += int(np.sum(b == k))
            r["cf_y"] += float(y[b == k].sum())
            r["map"] += float(g(p[b == k]).sum())
            r["test"] += int(np.sum(bt == k))
            r["test_y"] += float(case["yt"][bt == k].sum())
    return rows


def report(name: str) -> None:
    """``benchmarks/results/<name>.{md,json}`` from the cached stages' JSON files."""
    parts = {}
    for key in ("diagnose", "ev_all", "refit_fresh_real", "midrung"):
        path = CACHE / f"{key}.json"
        if path.exists():
            parts[key] = json.loads(path.read_text())
    auto: dict = {}  # the auto_* candidates: three runs, one table
    for key in ("ev_auto_real", "ev_auto_plateau_real", "ev_auto_designs100"):
        path = CACHE / f"{key}.json"
        for k, row in (json.loads(path.read_text()) if path.exists() else {}).items():
            auto.setdefault(k, {}).update(row)
    if auto:
        parts["ev_real5"] = auto
    parts["pre_map"] = pre_map_facts()
    parts["reliability_breast_cancer"] = reliability()
    lines = [
        "# The extremes of the recalibrated estimate (issue 23: log loss on the real sets)",
        "",
        "`benchmarks/extremes_study.py` (stages `--fit`, `--diagnose`, `--eval`,",
        "`--refit`, `--report`); the default's fits cached in /tmp/acc-extremes/.",
        "",
    ]
    diag = parts.get("diagnose", {})
    if diag:
        lines += ["## Per test point against each split's best SVM peer (splits 0-4)", "",
                  "The peer refitted at the cell its record row states (its record log loss"
                  " reproduced).", "",
                  "| data | ours | peer | gap | gap on points we get right | gap on points we"
                  " get wrong | share of the gap from each split's 3 worst points | ours /"
                  " peer points with p(true) < 0.01 | their loss (ours) |",
                  "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for data, rows in diag.items():
            if not rows:
                continue
            gap = np.array([r["gap"] for r in rows])
            top = [r["top3_share"] * r["gap"] for r in rows if r["top3_share"] is not None]
            lines.append(
                f"| {data} | {np.mean([r['ours'] for r in rows]):.4f} | "
                f"{np.mean([r['peer_loss'] for r in rows]):.4f} | {gap.mean():+.4f} | "
                f"{np.mean([r['gap_on_right'] for r in rows]):+.4f} | "
                f"{np.mean([r['gap_on_wrong'] for r in rows]):+.4f} | "
                f"{sum(top) / max(gap[gap > 0].sum(), 1e-12):.2f} | "
                f"{sum(r['ours_below_0.01'] for r in rows)} / "
                f"{sum(r['peer_below_0.01'] for r in rows)} | "
                f"{np.mean([r['loss_from_below_0.01'] for r in rows]):.4f} |"
            )
        bc = [r for r in diag.get("breast_cancer", []) if "hindsight_sigmoid" in r]
        if bc:
            lines += [
                "",
                "Breast cancer, splits 0-4, a sigmoid fitted on the test points"
                " themselves (hindsight): ours (on logit p_hat) "
                f"{np.mean([r['hindsight_sigmoid'] for r in bc]):.4f}, the peer's SVC"
                " (on its decision value) "
                f"{np.mean([r['peer_hindsight_sigmoid'] for r in bc]):.4f}; ours lower on "
                f"{sum(r['hindsight_sigmoid'] < r['peer_hindsight_sigmoid'] for r in bc)}"
                f" of {len(bc)}; AUC ours {np.mean([r['auc'] for r in bc]):.4f}, peer "
                f"{np.mean([r['peer_auc'] for r in bc]):.4f}.",
            ]
        lines.append("")
    lines += ["## Before the map", "", "| data | n | cross-fitted estimates exactly 0 or 1 |"
              " smallest min(p, 1 - p) | maps | sigmoid slope (mean) | the same fitted on the"
              " test points (binary draws with a sigmoid map) | binary test points at"
              " the final bounds |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for key, a in parts["pre_map"].items():
        data, n = key.split("|")
        slope = f"{np.mean(a['slopes']):.2f}" if a["slopes"] else "-"
        bound = f"{np.mean(a['at_bound']):.2f}" if a["at_bound"] else "-"
        hind = "-"
        if a.get("oracle_slope"):
            own = a["slopes"]
            hind = (f"{np.mean(a['oracle_slope']):.2f} (lower on "
                    f"{sum(o < c for o, c in zip(a['oracle_slope'], own, strict=True))} of "
                    f"{len(own)})")  # fmt: skip
        lines.append(
            f"| {data} | {n} | {a['exact_0_or_1']} of {a['pairs']} | {a['min_end']:.1e} | "
            f"{a['maps']} | {slope} | {hind} | {bound} |"
        )
    bc = parts["pre_map"].get("breast_cancer|split", {})
    if "oracle_slope" in bc:
        lines += [
            "",
            "Breast cancer, splits 0-9: the sigmoid map's slope on the cross-fitted"
            f" pairs {np.mean(bc['slopes']):.3f} (intercept"
            f" {np.mean(bc['cf_intercept']):+.3f}); the same fit on the test points"
            f" themselves (hindsight) {np.mean(bc['oracle_slope']):.3f} (intercept"
            f" {np.mean(bc['oracle_intercept']):+.3f}); sd of logit p_hat: pairs"
            f" {np.mean(bc['cf_logit_sd']):.2f}, test {np.mean(bc['test_logit_sd']):.2f}.",
        ]
    lines += [
        "",
        "Breast cancer, pooled over splits 0-9 (test sets overlap): label mean by bin"
        " of the raw estimate",
        "",
        "| raw p_hat bin | pairs | pairs' label mean | map"
        " (mean) | test points | test label mean |",
        "|---|---|---|---|---|---|",
    ]
    for r in parts["reliability_breast_cancer"]:
        if r["cf"] + r["test"] == 0:
            continue
        lines.append(f"| [{r['bin'][0]:.4f}, {r['bin'][1]:.4f}) | {r['cf']} | "
                     f"{r['cf_y'] / max(r['cf'], 1):.4f} | {r['map'] / max(r['cf'], 1):.4f} | "
                     f"{r['test']} | {r['test_y'] / max(r['test'], 1):.4f} |")  # fmt: skip
    for key, title in (("ev_all", "Candidates (maps refitted on the cached pairs; ratio to"
                        " the default)"), ("ev_real5", "Candidates added to the `auto` choice"
                        " (binary)")):  # fmt: skip
        if key in parts:
            names = tuple(k for k in next(iter(parts[key].values()))
                          if k not in ("data", "n", "seed", "record"))  # fmt: skip
            lines += ["", f"## {title}", "", summarise(parts[key], names)]
    if "refit_fresh_real" in parts:
        lines += [
            "",
            "## Calibration folds drawn apart from the tuning folds (refitted)",
            "",
            "| data | seeds | default (record) | fresh folds | ratio |",
            "|---|---|---|---|---|",
        ]
        base = parts.get("ev_all", {})
        groups: dict = {}
        for k, r in parts["refit_fresh_real"].items():
            if k in base:
                groups.setdefault((r["data"], r["seed"] >= 5), []).append(
                    (base[k]["default"]["log_loss"], r["default"]["log_loss"])
                )
        for (data, late), v in groups.items():
            a = np.array(v)
            lines.append(
                f"| {data} | {'5-9' if late else '0-4'} | {a[:, 0].mean():.4f} | "
                f"{a[:, 1].mean():.4f} | {a[:, 1].mean() / a[:, 0].mean():.3f} |"
            )
    if "midrung" in parts:
        names = ("sigmoid", "isotonic", "mid", "mid2", "auto_mid", "auto_mid2", "guard1_mid",
                 "guard2_mid")  # fmt: skip
        lines += [
            "",
            "## Maps on the ladder's middle rung f_1/2(x) (binary, refitted)",
            "",
            "`mid`: a sigmoid in the fold fits' decision value at pi = 1/2; `mid2`: a logistic"
            " in (logit p_hat, f_1/2), slopes >= 0; `auto_mid`: the 5-fold CV choice among"
            " sigmoid, isotonic, mid, mid2; `auto_mid2`: without mid; `guard<z>_mid`: mid or"
            " mid2 only where it beats the sigmoid/isotonic choice by more than z standard"
            " errors of the paired per-row CV difference.",
            "",
            summarise(parts["midrung"], ("default", *names)),
        ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    for suffix, text in ((".md", "\n".join(lines) + "\n"), (".json", json.dumps(parts, indent=1))):
        tmp = RESULTS / f"{name}{suffix}.tmp"
        tmp.write_text(text)
        tmp.replace(RESULTS / f"{name}{suffix}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", choices=("all", "real", "designs"))
    ap.add_argument("--diagnose", nargs="*")
    ap.add_argument("--eval", choices=("all", "real", "designs", "designs100"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--name", default="extremes_study")
    ap.add_argument("--refit", nargs=2, metavar=("CASES", "FOLDS"))
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--midrung", action="store_true")
    args = ap.parse_args(argv)
    if args.fit:
        fit_stage(args.fit)
    if args.diagnose is not None:
        res = diagnose(
            tuple(args.diagnose) or ("breast_cancer", "iris", "wine", "penguins", "digits")
        )
        (CACHE / "diagnose.json").write_text(json.dumps(res, indent=1))
    if args.refit:
        names = tuple(args.only) if args.only else ("default",)
        res = refit_stage(args.refit[0], args.refit[1], names)
        (CACHE / f"{args.name}.json").write_text(json.dumps(res, indent=1))
    if args.eval:
        names = tuple(args.only) if args.only else CANDIDATES
        res = eval_stage(args.eval, names)
        (CACHE / f"{args.name}.json").write_text(json.dumps(res, indent=1))
        print(summarise(res, names))
    if args.midrung:
        res = midrung_stage()
        (CACHE / "midrung.json").write_text(json.dumps(res, indent=1))
    if args.report:
        report(args.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
