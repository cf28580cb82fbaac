"""Why the pairwise schemes lose to Platt's coupling (issue 23, multiclass): a diagnosis.

For a design and seed (the draw, standardisation and test set of
``benchmarks/accuracy_vs_peers.py``), every pair (a, b) of classes is scored against the
true conditional ``t_ab = p_a / (p_a + p_b)``: mean ``|q_ab - t_ab|`` over the test points
of class a or b (``pair``) and over all test points (``all``), for

* ``ladder``: the default pairwise scheme's ladder (each pair tuned on its own by EGKL);
* ``ladder_recal``: the same with each pair recalibrated (``calibration="auto"``);
* ``ladder_shared``: the ladders at Platt's chosen (C, gamma), untuned
  (``lambda = 1 / (2 n_s C)`` per pair, ``sigma = 1 / sqrt(gamma)``);
* ``platt``: libsvm's pairwise Platt sigmoid at its searched cell.

and the coupled L1 of each table coupled two ways: the project's per-point-baseline
coupling (:func:`wsvmgui.multiclass.coupling.couple`) and Wu, Lin & Weng's method 2
(libsvm's).  ``oracle_shared`` scans the 7 x 6 (C, sigma) grid of the ladder with one
shared cell and reports the best coupled test L1 (an oracle: chosen on the truth).

    python benchmarks/multiclass_diagnosis.py --designs wu2010_ex1 wu2010_ex2 --seeds 0 1 2
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from accuracy_vs_peers import load  # noqa: E402

from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier  # noqa: E402
from wsvmgui.evaluation.baselines import _couple_pairwise  # noqa: E402
from wsvmgui.evaluation.metrics import l1_error  # noqa: E402
from wsvmgui.evaluation.peers import _ovo, fit_svm_peers, search_svm_peers  # noqa: E402
from wsvmgui.ladder.tuning import DEFAULT_C_GRID  # noqa: E402
from wsvmgui.multiclass import coupling  # noqa: E402
from wsvmgui.solvers.kernels import default_sigma_grid  # noqa: E402


def platt_table(cal, Xt: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    d = _ovo(cal.svc, Xt)
    R = np.full((Xt.shape[0], cal.K, cal.K), 0.5)
    for col, (a, b, A, B) in enumerate(cal.calibrators["platt"]):
        r = np.clip(expit(-(A * d[:, col] + B)), 1e-7, 1 - 1e-7)
        R[:, a, b], R[:, b, a] = r, 1.0 - r
    return R


def pair_errors(Q: np.ndarray, P: np.ndarray, yt: np.ndarray) -> dict[str, dict[str, float]]:
    """Per pair (a, b): mean |Q_ab - t_ab| on the pair's test points and on all of them,
    and (pair points) the mean error where t is extreme (< 0.1 or > 0.9) and central."""
    K = P.shape[1]
    out = {}
    for a, b in itertools.combinations(range(K), 2):
        t = P[:, a] / (P[:, a] + P[:, b])
        e = np.abs(Q[:, a, b] - t)
        on = (yt == a) | (yt == b)
        ext = on & ((t < 0.1) | (t > 0.9))
        out[f"{a},{b}"] = {
            "pair": float(e[on].mean()),
            "all": float(e.mean()),
            "extreme": float(e[ext].mean()) if ext.any() else float("nan"),
            "central": float(e[on & ~ext].mean()) if (on & ~ext).any() else float("nan"),
            "share_extreme": float(ext.sum() / on.sum()),
        }
    return out


def table_of(est, Xt: np.ndarray) -> np.ndarray:
    ests = est._estimates(est._check_X(Xt))
    return est._table(ests, Xt.shape[0])


def run(design: str, seed: int, n_test: int, oracle: bool) -> dict:
    X, codes, Xt, yt, P, K = load(design, None, seed, n_test)
    res: dict = {"design": design, "seed": seed, "n": int(codes.size), "K": K}
    t0 = time.process_time()
    search = search_svm_peers(X, codes, seed=seed)
    C_p, gamma_p = search.best["platt"]
    cal = fit_svm_peers(X, codes, search, methods=("platt",))["platt"]
    res["platt_cell"] = {"C": C_p, "gamma": gamma_p, "cpu": time.process_time() - t0}
    tables = {"platt": platt_table(cal, Xt)}
    base = {"scheme": "pairwise", "ties": "key", "random_state": seed}
    variants = {
        "ladder": {},
        "ladder_recal": {"calibration": "auto"},
        "ladder_recal_brier": {
            "calibration": "auto", "tuning_score": "brier", "tuning_rule": "one_se",
        },
    }  # fmt: skip
    cells = {}
    for name, params in variants.items():
        t0 = time.process_time()
        est = MulticlassWeightedSVMClassifier(**base, **params).fit(X, codes)
        res[f"cpu_{name}"] = time.process_time() - t0
        tables[name] = table_of(est, Xt)
        if name == "ladder":
            cells = {
                f.spec.name: {"C": 1.0 / (2.0 * f.n_train * f.lam), "sigma": f.sigma}
                for f in est.subproblems_.fitted
            }
    res["ladder_cells"] = cells
    n_pair = np.mean([np.sum((codes == a) | (codes == b)) for a, b in
                      itertools.combinations(range(K), 2)])  # fmt: skip
    shared = MulticlassWeightedSVMClassifier(
        **base, lam=1.0 / (2.0 * n_pair * C_p), sigma=1.0 / np.sqrt(gamma_p)
    ).fit(X, codes)
    tables["ladder_shared"] = table_of(shared, Xt)
    res["pairs"] = {m: pair_errors(Q, P, yt) for m, Q in tables.items()}
    res["coupled"] = {
        m: {
            "ours": l1_error(coupling.couple(Q), P),
            "wlw": l1_error(_couple_pairwise(Q), P),
        }
        for m, Q in tables.items()
    }
    T = np.full((Xt.shape[0], K, K), 0.5)
    for a, b in itertools.combinations(range(K), 2):
        t = P[:, a] / (P[:, a] + P[:, b])
        T[:, a, b], T[:, b, a] = t, 1 - t
    res["coupled"]["truth"] = {"ours": l1_error(coupling.couple(T), P),
                               "wlw": l1_error(_couple_pairwise(T), P)}  # fmt: skip
    if oracle:
        sig = default_sigma_grid(X, codes, seed=seed)
        best = (np.inf, None)
        for C, s in itertools.product(DEFAULT_C_GRID, sig):
            e = MulticlassWeightedSVMClassifier(
                **base, lam=1.0 / (2.0 * n_pair * C), sigma=float(s)
            ).fit(X, codes)
            v = l1_error(e.predict_proba(Xt), P)
            if v < best[0]:
                best = (v, (C, float(s)))
        res["oracle_shared"] = {"L1": best[0], "C": best[1][0], "sigma": best[1][1]}
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--designs", nargs="*", default=["wu2010_ex1", "wu2010_ex2"])
    ap.add_argument("--seeds", nargs="*", type=int, default=[0])
    ap.add_argument("--n-test", type=int, default=5000)
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/multiclass_diagnosis.json"))
    args = ap.parse_args(argv)
    path = Path(args.out)
    state = json.loads(path.read_text()) if path.exists() else {}
    for d in args.designs:
        for s in args.seeds:
            key = f"{d}|{s}"
            if key in state and (not args.oracle or "oracle_shared" in state[key]):
                continue
            state[key] = run(d, s, args.n_test, args.oracle)
            path.write_text(json.dumps(state, indent=1, default=float))
            r = state[key]
            print(key, json.dumps(r["coupled"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
