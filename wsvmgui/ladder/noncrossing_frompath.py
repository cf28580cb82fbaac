"""The non-crossing ladder from the exact weight path (the default engine).

METHODS sections 2 and 3.  The unconstrained solution at every weight is read off the
exact path in pi (:func:`~wsvmgui.ladder.path.fit_path`, one per lambda), so no weighted
SVM is solved per weight.  In fitting order, each weight's unconstrained fit is checked
against the non-crossing rows built from its already fitted neighbour:

* it meets them: it is the constrained optimum too (``"shortcut"``).  A fit that meets
  them with ``eps = 0`` but not with the safety margin ``eps`` (its boundary touches the
  neighbour's in feature space, as it does at every point on both fits' elbows) is
  shifted by at most ``eps + 1e-9`` in the intercept, which moves its margins by that much;
* it violates some: it is repaired to the constrained optimum by the exact active-set
  method of :mod:`wsvmgui.ladder.noncrossing_active`, warm-started from the path's
  solution and touching only the rows that bind (``"active-set"``); where that method
  cannot finish, the constrained QP is solved instead (``"qp"``,
  :func:`~wsvmgui.ladder.noncrossing_qp.fit_constrained`, as the reference engine does).

Every repaired fit is checked against the kernel matrix (KKT residual, duality gap and
the rows; :func:`~wsvmgui.ladder.noncrossing_active.repair_check`); the ladder as a whole
is checked by :func:`~wsvmgui.ladder.noncrossing.fit_noncrossing_ladder` (every training
point's signs monotone in pi).  A path that breaks down for some lambda gives way to
libsvm fits at that lambda's weights (the repair then starts from them or the QP
answers), said in the diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import SolverError
from ..solvers.wsvm import fit_weighted_svm, penalty_to_C
from .noncrossing_active import VIOLATION_TOL, RepairFailed, repair_check, repair_fit
from .noncrossing_qp import build_constraints
from .noncrossing_sequential import SequentialFitter
from .noncrossing_types import FitRecord, WeightFit, constrained_record
from .path import PathBreakdown, duplicate_groups, fit_path


@dataclass
class _Unconstrained:
    """The unconstrained fits of one lambda at every weight.

    ``coef`` (M - 1, n) and ``intercept`` (M - 1,); ``K_start`` the kernel matrix they are
    exact for (``K`` plus the path's ridge); ``residual`` their KKT residual; ``note`` why
    libsvm answered instead of the path, if it did.
    """

    coef: np.ndarray
    intercept: np.ndarray
    K_start: np.ndarray
    residual: np.ndarray
    note: str = ""


@dataclass
class PathFitter(SequentialFitter):
    """Fits one weight at a time from the exact path (see the module docstring).

    Attributes (beyond :class:`~wsvmgui.ladder.noncrossing_sequential.SequentialFitter`)
    ----------
    weights : ndarray, shape (M - 1,)
    """

    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        super().__post_init__()
        self._free: dict[float, _Unconstrained] = {}
        self.notes: list[str] = []
        self.n_paths = 0
        self._groups: np.ndarray | None = None

    def groups(self) -> np.ndarray:
        """Representatives of the exact duplicates among the training points (once)."""
        if self._groups is None:
            self._groups = duplicate_groups(self.K, self.y)
        return self._groups

    def unconstrained(self, lam: float) -> _Unconstrained:
        """The path of ``lam`` read at every weight (libsvm fits if the path breaks down)."""
        key = float(lam)
        if key not in self._free:
            try:
                path = fit_path(self.K, self.y, key, kkt_tol=self.kkt_tol)
                coef, b = path.coef_matrix(self.weights)
                K_start = self.K
                if path.ridge:
                    K_start = self.K + path.ridge * np.eye(self.K.shape[0])
                resid = np.full(self.weights.size, path.kkt_residual)
                self._free[key] = _Unconstrained(coef, b, K_start, resid)
                self.n_paths += 1
            except PathBreakdown as exc:
                fits = [fit_weighted_svm(self.K, self.y, float(p), key) for p in self.weights]
                note = f"weight path broke down at lambda {key:.4g} ({exc}); libsvm fits instead"
                self.notes.append(note)
                self._free[key] = _Unconstrained(
                    np.vstack([f.coef for f in fits]),
                    np.array([f.intercept for f in fits]),
                    self.K,
                    np.array([f.kkt_residual for f in fits]),
                    note,
                )
        return self._free[key]

    def fit(
        self, step: int, pi: float, lam: float, f_prev: np.ndarray | None, direction: int
    ) -> WeightFit:
        """One weight: the path's fit, shifted or repaired where it crosses its neighbour."""
        k = int(np.searchsorted(self.weights, pi))
        free = self.unconstrained(lam)
        c0, b0 = free.coef[k], float(free.intercept[k])
        f0 = self.K @ c0 + b0
        resid = float(free.residual[k])
        if f_prev is None:
            rec = FitRecord(pi, lam, step, "unconstrained", check=resid, note=free.note)
            return WeightFit(c0, b0, f0, rec)
        cons, note = build_constraints(
            f_prev, direction, self.mode, self.hull, self.max_constraints, self.eps, self.vertex
        )
        base = constrained_record(pi, lam, step, cons, note or free.note)
        _, viol = cons.satisfied_by(f0)
        if viol <= cons.eps + VIOLATION_TOL:
            # Touching at most (eps = 0): shift the intercept by the shortfall.
            shift = 0.0 if viol == 0.0 else viol + VIOLATION_TOL
            b1 = b0 - direction * shift
            f1 = f0 - direction * shift
            rec = replace(
                base, method="shortcut", check=resid + shift, violation=cons.satisfied_by(f1)[1]
            )
            return WeightFit(c0, b1, f1, rec)
        upper = penalty_to_C(lam, self.y.size) * np.where(self.y > 0, 1.0 - pi, pi)
        try:
            rep = repair_fit(free.K_start, self.y, upper, cons, c0, b0, groups=self.groups())
        except RepairFailed as exc:
            return self._qp(pi, lam, cons, base, f"active set: {exc}")
        kkt, gap, viol = repair_check(
            self.K, self.y, upper, cons, rep.coef, rep.intercept, rep.alpha, rep.mu, rep.s
        )
        if not (kkt <= self.kkt_tol and abs(gap) <= self.gap_tol and viol <= 0.5 * cons.eps):
            why = f"check failed (KKT {kkt:.3g}, gap {gap:.3g}, violation {viol:.3g})"
            return self._qp(pi, lam, cons, base, f"active set: {why}")
        f = self.K @ rep.coef + rep.intercept
        rec = replace(
            base,
            method="active-set",
            n_active=rep.n_active,
            check=kkt,
            violation=viol,
            n_events=rep.n_events,
            gap=gap,
        )
        return WeightFit(rep.coef, rep.intercept, f, rec)

    def _qp(self, pi, lam, cons, base: FitRecord, why: str) -> WeightFit:
        """The constrained QP instead of the repair, with the reason in the record."""
        try:
            fit = self.constrained(pi, lam, cons, base)
        except SolverError as exc:
            raise SolverError(f"{exc} (after the {why})") from exc
        note = "; ".join(x for x in (fit.record.note, why) if x)
        rec = replace(fit.record, note=note)
        return WeightFit(fit.coef, fit.intercept, fit.f_train, rec)
