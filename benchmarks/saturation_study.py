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

    nice -n 5 python benchmarks/saturation_study.py --fit bc04 dev100
    python benchmarks/saturation_study.py --gap
    python benchmarks/saturation_study.py --eval
    python benchmarks/saturation_study.py --report
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
                X, codes, Xt, yt, P_true, K = avp.load(data, n, seed, N_TEST)
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
                if P_true is None:
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", nargs="+", choices=sorted(CASESETS))
    args = ap.parse_args(argv)
    if args.fit:
        fit_stage(args.fit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
