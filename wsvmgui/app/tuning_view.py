"""Tuning tables of a fitted estimator as surfaces to draw (no Qt).

Every scheme that tunes keeps its table in its own form: a binary ladder its
:class:`~wsvmgui.ladder.tuning.TuningResult` (EGKL over lambda x sigma), each sub-problem
of divide and conquer its own one, the joint and probing schemes a list of candidates with
their tuning cross-entropy.  :func:`tuning_surfaces` turns them into one shape, a
:class:`TuningSurface` per tuned problem, which the Results view draws as a heat map.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..estimators._base import BaseProbabilityClassifier
from ..estimators.views import LadderViews, SubproblemViews
from ..ladder.tuning import TuningResult


@dataclass
class TuningSurface:
    """A tuning score over a grid of two parameters (the second may be absent).

    Attributes
    ----------
    name : str
        The tuned problem ("" for an estimator with one), e.g. a sub-problem's name.
    x_name, y_name : str
        Parameter names ("lambda", "sigma"); ``y_name`` is "" without a second parameter.
    xs : ndarray, shape (L,)
    ys : ndarray, shape (S,)
        A single NaN without a second parameter.
    score : ndarray, shape (L, S)
        Lower is better; inf where a fit failed or a candidate is missing.
    score_name : str
        "EGKL" or "cross-entropy".
    best : tuple of int
        ``(i, j)`` of the chosen candidate.
    """

    name: str
    x_name: str
    y_name: str
    xs: np.ndarray
    ys: np.ndarray
    score: np.ndarray
    score_name: str
    best: tuple[int, int]

    @property
    def chosen(self) -> tuple[float, float]:
        """The grid values of the chosen candidate (the second NaN without one)."""
        return float(self.xs[self.best[0]]), float(self.ys[self.best[1]])


#: Names of the penalty among tuned parameters (drawn on the first axis).
_LAMBDA = ("lambda", "lam")
#: Tuning scores as the views name them.
_SCORE_NAMES = {"egkl": "EGKL", "cross_entropy": "cross-entropy"}


def _from_result(name: str, tuning: TuningResult) -> TuningSurface:
    score = np.where(np.isfinite(tuning.egkl), tuning.egkl, np.inf).astype(float)
    lambdas = np.asarray(tuning.lambdas, dtype=float)
    sigmas = np.asarray(tuning.sigmas, dtype=float)
    i = np.flatnonzero(np.isclose(lambdas, tuning.best_lambda))
    j = np.flatnonzero(np.isclose(sigmas, tuning.best_sigma, equal_nan=True))
    if i.size and j.size:
        best = (int(i[0]), int(j[0]))
    else:
        flat = np.unravel_index(int(np.argmin(score)), score.shape)
        best = (int(flat[0]), int(flat[1]))
    has_sigma = bool(np.isfinite(sigmas).any())
    return TuningSurface(
        name, "\u03bb", "\u03c3" if has_sigma else "", lambdas, sigmas, score, "EGKL", best
    )


def _from_rows(
    name: str, rows: list[dict], score_key: str = "cross_entropy"
) -> TuningSurface | None:
    """A surface from candidates ``{param: value, ..., score_key: score}`` (lambda, when
    a parameter, on the first axis).

    None when the candidates have more than two numeric parameters (no plane to draw) or
    none at all.
    """
    if not rows:
        return None
    keys = sorted((k for k in rows[0] if k != score_key), key=lambda k: k not in _LAMBDA)
    if not keys or len(keys) > 2:
        return None
    try:
        values = [
            np.array([np.nan if r.get(k) is None else float(r[k]) for r in rows]) for k in keys
        ]
    except (TypeError, ValueError):
        return None  # a non-numeric parameter (a kernel name, ...)
    if len(values) == 1:
        values.append(np.full(len(rows), np.nan))
    axes = [
        np.unique(v[np.isfinite(v)]) if np.isfinite(v).any() else np.array([np.nan]) for v in values
    ]
    score = np.full((axes[0].size, axes[1].size), np.inf)
    for r, a, b in zip(rows, values[0], values[1], strict=True):
        i = int(np.searchsorted(axes[0], a)) if np.isfinite(a) else 0
        j = int(np.searchsorted(axes[1], b)) if np.isfinite(b) else 0
        s = float(r[score_key])
        score[i, j] = s if np.isfinite(s) else np.inf
    flat = np.unravel_index(int(np.argmin(score)), score.shape)
    best = (int(flat[0]), int(flat[1]))
    names = {**dict.fromkeys(_LAMBDA, "\u03bb"), "sigma": "\u03c3"}
    x_name = names.get(keys[0], keys[0])
    y_name = names.get(keys[1], keys[1]) if len(keys) == 2 and np.isfinite(axes[1]).any() else ""
    score_name = _SCORE_NAMES.get(score_key, score_key)
    return TuningSurface(name, x_name, y_name, axes[0], axes[1], score, score_name, best)


def tuning_surfaces(estimator: Any) -> list[TuningSurface]:
    """Every tuning table ``estimator`` keeps, as surfaces; [] when it tuned nothing.

    Parameters
    ----------
    estimator : fitted estimator
        A binary ladder (``tuning_``), a divide-and-conquer scheme (each of
        ``subproblems_.fitted`` keeps its ``tuning``), or a joint or probing scheme
        (``tuning_table_``).

    Returns
    -------
    list of TuningSurface
        One per tuned problem, in the estimator's order of sub-problems.
    """
    if isinstance(estimator, SubproblemViews):
        return [
            _from_result(str(f.spec.name), f.tuning)
            for f in estimator.subproblems_.fitted
            if isinstance(f.tuning, TuningResult)
        ]
    if not isinstance(estimator, BaseProbabilityClassifier):
        return []
    tuning = estimator.tuning_
    if not isinstance(tuning, TuningResult):
        return []  # untuned, or a scheme's tables by stage
    if isinstance(estimator, LadderViews) and "lambda" in tuning.axes:
        return [_from_result("", tuning)]  # (the non-crossing hinge criterion's: sigma only)
    rows = tuning.rows()
    surface = _from_rows("", rows, tuning.score_name) if len(rows) > 1 else None
    return [surface] if surface is not None else []


def used_values(fitted: dict[str, Any], surfaces: list[TuningSurface]) -> list[str]:
    """The penalty and width the final fit used, and how they relate to the grid.

    ``fitted`` is the estimator's ``fitted_summary()``.  With ``refit`` the final fit on
    all rows keeps the tuned ``C = 1 / (2 n lambda)``, so its lambda is the grid's value
    rescaled to its own number of rows; both are said.
    """
    lam: Any = fitted.get("lambda")
    sigma = fitted.get("sigma")
    n = fitted.get("n_train")
    out: list[str] = []
    finite = isinstance(lam, (int, float)) and bool(np.isfinite(lam))
    lam = float(lam) if finite else float("nan")
    if finite:
        text = f"\u03bb = {lam:.4g}"
        if isinstance(n, (int, np.integer)) and n > 0:
            text += f" (C = {1.0 / (2.0 * n * lam):.4g}, final fit on {int(n)} rows)"
        out.append(text)
    if len(surfaces) == 1 and finite:
        grid_lam = surfaces[0].chosen[0]
        if np.isfinite(grid_lam) and not np.isclose(grid_lam, lam, rtol=1e-6):
            out.append(
                f"tuned \u03bb = {grid_lam:.4g} on the grid, for the tuning fits' rows (the "
                "final fit keeps its C)"
            )
    elif len(surfaces) > 1:
        out.append(f"\u03bb and \u03c3 tuned per sub-problem ({len(surfaces)} grids)")
    if isinstance(sigma, (int, float)) and np.isfinite(sigma):
        out.append(f"\u03c3 = {sigma:.4g}")
    return out


__all__ = ["TuningSurface", "tuning_surfaces", "used_values"]
