"""The exact solution path in pi behind binary ladders, for the app's views (no Qt).

A binary ladder fitted by the path engine keeps its exact solution path
(:class:`~wsvmgui.ladder.path.WeightPath`, on the ladder as ``ladder.path``); the divide
and conquer schemes keep one per sub-problem.  :func:`stored_paths` reads them.  A ladder
fitted on the grid has none: for a binary ladder :func:`exact_path` then traces the path
after the fit (:func:`wsvmgui.ladder.path.fit_path`) with the ladder's own kernel and
penalty on the rows of its final fit.  The views draw, for the selected point, ``f_pi(x)``
as the piecewise-linear function it is (knots at the breakpoints), its zeros and the
estimate, and in the plane the boundary ``{f_pi = 0}`` at any pi a slider chooses.  A path
that cannot be traced (too many rows, or a breakdown) is reported, and the views keep the
ladder's fitted weights.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np

from ..errors import Cancelled
from ..estimators.binary import WeightedSVMClassifier
from ..estimators.views import LadderViews, SubproblemViews
from ..ladder.engines import PathLadder
from .contours import zero_contour

#: Largest number of fitted rows for which the app traces the path after a grid fit.
MAX_PATH_ROWS = 1000
#: Coefficients evaluated at once when a curve is read off a path (memory bound).
CHUNK_VALUES = 2_000_000


class _KernelLadder(Protocol):
    """A fitted binary ladder that keeps its kernel and penalty (the binary and
    non-crossing ladders)."""

    classes_: np.ndarray
    kernel_: Callable[..., np.ndarray]
    lambda_: float
    fit_info_: dict[str, Any]


@dataclass(frozen=True)
class PathInfo:
    """An exact path with what the views need.

    Attributes
    ----------
    path : WeightPath
        The path over the points ``X_fit`` (its coefficients follow their rows).
    kernel : Kernel
        The ladder's kernel.
    X_fit : ndarray, shape (n, p)
        Model inputs of the path's points.
    seconds : float
        Time to trace it (0 for a path the fit kept).
    source : {"stored", "traced"}
        Kept by the fit (path engine) or traced after it (grid engine).
    """

    path: Any
    kernel: Any
    X_fit: np.ndarray
    seconds: float = 0.0
    source: str = "stored"

    @property
    def pis(self) -> np.ndarray:
        """Breakpoints, 0 to 1; shape (B,)."""
        return np.asarray(self.path.pis, dtype=float)

    @property
    def n_breakpoints(self) -> int:
        return int(self.pis.size)

    @property
    def lam(self) -> float:
        return float(self.path.lam)

    @property
    def kkt_residual(self) -> float:
        """Largest residual of the path's independent KKT check."""
        return float(self.path.kkt_residual)

    def curves(self, X: np.ndarray) -> np.ndarray:
        """``f`` at every breakpoint for model inputs ``X`` (m, p); shape (m, B).

        Where the intercept jumps (two breakpoints at one pi) the first of the pair holds
        the left limit and the second the right one, so the curve shows the jump.
        """
        pis = self.pis
        at = pis.copy()
        twin = np.flatnonzero(np.diff(pis) == 0)
        at[twin] = np.nextafter(pis[twin], -np.inf)  # left limits
        at = np.clip(at, 0.0, 1.0)
        K = self.kernel(np.atleast_2d(X), self.X_fit)
        step = max(1, CHUNK_VALUES // max(self.X_fit.shape[0], 1))
        return np.hstack(
            [self.path.decision_at(K, at[i : i + step]) for i in range(0, at.size, step)]
        )

    def decision_at(self, X: np.ndarray, pi: float) -> np.ndarray:
        """``f_pi`` at model inputs ``X`` (m, p) for any ``pi`` in [0, 1]; shape (m,)."""
        K = self.kernel(np.atleast_2d(X), self.X_fit)
        return self.path.decision_at(K, np.array([float(np.clip(pi, 0.0, 1.0))]))[:, 0]


def _kept(ladder: Any, kernel: Any, X: np.ndarray) -> PathInfo | None:
    if not isinstance(ladder, PathLadder):
        return None
    return PathInfo(ladder.path, kernel, np.asarray(X, dtype=float))


def stored_paths(estimator: Any) -> list[PathInfo | None]:
    """The exact paths a fitted estimator keeps, one per binary ladder; [] for none.

    Parameters
    ----------
    estimator : fitted estimator
        A :class:`~wsvmgui.estimators.views.LadderViews` (its ``ladder_`` over
        ``X_support_``) or :class:`~wsvmgui.estimators.views.SubproblemViews` (each of
        ``subproblems_.fitted``).

    Returns
    -------
    list of PathInfo or None
        In the order of the estimator's ladders (as in the sign-ladder view); None for a
        ladder fitted on the grid (or one whose path broke down and the grid answered).
    """
    if isinstance(estimator, SubproblemViews):
        sset = estimator.subproblems_
        return [
            _kept(f.ladder, f.kernel, sset.X_support[pos])
            for f, pos in zip(sset.fitted, sset.positions, strict=True)
        ]
    if isinstance(estimator, WeightedSVMClassifier):
        return [_kept(estimator.ladder_, estimator.kernel_, estimator.X_support_)]
    return []


def zeros_of(pis: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Where a piecewise-linear ``f`` (values at knots ``pis``, (B,)) crosses zero; (z,)."""
    a, b = f[:-1], f[1:]
    cross = (a > 0) != (b > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(cross, a / (a - b), np.nan)
    z = pis[:-1] + np.clip(t, 0, 1) * (pis[1:] - pis[:-1])
    return z[cross]


def exact_path(
    estimator: Any,
    X_fit: np.ndarray,
    y_fit: np.ndarray,
    progress: Callable[[int, int, Any], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> tuple[PathInfo | None, str]:
    """Trace the exact path behind a binary ladder fitted on the grid; (None, why) when
    it cannot.

    Parameters
    ----------
    estimator : fitted estimator
        A :class:`~wsvmgui.estimators.views.LadderViews` with ``kernel_`` and ``lambda_``
        (the binary and non-crossing ladders).
    X_fit : ndarray, shape (n, p)
        Model inputs the estimator was given.
    y_fit : ndarray, shape (n,)
    progress : callable, optional
        ``progress(done, 1000, None)``: the permille of (0, 1) the path has reached.
    should_cancel : callable, optional
    """
    from ..ladder.path import PathBreakdown, fit_path

    if not isinstance(estimator, LadderViews):
        return None, "no single binary ladder"
    est = cast(_KernelLadder, estimator)
    info = est.fit_info_
    n = X_fit.shape[0]
    if info.get("n_train", n) != n:
        return None, "the final fit used only part of the rows (refit is off)"
    if n > MAX_PATH_ROWS:
        return None, f"{n} rows (the app traces it up to {MAX_PATH_ROWS})"
    y = np.where(np.asarray(y_fit) == est.classes_[1], 1.0, -1.0)
    start = time.perf_counter()
    try:
        path = fit_path(
            est.kernel_(X_fit),
            y,
            float(est.lambda_),
            progress=progress,
            should_cancel=should_cancel,
        )
    except Cancelled:
        raise
    except (PathBreakdown, ValueError) as exc:
        return None, f"the path broke down ({exc})"
    seconds = time.perf_counter() - start
    return PathInfo(path, est.kernel_, np.asarray(X_fit, float), seconds, "traced"), ""


def boundary_at(
    info: PathInfo, X_grid: np.ndarray, xs: np.ndarray, ys: np.ndarray, pi: float
) -> np.ndarray:
    """Segments (s, 2, 2) of ``{f_pi = 0}`` on a plane grid (model inputs (G*G, p))."""
    return zero_contour(xs, ys, info.decision_at(X_grid, pi).reshape(ys.size, xs.size))
