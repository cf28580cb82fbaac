"""``python -m wsvmgui`` and the ``wsvmgui`` command."""

from __future__ import annotations

import sys

from .cli import main as cli_main


def main() -> None:
    """Entry point: the desktop app without arguments, the command line otherwise."""
    sys.exit(cli_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
