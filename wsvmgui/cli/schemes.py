"""``wsvmgui schemes``: the probability schemes and whether each is available."""

from __future__ import annotations

import argparse

from ..app.schemes import SCHEMES


def cmd_schemes(args: argparse.Namespace) -> int:
    """``wsvmgui schemes``: list the schemes and whether each is available."""
    for scheme in SCHEMES.values():
        ok, why = scheme.availability()
        kind = "K classes" if scheme.multiclass else "2 classes"
        status = "" if ok else f"  [unavailable: {why}]"
        print(f"{scheme.name:16s} {kind:10s} {scheme.description}{status}")
        if scheme.tuning:
            print(f"{'':27s} tunes: {scheme.tuning}")
    return 0
