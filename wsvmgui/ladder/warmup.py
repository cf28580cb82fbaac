"""The path engine's compiled kernels, built ahead of the first fit (the warm-up).

The exact path's inner loops (:mod:`wsvmgui.ladder._path_kernel`,
:mod:`wsvmgui.ladder._path_start` and :mod:`wsvmgui.ladder._path_predict`) are compiled
by numba for this machine the first time they are imported (about
:data:`COMPILE_SECONDS` s, from a quiet machine to a busy one) and cached on disk (where:
:func:`wsvmgui.ladder._path_jit._jit`); a later process loads them from the cache in
about a second.  :func:`warm_up` does that import on purpose: ``wsvmgui --warm-up``,
which ``scripts/setup.sh`` runs after installing, so that the first fit is a warm one.
Wherever the compile happens anyway (a wheel installed without the warm-up, a cache
made stale by an upgrade, another CPU), :func:`compile_notice` says so before the wait.

Compiled kernels cannot ship in the wheel: numba keys a cache entry by the exact numba
version, the Python version, the source's content hash and the CPU model and features
it was compiled for, so a cache built elsewhere is rejected (and rebuilt) on most
machines (``benchmarks/results/first_run.md``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

#: Seconds a compile of the 30 kernels takes, least and most seen on the shared 2-core
#: development machine: 18.5 s (2026-11-26, second sitting), 44 s of CPU and 56 s wall at
#: a load average of about 10 (``wsvmgui --warm-up``, third sitting); 13-16 s of CPU for
#: the first 24 kernels on an AMD Zen 4 core (``benchmarks/results/first_run.md``).
COMPILE_SECONDS = (20, 60)
#: What the command line and the app say before a compile.
COMPILE_MESSAGE = (
    f"compiling the path engine (once, about {COMPILE_SECONDS[0]}-{COMPILE_SECONDS[1]} s)"
)


@dataclass(frozen=True)
class WarmUp:
    """What :func:`warm_up` found.

    Attributes
    ----------
    compiled : int
        Kernels compiled by this process (not in the cache, or stale there).
    loaded : int
        Kernels loaded from the cache.
    seconds : float
        Wall time of the import (compile or load).
    cache_dir : str or None
        The directory of numba's cache; None if no location was writable, so every
        process compiles the kernels again.
    """

    compiled: int
    loaded: int
    seconds: float
    cache_dir: str | None

    def describe(self) -> str:
        """One line for the user."""
        if self.cache_dir is None:
            return (
                f"path engine compiled in {self.seconds:.1f} s, in memory only: no writable "
                "cache location, so every process compiles it again (set NUMBA_CACHE_DIR "
                "to a writable directory)"
            )
        if self.compiled:
            return (
                f"path engine compiled in {self.seconds:.1f} s ({self.compiled} kernels) "
                f"and cached in {self.cache_dir}"
            )
        return (
            f"path engine ready: {self.loaded} compiled kernels loaded in "
            f"{self.seconds:.1f} s from {self.cache_dir}"
        )


@contextmanager
def compile_notice(announce: Callable[[str], None]) -> Iterator[None]:
    """Call ``announce(COMPILE_MESSAGE)`` once, before numba's first compile in the block.

    A compile in any thread counts (the path may first run on a tuning worker); loading
    compiled kernels from the cache is no compile and says nothing.  Imports numba.
    """
    from numba.core import event

    lock = threading.Lock()
    said: list[bool] = []

    class _FirstCompile(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            with lock:
                if said:
                    return
                said.append(True)
            announce(COMPILE_MESSAGE)

        def on_end(self, ev: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", _FirstCompile()):
        yield


def warm_up(announce: Callable[[str], None] | None = None) -> WarmUp:
    """Compile the ladder's kernels (the path engine's and the non-crossing repair's) into
    numba's cache, or load them from it.

    Parameters
    ----------
    announce : callable, optional
        Called with :data:`COMPILE_MESSAGE` before a compile starts.

    Returns
    -------
    WarmUp
        Counts of compiled and loaded kernels (those of this process's first import:
        a second call in the same process repeats them), the time and the cache.
    """
    start = time.perf_counter()
    with compile_notice(announce or (lambda _text: None)):
        from . import _noncrossing_kernel, _path_jit, _path_kernel, _path_predict, _path_start
    seconds = time.perf_counter() - start

    from numba.core.dispatcher import Dispatcher

    kernels = [
        obj
        for module in (_path_kernel, _path_start, _path_predict, _noncrossing_kernel)
        for obj in vars(module).values()
        if isinstance(obj, Dispatcher) and obj.__module__ == module.__name__
    ]
    compiled = loaded = 0
    cache_dir = None
    for kernel in kernels:
        stats = kernel.stats
        compiled += sum(stats.cache_misses.values())
        loaded += sum(stats.cache_hits.values())
        cache_dir = cache_dir or getattr(stats, "cache_path", None)
    if _path_jit._no_cache:
        cache_dir = None
    return WarmUp(compiled, loaded, seconds, cache_dir)
