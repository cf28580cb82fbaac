"""The registry of probability schemes that the command line and the desktop app offer.

Each scheme has a name, a label and a one-line description for display, says whether it
takes two classes or K, and builds a configured (unfitted) estimator from a
:class:`~wsvmgui.core.settings.RunSettings`.  A scheme whose implementation is missing is
listed as unavailable with the reason, so front ends can show it disabled.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import InputError
from .progress import CancelCheck, ProgressCallback
from .settings import RunSettings


@dataclass(frozen=True)
class Scheme:
    """A probability scheme.

    Attributes
    ----------
    name : str
        Identifier used by the CLI (``--scheme``) and settings files.
    label : str
        Short display name.
    description : str
        One line for tooltips and ``--help``.
    multiclass : bool
        Handles K >= 3 classes (all schemes handle K = 2, multiclass ones through the
        binary engine).
    module : str
        Module that implements it.
    build : callable
        ``build(settings) -> estimator``.
    """

    name: str
    label: str
    description: str
    multiclass: bool
    module: str
    build: Callable[[RunSettings], Any]

    def availability(self) -> tuple[bool, str]:
        """Whether the implementation can be imported, and why not."""
        try:
            importlib.import_module(self.module)
        except ImportError as exc:
            return False, f"not available in this build ({exc})"
        return True, ""


def _kernel_params(s: RunSettings) -> dict[str, Any]:
    return {"kernel": s.kernel, "degree": s.degree, "coef0": s.coef0, "poly_gamma": s.poly_gamma}


def _binary_params(s: RunSettings) -> dict[str, Any]:
    return {
        **_kernel_params(s),
        "n_weights": s.n_weights,
        "lambdas": s.lambdas,
        "sigmas": s.sigmas if s.kernel == "rbf" else None,
        "rule": s.rule,
        "tuning": "auto" if s.tuning == "tune-set" else s.tuning,
        "tune_fraction": s.tune_fraction,
        "cv_folds": s.cv_folds,
        "refit": s.refit,
        "n_jobs": s.resolved_n_jobs(),
        "random_state": s.seed,
    }


def _build_binary(s: RunSettings):
    from .binary import WeightedSVMClassifier

    return WeightedSVMClassifier(**_binary_params(s), solver=s.solver)


_SCHEME_LIST = [
    Scheme(
        "binary", "Binary ladder",
        "Weighted-SVM ladder over class weights; probability where the label flips "
        "(Wang, Shen & Liu 2008)",
        False, "wsvmgui.core.binary", _build_binary,
    ),
]

SCHEMES: dict[str, Scheme] = {s.name: s for s in _SCHEME_LIST}


def get_scheme(name: str) -> Scheme:
    """Look a scheme up by name; the error lists the valid names."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise InputError(f"unknown scheme {name!r}; choose one of {', '.join(SCHEMES)}") from None


def make_estimator(settings: RunSettings, n_classes: int):
    """Build the estimator for ``settings`` and data with ``n_classes`` classes.

    Multiclass schemes given two classes fall back to the binary engine; a binary-only
    scheme given more than two classes is an error that names the multiclass schemes.
    """
    settings.validate()
    scheme = get_scheme(settings.scheme)
    ok, why = scheme.availability()
    if not ok:
        raise InputError(f"scheme {scheme.name!r} is {why}")
    if n_classes > 2 and not scheme.multiclass:
        multi = [s.name for s in SCHEMES.values() if s.multiclass]
        raise InputError(
            f"scheme {scheme.name!r} handles two classes, the data hold {n_classes}; "
            f"choose one of {', '.join(multi) or 'the multiclass schemes'}"
        )
    if n_classes == 2 and scheme.multiclass and not scheme.name.startswith("joint"):
        return _build_binary(settings)
    return scheme.build(settings)


def fit_scheme(
    settings: RunSettings,
    X: np.ndarray,
    y: np.ndarray,
    X_tune: np.ndarray | None = None,
    y_tune: np.ndarray | None = None,
    progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
):
    """Build and fit the estimator of ``settings``; the one entry point of CLI and GUI runs.

    Parameters
    ----------
    settings : RunSettings
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    X_tune, y_tune : ndarrays, shapes (m, p) and (m,), optional
        Used when ``settings.tuning == "tune-set"``.
    progress, should_cancel
        Forwarded to the estimator's ``fit``.

    Returns
    -------
    fitted estimator
    """
    n_classes = np.unique(np.asarray(y)).size
    estimator = make_estimator(settings, max(n_classes, 2))
    if settings.tuning == "tune-set":
        if X_tune is None or y_tune is None:
            raise InputError("tuning mode 'tune-set' needs a tuning set")
    else:
        X_tune = y_tune = None
    return estimator.fit(
        X, y, X_tune=X_tune, y_tune=y_tune, progress=progress, should_cancel=should_cancel
    )
