"""The path engine's warm-up at start-up: compiled kernels loaded (or compiled, saying so).

The first path fit in a process loads numba's compiled kernels (about a second); on a
machine where they were never compiled it compiles them first (:mod:`wsvmgui.ladder.warmup`).
The app does either on a worker as soon as the window shows, so that the wait is not
inside the first run (and its cost estimate), and says so in the status bar when it
compiles.
"""

from __future__ import annotations

from ..ladder.warmup import WarmUp, warm_up


def start_warm_up(window) -> int:
    """Start the warm-up on ``window``'s job runner (kind ``"warm-up"``); its job id.

    ``window`` is a :class:`~wsvmgui.gui.main_window.MainWindow`: the compile notice and
    its outcome go to :meth:`show_info`, a failure to :meth:`show_error` (the first path
    fit then tries again and reports its own error).
    """

    def job(progress, should_cancel, publish) -> WarmUp:
        return warm_up(announce=lambda text: publish(f"{text}\u2026"))

    def done(result: WarmUp) -> None:
        if result.compiled or result.cache_dir is None:
            window.show_info(result.describe())

    return window.runner.start(
        "warm-up",
        job,
        on_result=done,
        on_partial=window.show_info,
        on_error=lambda message, details: window.show_error(
            f"The path engine could not be prepared: {message}", details
        ),
    )
