"""Every scheme at its defaults, side by side in one run: CPU seconds and peak memory.

Each row is a *case* (a data set and a way to fit it) run by several *methods*, each in a
fresh subprocess with BLAS on one thread; CPU is the worker's ``time.process_time`` of fit
+ predict (the stable measure on a shared machine), peak memory the worker's
``ru_maxrss`` (a fresh process each), L1 the mean |p_hat - p| against the true
probabilities where the design knows them.  Ratios are of methods measured in the same
run.  Cases are registered in :data:`CASES` by part, so that other schemes add their own
rows (``--parts``); this file holds the path and memory rows of issue 20:

* ``path``: the exact path against the grid engine per problem (``engine="path"`` vs
  ``engine="grid"``, every other parameter at its default): Zeng Ex. 4 One-vs-All
  (n = 500, 350 rows per tuning sub-problem), a binary simulation at n = 1000, breast
  cancer; and one path at wang2008_ex1 n = 1400, C = 100, sigma = sigma_M / 4 (where
  libsvm's start took millions of iterations) against the grid ladder at the same cell.
* ``memory``: scale.py's n = 6000 runs with the path engine (a fixed (lambda, sigma)
  ladder on one thread and a tuned one on two, M = 10), and a fixed cell (C = 1,
  sigma = sigma_M) at n = 10,000 and 20,000 on ``wuliu2011_ex1`` against
  ``SVC(probability=True)``, fit + predicting 2000 new points.
* ``agree`` (with ``--baseline DIR``, the code before the change, e.g. ``git archive``
  of main): the path's probabilities at new points from this code and from ``DIR`` at
  fixed cells on the designs: the same fit to tolerance.
* ``schemes``, ``schemes_noncrossing`` and ``schemes_binary`` (one table): every scheme
  at its defaults against the SVC search, the tuned
  ``CalibratedClassifierCV(SVC(), ensemble=False)`` (Platt sigmoids) over 7 C (0.1 ...
  100) x 7 gamma (g / p, g = 1/8 ... 8) scored by 3-fold log loss (``GridSearchCV``; 147
  searched fits of 6 SVCs each, then the refit): One-vs-All on the digits subsample
  (n = 700) and on ``wu2010_ex1`` at n = 800, with ``screen=None`` (its tuning before
  One-vs-All's shared screening) and, with ``--baseline DIR``, the code of ``DIR``;
  pairwise on the same data; the joint indirect scheme on iris; the non-crossing ladder
  at n = 500 (with its own search, so that ``--repeats`` compares each repeat with the
  search run beside it); the binary ladder (this code only: the ``before`` rows were of
  a screening threshold since reverted) at n = 400, 500 and on breast cancer, and at
  n = 2000 against a 12-cell search (``SVC(probability=True)``, C in {0.1, 1, 10, 100} x
  g in {1/2, 1, 2}).  Every method in a pipeline after ``StandardScaler``.

Writes ``benchmarks/results/scheme_speed.{md,json}`` (parts not run keep their rows)::

    python benchmarks/scheme_speed.py --parts path memory
    python benchmarks/scheme_speed.py --parts agree --baseline /tmp/main_src
    python benchmarks/scheme_speed.py --parts schemes --baseline /tmp/before_src
    python benchmarks/scheme_speed.py --parts schemes_noncrossing --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
N_TEST = 2000
sys.path.insert(0, str(ROOT / "benchmarks"))

from _worker import WorkerFailed, run_worker  # noqa: E402


# ------------------------------------------------------------------------------ workers
def _data(design: str, n: int, seed: int = 0):
    from wsvmgui.evaluation.designs import simulate

    if design in ("digits", "iris"):
        from sklearn import datasets
        from sklearn.model_selection import train_test_split

        X, y = getattr(datasets, f"load_{design}")(return_X_y=True)
        if design == "digits":  # accuracy_vs_peers.py's fixed 1000-row subsample
            X, _, y, _ = train_test_split(X, y, train_size=1000, stratify=y, random_state=0)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
        return Xtr, ytr, Xte, None, yte
    if design == "breast_cancer":
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import train_test_split

        X, y = load_breast_cancer(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
        return Xtr, ytr, Xte, None, yte
    tr, te = simulate(design, n, seed=seed), simulate(design, N_TEST, seed=10_000 + seed)
    return tr.X, tr.y, te.X, te.p, te.y


def _l1(P, p_true, classes) -> float:
    import numpy as np

    if p_true is None:
        return float("nan")
    if p_true.ndim == 1 or p_true.shape[1] == 1:
        return float(np.mean(np.abs(P[:, 1] - p_true.ravel())))
    return float(np.mean(np.abs(P - p_true).sum(axis=1)))


def _log_loss(P, y, classes) -> float:
    from sklearn.metrics import log_loss

    return float(log_loss(y, P, labels=classes))


def worker(spec: dict) -> dict:
    """One method on one case in this (fresh) process."""
    import resource
    import warnings

    Xtr, ytr, Xte, p_true, yte = _data(spec["design"], spec.get("n", 0), spec.get("seed", 0))
    kind = spec["kind"]
    out: dict = {}
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "one_path":
            out.update(_one_path(spec, Xtr, ytr))
        else:
            model = _model(spec, Xtr, ytr)
            model.fit(Xtr, ytr)
            P = model.predict_proba(Xte)
            out["l1"] = _l1(P, p_true, None)
            out["log_loss"] = _log_loss(P, yte, model.classes_)
            out["p"] = P[:200, -1].tolist()
            info = getattr(model[-1] if hasattr(model, "steps") else model, "fit_info_", {})
            out["engines"] = info.get("final_engines")
            out["kernel"] = info.get("kernel")
    out["cpu"] = time.process_time() - c0
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _model(spec: dict, Xtr, ytr):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    method, kind = spec["method"], spec["kind"]
    if kind in SCHEME_KINDS:
        return make_pipeline(StandardScaler(), _scheme_model(kind, method, Xtr.shape[1]))
    if method == "svc":
        from wsvmgui.solvers.kernels import median_between_class_distance

        sm = median_between_class_distance(Xtr, ytr)
        return SVC(C=1.0, gamma=1.0 / sm**2, probability=True, random_state=0)
    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier

    if kind == "fixed":
        from wsvmgui.solvers.kernels import median_between_class_distance

        n = len(ytr)
        sm = median_between_class_distance(Xtr, ytr)
        extra = {"n_weights": spec["M"]} if spec.get("M") else {}
        return WeightedSVMClassifier(
            lam=1 / (2 * n), sigma=sm, engine=method, n_jobs=spec.get("n_jobs", 1), **extra
        )
    if kind == "scale_tuned":
        from wsvmgui.solvers.kernels import median_between_class_distance

        n = len(ytr)
        sm = median_between_class_distance(Xtr, ytr)
        return WeightedSVMClassifier(
            lambdas=[1 / (2 * 0.7 * n), 1 / (2 * 0.7 * n * 10)],
            sigmas=[0.5 * sm, sm, 1.5 * sm],
            n_weights=10,
            n_jobs=2,
            engine=method,
        )
    if kind == "ova":
        est = MulticlassWeightedSVMClassifier(scheme="ova", engine=method, random_state=0)
    else:
        est = WeightedSVMClassifier(engine=method, random_state=0)
    return make_pipeline(StandardScaler(), est)


#: Kinds of the ``schemes`` part: a wsvmgui scheme at its defaults, or an SVC search.
SCHEME_KINDS = ("ova", "pairwise", "binary", "joint", "noncrossing", "svc49", "svc12")


def _scheme_model(kind: str, method: str, p: int):
    """The ``schemes`` part's model of ``kind`` (``method`` ``"full"``: screening off)."""
    if kind in ("svc49", "svc12"):
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.model_selection import GridSearchCV, StratifiedKFold
        from sklearn.svm import SVC

        cv = StratifiedKFold(3, shuffle=True, random_state=0)
        if kind == "svc49":
            grid = {
                "estimator__C": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0],
                "estimator__gamma": [g / p for g in (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)],
            }
            est = CalibratedClassifierCV(SVC(), ensemble=False)
        else:
            grid = {"C": [0.1, 1.0, 10.0, 100.0], "gamma": [g / p for g in (0.5, 1.0, 2.0)]}
            est = SVC(probability=True, random_state=0)
        return GridSearchCV(est, grid, scoring="neg_log_loss", cv=cv)
    screen = {"screen": None} if method == "full" else {}
    if kind in ("ova", "pairwise"):
        from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier

        return MulticlassWeightedSVMClassifier(scheme=kind, random_state=0, **screen)
    if kind == "joint":
        from wsvmgui.estimators.joint import JointWSVMClassifier

        return JointWSVMClassifier(random_state=0)
    if kind == "noncrossing":
        from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier

        return NonCrossingLadderClassifier(random_state=0)
    from wsvmgui.estimators.binary import WeightedSVMClassifier

    return WeightedSVMClassifier(random_state=0, **screen)


def _one_path(spec: dict, X, y) -> dict:
    """One path (or grid ladder) at a fixed cell; counts libsvm's starts."""
    import numpy as np

    import wsvmgui.ladder.path_start as start_mod
    from wsvmgui.ladder.grid import fit_ladder
    from wsvmgui.ladder.path import fit_path
    from wsvmgui.ladder.tuning import default_n_weights
    from wsvmgui.ladder.weights import weight_grid
    from wsvmgui.solvers.kernels import Kernel, median_between_class_distance

    X = (X - X.mean(axis=0)) / X.std(axis=0)
    yy = np.where(y > 0, 1.0, -1.0)
    kern = Kernel("rbf", sigma=spec["sigma_factor"] * median_between_class_distance(X, yy))
    n, C = yy.size, spec["C"]
    K = kern(X)
    calls = [0]
    real = start_mod._libsvm_start

    def counting(*args):
        calls[0] += 1
        return real(*args)

    start_mod._libsvm_start = counting
    if spec["method"] == "path":
        path = fit_path(K, yy, 1 / (2 * n * C))
        return {"libsvm_starts": calls[0], "breakpoints": path.n_breakpoints, "ridge": path.ridge}
    ladder = fit_ladder(K, yy, weight_grid(default_n_weights(n)), 1 / (2 * n * C))
    return {"weights": int(ladder.weights.size)}


def agree_worker(spec: dict) -> dict:
    """p_hat at new points from one path at a fixed cell (this code or a baseline's)."""
    import numpy as np

    from wsvmgui.ladder.path import fit_path
    from wsvmgui.solvers.kernels import Kernel, median_between_class_distance

    Xtr, ytr, Xte, _, _ = _data(spec["design"], spec["n"], spec.get("seed", 0))
    labels = np.unique(ytr)
    y = np.where(ytr == labels[-1], 1.0, -1.0)  # the last class against the rest
    kern = Kernel("rbf", sigma=spec["sigma_factor"] * median_between_class_distance(Xtr, y))
    path = fit_path(kern(Xtr), y, 1 / (2 * y.size * spec["C"]))
    return {"p": path.estimate(kern(Xte[:500], Xtr)).p.tolist(), "ridge": path.ridge}


# ------------------------------------------------------------------------------- driver
#: ``--baseline`` of this run (the ``schemes`` part's ``"before"`` method runs its code).
BASELINE: list[Path] = []


def _run(spec: dict, code: Path | None = None, fn: str = "worker") -> dict:
    if spec.get("method") == "before":
        if not BASELINE:
            return {**spec, "status": "skipped: no --baseline"}
        code = BASELINE[0]
    try:
        res = run_worker(__file__, [fn, json.dumps(spec)], code or ROOT)
    except WorkerFailed as exc:
        return {**spec, "status": "failed: " + (str(exc) or "no message")}
    out = {**spec, **res}
    print(json.dumps({k: v for k, v in out.items() if k != "p"}), flush=True)
    return out


#: Cases by part: (label, base spec, methods).  Other schemes add their own parts.
CASES: dict[str, list[tuple[str, dict, tuple[str, ...]]]] = {
    "path": [
        (
            "Zeng Ex. 4, One-vs-All, n = 500",
            {"design": "zeng_ex4", "n": 500, "kind": "ova"},
            ("path", "grid"),
        ),
        (
            "wuliu2011_ex1, binary, n = 1000",
            {"design": "wuliu2011_ex1", "n": 1000, "kind": "binary"},
            ("path", "grid"),
        ),
        ("breast cancer, binary", {"design": "breast_cancer", "kind": "binary"}, ("path", "grid")),
        (
            "wang2008_ex1 n = 1400, one cell C = 100, sigma_M / 4",
            {
                "design": "wang2008_ex1",
                "n": 1400,
                "kind": "one_path",
                "C": 100.0,
                "sigma_factor": 0.25,
            },
            ("path", "grid"),
        ),
    ],  # fmt: skip
    "memory": [
        (
            "n = 6000, fixed cell, M = 10 (scale.py)",
            {"design": "wuliu2011_ex1", "n": 6000, "kind": "fixed", "M": 10},
            ("path",),
        ),
        (
            "n = 6000, tuned 3 x 2 on 2 threads, M = 10 (scale.py)",
            {"design": "wuliu2011_ex1", "n": 6000, "kind": "scale_tuned"},
            ("path",),
        ),
        (
            "n = 10,000, fixed cell C = 1, sigma_M",
            {"design": "wuliu2011_ex1", "n": 10_000, "kind": "fixed"},
            ("path", "svc"),
        ),
        (
            "n = 20,000, fixed cell C = 1, sigma_M",
            {"design": "wuliu2011_ex1", "n": 20_000, "kind": "fixed"},
            ("path", "svc"),
        ),
    ],  # fmt: skip
    "schemes": [
        (
            "One-vs-All, digits subsample, n = 700 (K = 10)",
            {"design": "digits", "kind": "ova"},
            ("after", "full", "before"),
        ),
        ("  SVC search, digits", {"design": "digits", "kind": "svc49"}, ("svc",)),
        ("  pairwise, digits", {"design": "digits", "kind": "pairwise"}, ("after",)),
        (
            "One-vs-All, wu2010_ex1, n = 800 (K = 3)",
            {"design": "wu2010_ex1", "n": 800, "kind": "ova"},
            ("after", "full", "before"),
        ),
        (
            "  SVC search, wu2010_ex1 n = 800",
            {"design": "wu2010_ex1", "n": 800, "kind": "svc49"},
            ("svc",),
        ),
        (
            "  pairwise, wu2010_ex1 n = 800",
            {"design": "wu2010_ex1", "n": 800, "kind": "pairwise"},
            ("after",),
        ),
        ("joint indirect, iris (n = 105)", {"design": "iris", "kind": "joint"}, ("after",)),
        ("  One-vs-All, iris", {"design": "iris", "kind": "ova"}, ("after",)),
        ("  SVC search, iris", {"design": "iris", "kind": "svc49"}, ("svc",)),
    ],  # fmt: skip
    "schemes_noncrossing": [
        (
            "non-crossing, wuliu2011_ex1, n = 500",
            {"design": "wuliu2011_ex1", "n": 500, "kind": "noncrossing"},
            ("after",),
        ),
        ("  SVC search, n = 500", {"design": "wuliu2011_ex1", "n": 500, "kind": "svc49"}, ("svc",)),
    ],  # fmt: skip
    "schemes_binary": [
        (
            "binary, wuliu2011_ex1, n = 400",
            {"design": "wuliu2011_ex1", "n": 400, "kind": "binary"},
            ("after",),
        ),
        ("  SVC search, n = 400", {"design": "wuliu2011_ex1", "n": 400, "kind": "svc49"}, ("svc",)),
        (
            "binary, wuliu2011_ex1, n = 500",
            {"design": "wuliu2011_ex1", "n": 500, "kind": "binary"},
            ("after",),
        ),
        ("  SVC search, n = 500", {"design": "wuliu2011_ex1", "n": 500, "kind": "svc49"}, ("svc",)),
        (
            "binary, breast cancer (n = 398)",
            {"design": "breast_cancer", "kind": "binary"},
            ("after",),
        ),
        ("  SVC search, breast cancer", {"design": "breast_cancer", "kind": "svc49"}, ("svc",)),
        (
            "binary, wuliu2011_ex1, n = 2000",
            {"design": "wuliu2011_ex1", "n": 2000, "kind": "binary"},
            ("after",),
        ),
        (
            "  12-cell SVC(probability=True) search, n = 2000",
            {"design": "wuliu2011_ex1", "n": 2000, "kind": "svc12"},
            ("svc",),
        ),
    ],  # fmt: skip
}
AGREE = [
    ("wuliu2011_ex1", 500, 1.0, 1.0),
    ("wuliu2011_ex6", 500, 10.0, 1.0),
    ("wang2008_ex1", 500, 10.0, 1.0),
    ("wang2008_ex1", 700, 100.0, 0.25),
    ("zeng_ex4", 350, 100.0, 0.5),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--parts", nargs="+", default=["path", "memory"])
    ap.add_argument("--baseline", type=Path, help="code before the change (part agree)")
    ap.add_argument(
        "--repeats", type=int, default=1, help="run each method this many times (fresh processes)"
    )
    args = ap.parse_args(argv)
    if args.baseline is not None:
        BASELINE.append(args.baseline)
    if args.worker:
        fn = {"worker": worker, "agree": agree_worker}[args.worker[0]]
        print(json.dumps(fn(json.loads(args.worker[1]))))
        return 0
    out_json = RESULTS / "scheme_speed.json"
    results: dict = json.loads(out_json.read_text()) if out_json.exists() else {}
    t0 = time.time()
    for part in args.parts:
        if part == "agree":
            if args.baseline is None:
                ap.error("--parts agree needs --baseline")
            results["agree"] = _agree(args.baseline)
            continue
        rows = []
        for label, spec, methods in CASES[part]:
            runs = [
                _run({**spec, "method": m, **({"repeat": r} if args.repeats > 1 else {})})
                for r in range(args.repeats)
                for m in methods
            ]
            rows.append({"case": label, "runs": runs})
        results[part] = rows
    results["meta"] = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs shared",
        "load": os.getloadavg(),
        "seconds": time.time() - t0,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(results, indent=1))
    (RESULTS / "scheme_speed.md").write_text(_report(results))
    return 0


def _agree(baseline: Path) -> list[dict]:
    import numpy as np

    rows = []
    for design, n, C, fac in AGREE:
        spec = {"design": design, "n": n, "C": C, "sigma_factor": fac}
        new = _run(spec, None, "agree")
        old = _run(spec, baseline, "agree")
        row = {**spec, "ridge_new": new.get("ridge"), "ridge_old": old.get("ridge")}
        if "p" in new and "p" in old:
            d = np.abs(np.array(new["p"]) - np.array(old["p"]))
            row.update(max=float(d.max()), q99=float(np.quantile(d, 0.99)), mean=float(d.mean()))
        else:
            row["status"] = new.get("status") or old.get("status")
        rows.append(row)
    return rows


def _fmt(x, d: int = 1) -> str:
    return "-" if x is None or x != x else f"{x:.{d}f}"


def _sci(x) -> str:
    return "-" if x is None or x != x else f"{x:.1e}"


def _report(res: dict) -> str:
    meta = res.get("meta", {})
    lines = [
        "# Schemes at their defaults: CPU and memory, side by side in one run",
        "",
        f"Generated by `benchmarks/scheme_speed.py` on {meta.get('when')} "
        f"({meta.get('machine')}; load average {meta.get('load')}; BLAS on one thread). "
        "CPU is fit + predict of a fresh worker process (the numba cache load included "
        "for the path), peak memory its `ru_maxrss`.",
        "",
    ]
    if "path" in res:
        lines += ["## Path against the grid engine", "",
                  "| case | path CPU (s) | grid CPU (s) | path / grid | L1 path / grid | notes |",
                  "|---|---|---|---|---|---|"]  # fmt: skip
        for row in res["path"]:
            r = {run["method"]: run for run in row["runs"]}
            p, g = r.get("path", {}), r.get("grid", {})
            ratio = p.get("cpu", float("nan")) / g.get("cpu", float("nan"))
            note = ", ".join(
                f"{k} {p[k]}" for k in ("libsvm_starts", "breakpoints", "ridge", "status") if k in p
            )
            lines.append(
                f"| {row['case']} | {_fmt(p.get('cpu'))} | {_fmt(g.get('cpu'))} | "
                f"{_fmt(ratio, 2)} | {_fmt(p.get('l1'), 4)} / {_fmt(g.get('l1'), 4)} | {note} |"
            )
        lines.append("")
    if "memory" in res:
        lines += ["## Memory and CPU at large n (path engine)", "",
                  "| case | method | CPU (s) | peak RSS (MB) | L1 | kernel storage |",
                  "|---|---|---|---|---|---|"]  # fmt: skip
        for row in res["memory"]:
            for run in row["runs"]:
                lines.append(
                    f"| {row['case']} | {_method(run)} | {_fmt(run.get('cpu'))} | "
                    f"{_fmt(run.get('peak_mb'), 0)} | {_fmt(run.get('l1'), 4)} | "
                    f"{run.get('kernel') or run.get('status') or ''} |"
                )
        lines.append("")
    if "agree" in res:
        lines += ["## The path's probabilities before and after (500 new points)", "",
                  "| design | n | C | sigma / sigma_M | max abs diff | 99% | mean "
                  "| ridge before / after |",
                  "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in res["agree"]:
            lines.append(
                f"| {r['design']} | {r['n']} | {r['C']:g} | {r['sigma_factor']:g} | "
                f"{_sci(r.get('max'))} | {_sci(r.get('q99'))} | {_sci(r.get('mean'))} | "
                f"{r.get('ridge_old')} / {r.get('ridge_new')} |"
            )
        lines.append("")
    parts = ("schemes", "schemes_noncrossing", "schemes_binary")
    if any(part in res for part in parts):
        lines += _schemes_table([row for part in parts for row in res.get(part, [])])
    if res.get("notes"):
        lines += [res["notes"], ""]
    return "\n".join(lines)


#: Methods of the ``schemes`` part: what each row runs.
_METHOD_NOTE = {
    "after": "this code, defaults",
    "full": "this code, screen=None",
    "before": "the --baseline code, defaults",
    "svc": "the SVC search",
}


def _method(run: dict, notes: dict | None = None) -> str:
    """A run's method (its note), with its repeat's number when there are repeats."""
    name = (notes or {}).get(run["method"], run["method"])
    return name + (f" (run {run['repeat'] + 1})" if "repeat" in run else "")


def _schemes_table(rows: list[dict]) -> list[str]:
    """Every scheme at its defaults against the SVC search on the same data."""
    out = ["## Every scheme at its defaults vs the SVC search", "",
           "CPU of fit + predict (2000 new points for designs, the 30% split otherwise); "
           "the ratio is to the SVC search on the same data (49 cells; 12 at n = 2000), "
           "measured in the same run.", "",
           "| case | method | CPU (s) | / SVC search | L1 | log loss | status |",
           "|---|---|---|---|---|---|---|"]  # fmt: skip
    svc = {  # the search of the same repeat (same data, same moment)
        (run.get("design"), run.get("n"), run.get("repeat")): run
        for r in rows
        for run in r["runs"]
        if run["method"] == "svc"
    }
    for row in rows:
        for run in row["runs"]:
            ref = svc.get((run.get("design"), run.get("n"), run.get("repeat")), {})
            ratio = run.get("cpu", float("nan")) / ref.get("cpu", float("nan"))
            lines_ratio = "-" if run["method"] == "svc" else _fmt(ratio, 2)
            out.append(
                f"| {row['case']} | {_method(run, _METHOD_NOTE)} | "
                f"{_fmt(run.get('cpu'))} | {lines_ratio} | {_fmt(run.get('l1'), 4)} | "
                f"{_fmt(run.get('log_loss'), 4)} | {run.get('status', '')} |"
            )
    return [*out, ""]


if __name__ == "__main__":
    sys.exit(main())
