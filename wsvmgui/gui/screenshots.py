"""Screenshots of the main window: every view, three kinds of data.

    QT_QPA_PLATFORM=offscreen python -m wsvmgui.gui.screenshots docs/screenshots
    python -m wsvmgui.gui.screenshots /tmp/shots --both-sizes   # to look at, not commit

For each data set (a two-class design with the non-crossing comparison, a three-class
design, and the 13-feature wine table) the app's own first-launch preset is run, the most
uncertain test point is selected (for wine a training point, whose slice meets the
training hull), the sub-problem with the most boundaries in the plane is shown, and every
tab is saved at 1024 x 700 as ``<data>-<view>-<width>x<height>.png`` (the gallery in
docs/screenshots, small enough to commit), the binary boundaries also at 1600 x 1000;
``--both-sizes`` saves every tab at 1024 x 700 and 1600 x 1000.  Extra shots show a
recalibrated binary run with per-point intervals (its ladders and probability bars), the
joint simplex scheme's triangle (K = 3) and a linear-kernel comparison where the
non-crossing guarantee holds in the drawn plane.  A scheme missing from the registry skips
its shots with a message.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..app.settings import RunSettings

SIZES = ((1024, 700), (1600, 1000))
VIEWS = ("boundaries", "ladders", "probabilities", "calibration", "results")
#: (name, built-in data set, points drawn, compare with the non-crossing ladder)
DATASETS = (
    ("binary", "design:wuliu2011_ex1", 200, True),
    ("k3", "design:wu2010_ex1", 300, False),
    ("wine", "sklearn:wine", 0, False),
)
#: Where the most uncertain point is selected: a training point's slice meets the hull.
SELECT_FROM = {"wine": "train"}


def _wait(app, window, timeout: float) -> bool:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    start = time.perf_counter()

    def check() -> None:
        if not window.is_busy() or time.perf_counter() - start > timeout:
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


def _settle(app, seconds: float = 0.3) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()
    for _ in range(5):
        app.processEvents()


def _run(
    app,
    window,
    data: str,
    n: int,
    settings: RunSettings | None = None,
    compare: bool = False,
    timeout: float = 600,
    **changes,
) -> bool:
    """Load ``data`` and run ``settings`` (None: the app's quick preset for the data),
    with ``changes`` (RunSettings fields) applied to them."""
    from ..app.schemes import SCHEMES

    if settings is not None and (
        settings.scheme not in SCHEMES or not SCHEMES[settings.scheme].availability()[0]
    ):
        print(f"skipped: scheme {settings.scheme!r} is not available", file=sys.stderr)
        return False
    if n:
        window.data_panel.n_points.setValue(n)
        window.data_panel.discard_pending()
    if not window.data_panel.load_builtin(data):
        print(f"skipped: {window.messages.text()}", file=sys.stderr)
        return False
    if settings is None:
        window.settings_panel.apply_preset("quick")
    else:
        window.settings_panel.set_settings(settings)
    if changes:
        window.settings_panel.set_settings(replace(window.settings_panel.settings(), **changes))
    window.settings_panel.compare.setChecked(compare)
    if window.start_run(limit=None) is None or not _wait(app, window, timeout):
        print(f"skipped: run failed: {window.messages.text()}", file=sys.stderr)
        return False
    return True


def _select_uncertain(window, part: str = "test") -> None:
    """Select the point of ``part`` whose largest class probability is smallest."""
    res = window.result
    rows = res.split.parts[part].index
    row = int(rows[np.argmin(res.report.proba[rows].max(axis=1))])
    window.selection.select(row)


def _busiest_subproblem(app, window) -> None:
    """Show the sub-problem with the most boundaries in the plane."""
    plane = window.result.plane
    counts = [sum(seg.shape[0] > 0 for seg in segs) for segs in plane.layers[0].segments]
    window.boundary_view.sub_combo.setCurrentIndex(int(np.argmax(counts)))
    app.processEvents()


def _shoot(app, window, out: Path, name: str, sizes=SIZES, views=range(5)) -> None:
    for w, h in sizes:
        window.resize(w, h)
        _settle(app)
        for i in views:
            window.tabs.setCurrentIndex(i)
            _wait(app, window, 120)
            _settle(app)
            path = out / f"{name}-{VIEWS[i]}-{w}x{h}.png"
            if not window.grab().save(str(path)):
                raise OSError(f"could not write {path} (does its folder exist?)")
            print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    both = "--both-sizes" in argv
    argv = [a for a in argv if a != "--both-sizes"]
    out = Path(argv[0] if argv else "docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow
    from .state import AppState, use_settings_folder

    app = QApplication.instance() or QApplication([])
    use_settings_folder(tempfile.mkdtemp(prefix="wsvmgui-shots-"))
    window = MainWindow(AppState())
    window.resize(*SIZES[0])
    window.show()
    app.processEvents()

    for name, data, n, compare in DATASETS:
        if _run(app, window, data, n, None, compare):
            _select_uncertain(window, SELECT_FROM.get(name, "test"))
            _wait(app, window, 120)
            _busiest_subproblem(app, window)
            _shoot(app, window, out, name, sizes=SIZES if both else SIZES[:1])
            if name == "binary" and not both:  # the README's first picture
                _shoot(app, window, out, name, sizes=SIZES[1:], views=(0,))

    # A recalibrated binary run with per-point intervals: the calibrated estimate beside
    # the ladder's own in the ladder view, the intervals on the probability bars.
    if _run(app, window, "design:wuliu2011_ex1", 200, None, calibration="auto", intervals=True):
        _select_uncertain(window)
        _shoot(app, window, out, "binary-calibrated", sizes=SIZES[:1], views=(1, 2))

    # The joint simplex scheme on three classes: the triangle of class weights.
    if _run(app, window, "design:wu2010_ex1", 300, None):
        window.settings_panel.scheme.setCurrentIndex(
            window.settings_panel.scheme.findData("joint-indirect")
        )
        if window.start_run(limit=None) is not None and _wait(app, window, 600):
            _select_uncertain(window)
            _shoot(app, window, out, "k3-joint", sizes=SIZES[1:], views=(1,))

    # Linear fits, where the non-crossing constraints act in the drawn plane: separately
    # fitted boundaries cross inside the hull, the constrained ones do not.
    linear = RunSettings(
        scheme="binary", kernel="linear", n_weights=20, lambdas=[0.0005], n_jobs=1, seed=0
    )
    if _run(app, window, "design:wuliu2011_ex1", 200, linear, compare=True):
        _select_uncertain(window)
        _shoot(app, window, out, "binary-linear", sizes=SIZES[:1], views=(0,))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
