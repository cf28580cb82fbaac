"""The path engine's compiled kernels, built ahead of the first fit (the warm-up).

The exact path's inner loops (:mod:`wsvmgui.ladder._path_kernel`,
:mod:`wsvmgui.ladder._path_start` and :mod:`wsvmgui.ladder._path_predict`) are compiled
by numba for this machine the first time they are imported (about
:data:`COMPILE_SECONDS` s, from a quiet machine to a busy one; the joint fit's solver as
long again) and cached on disk (where:
:func:`wsvmgui.ladder._path_jit._jit`); a later process loads them from the cache in
about a second.  :func:`warm_up` does that import on purpose, for every group of kernels
it is given (the joint fit's too: :data:`wsvmgui.joint.kernels.ENGINE_KERNELS`), and
counts them by group: ``wsvmgui --warm-up``, which ``scripts/setup.sh`` runs after
installing, and the app at start-up, so that the first fit is a warm one.
Wherever the compile happens anyway (a wheel installed without the warm-up, a cache
made stale by an upgrade, another CPU), :func:`compile_notice` says so before the wait,
naming what compiles (:data:`COMPILING`).

Compiled kernels cannot ship in the wheel: numba keys a cache entry by the exact numba
version, the Python version, the source's content hash and the CPU model and features
it was compiled for, so a cache built elsewhere is rejected (and rebuilt) on most
machines (``benchmarks/results/first_run.md``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

#: What compiles, by the package of the kernel numba compiles: its name in the notice and
#: the seconds it takes, least and most seen on the shared 2-core development machine.
#: The ladder's 39 kernels: 16.5 and 18.9 s of CPU, 30 and 47 s wall at a load average of
#: about 6 (fifth sitting, empty ``NUMBA_CACHE_DIR``, under ``nice``); the joint fit's 32:
#: 25 s of CPU, 50 and 56 s wall, in the same runs.  All 71 together: 49.9 s of CPU
#: (``wsvmgui --warm-up`` of a fresh install, ``benchmarks/results/first_run.md``; the
#: ladder's alone 20-22 s there) and 47.8 s of CPU, 232 s wall under ``nice`` at a load
#: average of 8.5 (fourth sitting).  The first fit on a fresh install without the warm-up
#: (the ladder's kernels compiled inside it) took 14.4 s of CPU.
COMPILING: Mapping[str, tuple[str, tuple[int, int]]] = {
    "wsvmgui.ladder": ("the path engine", (15, 50)),
    "wsvmgui.joint": ("the joint fit's solver", (25, 60)),
}
#: Seconds the path engine (the ladder's kernels) takes to compile, from a quiet machine
#: to a busy one.
COMPILE_SECONDS = COMPILING["wsvmgui.ladder"][1]


def compile_message(module: str | None = "wsvmgui.ladder") -> str:
    """The notice before numba compiles a kernel of ``module``: what compiles, by its
    package (:data:`COMPILING`), and about how long it takes."""
    for package, (what, (least, most)) in COMPILING.items():
        if module is not None and (module == package or module.startswith(f"{package}.")):
            return f"compiling {what} (once, about {least}-{most} s)"
    return "compiling numba kernels (once)"


#: What the command line and the app say before the path engine compiles (the first fit's
#: kernels, a binary ladder's); :func:`compile_message` for the others.
COMPILE_MESSAGE = compile_message()
#: Imports the modules of a group of compiled kernels (compiling or loading them) and
#: returns them.
KernelLoader = Callable[[], Sequence[ModuleType]]


def ladder_kernels() -> list[ModuleType]:
    """The ladder's kernel modules: the exact path's and the non-crossing repair's."""
    from . import _noncrossing_kernel, _path_kernel, _path_predict, _path_start

    return [_path_kernel, _path_start, _path_predict, _noncrossing_kernel]


#: The kernel groups this layer knows; :data:`wsvmgui.joint.kernels.ENGINE_KERNELS` adds
#: the joint fit's (a higher layer).
LADDER_KERNELS: Mapping[str, KernelLoader] = {"ladder": ladder_kernels}


@dataclass(frozen=True)
class KernelGroup:
    """What :func:`warm_up` found for one group of kernels.

    Attributes
    ----------
    name : str
        The group ("ladder", "joint").
    compiled, loaded : int
        Kernels compiled by this process, and loaded from the cache.
    seconds : float
        Wall time of the group's import.
    cache_dir : str or None
        Where numba caches the group's kernels (beside its modules unless
        ``NUMBA_CACHE_DIR`` is set).
    """

    name: str
    compiled: int
    loaded: int
    seconds: float
    cache_dir: str | None = None


@dataclass(frozen=True)
class WarmUp:
    """What :func:`warm_up` found.

    Attributes
    ----------
    compiled : int
        Kernels compiled by this process (not in the cache, or stale there), every group.
    loaded : int
        Kernels loaded from the cache, every group.
    seconds : float
        Wall time of the imports (compile or load).
    cache_dir : str or None
        The directory of numba's cache; None if no location was writable, so every
        process compiles the kernels again.
    groups : tuple of KernelGroup
        The same counts by group, in the order warmed up.
    """

    compiled: int
    loaded: int
    seconds: float
    cache_dir: str | None
    groups: tuple[KernelGroup, ...] = ()

    @property
    def _where(self) -> str:
        dirs = dict.fromkeys([self.cache_dir, *(g.cache_dir for g in self.groups)])
        return " and ".join(d for d in dirs if d)

    def _by_group(self, count: Callable[[KernelGroup], int]) -> str:
        """``"ladder 39, joint 32"`` (the groups with a nonzero count), or "" for one group."""
        if len(self.groups) < 2:
            return ""
        return ", ".join(f"{g.name} {count(g)}" for g in self.groups if count(g))

    @property
    def covers(self) -> str:
        """What the groups warmed up are, by :data:`COMPILING`'s names: "path engine" (the
        ladder's group alone) or "path engine and joint fit's solver" (both groups)."""
        names = [group_label(g.name) for g in self.groups] or [group_label("ladder")]
        return " and ".join(dict.fromkeys(names))

    def describe(self) -> str:
        """One line for the user, naming what it covers (:attr:`covers`); "<covers>
        ready" only when nothing was compiled."""
        if self.cache_dir is None:
            return (
                f"{self.covers} compiled in {self.seconds:.1f} s, in memory only: no writable "
                "cache location, so every process compiles them again (set NUMBA_CACHE_DIR "
                "to a writable directory)"
            )
        if self.compiled:
            which = self._by_group(lambda g: g.compiled)
            which = f": {which}" if which else ""
            loaded = f"; {self.loaded} loaded" if self.loaded else ""
            return (
                f"{self.covers} compiled in {self.seconds:.1f} s ({self.compiled} kernels"
                f"{which}{loaded}) and cached in {self._where}"
            )
        which = self._by_group(lambda g: g.loaded)
        which = f" ({which})" if which else ""
        return (
            f"{self.covers} ready: {self.loaded} compiled kernels{which} loaded in "
            f"{self.seconds:.1f} s from {self._where}"
        )


def group_label(name: str) -> str:
    """What the kernel group ``name`` ("ladder", "joint": package ``wsvmgui.<name>``) is,
    by :data:`COMPILING` without its article ("path engine"); the name itself if unknown."""
    what = COMPILING.get(f"wsvmgui.{name}", (name, (0, 0)))[0]
    return what.removeprefix("the ")


@contextmanager
def compile_notice(announce: Callable[[str], None]) -> Iterator[None]:
    """Call ``announce(compile_message(...))`` before numba's first compile in the block of
    each group of kernels (the path engine, the joint fit's solver, any other), once.

    A compile in any thread counts (the path may first run on a tuning worker); loading
    compiled kernels from the cache is no compile and says nothing.  Imports numba.
    """
    from numba.core import event

    lock = threading.Lock()
    said: set[str] = set()

    class _FirstCompile(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            dispatcher = (ev.data or {}).get("dispatcher")
            function = getattr(dispatcher, "py_func", None)
            text = compile_message(getattr(function, "__module__", None))
            with lock:
                if text in said:
                    return
                said.add(text)
            announce(text)

        def on_end(self, ev: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", _FirstCompile()):
        yield


def _tally(modules: Sequence[ModuleType]) -> tuple[int, int, str | None]:
    """Compiled and loaded kernels defined in ``modules`` (a kernel a module imports from
    another counts there only), and the cache directory they name."""
    compiled = loaded = 0
    cache_dir = None
    for module in modules:
        for obj in vars(module).values():
            stats: Any = getattr(obj, "stats", None)  # a numba dispatcher's compile counts
            if not hasattr(stats, "cache_misses") or obj.__module__ != module.__name__:
                continue
            compiled += sum(stats.cache_misses.values())
            loaded += sum(stats.cache_hits.values())
            cache_dir = cache_dir or getattr(stats, "cache_path", None)
    return compiled, loaded, cache_dir


def warm_up(
    announce: Callable[[str], None] | None = None,
    groups: Mapping[str, KernelLoader] | None = None,
) -> WarmUp:
    """Compile groups of kernels into numba's cache, or load them from it.

    Parameters
    ----------
    announce : callable, optional
        Called with :func:`compile_message` before the first compile of each group.
    groups : mapping of str to callable, optional
        Name -> loader of the group's kernel modules; default :data:`LADDER_KERNELS`
        (``wsvmgui --warm-up`` and the app pass
        :data:`wsvmgui.joint.kernels.ENGINE_KERNELS`: the ladder's and the joint fit's).

    Returns
    -------
    WarmUp
        Counts of compiled and loaded kernels, in all and by group (those of this
        process's first import: a second call in the same process repeats them), the
        time and the cache.
    """
    from . import _path_jit

    found: list[KernelGroup] = []
    cache_dir = None
    with compile_notice(announce or (lambda _text: None)):
        for name, load in (LADDER_KERNELS if groups is None else groups).items():
            start = time.perf_counter()
            modules = load()
            seconds = time.perf_counter() - start
            compiled, loaded, where = _tally(modules)
            found.append(KernelGroup(name, compiled, loaded, seconds, where))
            cache_dir = cache_dir or where
    if _path_jit._no_cache:
        cache_dir = None
    return WarmUp(
        sum(g.compiled for g in found),
        sum(g.loaded for g in found),
        sum(g.seconds for g in found),
        cache_dir,
        tuple(found),
    )
