"""The reference engine of the non-crossing ladder: one weighted SVM per weight, then a QP.

Every weight, in fitting order, is first fitted without constraints by libsvm
(:func:`~wsvmgui.solvers.wsvm.fit_weighted_svm`); when that fit meets the non-crossing
rows it is the constrained optimum too (a "shortcut"), otherwise the constrained QP is
solved by Clarabel (:func:`~wsvmgui.ladder.noncrossing_qp.fit_constrained`).  This is the
engine the first version of the ladder had, kept as the reference the path engine
(:mod:`wsvmgui.ladder.noncrossing_frompath`) is tested against; it costs one libsvm fit
per weight and one dense QP per crossing weight.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.linalg import solve_triangular

from ..errors import SolverError
from ..solvers.wsvm import fit_weighted_svm
from .hull_edges import HullEdges
from .noncrossing_qp import build_constraints, fit_constrained, pivoted_cholesky
from .noncrossing_types import FitRecord, WeightFit, constrained_record


@dataclass
class SequentialFitter:
    """Fits one weight at a time against its neighbour (see the module docstring).

    Attributes
    ----------
    K : ndarray, shape (n, n)
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    linear : bool
    mode : str
        Constraint set (:func:`~wsvmgui.ladder.noncrossing_qp.build_constraints`).
    hull : HullEdges or None
    max_constraints : int
    shortcut, vertex : bool
    eps, gap_tol, kkt_tol : float
    """

    K: np.ndarray
    X: np.ndarray
    y: np.ndarray
    linear: bool
    mode: str
    hull: HullEdges | None
    max_constraints: int
    shortcut: bool
    vertex: bool
    eps: float
    gap_tol: float
    kkt_tol: float

    def __post_init__(self) -> None:
        self._factor: tuple | None = None

    def factor(self) -> tuple[np.ndarray, np.ndarray, tuple | None]:
        """``(Phi, Pen, lift)`` of the constrained QP (:func:`fit_constrained`).

        Linear kernel: ``X`` and the identity.  A kernel: the pivoted Cholesky factor
        ``K ~ L L'`` (exact to 1e-12 relative) and the identity, with ``(pivots, R)`` to
        map the QP's coefficients back to kernel coefficients.
        """
        if self._factor is None:
            if self.linear:
                self._factor = (self.X, np.eye(self.X.shape[1]), None)
            else:
                piv, L = pivoted_cholesky(self.K)
                self._factor = (L, np.eye(L.shape[1]), (piv, L[piv]))
        return self._factor

    def constrained(self, pi: float, lam: float, cons, base: FitRecord) -> WeightFit:
        """The constrained QP at one weight, checked, as kernel coefficients."""
        Phi, Pen, lift = self.factor()
        sol = fit_constrained(Phi, Pen, self.K, self.y, pi, lam, cons, self.gap_tol)
        if self.linear:
            kc = np.linalg.lstsq(self.X.T, sol.coef, rcond=None)[0]
            f = sol.f_train
        else:
            # Kernel coefficients on the pivots: R' theta_piv = u (R lower triangular).
            assert lift is not None
            piv, R = lift
            kc = np.zeros(self.K.shape[0])
            kc[piv] = solve_triangular(R.T, sol.coef, lower=False)
            f = self.K @ kc + sol.intercept
        _, viol = cons.satisfied_by(f)
        if viol > 0.5 * cons.eps:
            raise SolverError(
                f"non-crossing fit at pi={pi:.4g}, lambda={lam:.4g}: the fit violates a "
                f"non-crossing constraint by {viol:.3g} after mapping to kernel coefficients"
            )
        rec = replace(
            base, method="qp", n_active=sol.n_active, check=sol.gap, violation=viol, gap=sol.gap
        )
        return WeightFit(kc, sol.intercept, f, rec)

    def fit(
        self, step: int, pi: float, lam: float, f_prev: np.ndarray | None, direction: int
    ) -> WeightFit:
        """One weight: the unconstrained fit, then the constrained QP when it crosses."""
        free = None
        if f_prev is None or self.shortcut:
            free = fit_weighted_svm(self.K, self.y, pi, lam, kkt_tol=self.kkt_tol)
            f_free = self.K @ free.coef + free.intercept
        if f_prev is None:
            assert free is not None
            rec = FitRecord(pi, lam, step, "unconstrained", check=free.kkt_residual)
            return WeightFit(free.coef, free.intercept, f_free, rec)
        cons, note = build_constraints(
            f_prev, direction, self.mode, self.hull, self.max_constraints, self.eps, self.vertex
        )
        base = constrained_record(pi, lam, step, cons, note)
        if free is not None:
            ok, viol = cons.satisfied_by(f_free)
            if ok:
                rec = replace(base, method="shortcut", check=free.kkt_residual, violation=viol)
                return WeightFit(free.coef, free.intercept, f_free, rec)
        return self.constrained(pi, lam, cons, base)
