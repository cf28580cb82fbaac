"""What ``wsvmgui fit --report`` shows: the model's measures beside two baselines fitted
on the same training rows (imported only when a report is asked for)."""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from .._version import __version__
from ..app.capabilities import calibration_notes, tuning_notes
from ..app.measures import aligned_proba
from ..app.report import ReportInput
from ..app.settings import RunSettings
from ..app.tuning_view import tuning_surfaces
from ..estimators.report import ProbabilityReport
from ..evaluation.metrics import label_metrics
from ..io.preprocessing import PreparedRows


def report_input(
    args: argparse.Namespace,
    settings: RunSettings,
    estimator: Any,
    train: PreparedRows,
    new: PreparedRows,
    report: Any,
) -> ReportInput:
    """What ``fit --report`` shows: measures of the model and of two baselines fitted
    on the training rows, on the predicted rows when they are labelled, else in-sample on
    the training rows (and said so)."""
    y_train = np.asarray(train.data.y).astype(str)
    classes = np.unique(y_train)
    labelled = args.predict and new.data.y is not None and not any(v is None for v in new.data.y)
    target, part = (new, "predicted rows") if labelled else (train, "training rows, in-sample")
    y = np.asarray(target.data.y).astype(str)
    ok = np.isin(y, classes)
    p_model = aligned_proba(report if target is new else estimator.report(train.X), classes)
    measures = {f"{settings.scheme} ({part})": label_metrics(p_model[ok], y[ok], classes)}
    for name, model in (
        ("logistic regression", LogisticRegression(max_iter=2000)),
        ("k nearest neighbours (k=15)", KNeighborsClassifier(n_neighbors=min(15, len(y_train)))),
    ):
        model.fit(train.X, y_train)
        rep = ProbabilityReport.from_proba(model.classes_, model.predict_proba(target.X))
        measures[f"{name} ({part})"] = label_metrics(
            aligned_proba(rep, classes)[ok], y[ok], classes
        )
    surfaces = tuning_surfaces(estimator)
    data = {
        "name": os.path.basename(args.train),
        "sha256": train.data.sha256,
        "n": int(train.X.shape[0]),
        "rows_dropped": int(train.n_read - train.data.n),
        "missing": settings.missing,
        "label": args.label,
        "id": args.id,
        "classes": classes.tolist(),
        "features": list(train.data.feature_names),
    }
    return ReportInput(
        data,
        settings.to_dict(),
        settings.scheme,
        measures,
        p_model[ok],
        y[ok],
        classes,
        surfaces,
        notes=tuning_notes(estimator.fit_info_) + calibration_notes(estimator.fit_info_),
        made_by=f"wsvmgui {__version__} (command line: fit)",
    )
