"""``wsvmgui --install-desktop`` and ``wsvmgui --warm-up``: set the machine up after
installing (a desktop entry; the path engine compiled once)."""

from __future__ import annotations

import argparse

from ..errors import InputError
from ..joint.kernels import ENGINE_KERNELS
from ..ladder.warmup import warm_up


def cmd_setup(args: argparse.Namespace) -> int:
    """``wsvmgui --install-desktop`` and ``wsvmgui --warm-up`` (after installing)."""
    if args.command is not None:
        raise InputError(f"--warm-up and --install-desktop take no command ({args.command})")
    if args.install_desktop:
        from ..io.desktop import install_desktop

        for path in install_desktop():
            print(f"wrote {path}")
    if args.warm_up:
        result = warm_up(lambda text: print(text + "\u2026", flush=True), ENGINE_KERNELS)
        print(result.describe())
    return 0
