"""The multiclass pairs' middle rung as a second input to their maps (issue 23, ninth sitting).

Each pair of the multiclass default (pairwise for K = 3-4, BP1 for K >= 5) maps its
count estimate p_hat by a sigmoid in logit p_hat fitted on the cross-fitted rows of the
tuning folds.  The ladder's own decision value at pi = 1/2, ``f_1/2(x)`` (the ordinary SVM
of the pair at the chosen cell, read off the exact path), orders points where p_hat is
noisy or saturated.  This script tests it as an input of the pair maps.

Stage ``--capture``: the benchmark of record's draws (``accuracy_vs_peers.load``) and its
default (``method_estimator("wsvmgui")``) are fitted with hooks that keep, per pair,
the cross-fitted ``(p_hat, f_1/2, y)`` of the fold fits the map already uses, and at the
test points the full fit's ``(p_hat, f_1/2)``; BP1's tie-pair estimates and tie-break key
at the test points (which the pair maps do not change) and the default's own test
probabilities; the cross-fitted rows' indices and, on the designs, the training rows'
true probabilities.  One pickle per draw under ``/tmp/acc-mcmid/`` (:data:`CACHE`).

Stage ``--replay``: the pair maps below fitted on each pair's cross-fitted rows, the
test table rebuilt and coupled by the fitted estimator's own ``_combine`` (least squares;
BP1 with its tie pairs as fitted by the default: where a map moves a baseline pair across
1/2 at a training point the library would fit another set of tie pairs, which the replay
cannot), scored by L1 (designs) and log loss (real sets).  Candidates:

* ``default``: today's map replayed (``est._pair_map``; must equal the record);
* ``sig``: the sigmoid in logit p_hat (= ``default`` up to 1000 rows);
* ``both``: logistic in (logit p_hat, f_1/2), both slopes >= 0;
* ``mid``: Platt's sigmoid in f_1/2 alone (the pair's SVM, Platt-scaled);
* ``guard{k}``: per pair, the challenger of ``both`` / ``mid`` with the least 5-fold CV log
  loss on the pair's cross-fitted rows replaces today's map where it wins by more than k
  standard errors of the paired per-row difference (k = 0, 1, 2);
* ``shared``: one sigmoid slope in logit p_hat for all pairs of a draw, one intercept each.

Diagnostics on the designs (against the truth): each pair's error against
p_a / (p_a + p_b); oracles fitted on the test points' truth (the best sigmoid of p_hat,
the best monotone map of p_hat and of f_1/2); today's sigmoid and the two-input logistic
fitted on the cross-fitted rows to their true conditionals instead of their labels.
Results: ``benchmarks/results/multiclass_midrung_study.{md,json}``
(docs/notes/multiclass_accuracy.md, "Ninth sitting").

    nice -n 5 python benchmarks/multiclass_midrung_study.py --capture --sizes paper real --seeds 0-9
    nice -n 5 python benchmarks/multiclass_midrung_study.py --capture --sizes 2000 --seeds 0-9
    nice -n 5 python benchmarks/multiclass_midrung_study.py --replay
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

CACHE = Path("/tmp/acc-mcmid")
OUT = Path(__file__).resolve().parent / "results" / "multiclass_midrung_study"
DESIGNS = ("wu2010_ex1", "wu2010_ex2", "wu2010_ex4", "zeng_ex1", "zeng_ex2", "zeng_ex3", "zeng_ex4")
REAL = ("iris", "wine", "penguins", "digits")
N_TEST = 10_000
GUARDS = (0.0, 1.0, 2.0)


# ------------------------------------------------------------------------------ capture
def _mid(ladder, K: np.ndarray) -> np.ndarray:
    """Decision value at pi = 1/2 of a ladder for kernel rows ``K`` (m, n); (m,).

    The exact path's; a grid ladder (a path that fell back) at its weight nearest 1/2."""
    if hasattr(ladder, "path"):
        return np.asarray(
            ladder.path.decision_at(ladder._spread(K), np.array([0.5])), dtype=float
        ).reshape(-1)
    d = ladder.decision(K)
    return np.asarray(d[:, int(np.argmin(np.abs(ladder.weights - 0.5)))], dtype=float)


def capture_one(data: str, n: int | None, seed: int) -> dict:
    """Fit the record's default on one draw with the hooks; the draw's cache entry."""
    import accuracy_vs_peers as avp

    from wsvmgui.ladder import recalibration as rc

    X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
    est, X, codes, _ = avp.method_estimator("wsvmgui", K, X, codes)
    folds_seen: list = []
    pairs: list[dict] = []
    orig_folds = rc.fold_fits
    orig_map = est._pair_map
    plans: list = []

    def folds(*a, **k):
        for fit, te, y_te in orig_folds(*a, **k):
            folds_seen.append((fit, te))
            yield fit, te, y_te

    def pair_map(plan, p, y):
        d = np.concatenate([_mid(f.ladder, f.kernel(X[te], X[f.support])) for f, te in folds_seen])
        rows = np.concatenate([te for _, te in folds_seen])
        folds_seen.clear()
        assert d.size == p.size == rows.size
        pairs.append({"p_cf": np.array(p), "y_cf": np.array(y), "d_cf": d, "rows_cf": rows})
        plans.append(plan)
        return orig_map(plan, p, y)

    rc.fold_fits = folds
    est._pair_map = pair_map
    t0 = time.process_time()
    try:
        est.fit(X, codes)
    finally:
        rc.fold_fits = orig_folds
        del est._pair_map
    cpu = time.process_time() - t0
    Xc = est._check_X(Xt)
    sub = est.subproblems_
    raw = sub.estimates(Xc, est.rule)
    mids = [np.concatenate(parts) for parts in sub._per_ladder(Xc, _mid)]
    for pr, f, e, d, g in zip(pairs, sub.fitted, raw, mids, est.calibrations_, strict=True):
        pr.update(
            name=f.spec.name, pos=int(f.spec.positive), neg=int(f.spec.negative[0]),
            p_t=e.p, d_t=d, map=g, C=1.0 / (2.0 * f.n_train * f.lam), sigma=float(f.sigma),
        )  # fmt: skip
    P_def = est.predict_proba(Xt)
    P_train = None
    if data not in REAL:
        from wsvmgui.evaluation.designs import get_design

        design = get_design(data)
        P_train = design.sample(n or design.default_n, seed).p
    entry = {
        "P_train": P_train,
        "data": data, "n": int(codes.size), "seed": seed, "K": K, "scheme": est.scheme,
        "yt": yt, "P_true": P_true, "P_default": P_def, "pairs": pairs, "cpu": cpu,
        "default": avp.metrics(P_def, yt, P_true), "plan": plans[0] if plans else None,
    }  # fmt: skip
    if est.scheme != "pairwise" and getattr(est, "tie_pairs_", None) is not None:
        entry["ties"] = est._tie_pair_estimates(Xc)
    if est.scheme != "pairwise":
        entry["key"] = est._baseline_key(Xc)
    # the fitted estimator without its kernels' training rows is not needed: keep what
    # _combine reads (scheme, classes, baseline, coupling, ties) by pickling the estimator
    entry["est"] = est
    return entry


def _todo(sizes: list[str], seeds: list[int], which: list[str]) -> list[tuple]:
    out = []
    for s in seeds:
        for size in sizes:
            if size == "real":
                out += [(d, None, s) for d in REAL if d in which]
            else:
                n = None if size == "paper" else int(size)
                out += [(d, n, s) for d in DESIGNS if d in which]
    return out


def _path(data: str, n: int | None, seed: int) -> Path:
    return CACHE / f"{data}_{n or 'paper'}_{seed}.pkl"


def capture(todo: list[tuple]) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    for data, n, seed in todo:
        path = _path(data, n, seed)
        if path.exists():
            continue
        t0 = time.time()
        entry = capture_one(data, n, seed)
        path.write_bytes(pickle.dumps(entry))
        key = "L1" if entry["P_true"] is not None else "log_loss"
        print(
            f"{data} n={entry['n']} seed={seed}: {key} {entry['default'][key]:.4f} "
            f"cpu {entry['cpu']:.1f}s wall {time.time() - t0:.1f}s",
            flush=True,
        )


# ------------------------------------------------------------------------------- maps
def _fit_both(p, d, y):
    """Logistic in (logit p, f_1/2), both slopes >= 0; a function of (p, d)."""
    from scipy.special import expit, logit

    from wsvmgui.ladder import recalibration as rc

    p, y = rc._check(p, y)
    floor = 1.0 / (2.0 * (y.size + 1))
    c, a, b = rc._logistic(
        np.column_stack([logit(p), d]), y, [(None, None), (0.0, None), (0.0, None)]
    )
    return lambda pp, dd: np.clip(
        expit(c + a * logit(np.clip(pp, rc.P_EPS, 1 - rc.P_EPS)) + b * dd), floor, 1 - floor
    )


def _fit_mid(p, d, y):
    """Platt's sigmoid in f_1/2 alone (slope >= 0); a function of (p, d)."""
    from scipy.special import expit

    from wsvmgui.ladder import recalibration as rc

    p, y = rc._check(p, y)
    floor = 1.0 / (2.0 * (y.size + 1))
    c, a = rc._logistic(d[:, None], y, [(None, None), (0.0, None)])
    return lambda pp, dd: np.clip(expit(c + a * dd), floor, 1 - floor)


def _fit_sig(p, d, y):
    from wsvmgui.ladder import recalibration as rc

    g = rc.fit_map("sigmoid", p, y)
    return lambda pp, dd: g(pp)


FITS = {"sig": _fit_sig, "both": _fit_both, "mid": _fit_mid}


def _cv_terms(pr: dict, default_fit, seed: int = 0) -> dict[str, np.ndarray]:
    """5-fold CV per-row log loss on the pair's cross-fitted rows of today's map
    (``"default"``) and of every candidate of :data:`FITS`."""
    from wsvmgui.ladder import recalibration as rc

    p, d, y = pr["p_cf"], pr["d_cf"], pr["y_cf"]
    fits = {"default": default_fit, **FITS}
    q = {k: np.empty(p.size) for k in fits}
    folds = rc._folds(y, 5, seed)
    if not folds:
        return {}
    for tr, te in folds:
        for k, fit in fits.items():
            q[k][te] = fit(p[tr], d[tr], y[tr])(p[te], d[te])
    return {k: rc._log_loss_terms(v, y) for k, v in q.items()}


def _shared_slope(pairs: list[dict]) -> list[np.ndarray]:
    """One sigmoid slope in logit p_hat for all pairs, one intercept per pair, fitted on
    the pairs' cross-fitted rows pooled (the slope from K(K-1)/2 or K-1 pairs' rows);
    each pair's mapped test estimate (m,)."""
    from scipy.special import expit, logit

    from wsvmgui.ladder import recalibration as rc

    k = len(pairs)
    lp = [logit(np.clip(pr["p_cf"], rc.P_EPS, 1 - rc.P_EPS)) for pr in pairs]
    ind = np.zeros((sum(v.size for v in lp), k - 1))
    start = 0
    for j, v in enumerate(lp):
        if j:
            ind[start : start + v.size, j - 1] = 1.0
        start += v.size
    F = np.column_stack([ind, np.concatenate(lp)])
    y = np.concatenate([pr["y_cf"] for pr in pairs])
    coef = rc._logistic(F, y, [(None, None)] * k + [(0.0, None)])
    out = []
    for j, pr in enumerate(pairs):
        c = coef[0] + (coef[j] if j else 0.0)
        floor = 1.0 / (2.0 * (pr["y_cf"].size + 1))
        z = c + coef[-1] * logit(np.clip(pr["p_t"], rc.P_EPS, 1 - rc.P_EPS))
        out.append(np.clip(expit(z), floor, 1 - floor))
    return out


def pair_maps(entry: dict) -> dict[str, list[np.ndarray]]:
    """Candidate name -> each pair's mapped test estimate (m,)."""
    est, plan = entry["est"], entry["plan"]
    seed = 0

    def default_fit(p, d, y):
        g = est._pair_map(plan, p, y)
        return lambda pp, dd: g(pp)

    out: dict[str, list] = {k: [] for k in ("default", *FITS)}
    out.update({f"guard{k:g}": [] for k in GUARDS})
    out["choices"] = []
    for pr in entry["pairs"]:
        p, d, y = pr["p_cf"], pr["d_cf"], pr["y_cf"]
        full = {"default": pr["map"](pr["p_t"])}
        for k, fit in FITS.items():
            full[k] = fit(p, d, y)(pr["p_t"], pr["d_t"])
        for k in ("default", *FITS):
            out[k].append(full[k])
        terms = _cv_terms(pr, default_fit, seed)
        pick = {}
        for z in GUARDS:
            choice = "default"
            if terms:
                ch = min(("both", "mid"), key=lambda k: float(terms[k].mean()))
                diff = terms[ch] - terms["default"]
                se = float(diff.std(ddof=1)) / np.sqrt(diff.size)
                if float(diff.mean()) < -z * se:
                    choice = ch
            out[f"guard{z:g}"].append(full[choice])
            pick[f"guard{z:g}"] = choice
        out["choices"].append(pick)
    out["shared"] = _shared_slope(entry["pairs"])
    return out


def _truth(P: np.ndarray, pr: dict) -> np.ndarray:
    """The pair's true conditional ``p_pos / (p_pos + p_neg)`` at the rows of ``P`` (m, K)."""
    a, b = pr["pos"], pr["neg"]
    return P[:, a] / np.maximum(P[:, a] + P[:, b], 1e-300)


def _pair_weight(P: np.ndarray, pr: dict) -> np.ndarray:
    """``p_pos + p_neg`` at the rows of ``P`` (m, K): how much the pair weighs there."""
    return P[:, pr["pos"]] + P[:, pr["neg"]]


def _soft_logistic(F: np.ndarray, t: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Coefficients ``(c, slopes...)`` of ``expit(c + F @ slopes)`` (slopes >= 0) fitted
    to probabilities ``t`` (m,) by weighted cross-entropy (weights ``w`` (m,), or 1)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    w = np.ones(t.size) if w is None else np.asarray(w, dtype=float)
    w = w / w.sum()
    Z = np.column_stack([np.ones(t.size), F])

    def loss(b):
        z = Z @ b
        g = Z.T @ (w * (expit(z) - t))
        return float(np.sum(w * (np.logaddexp(0.0, z) - t * z))), g

    bounds = [(None, None)] + [(0.0, None)] * F.shape[1]
    b0 = np.r_[0.0, np.full(F.shape[1], 0.5)]
    return minimize(loss, b0, jac=True, method="L-BFGS-B", bounds=bounds).x


def _soft_sigmoid(p: np.ndarray, t: np.ndarray, w: np.ndarray | None = None):
    """The sigmoid in logit p (slope >= 0) fitted to probabilities ``t`` by cross-entropy."""
    from scipy.special import expit, logit

    from wsvmgui.ladder import recalibration as rc

    lp = logit(np.clip(p, rc.P_EPS, 1 - rc.P_EPS))
    c, a = _soft_logistic(lp[:, None], t, w)
    return lambda pp: expit(c + a * logit(np.clip(pp, rc.P_EPS, 1 - rc.P_EPS)))


def _soft_both(p: np.ndarray, d: np.ndarray, t: np.ndarray):
    """The logistic in (logit p, d) (slopes >= 0) fitted to probabilities ``t``."""
    from scipy.special import expit, logit

    from wsvmgui.ladder import recalibration as rc

    lp = logit(np.clip(p, rc.P_EPS, 1 - rc.P_EPS))
    c, a, b = _soft_logistic(np.column_stack([lp, d]), t, None)
    return lambda pp, dd: expit(c + a * logit(np.clip(pp, rc.P_EPS, 1 - rc.P_EPS)) + b * dd)


def replay_one(entry: dict) -> dict:
    import accuracy_vs_peers as avp

    maps = pair_maps(entry)
    choices = maps.pop("choices")
    row = {"data": entry["data"], "n": entry["n"], "seed": entry["seed"], "K": entry["K"]}
    row["record_default"] = entry["default"]
    for name, qs in maps.items():
        P = couple_rows(entry, qs)
        row[name] = avp.metrics(P, entry["yt"], entry["P_true"])
    if entry["P_true"] is not None:
        # oracles, fitted on the truth at every test point weighted by p_a + p_b (where
        # the pair weighs in the coupling): each pair's best monotone map (isotonic) of
        # p_hat alone and of f_1/2 alone, and its best sigmoid in logit p_hat -- bounds for
        # any map of one input
        from sklearn.isotonic import IsotonicRegression

        P = entry["P_true"]
        for name, src in (("oracle_p", "p_t"), ("oracle_d", "d_t")):
            maps[name] = []
            for pr in entry["pairs"]:
                iso = IsotonicRegression(y_min=1e-6, y_max=1 - 1e-6, out_of_bounds="clip")
                iso.fit(pr[src], _truth(P, pr), sample_weight=_pair_weight(P, pr))
                maps[name].append(iso.predict(pr[src]))
        # and the sigmoid fitted on the cross-fitted rows as today but to their true
        # conditionals instead of their labels (no label noise in the map's fit: what is
        # left is the fold fits' p_hat standing in for the full fit's, and the family)
        names = ["oracle_p", "oracle_d", "oracle_sig"]
        maps["oracle_sig"] = [
            _soft_sigmoid(pr["p_t"], _truth(P, pr), _pair_weight(P, pr))(pr["p_t"])
            for pr in entry["pairs"]
        ]
        if entry.get("P_train") is not None and "rows_cf" in entry["pairs"][0]:
            Ptr = entry["P_train"]
            maps["truth_cf_sig"] = [
                _soft_sigmoid(pr["p_cf"], _truth(Ptr, pr)[pr["rows_cf"]])(pr["p_t"])
                for pr in entry["pairs"]
            ]
            maps["truth_cf_both"] = [
                _soft_both(pr["p_cf"], pr["d_cf"], _truth(Ptr, pr)[pr["rows_cf"]])(
                    pr["p_t"], pr["d_t"]
                )
                for pr in entry["pairs"]
            ]
            names += ["truth_cf_sig", "truth_cf_both"]
        for name in names:
            row[name] = avp.metrics(couple_rows(entry, maps[name]), entry["yt"], P)
        # each pair's estimate against the true conditional p_a / (p_a + p_b) at the
        # test points of its two classes (the diagnosis of section 1)
        row["pair_error"] = {}
        for name in ("default", "both", "mid", *names):
            errs = []
            for pr, q in zip(entry["pairs"], maps[name], strict=True):
                a, b = pr["pos"], pr["neg"]
                at = np.isin(entry["yt"], (a, b))
                t = P[at, a] / np.maximum(P[at, a] + P[at, b], 1e-300)
                errs.append(float(np.mean(np.abs(q[at] - t))))
            row["pair_error"][name] = float(np.mean(errs))
    row["cells"] = [(pr["C"], pr["sigma"]) for pr in entry["pairs"]]
    row["choices"] = (
        {
            g: {c: sum(1 for x in choices if x[g] == c) for c in ("default", "both", "mid")}
            for g in choices[0]
        }
        if choices
        else {}
    )
    return row


def couple_rows(entry: dict, qs: list[np.ndarray]) -> np.ndarray:
    """:func:`couple`, with the tie-break key indexed by the tied rows."""
    from wsvmgui.ladder.rules import LadderEstimate
    from wsvmgui.multiclass import coupling

    est = entry["est"]
    m = qs[0].size
    ests = [LadderEstimate(q, q, q, np.ones(m, bool)) for q in qs]
    if est.scheme == "pairwise":
        return est._combine(ests, np.zeros((m, 1)))["proba"]
    key = entry["key"]
    tied_rows: list[np.ndarray] = []
    orig_tied = coupling.tied_rows

    def tied(P):
        r = orig_tied(P)
        tied_rows.append(r)
        return r

    ties = entry.get("ties")
    est._tie_pair_estimates = lambda X: ties
    est._baseline_key = lambda X: key[tied_rows[-1]]
    coupling.tied_rows = tied
    try:
        return est._combine(ests, np.zeros((m, 1)))["proba"]
    finally:
        coupling.tied_rows = orig_tied
        est.__dict__.pop("_tie_pair_estimates", None)
        est.__dict__.pop("_baseline_key", None)


#: The candidates :func:`replay` prints per draw.
REPLAY_COLUMNS = ("default", "sig", "both", "mid", "guard0", "guard1", "guard2")


def replay(
    paths: list[Path],
    one: Callable[[dict], dict] | None = None,
    columns: tuple[str, ...] = REPLAY_COLUMNS,
    tail: Callable[[dict], str] | None = None,
) -> list[dict]:
    """Replay the captured fits at ``paths`` (pickles of :func:`capture`): ``one`` of
    each entry (None: :func:`replay_one`), one progress line per draw with the record's
    default and each of ``columns`` present in the row (L1 on designs, log loss on real
    sets), followed by ``tail(row)``.  Returns the rows, in the order of ``paths``."""
    one = replay_one if one is None else one
    rows = []
    for path in paths:
        entry = pickle.loads(path.read_bytes())
        row = one(entry)
        key = "L1" if entry["P_true"] is not None else "log_loss"
        print(
            f"{row['data']} n={row['n']} seed={row['seed']}: "
            f"record {row['record_default'][key]:.4f}"
            + "".join(f" {k} {row[k][key]:.4f}" for k in columns if k in row)
            + (tail(row) if tail is not None else ""),
            flush=True,
        )
        rows.append(row)
    return rows


CANDIDATES = ("sig", "both", "mid", "guard0", "guard1", "guard2", "shared")
#: The diagnostics' columns (pair errors and coupled L1 against the truth).
DIAG = (
    "default",
    "both",
    "mid",
    "oracle_sig",
    "oracle_p",
    "oracle_d",
    "truth_cf_sig",
    "truth_cf_both",
)


def _record() -> dict:
    """The benchmark of record's runs (main's results file)."""
    path = Path(__file__).resolve().parent / "results" / "accuracy_vs_peers.json"
    return json.loads(path.read_text())["runs"]


def _peer_mean(runs: dict, data: str, n: int, seeds: list[int], key: str) -> float:
    """The best SVM peer's mean of ``key`` over ``seeds`` (the record's; NaN if missing)."""
    import accuracy_vs_peers as avp

    size = "split" if data in REAL else str(n)
    means = []
    for peer in avp.SVM_PEERS:
        vals = []
        for s in seeds:
            rows = runs.get(f"{data}|{size}|{s}|svm", [])
            vals += [r[key] for r in rows if r["method"] == peer]
        if len(vals) != len(seeds):
            return float("nan")
        means.append(float(np.mean(vals)))
    return min(means)


def _record_default(runs: dict, data: str, n: int, seed: int, key: str) -> float:
    size = "split" if data in REAL else str(n)
    rows = runs.get(f"{data}|{size}|{seed}|wsvmgui", [])
    return float(rows[0][key]) if rows else float("nan")


def _fmt(m: tuple[float, int], digits: int, k_all: int) -> str:
    """A mean over ``m[1]`` draws, with the count where it is not all ``k_all``."""
    return f"{m[0]:.{digits}f}" + (f" ({m[1]})" if m[1] != k_all else "")


def seed_blocks(rows: list[dict]):
    """``(lo, hi, rows)`` for seeds 0-4, 5-9 and 10-14 (the record's seed sets), the rows
    of each sorted by seed; empty sets skipped."""
    for lo, hi in ((0, 4), (5, 9), (10, 14)):
        sub = sorted((r for r in rows if lo <= r["seed"] <= hi), key=lambda r: r["seed"])
        if sub:
            yield lo, hi, sub


def ratio_cell(v: np.ndarray, base: np.ndarray) -> str:
    """``"mean(v) / mean(base) (better/worse)"`` of a candidate's per-draw scores ``v`` and
    the default's ``base`` (both (k,)), draws counted beyond 1e-12."""
    better, worse = int(np.sum(v < base - 1e-12)), int(np.sum(v > base + 1e-12))
    return f"{v.mean() / base.mean():.3f} ({better}/{worse})"


def summarise(rows: list[dict]) -> str:
    """Markdown: per data set, size and seed set, each candidate's mean over the
    default's (replayed), draws better / worse, and over the record's best SVM peer."""
    runs = _record()
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        size = "real" if r["data"] in REAL else ("2000" if r["n"] == 2000 else "paper")
        groups.setdefault((size, r["data"], r["n"] if r["data"] not in REAL else 0), []).append(r)
    order = {"paper": 0, "real": 1, "2000": 2}
    lines = [
        "# The multiclass pairs' middle rung as a map input",
        "",
        "(`benchmarks/multiclass_midrung_study.py`)",
        "",
        'Replayed from the captured fits of the record\'s default (`method_estimator("wsvmgui")`,',
        "the record's draws, 10,000 test points).  Cell: candidate mean / default mean",
        "(L1 on designs, log loss on real sets), draws better / worse; `peer`: mean over the",
        "record's best SVM peer over the same seeds (seeds 0-4 only: the record has no others).",
        "`max |replay - record|`: the replayed default against the record's `wsvmgui` rows",
        "(seeds 0-4).",
        "",
        "| data | n | seeds | default | "
        + " | ".join(CANDIDATES)
        + " | default / peer | "
        + " | ".join(f"{c} / peer" for c in ("both", "mid", "guard1"))
        + " | max abs(replay - record) |",
        "|" + "---|" * (5 + len(CANDIDATES) + 4),
    ]
    for (_size, data, _), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
        key = "log_loss" if data in REAL else "L1"
        for lo, hi, sub in seed_blocks(rs):
            seeds = [r["seed"] for r in sub]
            base = np.array([r["default"][key] for r in sub])
            cells = []
            for c in CANDIDATES:
                cells.append(ratio_cell(np.array([r[c][key] for r in sub]), base))
            peer = _peer_mean(runs, data, sub[0]["n"], seeds, key)
            pr = [f"{base.mean() / peer:.2f}"] + [
                f"{np.mean([r[c][key] for r in sub]) / peer:.2f}" for c in ("both", "mid", "guard1")
            ]
            rec = [abs(r["default"][key] - _record_default(runs, data, r["n"], r["seed"], key))
                   for r in sub if r["seed"] <= 4]  # fmt: skip
            recs = f"{max(rec):.1e}" if rec else ""
            lines.append(
                f"| {data} | {sub[0]['n']} | {lo}-{hi} ({len(sub)}) | {base.mean():.4f} | "
                + " | ".join(cells)
                + " | "
                + " | ".join(pr)
                + f" | {recs} |"
            )
    lines += [
        "",
        "Each pair's error against the true conditional p_a / (p_a + p_b), mean |q - t| over",
        "the test points of its two classes, mean over the pairs and draws (designs; BP1: the",
        "baseline pairs; `pair:` columns), and the coupled L1 over the default's (`L1:`",
        "columns; `/ peer`: over the record's best SVM peer, seeds 0-4).  Oracles, fitted on the",
        "truth at every test point weighted by p_a + p_b: `oracle_sig` each pair's best sigmoid",
        "in logit p_hat,",
        "`oracle_p` / `oracle_d` its best monotone map (isotonic) of p_hat / of f_1/2.",
        "`truth_cf_sig` / `truth_cf_both`: today's sigmoid / the logistic in (logit p_hat,",
        "f_1/2) fitted on the cross-fitted rows as the library does, but to their true",
        "conditionals instead of their 0/1 labels (draws captured with the rows only).",
        "`C`: pairs tuned at C = 0.1 / 1 / 10 / 100.",
        "",
        "| data | n | draws | "
        + " | ".join(f"pair: {k}" for k in DIAG)
        + " | "
        + " | ".join(f"L1: {k}" for k in DIAG[1:])
        + " | L1: oracle_p / peer | C |",
        "|" + "---|" * (3 + 2 * len(DIAG) + 1),
    ]
    for (_size, data, _), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
        if data in REAL:
            continue

        def mean(k, f, rs=rs):
            v = [f(r, k) for r in rs if k in r["pair_error"]]
            return (float(np.mean(v)), len(v)) if v else (float("nan"), 0)

        pe = [mean(k, lambda r, k: r["pair_error"][k]) for k in DIAG]
        l1 = [mean(k, lambda r, k: r[k]["L1"] / r["default"]["L1"]) for k in DIAG[1:]]
        s04 = [r for r in rs if r["seed"] <= 4]
        peer = _peer_mean(runs, data, rs[0]["n"], [r["seed"] for r in s04], "L1")
        orp = float(np.mean([r["oracle_p"]["L1"] for r in s04])) / peer if s04 else np.nan
        Cs = [c for r in rs for c, _ in r["cells"]]
        share = "/".join(
            str(sum(abs(np.log10(c) - np.log10(v)) < 0.25 for c in Cs)) for v in (0.1, 1, 10, 100)
        )
        k_all = len(rs)
        lines.append(
            f"| {data} | {rs[0]['n']} | {len(rs)} | "
            + " | ".join(_fmt(m, 4, k_all) for m in pe)
            + " | "
            + " | ".join(_fmt(m, 3, k_all) for m in l1)
            + f" | {orp:.2f} | {share} |"
        )
    lines += [
        "",
        "Per-pair choices of the guarded rule (pairs over all draws: default / both / mid):",
        "",
    ]
    for (_size, data, _), rs in sorted(groups.items(), key=lambda t: (order[t[0][0]], t[0][1])):
        tot = {g: {c: sum(r["choices"][g][c] for r in rs) for c in ("default", "both", "mid")}
               for g in ("guard0", "guard1", "guard2")}  # fmt: skip
        lines.append(
            f"- {data} n={rs[0]['n']}: " + "; ".join(
                f"{g} {t['default']}/{t['both']}/{t['mid']}" for g, t in tot.items())
        )  # fmt: skip
    return "\n".join(lines) + "\n"


def _seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--capture", action="store_true")
    ap.add_argument("--replay", action="store_true")
    ap.add_argument("--sizes", nargs="+", default=["paper", "real"])
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--data", nargs="+", default=[*DESIGNS, *REAL])
    ap.add_argument("--out-dir", type=Path, default=OUT.parent)
    args = ap.parse_args()
    out = args.out_dir / OUT.name
    if args.capture:
        capture(_todo(args.sizes, _seeds(args.seeds), args.data))
    if args.replay:
        rows = replay(sorted(CACHE.glob("*.pkl")))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=float))
        out.with_suffix(".md").write_text(summarise(rows))


if __name__ == "__main__":
    main()
