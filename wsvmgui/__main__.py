"""``python -m wsvmgui`` and the ``wsvmgui`` command."""

from __future__ import annotations

import sys

from .cli import main as cli_main


def open_app() -> int:
    """Open the desktop app (imported only now: the command line needs no Qt)."""
    try:
        from .gui.app import main as gui_main
    except ImportError as exc:
        print(f"wsvmgui: error: the desktop app cannot start: {exc}", file=sys.stderr)
        return 2
    return gui_main([])


def main() -> None:
    """Entry point: the desktop app without arguments, the command line otherwise.

    The process is ours, so glibc is told to return freed kernel blocks at once
    (:func:`wsvmgui.solvers.memory.bound_heap_retention`); importing the library does not
    change the malloc settings of a user's own process.
    """
    from .solvers.memory import bound_heap_retention

    bound_heap_retention()
    sys.exit(cli_main(sys.argv[1:], open_app=open_app))


if __name__ == "__main__":
    main()
