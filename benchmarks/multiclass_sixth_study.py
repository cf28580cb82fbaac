"""Replay the multiclass default's choices offline from cached per-cell estimates (acc-mc2).

For every draw of the benchmark of record (:mod:`accuracy_vs_peers`: the same draws,
standardisation and 10,000 test points; seeds 0-4 at the papers' n, 5 splits of the real
sets) the default is fitted as the command line fits it, and for each of its sub-problems
every cell of the grid (C in :data:`CS` x sigma in :data:`SF` sigma_M, or the coarse
4 x 4 of the pair tuning with ``--coarse``) is fitted on all rows (estimates at the test
points) and on the 3 tuning folds (cross-fitted estimates at every training row).  The
fitted estimator and the estimates are cached (``--cache``, an ``.npz`` and a pickle per
draw).  ``--replay`` then recombines them without refitting: the default's own choice
(each pair's EGKL minimum on the coarse grid, its map on the cross-fits), the sigmoid map
instead of "auto", the baseline schemes' full table coupled by least squares
(``ties="table"``) instead of the tie pairs sharing the contest (``ties="pairs"``), and the
two best cells averaged; means go to ``benchmarks/results/multiclass_sixth_study.json``
(docs/notes/multiclass_accuracy.md, section 5)::

    python benchmarks/multiclass_sixth_study.py --cache /tmp/c --data zeng_ex3:500 --seeds 0 1
    python benchmarks/multiclass_sixth_study.py --cache /tmp/c --replay
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
CS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
SF = (0.25, 0.375, 0.5, 0.75, 1.0, 1.25, 1.5)
#: The pair tuning's coarse grid as indices into CS x SF.
COARSE = [(i, j) for i in (0, 2, 4, 6) for j in (0, 2, 4, 6)]


def cache(folder: str, data: str, n: int | None, seed: int, coarse: bool) -> None:
    """Fit the default on one draw and every cell of every sub-problem; save them."""
    import accuracy_vs_peers as avp

    from wsvmgui.app.schemes import prepare_scheme
    from wsvmgui.estimators._base import seed_of
    from wsvmgui.ladder.final import fit_ladders
    from wsvmgui.ladder.recalibration import fold_fits
    from wsvmgui.ladder.tuning import kernel_with_sigma
    from wsvmgui.multiclass.subproblems import (
        SubproblemSet,
        as_ladder_problem,
        fitted_subproblem,
    )
    from wsvmgui.progress import ProgressTracker
    from wsvmgui.solvers.kernels import default_sigma_grid

    out = Path(folder) / f"{data}_{n}_{seed}.npz"
    if out.exists():
        return
    X, codes, Xt, yt, P, K = avp.load(data, n, seed, avp.RECORD_N_TEST)
    settings, _ = avp._settings("wsvmgui", K)
    est, X, codes = prepare_scheme(settings, X, codes)
    est.fit(X, codes)
    plan = est._plan(X, codes, None)
    sig = default_sigma_grid(X, codes, SF, seed_of(est.random_state), None)
    fold_of = np.full(codes.size, -1)
    for f, (_, te) in enumerate(plan.folds):
        fold_of[te] = f
    fitted = est.subproblems_.fitted
    test_p = np.full((len(fitted), len(CS), len(SF), Xt.shape[0]), np.nan)
    fold_p = np.full((len(fitted), len(CS), len(SF), codes.size), np.nan)
    tracker = ProgressTracker(1, None, None)
    for s, f in enumerate(fitted):
        prob = as_ladder_problem(f.spec, codes, None)
        n_final = prob.size(plan.fit_rows, codes.size, None)
        for i, j in COARSE if coarse else [(i, j) for i in range(7) for j in range(7)]:
            lam = 1.0 / (2.0 * n_final * CS[i])
            fit = fit_ladders(
                X, [prob], plan.fit_rows, plan.kernel, [(lam, sig[j])], [f.weights],
                tracker=tracker,
            )[0]  # fmt: skip
            one = SubproblemSet([fitted_subproblem(f.spec, fit, f.weights, None)], X)
            test_p[s, i, j] = one.estimates(Xt, est.rule)[0].p
            kernel = kernel_with_sigma(plan.kernel, sig[j])
            for (ff, _, _), (_, te) in zip(
                fold_fits(X, prob, plan.folds, kernel, lam, n_final, f.weights, tracker=tracker),
                plan.folds,
                strict=True,
            ):
                K_te = ff.kernel(X[te], X[ff.support])
                fold_p[s, i, j, te] = ff.ladder.estimate(K_te, est.rule).p
    np.savez_compressed(
        out, test_p=test_p, fold_p=fold_p, fold_of=fold_of, codes=codes, yt=yt,
        P=np.zeros(0) if P is None else P, P_def=est.predict_proba(Xt),
    )  # fmt: skip
    with open(out.with_suffix(".pkl"), "wb") as fh:
        pickle.dump({"est": est, "Xt": Xt}, fh)
    print(out.name, flush=True)


def _egkl(p: np.ndarray, y: np.ndarray) -> float:
    from wsvmgui.ladder.search import EGKL_FLOOR

    p = np.clip(p, EGKL_FLOOR, 1 - EGKL_FLOOR)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def replay_draw(path: str) -> dict[str, float]:
    """The variants' L1 (designs) or log loss (real sets) on one cached draw."""
    from wsvmgui.evaluation.metrics import cross_entropy, l1_error
    from wsvmgui.ladder.recalibration import fit_calibration
    from wsvmgui.ladder.rules import LadderEstimate

    z = np.load(path)
    with open(Path(path).with_suffix(".pkl"), "rb") as fh:
        saved = pickle.load(fh)
    est, Xt = saved["est"], saved["Xt"]
    codes, fold_of = z["codes"], z["fold_of"]

    def score(proba: np.ndarray) -> float:
        if z["P"].size:
            return float(l1_error(proba, z["P"]))
        return float(cross_entropy(proba, z["yt"], np.arange(proba.shape[1])))

    rows, ys = [], []
    for f in est.subproblems_.fitted:
        a, b = f.spec.positive, f.spec.negative[0]
        r = np.flatnonzero((codes == a) | (codes == b))
        r = r[np.argsort(fold_of[r], kind="stable")]  # the estimator's cross-fit order
        rows.append(r)
        ys.append((codes[r] == a).astype(float))

    def estimates(k: int, cal: str) -> list:
        out = []
        for s in range(len(rows)):
            loss = [_egkl(z["fold_p"][s, i, j, rows[s]], ys[s]) for i, j in COARSE]
            cells = [COARSE[t] for t in np.argsort(loss, kind="stable")[:k]]
            fp = np.mean([z["fold_p"][s, i, j, rows[s]] for i, j in cells], axis=0)
            tp = np.mean([z["test_p"][s, i, j] for i, j in cells], axis=0)
            tp = fit_calibration(cal, fp, ys[s], 0)(tp)
            out.append(LadderEstimate(tp, tp, tp, np.ones(tp.size, bool)))
        return out

    res = {"record": score(z["P_def"])}
    for cal in ("auto", "sigmoid"):
        for k in (1, 2):
            ests = estimates(k, cal)
            for ties in ("pairs", "table") if est.tie_pairs_ is not None else ("pairs",):
                est.ties = ties
                res[f"top{k}_{cal}_{ties}"] = score(est._combine(ests, Xt)["proba"])
    return res


def replay(folder: str) -> None:
    out: dict[str, dict] = {}
    for path in sorted(glob.glob(str(Path(folder) / "*.npz"))):
        name = Path(path).stem.rsplit("_", 1)[0]
        out.setdefault(name, {"per_seed": []})["per_seed"].append(replay_draw(path))
    for name, d in out.items():
        keys = d["per_seed"][0]
        d.update({k: float(np.mean([r[k] for r in d["per_seed"]])) for k in keys})
        print(name, len(d["per_seed"]), " ".join(f"{k}={d[k]:.4f}" for k in keys))
    path = ROOT / "benchmarks" / "results" / "multiclass_sixth_study.json"
    path.write_text(json.dumps(out, indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", required=True, help="folder of the cached draws")
    ap.add_argument("--data", nargs="*", default=[], help="name:n (n: None for real sets)")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--coarse", action="store_true", help="the coarse 4 x 4 cells only")
    ap.add_argument("--replay", action="store_true")
    args = ap.parse_args(argv)
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    for spec in args.data:
        name, n = spec.split(":")
        for seed in args.seeds:
            cache(args.cache, name, None if n == "None" else int(n), seed, args.coarse)
    if args.replay:
        replay(args.cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
