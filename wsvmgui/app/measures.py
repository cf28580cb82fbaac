"""Probabilities in the data set's class order, and the measures of each part (no Qt)."""

from __future__ import annotations

import numpy as np

from ..estimators.report import ProbabilityReport
from ..evaluation.metrics import label_metrics, truth_metrics
from .datasets import DataSplit


def aligned_proba(report: ProbabilityReport, classes: np.ndarray) -> np.ndarray:
    """The report's probabilities with columns in the order of ``classes`` (K,); (n, K)."""
    out = np.zeros((report.proba.shape[0], len(classes)))
    rep = list(report.classes)
    for k, c in enumerate(classes):
        if c in rep:
            out[:, k] = report.proba[:, rep.index(c)]
    return out


def aligned_report(report: ProbabilityReport, classes: np.ndarray) -> ProbabilityReport:
    """The report with probability columns in the order of ``classes``."""
    return ProbabilityReport(
        np.asarray(classes), aligned_proba(report, classes), report.label, dict(report.extra)
    )


def part_metrics(split: DataSplit, proba_all: np.ndarray) -> dict[str, dict[str, float]]:
    """Measures for each non-empty part: truth metrics when known, then label metrics.

    Parameters
    ----------
    split : DataSplit
    proba_all : ndarray, shape (n, K)
        Probabilities of every data row, columns in ``split.dataset.classes`` order.
    """
    classes = split.dataset.classes
    out: dict[str, dict[str, float]] = {}
    for name, part in split.parts.items():
        if part.size == 0:
            continue
        p = proba_all[part.index]
        values: dict[str, float] = {}
        if part.p_true is not None:
            values.update(truth_metrics(p, part.p_true))
        values.update(label_metrics(p, part.y, classes))
        out[name] = values
    return out
