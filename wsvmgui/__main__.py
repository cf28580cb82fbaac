"""``python -m wsvmgui`` and the ``wsvmgui`` command."""

from __future__ import annotations

import sys

from .cli import main as cli_main


def open_app(path: str | None = None) -> int:
    """Open the desktop app, with the table or session ``path`` loaded (imported only now:
    the command line needs no Qt)."""
    try:
        from .gui.app import main as gui_main
    except ImportError as exc:
        print(f"wsvmgui: error: the desktop app cannot start: {exc}", file=sys.stderr)
        return 2
    return gui_main([], path=path)


def main() -> None:
    """Entry point: the desktop app without arguments, the command line otherwise."""
    sys.exit(cli_main(sys.argv[1:], open_app=open_app))


if __name__ == "__main__":
    main()
