"""Speed of the non-crossing ladder at its defaults (issue 20, item 1).

Writes ``benchmarks/results/noncrossing_speed.{md,json}``.  For each data set and seed, in
fresh worker processes side by side (BLAS on one thread, ``n_jobs=1``), CPU seconds of
fit + predict of:

* ``nc``: ``NonCrossingLadderClassifier()`` of this checkout (ladder from the exact path,
  crossings repaired by the active-set method);
* ``nc_before`` (``--before-python``): the same class in another checkout, e.g. main's
  ``.venv/bin/python`` (one libsvm fit per weight and a Clarabel QP per crossing weight),
  capped at ``--before-cap`` CPU seconds;
* ``binary``: ``WeightedSVMClassifier()`` (the binary ladder's default);
* ``svc_search``: ``GridSearchCV(CalibratedClassifierCV(SVC(), method="sigmoid",
  ensemble=False), C in {0.1, 0.3, 1, 3, 10, 30, 100} x gamma = g / p, g in {1/8, ...,
  8}, cv=3, scoring="neg_log_loss")`` (the SVM-based peer of the accuracy benchmark).

Data: a 5-feature binary simulation (x ~ N(0, I_5), P(Y = 1 | x) = logistic(x1 + x2 -
0.5 x3^2 + 0.5 x4 x5 + 0.5)) with n = 500, 1000, 2000 training points and 1000 test
points; breast cancer (stratified 70/30 split, standardised on the training part).
Every worker first fits a tiny problem so that imports and compiled-kernel loading are
not timed; the timed part is one fit and ``predict_proba`` on the test rows.

Usage: ``python benchmarks/noncrossing_speed.py [--seeds 1] [--sizes 500 1000 2000]
[--before-python /work/main/.venv/bin/python] [--quick] [--name STEM]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results"
THREADS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}
METHODS = ("nc", "nc_before", "binary", "svc_search")
C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
G_GRID = (1 / 8, 1 / 4, 1 / 2, 1.0, 2.0, 4.0, 8.0)


# ---------------------------------------------------------------------------- worker side
def load(data: str, seed: int):
    """Training and test rows ``(X, y, X_test, y_test)`` of one data set."""
    import numpy as np

    if data.startswith("sim5-"):
        n = int(data.split("-")[1])
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((n + 1000, 5))
        eta = X[:, 0] + X[:, 1] - 0.5 * X[:, 2] ** 2 + 0.5 * X[:, 3] * X[:, 4] + 0.5
        y = (rng.uniform(size=eta.size) < 1 / (1 + np.exp(-eta))).astype(int)
        return X[:n], y[:n], X[n:], y[n:]
    if data == "breast_cancer":
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import train_test_split

        X, y = load_breast_cancer(return_X_y=True)
        X, Xt, y, yt = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
        mu, sd = X.mean(axis=0), X.std(axis=0)
        sd[sd == 0] = 1.0
        return (X - mu) / sd, y, (Xt - mu) / sd, yt
    raise SystemExit(f"unknown data {data!r}")


def make(method: str):
    if method in ("nc", "nc_before"):
        from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier

        return lambda p: NonCrossingLadderClassifier(n_jobs=1)
    if method == "binary":
        from wsvmgui.estimators.binary import WeightedSVMClassifier

        return lambda p: WeightedSVMClassifier(n_jobs=1)
    if method == "svc_search":
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.model_selection import GridSearchCV, StratifiedKFold
        from sklearn.svm import SVC

        def search(p: int):
            grid = {"estimator__C": list(C_GRID), "estimator__gamma": [g / p for g in G_GRID]}
            base = CalibratedClassifierCV(SVC(), method="sigmoid", ensemble=False)
            cv = StratifiedKFold(3, shuffle=True, random_state=0)
            return GridSearchCV(base, grid, scoring="neg_log_loss", cv=cv, n_jobs=1)

        return search
    raise SystemExit(f"unknown method {method!r}")


def worker(spec: dict) -> dict:
    """Fit and predict once (after a warm-up); CPU seconds and a few facts."""
    import numpy as np

    X, y, Xt, yt = load(spec["data"], spec["seed"])
    build = make(spec["method"])
    Xw, yw, _, _ = load("sim5-60", 99)
    build(Xw.shape[1]).fit(Xw, yw).predict_proba(Xw)  # imports, compiled kernels
    start = time.process_time()
    est = build(X.shape[1]).fit(X, y)
    P = est.predict_proba(Xt)
    cpu = time.process_time() - start
    p = np.clip(P[:, 1], 1e-12, 1 - 1e-12)
    out = {
        "cpu": cpu,
        "log_loss": float(-np.mean(np.where(yt == 1, np.log(p), np.log(1 - p)))),
        "accuracy": float(np.mean((P[:, 1] > 0.5) == (yt == 1))),
    }
    diag = getattr(est, "diagnostics_", None)
    if diag is not None:
        out.update(
            {k: diag.get(k) for k in ("engine", "n_qp", "n_active_set", "n_shortcut", "n_events")}
        )
    return out


# ---------------------------------------------------------------------------- driver side
def run(python: str, spec: dict, cap: float | None) -> dict:
    """One worker process; its result, or the CPU it used when capped or failed.

    ``cap`` limits the worker's CPU seconds (``RLIMIT_CPU``; the worker is then killed).
    """
    import resource

    def limit() -> None:
        if cap is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cap), int(cap) + 5))

    env = {**os.environ, **THREADS}
    cmd = [python, __file__, "--worker", json.dumps(spec)]
    before = os.times()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=limit)
    after = os.times()
    child = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    if done.returncode != 0:
        if cap is not None and child >= cap:
            return {"cpu": None, "capped": cap, "process_cpu": child}
        return {"cpu": None, "error": done.stderr.strip().splitlines()[-1:], "process_cpu": child}
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_cpu": child}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000])
    ap.add_argument("--no-breast-cancer", action="store_true")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--before-python", help="python of a checkout to time as nc_before")
    ap.add_argument("--before-cap", type=float, default=900.0, help="CPU seconds")
    ap.add_argument("--quick", action="store_true", help="n = 500 and breast cancer")
    ap.add_argument("--out-dir", type=Path, default=OUT)
    ap.add_argument("--name", default="noncrossing_speed", help="results file stem")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    if args.quick:
        args.sizes = [500]
    data = [f"sim5-{n}" for n in args.sizes] + ([] if args.no_breast_cancer else ["breast_cancer"])
    methods = [m for m in args.methods if m != "nc_before" or args.before_python]
    rows = []
    start = time.time()
    for d in data:
        for seed in range(args.seeds):
            for m in methods:
                python = args.before_python if m == "nc_before" else sys.executable
                cap = args.before_cap if m == "nc_before" else None
                res = run(python, {"data": d, "seed": seed, "method": m}, cap)
                rows.append({"data": d, "seed": seed, "method": m, **res})
                print(d, seed, m, {k: v for k, v in res.items() if k != "error"}, flush=True)
    meta = {"seeds": args.seeds, "data": data, "methods": methods, "wall": time.time() - start}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{args.name}.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=1)
    )
    (args.out_dir / f"{args.name}.md").write_text(report(rows, data, methods, meta))


def report(rows: list[dict], data: list[str], methods: list[str], meta: dict) -> str:
    import numpy as np

    def cpu(d: str, m: str) -> float:
        vals = [r["cpu"] for r in rows if r["data"] == d and r["method"] == m]
        return float(np.mean(vals)) if vals and all(v is not None for v in vals) else np.nan

    head = "| data | " + " | ".join(f"{m} CPU s" for m in methods)
    head += " | nc / binary | nc / svc_search |"
    if "nc_before" in methods:
        head += " nc_before / nc |"
    lines = [
        "# Non-crossing ladder: CPU of fit + predict at the defaults",
        "",
        f"Mean over {meta['seeds']} seed(s); each cell a fresh worker process, one BLAS "
        "thread, warm-up fit untimed.  Targets (issue 20): nc <= 1.5 x binary and <= 1.5 x "
        f"svc_search.  Wall time {meta['wall']:.0f} s on a shared 2-core machine.",
        "",
        head,
        "| --- " * (head.count("|") - 1) + "|",
    ]
    for d in data:
        vals = {m: cpu(d, m) for m in methods}
        cells = [f"{vals[m]:.1f}" if np.isfinite(vals[m]) else "capped" for m in methods]

        def ratio(a: str, b: str, vals: dict = vals) -> str:
            ok = a in vals and b in vals and vals[b] > 0
            return f"{vals[a] / vals[b]:.2f}" if ok else "-"

        line = f"| {d} | " + " | ".join(cells) + f" | {ratio('nc', 'binary')} | "
        line += f"{ratio('nc', 'svc_search')} |"
        if "nc_before" in methods:
            capped = [r for r in rows if r["data"] == d and r["method"] == "nc_before"]
            line += (
                f" {ratio('nc_before', 'nc')} |"
                if np.isfinite(vals["nc_before"])
                else f" > {capped[0].get('capped', 0) / max(vals['nc'], 1e-9):.0f} (capped) |"
            )
        lines.append(line)
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
