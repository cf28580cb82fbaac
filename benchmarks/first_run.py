"""The first fit after a fresh install against a warm one (issue 20: no silent compile wait).

Builds the wheel of this checkout, installs it (not editable) into a fresh virtual
environment and runs, from an empty directory, each in a fresh process with BLAS on one
thread:

* ``fit``: the fit of ``wsvmgui demo`` (design wuliu2011_ex1, n = 100, the default
  settings: path engine, tuned lambda x sigma), timed by ``time.process_time`` around
  ``fit_scheme`` alone; it also records whether the compile notice was given;
* ``demo``: the whole ``wsvmgui demo`` command (start, fit, 5000 test points, metrics),
  CPU of the child process (``resource.getrusage(RUSAGE_CHILDREN)``).

in three scenarios, each starting from an empty numba cache (its files in the installed
package's ``__pycache__`` deleted):

* ``setup``: what ``scripts/setup.sh`` does after installing: ``wsvmgui --warm-up``
  (timed: the install-time cost), then the first run, then warm ones;
* ``no warm-up``: a plain ``pip install`` somewhere else: the first run compiles (and says
  so), then warm ones;
* ``other CPU``: after a warm-up, a process that compiles for another CPU
  (``NUMBA_CPU_NAME=generic``): numba keys its cache by CPU, so a cache built on one
  machine is not used on another, which is why the wheel cannot ship one.

Each first run is repeated ``--repeats`` times from an empty cache; warm runs likewise.
Writes ``benchmarks/results/first_run.{md,json}``.  Run from the repository root::

    python benchmarks/first_run.py            # about 15 minutes on a loaded 2-core machine
    python benchmarks/first_run.py --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TARGET = 2.0

#: The demo's fit, timed alone (run by the fresh venv's interpreter, away from the checkout).
FIT_WORKER = """
import json, time
t0 = time.process_time()
from wsvmgui.app.schemes import fit_scheme
from wsvmgui.app.settings import RunSettings
from wsvmgui.evaluation.designs import get_design
from wsvmgui.ladder.warmup import compile_notice
design = get_design("wuliu2011_ex1")
train = design.sample(design.default_n, seed=0)
said = []
t1 = time.process_time()
with compile_notice(said.append):
    fit_scheme(RunSettings(seed=0), train.X, train.y)
t2 = time.process_time()
print(json.dumps({"import_cpu": t1 - t0, "fit_cpu": t2 - t1, "notice": bool(said),
                  "n": int(train.X.shape[0])}))
"""
MAGIC = """
import json
from numba.core.registry import cpu_target
triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()
print(json.dumps({"triple": triple, "cpu": cpu, "n_features": features.count(",") + 1}))
"""


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env.update(extra or {})
    return env


def _child(cmd: list[str], cwd: Path, extra_env: dict | None = None) -> tuple[float, str, str]:
    """Run ``cmd``; its CPU seconds (user + system), stdout and stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, env=_env(extra_env), capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.stdout, proc.stderr


class Install:
    """The wheel in a fresh venv, and runs of it from an empty folder."""

    def __init__(self, work: Path, python: str) -> None:
        self.work = work
        dist = work / "dist"
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)],
            check=True,
            env=_env(),
        )
        wheel = next(dist.glob("*.whl"))
        subprocess.run([python, "-m", "venv", str(work / "venv")], check=True)
        self.python = str(work / "venv" / "bin" / "python")
        self.app = str(work / "venv" / "bin" / "wsvmgui")
        self.install_cpu, _, _ = _child(
            [self.python, "-m", "pip", "install", "-q", "--progress-bar", "off", str(wheel)], work
        )
        self.run_dir = work / "run"
        self.run_dir.mkdir()
        out = _child([self.python, "-c", "import wsvmgui; print(wsvmgui.__file__)"], self.run_dir)
        self.package = Path(out[1].strip()).parent
        assert str(self.package).startswith(str(work / "venv")), self.package
        #: numba's caches of every kernel group (the ladder's and the joint fit's)
        self.caches = [self.package / group / "__pycache__" for group in ("ladder", "joint")]

    def wipe_cache(self) -> int:
        """Delete numba's cache files of the installed package; how many there were."""
        files = [f for c in self.caches for f in [*c.glob("*.nbi"), *c.glob("*.nbc")]]
        for f in files:
            f.unlink()
        return len(files)

    def warm_up(self) -> dict:
        cpu, out, _ = _child([self.app, "--warm-up"], self.run_dir)
        return {"cpu": cpu, "said": out.strip().splitlines()[-1]}

    def run(self, kind: str, extra_env: dict | None = None) -> dict:
        if kind == "fit":
            cpu, out, _ = _child([self.python, "-c", FIT_WORKER], self.run_dir, extra_env)
            return {"process_cpu": cpu, **json.loads(out.strip().splitlines()[-1])}
        cpu, out, err = _child([self.app, "demo"], self.run_dir, extra_env)
        fitted = [ln for ln in out.splitlines() if "fitted in" in ln]
        return {
            "process_cpu": cpu,
            "notice": "compiling the path engine" in err,
            "demo_says": fitted[0].split(";")[-1].strip() if fitted else "",
        }


def _scenario(inst: Install, name: str, kind: str, repeats: int) -> dict:
    firsts, warms, warmups = [], [], []
    for _ in range(repeats):
        inst.wipe_cache()
        if name != "no warm-up":
            warmups.append(inst.warm_up())
        if name == "other CPU":
            firsts.append(inst.run(kind, {"NUMBA_CPU_NAME": "generic"}))
        else:
            firsts.append(inst.run(kind))
        warms.append(inst.run(kind))
        print(f"{name} / {kind}: first {firsts[-1]}, warm {warms[-1]}", file=sys.stderr)
    for _ in range(max(0, repeats - 1)):
        warms.append(inst.run(kind))
    return {"scenario": name, "kind": kind, "warm_up": warmups, "first": firsts, "warm": warms}


def _med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _report(results: dict) -> str:
    meta = results["meta"]
    lines = [
        "# First run after a fresh install (issue 20: no silent compile wait)",
        "",
        f"Generated by `python benchmarks/first_run.py --repeats {meta['repeats']}` at "
        f"{meta['commit']} on {meta['date']} ({meta['machine']}, {meta['cpus']} cores shared "
        f"with other jobs, load average {meta['load']}, Python {meta['python']}, numba "
        f"{meta['numba']}; CPU `{meta['magic']['cpu']}`, {meta['magic']['n_features']} "
        "feature flags).  The wheel of this checkout installed into a fresh venv, every run "
        "a fresh process from an empty folder, BLAS on one thread.  CPU seconds; medians of "
        f"{meta['repeats']} first runs (each from an empty numba cache) and of the warm "
        "runs.  `fit` is `process_time` around the demo's `fit_scheme` (wuliu2011_ex1, "
        f"n = {meta['n']}, default settings: path engine, tuned lambda x sigma); `demo` is "
        "the whole `wsvmgui demo` process (with 5000 test points).  The warm-up column is "
        "`wsvmgui --warm-up` run before the first run (for *other CPU*: compiled for this "
        "machine's CPU, then read by a process compiling for another).",
        "",
        "| scenario | run | warm-up | first run | warm run | first / warm "
        f"(target <= {TARGET:g}) | compile notice on the first run |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in results["rows"]:
        key = "fit_cpu" if row["kind"] == "fit" else "process_cpu"
        first, warm = _med(row["first"], key), _med(row["warm"], key)
        warm_up = f"{_med(row['warm_up'], 'cpu'):.1f} s" if row["warm_up"] else "none"
        ratio = first / warm
        verdict = "met" if ratio <= TARGET else "**missed**"
        notice = (
            "yes"
            if all(r["notice"] for r in row["first"])
            else ("no" if not any(r["notice"] for r in row["first"]) else "some")
        )
        lines.append(
            f"| {row['scenario']} | {row['kind']} | {warm_up} | {first:.2f} s | {warm:.2f} s "
            f"| {ratio:.2f} ({verdict}) | {notice} |"
        )
    lines += ["", results["notes"], ""]
    return "\n".join(lines)


NOTES = """\
## Reading the numbers

- **setup** is the README's path (`bash scripts/setup.sh`, which ends with `wsvmgui
  --warm-up`) and the documented step after `pip install wsvmgui`: the compile moves to
  install time, and the first fit is a warm one.
- **no warm-up**: a wheel installed and used at once. The first path fit compiles the
  kernels it uses (the ladder's); `wsvmgui fit|predict|demo` print `compiling the path
  engine (once, about 15-50 s)` on stderr before the wait (not with `--quiet`; a joint fit
  says `compiling the joint fit's solver (once, about 25-60 s)`), and the app compiles
  every group on a worker as soon as its window shows, with the same messages in the
  status bar.  The warm-up compiles every group: the ladder's 39 kernels and the joint
  fit's 32.  The later runs
  load them from the cache next to the installed module (`site-packages/wsvmgui/ladder/
  __pycache__`; `~/.cache/numba` when site-packages is read-only; `NUMBA_CACHE_DIR` when
  set).
- **other CPU**: the same installed cache, read by a process compiling for another CPU
  (`NUMBA_CPU_NAME=generic`): it compiles again.

## Why the wheel does not ship compiled kernels

numba (`numba/core/caching.py`) keys every cache entry by the function's signature, the
target's *magic tuple* (LLVM triple, CPU name and CPU feature flags: `host` code uses
every instruction set of the machine it was compiled on), and hashes of the bytecode; the
index file is named by the Python version (`*.py311.nbi`), starts with the numba version
(another version discards it), and records the source file's stamp (a content hash in
recent numba; size and mtime in older releases such as 0.60, which the dependency range
allows).  A cache built by CI would therefore be used only on machines with the same CPU
model and flags, the same Python minor version and the same numba release; everywhere
else it is dead weight in the wheel, and the first fit compiles anyway (the *other CPU*
row).  Code compiled for a generic CPU is portable but only loads in processes that set
`NUMBA_CPU_NAME=generic` before numba starts, which would change numba's code for every
other library in the process and give up the machine's vector instructions.  AOT
compilation (`numba.pycc`) is deprecated and slated for removal.  Hence: compile at setup
time (`scripts/setup.sh`, or `wsvmgui --warm-up` after a pip install), and say so where
the compile happens anyway.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--python", default=shutil.which("python3") or sys.executable)
    ap.add_argument("--keep", action="store_true", help="keep the venv (path printed)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="wsvmgui-first-run."))
    try:
        inst = Install(work, args.python)
        print(f"installed in {work} ({inst.install_cpu:.1f} s CPU)", file=sys.stderr)
        rows = [
            _scenario(inst, name, kind, args.repeats)
            for name in ("setup", "no warm-up", "other CPU")
            for kind in ("fit", "demo")
        ]
        _, magic, _ = _child([inst.python, "-c", MAGIC], inst.run_dir)
        _, numba_version, _ = _child(
            [inst.python, "-c", "import numba; print(numba.__version__)"], inst.run_dir
        )
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    results = {
        "rows": rows,
        "install_cpu": inst.install_cpu,
        "notes": NOTES,
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "commit": commit,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
            "python": platform.python_version(),
            "numba": numba_version.strip(),
            "magic": json.loads(magic.strip().splitlines()[-1]),
            "repeats": args.repeats,
            "n": next(r["first"][0]["n"] for r in rows if r["kind"] == "fit"),
            "wall_seconds": time.perf_counter() - start,
        },
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "first_run.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / "first_run.md").write_text(_report(results))
    print(_report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
