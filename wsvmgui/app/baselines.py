"""The baselines of the desktop app: common probability estimators on the same split.

Logistic regression, an SVC with Platt scaling and k nearest neighbours, fitted after a
run (on the worker) and measured on the same part as the run, so the results and
calibration views can set the scheme beside them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import Cancelled
from ..estimators.report import ProbabilityReport
from ..evaluation.metrics import label_metrics, truth_metrics
from .calibration import calibration_entry
from .datasets import DataSplit
from .measures import aligned_proba
from .view_data import Baselines


def run_baselines(
    split: DataSplit, sigma: float | None = None, should_cancel: Callable[[], bool] | None = None
) -> Baselines:
    """Logistic regression, an SVC with Platt scaling and k nearest neighbours.

    Fitted on training plus tuning rows; measured on the test part (the training part when
    there is no test part).
    """
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC

    cancel = should_cancel or (lambda: False)
    X = np.vstack([split.train.X, split.tune.X])
    y = np.concatenate([split.train.y, split.tune.y])
    target = split.test if split.test.size else split.train
    gamma = 1.0 / sigma**2 if sigma and np.isfinite(sigma) else "scale"
    models = {
        "logistic regression": LogisticRegression(max_iter=2000),
        "SVC + Platt scaling": CalibratedClassifierCV(
            SVC(gamma=gamma),
            method="sigmoid",
            ensemble=False,
            cv=max(2, min(5, int(np.unique(y, return_counts=True)[1].min()))),
        ),
        "k nearest neighbours (k=15)": KNeighborsClassifier(n_neighbors=min(15, len(y))),
    }
    classes = split.dataset.classes
    metrics: dict[str, dict[str, float]] = {}
    entries = []
    for name, model in models.items():
        if cancel():
            raise Cancelled("cancelled by the user")
        model.fit(X, y)
        rep = ProbabilityReport.from_proba(model.classes_, model.predict_proba(target.X))
        p = aligned_proba(rep, classes)
        values: dict[str, float] = {}
        if target.p_true is not None:
            values.update(truth_metrics(p, target.p_true))
        values.update(label_metrics(p, target.y, classes))
        metrics[name] = values
        entries.append(calibration_entry(name, p, target.y, classes, p_true=target.p_true))
    return Baselines(target.name, metrics, entries)
