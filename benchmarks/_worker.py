"""Run one benchmark measurement in a fresh single-threaded worker process.

The speed benchmarks (``binary_default_speed.py``, ``scheme_speed.py``) measure each
(case, method) in its own process, so that CPU seconds (``time.process_time``) and peak
memory (``ru_maxrss``) are the measurement's alone: the script is re-run with
``--worker ...`` arguments, BLAS on one thread, and prints its result as one JSON object
on its last line of standard output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Thread-count variables pinned to 1 in the worker (BLAS and OpenMP).
SINGLE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class WorkerFailed(RuntimeError):
    """The worker exited non-zero; the message is the last line of its standard error
    (empty when it wrote none)."""


def run_worker(script: str | Path, worker_args: list[str], code: str | Path) -> dict:
    """Run ``python script --worker *worker_args`` single-threaded and read its result.

    Parameters
    ----------
    script : str or Path
        The benchmark script to re-run as the worker.
    worker_args : list of str
        The arguments after ``--worker``.
    code : str or Path
        The ``PYTHONPATH`` of the worker: the source tree whose ``wsvmgui`` it imports
        (the checkout's root, or another tree to compare against).

    Returns
    -------
    dict
        The JSON object on the worker's last line of standard output.

    Raises
    ------
    WorkerFailed
        When the worker exits with a non-zero status.
    """
    env = dict(os.environ)
    env.update({var: "1" for var in SINGLE_THREAD})
    env["PYTHONPATH"] = str(code)
    proc = subprocess.run(
        [sys.executable, str(script), "--worker", *worker_args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise WorkerFailed(lines[-1] if lines else "")
    return json.loads(proc.stdout.strip().splitlines()[-1])
