"""A per-point probability report that every estimator can produce.

The command line and the desktop app write and show probabilities through this one
shape, whatever scheme made them: the classes, the probability matrix, the predicted
labels, and named extra columns (brackets of each class or of each binary sub-problem,
raw One-vs-All values, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Prefixes of the extra columns holding per-point intervals (:func:`with_intervals`).
INTERVAL_LO, INTERVAL_HI = "interval_lo_", "interval_hi_"
#: Level of the intervals the results carry.
INTERVAL_LEVEL = 0.9


@dataclass(frozen=True)
class ProbabilityReport:
    """Probabilities and brackets for a set of points.

    Attributes
    ----------
    classes : ndarray, shape (K,)
        Class labels in column order (any dtype, kept as the user gave them).
    proba : ndarray, shape (n, K)
        Estimated probabilities; rows sum to 1.
    label : ndarray, shape (n,)
        Predicted label, ``classes[argmax(proba)]``.
    extra : dict of str to ndarray of shape (n,)
        Further named per-point columns in display order, e.g. ``"lo_1"`` and ``"hi_1"``
        for the bracket of class 1 (see :meth:`bracket`), or ``"lo_1|1v2"`` for a
        sub-problem's bracket.
    """

    classes: np.ndarray
    proba: np.ndarray
    label: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    @staticmethod
    def bracket_columns(
        classes: np.ndarray, lo: np.ndarray, hi: np.ndarray
    ) -> dict[str, np.ndarray]:
        """Extra columns ``lo_<class>``, ``hi_<class>`` of class brackets ``lo``, ``hi`` (n, K)."""
        out: dict[str, np.ndarray] = {}
        for k, c in enumerate(classes):
            out[f"lo_{c}"] = lo[:, k]
            out[f"hi_{c}"] = hi[:, k]
        return out

    def bracket(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The bracket of every class probability, two arrays (n, K); None when the
        report has no ``lo_<class>`` / ``hi_<class>`` columns for every class."""
        keys = [(f"lo_{c}", f"hi_{c}") for c in self.classes]
        if not all(lo in self.extra and hi in self.extra for lo, hi in keys):
            return None
        lo = np.column_stack([self.extra[k] for k, _ in keys])
        hi = np.column_stack([self.extra[k] for _, k in keys])
        return lo, hi

    @classmethod
    def from_proba(
        cls, classes: np.ndarray, proba: np.ndarray, extra: dict[str, np.ndarray] | None = None
    ) -> ProbabilityReport:
        """Build a report, predicting the label as the argmax of ``proba`` (n, K)."""
        classes = np.asarray(classes)
        proba = np.asarray(proba, dtype=float)
        return cls(classes, proba, classes[np.argmax(proba, axis=1)], dict(extra or {}))

    def interval(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The per-point intervals of every class probability (``interval_lo_<class>``,
        ``interval_hi_<class>``), two arrays (n, K); None when the report has none."""
        keys = [(f"{INTERVAL_LO}{c}", f"{INTERVAL_HI}{c}") for c in self.classes]
        if not all(lo in self.extra and hi in self.extra for lo, hi in keys):
            return None
        lo = np.column_stack([self.extra[k] for k, _ in keys])
        hi = np.column_stack([self.extra[k] for _, k in keys])
        return lo, hi

    def columns(self) -> dict[str, np.ndarray]:
        """All columns in output order: ``label``, ``p_<class>`` per class, then extras."""
        out: dict[str, np.ndarray] = {"label": self.label}
        for k, c in enumerate(self.classes):
            out[f"p_{c}"] = self.proba[:, k]
        out.update(self.extra)
        return out


def with_intervals(
    report: ProbabilityReport, estimator: Any, X: np.ndarray, level: float = INTERVAL_LEVEL
) -> ProbabilityReport:
    """``report`` of ``X`` (n, p) with the per-point intervals of both class probabilities
    of a binary ``estimator`` that has ``predict_interval`` (a calibrated
    :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`): extra columns
    ``interval_lo_<class>`` and ``interval_hi_<class>``, each shape (n,).

    Raises
    ------
    InputError
        The estimator gives no per-point intervals.
    """
    from ..errors import InputError

    interval = getattr(estimator, "predict_interval", None)
    if interval is None or len(report.classes) != 2:
        raise InputError(
            f"{type(estimator).__name__} gives no per-point intervals (the binary scheme "
            "with a calibration does)"
        )
    lo1, hi1 = interval(X, level)
    bounds = {
        str(estimator.classes_[1]): (lo1, hi1),
        str(estimator.classes_[0]): (1.0 - hi1, 1.0 - lo1),
    }
    extra = dict(report.extra)
    for c in report.classes:
        lo, hi = bounds[str(c)]
        extra[f"{INTERVAL_LO}{c}"] = np.asarray(lo, dtype=float)
        extra[f"{INTERVAL_HI}{c}"] = np.asarray(hi, dtype=float)
    return ProbabilityReport(report.classes, report.proba, report.label, extra)
