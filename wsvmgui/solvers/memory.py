"""Memory before the work: what a run holds at once, what the machine has, and the choice
between one dense kernel matrix and kernel values made on the fly.

A ladder run holds one dense kernel matrix (8 h^2 bytes for h rows, shared by every
thread, sub-problem, lambda and weight; :mod:`wsvmgui.solvers.gram`): of all ``N`` rows
for the grid engine (folds are indices into it), of a fold's training rows (one fold at a
time) or of the final fit's rows for the exact path, which reads the dense matrix of its
own rows.  Beside it, per fit running at once: libsvm's cache, the ladder's coefficient
arrays and blocks of kernel rows; for the path also a copy of its rows' matrix when they
are a subset of the held rows (a pairwise sub-problem) and the path's own working memory
and storage (:func:`path_bytes`).  :func:`ladder_storage` estimates that peak before
anything is fitted; when it does not fit in the memory budget it chooses kernel values
made on the fly (never n x n: libsvm on the raw features for the grid engine, kernel rows
of the elbow points only for the path, :mod:`wsvmgui.ladder.path_rows`), and when even
that does not fit, or the engine needs a dense matrix, it refuses with one line naming
the sizes and the ways out (:class:`~wsvmgui.errors.MemoryBudgetError`) instead of
failing midway.

The budget is the smallest of ``MemAvailable`` (``/proc/meminfo``), the room left under
the process's cgroup limit (v2 ``memory.max``, v1 ``memory.limit_in_bytes``) and
:data:`DEFAULT_BUDGET` (2 GB, what a laptop can give one run; the environment variable
``WSVMGUI_MEMORY_BUDGET``, e.g. ``8G`` or ``512M``, sets another, ``none`` none).  On a
Dask cluster it is each worker's memory limit.  :func:`memory_limits` overrides all of
them (and can force a storage) inside a ``with`` block.

Freed memory goes back to the system: on glibc, blocks of kernel values freed by the
worker threads would otherwise stay in the threads' malloc arenas (glibc raises its
threshold for returning freed blocks to the system up to 32 MB as blocks are freed),
which cost a tuned run at n = 6000 up to 300 MB of resident memory it no longer used.
The ``wsvmgui`` command (the command line and the app, processes of its own) fixes that
threshold at :data:`MMAP_THRESHOLD` (unless ``MALLOC_MMAP_THRESHOLD_`` is set); importing
the library leaves a user's process as it is, and a script may call
:func:`bound_heap_retention` itself.
"""

from __future__ import annotations

import contextvars
import ctypes
import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, MemoryBudgetError
from ._libsvm_direct import CACHE_MB
from .kernels import BLOCK_BYTES
from .wsvm import CHECK_CHUNK

STORAGES = ("auto", "dense", "on-the-fly")
#: Share of the available memory a run may plan to use (the rest is headroom).
SAFETY = 0.9
#: Share of a Dask worker's memory limit a run may plan to use (Dask pauses at 80%).
WORKER_SAFETY = 0.7
#: libsvm's kernel cache per fit when kernel values are made on the fly: at most this...
FLY_CACHE_MAX_MB = 1024.0
#: ... and at least this (MB).
FLY_CACHE_MIN_MB = 100.0
#: Elbow size (share of the path's points) the path's working memory is planned for.
#: Measured largest elbows: 16-19 points at n = 5000-10000 on smooth designs, 11-14 % of
#: n on ``wuliu2011_ex2``/``ex6``; ``wang2008_ex1`` (flat probabilities) reaches 40 %,
#: where the path costs more than the grid (``benchmarks/results/path_speed.md``).
PATH_ELBOW_SHARE = 0.05
#: The memory budget of a run unless told otherwise (bytes): what a laptop can give it.
DEFAULT_BUDGET = 2 * 2**30
#: Environment variable overriding :data:`DEFAULT_BUDGET` ("8G", "512M", bytes, "none").
BUDGET_VARIABLE = "WSVMGUI_MEMORY_BUDGET"
#: glibc's threshold (bytes) above which freed blocks go straight back to the system.
MMAP_THRESHOLD = 4 * 2**20

_limit: contextvars.ContextVar[tuple[int | None, str] | None] = contextvars.ContextVar(
    "wsvmgui_memory_limit", default=None
)


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _meminfo_available(path: Path = Path("/proc/meminfo")) -> int | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Bytes left under this process's cgroup memory limit (None: no limit found)."""
    for limit_file, usage_file in (
        (root / "memory.max", root / "memory.current"),  # cgroup v2
        (root / "memory" / "memory.limit_in_bytes", root / "memory" / "memory.usage_in_bytes"),
    ):
        limit = _read_int(limit_file)  # "max" (no limit) reads as None
        if limit is None or limit >= 2**60:  # v1 reports "no limit" as a huge number
            continue
        usage = _read_int(usage_file) or 0
        return max(limit - usage, 0)
    return None


def budget() -> int | None:
    """The memory budget of one run (bytes; None: no budget beyond the machine's).

    :data:`DEFAULT_BUDGET`, or the value of ``WSVMGUI_MEMORY_BUDGET``: a number of bytes
    with an optional suffix K, M, G or T (powers of 1024), or ``none``.

    Raises
    ------
    InputError
        The variable holds something else.
    """
    text = os.environ.get(BUDGET_VARIABLE, "").strip().upper().removesuffix("B")
    if not text:
        return DEFAULT_BUDGET
    if text == "NONE":
        return None
    scale = 1
    if text[-1] in "KMGT":
        scale = 1024 ** ("KMGT".index(text[-1]) + 1)
        text = text[:-1]
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise InputError(
            f"{BUDGET_VARIABLE}={os.environ[BUDGET_VARIABLE]!r}: expected a size such as "
            "8G, 512M or 2000000000, or none"
        )
    return int(value * scale)


def available_memory() -> int | None:
    """Bytes a run may plan to use, or None when unknown.

    The value set by :func:`memory_limits` when inside one; else the smallest of
    ``MemAvailable``, the room under the cgroup limit and :func:`budget`.
    """
    forced = forced_available()
    if forced is not None:
        return forced
    found = [v for v in (_meminfo_available(), _cgroup_room(), budget()) if v is not None]
    return min(found) if found else None


def bound_heap_retention(threshold: int = MMAP_THRESHOLD) -> bool:
    """Make glibc return freed blocks above ``threshold`` bytes to the system at once.

    glibc starts at 128 kB and raises the threshold up to 32 MB whenever such a block is
    freed, after which blocks below it are kept in the freeing thread's arena; a run
    whose threads free many blocks of kernel values then holds hundreds of MB it does
    not use.  Fixing the threshold (``mallopt(M_MMAP_THRESHOLD)``) stops that.  Nothing
    is done off glibc or when ``MALLOC_MMAP_THRESHOLD_`` is set.

    Returns
    -------
    bool
        Whether the threshold was set.
    """
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-3, int(threshold)))  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):  # not glibc
        return False


def release_freed_memory() -> bool:
    """Give the memory freed in every malloc arena back to the system now.

    glibc keeps freed blocks below its (rising) mmap threshold in the freeing thread's
    arena; a tuning run's threads leave about 150 MB of them at n = 6000, which the
    final fit's kernel matrix would be allocated beside (``malloc_trim(0)``, which walks
    every arena; a few ms).  Unlike :func:`bound_heap_retention` this changes no setting
    of the process.  Nothing is done off glibc.

    Returns
    -------
    bool
        Whether memory was released.
    """
    libc = _glibc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``malloc_trim``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 (only glibc has it)
    except (OSError, AttributeError):
        return None
    return libc


def forced_available() -> int | None:
    """The bytes set by :func:`memory_limits` (None when none)."""
    forced = _limit.get()
    return None if forced is None else forced[0]


def forced_storage() -> str:
    """The storage forced by :func:`memory_limits` ("auto" when none)."""
    forced = _limit.get()
    return "auto" if forced is None else forced[1]


@contextmanager
def memory_limits(available: int | None = None, storage: str = "auto") -> Iterator[None]:
    """Plan the fits inside the block for ``available`` bytes and/or a given storage.

    Parameters
    ----------
    available : int or None
        Bytes to plan for instead of the machine's (None: the machine's).
    storage : {"auto", "dense", "on-the-fly"}
        "auto" chooses by memory; the others force a kind of kernel storage (a run that
        cannot use it is refused).
    """
    if storage not in STORAGES:
        raise ValueError(f"storage must be one of {', '.join(STORAGES)}, got {storage!r}")
    token = _limit.set((available, storage))
    try:
        yield
    finally:
        _limit.reset(token)


def gb(nbytes: float) -> str:
    """``nbytes`` for people: '48 kB', '275 MB', '20.0 GB'."""
    if nbytes >= 2**30:
        return f"{nbytes / 2**30:.1f} GB"
    return f"{nbytes / 2**20:.0f} MB" if nbytes >= 2**20 else f"{nbytes / 2**10:.0f} kB"


@dataclass(frozen=True)
class KernelStorage:
    """How a run holds its kernel, and what it plans to use.

    Attributes
    ----------
    mode : {"dense", "on-the-fly"}
    cache_mb : float
        libsvm's kernel cache per fit (on the fly).
    need : int
        Estimated peak bytes of one process (beyond what it holds already).
    available : int or None
        Bytes the estimate was compared with (None: unknown).
    kernel_bytes : int
        Size of one dense kernel matrix of all rows.
    held_rows : int
        Rows of the dense matrix held (0 on the fly).
    n_rows : int
        Rows of the data.
    engine_bytes : int
        Planned working memory and storage of the engine per fit beyond the kernel
        (the exact path's, :func:`path_bytes`; 0 for the grid).
    note : str
        Appended to :meth:`describe` (e.g. an engine changed for lack of memory).
    """

    mode: str
    cache_mb: float
    need: int
    available: int | None
    kernel_bytes: int
    held_rows: int = 0
    n_rows: int = 0
    engine_bytes: int = 0
    note: str = ""

    @property
    def dense(self) -> bool:
        return self.mode == "dense"

    def describe(self) -> str:
        """One line for ``fit_info_`` and messages."""
        if self.dense:
            held = 8 * self.held_rows**2
            text = (
                f"dense kernel matrix ({gb(held)})"
                if self.held_rows >= self.n_rows
                else f"dense kernel matrix of {self.held_rows:,} rows ({gb(held)})"
            )
            if self.engine_bytes:
                text += f", path storage about {gb(self.engine_bytes)} per fit"
        else:
            why = f"a dense kernel matrix would take {gb(self.kernel_bytes)}"
            if self.available is not None:
                why += f", {gb(self.available)} available"
            text = f"kernel computed on the fly ({why})"
            if self.engine_bytes:
                text += f", path rows up to {gb(self.cache_mb * 2**20)} per fit"
        text += f"; {gb(self.need)} planned"
        return text + (f"; {self.note}" if self.note else "")


def path_bytes(n_fit: int) -> int:
    """Planned working memory and storage of one exact path on ``n_fit`` points (bytes).

    With ``m = max(50, PATH_ELBOW_SHARE * n_fit)`` points on the elbow: the elbow
    factors of the two traced directions (capacity up to 2m each, 64 m^2 bytes), the
    contiguous elbow rows of the kernel and the stored values (2 x 8 n_fit m), and the
    records of the about 3 n_fit breakpoints while they are traced (Python objects,
    about 1.5 kB each: 5 kB per point).  Measured beside the kernel matrix (numpy
    allocations): 3.9 MB at n = 800 and 15 MB at n = 6000 on ``wuliu2011_ex1`` (planned
    4.6 and 62 MB); 184 MB at n = 2000 on ``wang2008_ex1`` with 873 points on the elbow
    (planned 13 MB: a path with such elbows costs more than the grid anyway).
    """
    m = min(n_fit, max(50, int(PATH_ELBOW_SHARE * n_fit)))
    return int(64 * m * m + 16 * n_fit * m + 5000 * n_fit)


def path_fly_bytes(n_fit: int) -> int:
    """Planned working memory of one exact path on kernel values made on the fly (bytes).

    Beside its store of kernel rows (planned as the cache, ``cache_mb`` of the storage):
    :func:`path_bytes` less the rows it counts (the store holds them), and the blocks of
    kernel values of its sums over L and its KKT check (up to three blocks of
    :data:`~wsvmgui.solvers.kernels.BLOCK_BYTES` with their temporaries).
    """
    m = min(n_fit, max(50, int(PATH_ELBOW_SHARE * n_fit)))
    return int(64 * m * m + 5000 * n_fit + 3 * BLOCK_BYTES)


def _per_fit(n_fit: int, n_rows: int, n_weights: int, cache_bytes: float) -> float:
    """Bytes one running ladder fit holds beside the kernel matrix.

    Its weighted fits' coefficients and the ladder made of them (three arrays of
    ``n_weights x n_fit``), and at any one time the largest of libsvm's cache (during a
    fit), the KKT check's arrays and two blocks of kernel rows (scoring, products).
    """
    arrays = 3 * n_weights * n_fit * 8
    check = 6 * min(n_weights, CHECK_CHUNK) * n_rows * 8
    return arrays + max(cache_bytes, check, 2 * BLOCK_BYTES) + 200 * n_fit


def ladder_storage(
    n_rows: int,
    n_features: int,
    n_fit: int,
    n_weights: int,
    slots: int,
    available: int | None,
    *,
    kernel_free: bool,
    cluster: bool = False,
    what: str = "the fit",
    n_held: int | None = None,
    path: bool = False,
) -> KernelStorage:
    """Plan the kernel storage of a ladder run, or refuse it.

    Parameters
    ----------
    n_rows, n_features : int
        N and p of the data.
    n_fit : int
        Rows of the largest single fit.
    n_weights : int
        Weights of the largest ladder (M - 1).
    slots : int
        Fits running at once in one process (threads).
    available : int or None
        Bytes one process may use (None: unknown, nothing is refused).
    kernel_free : bool
        Whether the engine can work on kernel values made on the fly (else it copies its
        rows' matrix when they are fewer than the held rows).  The path (``path``) works
        on the fly where its dense matrix does not fit, whatever this says.
    cluster : bool
        ``available`` is a Dask worker's memory limit (changes the advice).
    what : str
        Named in the refusal.
    n_held : int, optional
        Rows of the dense matrix held (8 n_held^2 bytes); default ``n_rows``.
    path : bool
        The engine is the exact path: :func:`path_bytes` per fit with a dense matrix, on
        the fly :func:`path_fly_bytes` and its kernel rows (planned as libsvm's cache).

    Returns
    -------
    KernelStorage

    Raises
    ------
    MemoryBudgetError
        Nothing allowed fits in ``available``.
    """
    forced = forced_storage()
    held = n_rows if n_held is None else int(n_held)
    kernel_bytes = 8 * n_rows * n_rows
    q_bytes = 4.0 * n_fit * n_fit  # libsvm's cache holds at most the whole matrix (float32)
    per_fit = _per_fit(n_fit, n_rows, n_weights, min(CACHE_MB * 2**20, q_bytes))
    engine_bytes = 0
    if not kernel_free and n_fit < held:
        per_fit += 8.0 * n_fit * n_fit  # the engine's own copy of its rows' matrix
    if path:
        engine_bytes = path_bytes(n_fit)
        per_fit += engine_bytes
    dense = KernelStorage(
        "dense",
        CACHE_MB,
        int(8 * held * held + slots * per_fit),
        available,
        kernel_bytes,
        held_rows=held,
        n_rows=n_rows,
        engine_bytes=engine_bytes,
    )
    budget = None if available is None else available * (WORKER_SAFETY if cluster else SAFETY)

    def fits(storage: KernelStorage) -> bool:
        return budget is None or storage.need <= budget

    fly_ok = kernel_free or path
    if forced == "dense" or (forced == "auto" and (fits(dense) or not fly_ok)):
        if fits(dense):
            return dense
        raise MemoryBudgetError(_refusal(what, n_rows, dense, slots, cluster))
    if not fly_ok:
        raise MemoryBudgetError(f"{what} needs a dense kernel matrix, not values on the fly")
    data = 8 * n_rows * n_features
    extra = path_fly_bytes(n_fit) if path else 0
    cache = min(FLY_CACHE_MAX_MB * 2**20, q_bytes)
    if budget is not None:
        room = (budget - data) / slots - _per_fit(n_fit, n_rows, n_weights, 0.0) - extra
        cache = min(cache, room / 2)  # half of what is left per fit, for headroom
    cache = max(cache, FLY_CACHE_MIN_MB * 2**20)
    need = data + slots * (_per_fit(n_fit, n_rows, n_weights, cache) + extra)
    fly = KernelStorage(
        "on-the-fly", cache / 2**20, int(need), available, kernel_bytes, n_rows=n_rows,
        engine_bytes=extra,
    )  # fmt: skip
    if fits(fly):
        return fly
    raise MemoryBudgetError(_refusal(what, n_rows, fly, slots, cluster))


def _refusal(what: str, n_rows: int, storage: KernelStorage, slots: int, cluster: bool) -> str:
    threads = f"{slots} thread{'s' if slots > 1 else ''}"
    how = (
        f"(its kernel matrix alone is {gb(8 * storage.held_rows**2)})"
        if storage.dense
        else "even with kernel values made on the fly"
    )
    room = f"{gb(storage.available or 0)} is " + ("each Dask worker's" if cluster else "available")
    ways = (
        "Dask workers with more memory or fewer threads each, a subsample of the rows, or "
        "the linear kernel"
        if cluster
        else "fewer threads (n_jobs), a subsample of the rows, the linear kernel, or a Dask "
        "cluster (--scheduler)"
    )
    return (
        f"not enough memory: {what} on {n_rows:,} rows needs about {gb(storage.need)} with "
        f"{threads} {how}, and {room}; use {ways}"
    )
