"""Cost questions you can trust (issue 21): time to the question, spread, estimate vs actual.

Cases: the built-in K = 3 design (Wu, Zhang & Liu 2010 Ex. 1, n = 300, 210 training rows)
with the presets quick, standard and thorough and the schemes joint-indirect,
joint-direct, pairwise and ova; the binary demo (two moons, 140 training rows) with every
scheme and preset.  The app's settings exactly (:func:`wsvmgui.app.presets.preset_settings`,
the default test fraction, standardised), ``n_jobs`` = all cores.

1. **Run to the question**: the real main window (offscreen) with the case's settings;
   ``start_run()`` is timed to the moment the window asks (its cost question), or to the
   end of the run when it does not ask.  Wall seconds (and process CPU).  10 tries for
   thorough/joint, ``--tries`` for the others.
2. **Spread**: 5 identical estimates (:func:`wsvmgui.app.cost.estimate_cost`) of each
   case, max/min of the expected seconds, and of the fits' CPU seconds.
3. **Estimate vs actual**: cases estimated at most ``--max-actual`` seconds are run
   (:func:`wsvmgui.app.analysis.run_analysis`, as the app runs them), wall and process
   CPU seconds against the estimate's.

The machine is shared (2 cores, load average in the header): wall seconds include the
waiting; CPU seconds do not.

    python benchmarks/cost_estimate.py [--tries 3] [--max-actual 240] [--cases K3|demo]

Writes benchmarks/results/cost_estimate.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
RESULTS = Path(__file__).resolve().parent / "results"
K3 = "design:wu2010_ex1"
K3_SCHEMES = ("joint-indirect", "joint-direct", "pairwise", "ova")
DEMO_SCHEMES = (
    "binary",
    "noncrossing",
    "preconditioned",
    "probing",
    "pairwise",
    "ova",
    "joint-direct",
    "joint-indirect",
)
PRESETS = ("quick", "standard", "thorough")


def cases(which: str) -> list[tuple[str, str, str]]:
    out = []
    if which in ("all", "K3"):
        out += [(K3, p, s) for p in PRESETS for s in K3_SCHEMES]
    if which in ("all", "demo"):
        out += [("demo", p, s) for p in PRESETS for s in DEMO_SCHEMES]
    return out


class Window:
    """The real main window, and the time from Run to its question."""

    def __init__(self) -> None:
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from wsvmgui.gui.main_window import MainWindow
        from wsvmgui.gui.state import AppState, use_settings_folder

        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        folder = Path(tempfile.mkdtemp(prefix="wsvmgui-bench-"))
        use_settings_folder(folder)
        state = AppState(QSettings(str(folder / "wsvmgui.ini"), QSettings.Format.IniFormat))
        self.win = MainWindow(state, load_demo=False)
        self.win.resize(1200, 800)
        self.win.show()
        self.asked: list[float] = []
        self.win.ask = self._ask
        self.data = ""

    def _ask(self, title: str, text: str, choices: list[str], default: str) -> str:
        self.asked.append(time.perf_counter())
        return "Cancel"

    def load(self, data: str) -> None:
        if data != self.data:
            assert self.win.data_panel.load_builtin(data)
            self.data = data
            self.idle()

    def idle(self, timeout: float = 3600.0) -> None:
        end = time.perf_counter() + timeout
        while (self.win.is_busy() or self.win.runs.state != "idle") and time.perf_counter() < end:
            self.app.processEvents()
            time.sleep(0.002)

    def to_question(self, settings) -> dict:
        """Run, and the seconds until the question (or the run's end)."""
        self.win.settings_panel.set_settings(settings)
        self.asked.clear()
        before = len(self.asked)
        cpu0, t0 = time.process_time(), time.perf_counter()
        job = self.win.start_run()
        if job is None:
            return {"error": self.win.messages.text()}
        self.idle()
        t_end = time.perf_counter()
        asked = len(self.asked) > before
        seconds = (self.asked[-1] if asked else t_end) - t0
        return {"asked": asked, "seconds": seconds, "cpu": time.process_time() - cpu0}


def spread(request, n: int = 5) -> dict:
    from wsvmgui.app.cost import estimate_cost

    walls, cpus, busys, lower, probe = [], [], [], [], []
    for _ in range(n):
        est = estimate_cost(request)
        walls.append(est.seconds)
        cpus.append(est.cpu_seconds)
        busys.append(est.busy)
        lower.append(est.lower_bound)
        probe.append(est.probe_seconds)
    return {
        "estimates": walls,
        "cpu_estimates": cpus,
        "busy": busys,
        "lower_bound": lower,
        "probe_seconds": probe,
        "spread": max(walls) / max(min(walls), 1e-9),
        "cpu_spread": max(cpus) / max(min(cpus), 1e-9),
        "fits": est.fits,
        "estimate": est,
    }


def actual(request, estimate) -> dict:
    from wsvmgui.app.analysis import run_analysis

    cpu0, t0 = time.process_time(), time.perf_counter()
    run_analysis(replace(request, cost=estimate))
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - cpu0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--question-tries", type=int, default=10, help="thorough/joint")
    parser.add_argument("--estimates", type=int, default=5)
    parser.add_argument("--max-actual", type=float, default=240.0)
    parser.add_argument("--cases", choices=["all", "K3", "demo"], default="all")
    parser.add_argument("--out", default="cost_estimate")
    args = parser.parse_args(argv)

    from wsvmgui.app.analysis import RunRequest
    from wsvmgui.app.presets import preset_settings

    window = Window()
    rows = []
    load0 = os.getloadavg()[0]
    started = time.perf_counter()
    for data, preset, scheme in cases(args.cases):
        window.load(data)
        split = window.win._split
        settings = preset_settings(preset, scheme, split.train.X, split.train.y)
        request = RunRequest(settings, split)
        thorough_joint = data == K3 and preset == "thorough" and scheme.startswith("joint")
        n_tries = args.question_tries if thorough_joint else args.tries
        tries = [window.to_question(settings) for _ in range(n_tries)]
        found = spread(request, args.estimates)
        est = found.pop("estimate")
        row = {
            "data": data,
            "preset": preset,
            "scheme": scheme,
            "fits": found["fits"],
            "tries": tries,
            **found,
            "phases": [(p.name, p.fits, p.seconds, p.lower_bound) for p in est.phases],
            "load": os.getloadavg()[0],
        }
        median = sorted(found["estimates"])[len(found["estimates"]) // 2]
        if median <= args.max_actual:
            row["actual"] = actual(request, est)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "phases"}), flush=True)
        _write(args.out, rows, load0, time.perf_counter() - started, args)
    return 0


def _fmt(seconds: float) -> str:
    from wsvmgui.estimators.cost import format_seconds

    return format_seconds(seconds)


def _write(name: str, rows: list[dict], load0: float, took: float, args) -> None:
    RESULTS.mkdir(exist_ok=True)
    meta = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "load average": [load0, os.getloadavg()[0]],
        "seconds": took,
        "tries": args.tries,
        "estimates": args.estimates,
        "max_actual": args.max_actual,
    }
    (RESULTS / f"{name}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = [
        "# Cost questions: time to the question, spread, estimate vs actual",
        "",
        f"Machine: {meta['machine']}; shared, load average {load0:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} now; {took / 60:.0f} min.  Script: "
        "`benchmarks/cost_estimate.py` (its docstring says what is measured).",
        "",
        "Columns: **asked** = tries whose window asked before fitting, of all tries; "
        "**to question** = median and worst wall seconds from Run to the question (to the "
        f"end of the run where it did not ask); **estimate** = median of "
        f"{args.estimates} identical estimates (expected wall time on this machine as busy "
        f"as it was); **spread** = max/min of the {args.estimates} (wall; CPU in brackets: "
        "the worst ratio of any two identical requests); **busy** = wall over CPU seconds of the "
        "probes; **actual** = the run's wall (CPU) seconds where it was run; **ratio** = "
        "estimate / actual wall (CPU estimate / actual CPU).",
        "",
        "| data | preset | scheme | fits | asked | to question s (median, worst) | "
        "estimate | spread | busy | actual s | ratio |",
        "|---|---|---|---:|---:|---|---:|---|---:|---|---|",
    ]
    for r in rows:
        tries = [t for t in r["tries"] if "seconds" in t]
        asked = sum(t["asked"] for t in tries)
        secs = sorted(t["seconds"] for t in tries)
        q = f"{secs[len(secs) // 2]:.1f}, {secs[-1]:.1f}" if secs else "-"
        mid = len(r["estimates"]) // 2
        est = sorted(r["estimates"])[mid]
        cpu_est = sorted(r["cpu_estimates"])[mid]
        lb = "more than " if 2 * sum(r["lower_bound"]) > len(r["lower_bound"]) else ""
        a = r.get("actual")
        actual_s = f"{a['wall']:.1f} ({a['cpu']:.1f})" if a else "not run"
        ratio = f"{est / a['wall']:.2f} ({cpu_est / max(a['cpu'], 1e-9):.2f})" if a else "-"
        busy = sorted(r["busy"])[mid]
        lines.append(
            f"| {r['data']} | {r['preset']} | {r['scheme']} | {r['fits']:,} | "
            f"{asked}/{len(tries)} | {q} | {lb}{_fmt(est)} | {r['spread']:.2f} "
            f"({r['cpu_spread']:.2f}) | {busy:.1f} | {actual_s} | {ratio} |"
        )
    lines += ["", *_summary(rows)]
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")


def _summary(rows: list[dict]) -> list[str]:
    """The worst spreads and estimate/actual ratios, and the questions' counts."""
    if not rows:
        return []

    def name(r: dict) -> str:
        return f"{r['data']} {r['preset']} {r['scheme']}"

    worst = max(rows, key=lambda r: r["spread"])
    worst_cpu = max(rows, key=lambda r: r["cpu_spread"])
    out = [
        "## Summary",
        "",
        f"- Worst spread of identical requests (target <= 1.5): wall {worst['spread']:.2f} "
        f"({name(worst)}); CPU {worst_cpu['cpu_spread']:.2f} ({name(worst_cpu)}); "
        f"{sum(r['spread'] <= 1.5 for r in rows)} of {len(rows)} cases within 1.5x (wall).",
    ]
    run = [r for r in rows if r.get("actual")]
    if run:

        def ratio(r: dict) -> float:
            est = sorted(r["estimates"])[len(r["estimates"]) // 2]
            return est / max(r["actual"]["wall"], 1e-9)

        hi, lo = max(run, key=ratio), min(run, key=ratio)
        out.append(
            f"- Estimate / actual wall over the {len(run)} cases run: from {ratio(lo):.2f} "
            f"({name(lo)}) to {ratio(hi):.2f} ({name(hi)})."
        )
    long = [r for r in rows if sorted(r["estimates"])[len(r["estimates"]) // 2] > 60]
    asked = [t for r in long for t in r["tries"] if "asked" in t]
    if asked:
        out.append(
            f"- Runs estimated over a minute: asked {sum(t['asked'] for t in asked)} of "
            f"{len(asked)} tries, worst {max(t['seconds'] for t in asked):.1f} s to the question."
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
