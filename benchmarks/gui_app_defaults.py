"""How long do the desktop app's default runs take on every built-in data set?

For every built-in data set and every scheme the app offers for it, the app's first-launch
preset ("quick", :mod:`wsvmgui.app.presets`) is run exactly as the Run button runs it
(:func:`wsvmgui.app.analysis.run_analysis`: split with the app's default test fraction
and standardisation, fit, every view's data), with the non-crossing comparison for
two-class data as the app's first launch has it.  Before each run the app's cost
estimate (:func:`wsvmgui.app.cost.estimate_cost`) predicts its time; the table puts the
prediction beside the measurement.  Wall-clock and process CPU seconds, one run each.

    python benchmarks/gui_app_defaults.py [--data NAME ...] [--scheme NAME ...]

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


def main(argv: list[str] | None = None) -> int:
    from wsvmgui.app.analysis import RunRequest, run_analysis
    from wsvmgui.app.cost import estimate_cost
    from wsvmgui.app.datasets import builtin_names, load_builtin, split_dataset
    from wsvmgui.app.presets import preset_settings
    from wsvmgui.app.schemes import SCHEMES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="*", default=None)
    parser.add_argument("--scheme", nargs="*", default=None)
    parser.add_argument("--out", default=str(RESULTS / "gui_app_defaults"))
    args = parser.parse_args(argv)

    rows = []
    for data in args.data or builtin_names():
        ds = load_builtin(data)
        split = split_dataset(ds, 0.0, 0.3, 0, standardise=True)
        for name, scheme in SCHEMES.items():
            if args.scheme and name not in args.scheme:
                continue
            if ds.n_classes > 2 and not scheme.multiclass:
                continue
            if not scheme.availability()[0]:
                continue
            settings = preset_settings("quick", name, split.train.X, split.train.y)
            compare = ds.n_classes == 2 and name == "binary"
            request = RunRequest(settings, split, compare=compare)
            t0 = time.perf_counter()
            est = estimate_cost(request)
            t_est = time.perf_counter() - t0
            wall0, cpu0 = time.perf_counter(), time.process_time()
            error = ""
            try:
                result = run_analysis(request)
                metrics = result.metrics.get("test", {})
            except Exception as exc:  # noqa: BLE001 - recorded in the table
                error = f"{type(exc).__name__}: {exc}"
                metrics = {}
            wall = time.perf_counter() - wall0
            cpu = time.process_time() - cpu0
            row = {
                "data": data,
                "n": int(ds.X.shape[0]),
                "p": int(ds.X.shape[1]),
                "K": int(ds.n_classes),
                "scheme": name,
                "compare": compare,
                "fits_estimated": est.fits,
                "seconds_estimated": round(est.seconds, 2),
                "estimate_took": round(t_est, 2),
                "wall_seconds": round(wall, 2),
                "cpu_seconds": round(cpu, 2),
                "test_error": metrics.get("error"),
                "error": error,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)

    meta = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    lines = [
        '# App defaults (preset "quick") on every built-in data set',
        "",
        f"Python {meta['python']}, {meta['cpus']} CPUs, load average at the end "
        f"{', '.join(f'{v:.1f}' for v in meta['load_average'])}. One run each, as the Run "
        "button runs it (fit, comparison for K = 2 binary, every view's data). "
        "`estimated` is the app's cost estimate before the run (its own time in "
        "`estimate took`).",
        "",
        "| data | n | p | K | scheme | fits (est.) | estimated s | estimate took s "
        "| wall s | CPU s | test error |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        err = f"{r['test_error']:.3f}" if r["test_error"] is not None else r["error"][:60]
        lines.append(
            f"| {r['data']} | {r['n']} | {r['p']} | {r['K']} | {r['scheme']}"
            f"{' + non-crossing' if r['compare'] else ''} | {r['fits_estimated']} "
            f"| {r['seconds_estimated']} | {r['estimate_took']} | {r['wall_seconds']} "
            f"| {r['cpu_seconds']} | {err} |"
        )
    walls = [r["wall_seconds"] for r in rows]
    if walls:
        lines += [
            "",
            f"Slowest run: {max(walls):.1f} s; median {sorted(walls)[len(walls) // 2]:.1f} s; "
            f"{sum(w > 10 for w in walls)} of {len(walls)} runs over 10 s.",
        ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
