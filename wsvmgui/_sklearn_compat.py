"""scikit-learn's private names that the estimators use, imported in this one place.

The estimators follow scikit-learn's own style (declarative parameter constraints checked
by ``_fit_context``, ``_check_sample_weight``), which lives in private modules.  Every such
import is here, so that a scikit-learn release that moves one breaks one module, and the
supported range (``pyproject.toml``: ``scikit-learn>=1.6,<1.10``) is adapted in one place.
(The fast libsvm binding, :mod:`wsvmgui.solvers._libsvm_direct`, is separate: it has its
own public fallback and self-check.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import _fit_context
from sklearn.calibration import _SigmoidCalibration
from sklearn.isotonic import isotonic_regression
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    StrOptions,
)
from sklearn.utils.validation import _check_sample_weight

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "SigmoidCalibration",
    "StrOptions",
    "check_sample_weight",
    "fit_context",
    "isotonic_pav",
    "tree_node_dtype",
]

#: scikit-learn's decorator of ``fit``: validates ``_parameter_constraints`` first.
fit_context = _fit_context

#: Platt's sigmoid fit of labels on scores, as ``CalibratedClassifierCV`` makes it (the
#: peers of :mod:`wsvmgui.evaluation.peers`).
SigmoidCalibration = _SigmoidCalibration


def isotonic_pav(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Non-decreasing least-squares fit to ``values`` (t,) with ``weights`` (t,).

    scikit-learn's compiled pool-adjacent-violators without its input validation (which
    costs more than the fit on the recalibration's small problems, once per tuning cell
    and fold); its public ``isotonic_regression`` when the private routine is not there.
    """
    try:
        from sklearn._isotonic import _inplace_contiguous_isotonic_regression as pav
    except ImportError:  # pragma: no cover - a scikit-learn without the routine
        return isotonic_regression(values, sample_weight=weights, increasing=True)
    out = np.array(values, dtype=np.float64, order="C")
    pav(out, np.array(weights, dtype=np.float64, order="C"))
    return out


def check_sample_weight(sample_weight: Any, X: np.ndarray) -> np.ndarray:
    """``sample_weight`` as a float array of shape (n,) for ``X`` (n, p).

    None gives ones.  scikit-learn's checks (and their messages): one number per row,
    finite and not negative; and not all zero.

    Raises
    ------
    ValueError
        A wrong shape, a negative or non-finite weight, or all weights zero.
    """
    sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not np.all(np.isfinite(sw)):
        raise ValueError("Sample weights must be finite numbers.")
    if sw.size and not np.any(sw > 0):
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return np.array(sw, dtype=np.float64, copy=True)


def tree_node_dtype() -> np.dtype:
    """The record dtype of a fitted decision tree's nodes (a model file's tree arrays)."""
    from sklearn.tree._tree import NODE_DTYPE

    return np.dtype(NODE_DTYPE)
