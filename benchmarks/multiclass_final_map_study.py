"""Multiclass study (issue 23, branch acc-mc): a final multiclass recalibration map.

For each draw (the data, standardisation and test points of ``accuracy_vs_peers.py``)
and scheme (the app's default per K, and One-vs-All), fit the estimator as the command
line does, then rebuild its cross-fitted K-class probabilities at every training row:
each sub-problem's recalibration folds refitted (the same folds, C and sigma as the
estimator's own cross-fits), each fold fit estimating at *every* row of its held-out part
(not just its own classes'), recalibrated by the sub-problem's fitted map and combined
exactly as at prediction.  Cached per draw in ``/tmp/acc-mc/<data>_<n>_<seed>_<scheme>.npz``
(test probabilities, cross-fitted training probabilities, labels, true test
probabilities, CPU seconds of the fit and of the extra predictions); the maps are then
compared offline by ``--evaluate``:

* ``none``: the estimator's probabilities;
* ``temp``: softmax(log p / T), T > 0 fitted by log loss on the cross-fitted rows;
* ``vector``: softmax(a log p + b), a > 0 and b (K,) (sum 0, ridge 1e-2 n), log loss;
* ``dirichlet``: softmax(W log p + b), W (K, K) ridge-shrunk toward a I (ODIR-style);
* ``auto``: the map among these with the smallest 3-fold cross-validated log loss on the
  cross-fitted rows.

    python benchmarks/multiclass_final_map_study.py --designs wu2010_ex2 --seeds 0
    python benchmarks/multiclass_final_map_study.py --evaluate
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
CACHE = Path("/tmp/acc-mc")
DESIGNS = ("wu2010_ex1", "wu2010_ex2", "wu2010_ex4", "zeng_ex1", "zeng_ex2", "zeng_ex3", "zeng_ex4")
REAL = ("iris", "wine", "digits", "penguins")


def cross_fitted_proba(est, X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The fitted estimator's cross-fitted probabilities (n, K) at its training rows."""
    from wsvmgui.ladder.final import fit_ladders
    from wsvmgui.ladder.gridsearch import rescale_lambda
    from wsvmgui.ladder.rules import LadderEstimate
    from wsvmgui.multiclass.subproblems import as_ladder_problem
    from wsvmgui.progress import ProgressTracker

    n = codes.size
    plan = est._plan(X, codes, None)
    folds = est._calibration_folds(plan, codes, None)
    tracker = ProgressTracker(1, None, None)
    ests = []
    for f, g in zip(est.subproblems_.fitted, est.calibrations_, strict=True):
        prob = as_ladder_problem(f.spec, codes, None)
        p = np.full(n, 0.5)
        for train, test in folds:
            tr, _ = prob.select(np.asarray(train), n)
            te = np.asarray(test)
            tracker.add_total(f.weights.size)
            lam_tr = rescale_lambda(f.lam, f.n_train, prob.size(tr, n, None))
            fit = fit_ladders(
                X, [prob], tr, f.kernel, [(lam_tr, f.kernel.sigma)], [f.weights],
                tracker=tracker,
            )[0]  # fmt: skip
            p[te] = fit.ladder.estimate(fit.kernel(X[te], X[fit.support]), est.rule).p
        q = g(p)
        ests.append(LadderEstimate(q, q, q, np.ones(n, bool)))
    return est._combine(ests, X)["proba"]


def run_one(data: str, seed: int, scheme: str) -> Path:
    import accuracy_vs_peers as avp
    from threadpoolctl import threadpool_limits

    from wsvmgui.app.presets import default_scheme
    from wsvmgui.app.schemes import prepare_scheme
    from wsvmgui.app.settings import RunSettings

    X, codes, Xt, yt, P_true, K = avp.load(data, None, seed, 10_000)
    out = CACHE / f"{data}_{codes.size}_{seed}_{scheme}.npz"
    if out.exists():
        return out
    sch = default_scheme(K) if scheme == "default" else scheme
    with threadpool_limits(1):
        t0 = time.process_time()
        est, X2, c2 = prepare_scheme(RunSettings(scheme=sch, n_jobs=1), X, codes)
        # the study ran on main's default before the pair schemes' 3-fold tuning
        est.set_params(pair_tuning="holdout")
        est.fit(X2, c2)
        Pt = est.predict_proba(Xt)
        cpu_fit = time.process_time() - t0
        t1 = time.process_time()
        Pcf = cross_fitted_proba(est, X2, c2)
        cpu_cf = time.process_time() - t1
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez(
        tmp,
        Pt=Pt,
        Pcf=Pcf,
        y=c2,
        yt=yt,
        Ptrue=np.zeros((0, K)) if P_true is None else P_true,
        cpu_fit=cpu_fit,
        cpu_cf=cpu_cf,
        scheme=sch,
    )
    tmp.replace(out)
    return out


# ------------------------------------------------------------------------------ maps
def _softmax(Z: np.ndarray) -> np.ndarray:
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def _logp(P: np.ndarray) -> np.ndarray:
    return np.log(np.clip(P, 1e-6, 1.0))


def fit_final_map(kind: str, P: np.ndarray, y: np.ndarray):
    """A function P -> P' fitted to (P (n, K), y (n,)) by penalised log loss."""
    from scipy.optimize import minimize

    n, K = P.shape
    L = _logp(P)
    Y = np.eye(K)[y]
    if kind == "none":
        return lambda Q: Q
    if kind == "temp":

        def f(t):
            Z = L * np.exp(t[0])
            S = _softmax(Z)
            loss = -np.sum(Y * np.log(np.clip(S, 1e-300, None))) / n
            grad = np.sum((S - Y) * Z) / n
            return loss, np.array([grad])

        a = float(np.exp(minimize(f, [0.0], jac=True, method="L-BFGS-B").x[0]))
        return lambda Q: _softmax(_logp(Q) * a)
    if kind == "vector":
        lam = 1e-2

        def f(w):
            a, b = np.exp(w[0]), w[1:]
            Z = L * a + b
            S = _softmax(Z)
            R = (S - Y) / n
            loss = -np.sum(Y * np.log(np.clip(S, 1e-300, None))) / n + lam * b @ b
            return loss, np.concatenate([[np.sum(R * L) * a], R.sum(axis=0) + 2 * lam * b])

        w = minimize(f, np.zeros(K + 1), jac=True, method="L-BFGS-B").x
        a, b = float(np.exp(w[0])), w[1:]
        return lambda Q: _softmax(_logp(Q) * a + b)
    if kind == "dirichlet":
        lam = 1e-2

        def f(w):
            W = w[: K * K].reshape(K, K)
            b = w[K * K :]
            Z = L @ W.T + b
            S = _softmax(Z)
            R = (S - Y) / n
            off = W - np.diag(np.diag(W))
            loss = -np.sum(Y * np.log(np.clip(S, 1e-300, None))) / n
            loss += lam * (np.sum(off**2) + b @ b)
            gW = R.T @ L + 2 * lam * off
            return loss, np.concatenate([gW.ravel(), R.sum(axis=0) + 2 * lam * b])

        w0 = np.concatenate([np.eye(K).ravel(), np.zeros(K)])
        w = minimize(f, w0, jac=True, method="L-BFGS-B").x
        W, b = w[: K * K].reshape(K, K), w[K * K :]
        return lambda Q: _softmax(_logp(Q) @ W.T + b)
    if kind == "auto":
        from sklearn.model_selection import StratifiedKFold

        best, best_s = "none", np.inf
        for k in ("none", "temp", "vector"):
            s = 0.0
            cv = StratifiedKFold(3, shuffle=True, random_state=0)
            for tr, te in cv.split(P, y):
                g = fit_final_map(k, P[tr], y[tr])
                s -= np.sum(np.log(np.clip(g(P[te])[np.arange(te.size), y[te]], 1e-12, None)))
            if s < best_s:
                best, best_s = k, s
        g = fit_final_map(best, P, y)
        g.kind = best  # type: ignore[attr-defined]
        return g
    raise ValueError(kind)


MAP_KINDS = ("none", "temp", "vector", "dirichlet", "auto")


def evaluate() -> dict:
    import accuracy_vs_peers as avp

    records = json.loads((ROOT / "benchmarks/results/accuracy_vs_peers.json").read_text())["runs"]
    best_peer: dict = {}
    for rows in records.values():
        for r in rows:
            if r["method"] in avp.SVM_PEERS:
                best_peer.setdefault((r["data"], r["n"], r["seed"], r["method"]), r)
    out: dict = {}
    for f in sorted(CACHE.glob("*.npz")):
        if ".tmp" in f.name:
            continue
        d = np.load(f)
        data, n, seed, scheme = f.stem.rsplit("_", 3)
        K = d["Pt"].shape[1]
        row = {
            "cpu_fit": float(d["cpu_fit"]),
            "cpu_cf": float(d["cpu_cf"]),
            "scheme": str(d["scheme"]),
        }
        for kind in MAP_KINDS:
            g = fit_final_map(kind, d["Pcf"], d["y"])
            P = g(d["Pt"])
            m = avp.metrics(P, d["yt"], d["Ptrue"] if d["Ptrue"].size else None)
            row[kind] = m
            if kind == "auto":
                row["auto_kind"] = getattr(g, "kind", "")
        key = "L1" if d["Ptrue"].size else "log_loss"
        peers = [best_peer.get((data, int(n), int(seed), p)) for p in avp.SVM_PEERS]
        row["peer_best"] = min(p[key] for p in peers if p is not None) if any(peers) else None
        row["K"] = K
        out[f.stem] = row
    return out


def summarise(res: dict) -> str:
    import collections

    groups = collections.defaultdict(list)
    for k, r in res.items():
        data, n, seed, scheme = k.rsplit("_", 3)
        groups[(data, scheme)].append(r)
    lines = [
        "| data | scheme | seeds | " + " | ".join(MAP_KINDS) + " | best peer |",
        "|---|---|---|" + "---|" * len(MAP_KINDS) + "---|",
    ]
    for (data, scheme), rs in sorted(groups.items()):
        key = "L1" if "L1" in rs[0]["none"] else "log_loss"
        vals = [np.mean([r[kind][key] for r in rs]) for kind in MAP_KINDS]
        peer = [r["peer_best"] for r in rs if r["peer_best"] is not None]
        pb = np.mean(peer) if len(peer) == len(rs) else np.nan
        cells = " | ".join(f"{v:.4f} ({v / pb:.2f})" for v in vals)
        lines.append(f"| {data} | {scheme} | {len(rs)} | {cells} | {pb:.4f} |")
    return "\n".join(lines)


def _warm_up() -> None:
    """Load the compiled kernels before any timed fit (one small fit per scheme)."""
    from wsvmgui.app.schemes import prepare_scheme
    from wsvmgui.app.settings import RunSettings
    from wsvmgui.evaluation.designs import get_design

    s = get_design("wu2010_ex2").sample(60, 999)
    codes = np.unique(s.y, return_inverse=True)[1]
    for sch in ("pairwise", "bp1", "ova"):
        est, X2, c2 = prepare_scheme(RunSettings(scheme=sch, n_jobs=1), s.X, codes)
        est.fit(X2, c2)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--designs", nargs="*", default=list(DESIGNS))
    ap.add_argument("--real", nargs="*", default=[])
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--schemes", nargs="*", default=["default", "ova"])
    ap.add_argument("--evaluate", action="store_true")
    args = ap.parse_args(argv)
    if args.evaluate:
        res = evaluate()
        name = ROOT / "benchmarks/results/multiclass_final_map_study"
        name.with_suffix(".json").write_text(json.dumps(res, indent=1, default=float))
        print(summarise(res))
        return 0
    _warm_up()
    for seed in args.seeds:
        for data in [*args.designs, *args.real]:
            for scheme in args.schemes:
                t = time.time()
                p = run_one(data, seed, scheme)
                print(f"{p.name} {time.time() - t:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
