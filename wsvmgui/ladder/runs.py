"""What the ladder searches and final fits share: the run's data, its kernel storage plan.

A *run* is one batch of ladder fits (a tuning search, or the final fits): its data is
placed once where its tasks run (scattered once to a cluster) and every task asks
:func:`run_gram` for the kernel matrix of its rows as the run holds it.

Memory: one dense kernel matrix at a time, built once per process
(:func:`~wsvmgui.solvers.gram.shared_kernel`) and shared read-only by every thread,
problem, lambda and weight.  The grid engine (libsvm) holds the matrix of all rows per
sigma and takes a fold or sub-problem as row indices into it
(:class:`~wsvmgui.solvers.gram.DenseGram`).  The path needs the dense matrix of its own
rows, so for it the tuning search holds the matrix of one fold's training rows per
(sigma, fold), and the final fits the matrix of their rows
(:class:`~wsvmgui.solvers.gram.HeldGram`); a sub-problem on part of those rows takes a
copy.  Before any fit, :func:`engine_plan` estimates this (the path's own storage
included) against the memory available (:func:`~wsvmgui.solvers.memory.ladder_storage`);
when the path's plan does not fit, the grid engine takes its place (with kernel values
made on the fly if need be: libsvm on the features, never n x n), and the storage says
so; when nothing fits the run is refused in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import MemoryBudgetError
from ..executor import ClusterExecutor, Executor
from ..solvers.gram import DenseGram, Gram, HeldGram, OnTheFlyGram, positions, shared_kernel
from ..solvers.kernels import Kernel
from ..solvers.memory import KernelStorage, available_memory, forced_available, ladder_storage
from .engines import make_engine

#: ``engine(K, X, y, weights, lam, kernel, progress, should_cancel) -> ladder``: fit a
#: ladder on the kernel matrix ``K`` of ``kernel`` over training inputs ``X`` (n, p) with
#: labels ``y`` in {-1, +1}; ``progress`` counts the M - 1 units of ``weights``.  ``K`` is
#: a :class:`~wsvmgui.solvers.gram.Gram` (rows of a shared matrix, or values made on the
#: fly); ``np.asarray(K)`` gives the dense (n, n) matrix to an engine that needs one.  An
#: engine with the attribute ``kernel_free = True`` can work on values made on the fly (it
#: never asks for the dense matrix).  With sample weights the engine is also given
#: ``sample_weight=`` (n,) (the named engines take it).
Engine = Callable[..., Any]


def named_engine(name: str, solver: str = "libsvm") -> Engine:
    """:func:`~wsvmgui.ladder.engines.make_engine` of ``name``, marked ``kernel_free``
    when it never needs the dense kernel matrix (the grid engine with libsvm)."""
    engine = make_engine(name, solver=solver)
    engine.kernel_free = name == "grid" and solver == "libsvm"  # type: ignore[attr-defined]
    return engine


@dataclass(frozen=True)
class LadderRun:
    """What every task of one run reads.

    Attributes
    ----------
    X : ndarray, shape (n, p)
    storage : KernelStorage
    held : list of ndarray or None
        None when a dense matrix holds all rows of ``X`` (or none is held); else the data
        rows of each part's own dense matrix (per fold, or the final rows).
    payload : object
        What the run's tasks need beyond the kernel (the search's problems and grids, or
        the final fits' rows).
    """

    X: np.ndarray
    storage: KernelStorage
    held: list[np.ndarray] | None = None
    payload: Any = None


def run_gram(run: LadderRun, token: str, kernel: Kernel, rows: np.ndarray, part: int = 0) -> Gram:
    """The kernel matrix of the data rows ``rows`` as ``run`` holds it in this process.

    Dense: rows of the run's shared matrix (of all rows, or of part ``part``'s rows),
    built once per process under ``token``; else values made on the fly.
    """
    if not run.storage.dense:
        return OnTheFlyGram(run.X, kernel, rows, run.storage.cache_mb)
    if run.held is None:
        return DenseGram(shared_kernel(token, run.X, kernel), rows)
    held = run.held[part]
    K = shared_kernel(token, run.X[held], kernel, part)
    return HeldGram(K, run.X, kernel, held, positions(held, rows))


def engine_plan(
    executor: Executor,
    X: np.ndarray,
    n_fit: int,
    n_weights: int,
    n_held: int,
    n_shared: int,
    engine: Engine | str,
    solver: str,
    what: str,
) -> tuple[KernelStorage, Engine | str]:
    """The kernel storage of a run, and the engine to run it with.

    An engine that can use rows of one shared matrix in place (the grid with libsvm) is
    planned with that matrix (``n_shared`` rows); others (the path, the QP solver) with
    a matrix of their own rows (``n_held`` rows, and a copy where they are fewer).  If
    the path's plan does not fit, the grid engine takes over (said in the storage's
    note): with the shared matrix, or with kernel values made on the fly.
    """
    if not isinstance(engine, str):
        kernel_free = bool(getattr(engine, "kernel_free", False))
        held = n_shared if kernel_free else n_held
        return plan_storage(
            executor, X, n_fit, n_weights, kernel_free=kernel_free, what=what, n_held=held
        ), engine
    grid_free = solver == "libsvm"
    if engine == "grid":
        held = n_shared if grid_free else n_held
        return plan_storage(
            executor, X, n_fit, n_weights, kernel_free=grid_free, what=what, n_held=held
        ), engine
    try:
        return plan_storage(
            executor, X, n_fit, n_weights, kernel_free=False, what=what, n_held=n_held,
            path=True,
        ), engine  # fmt: skip
    except MemoryBudgetError:
        if not grid_free:
            raise
    storage = plan_storage(
        executor, X, n_fit, n_weights, kernel_free=True, what=what, n_held=n_shared
    )
    note = f"grid ladder of {n_weights} weights instead of the {engine} engine, " + (
        "which needs a dense kernel matrix"
        if not storage.dense
        else "whose matrix and storage would not fit"
    )
    return replace(storage, note=note), "grid"


def plan_storage(
    executor: Executor,
    X: np.ndarray,
    n_fit: int,
    n_weights: int,
    *,
    kernel_free: bool,
    what: str,
    n_held: int | None = None,
    path: bool = False,
) -> KernelStorage:
    """:func:`~wsvmgui.solvers.memory.ladder_storage` for the processes of ``executor``."""
    limit, slots = executor.memory_slots()
    cluster = isinstance(executor, ClusterExecutor)
    forced = forced_available()  # memory_limits() holds for a cluster's workers too
    available = forced if forced is not None else limit if cluster else available_memory()
    return ladder_storage(
        X.shape[0],
        X.shape[1],
        n_fit,
        n_weights,
        slots,
        available,
        kernel_free=kernel_free,
        cluster=cluster,
        what=what,
        n_held=n_held,
        path=path,
    )
