"""``wsvmgui --install-desktop`` and ``wsvmgui --warm-up``: set the machine up after
installing (a desktop entry; the path engine compiled once)."""

from __future__ import annotations

import argparse

from ..errors import InputError
from ..ladder.warmup import compile_notice, warm_up


def cmd_setup(args: argparse.Namespace) -> int:
    """``wsvmgui --install-desktop`` and ``wsvmgui --warm-up`` (after installing)."""
    if args.command is not None:
        raise InputError(f"--warm-up and --install-desktop take no command ({args.command})")
    if args.install_desktop:
        from ..io.desktop import install_desktop

        for path in install_desktop():
            print(f"wrote {path}")
    if args.warm_up:
        with compile_notice(lambda text: print(text + "\u2026", flush=True)):
            from ..joint import _active_set_kernel  # noqa: F401  (the joint fit's kernels)

            result = warm_up()
        print(result.describe())
    return 0
