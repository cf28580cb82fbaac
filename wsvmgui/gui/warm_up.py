"""The path engine's warm-up at start-up: compiled kernels loaded (or compiled, saying so).

The first path fit in a process loads numba's compiled kernels (about a second); on a
machine where they were never compiled it compiles them first (:mod:`wsvmgui.ladder.warmup`).
The app does either on a worker as soon as the window shows, so that the wait is not
inside the first run (and its cost estimate), and says so in the status bar when it
compiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..joint.kernels import ENGINE_KERNELS
from ..ladder.warmup import WarmUp, warm_up

if TYPE_CHECKING:
    from .main_window import MainWindow


def start_warm_up(window: MainWindow) -> int:
    """Start the warm-up on the job runner of ``window``'s run controller (kind
    ``"warm-up"``); its job id.

    The compile notice and its outcome go to the window's message line, a failure to
    its error line (the first path fit then tries again and reports its own error).
    """

    def job(progress, should_cancel, publish) -> WarmUp:
        return warm_up(lambda text: publish(f"{text}\u2026"), ENGINE_KERNELS)

    def done(result: WarmUp) -> None:
        if result.compiled or result.cache_dir is None:
            window.show_info(result.describe())

    return window.runs.runner.start(
        "warm-up",
        job,
        on_result=done,
        on_partial=window.show_info,
        on_error=lambda message, details: window.show_error(
            f"The path engine and joint fit's solver could not be prepared: {message}", details
        ),
    )
