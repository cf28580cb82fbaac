"""The command line: ``wsvmgui fit``, ``predict``, ``demo`` and ``schemes``.

Every bad value gets one line on stderr naming it and exit status 2, never a traceback
(set ``WSVMGUI_DEBUG=1`` to see one for unexpected errors).  Inputs are read as written
(:mod:`wsvmgui.io.tables`), features are standardised by the training rows unless
``--no-standardize``, outputs are checked before any work and written atomically
(:mod:`wsvmgui.io.atomic`), model files cannot run code (:mod:`wsvmgui.io.modelfile`),
and the probabilities are a plain CSV with a JSON sidecar (:mod:`wsvmgui.io.results`).

One job a module: :mod:`~wsvmgui.cli.parser` (the options, with the value types of
:mod:`~wsvmgui.cli.argtypes`), :mod:`~wsvmgui.cli.run` (``main`` and the commands),
one module per command (:mod:`~wsvmgui.cli.fit` with :mod:`~wsvmgui.cli.fit_settings`
and :mod:`~wsvmgui.cli.report`, :mod:`~wsvmgui.cli.predict`, :mod:`~wsvmgui.cli.demo`,
:mod:`~wsvmgui.cli.schemes`, :mod:`~wsvmgui.cli.install`), and what every command
shares: :mod:`~wsvmgui.cli.console` (progress, notes, signals),
:mod:`~wsvmgui.cli.output` (the files written), :mod:`~wsvmgui.cli.limits`
(``--max-minutes``), :mod:`~wsvmgui.cli.failures` and :mod:`~wsvmgui.cli.status` (how a
run ends).
"""

from __future__ import annotations

from .demo import cmd_demo
from .fit import cmd_fit
from .install import cmd_setup
from .parser import SEED_MAX, build_parser
from .predict import cmd_predict
from .run import COMMANDS, main
from .schemes import cmd_schemes
from .status import EXIT_CANCELLED, EXIT_INPUT, EXIT_INTERNAL, EXIT_SOLVER

__all__ = [
    "COMMANDS",
    "EXIT_CANCELLED",
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "EXIT_SOLVER",
    "SEED_MAX",
    "build_parser",
    "cmd_demo",
    "cmd_fit",
    "cmd_predict",
    "cmd_schemes",
    "cmd_setup",
    "main",
]
