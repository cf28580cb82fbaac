"""The exact solution path of the binary weighted SVM in the weight pi (Wang, Shen & Liu 2008).

METHODS sections 1 and 2.  For one kernel and penalty ``lambda`` (``C = 1/(2 n lambda)``)
:func:`fit_path` solves the weighted SVM for every ``pi`` in (0, 1) at once: the dual is
piecewise linear in pi, and between breakpoints only the points on the elbow
(``y f = 1``) move, by a linear system.  The result, a :class:`WeightPath`, gives the
coefficients at any weight and grid-free probabilities (the measure of
``{pi : f_pi(x) > 0}``) at any point.  The derivation (elbow system, events, the start
at pi = 0, the ends, the ridge for numerically singular kernels, storage and cost) is in
``docs/notes/path.md``.

This is the package front; the work is done in

* :mod:`wsvmgui.ladder.path_start`: the exact start at pi = 0 (the limit problem, solved
  by a homotopy), with libsvm polished at a weight as the fallback;
* :mod:`wsvmgui.ladder.path_tracer`: the tracer (sets, running sums, the elbow system's
  updated Cholesky factor, :mod:`wsvmgui.ladder.path_linalg`) around the compiled steps
  (:mod:`wsvmgui.ladder._path_kernel`);
* :mod:`wsvmgui.ladder.path_rows`: the kernel as the tracer reads it, a dense matrix or
  only the rows of the elbow points made from the features (no n x n matrix);
* :mod:`wsvmgui.ladder.path_assemble` and :mod:`wsvmgui.ladder.path_result`: the
  breakpoints as one :class:`WeightPath`, its coefficients and estimates.

Every path is checked before it is returned (the KKT conditions after every step inside,
and independently at ``n_checks`` weights against the kernel itself); any failure raises
:class:`PathBreakdown` naming why, pi and lambda, and callers fall back to the grid
ladder (:mod:`wsvmgui.ladder.engines`).  Everything that moved out of this module is
re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from ..errors import InputError
from ..progress import CancelCheck, ProgressCallback
from ..solvers.gram import Gram, OnTheFlyGram
from ..solvers.wsvm import DEFAULT_KKT_TOL, kkt_residuals, penalty_to_C, sample_bounds
from .path_assemble import _assemble, _expand, _Flat
from .path_linalg import DEFAULT_RANK_TOL
from .path_result import BLOCK, WeightPath, _Block, _kernel_arg
from .path_rows import DenseRows, FeatureGram, FeatureRows, KernelRows
from .path_start import START_TOL, clone, libsvm_start, limit_start
from .path_tracer import (
    DEFAULT_PATH_TOL,
    DUAL_TOL,
    E_SET,
    END_ABS,
    END_TIE,
    END_TOL,
    L_SET,
    PROGRESS_UNITS,
    R_SET,
    REFACTOR_EVERY,
    REFACTOR_TOL,
    REFINE_TOL,
    SUM_REFRESH,
    YIELD_EVERY,
    PathBreakdown,
    PathTooCostly,
    _breakdown,
    _Limits,
    _Progress,
    _Records,
)

#: Default ridge, relative to the largest kernel diagonal entry (see :func:`fit_path`).
DEFAULT_RIDGE = 1e-6
#: Elbow size (fraction of n) past which the grid ladder is expected cheaper (auto_max_elbow).
AUTO_ELBOW_FRACTION = 0.2
#: Fewest kernel rows a path on kernel values made on the fly may hold.
MIN_ROWS = 64

__all__ = [
    "AUTO_ELBOW_FRACTION",
    "BLOCK",
    "DEFAULT_PATH_TOL",
    "DEFAULT_RIDGE",
    "MIN_ROWS",
    "DUAL_TOL",
    "END_ABS",
    "END_TIE",
    "END_TOL",
    "E_SET",
    "L_SET",
    "PROGRESS_UNITS",
    "REFACTOR_EVERY",
    "REFACTOR_TOL",
    "REFINE_TOL",
    "R_SET",
    "START_TOL",
    "SUM_REFRESH",
    "YIELD_EVERY",
    "PathBreakdown",
    "PathTooCostly",
    "WeightPath",
    "_Block",
    "_kernel_arg",
    "auto_max_elbow",
    "duplicate_groups",
    "duplicate_rows",
    "fit_path",
]


# ----------------------------------------------------------------------------------------
# Duplicates
# ----------------------------------------------------------------------------------------
def duplicate_groups(K: np.ndarray, y: np.ndarray, tol: float = 1e-13) -> np.ndarray:
    """Representative of each point: the first point with the same label and feature vector.

    Points ``i, j`` coincide when ``K_ii + K_jj - 2 K_ij <= tol (K_ii + K_jj)``.  Candidates
    are found by sorting a random projection of the kernel rows (O(n^2) once).

    Parameters
    ----------
    K : ndarray, shape (n, n)
    y : ndarray, shape (n,)

    Returns
    -------
    ndarray of intp, shape (n,)
        ``rep[i] <= i``; ``rep[i] == i`` for the first point of each group.
    """
    n = y.size
    rep = np.arange(n)
    r = np.random.default_rng(20081).standard_normal(n)
    # |K_ij| <= max K_ii for a PSD kernel, so the offset keeps the labels apart (the
    # exact test below checks labels anyway).
    fp = K @ r + 1e3 * y * (float(np.abs(np.diag(K)).max()) * np.abs(r).sum() + 1.0)
    order = np.lexsort((np.arange(n), fp))
    fs = fp[order]
    close = np.diff(fs) <= 1e-10 * (np.abs(fs[:-1]) + 1.0)
    if not close.any():
        return rep
    diag = np.diag(K)
    # Runs of consecutive close fingerprints; check pairs inside each run.
    starts = np.flatnonzero(np.diff(np.concatenate([[0], close.astype(int), [0]])) == 1)
    ends = np.flatnonzero(np.diff(np.concatenate([[0], close.astype(int), [0]])) == -1)
    for s, e in zip(starts, ends, strict=True):
        run = np.sort(order[s : e + 1])
        for a_pos, i in enumerate(run):
            if rep[i] != i:
                continue
            js = run[a_pos + 1 :]
            js = js[(rep[js] == js) & (y[js] == y[i])]
            if js.size == 0:
                continue
            d = diag[i] + diag[js] - 2.0 * K[i, js]
            same = js[d <= tol * (diag[i] + diag[js])]
            rep[same] = i
    return rep


def duplicate_rows(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`duplicate_groups` from the features: points with equal label and feature vector.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)

    Returns
    -------
    ndarray of intp, shape (n,)
        ``rep[i] <= i``; ``rep[i] == i`` for the first point of each group.
    """
    _, first, inverse = np.unique(
        np.column_stack([y, X]), axis=0, return_index=True, return_inverse=True
    )
    return first[np.ravel(inverse)].astype(np.intp)


# ----------------------------------------------------------------------------------------
# Fitting
# ----------------------------------------------------------------------------------------
def _check_labels(y: np.ndarray, lam: float) -> tuple[np.ndarray, float]:
    y = np.asarray(y, dtype=float).ravel()
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise InputError("weighted SVM labels must be -1 and +1")
    if not ((y > 0).any() and (y < 0).any()):
        raise InputError("the weighted SVM needs points of both classes")
    return y, penalty_to_C(lam, y.size)


def _check_kernel(K: np.ndarray, n: int) -> np.ndarray:
    # The compiled steps take writeable arrays: a read-only K (a memory map, a shared
    # matrix frozen by its owner) is copied once here.
    K = _kernel_arg(K, np.float64)
    if K.shape != (n, n):
        raise InputError(f"kernel matrix has shape {K.shape}, expected ({n}, {n})")
    if not np.isfinite(K.sum()) and not np.all(np.isfinite(K)):  # (the sum: no n x n temporary)
        raise InputError("kernel matrix has NaN or infinite entries")
    return K


def auto_max_elbow(n: int) -> int:
    """Elbow size beyond which the grid ladder is expected to be cheaper than the path.

    ``AUTO_ELBOW_FRACTION * n`` (at least 50).  Measured (``benchmarks/results/
    path_speed.md``, CPU, RBF with sigma_M): paths whose largest elbow stays below 0.2 n
    cost 0.1-0.75 of the default grid ladder; those above (``wang2008_ex1``, elbows up to
    0.4 n near the ends, probabilities flat at 0.2 / 0.8) 1.05-2 of it, and they pass
    0.2 n after only 13-21 % of their work, so stopping there wastes little.

    Parameters
    ----------
    n : int
        Number of training points.
    """
    return max(50, int(AUTO_ELBOW_FRACTION * n))


@dataclass(frozen=True)
class _Problem:
    """The merged problem and the tracing settings shared by every attempt."""

    rows: KernelRows
    y: np.ndarray
    w: np.ndarray
    C: float
    lam: float
    start: float | None
    steps: int
    rank_tol: float
    path_tol: float
    report: _Progress
    limits: _Limits
    starts: dict[float, tuple[np.ndarray, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class _TraceInfo:
    """Diagnostics of a traced path (see :class:`WeightPath`)."""

    path_residual: float
    dual_residual: float
    max_elbow: int
    ridge: float


def _merged(
    K: np.ndarray | Gram, y: np.ndarray, max_rows: int | None
) -> tuple[KernelRows, np.ndarray | Gram, np.ndarray]:
    """The merged problem's kernel rows, the original kernel (for the check), ``rep``."""
    n = y.size
    if isinstance(K, OnTheFlyGram):
        if K.n != n:
            raise InputError(f"kernel of {K.n} rows for {n} labels")
        rep = duplicate_rows(K.X, y)
        reps = np.flatnonzero(rep == np.arange(n))
        cap = (
            max_rows if max_rows is not None else max(int(K.cache_mb * 2**20) // (8 * n), MIN_ROWS)
        )
        return FeatureRows(K.X[reps], K.kernel, cap), FeatureGram(K.X, K.kernel), rep
    Kd = _check_kernel(np.asarray(K), n)
    rep = duplicate_groups(Kd, y)
    reps = np.flatnonzero(rep == np.arange(n))
    Ku = Kd if reps.size == n else np.ascontiguousarray(Kd[np.ix_(reps, reps)])
    return DenseRows(Ku), Kd, rep


def fit_path(
    K: np.ndarray | Gram,
    y: np.ndarray,
    lam: float,
    *,
    kkt_tol: float = DEFAULT_KKT_TOL,
    path_tol: float = DEFAULT_PATH_TOL,
    n_checks: int = 16,
    max_steps: int | None = None,
    start: float | None = None,
    rank_tol: float = DEFAULT_RANK_TOL,
    ridge: float | None = None,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    max_elbow: int | None = None,
    max_rows: int | None = None,
) -> WeightPath:
    """The exact solution path of the weighted SVM over pi in (0, 1), checked.

    Parameters
    ----------
    K : ndarray, shape (n, n), or Gram
        Kernel matrix of the training inputs (symmetric positive semi-definite), or a
        :class:`~wsvmgui.solvers.gram.Gram` of them: an
        :class:`~wsvmgui.solvers.gram.OnTheFlyGram` is never made dense (the path holds
        the kernel rows of its elbow points only, :mod:`wsvmgui.ladder.path_rows`), any
        other is taken as its dense matrix.
    y : ndarray, shape (n,)
        Labels in {-1, +1}, both present.
    lam : float
        Penalty lambda > 0; ``C = 1 / (2 n lambda)``.
    kkt_tol : float
        Largest KKT residual (:func:`~wsvmgui.solvers.wsvm.kkt_residuals`, margin units)
        accepted at the independent checkpoints.
    path_tol : float
        Largest KKT violation accepted at any step inside the path.
    n_checks : int
        Independent checkpoints: seven fixed weights (0.01 ... 0.99), the rest spread over
        the breakpoints (``2 n_checks n^2`` flops; on the fly also kernel values).
    max_steps : int, optional
        Most steps per direction (default ``50 n + 1000``).
    start : float or None
        None (default): the exact start at pi = 0 (:func:`~wsvmgui.ladder.path_start.
        limit_start`), then one trace to pi = 1; libsvm at pi = 1/2 (polished) only if that
        start cannot be solved.  A weight: libsvm there, polished (two nearby weights are
        tried if polishing fails), then both directions.
    rank_tol : float
        Relative pivot below which a point counts as dependent on the elbow.
    ridge : float or None
        ``None`` (default): trace the exact path of ``K``; if that breaks down (elbow
        systems too ill-conditioned, typically a smooth kernel with a large elbow), trace
        again for ``K + eps I`` with ``eps = DEFAULT_RIDGE * max K_ii``.  A number: use
        ``eps = ridge * max K_ii`` directly (0 for the exact path only).  The KKT residual
        for ``K`` of a path traced with ``eps`` is at most ``eps C`` above the exact one
        (``docs/notes/path.md``); the independent check always uses ``K``.
    progress, should_cancel : callable, optional
        ``progress(done, 1000, None)`` with the permille of (0, 1) covered so far;
        ``should_cancel()`` polled every ``YIELD_EVERY`` steps (True raises Cancelled).
    max_elbow : int, optional
        Stop with :class:`PathTooCostly` as soon as more points than this sit on the elbow
        (after merging duplicates): large elbows make the path slower than the grid ladder;
        :func:`auto_max_elbow` is the measured limit (the "auto" engine).  Deterministic.
    max_rows : int, optional
        On the fly only: most kernel rows held (``8 n max_rows`` bytes; default the
        Gram's ``cache_mb`` worth, at least :data:`MIN_ROWS`); an elbow that needs more
        raises :class:`PathTooCostly`.

    Returns
    -------
    WeightPath

    Raises
    ------
    PathBreakdown
        Too many steps, cycling, an elbow system that cannot be solved accurately, a failed
        limit at pi = 0 or 1 or KKT check; the message names why, pi and lambda.
        :class:`PathTooCostly` (a subclass) when ``max_elbow`` or ``max_rows`` is exceeded.
    """
    y, C = _check_labels(y, lam)
    n = y.size
    rows, K_check, rep = _merged(K, y, max_rows)
    report = _Progress(progress, should_cancel)
    report(0.0)
    reps = np.flatnonzero(rep == np.arange(n))
    mult = np.bincount(rep, minlength=n)[reps]
    steps = int(max_steps) if max_steps is not None else 50 * n + 1000
    limits = _Limits(max_elbow=np.inf if max_elbow is None else float(max_elbow))
    prob = _Problem(
        rows, y[reps], mult.astype(float), C, float(lam), start, steps, rank_tol, path_tol,
        report, limits,
    )  # fmt: skip
    scale = float(np.abs(rows.diag).max())
    attempts = [0.0, DEFAULT_RIDGE * scale] if ridge is None else [float(ridge) * scale]
    flat, info = _attempts(prob, attempts)
    if reps.size < n:
        flat = _expand(flat, rep, reps, mult)
    path = _result(flat, info, y, float(lam), C, int(n - reps.size), limits.work)
    resid = _verify(path, K_check, n_checks, kkt_tol)
    report(1.0)
    return replace(path, kkt_residual=resid)


def _result(
    flat: _Flat, info: _TraceInfo, y: np.ndarray, lam: float, C: float, dups: int, work: float
) -> WeightPath:
    """The path of the original points, not yet checked (``kkt_residual`` NaN)."""
    return WeightPath(
        lam=lam,
        C=C,
        y=y.copy(),
        **{f.name: getattr(flat, f.name) for f in fields(flat)},
        kkt_residual=float("nan"),
        n_duplicates=dups,
        path_residual=info.path_residual,
        dual_residual=info.dual_residual,
        max_elbow=info.max_elbow,
        ridge=info.ridge,
        work=work,
    )


def _attempts(prob: _Problem, ridges: list[float]) -> tuple[_Flat, _TraceInfo]:
    """Trace with each ridge in turn until one succeeds (the first failure is named).

    The failures are held in a list emptied on the way out: an exception kept in a local
    of this frame would form a cycle with its traceback (which holds this frame and,
    through the callers' frames, the kernel matrix) that lives until the cyclic garbage
    collector runs, keeping a fold's matrix beside the next one.
    """
    failures: list[PathBreakdown] = []
    try:
        for eps in ridges:
            try:
                return _trace(prob, eps)
            except PathTooCostly:
                raise
            except PathBreakdown as exc:
                failures.append(exc)
        if len(failures) == 1:
            raise failures[0]
        raise PathBreakdown(
            f"{failures[-1]} (exact path failed first: {failures[0]})"
        ) from failures[-1]
    finally:
        failures.clear()


def _trace(prob: _Problem, eps: float) -> tuple[_Flat, _TraceInfo]:
    """One attempt with ridge ``eps``: the exact start at pi = 0 (libsvm if it cannot be
    solved, or when ``prob.start`` names a weight), then the trace."""
    if prob.start is None:
        try:
            tr = limit_start(
                prob.rows, prob.y, prob.w, prob.C, prob.lam, prob.rank_tol, prob.path_tol, eps,
                prob.report, prob.limits, prob.steps,
            )  # fmt: skip
        except PathTooCostly:
            raise
        except PathBreakdown:
            return _trace_both(prob, eps, 0.5)
        state0 = tr.state.copy()
        up = tr.trace(1.0, prob.steps, prob.report, 0.0, 0.0, prob.limits)
        info = _TraceInfo(tr.max_margin, tr.max_dual, tr.max_elbow, eps)
        return _assemble(_Records.single(0.0, 1.0), up, state0, prob.y.size), info
    return _trace_both(prob, eps, prob.start)


def _trace_both(prob: _Problem, eps: float, start: float) -> tuple[_Flat, _TraceInfo]:
    """libsvm's start at ``start`` (polished) and both directions with ridge ``eps``."""
    errors: list[PathBreakdown] = []  # emptied on the way out (see _attempts)
    try:
        for pi0 in (start, start - 0.0371, start + 0.0433):
            try:
                tr_up = libsvm_start(
                    prob.rows, prob.y, prob.w, prob.C, prob.lam, pi0, prob.rank_tol,
                    prob.path_tol, eps, prob.starts,
                )  # fmt: skip
                break
            except PathBreakdown as exc:
                errors.append(exc)
        else:
            raise errors[-1]
    finally:
        errors.clear()
    tr_down = clone(tr_up)
    up = tr_up.trace(1.0, prob.steps, prob.report, 0.0, pi0, prob.limits)
    down = tr_down.trace(-1.0, prob.steps, prob.report, 1.0 - pi0, pi0, prob.limits)
    info = _TraceInfo(
        path_residual=max(tr_up.max_margin, tr_down.max_margin),
        dual_residual=max(tr_up.max_dual, tr_down.max_dual),
        max_elbow=max(tr_up.max_elbow, tr_down.max_elbow),
        ridge=eps,
    )
    return _assemble(down, up, tr_down.state, prob.y.size), info


def _verify(path: WeightPath, K: np.ndarray | Gram, n_checks: int, kkt_tol: float) -> float:
    """Independent KKT check at fixed weights and at breakpoints; returns the largest residual."""
    fixed = np.array([0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99])
    inner = path.pis[(path.pis > 0) & (path.pis < 1)]
    n_bp = max(int(n_checks) - fixed.size, 0)
    if inner.size and n_bp:
        picks = inner[np.unique(np.linspace(0, inner.size - 1, n_bp).round().astype(int))]
    else:
        picks = np.empty(0)
    pis = np.unique(np.concatenate([fixed, picks]))
    coef, b = path.coef_matrix(pis)
    y = path.y
    upper = np.vstack([sample_bounds(y, p, path.C) for p in pis])
    resid = kkt_residuals(K, y, coef * y, b, upper)
    worst = int(np.argmax(resid))
    if not np.isfinite(resid[worst]) or resid[worst] > kkt_tol:
        raise _breakdown(
            f"KKT check failed: residual {resid[worst]:.3g} > tolerance {kkt_tol:.3g}",
            float(pis[worst]),
            path.lam,
        )
    return float(resid.max())
