"""The non-crossing weight ladder of Wu & Liu (2011) (METHODS section 3).

The weights are fitted from the one nearest 1/2 outwards.  The first is a plain weighted
SVM; every later fit is constrained not to cross its already-fitted neighbour inside the
convex hull of the training inputs (see :mod:`wsvmgui.ladder.noncrossing_qp`).  When the
unconstrained fit at a weight already meets those constraints it is also the constrained
optimum and is kept without a QP (counted as a "shortcut" in the diagnostics).

Guarantee: for the linear kernel no two boundaries cross, and every point's signs are
monotone in pi, anywhere in the convex hull of the training inputs.  For a kernel the same
holds in the hull of the training points' kernel rows (Wu & Liu section 3.2): at the
training points and on every segment between two of them in feature space; input points
between training points are not covered (see :mod:`wsvmgui.ladder.crossing`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular

from ..errors import InputError, SolverError
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import Kernel
from ..solvers.wsvm import DEFAULT_KKT_TOL, fit_weighted_svm
from .crossing import CrossingReport, crossing_diagnostics
from .grid import Ladder
from .hull_edges import hull_edges
from .noncrossing_qp import (
    DEFAULT_EPS,
    DEFAULT_GAP_TOL,
    build_constraints,
    fit_constrained,
    pivoted_cholesky,
)
from .rules import LadderEstimate
from .weights import check_weights

CONSTRAINTS = ("auto", "hull", "pairs", "compact")
#: How the non-crossing estimator chooses lambda (and sigma); see its ``criterion``.
CRITERIA = ("egkl-independent", "egkl", "hinge")
#: Largest number of explicit pair rows per fit before the exact compact form is used
#: (measured with the full-kernel QP: 2548 explicit rows cost 4x the time of the compact
#: form at n = 100, 10100 rows 13x at n = 200, for the same answer).
DEFAULT_MAX_CONSTRAINTS = 2_000


@dataclass(frozen=True)
class FitRecord:
    """Diagnostics of one weight's fit.

    Attributes
    ----------
    pi, lam : float
    step : int
        Position in the fitting order (0 = the weight nearest 1/2).
    method : str
        ``"unconstrained"`` (first fit), ``"shortcut"`` (unconstrained fit met the
        constraints) or ``"qp"`` (constrained QP).
    mode : str
        Constraint set used (``"hull"``, ``"pairs"``, ``"compact"``, or ``""``).
    n_rows : int
        Constraint rows (0 for the first fit).
    n_edges, n_vertex : int
        Cut edges (or separated pairs) and vertex constraints.
    n_active : int
        Active constraint rows of a QP fit.
    check : float
        KKT residual (libsvm fits, margin units) or relative duality gap (QP fits).
    violation : float
        Largest violation of the non-crossing rows at the final fit.
    note : str
    """

    pi: float
    lam: float
    step: int
    method: str
    mode: str = ""
    n_rows: int = 0
    n_edges: int = 0
    n_vertex: int = 0
    n_active: int = 0
    check: float = 0.0
    violation: float = 0.0
    note: str = ""


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
        """Probabilities and brackets at ``X`` (m, p)."""
        from .rules import probabilities_from_signs

        return probabilities_from_signs(self.decision_at(X) > 0, self.weights, rule)

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


def fit_noncrossing_ladder(
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float | np.ndarray,
    kernel: Kernel,
    *,
    K: np.ndarray | None = None,
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
    vertex_constraints : bool
        Also require the new fit to keep its sign at the training (hull) points on the
        previous fit's negative side (default; needed for monotone signs everywhere in the
        hull).  False gives the paper's constraint set, on the boundary only.
    eps, gap_tol, kkt_tol : float
        Constraint safety margin, QP duality-gap tolerance, libsvm KKT tolerance.
    progress, should_cancel
        Reported after every weighted fit; polled between fits.

    Returns
    -------
    NonCrossingLadder
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    weights = check_weights(weights)
    n, p = X.shape
    m = weights.size
    if lam_grid is not None:
        if X_tune is None or y_tune is None:
            raise InputError("per-weight tuning of lambda needs a tuning set")
        cands = [float(v) for v in np.ravel(lam_grid)]
        K_tune = kernel(np.asarray(X_tune, dtype=float), X)
        y_tu = np.asarray(y_tune, dtype=float)
    else:
        lam_arr = np.broadcast_to(np.asarray(lam, dtype=float), (m,)).copy()
        if not np.all(np.isfinite(lam_arr) & (lam_arr > 0)):
            raise InputError(f"lambda must be a positive number, got {lam!r}")
        cands = None
    mode, hull, notes = _resolve_mode(constraints, kernel, X)
    K = kernel(X) if K is None else np.asarray(K, dtype=float)
    linear = kernel.name == "linear"
    if linear:
        Phi, Pen, lift = X, np.eye(p), None
    else:
        # The QP works in the span of the kernel functions at the pivots of a pivoted
        # Cholesky factor K ~ L L' (exact to 1e-12 relative): f = L u + b, J = |u|^2; the
        # duality gap is still checked against the full K.
        piv, L = pivoted_cholesky(K)
        R = L[piv]  # lower triangular in pivot order: K[piv][:, piv] = R R'
        Phi, Pen, lift = L, np.eye(L.shape[1]), (piv, R)
    per_weight = 1 if cands is None else len(cands)
    tracker = ProgressTracker(m * per_weight, progress, should_cancel)
    tracker.check()

    coef = np.zeros((m, p if linear else n))
    intercept = np.zeros(m)
    f_train = np.zeros((m, n))
    lams = np.zeros(m)
    checks = np.zeros(m)
    records: list[FitRecord | None] = [None] * m
    for step, (k, prev, direction) in enumerate(fitting_order(weights)):
        pi = float(weights[k])
        options = [float(lam_arr[k])] if cands is None else cands
        best: Any = None
        for lam_k in options:
            fit = _fit_one(
                K,
                Phi,
                Pen,
                X,
                y,
                pi,
                lam_k,
                linear,
                None if prev is None else f_train[prev],
                direction,
                mode,
                hull,
                max_constraints,
                shortcut,
                eps,
                gap_tol,
                kkt_tol,
                step,
                vertex_constraints,
                lift,
            )
            tracker.step(partial=_event(fit, pi, lam_k, X, kernel))
            if cands is None:
                best = fit
                break
            f_t = K_tune @ (fit[4]) + fit[1]
            score = _weighted_hinge(f_t, y_tu, pi)
            if best is None or score < best[5] - 1e-12:
                best = (*fit[:5], score)
        u, b, f, rec, _c = best[:5]
        coef[k], intercept[k], f_train[k], lams[k] = u, b, f, rec.lam
        checks[k] = rec.check
        records[k] = rec
        for note in (rec.note,):
            if note and note not in notes:
                notes.append(note)

    if linear:
        # Minimum-norm kernel coefficients with X' c = w, so the Ladder form is exact.
        c_all = np.linalg.lstsq(X.T, coef.T, rcond=None)[0].T
        linear_coef = coef.copy()
    else:
        c_all, linear_coef = coef, None
    lam_single = float(lams[0]) if np.all(lams == lams[0]) else float("nan")
    ladder = Ladder(
        weights=weights, lam=lam_single, coef=c_all, intercept=intercept, kkt_residual=checks
    )
    recs = [r for r in records if r is not None]
    qp = [r for r in recs if r.method == "qp"]
    diagnostics = {
        "constraints_requested": constraints,
        "constraints_used": sorted({r.mode for r in recs if r.mode}),
        "notes": notes,
        "n_fits": len(recs),
        "n_qp": len(qp),
        "n_shortcut": sum(r.method == "shortcut" for r in recs),
        "max_rows": max((r.n_rows for r in recs), default=0),
        "total_rows": int(sum(r.n_rows for r in recs)),
        "n_active": int(sum(r.n_active for r in recs)),
        "max_duality_gap": max((r.check for r in qp), default=0.0),
        "max_kkt_residual": max((r.check for r in recs if r.method != "qp"), default=0.0),
        "max_violation": max((r.violation for r in recs), default=0.0),
        "eps": eps,
        "vertex_constraints": vertex_constraints,
    }
    return NonCrossingLadder(ladder, kernel, X, lams, linear_coef, recs, diagnostics)


def _event(fit, pi: float, lam: float, X: np.ndarray, kernel: Kernel):
    """A progress event for live views: the fit as a WeightedFit over the rows of X."""
    from ..solvers.wsvm import WeightedFit, penalty_to_C
    from .grid import FitEvent

    _u, b, _f, rec, kc = fit[:5]
    wf = WeightedFit(
        pi, lam, penalty_to_C(lam, X.shape[0]), np.abs(kc), kc, float(b), float(rec.check)
    )
    return FitEvent("final", wf, X, kernel)


def _fit_one(
    K,
    Phi,
    Pen,
    X,
    y,
    pi,
    lam,
    linear,
    f_prev,
    direction,
    mode,
    hull,
    max_constraints,
    shortcut,
    eps,
    gap_tol,
    kkt_tol,
    step,
    vertex=True,
    lift=None,
):
    """One weight: unconstrained fit, then the constrained QP when it crosses.

    Returns ``(u, b, f_train, record, kernel_coef)``; ``u`` is ``w`` (linear) or the
    kernel coefficients.
    """
    free = None
    if f_prev is None or shortcut:
        free = fit_weighted_svm(K, y, pi, lam, kkt_tol=kkt_tol)
        f_free = K @ free.coef + free.intercept
    if f_prev is None:
        assert free is not None
        u = X.T @ free.coef if linear else free.coef
        rec = FitRecord(pi, lam, step, "unconstrained", check=free.kkt_residual)
        return u, free.intercept, f_free, rec, free.coef
    cons, note = build_constraints(f_prev, direction, mode, hull, max_constraints, eps, vertex)
    counts: dict[str, Any] = dict(
        mode=cons.mode, n_rows=cons.n_rows, n_edges=cons.n_edges, n_vertex=cons.n_vertex, note=note
    )
    if free is not None:
        ok, viol = cons.satisfied_by(f_free)
        if ok:
            u = X.T @ free.coef if linear else free.coef
            rec = FitRecord(
                pi, lam, step, "shortcut", check=free.kkt_residual, violation=viol, **counts
            )
            return u, free.intercept, f_free, rec, free.coef
    sol = fit_constrained(Phi, Pen, K, y, pi, lam, cons, gap_tol)
    if linear:
        kc = np.linalg.lstsq(X.T, sol.coef, rcond=None)[0]
        u, f = sol.coef, sol.f_train
    else:
        # Kernel coefficients on the pivots: R' theta_piv = u (R lower triangular).
        piv, R = lift
        kc = np.zeros(K.shape[0])
        kc[piv] = solve_triangular(R.T, sol.coef, lower=False)
        u, f = kc, K @ kc + sol.intercept
    _, viol = cons.satisfied_by(f)
    if viol > 0.5 * cons.eps:
        raise SolverError(
            f"non-crossing fit at pi={pi:.4g}, lambda={lam:.4g}: the fit violates a "
            f"non-crossing constraint by {viol:.3g} after mapping to kernel coefficients"
        )
    rec = FitRecord(
        pi, lam, step, "qp", n_active=sol.n_active, check=sol.gap, violation=viol, **counts
    )
    return u, sol.intercept, f, rec, kc
