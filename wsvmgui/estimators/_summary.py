"""The fitted vocabulary every estimator shares, as one plain summary for the front ends.

Every fitted estimator has ``lambda_``, ``sigma_`` and ``C_`` (floats; NaN where the scheme
has no such number, or has one per sub-problem), ``tuning_`` (None when nothing was tuned)
and :meth:`~wsvmgui.estimators._base.BaseProbabilityClassifier.
fitted_summary`, so that the command line, exports and views read one dict instead of
probing attributes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ladder.gridsearch import TuningResult


def plain(value: Any) -> Any:
    """Numbers, arrays and containers as plain Python (NaN and infinities as None)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (int, float)):
        return value
    return str(value)


def tuning_summary(tuning: Any) -> Any:
    """A tuning table in brief: its score, the chosen cell, its score, its edges."""
    if tuning is None:
        return None
    if isinstance(tuning, TuningResult):
        return {
            "score": tuning.score_name,
            "best": plain(tuning.best_params),
            "best_score": float(tuning.best_score),
            "edge": dict(tuning.edge),
            "cells": int(np.size(tuning.score)),
            "screened": tuning.screened is not None,
        }
    if (
        isinstance(tuning, dict)
        and tuning
        and all(isinstance(t, TuningResult) for t in tuning.values())
    ):
        return {str(name): tuning_summary(t) for name, t in tuning.items()}
    return plain(tuning)


def summary(estimator: Any, n_weights: Any, extra: dict[str, Any]) -> dict[str, Any]:
    """See :meth:`~wsvmgui.estimators._base.BaseProbabilityClassifier.fitted_summary`."""
    info = dict(estimator.fit_info_)
    out: dict[str, Any] = {
        "estimator": type(estimator).__name__,
        "classes": [str(c) for c in estimator.classes_],
        "lambda": plain(estimator.lambda_),
        "sigma": plain(estimator.sigma_),
        "C": plain(estimator.C_),
        "n_weights": plain(n_weights),
        "n_train": plain(info.get("n_train")),
        "tuned": estimator.tuning_ is not None,
        "tuning": tuning_summary(estimator.tuning_),
        "fit": plain({k: v for k, v in info.items() if "second" not in k}),
    }
    out.update(plain(extra))
    return out
