"""Cache the draws the per-point interval study replays (tenth sitting, acc-intervals).

For each binary design x size x seed: fit the default ``WeightedSVMClassifier`` (one
thread) on a draw and store, in ``<cache>/<design>_<n>_<seed>.npz``:

* the cross-fitted pairs the calibration map and the interval are fitted on (``p_cf``,
  ``y_cf``), each fold fit's raw estimate at every pair's row (``raw``, (F, m)) and the
  fold each pair came from (``fold``);
* at ``--n-test`` new points of the design (seed 10,000 + seed, as
  ``interval_coverage.py``): the full fit's raw estimate ``te_raw``, the returned
  probability ``te_est`` (``predict_proba[:, 1]``), today's interval ``te_lo``/``te_hi``,
  each fold fit's raw estimate ``te_fold_raw`` (F, n_test; for diagnostics only) and the
  truth ``te_p`` (for scoring only);
* the training rows of the pairs (``rows``, indices into the draw);
* the chosen map's name (``map``); the fitted map itself in ``<...>.map.pkl``.

Replaying :class:`~wsvmgui.ladder.recalibration.LocalInterval` on the cache reproduces
``predict_interval`` (checked by ``interval_study.py``)::

    python benchmarks/interval_cache.py --sizes paper 500 2000 --seeds 0 1 2
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

CACHE = Path("/tmp/acc-intervals")


def one(design: str, n: int, seed: int, n_test: int, out: Path) -> None:
    from wsvmgui.estimators import binary
    from wsvmgui.evaluation.designs import simulate
    from wsvmgui.ladder import recalibration

    tr = simulate(design, n, seed)
    te = simulate(design, n_test, 10_000 + seed)
    fits: list = []
    sizes: list[int] = []
    rows: list[np.ndarray] = []
    got: dict = {}
    orig_cf, orig_ff = binary.cross_fitted, recalibration.fold_fits

    def ff(*a, **kw):
        for fit, te_rows, y_te in orig_ff(*a, **kw):
            sizes.append(te_rows.size)
            rows.append(te_rows)
            yield fit, te_rows, y_te

    def cf(*a, **kw):
        res = orig_cf(*a, **kw, fits_out=fits)
        got["p"], got["y"], got["raw"] = res
        return res

    binary.cross_fitted, recalibration.fold_fits = cf, ff
    try:
        t0 = time.process_time()
        est = binary.WeightedSVMClassifier(calibration="auto", n_jobs=1).fit(tr.X, tr.y)
        cpu = time.process_time() - t0
    finally:
        binary.cross_fitted, recalibration.fold_fits = orig_cf, orig_ff
    iv = est.interval_
    te_raw = est._raw_estimate(te.X).p
    te_est = est.predict_proba(te.X)[:, 1]
    lo, hi = est.predict_interval(te.X, 0.9)
    te_fold = np.array(
        [f.ladder.estimate(f.kernel(te.X, tr.X[f.support]), est.rule).p for f in fits]
    )
    k = list(te.classes).index(est.classes_[1])
    np.savez_compressed(
        out / f"{design}_{n}_{seed}.npz",
        iv_p=iv.p, iv_y=iv.y, iv_v=iv.v, iv_k=iv.k,
        p_cf=got["p"], y_cf=got["y"], raw=got["raw"], fold=np.repeat(np.arange(len(sizes)), sizes),
        rows=np.concatenate(rows),
        te_raw=te_raw, te_est=te_est, te_lo=lo, te_hi=hi, te_fold_raw=te_fold,
        te_p=te.p[:, k], cpu=cpu,
    )  # fmt: skip
    with open(out / f"{design}_{n}_{seed}.map.pkl", "wb") as fh:
        pickle.dump({"map": est.calibration_, "name": est.calibration_.name}, fh)
    print(
        f"{time.strftime('%H:%M:%S')} {design} n={n} seed={seed} map={est.calibration_.name} "
        f"F={len(fits)} m={got['p'].size} cpu={cpu:.1f}",
        flush=True,
    )


def main(argv=None) -> int:
    from wsvmgui.evaluation.designs import DESIGNS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    binary = [d for d, v in DESIGNS.items() if v.n_classes == 2]
    ap.add_argument("--designs", nargs="*", default=binary)
    ap.add_argument("--sizes", nargs="*", default=["paper", "500", "2000"])
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    ap.add_argument("--n-test", type=int, default=5000)
    ap.add_argument("--cache", default=str(CACHE))
    args = ap.parse_args(argv)
    out = Path(args.cache)
    out.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for size in args.sizes:
            for d in args.designs:
                n = DESIGNS[d].default_n if size == "paper" else int(size)
                if (out / f"{d}_{n}_{seed}.npz").exists():
                    continue
                one(d, n, seed, args.n_test, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
