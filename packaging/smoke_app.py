"""Smoke test of an installed wsvmgui's desktop app, offscreen: ``wsvmgui gui FILE``.

    QT_QPA_PLATFORM=offscreen python packaging/smoke_app.py data.csv [--expect-compile yes]

Goes through the console script's own function (``wsvmgui.__main__.main``) with the
arguments the desktop entry passes (``gui FILE``), then checks, in the running app:

1. the window opened with FILE loaded (not the demo), every row read;
2. the start-up warm-up of the path engine finished, and its compile notice is in the
   message log exactly when ``--expect-compile yes`` (``no``: absent; ``any``: either);
3. a small binary run with the path engine on FILE (label column ``label``) ends with
   probabilities for every row that sum to 1, an exact path behind the ladder, and
   labels that agree with FILE's on at least 75 % of the rows.

Exit status 0 when all hold; 1 with a message naming the failed check otherwise.  Run it
from outside the source tree (``packaging/check_wheel.sh`` does, on a fresh venv with the
wheel installed): the app under test is whichever ``wsvmgui`` the interpreter imports,
and the first line printed says which.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import wsvmgui  # noqa: E402
from wsvmgui.__main__ import main as console_script  # noqa: E402
from wsvmgui.app.settings import RunSettings  # noqa: E402
from wsvmgui.ladder.warmup import COMPILE_MESSAGE  # noqa: E402

#: A run of about a second on a 200-row table: M = 5, one lambda, one sigma.
SETTINGS = RunSettings(
    scheme="binary", engine="path", n_weights=5, lambdas=[0.005], sigmas=[0.5], n_jobs=1
)
POLL_MS = 100


class SmokeFailure(Exception):
    """A check failed."""


class Smoke:
    """The checks, driven by timers inside the app's event loop."""

    def __init__(self, app: QApplication, path: str, expect_compile: str, timeout: float):
        self.app = app
        self.path = os.path.abspath(path)
        self.expect_compile = expect_compile
        self.deadline = time.monotonic() + timeout
        self.table = pd.read_csv(self.path)
        self.window = None

    def fail(self, message: str) -> None:
        print(f"smoke: FAILED: {message}", file=sys.stderr)
        self.app.exit(1)

    def later(self, step) -> None:
        """Run ``step`` on the event loop; a failed check or an error ends the app."""

        def run() -> None:
            try:
                if time.monotonic() > self.deadline:
                    raise SmokeFailure(f"timed out before {step.__name__}")
                step()
            except SmokeFailure as exc:
                self.fail(str(exc))
            except Exception as exc:  # noqa: BLE001 - any error fails the smoke test
                self.fail(f"{type(exc).__name__} in {step.__name__}: {exc}")

        QTimer.singleShot(POLL_MS, run)

    def opened(self) -> None:
        windows = [w for w in self.app.topLevelWidgets() if hasattr(w, "data_panel")]
        if not windows:
            self.later(self.opened)
            return
        self.window = win = windows[0]

        def no_questions(title, text, choices, default):
            raise SmokeFailure(f"unexpected question: {title}: {text}")

        win.ask = no_questions
        if win.data_panel.path != self.path:
            raise SmokeFailure(f"window shows {win.data_panel.path!r}, not {self.path!r}")
        n = win.data_panel.dataset.X.shape[0]
        if n != len(self.table):
            raise SmokeFailure(f"{n} rows loaded, the file has {len(self.table)}")
        print(f"smoke: window opened with {os.path.basename(self.path)} ({n} rows)")
        self.later(self.warmed_up)

    def warmed_up(self) -> None:
        win = self.window
        if win.runs.runner.is_running("warm-up"):
            self.later(self.warmed_up)
            return
        said = [m for _level, m in win.messages.history if m.startswith(COMPILE_MESSAGE)]
        if self.expect_compile == "yes" and not said:
            raise SmokeFailure(f"no {COMPILE_MESSAGE!r} in {win.messages.history}")
        if self.expect_compile == "no" and said:
            raise SmokeFailure(f"unexpected compile notice: {said}")
        print(f"smoke: path engine warmed up (compile notice shown: {bool(said)})")
        win.settings_panel.set_settings(SETTINGS)
        if win.start_run(limit=None) is None:
            raise SmokeFailure(f"the run did not start: {win.messages.history[-1:]}")
        self.later(self.finished)

    def finished(self) -> None:
        win = self.window
        if win.is_busy():
            self.later(self.finished)
            return
        result = win.result
        if result is None:
            raise SmokeFailure(f"no result; messages: {win.messages.history[-3:]}")
        proba = np.asarray(result.report.proba, dtype=float)
        if proba.shape != (len(self.table), 2) or not np.all(np.isfinite(proba)):
            raise SmokeFailure(f"probabilities of shape {proba.shape}")
        if np.abs(proba.sum(axis=1) - 1).max() > 1e-9:
            raise SmokeFailure("probability rows do not sum to 1")
        if not result.paths or result.paths[0] is None:
            raise SmokeFailure("no exact path behind the binary ladder")
        truth = self.table["label"].astype(str).to_numpy()
        agree = float(np.mean(np.asarray(result.report.label).astype(str) == truth))
        if agree < 0.75:
            raise SmokeFailure(f"labels agree with the file on {agree:.2f} of the rows")
        rows = proba.shape[0]
        print(f"smoke: run finished, probabilities for {rows} rows, agreement {agree:.3f}")
        self.app.exit(0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="a CSV table with a 'label' column")
    ap.add_argument("--expect-compile", choices=["yes", "no", "any"], default="any")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for everything")
    args = ap.parse_args(argv)
    print(f"smoke: wsvmgui {wsvmgui.__version__} from {os.path.dirname(wsvmgui.__file__)}")
    app = QApplication.instance() or QApplication(["wsvmgui"])
    smoke = Smoke(app, args.file, args.expect_compile, args.timeout)
    smoke.later(smoke.opened)
    sys.argv = ["wsvmgui", "gui", args.file]
    try:
        console_script()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 1  # the console script always exits


if __name__ == "__main__":
    sys.exit(main())
