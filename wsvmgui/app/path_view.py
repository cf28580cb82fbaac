"""The exact solution path in pi behind a binary ladder, for the app's views (no Qt).

After a binary ladder is fitted, :func:`exact_path` traces the exact path of the weighted
SVM over every pi in (0, 1) (:func:`wsvmgui.ladder.path.fit_path`) with the ladder's own
kernel and penalty on the rows of its final fit.  The views then draw, for the selected
point, ``f_pi(x)`` as the piecewise-linear function it is (knots at the breakpoints), its
zeros and the estimate, and in the plane the boundary ``{f_pi = 0}`` at any pi a slider
chooses.  A path that cannot be traced (too many rows, or a breakdown) is reported, and
the views keep the ladder's fitted weights.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import Cancelled
from ..estimators.views import LadderViews
from .contours import zero_contour

#: Largest number of fitted rows for which the app traces the path (its size and the
#: coefficient table it keeps grow with n times the number of breakpoints).
MAX_PATH_ROWS = 1000


@dataclass(frozen=True)
class PathInfo:
    """A traced path with what the views need.

    Attributes
    ----------
    pis : ndarray, shape (B,)
        Breakpoints, 0 to 1.
    coef : ndarray, shape (B, n)
        Kernel coefficients at the breakpoints (linear in pi between them).
    intercepts : ndarray, shape (B,)
    kernel : Kernel
        The ladder's kernel.
    X_fit : ndarray, shape (n, p)
        Model inputs of the rows the path was traced on.
    lam : float
    kkt_residual : float
        Largest residual of the path's independent KKT check.
    seconds : float
    """

    pis: np.ndarray
    coef: np.ndarray
    intercepts: np.ndarray
    kernel: Any
    X_fit: np.ndarray
    lam: float
    kkt_residual: float
    seconds: float

    @property
    def n_breakpoints(self) -> int:
        return int(self.pis.size)

    def curves(self, X: np.ndarray) -> np.ndarray:
        """``f`` at every breakpoint for model inputs ``X`` (m, p); shape (m, B)."""
        return self.kernel(np.atleast_2d(X), self.X_fit) @ self.coef.T + self.intercepts

    def decision_at(self, X: np.ndarray, pi: float) -> np.ndarray:
        """``f_pi`` at model inputs ``X`` (m, p) for any ``pi`` in [0, 1]; shape (m,)."""
        k = int(np.clip(np.searchsorted(self.pis, pi, side="right") - 1, 0, self.pis.size - 2))
        span = self.pis[k + 1] - self.pis[k]
        t = 0.0 if span <= 0 else float(np.clip((pi - self.pis[k]) / span, 0.0, 1.0))
        c = (1 - t) * self.coef[k] + t * self.coef[k + 1]
        b = (1 - t) * self.intercepts[k] + t * self.intercepts[k + 1]
        return self.kernel(np.atleast_2d(X), self.X_fit) @ c + b


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
    """Trace the exact path behind a fitted binary ladder; (None, why) when it cannot.

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

    if not isinstance(estimator, LadderViews) or not hasattr(estimator, "kernel_"):
        return None, "no single binary ladder"
    info = getattr(estimator, "fit_info_", {}) or {}
    n = X_fit.shape[0]
    if info.get("n_train", n) != n:
        return None, "the final fit used only part of the rows (refit is off)"
    if n > MAX_PATH_ROWS:
        return None, f"{n} rows (the app traces it up to {MAX_PATH_ROWS})"
    y = np.where(np.asarray(y_fit) == estimator.classes_[1], 1.0, -1.0)
    start = time.perf_counter()
    try:
        path = fit_path(
            estimator.kernel_(X_fit),
            y,
            float(estimator.lambda_),
            progress=progress,
            should_cancel=should_cancel,
        )
    except Cancelled:
        raise
    except (PathBreakdown, ValueError) as exc:
        return None, f"the path broke down ({exc})"
    coef, b = path.coef_matrix(path.pis)
    return (
        PathInfo(
            np.asarray(path.pis, float),
            np.asarray(coef, float),
            np.asarray(b, float),
            estimator.kernel_,
            np.asarray(X_fit, float),
            float(path.lam),
            float(path.kkt_residual),
            time.perf_counter() - start,
        ),
        "",
    )


def boundary_at(
    info: PathInfo, X_grid: np.ndarray, xs: np.ndarray, ys: np.ndarray, pi: float
) -> np.ndarray:
    """Segments (s, 2, 2) of ``{f_pi = 0}`` on a plane grid (model inputs (G*G, p))."""
    return zero_contour(xs, ys, info.decision_at(X_grid, pi).reshape(ys.size, xs.size))
