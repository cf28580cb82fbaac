"""CPU and peak memory of the binary estimator's default candidates, side by side (issue 23).

Each (case, variant) runs in a fresh subprocess with BLAS on one thread: CPU is the
worker's ``time.process_time`` of fit + predict (2000 new points; the numba cache load
included, as in ``scheme_speed.py``), peak memory its ``ru_maxrss``.  Variants are
parameters of ``WeightedSVMClassifier`` set explicitly, so that one code base measures
every candidate and the ratios are of the same run:

* ``today``: ``calibration="none"``, ``tuning_extend=0`` (the default before issue 23);
* ``auto``: ``calibration="auto"``, ``tuning_extend=0``;
* ``auto_ext``: ``calibration="auto"``, ``tuning_extend=2``.

Cases: breast cancer (70/30 split, seed 0), ``wang2008_ex1`` and ``wuliu2011_ex1`` at
n = 400 and 2000 (the estimator at its defaults otherwise, after ``StandardScaler``), and
``scheme_speed.py``'s n = 6000 tuned memory row (``wuliu2011_ex1``, 3 sigma x 2 lambda,
M = 10, two threads; its target: peak under 812 MB).  Writes
``benchmarks/results/binary_default_speed.{md,json}``::

    python benchmarks/binary_default_speed.py
    python benchmarks/binary_default_speed.py --cases bc wang400 --variants today auto
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
sys.path.insert(0, str(ROOT / "benchmarks"))

VARIANTS = {
    "today": {"calibration": "none", "tuning_extend": 0},
    "auto": {"calibration": "auto", "tuning_extend": 0},
    "auto_ext": {"calibration": "auto", "tuning_extend": 2},
}
#: name -> (label, scheme_speed data spec, model kind)
CASES = {
    "bc": ("breast cancer (n = 398)", {"design": "breast_cancer"}, "binary"),
    "wang400": ("wang2008_ex1, n = 400", {"design": "wang2008_ex1", "n": 400}, "binary"),
    "wuliu400": ("wuliu2011_ex1, n = 400", {"design": "wuliu2011_ex1", "n": 400}, "binary"),
    "wang2000": ("wang2008_ex1, n = 2000", {"design": "wang2008_ex1", "n": 2000}, "binary"),
    "wuliu2000": ("wuliu2011_ex1, n = 2000", {"design": "wuliu2011_ex1", "n": 2000}, "binary"),
    "tuned6000": (
        "n = 6000, tuned 3 x 2 on 2 threads, M = 10 (scale.py)",
        {"design": "wuliu2011_ex1", "n": 6000},
        "scale_tuned",
    ),
}


def worker(case: str, variant: str) -> dict:
    """Fit + predict one case with one variant in this (fresh) process."""
    import resource
    import warnings

    from scheme_speed import _data, _l1, _log_loss
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.solvers.kernels import median_between_class_distance

    _, spec, kind = CASES[case]
    Xtr, ytr, Xte, p_true, yte = _data(spec["design"], spec.get("n", 0), 0)
    params = VARIANTS[variant]
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "scale_tuned":  # scheme_speed.py's row, as built there
            n = len(ytr)
            sm = median_between_class_distance(Xtr, ytr)
            est = WeightedSVMClassifier(
                lambdas=[1 / (2 * 0.7 * n), 1 / (2 * 0.7 * n * 10)],
                sigmas=[0.5 * sm, sm, 1.5 * sm],
                n_weights=10,
                n_jobs=2,
                **params,
            )
            model = est
        else:
            est = WeightedSVMClassifier(random_state=0, **params)
            model = make_pipeline(StandardScaler(), est)
        model.fit(Xtr, ytr)
        P = model.predict_proba(Xte)
    cpu = time.process_time() - c0
    info = est.fit_info_
    return {
        "case": case,
        "variant": variant,
        "cpu": cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "l1": None if p_true is None else _l1(P, p_true, None),
        "log_loss": _log_loss(P, yte, model.classes_),
        "C": float(est.C_),
        "sigma": float(est.sigma_),
        "calibration": info.get("calibration"),
        "tuning_edge": info.get("tuning_edge"),
        "tuning_extended": info.get("tuning_extended"),
        "n_fits": info.get("n_fits"),
    }


def _run(case: str, variant: str) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", case, variant],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return {"case": case, "variant": variant, "status": lines[-1] if lines else "failed"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(out), flush=True)
    return out


def _report(rows: list[dict], machine: str) -> str:
    by = {(r["case"], r["variant"]): r for r in rows if "cpu" in r}
    lines = [
        "# The binary default's candidates: CPU and peak memory (issue 23)",
        "",
        "Generated by `benchmarks/binary_default_speed.py` (its docstring states the cases",
        f"and variants). {machine}. CPU s of fit + predict in a fresh process (one BLAS",
        "thread); ratio = the variant's CPU over `today`'s in the same run; peak = `ru_maxrss`.",
        "",
        "| case | variant | CPU s | ratio | peak MB | L1 | log loss | C | sigma | map | edge "
        "| extended | units |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case, (label, _, _) in CASES.items():
        base = by.get((case, "today"))
        for variant in VARIANTS:
            r = by.get((case, variant))
            if r is None:
                continue
            ratio = f"{r['cpu'] / base['cpu']:.2f}" if base else ""
            l1 = "" if r["l1"] is None else f"{r['l1']:.4f}"
            ext = json.dumps(r["tuning_extended"] or {}).replace("|", "/")
            lines.append(
                f"| {label} | {variant} | {r['cpu']:.1f} | {ratio} | {r['peak_mb']:.0f} | {l1} "
                f"| {r['log_loss']:.4f} | {r['C']:.3g} | {r['sigma']:.3g} | "
                f"{r['calibration'] or ''} | {json.dumps(r['tuning_edge'] or {})} | {ext} | "
                f"{r['n_fits']} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    path = RESULTS / "binary_default_speed.json"
    state = json.loads(path.read_text()) if path.exists() else {"rows": []}
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}"
    for case in args.cases:
        for variant in args.variants:
            row = _run(case, variant)
            state["rows"] = [
                r for r in state["rows"] if (r["case"], r["variant"]) != (case, variant)
            ] + [row]
            state["machine"] = machine
            path.write_text(json.dumps(state, indent=1))
            (RESULTS / "binary_default_speed.md").write_text(_report(state["rows"], machine))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
