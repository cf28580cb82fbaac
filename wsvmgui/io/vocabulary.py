"""The fitted vocabulary of estimators loaded from model files written before it existed.

Every fitted estimator has ``lambda_``, ``sigma_``, ``C_`` and ``tuning_``
(:meth:`~wsvmgui.estimators._base.BaseProbabilityClassifier.fitted_summary` reads them).
Model files of format 2 (:data:`wsvmgui.io.modelfile.OLDEST_SCHEMA`), written before
those attributes were added, load and predict, but their estimators lack some of them
(the binary ladder had no ``C_``, divide and conquer none of the four).
:func:`fill_vocabulary` fills them from what the file stores, by the rules the estimators
use when fitting:

- divide and conquer: the value every sub-problem shares (NaN where they differ), ``C``
  of each from its own ``lambda`` and final-fit size, ``tuning_`` the sub-problems'
  tuning results by name (None when none was tuned);
- otherwise ``lambda_`` from the joint fit's old ``lam_``, else ``1 / (2 n C_)`` when
  only ``C_`` is stored, else the one value
  the parameters gave (``lam``, or ``lambdas`` of one value: not tuned); ``sigma_`` from
  the fitted RBF kernel, else likewise from ``sigma`` or ``sigmas``; and the base class's
  rule for the rest (``C_ = 1 / (2 n lambda_)``
  with ``n = fit_info_["n_train"]``, NaN where nothing says, ``tuning_`` None: an old
  ``tuning_table_`` of the joint fit or Probing stays as it was, not converted).
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from ..estimators._base import BaseProbabilityClassifier
from ..solvers.wsvm import C_to_penalty, penalty_to_C

#: The fitted attributes every estimator has.
VOCABULARY = ("lambda_", "sigma_", "C_", "tuning_")


def missing_vocabulary(estimator: Any) -> tuple[str, ...]:
    """The names of :data:`VOCABULARY` a wsvmgui estimator lacks (empty for anything else)."""
    if not isinstance(estimator, BaseProbabilityClassifier):
        return ()
    return tuple(name for name in VOCABULARY if name not in estimator.__dict__)


def fill_vocabulary(estimator: Any) -> tuple[str, ...]:
    """Fill the fitted vocabulary a loaded estimator lacks; returns the names filled.

    Parameters
    ----------
    estimator : object
        A decoded estimator; anything but a wsvmgui estimator is left alone.

    Returns
    -------
    tuple of str
        The attributes of :data:`VOCABULARY` that were missing (empty for a current file).
    """
    missing = missing_vocabulary(estimator)
    if not missing:
        return ()
    state: dict[str, Any] = estimator.__dict__
    info = state.get("fit_info_") or {}
    derived = _from_subproblems(state) or _from_parts(state, info.get("n_train"))
    for name in missing:
        if name in derived:
            state[name] = derived[name]
    # the rest (NaN, C from lambda, tuning_ None) as every fit completes it
    estimator._complete_vocabulary(info)
    return missing


def _from_subproblems(state: dict[str, Any]) -> dict[str, Any]:
    """Divide and conquer: what the fitted sub-problems share."""
    fitted = getattr(state.get("subproblems_"), "fitted", None)
    if not fitted:
        return {}
    lams = [float(f.lam) for f in fitted]
    sizes = [float(getattr(f, "n_train", math.nan)) for f in fitted]
    tunings = {f.spec.name: f.tuning for f in fitted if f.tuning is not None}
    return {
        "lambda_": _shared(lams),
        "sigma_": _shared([float(f.sigma) for f in fitted]),
        "C_": _shared([_c(n, lam) for n, lam in zip(sizes, lams, strict=True)]),
        "tuning_": tunings or None,
    }


def _from_parts(state: dict[str, Any], n_train: Any) -> dict[str, Any]:
    """A single fit: lambda from a stored C or the one value the parameters gave, sigma
    from the fitted RBF kernel or the one value the parameters gave."""
    out: dict[str, Any] = {}
    n = float(n_train) if _is_number(n_train) else math.nan
    C = state.get("C_")
    lam = _one_value(state, "lam", "lambdas")
    if _is_number(state.get("lam_")):  # the joint fit's old name
        out["lambda_"] = float(state["lam_"])
    elif _is_number(C) and C > 0 and n > 0:
        out["lambda_"] = C_to_penalty(float(C), n)
    elif lam is not None:
        out["lambda_"] = lam
    kernel = state.get("kernel_")
    sigma = _one_value(state, "sigma", "sigmas")
    if kernel is not None and getattr(kernel, "name", None) == "rbf":
        out["sigma_"] = float(kernel.sigma)
    elif kernel is None and state.get("kernel") == "rbf" and sigma is not None:
        out["sigma_"] = sigma
    return out


def _one_value(state: dict[str, Any], single: str, grid: str) -> float | None:
    """The value of parameter ``single``, else the one value of the grid ``grid`` (None
    when neither gives exactly one number: a tuned value is not in the parameters)."""
    value = state.get(single)
    if _is_number(value):
        return float(value)
    values = state.get(grid)
    if isinstance(values, (list, tuple)) and len(values) == 1 and _is_number(values[0]):
        return float(values[0])
    return None


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _c(n: float, lam: float) -> float:
    """``C = 1 / (2 n lambda)`` (NaN when either is not positive)."""
    return penalty_to_C(lam, n) if n > 0 and lam > 0 else math.nan


def _shared(values: list[float]) -> float:
    """The value all share (NaN where they differ or one is NaN)."""
    first = values[0]
    return first if all(v == first for v in values) else math.nan
