"""What a run of the desktop app is asked to do, and what it fits on (no Qt).

:class:`RunRequest` is what the GUI hands the worker: settings, the split, the plane of
the boundary view and, once the user agreed to a long run, its cost estimate.
:func:`fit_inputs` and :func:`fit_rows` say which rows the estimator is given, and
:func:`comparison_scheme` which non-crossing scheme is shown beside a binary ladder.
The cost estimate (:mod:`wsvmgui.app.cost`) and the run (:mod:`wsvmgui.app.analysis`)
both build on this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .datasets import DataSplit
from .phases import CostEstimate
from .plane import DEFAULT_GRID
from .schemes import SCHEMES
from .settings import RunSettings


@dataclass(frozen=True)
class RunRequest:
    """What the GUI asks the worker to do.

    Attributes
    ----------
    settings : RunSettings
    split : DataSplit
    ix, iy : int
        Plane of the boundary view.
    grid_size : int
    compare : bool
        Also fit the non-crossing scheme (two-class data) for the side-by-side view.
    reference : ndarray, shape (p,), optional
        The point the plane passes through (raw units; default: the means).
    cost : CostEstimate, optional
        The run's estimated phases: progress is weighted by their time.
    """

    settings: RunSettings
    split: DataSplit
    ix: int = 0
    iy: int = 1
    grid_size: int = DEFAULT_GRID
    compare: bool = False
    reference: np.ndarray | None = None
    cost: CostEstimate | None = None


def fit_rows(settings: RunSettings, split: DataSplit) -> np.ndarray:
    """Data rows a run gives the estimator to fit (training, plus tuning unless tune-set)."""
    if settings.tuning == "tune-set" or split.tune.size == 0:
        return split.train.index
    return np.concatenate([split.train.index, split.tune.index])


def fit_inputs(
    settings: RunSettings, split: DataSplit
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``X, y, X_tune, y_tune`` that a run passes to :func:`fit_scheme` (model inputs).

    Raises
    ------
    InputError
        Tuning mode "tune-set" without a tuning part.
    """
    X_tune = split.tune.X if split.tune.size else None
    y_tune = split.tune.y if split.tune.size else None
    if settings.tuning == "tune-set":
        if X_tune is None:
            raise InputError(
                "tuning mode 'tune-set' needs a tuning part: set a tuning fraction > 0"
            )
        return split.train.X, split.train.y, X_tune, y_tune
    if X_tune is None:
        return split.train.X, split.train.y, None, None
    # The estimator makes its own tuning split: give it the tuning rows too.
    return (
        np.vstack([split.train.X, X_tune]),
        np.concatenate([split.train.y, y_tune]),
        None,
        None,
    )


def comparison_scheme(settings: RunSettings, n_classes: int) -> tuple[str | None, str]:
    """The non-crossing scheme to show beside a binary ladder, or None with the reason."""
    if n_classes != 2:
        return None, "the non-crossing comparison is for two-class problems"
    names = [n for n in SCHEMES if "cross" in n.replace("-", "").replace("_", "")]
    if not names:
        return None, "no non-crossing scheme in this build"
    if settings.scheme in names:
        return None, "the run already uses the non-crossing scheme"
    ok, why = SCHEMES[names[0]].availability()
    if not ok:
        return None, f"non-crossing scheme {why}"
    return names[0], ""


def scheme_label(name: str) -> str:
    """The label of a scheme ("Binary ladder"), or its name when it is not registered."""
    scheme = SCHEMES.get(name)
    return scheme.label if scheme is not None else name
