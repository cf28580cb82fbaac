"""Records shared by the non-crossing ladder's engines (:mod:`wsvmgui.ladder.noncrossing`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .noncrossing_qp import CrossingConstraints

#: How a weight's fit was found (:attr:`FitRecord.method`).
METHODS = ("unconstrained", "shortcut", "active-set", "qp")


@dataclass(frozen=True)
class FitRecord:
    """Diagnostics of one weight's fit.

    Attributes
    ----------
    pi, lam : float
    step : int
        Position in the fitting order (0 = the weight nearest 1/2).
    method : str
        ``"unconstrained"`` (first fit), ``"shortcut"`` (the unconstrained fit met the
        constraints), ``"active-set"`` (repaired from the path's fit by
        :mod:`wsvmgui.ladder.noncrossing_active`) or ``"qp"`` (constrained QP).
    mode : str
        Constraint set used (``"hull"``, ``"pairs"``, ``"compact"``, or ``""``).
    n_rows : int
        Constraint rows (0 for the first fit).
    n_edges, n_vertex : int
        Cut edges (or separated pairs) and vertex constraints.
    n_active : int
        Active constraint rows of a constrained fit.
    check : float
        KKT residual (unconstrained, shortcut and active-set fits, margin units) or
        relative duality gap (QP fits).
    violation : float
        Largest violation of the non-crossing rows at the final fit.
    note : str
    n_events : int
        Homotopy steps of an active-set repair.
    gap : float
        Relative duality gap of an active-set repair or a QP fit.
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
    n_events: int = 0
    gap: float = 0.0


def constrained_record(
    pi: float, lam: float, step: int, cons: CrossingConstraints, note: str
) -> FitRecord:
    """A record carrying the counts of the rows ``cons``; its method is set by the engine."""
    return FitRecord(
        pi,
        lam,
        step,
        "",
        mode=cons.mode,
        n_rows=cons.n_rows,
        n_edges=cons.n_edges,
        n_vertex=cons.n_vertex,
        note=note,
    )


@dataclass(frozen=True)
class WeightFit:
    """One weight's fit as an engine returns it.

    Attributes
    ----------
    coef : ndarray, shape (n,)
        Kernel expansion coefficients over the training points (for the linear kernel any
        ``c`` with ``X'c = w``).
    intercept : float
    f_train : ndarray, shape (n,)
        Decision values at the training points.
    record : FitRecord
    """

    coef: np.ndarray
    intercept: float
    f_train: np.ndarray
    record: FitRecord
