"""wsvmgui: class probabilities from weighted large-margin classifiers.

The public API, importable from here (loaded on first use, so ``import wsvmgui`` stays
light)::

    from wsvmgui import WeightedSVMClassifier, MulticlassWeightedSVMClassifier

Estimators: :class:`WeightedSVMClassifier` (binary bracketing),
:class:`NonCrossingLadderClassifier`, :class:`PreconditionedSVC`,
:class:`MulticlassWeightedSVMClassifier` (pairwise, baseline, One-vs-All),
:class:`JointWSVMClassifier` (the joint K-class fit on the weight simplex) and
:class:`ProbingClassifier` (any learner that takes sample weights).  Every tuned
estimator takes scikit-learn's ``cv`` (an int, a float hold-out share, a splitter, or
``"auto"``); :func:`with_tuning_set` turns a separate tuning set into training rows plus
a ``PredefinedSplit``.  Simulation designs
with known probabilities: :func:`simulate`; measures against the truth:
:func:`truth_metrics`.  Cost: :func:`estimate_fit` (a fit's estimated time, before
fitting) and :func:`cost_limit` (every ``fit`` refuses with :class:`CostLimitError` when
its estimate exceeds the limit, 60 minutes by default).  Errors: :class:`InputError`,
:class:`SolverError`, :class:`Cancelled`.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ._version import __version__

_PUBLIC = {
    "WeightedSVMClassifier": "wsvmgui.estimators.binary",
    "NonCrossingLadderClassifier": "wsvmgui.estimators.noncrossing",
    "PreconditionedSVC": "wsvmgui.estimators.preconditioned",
    "MulticlassWeightedSVMClassifier": "wsvmgui.estimators.multiclass",
    "JointWSVMClassifier": "wsvmgui.estimators.joint",
    "ProbingClassifier": "wsvmgui.estimators.probing",
    "with_tuning_set": "wsvmgui.ladder.splits",
    "simulate": "wsvmgui.evaluation.designs",
    "truth_metrics": "wsvmgui.evaluation.metrics",
    "estimate_fit": "wsvmgui.estimators.cost",
    "cost_limit": "wsvmgui.estimators.cost",
    "CostLimitError": "wsvmgui.errors",
    "InputError": "wsvmgui.errors",
    "SolverError": "wsvmgui.errors",
    "Cancelled": "wsvmgui.errors",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        value = getattr(import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'wsvmgui' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
