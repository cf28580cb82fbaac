"""The exact weight path as the default engine: end-to-end cost and accuracy (issue 10, item 6).

Two measurements, each method run in a fresh subprocess with BLAS on one thread and
``n_jobs=1`` everywhere; CPU seconds are the worker's ``time.process_time`` (the stable
measure on a shared machine), L1 is the mean |p_hat - p| against the true probabilities on
``--n-test`` new points of the same design.

``e2e``: the default tuned run end to end against a tuned Platt-scaled SVM, designs
``wang2008_ex1``, ``wuliu2011_ex1``, ``wuliu2011_ex6``, n in ``--sizes``:

* ``path`` / ``grid``: ``make_pipeline(StandardScaler(),
  WeightedSVMClassifier(engine=...))`` with every other parameter at its default (lambda x
  sigma tuned by EGKL: 5-fold CV up to n = 500, a 30% hold-out above; M = max(2 sqrt n,
  40) for the grid; tuning screened where folds train on 1000+ rows,
  :mod:`wsvmgui.ladder.screening`); ``grid`` is the engine before this change (rows
  measured before screening existed are the full search);
* ``path_full``: ``path`` with ``screen=None`` (every cell on the full folds);
* ``svc``: ``GridSearchCV(make_pipeline(StandardScaler(), SVC(probability=True)),
  {C: 0.1, 1, 10, 100} x {gamma: 0.1, 1, 10 over p}, cv=3)`` (log-loss; ``refit``), the
  target of the issue.

``accuracy``: L1 of path against grid with the default M and with M = 400, tuned as above,
on every binary design at the papers' size (n = 100) and One-vs-All on Zeng Ex. 3 and 4
(``zeng_ex3``, ``zeng_ex4``, n = 500; K = 5), ``--seeds`` seeds.

``collapse``: accuracy of the baseline schemes against One-vs-All and pairwise on iris and
a balanced 10-class digits subset (40 images per digit; both ship with scikit-learn), 70/30
stratified split (seed 0), standardised, every scheme at its defaults, path and grid
engines.  Before this change the baseline schemes collapsed there (B1: 0.67 on iris,
0.24 on digits).

A worker that exceeds ``--timeout`` seconds is stopped and reported as such.  Run from the
repository root; the script can simply be re-run after the path is sped up::

    python benchmarks/path_integration.py                      # everything (hours)
    python benchmarks/path_integration.py --parts e2e --sizes 500 2000
    python benchmarks/path_integration.py --parts accuracy --seeds 2
    python benchmarks/path_integration.py --parts collapse

Writes ``benchmarks/results/path_integration.{md,json}`` (a part not run keeps the rows
of the previous run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
E2E_DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex6")
BINARY_DESIGNS = ("wang2008_ex1", "wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6")
OVA_DESIGNS = ("zeng_ex3", "zeng_ex4")
E2E_METHODS = ("path", "path_full", "grid", "svc")
ACC_METHODS = ("path", "grid", "grid400")
COLLAPSE_DATA = ("iris", "digits")
COLLAPSE_SCHEMES = ("baseline1", "baseline2", "bp1", "bp2", "pairwise", "ova")
SVC_C = (0.1, 1.0, 10.0, 100.0)
SVC_GAMMA = (0.1, 1.0, 10.0)  # times 1/p (scikit-learn's "scale" on standardised inputs)


# ------------------------------------------------------------------------------ workers
def _real_data(name: str):
    """Standardised 70/30 stratified split of iris or the balanced 10-digit subset."""
    import numpy as np
    from sklearn.datasets import load_digits, load_iris
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    if name == "iris":
        X, y = load_iris(return_X_y=True)
    else:
        X, y = load_digits(return_X_y=True)
        rng = np.random.default_rng(0)
        keep = np.concatenate(
            [rng.choice(np.flatnonzero(y == k), 40, replace=False) for k in range(10)]
        )
        X, y = X[keep], y[keep]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), ytr, scaler.transform(Xte), yte


def _work_collapse(scheme: str, data: str, engine: str) -> dict:
    import numpy as np

    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier

    Xtr, ytr, Xte, yte = _real_data(data)
    est = MulticlassWeightedSVMClassifier(scheme=scheme, engine=engine)
    c0 = time.process_time()
    est.fit(Xtr, ytr)
    cpu = time.process_time() - c0
    return {
        "method": scheme,
        "design": data,
        "engine": engine,
        "cpu": cpu,
        "accuracy": float(np.mean(est.predict(Xte) == yte)),
        "baseline": None if est.baseline_ is None else int(est.baseline_),
    }


def _work(method: str, design: str, n: int, seed: int, n_test: int) -> dict:
    import warnings

    import numpy as np
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
    from wsvmgui.evaluation.designs import simulate

    train = simulate(design, n, seed=seed)
    test = simulate(design, n_test, seed=10_000 + seed)
    K = train.classes.size
    p = train.X.shape[1]
    if method == "svc":
        grid = {
            "svc__C": list(SVC_C),
            "svc__gamma": [g / p for g in SVC_GAMMA],
        }
        model = GridSearchCV(
            make_pipeline(StandardScaler(), SVC(probability=True, random_state=seed)),
            grid,
            cv=3,
            scoring="neg_log_loss",
        )
    else:
        engine = {"grid400": "grid", "path_full": "path"}.get(method, method)
        extra = {"n_weights": 400} if method == "grid400" else {}
        if method == "path_full":
            extra["screen"] = None
        if K == 2:
            est = WeightedSVMClassifier(engine=engine, random_state=seed, **extra)
        else:
            est = MulticlassWeightedSVMClassifier(
                scheme="ova", engine=engine, random_state=seed, **extra
            )
        model = make_pipeline(StandardScaler(), est)
    c0, w0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SVC(probability=True)'s deprecation
        model.fit(train.X, train.y)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    P = model.predict_proba(test.X)
    cols = [list(model.classes_).index(c) for c in test.classes]
    l1 = float(np.mean(np.abs(P[:, cols] - test.p).sum(axis=1)))
    if K == 2:
        l1 /= 2.0  # binary: the mean |p_hat - p| of the positive class
    out = {
        "method": method,
        "design": design,
        "n": n,
        "seed": seed,
        "cpu": cpu,
        "wall": wall,
        "l1": l1,
        "error": float(np.mean(model.predict(test.X) != test.y)),
    }
    if method == "svc":
        out["best"] = {k: float(v) for k, v in model.best_params_.items()}
    else:
        info = model[-1].fit_info_
        out["engines"] = {
            k: info.get(k)
            for k in ("final_engines", "tuning_engines", "path_fallbacks", "auto_grid")
        }
    return out


# ------------------------------------------------------------------------------- driver
def _run(args: list[str], timeout: float) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--worker", *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"status": f"stopped after {timeout:.0f} s"}
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return {"status": "failed: " + (lines[-1] if lines else "no message")}
    return {"status": "ok", **json.loads(proc.stdout.strip().splitlines()[-1])}


def _cases(part: str, opts) -> list[tuple[str, str, int, int]]:
    if part == "e2e":
        return [(m, d, n, 0) for n in opts.sizes for d in E2E_DESIGNS for m in opts.e2e_methods]
    if part == "collapse":  # n holds the engine (0 path, 1 grid)
        return [(m, d, e, 0) for d in COLLAPSE_DATA for m in COLLAPSE_SCHEMES for e in (0, 1)]
    designs = [(d, 100) for d in BINARY_DESIGNS] + [(d, 500) for d in OVA_DESIGNS]
    return [(m, d, n, s) for d, n in designs for s in range(opts.seeds) for m in ACC_METHODS]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--parts", nargs="+", default=["e2e", "accuracy", "collapse"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 5000])
    ap.add_argument("--e2e-methods", nargs="+", default=list(E2E_METHODS))
    ap.add_argument("--designs", nargs="+", help="only these designs / data sets")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-test", type=int, default=5000)
    ap.add_argument("--timeout", type=float, default=3600.0)
    opts = ap.parse_args(argv)
    if opts.worker:
        m, d, n, s, t = opts.worker
        if int(t) < 0:  # the collapse part
            print(json.dumps(_work_collapse(m, d, ("path", "grid")[int(n)])))
        else:
            print(json.dumps(_work(m, d, int(n), int(s), int(t))))
        return 0
    out_json = RESULTS / "path_integration.json"
    res = json.loads(out_json.read_text()) if out_json.exists() else {"rows": {}}
    command = "python benchmarks/path_integration.py " + " ".join(argv or sys.argv[1:])
    run = {
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs shared with other jobs",
        "load": [os.getloadavg(), os.getloadavg()],
        "python": platform.python_version(),
        "seconds": 0.0,
        "n_test": opts.n_test,
        "seeds": opts.seeds,
    }
    res.pop("meta", None)
    res["runs"] = [*res.get("runs", []), run]
    start = time.time()
    for part in opts.parts:
        cases = [c for c in _cases(part, opts) if not opts.designs or c[1] in opts.designs]
        # Rows of cases not run this time are kept (a part can be completed in pieces).
        todo = set(cases)
        rows = res["rows"].setdefault(part, [])
        rows[:] = [r for r in rows if (r["method"], r["design"], r["n"], r["seed"]) not in todo]
        for m, d, n, s in cases:
            row = {"method": m, "design": d, "n": n, "seed": s, "run": command}
            n_test = -1 if part == "collapse" else opts.n_test
            row.update(_run([m, d, str(n), str(s), str(n_test)], opts.timeout))
            rows.append(row)
            print(json.dumps(row), flush=True)
            run["load"][-1], run["seconds"] = os.getloadavg(), time.time() - start
            _save(out_json, res)  # after every row: a stopped run keeps what it measured
    _save(out_json, res)
    return 0


def _save(out_json: Path, res: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    out_json.write_text(json.dumps(res, indent=1))
    (RESULTS / "path_integration.md").write_text(_report(res))


# ------------------------------------------------------------------------------- report
def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _cell(rows: list[dict], key: str, fmt: str) -> str:
    ok = [r[key] for r in rows if r.get("status") == "ok"]
    if not ok:
        return rows[0].get("status", "-") if rows else "-"
    return format(_mean(ok), fmt)


def _runs_differ(rows: dict[str, list[dict]], a: str, b: str) -> str:
    """ " *" when methods ``a`` and ``b`` were measured in different runs (not side by side)."""
    ra = {r.get("run") for r in rows.get(a, [])}
    rb = {r.get("run") for r in rows.get(b, [])}
    return " *" if ra and rb and ra != rb else ""


def _ratio(cells: list[str], methods: list[str], a: str, b: str) -> str:
    try:
        return f"{float(cells[methods.index(a)]) / float(cells[methods.index(b)]):.1f}"
    except (ValueError, ZeroDivisionError):
        return "-"


def _report(res: dict) -> str:
    runs = res.get("runs", [])
    lines = [
        "# The exact weight path as the default engine: end-to-end cost and accuracy",
        "",
        "CPU = process time of a fresh worker per fit (BLAS on one thread, `n_jobs=1`); "
        f"L1 = mean |p_hat - p| on {runs[-1]['n_test'] if runs else ''} test points.  "
        "Generated by these runs (each row of the JSON names its run):",
        "",
    ]
    for m in runs:
        lines.append(
            f"* `{m['command']}` on {m['date']} ({m['machine']}; load average at start "
            f"and end {[round(x, 1) for x in m['load'][0]]}, "
            f"{[round(x, 1) for x in m['load'][-1]]}; total {m['seconds']:.0f} s), "
            f"Python {m['python']}."
        )
    lines.append("")
    e2e = res["rows"].get("e2e", [])
    if e2e:
        methods = [m for m in E2E_METHODS if any(r["method"] == m for r in e2e)]
        lines += [
            "## Default tuned run end to end vs tuned SVC(probability=True) grid search",
            "",
            "Seed 0.  path / grid: the default `WeightedSVMClassifier` (in a "
            "scaling pipeline) with that engine; svc: `GridSearchCV(make_pipeline("
            "StandardScaler(), SVC(probability=True)), C x gamma = 4 x 3, cv=3)`.",
            "",
            "| n | design | "
            + " | ".join(f"{m} CPU" for m in methods)
            + " | "
            + " | ".join(f"{m} L1" for m in methods)
            + " | path / svc CPU | path_full / svc CPU |",
            "|---|---" + "|---" * (2 * len(methods) + 2) + "|",
        ]
        for n in sorted({r["n"] for r in e2e}):
            for d in E2E_DESIGNS:
                rs = {m: [r for r in e2e if r["n"] == n and r["design"] == d and r["method"] == m]
                      for m in methods}  # fmt: skip
                if not any(rs.values()):
                    continue
                cpu = [_cell(rs[m], "cpu", ".1f") for m in methods]
                l1 = [_cell(rs[m], "l1", ".4f") for m in methods]
                ratio = _ratio(cpu, methods, "path", "svc") + _runs_differ(rs, "path", "svc")
                full = _ratio(cpu, methods, "path_full", "svc") + _runs_differ(
                    rs, "path_full", "svc"
                )
                lines.append(f"| {n} | {d} | " + " | ".join(cpu + l1) + f" | {ratio} | {full} |")
        falls = [
            r
            for r in e2e
            if r.get("status") == "ok" and (r.get("engines") or {}).get("path_fallbacks")
        ]
        lines += [
            "",
            "\\* the two were measured in different runs (other load), not side by side.",
            "",
            "Path fallbacks to the grid: "
            + (
                ", ".join(
                    f"{r['design']} n={r['n']} {r['method']}: {r['engines']['path_fallbacks']}"
                    for r in falls
                )
                or "none"
            )
            + ".",  # fmt: skip
            "",
        ]
    acc = res["rows"].get("accuracy", [])
    if acc:
        seeds = sorted({r["seed"] for r in acc})
        lines += [
            "## Accuracy: path vs grid (default M, M = 400), tuned as by default",
            "",
            f"Seeds {seeds}.  Binary designs at n = 100 (the papers' size; 5-fold CV "
            "tuning); Zeng Ex. 3 and 4 One-vs-All at n = 500 (30% hold-out).  L1 is the "
            "mean |p_hat - p| (binary) or the mean sum over classes (K = 5).",
            "",
            "| design | n | " + " | ".join(f"{m} L1" for m in ACC_METHODS)
            + " | " + " | ".join(f"{m} CPU" for m in ACC_METHODS) + " |",
            "|---|---" + "|---" * (2 * len(ACC_METHODS)) + "|",
        ]  # fmt: skip
        for d in BINARY_DESIGNS + OVA_DESIGNS:
            rs = {m: [r for r in acc if r["design"] == d and r["method"] == m] for m in ACC_METHODS}
            if not any(rs.values()):
                continue
            n = next(r["n"] for v in rs.values() for r in v)
            lines.append(
                f"| {d} | {n} | "
                + " | ".join(_cell(rs[m], "l1", ".4f") for m in ACC_METHODS)
                + " | "
                + " | ".join(_cell(rs[m], "cpu", ".1f") for m in ACC_METHODS)
                + " |"
            )
        lines.append("")
    col = res["rows"].get("collapse", [])
    if col:
        lines += [
            "## Baseline schemes where the baseline class is separable: iris, digits",
            "",
            "Test accuracy (70/30 stratified split, seed 0; digits: 40 images of each of "
            "the 10 digits), every scheme at its defaults; B1's baseline in brackets.  "
            "Before this change (grid, B1's baseline the first of the equally large "
            "classes, ties at the ratio cap 2M - 1 to the first class): B1 0.67 on iris "
            "and 0.24 on digits.",
            "",
            "| data | engine | " + " | ".join(COLLAPSE_SCHEMES) + " | CPU (s) |",
            "|---|---" + "|---" * (len(COLLAPSE_SCHEMES) + 1) + "|",
        ]
        for d in COLLAPSE_DATA:
            for e in ("path", "grid"):
                rs = [r for r in col if r["design"] == d and ("path", "grid")[r["n"]] == e]
                if rs:
                    lines.append(_collapse_row(d, e, rs))
        lines.append("")
    return "\n".join(lines) + "\n"


def _collapse_row(data: str, engine: str, rows: list[dict]) -> str:
    cells, cpu = [], 0.0
    for m in COLLAPSE_SCHEMES:
        r = next((x for x in rows if x["method"] == m), None)
        if r is None or r.get("status") != "ok":
            cells.append(r.get("status", "-") if r else "-")
            continue
        base = f" ({r['baseline']})" if m == "baseline1" else ""
        cells.append(f"{r['accuracy']:.3f}{base}")
        cpu += r["cpu"]
    return f"| {data} | {engine} | " + " | ".join(cells) + f" | {cpu:.0f} |"


if __name__ == "__main__":
    sys.exit(main())
