"""Screenshots of the main window for the documentation.

    QT_QPA_PLATFORM=offscreen python -m wsvmgui.gui.screenshots docs/

Writes ``screenshot-binary.png`` (independent ladder beside the non-crossing ladder on a
two-class design, crossings marked), ``screenshot-k3.png`` (the joint simplex scheme on a
three-class design: the selected point's triangle of class weights) and
``screenshot-k3-boundaries.png`` (pairwise coupling: one sub-problem's boundaries).  A
scheme missing from the registry skips its screenshot with a message.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..app.settings import RunSettings

SIZE = (1500, 940)


def _wait(app, window, timeout: float) -> bool:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    start = time.perf_counter()

    def check() -> None:
        idle = not window.is_busy()
        if idle or time.perf_counter() - start > timeout:
            loop.quit()

    poll = QTimer()
    poll.setInterval(50)
    poll.timeout.connect(check)
    poll.start()
    loop.exec()
    poll.stop()
    for _ in range(20):
        app.processEvents()
    return window.result is not None


def _run(
    app,
    window,
    data: str,
    n: int,
    settings: RunSettings,
    compare: bool = False,
    timeout: float = 600,
) -> bool:
    from ..app.schemes import SCHEMES

    if settings.scheme not in SCHEMES or not SCHEMES[settings.scheme].availability()[0]:
        print(f"skipped: scheme {settings.scheme!r} is not available", file=sys.stderr)
        return False
    window.data_panel.n_points.setValue(n)
    if not window.data_panel.load_builtin(data):
        print(f"skipped: {window.messages.text()}", file=sys.stderr)
        return False
    window.settings_panel.set_settings(settings)
    window.settings_panel.compare.setChecked(compare)
    if window.start_run() is None or not _wait(app, window, timeout):
        print(f"skipped: run failed: {window.messages.text()}", file=sys.stderr)
        return False
    return True


def _select_uncertain(window) -> None:
    """Select the test point whose largest class probability is smallest."""
    res = window.result
    test = res.split.test.index
    row = int(test[np.argmin(res.report.proba[test].max(axis=1))])
    window.selection.select(row)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0] if argv else "docs")
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow
    from .state import AppState, use_settings_folder

    app = QApplication.instance() or QApplication([])
    use_settings_folder(tempfile.mkdtemp(prefix="wsvmgui-shots-"))
    window = MainWindow(AppState())
    window.resize(*SIZE)
    window.show()
    app.processEvents()

    # Linear fits, where the non-crossing constraints hold in the input plane: separately
    # fitted boundaries cross inside the data hull, the constrained ones do not.
    binary = RunSettings(
        scheme="binary", kernel="linear", n_weights=20, lambdas=[0.0005], n_jobs=1, seed=0
    )
    if _run(app, window, "design:wuliu2011_ex1", 200, binary, compare=True):
        _select_uncertain(window)
        window.tabs.setCurrentWidget(window.boundary_view)
        app.processEvents()
        window.grab().save(str(out / "screenshot-binary.png"))
        print(f"wrote {out / 'screenshot-binary.png'}")

    joint = RunSettings(
        scheme="joint-indirect", kernel="linear", joint_n=20, lambdas=[0.002], n_jobs=1
    )
    if _run(app, window, "design:wu2010_ex1", 300, joint):
        _select_uncertain(window)
        window.tabs.setCurrentWidget(window.simplex_view)
        app.processEvents()
        window.grab().save(str(out / "screenshot-k3.png"))
        print(f"wrote {out / 'screenshot-k3.png'}")

    pairwise = RunSettings(scheme="pairwise", n_weights=12, lambdas=[0.005], sigmas=[1.0], n_jobs=1)
    if _run(app, window, "design:wu2010_ex1", 300, pairwise):
        _select_uncertain(window)
        window.tabs.setCurrentWidget(window.boundary_view)
        window.boundary_view.sub_combo.setCurrentIndex(0)
        app.processEvents()
        window.grab().save(str(out / "screenshot-k3-boundaries.png"))
        print(f"wrote {out / 'screenshot-k3-boundaries.png'}")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
