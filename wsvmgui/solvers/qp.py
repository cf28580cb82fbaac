"""The one wrapper around the convex QP backends (Clarabel, and qpsolvers' others).

Every QP in the package (the dense dual of a weighted SVM, the constrained fits of the
non-crossing ladder, the subproblems of the joint simplex fit) is solved here::

    min 1/2 x'Px + q'x   s.t.  Gx <= h,  Ax = b,  lb <= x <= ub.

``backend="clarabel"`` calls Clarabel directly with sparse matrices (no per-call
conversions, which cost several times the solve on the joint fit's small working-set
QPs; benchmarks/results/joint_speed.md), trying its linear solvers in the order given
(e.g. the supernodal "faer", then "qdldl").  Any other name goes to that qpsolvers
backend ("quadprog", "osqp", ...).  The solver's status is reported, not trusted: callers
check the answer against the problem's optimality conditions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from ..errors import SolverError


@dataclass(frozen=True)
class QPSolution:
    """Answer of a QP.

    Attributes
    ----------
    x : ndarray, shape (d,)
        Primal solution.
    z : ndarray, shape (m,)
        Multipliers of the inequality rows ``Gx <= h`` (not of the bounds), >= 0.
    y : ndarray, shape (m_eq,)
        Multipliers of the equality rows.
    status : str
        The backend's own verdict (e.g. "Solved", "AlmostSolved", "found").
    """

    x: np.ndarray
    z: np.ndarray
    y: np.ndarray
    status: str

    @property
    def converged(self) -> bool:
        """Whether the backend reports a solution (Clarabel: solved or almost solved)."""
        return self.status in ("Solved", "AlmostSolved", "found")


def solve_qp(
    P,
    q: np.ndarray,
    G=None,
    h: np.ndarray | None = None,
    A=None,
    b: np.ndarray | None = None,
    lb: np.ndarray | None = None,
    ub: np.ndarray | None = None,
    *,
    backend: str = "clarabel",
    settings: dict[str, Any] | None = None,
    linear_solvers: Sequence[str] | None = None,
) -> QPSolution:
    """Solve a convex QP; see the module docstring.

    Parameters
    ----------
    P : ndarray or sparse, shape (d, d)
    q : ndarray, shape (d,)
    G, h : inequality rows (m, d) and right-hand side (m,), optional
    A, b : equality rows (m_eq, d) and right-hand side (m_eq,), optional
    lb, ub : ndarray, shape (d,), optional
        Bounds on x.
    backend : str
        "clarabel" (direct) or a qpsolvers backend name.
    settings : dict, optional
        Solver settings (Clarabel: attributes of ``DefaultSettings``; qpsolvers: keyword
        arguments).
    linear_solvers : sequence of str, optional
        Clarabel's ``direct_solve_method`` values to try in order (default: its own).

    Returns
    -------
    QPSolution

    Raises
    ------
    SolverError
        The backend failed, or returned no finite solution.
    """
    if backend == "clarabel":
        sol = _clarabel(P, q, G, h, A, b, lb, ub, settings or {}, linear_solvers)
    else:
        sol = _qpsolvers(P, q, G, h, A, b, lb, ub, backend, settings or {})
    if not np.all(np.isfinite(sol.x)):
        raise SolverError(f"QP backend {backend!r} returned no solution ({sol.status})")
    return sol


def _csc(M) -> sparse.csc_matrix:
    return M if sparse.isspmatrix_csc(M) else sparse.csc_matrix(M)


def _clarabel(P, q, G, h, A, b, lb, ub, settings, linear_solvers) -> QPSolution:
    import clarabel

    d = q.size
    rows, rhs, cones = [], [], []
    m_eq = 0
    if A is not None:
        m_eq = int(np.shape(A)[0])
        rows.append(_csc(A))
        rhs.append(np.asarray(b, dtype=float))
        cones.append(clarabel.ZeroConeT(m_eq))
    m_in = 0
    ineq, ineq_rhs = [], []
    if G is not None:
        m_in = int(np.shape(G)[0])
        ineq.append(_csc(G))
        ineq_rhs.append(np.asarray(h, dtype=float))
    if lb is not None:
        ineq.append(-sparse.identity(d, format="csc"))
        ineq_rhs.append(-np.asarray(lb, dtype=float))
    if ub is not None:
        ineq.append(sparse.identity(d, format="csc"))
        ineq_rhs.append(np.asarray(ub, dtype=float))
    if ineq:
        rows += ineq
        rhs += ineq_rhs
        cones.append(clarabel.NonnegativeConeT(int(sum(r.size for r in ineq_rhs))))
    if not rows:
        raise SolverError("the QP has no constraints; Clarabel needs at least one")
    M = rows[0] if len(rows) == 1 else sparse.vstack(rows, format="csc")
    r = rhs[0] if len(rhs) == 1 else np.concatenate(rhs)
    errors = []
    for method in linear_solvers or (None,):
        opts = clarabel.DefaultSettings()
        opts.verbose = False
        for key, value in settings.items():
            setattr(opts, key, value)
        if method is not None:
            opts.direct_solve_method = method
        try:
            result = clarabel.DefaultSolver(_csc(P), q, M, r, cones, opts).solve()
        except BaseException as exc:  # Rust panics arrive as BaseException
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            errors.append(f"{method or 'default'}: {exc}")
            continue
        z_all = np.asarray(result.z)
        return QPSolution(
            np.asarray(result.x),
            np.maximum(z_all[m_eq : m_eq + m_in], 0.0),
            z_all[:m_eq],
            str(result.status),
        )
    raise SolverError(f"Clarabel failed ({'; '.join(errors)})")


def _qpsolvers(P, q, G, h, A, b, lb, ub, backend, settings) -> QPSolution:
    import warnings

    from qpsolvers import Problem, solve_problem

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the status is reported, not warned about
            sol = solve_problem(Problem(P, q, G, h, A, b, lb, ub), solver=backend, **settings)
    except Exception as exc:  # any backend failure becomes a SolverError
        raise SolverError(f"QP backend {backend!r} failed: {exc}") from exc
    empty = np.zeros(0)
    z = empty if sol.z is None else np.maximum(np.asarray(sol.z), 0.0)
    x = np.full(q.size, np.nan) if sol.x is None else np.asarray(sol.x)
    y = empty if sol.y is None else np.asarray(sol.y)
    return QPSolution(x, z, y, "found" if sol.found else "failed")
