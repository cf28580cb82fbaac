"""How long do the desktop app's default runs take on every built-in data set?

For every built-in data set and every scheme the app offers for it, the app's first-launch
preset ("quick", :mod:`wsvmgui.app.presets`) is run exactly as the Run button runs it
(:func:`wsvmgui.app.analysis.run_analysis`: split with the app's default test fraction
and standardisation, fit, every view's data); the binary ladder also with the
non-crossing comparison beside it.  The scheme the app picks for the data
(:func:`wsvmgui.app.presets.default_scheme`) is marked "default".  Before each run the
app's cost estimate (:func:`wsvmgui.app.cost.estimate_cost`, a pure estimate: every probe
stopped after its budget) predicts its time; the table puts the prediction beside the
measurement.  Wall-clock and process CPU seconds, one run each.

    python benchmarks/gui_app_defaults.py [--data NAME ...] [--scheme NAME ...]
        [--max-estimate 120] [--reuse rows.jsonl]

Configurations the app's estimate puts above ``--max-estimate`` seconds are not run (the
app asks before such a run); their rows show the estimate.

Writes benchmarks/results/gui_app_defaults.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def measure(data: str, ds, name: str, settings, split, compare: bool, max_estimate: float) -> dict:
    """Estimate, then run, one configuration; a row of the table.

    A configuration estimated above ``max_estimate`` seconds is not run (the app asks
    before such a run, offering a lighter preset); its row has no times.
    """
    from wsvmgui.app.analysis import RunRequest, run_analysis
    from wsvmgui.app.cost import estimate_cost

    request = RunRequest(settings, split, compare=compare)
    t0 = time.perf_counter()
    est = estimate_cost(request)
    t_est = time.perf_counter() - t0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    error = ""
    metrics: dict = {}
    ran = est.seconds <= max_estimate
    if not ran:
        error = f"not run: estimated {est.seconds:.0f} s > {max_estimate:.0f} s (the app asks)"
    else:
        try:
            metrics = run_analysis(request).metrics.get("test", {})
        except Exception as exc:  # noqa: BLE001 - recorded in the table
            error = f"{type(exc).__name__}: {exc}"
    return {
        "data": data,
        "n": int(ds.X.shape[0]),
        "p": int(ds.X.shape[1]),
        "K": int(ds.n_classes),
        "scheme": name,
        "compare": compare,
        "fits_estimated": est.fits,
        "seconds_estimated": round(est.seconds, 2),
        "estimate_took": round(t_est, 2),
        "wall_seconds": round(time.perf_counter() - wall0, 2) if ran else None,
        "cpu_seconds": round(time.process_time() - cpu0, 2) if ran else None,
        "test_error": metrics.get("error"),
        "error": error,
    }


def _num(v) -> str:
    return "-" if v is None else f"{v}"


def write(rows: list[dict], out: Path) -> None:
    meta = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    load = ", ".join(f"{v:.1f}" for v in meta["load_average"])
    lines = [
        '# App defaults (preset "quick") on every built-in data set',
        "",
        f"Python {meta['python']}, {meta['cpus']} CPUs shared with other jobs, load average "
        f"at the end {load}. One run each, as the Run button runs it (fit, comparison where "
        "named, every view's data). `estimated` is the app's cost estimate before the run "
        "(its own time in `estimate took`).",
        "",
        "| data | n | p | K | scheme | fits (est.) | estimated s | estimate took s "
        "| wall s | CPU s | test error |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        err = f"{r['test_error']:.3f}" if r["test_error"] is not None else r["error"][:70]
        scheme = f"**{r['scheme']}** (default)" if r.get("default") else r["scheme"]
        comp = " + non-crossing" if r["compare"] else ""
        lines.append(
            f"| {r['data']} | {r['n']} | {r['p']} | {r['K']} | {scheme}{comp} "
            f"| {r['fits_estimated']} | {r['seconds_estimated']} | {r['estimate_took']} "
            f"| {_num(r['wall_seconds'])} | {_num(r['cpu_seconds'])} | {err} |"
        )
    ran = [r for r in rows if r["wall_seconds"] is not None]
    defaults = [r for r in ran if r.get("default")]
    walls = [r["wall_seconds"] for r in ran]
    skipped = [f"{r['data']} {r['scheme']}" for r in rows if r["wall_seconds"] is None]
    lines.append("")
    if defaults:
        lines.append(
            f"The app's default scheme on each of {len(defaults)} data sets: slowest "
            f"{max(r['wall_seconds'] for r in defaults):.1f} s wall "
            f"({max(r['cpu_seconds'] for r in defaults):.1f} s CPU)."
        )
    if walls:
        slow = [
            f"{r['data']} {r['scheme']}{' + non-crossing' if r['compare'] else ''} "
            f"{r['wall_seconds']:.0f} s"
            for r in ran
            if r["wall_seconds"] > 10
        ]
        lines.append(
            f"All {len(walls)} runs: median {sorted(walls)[len(walls) // 2]:.1f} s, "
            f"{len(slow)} over 10 s" + (f" ({'; '.join(slow)})." if slow else ".")
        )
    long = [r for r in ran if r["wall_seconds"] > 30]
    if long:
        lines.append(
            "Estimate against measurement for the runs over 30 s (estimate / CPU s): "
            + "; ".join(
                f"{r['data']} {r['scheme']} {r['seconds_estimated']:.0f} / {r['cpu_seconds']:.0f}"
                for r in long
            )
            + "."
        )
    if skipped:
        lines.append(
            f"Not run, estimated above the limit (the app asks before each, offering a "
            f"lighter preset): {len(skipped)} ({'; '.join(skipped)})."
        )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")


def main(argv: list[str] | None = None) -> int:
    from wsvmgui.app.datasets import builtin_names, load_builtin, split_dataset
    from wsvmgui.app.presets import default_scheme, preset_settings
    from wsvmgui.app.schemes import SCHEMES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="*", default=None)
    parser.add_argument("--scheme", nargs="*", default=None)
    parser.add_argument("--out", default=str(RESULTS / "gui_app_defaults"))
    parser.add_argument(
        "--max-estimate",
        type=float,
        default=120.0,
        help="do not run configurations estimated above this many seconds",
    )
    parser.add_argument(
        "--reuse",
        default=None,
        help="JSON lines of rows measured before (this script's output): not run again",
    )
    args = parser.parse_args(argv)
    done = {}
    if args.reuse:
        for line in Path(args.reuse).read_text().splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                done[(row["data"], row["scheme"], row["compare"])] = row

    rows = []
    for data in args.data or builtin_names():
        ds = load_builtin(data)
        split = split_dataset(ds, 0.0, 0.3, 0, standardise=True)
        for name, scheme in SCHEMES.items():
            if args.scheme and name not in args.scheme:
                continue
            if (ds.n_classes > 2 and not scheme.multiclass) or not scheme.availability()[0]:
                continue
            settings = preset_settings("quick", name, split.train.X, split.train.y)
            both = ds.n_classes == 2 and name == "binary"
            for compare in (False, True) if both else (False,):
                row = done.get((data, name, compare)) or measure(
                    data, ds, name, settings, split, compare, args.max_estimate
                )
                row["default"] = name == default_scheme(ds.n_classes) and not compare
                rows.append(row)
                print(json.dumps(row), flush=True)
    write(rows, Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
