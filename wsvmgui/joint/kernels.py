"""The joint fit's compiled kernels, as a group the warm-up builds and counts.

The joint fit's active-set solver is compiled by numba in :mod:`._active_set_kernel` from
the ``_as_*`` modules (:mod:`wsvmgui.ladder.warmup` explains the cache).
:data:`ENGINE_KERNELS` lists every group of compiled kernels a fit may use: the ladder's
(this package's lower layer) and these; ``wsvmgui --warm-up`` and the app warm them all up.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

from ..ladder.warmup import LADDER_KERNELS, KernelLoader


def joint_kernels() -> list[ModuleType]:
    """The joint fit's kernel modules (importing them compiles or loads their kernels)."""
    from . import _active_set_kernel, _as_answer, _as_face, _as_homotopy, _as_steps, _as_sweeps

    return [_as_answer, _as_face, _as_homotopy, _as_steps, _as_sweeps, _active_set_kernel]


#: Every group of compiled kernels a fit may use, in the order the warm-up builds them.
ENGINE_KERNELS: Mapping[str, KernelLoader] = {**LADDER_KERNELS, "joint": joint_kernels}
