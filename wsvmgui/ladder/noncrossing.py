"""The non-crossing weight ladder of Wu & Liu (2011) (METHODS section 3).

The weights are fitted from the one nearest 1/2 outwards.  The first is a plain weighted
SVM; every later fit is constrained not to cross its already-fitted neighbour inside the
convex hull of the training inputs (see :mod:`wsvmgui.ladder.noncrossing_qp`).  When the
unconstrained fit at a weight already meets those constraints it is also the constrained
optimum and is kept (counted as a "shortcut" in the diagnostics).

Two engines give the same ladder (to the solvers' tolerances, tested):

``"path"`` (default)
    The unconstrained fits are read off the exact weight path (one per lambda), and a fit
    that crosses its neighbour is repaired by an exact active-set method warm-started
    from the path's solution (:mod:`wsvmgui.ladder.noncrossing_frompath`).
``"sequential"``
    The reference: one libsvm fit per weight, and Clarabel's QP wherever it crosses
    (:mod:`wsvmgui.ladder.noncrossing_sequential`).

Guarantee: for the linear kernel no two boundaries cross, and every point's signs are
monotone in pi, anywhere in the convex hull of the training inputs.  For a kernel the same
holds in the hull of the training points' kernel rows (Wu & Liu section 3.2): at the
training points and on every segment between two of them in feature space; input points
between training points are not covered (see :mod:`wsvmgui.ladder.crossing`).  Every
constrained fit is checked (KKT residual or duality gap, and the rows it had to meet),
and the finished ladder is checked once more: every training point's signs must be
monotone in pi (with the vertex constraints, the default).  A path-engine ladder that
fails that check is fitted again by the sequential engine (said in the notes); the
sequential engine's failing it raises :class:`~wsvmgui.errors.SolverError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError, SolverError
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel
from ..solvers.wsvm import DEFAULT_KKT_TOL
from .crossing import CrossingReport, crossing_diagnostics
from .grid import Ladder
from .hull_edges import hull_edges
from .noncrossing_frompath import PathFitter
from .noncrossing_qp import DEFAULT_EPS, DEFAULT_GAP_TOL
from .noncrossing_sequential import SequentialFitter
from .noncrossing_types import FitRecord, WeightFit
from .rules import LadderEstimate, estimate_from_decision, signs_are_monotone
from .weights import check_weights, full_grid

CONSTRAINTS = ("auto", "hull", "pairs", "compact")
#: How the non-crossing estimator chooses lambda (and sigma); see its ``criterion``.
CRITERIA = ("egkl-independent", "egkl", "hinge")
#: Engines of the ladder (module docstring).
ENGINES = ("path", "sequential")
#: Largest number of explicit pair rows per fit before the exact compact form is used
#: (measured with the full-kernel QP: 2548 explicit rows cost 4x the time of the compact
#: form at n = 100, 10100 rows 13x at n = 200, for the same answer).
DEFAULT_MAX_CONSTRAINTS = 2_000


@dataclass(frozen=True)
class NonCrossingLadder:
    """A fitted non-crossing ladder.

    Attributes
    ----------
    ladder : Ladder
        Kernel-expansion form over the training points (for the linear kernel the
        minimum-norm coefficients with ``X' c = w``), usable wherever a Ladder is.
    kernel : Kernel
    X_train : ndarray, shape (n, p)
    lams : ndarray, shape (M - 1,)
        Lambda of each weight.
    linear_coef : ndarray, shape (M - 1, p), or None
        ``w`` of each fit for the linear kernel.
    records : list of FitRecord
        In weight order.
    diagnostics : dict
        Constraint mode requested and used, notes, counts and worst checks.
    """

    ladder: Ladder
    kernel: Kernel
    X_train: np.ndarray
    lams: np.ndarray
    linear_coef: np.ndarray | None
    records: list[FitRecord] = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)

    @property
    def weights(self) -> np.ndarray:
        """Interior weights, shape (M - 1,)."""
        return self.ladder.weights

    def decision_at(self, X: np.ndarray) -> np.ndarray:
        """Decision values of every fit at ``X`` (m, p); shape (m, M - 1)."""
        X = np.asarray(X, dtype=float)
        if self.linear_coef is not None:
            return X @ self.linear_coef.T + self.ladder.intercept[None, :]
        return self.ladder.decision(self.kernel(X, self.X_train))

    def decision(self, K_cross: np.ndarray) -> np.ndarray:
        """Decision values from the kernel to the training points, (m, n) -> (m, M - 1)."""
        return self.ladder.decision(K_cross)

    def estimate(self, X: np.ndarray, rule: str = "count") -> LadderEstimate:
        """Probabilities and brackets at ``X`` (m, p) by ``rule`` (:func:`estimate_with_ends`)."""
        return estimate_with_ends(self.decision_at(X), self.weights, rule)

    def crossing(self, space: str | None = None, **kwargs) -> CrossingReport:
        """:func:`~wsvmgui.ladder.crossing.crossing_diagnostics` on this ladder.

        ``space`` defaults to ``"input"`` for the linear kernel and ``"feature"`` otherwise
        (where the guarantee holds).
        """
        if space is None:
            space = "input" if self.kernel.name == "linear" else "feature"
        return crossing_diagnostics(
            self.decision_at, self.X_train, self.weights, space=space, **kwargs
        )


@dataclass(frozen=True)
class KernelRowsView:
    """A fitted non-crossing ladder as the tuning search scores it: by kernel rows.

    Attributes
    ----------
    model : NonCrossingLadder
    """

    model: NonCrossingLadder
    engine: ClassVar[str] = "noncrossing"

    def estimate(self, K_cross: np.ndarray, rule: str = "count") -> LadderEstimate:
        """Estimates at new points from their kernel rows ``K_cross`` (m, n); shape (m,)."""
        return estimate_with_ends(self.model.decision(K_cross), self.model.weights, rule)


def fitting_order(weights: np.ndarray) -> list[tuple[int, int | None, int]]:
    """Fitting order from the weight nearest 1/2 outwards.

    Returns
    -------
    list of (k, previous k or None, direction)
        ``direction`` is +1 when ``weights[k]`` is larger than its previous neighbour.
    """
    w = np.asarray(weights, dtype=float)
    k0 = int(np.argmin(np.abs(w - 0.5)))
    order: list[tuple[int, int | None, int]] = [(k0, None, 0)]
    order += [(k, k - 1, 1) for k in range(k0 + 1, w.size)]
    order += [(k, k + 1, -1) for k in range(k0 - 1, -1, -1)]
    return order


def _weighted_hinge(f: np.ndarray, y: np.ndarray, pi: float) -> float:
    S = np.where(y > 0, 1.0 - pi, pi)
    return float(np.mean(S * np.maximum(1.0 - y * f, 0.0)))


def _resolve_mode(constraints: str, kernel: Kernel, X: np.ndarray):
    if constraints not in CONSTRAINTS:
        raise InputError(
            f"unknown constraints {constraints!r}; choose one of {', '.join(CONSTRAINTS)}"
        )
    if constraints == "hull" and kernel.name != "linear":
        raise InputError(
            "constraints='hull' uses the input-space hull and applies to the linear kernel "
            "only; kernels use 'pairs' or 'compact'"
        )
    notes: list[str] = []
    hull = None
    if constraints in ("auto", "hull") and kernel.name == "linear":
        hull, why = hull_edges(X)
        if hull is None:
            notes.append(f"hull edges unavailable ({why}); using all separated pairs")
            return "pairs", None, notes
        return "hull", hull, notes
    return ("pairs" if constraints == "auto" else constraints), None, notes


def estimate_with_ends(
    decision: np.ndarray, weights: np.ndarray, rule: str = "count"
) -> LadderEstimate:
    """:func:`~wsvmgui.ladder.rules.estimate_from_decision`, with the ends of the weight range.

    ``rule="interpolate"`` reads ``p`` where the straight line between the decision values
    at the two weights around the sign change crosses zero.  For a point negative at every
    weight (or positive at every weight) that bracket reaches 0 (or 1), where the weighted
    SVM's limits are known: ``f = +1`` as pi -> 0 and ``f = -1`` as pi -> 1 (METHODS
    section 2); the line runs to those values instead of taking the bracket's midpoint.
    Other rules are passed through.

    Parameters
    ----------
    decision : ndarray, shape (m, M - 1)
    weights : ndarray, shape (M - 1,)
    rule : {"count", "extreme", "interpolate"}

    Returns
    -------
    LadderEstimate
    """
    est = estimate_from_decision(decision, weights, rule)
    if rule != "interpolate":
        return est
    D = np.atleast_2d(np.asarray(decision, dtype=float))
    grid = full_grid(weights)
    count = (D > 0).sum(axis=1)
    p = est.p.copy()
    low = count == 0  # f(0) = +1 > 0 >= f(pi_1)
    p[low] = grid[1] / (1.0 - D[low, 0])
    high = count == D.shape[1]  # f(pi_{M-1}) > 0 > f(1) = -1
    t = D[high, -1] / (D[high, -1] + 1.0)
    p[high] = grid[-2] + t * (1.0 - grid[-2])
    return LadderEstimate(p=p, lo=est.lo, hi=est.hi, monotone=est.monotone)


def fit_noncrossing_ladder(
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float | np.ndarray,
    kernel: Kernel,
    *,
    K: np.ndarray | None = None,
    engine: str = "path",
    constraints: str = "auto",
    max_constraints: int = DEFAULT_MAX_CONSTRAINTS,
    lam_grid: np.ndarray | None = None,
    X_tune: np.ndarray | None = None,
    y_tune: np.ndarray | None = None,
    shortcut: bool = True,
    vertex_constraints: bool = True,
    eps: float = DEFAULT_EPS,
    gap_tol: float = DEFAULT_GAP_TOL,
    kkt_tol: float = DEFAULT_KKT_TOL,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
) -> NonCrossingLadder:
    """Fit the non-crossing ladder.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    weights : ndarray, shape (M - 1,)
        Increasing interior weights.
    lam : float or ndarray of shape (M - 1,)
        Penalty of every weight (ignored when ``lam_grid`` is given).
    kernel : Kernel
    K : ndarray, shape (n, n), optional
        ``kernel(X)`` when already built (the tuning search shares one per sigma).
    engine : {"path", "sequential"}
        See the module docstring.
    constraints : {"auto", "hull", "pairs", "compact"}
        "auto": hull edges for the linear kernel in low dimension, otherwise separated
        pairs, replaced by the exact compact form above ``max_constraints`` rows.
    max_constraints : int
    lam_grid : ndarray, optional
        Per-weight choice of lambda by the weighted hinge loss on ``(X_tune, y_tune)``
        (Wu & Liu section 5), made in fitting order so every candidate respects the
        already chosen neighbour.
    X_tune, y_tune : ndarrays, shapes (m, p) and (m,), optional
    shortcut : bool
        Keep an unconstrained fit that already meets the constraints (exact; faster).
        The path engine always does.
    vertex_constraints : bool
        Also require the new fit to keep its sign at the training (hull) points on the
        previous fit's negative side (default; needed for monotone signs everywhere in the
        hull).  False gives the paper's constraint set, on the boundary only.
    eps, gap_tol, kkt_tol : float
        Constraint safety margin, QP duality-gap tolerance, KKT tolerance (libsvm fits,
        paths and repairs).
    progress, should_cancel
        Reported after every weighted fit; polled between fits.

    Returns
    -------
    NonCrossingLadder

    Raises
    ------
    SolverError
        A fit fails its check, or the finished ladder is not monotone at a training point
        (after the sequential engine's refit, for the path engine).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    weights = check_weights(weights)
    if engine not in ENGINES:
        raise InputError(f"unknown non-crossing engine {engine!r}; choose {', '.join(ENGINES)}")
    opts = _Options(
        engine=engine, constraints=constraints, max_constraints=max_constraints,
        shortcut=shortcut, vertex_constraints=vertex_constraints, eps=eps, gap_tol=gap_tol,
        kkt_tol=kkt_tol,
    )  # fmt: skip
    choice = _LambdaChoice.make(lam, weights.size, kernel, X, lam_grid, X_tune, y_tune)
    mode, hull, notes = _resolve_mode(constraints, kernel, X)
    K = kernel(X) if K is None else np.asarray(K, dtype=float)
    fitter = _fitter(opts, K, X, y, kernel.name == "linear", mode, hull, weights)
    done = _fit_in_order(fitter, weights, choice, X, kernel, notes, progress, should_cancel)
    if vertex_constraints:
        try:
            _check_monotone(np.column_stack([f.f_train for f in done]), weights)
        except SolverError as exc:
            if engine != "path":
                raise
            ref = fit_noncrossing_ladder(
                X, y, weights, lam, kernel, K=K, lam_grid=lam_grid, X_tune=X_tune,
                y_tune=y_tune, should_cancel=should_cancel,
                **replace(opts, engine="sequential").keywords(),
            )  # fmt: skip
            ref.diagnostics["notes"].insert(0, f"path engine: {exc}; refitted by the "
                                            "sequential engine")  # fmt: skip
            return ref
    return _assemble(done, weights, kernel, X, notes, opts, fitter)


@dataclass(frozen=True)
class _Options:
    """The options of :func:`fit_noncrossing_ladder` that every fit of a ladder shares."""

    engine: str
    constraints: str
    max_constraints: int
    shortcut: bool
    vertex_constraints: bool
    eps: float
    gap_tol: float
    kkt_tol: float

    def keywords(self) -> dict[str, Any]:
        """As keywords of :func:`fit_noncrossing_ladder`."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class _LambdaChoice:
    """Lambda of every weight: fixed (``lams``, shape (M - 1,)), or chosen per weight
    among ``options`` by the weighted hinge loss on the tuning rows (their kernel rows
    ``K_tune`` (m, n) and labels ``y_tune`` (m,))."""

    lams: np.ndarray | None
    options: list[float]
    K_tune: np.ndarray | None = None
    y_tune: np.ndarray | None = None

    @classmethod
    def make(cls, lam, m, kernel, X, lam_grid, X_tune, y_tune) -> _LambdaChoice:
        """Checked; ``m`` weights, training inputs ``X`` (n, p)."""
        if lam_grid is None:
            lams = np.broadcast_to(np.asarray(lam, dtype=float), (m,)).copy()
            if not np.all(np.isfinite(lams) & (lams > 0)):
                raise InputError(f"lambda must be a positive number, got {lam!r}")
            return cls(lams, [])
        if X_tune is None or y_tune is None:
            raise InputError("per-weight tuning of lambda needs a tuning set")
        options = [float(v) for v in np.ravel(lam_grid)]
        K_tune = kernel(np.asarray(X_tune, dtype=float), X)
        return cls(None, options, K_tune, np.asarray(y_tune, dtype=float))

    @property
    def per_weight(self) -> int:
        """Fits per weight."""
        return 1 if self.lams is not None else len(self.options)

    def candidates(self, k: int) -> list[float]:
        """Lambdas to try at weight ``k``."""
        return [float(self.lams[k])] if self.lams is not None else self.options

    def hinge(self, fit: WeightFit, pi: float) -> float:
        """The weighted hinge loss of ``fit`` at weight ``pi`` on the tuning rows."""
        assert self.K_tune is not None and self.y_tune is not None
        return _weighted_hinge(self.K_tune @ fit.coef + fit.intercept, self.y_tune, pi)


def _fitter(opts: _Options, K, X, y, linear, mode, hull, weights) -> SequentialFitter:
    """The engine's fitter of one weight at a time."""
    common = dict(
        K=K, X=X, y=y, linear=linear, mode=mode, hull=hull,
        max_constraints=opts.max_constraints, shortcut=opts.shortcut,
        vertex=opts.vertex_constraints, eps=opts.eps, gap_tol=opts.gap_tol,
        kkt_tol=opts.kkt_tol,
    )  # fmt: skip
    if opts.engine == "path":
        return PathFitter(**common, weights=weights)
    return SequentialFitter(**common)


def _fit_in_order(
    fitter: SequentialFitter,
    weights: np.ndarray,
    choice: _LambdaChoice,
    X: np.ndarray,
    kernel: Kernel,
    notes: list[str],
    progress: ProgressCallback | None,
    should_cancel: CancelCheck | None,
) -> list[WeightFit]:
    """Every weight's fit, made in :func:`fitting_order`, in weight order; each fit's note
    added to ``notes``, progress reported after each fit."""
    tracker = ProgressTracker(weights.size * choice.per_weight, progress, should_cancel)
    tracker.check()
    fits: list[WeightFit | None] = [None] * weights.size
    for step, (k, prev, direction) in enumerate(fitting_order(weights)):
        pi = float(weights[k])
        f_prev = None if prev is None else fits[prev].f_train  # type: ignore[union-attr]
        best: WeightFit | None = None
        best_score = np.inf
        for lam_k in choice.candidates(k):
            fit = fitter.fit(step, pi, lam_k, f_prev, direction)
            tracker.step(partial=_event(fit, pi, lam_k, X, kernel))
            if choice.lams is not None:
                best = fit
                break
            score = choice.hinge(fit, pi)
            if best is None or score < best_score - 1e-12:
                best, best_score = fit, score
        assert best is not None
        fits[k] = best
        if best.record.note and best.record.note not in notes:
            notes.append(best.record.note)
    return [f for f in fits if f is not None]


def _assemble(
    done: list[WeightFit],
    weights: np.ndarray,
    kernel: Kernel,
    X: np.ndarray,
    notes: list[str],
    opts: _Options,
    fitter: SequentialFitter,
) -> NonCrossingLadder:
    """The ladder of the weights' fits ``done`` (in weight order); ``notes`` and the
    fitter's notes go into its diagnostics."""
    for note in getattr(fitter, "notes", []):
        if note not in notes:
            notes.append(note)
    coef = np.vstack([f.coef for f in done])
    intercept = np.array([f.intercept for f in done])
    records = [f.record for f in done]
    lams = np.array([r.lam for r in records])
    linear_coef = coef @ X if kernel.name == "linear" else None
    lam_single = float(lams[0]) if np.all(lams == lams[0]) else float("nan")
    checks = np.array([r.check for r in records])
    ladder = Ladder(
        weights=weights, lam=lam_single, coef=coef, intercept=intercept, kkt_residual=checks
    )
    diagnostics = _diagnostics(records, notes, opts, getattr(fitter, "n_paths", 0))
    return NonCrossingLadder(ladder, kernel, X, lams, linear_coef, records, diagnostics)


def _check_monotone(F: np.ndarray, weights: np.ndarray) -> None:
    """Every training point's signs must be non-increasing in pi; F (n, M - 1)."""
    bad = np.flatnonzero(~signs_are_monotone(F > 0))
    if bad.size:
        raise SolverError(
            f"non-crossing ladder: the signs of {bad.size} training point(s) are not "
            f"monotone in pi (first: point {bad[0]}); a constrained fit is wrong"
        )


def _diagnostics(records, notes, opts: _Options, n_paths: int) -> dict:
    """The ladder's diagnostics (:attr:`NonCrossingLadder.diagnostics`)."""
    qp = [r for r in records if r.method == "qp"]
    repaired = [r for r in records if r.method == "active-set"]
    return {
        "engine": opts.engine,
        "constraints_requested": opts.constraints,
        "constraints_used": sorted({r.mode for r in records if r.mode}),
        "notes": notes,
        "n_fits": len(records),
        "n_paths": int(n_paths),
        "n_qp": len(qp),
        "n_active_set": len(repaired),
        "n_shortcut": sum(r.method == "shortcut" for r in records),
        "n_events": int(sum(r.n_events for r in records)),
        "max_rows": max((r.n_rows for r in records), default=0),
        "total_rows": int(sum(r.n_rows for r in records)),
        "n_active": int(sum(r.n_active for r in records)),
        "max_duality_gap": max((abs(r.gap) for r in qp + repaired), default=0.0),
        "max_kkt_residual": max((r.check for r in records if r.method != "qp"), default=0.0),
        "max_violation": max((r.violation for r in records), default=0.0),
        "eps": opts.eps,
        "vertex_constraints": opts.vertex_constraints,
    }


def _event(fit: WeightFit, pi: float, lam: float, X: np.ndarray, kernel: Kernel):
    """A progress event for live views: the fit as a WeightedFit over the rows of X."""
    from ..solvers.wsvm import WeightedFit, penalty_to_C
    from .grid import FitEvent

    wf = WeightedFit(
        pi,
        lam,
        penalty_to_C(lam, X.shape[0]),
        np.abs(fit.coef),
        fit.coef,
        float(fit.intercept),
        float(fit.record.check),
    )
    return FitEvent("final", wf, X, kernel)
