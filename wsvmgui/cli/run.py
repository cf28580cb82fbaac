"""``main``: parse the arguments, run the command, and turn every failure into one line
on stderr and an exit status (:mod:`wsvmgui.cli.failures`)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from ..io.atomic import Terminated, termination_raises
from ..ladder.warmup import compile_notice
from .console import announce
from .demo import cmd_demo
from .failures import exit_status, internal_error
from .fit import cmd_fit
from .install import cmd_setup
from .output import WRITTEN
from .parser import build_parser
from .predict import cmd_predict
from .schemes import cmd_schemes
from .status import EXIT_INPUT

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "fit": cmd_fit,
    "predict": cmd_predict,
    "demo": cmd_demo,
    "schemes": cmd_schemes,
}


def main(argv: list[str] | None = None, open_app: Callable[[str | None], int] | None = None) -> int:
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    open_app : callable, optional
        ``open_app(file)`` opens the desktop app, with ``file`` (a path or None) loaded,
        for ``wsvmgui gui [FILE]`` and no command; given by the entry point, which is the
        only place that knows the app (the command line is Qt-free).
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error
        return int(exc.code) if isinstance(exc.code, int) else EXIT_INPUT
    WRITTEN.clear()
    hook = sys.unraisablehook
    sys.unraisablehook = _quiet_unraisable
    try:
        return _dispatch(args, open_app)
    except (Exception, KeyboardInterrupt, Terminated) as exc:
        status = exit_status(exc)
        if status is not None:
            return status
        if os.environ.get("WSVMGUI_DEBUG"):
            raise
        return internal_error(exc)
    finally:
        # third-party destructors run now, while they are kept quiet; an interrupt that
        # arrives here, after the command has finished and written its files, leaves its
        # status as it is (no traceback)
        with contextlib.suppress(KeyboardInterrupt):
            gc.collect()
        sys.unraisablehook = hook


def _dispatch(args: argparse.Namespace, open_app: Callable[[str | None], int] | None) -> int:
    """Run what the arguments ask for: a set-up flag, the app, or a command."""
    if args.warm_up or args.install_desktop:
        return cmd_setup(args)
    if args.command in (None, "gui"):
        if open_app is None:
            raise InputError("the desktop app opens from the wsvmgui command")
        return open_app(getattr(args, "file", None))
    fits = args.command in ("fit", "predict", "demo")
    notice = compile_notice(announce(args)) if fits else contextlib.nullcontext()
    with termination_raises(), notice:
        return COMMANDS[args.command](args)


def _quiet_unraisable(unraisable: Any) -> None:
    """Errors in third-party destructors (a Dask client that never connected) after the
    run has said what went wrong: kept off stderr unless WSVMGUI_DEBUG is set."""
    if os.environ.get("WSVMGUI_DEBUG"):
        sys.__unraisablehook__(unraisable)
