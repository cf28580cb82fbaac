"""The app's cost estimate on small and medium data: its views phase, before and after.

The desktop app estimates a run's time before it starts (:func:`wsvmgui.app.cost.estimate_cost`):
each fit's stages priced by probes on the data, then the *views* (the report on every
row, the plane grid's decision values, contours and surface, the training hull's slice).
Up to main 30bebae the views were priced by two constants, 0.3 s plus 0.003 s per
boundary drawn (times how busy the machine is): on small data sets 4-10x what the views
take, and the whole estimate 3-4x the run.  Now (:func:`wsvmgui.app.cost.view_seconds`)
they are priced from their work: a fixed part, each boundary's contours, the fitted
decision functions evaluated at every row and grid point against their training rows
(constants fitted by ``--fit``), and, with more than two features, the hull's slice
priced by a probe that solves two of its linear programs on the data.

For each case (a built-in data set, its size, a preset, the app's default scheme for its
classes or the one after ``@``; ``n_jobs=1``), in a fresh single-threaded process: a
first estimate and run (loading the modules and compiled kernels), then the app's
estimate and the run as the Run button runs it
(:func:`wsvmgui.app.analysis.run_analysis`), wall and process CPU seconds, the views
phase timed again up to ``--repeats`` times on the same fits (median; its hull part
apart).  ``--before-code DIR`` runs every case with the code of another checkout too
(e.g. ``/work/main``), alternated with this tree's, one after the other: the *before*
columns; without it, *before* is this tree's estimate with the views priced by the old
constants.  ``--fit`` adds the least-squares constants of the views' fixed, per-boundary
and per-evaluation parts (the hull's measured time taken out) over this tree's rows.

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/view_cost.py --before-code /work/main --fit

Writes benchmarks/results/view_cost.md and .json (``--name`` another name); ``--report-only``
rewrites the .md.  ``--cases map`` runs :data:`MAP_CASES` (the eleventh sitting's eng-polish9:
the fits' price with the ladder probed bare and the calibration map a stage of its own)::

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/view_cost.py --cases map \
        --before-code /tmp/eng-polish9/before --name map_cost
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
NAME = "view_cost"
#: ``data:n:preset[@scheme]``: the real sets, a binary and a K = 3 design at 200 and 2000,
#: their default schemes; then the other schemes on the small sets, and n = 1000.
CASES = (
    "sklearn:iris:-:quick",
    "sklearn:wine:-:quick",
    "sklearn:breast_cancer:-:quick",
    "demo:-:quick",
    "design:wuliu2011_ex1:200:quick",
    "design:wuliu2011_ex1:2000:quick",
    "design:wu2010_ex1:200:quick",
    "design:wu2010_ex1:2000:quick",
    "design:zeng_ex1:300:quick",
    "sklearn:iris:-:standard",
    "sklearn:wine:-:standard",
    "sklearn:breast_cancer:-:standard",
    "design:wuliu2011_ex1:200:standard",
    "design:wu2010_ex1:200:standard",
    # the other schemes, and n = 1000
    "sklearn:iris:-:quick@ova",
    "sklearn:iris:-:quick@bp1",
    "sklearn:iris:-:quick@joint-indirect",
    "sklearn:iris:-:quick@probing",
    "sklearn:wine:-:quick@baseline1",
    "demo:-:quick@noncrossing",
    "demo:-:quick@preconditioned",
    "demo:-:quick@joint-direct",
    "design:wuliu2011_ex1:1000:quick",
    "design:wu2010_ex1:1000:quick",
)
#: The binary and multiclass default schemes on the real sets and a design of each at n =
#: 200 and 2000, quick and standard presets (``--cases map``).
MAP_CASES = tuple(
    f"{data}:{preset}"
    for preset in ("quick", "standard")
    for data in (
        "sklearn:iris:-",
        "sklearn:wine:-",
        "sklearn:breast_cancer:-",
        "design:wuliu2011_ex1:200",
        "design:wuliu2011_ex1:2000",
        "design:wu2010_ex1:200",
        "design:wu2010_ex1:2000",
    )
)
#: The views' price up to main 30bebae: seconds, and seconds per boundary drawn.
OLD_VIEW_SECONDS, OLD_PER_BOUNDARY = 0.3, 0.003


def _parse(case: str) -> tuple[str, int | None, str, str | None]:
    """``data:n:preset`` (n ``-``: the table's rows), optionally ``@scheme`` (default:
    the app's for the data's classes)."""
    case, _, scheme = case.partition("@")
    data, n, preset = case.rsplit(":", 2)
    return data, (None if n == "-" else int(n)), preset, scheme or None


def _old_views(work, busy: float) -> float:
    """The views' wall seconds as priced up to main 30bebae."""
    return (OLD_VIEW_SECONDS + OLD_PER_BOUNDARY * work.boundaries) * busy


def measure(case: str, repeats: int) -> dict:
    """Estimate, run and time the views of one case (see the module docstring)."""
    from wsvmgui.app import analysis, boundaries
    from wsvmgui.app import cost as app_cost
    from wsvmgui.app.datasets import load_builtin, split_dataset
    from wsvmgui.app.presets import default_scheme, preset_settings

    data, n, preset, scheme = _parse(case)
    ds = load_builtin(data, n=n) if n else load_builtin(data)
    split = split_dataset(ds, 0.0, 0.3, 0, standardise=True)
    scheme = scheme or default_scheme(ds.n_classes)
    settings = preset_settings(preset, scheme, split.train.X, split.train.y)
    request = analysis.RunRequest(replace(settings, n_jobs=1), split)
    # the session's first estimate and run load the modules and compiled kernels
    analysis.run_analysis(replace(request, cost=app_cost.estimate_cost(request)))
    est = app_cost.estimate_cost(request)
    views_est = next(p.seconds for p in est.phases if p.name == "views")
    # code before main 30bebae's successor has no view_work: its views were the constants
    work = app_cost.view_work(request) if hasattr(app_cost, "view_work") else None

    timed: list[dict] = []
    hull: list[float] = []
    original_result, original_hull = analysis._result, boundaries.slice_hull

    def result(*args, **kwargs):
        t, c = time.perf_counter(), time.process_time()
        out = original_result(*args, **kwargs)
        timed.append({"wall": time.perf_counter() - t, "cpu": time.process_time() - c})
        calls.append((args, kwargs))
        return out

    def slice_hull(*args, **kwargs):
        c = time.process_time()
        out = original_hull(*args, **kwargs)
        hull.append(time.process_time() - c)
        return out

    # the calibration maps' CPU in the run (the binary estimator's and the pairs' map fits)
    from wsvmgui.estimators import binary, multiclass

    maps: list[float] = []
    wrapped = [
        (module, name, getattr(module, name))
        for module, names in (
            (binary, ("fit_calibration", "fit_map")),
            (multiclass, ("fit_calibration", "choose_map")),
        )
        for name in names
        if hasattr(module, name)
    ]

    def timed_map(real):
        def fit(*args, **kwargs):
            c = time.process_time()
            out = real(*args, **kwargs)
            maps.append(time.process_time() - c)
            return out

        return fit

    calls: list = []
    analysis._result, boundaries.slice_hull = result, slice_hull
    for module, name, real in wrapped:
        setattr(module, name, timed_map(real))
    try:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        analysis.run_analysis(replace(request, cost=est))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        for _ in range(repeats - 1):
            result(*calls[0][0], **calls[0][1])
    finally:
        analysis._result, boundaries.slice_hull = original_result, original_hull
        for module, name, real in wrapped:
            setattr(module, name, real)
    fits_est = est.seconds - views_est
    return {
        "case": case,
        "data": data,
        "n": int(ds.X.shape[0]),
        "p": int(ds.X.shape[1]),
        "K": int(ds.n_classes),
        "scheme": scheme,
        "preset": preset,
        "fits": est.fits,
        "busy": est.busy,
        "estimate": est.seconds,
        "fits_estimate": fits_est,
        "estimate_before": None if work is None else fits_est + _old_views(work, est.busy),
        "views_estimate": views_est,
        "views_estimate_before": None if work is None else _old_views(work, est.busy),
        "views_work": None if work is None else work._asdict(),
        "views_idle": None if work is None else app_cost.view_seconds(work),
        "wall": wall,
        "cpu": cpu,
        "views_wall": statistics.median(t["wall"] for t in timed),
        "views_cpu": statistics.median(t["cpu"] for t in timed),
        "hull_cpu": statistics.median(hull) if hull else 0.0,
        "map_cpu": sum(maps),
        "load": os.getloadavg()[0],
        # each phase's estimate over busy (the idle machine's seconds)
        "phases": {p.name: p.seconds / est.busy for p in est.phases},
    }


def fit_constants(rows: list[dict]) -> dict:
    """Least-squares constants of the views' CPU beyond the hull: fixed, per boundary,
    per evaluation (non-negative)."""
    import numpy as np
    from scipy.optimize import nnls

    A = np.array(
        [[1.0, r["views_work"]["boundaries"], r["views_work"]["evaluations"]] for r in rows]
    )
    b = np.array([r["views_cpu"] - r["hull_cpu"] for r in rows])
    # relative errors: each row weighted by its size, so the small ones count
    w = 1.0 / np.maximum(b, 1e-3)
    coef, _ = nnls(A * w[:, None], b * w)
    return {"fixed": coef[0], "per_boundary": coef[1], "per_evaluation": coef[2]}


def _ratios(r: dict, estimate: float, views: float) -> tuple[float, float, float, float]:
    """A run's ``(estimate / wall, idle estimate / CPU, idle fits' estimate / their CPU,
    idle views' estimate / their CPU)``: ``estimate`` and ``views`` the estimate's whole
    and views seconds (as busy as the machine was: over ``busy`` they are the idle
    machine's), the run ``r``'s seconds (one thread: CPU is robust to the load)."""
    busy = r["busy"]
    return (
        estimate / r["wall"],
        estimate / busy / r["cpu"],
        (estimate - views) / busy / (r["cpu"] - r["views_cpu"]),
        views / busy / r["views_cpu"],
    )


def _before(a: dict, b: dict | None) -> tuple[tuple[float, ...], float]:
    """The ratios (:func:`_ratios`) and views estimate before: the before code's own run
    ``b`` when measured, else ``a``'s estimate with the views priced as up to main
    30bebae."""
    if b is None:
        return _ratios(a, a["estimate_before"], a["views_estimate_before"]), a[
            "views_estimate_before"
        ]
    return _ratios(b, b["estimate"], b["views_estimate"]), b["views_estimate"]


def report(state: dict) -> str:
    rows = [r for r in state["rows"] if r.get("code", "after") == "after"]
    befores = {r["case"]: r for r in state["rows"] if r.get("code") == "before"}
    if befores:
        what = (
            f"*before*: the code of `{state['before_code']}` (commit {state['before_commit']}), "
            "each case run in a fresh process alternated with this tree's (*after*), one "
            "after the other: side by side"
        )
    else:
        what = (
            "*before*: the views priced as up to main 30bebae (0.3 s + 0.003 s per boundary, "
            "times busy), *after*: from their work (`wsvmgui.app.cost.view_seconds`); the same "
            "estimate's probes and the same run otherwise"
        )
    lines = [
        "# The app's cost estimate on small and medium data, before and after",
        "",
        f"Machine: {state['machine']}; load average {state['load'][0]:.1f} at start, "
        f"{state['load'][1]:.1f} at the end; one thread (`n_jobs=1`), `nice -n 5`.  Script: "
        f"`benchmarks/view_cost.py` (its docstring says what is measured).  {what}.",
        "",
        "Columns: **busy** = how much slower than idle the estimate found the machine "
        "(after); **estimate / wall** = the app's estimate of the run (wall seconds, as busy "
        "as the machine was) over the run's wall seconds (the estimate's own time not "
        "counted); **idle estimate / CPU** = the estimate over busy (the idle machine's "
        "seconds) over the run's CPU seconds (one thread: robust to the other programs' "
        "load, which the wall ratios are not); **fits**, **views** = the same for the fits' "
        "stages (the run without its views) and for the views phase; **views s** = the "
        f"views phase's wall seconds (median of {state['repeats']}) and its estimate; "
        "**hull** = CPU seconds of the training hull's slice in it.",
        "",
        "| data | n | p | K | scheme | preset | busy | estimate / wall (before -> after) | "
        "idle estimate / CPU | fits: idle / CPU | views: idle / CPU | wall s | views s | "
        "views estimate s | hull s |",
        "|---|---:|---:|---:|---|---|---:|---|---|---|---|---:|---:|---|---:|",
    ]
    keys = ("wall", "cpu", "fits", "views")
    summary: dict[str, list[tuple[float, float]]] = {k: [] for k in keys}
    for a in rows:
        before, views = _before(a, befores.get(a["case"]))
        after = _ratios(a, a["estimate"], a["views_estimate"])
        for k, x, y in zip(keys, before, after, strict=True):
            summary[k].append((x, y))
        cells = " | ".join(f"{x:.2f} -> {y:.2f}" for x, y in zip(before, after, strict=True))
        lines.append(
            f"| {a['data']} | {a['n']} | {a['p']} | {a['K']} | {a['scheme']} | {a['preset']} | "
            f"{a['busy']:.2f} | {cells} | {a['wall']:.2f} | {a['views_wall']:.3f} | "
            f"{views:.2f} -> {a['views_estimate']:.2f} | {a['hull_cpu']:.3f} |"
        )

    def span(pairs: list[tuple[float, float]], i: int) -> str:
        xs = [p[i] for p in pairs]
        return f"{min(xs):.2f}-{max(xs):.2f} (median {statistics.median(xs):.2f})"

    lines += ["", "## Summary", ""]
    for key, title in (
        ("wall", "Estimate / wall"),
        ("cpu", "Idle estimate / CPU"),
        ("fits", "Fits: idle estimate / CPU"),
        ("views", "Views: idle estimate / CPU"),
    ):
        pairs = summary[key]
        lines.append(
            f"- {title} over the {len(pairs)} runs: before {span(pairs, 0)}, "
            f"after {span(pairs, 1)}."
        )
    for label, pick in (("binary", lambda r: r["K"] == 2), ("multiclass", lambda r: r["K"] > 2)):
        pairs = [pr for pr, r in zip(summary["fits"], rows, strict=True) if pick(r)]
        if pairs:
            lines.append(
                f"- Fits: idle estimate / CPU, the {len(pairs)} {label} runs: before "
                f"{span(pairs, 0)}, after {span(pairs, 1)}."
            )
    maps = [
        (r["case"], r["phases"]["calibration map"], r.get("map_cpu", float("nan")))
        for r in rows
        if "calibration map" in r.get("phases", {})
    ]
    if maps:
        lines.append(
            "- The calibration map's idle estimate / its CPU in the run (s): "
            + ", ".join(f"{c} {v:.3f} / {m:.3f}" for c, v, m in maps)
            + "."
        )
    if state.get("fitted"):
        f = state["fitted"]
        lines.append(
            f"- Least-squares constants of the views from these rows (`--fit`): fixed "
            f"{f['fixed']:.4f} s, per boundary {f['per_boundary']:.2e} s, per evaluation "
            f"{f['per_evaluation']:.2e} s."
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fit", action="store_true", help="print the views' fitted constants")
    ap.add_argument(
        "--before-code",
        default=None,
        help="a checkout of the code before (e.g. /work/main): each case is run with it too",
    )
    ap.add_argument("--out-dir", default=str(RESULTS))
    ap.add_argument("--name", default=NAME, help="the results files' name")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.worker[0], int(args.worker[1]))))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _worker import run_worker

    out = Path(args.out_dir)
    path = out / f"{args.name}.json"
    if args.cases == ["map"]:
        args.cases = list(MAP_CASES)
    if args.report_only:
        state = json.loads(path.read_text())
    else:
        load0 = os.getloadavg()[0]
        here = Path(__file__).resolve().parents[1]
        codes = [("after", here)]
        if args.before_code:
            codes.insert(0, ("before", Path(args.before_code).resolve()))
        rows = []
        for case in args.cases:
            for label, code in codes:
                row = run_worker(__file__, [case, str(args.repeats)], code)
                rows.append({"code": label, **row})
                print(json.dumps(rows[-1]), flush=True)
        state = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
            f"python {platform.python_version()}",
            "load": [load0, os.getloadavg()[0]],
            "repeats": args.repeats,
            "rows": rows,
        }
        if args.before_code:
            state["before_code"] = args.before_code
            state["before_commit"] = _commit(Path(args.before_code))
        if args.fit:
            state["fitted"] = fit_constants([r for r in rows if r["code"] == "after"])
            print(json.dumps(state["fitted"]))
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(state, indent=1) + "\n")
    (out / f"{args.name}.md").write_text(report(state))
    return 0


def _commit(tree: Path) -> str:
    """The short commit of a checkout ("?" when git cannot tell)."""
    import subprocess

    res = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return res.stdout.strip() or "?"


if __name__ == "__main__":
    sys.exit(main())
