"""How the compiled kernels are compiled (:func:`_jit`).

Shared by the weight path's (:mod:`wsvmgui.ladder._path_kernel`,
:mod:`wsvmgui.ladder._path_start`, :mod:`wsvmgui.ladder._path_predict`), the non-crossing
repair's (:mod:`wsvmgui.ladder._noncrossing_kernel`) and the joint fit's
(:mod:`wsvmgui.joint._active_set_kernel`): ``nogil``, cached on disk, explicit signatures, no
``fastmath`` (every operation rounds as in numpy).
"""

from __future__ import annotations

import logging
from typing import Any

from numba import njit

logger = logging.getLogger("wsvmgui.ladder")


def _jit(sig: str, entry: bool = False):
    """``njit(sig, nogil=True, cache=True)``; without the on-disk cache where none is found.

    Explicit signatures keep every function monomorphic (one compilation, whatever the
    argument types at a call site, e.g. literal ints) and compile (or load from the
    cache) when this module is imported, which :mod:`wsvmgui.ladder.path` does on the
    first path.  numba's cache goes to ``NUMBA_CACHE_DIR`` when that is set, otherwise
    next to the source (``__pycache__``, e.g. an editable install) when that is writable,
    otherwise to the user-wide cache (``~/.cache/numba`` on Linux, e.g. a read-only
    site-packages); if none is writable numba refuses ``cache=True`` at decoration time,
    and the functions are compiled in memory in every process instead.
    """
    full = sig
    for alias, typ in _TYPES.items():
        full = full.replace(alias, typ)

    # Internal functions need no wrapper for calls from Python (less to compile).
    # IEEE semantics for division (inf / NaN, as numpy; the residual checks catch them).
    options = {
        "nogil": True,
        "error_model": "numpy",
        "no_cpython_wrapper": not entry,
        "no_cfunc_wrapper": True,
    }

    def wrap(fn):
        try:
            return _njit(full, cache=True, **options)(fn)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available"
            if not _no_cache:
                logger.info("kernels compiled in memory (no writable cache): %s", exc)
            _no_cache.append(fn.__name__)
            return _njit(full, **options)(fn)

    return wrap


#: Functions compiled without the on-disk cache (nowhere writable), in order.
_no_cache: list[str] = []
#: numba's type stubs do not list the wrapper options.
_njit: Any = njit
#: Shorthands in the signatures: C-contiguous arrays.
_TYPES = {"F2": "float64[:, ::1]", "F1": "float64[::1]", "I2": "int64[:, ::1]",
          "I1": "int64[::1]", "B2": "int8[:, ::1]", "B1": "int8[::1]"}  # fmt: skip
