"""The registry of probability schemes that the command line and the desktop app offer.

Each scheme has a name, a label and a one-line description for display, says whether it
takes two classes or K, and builds a configured (unfitted) estimator from a
:class:`~wsvmgui.app.settings.RunSettings`.  A scheme whose implementation is missing is
listed as unavailable with the reason, so front ends can show it disabled.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..progress import CancelCheck, ProgressCallback
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
    options : dict of str to (default, description)
        Scheme-specific entries of ``RunSettings.options`` this scheme reads.
    """

    name: str
    label: str
    description: str
    multiclass: bool
    module: str
    build: Callable[[RunSettings], Any]
    options: dict[str, tuple[Any, str]] = field(default_factory=dict)

    def option(self, settings: RunSettings, key: str) -> Any:
        """The value of option ``key`` in ``settings``, or its default."""
        return settings.options.get(key, self.options[key][0])

    def check_options(self, settings: RunSettings) -> None:
        """Raise InputError for an option this scheme does not take."""
        unknown = sorted(set(settings.options) - set(self.options))
        if unknown:
            known = ", ".join(self.options) or "none"
            raise InputError(
                f"scheme {self.name!r} has no option {unknown[0]!r} (its options: {known})"
            )

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
    from ..estimators.binary import WeightedSVMClassifier

    return WeightedSVMClassifier(**_binary_params(s), solver=s.solver)


def _fixed_grid_params(s: RunSettings) -> dict[str, Any]:
    """Kernel, grid and split parameters shared by the schemes that tune on a split."""
    p = _binary_params(s)
    del p["tuning"], p["cv_folds"]
    return p


def _build_noncrossing(s: RunSettings):
    from ..estimators.noncrossing import NonCrossingLadderClassifier

    opts = SCHEMES["noncrossing"]
    return NonCrossingLadderClassifier(
        **_fixed_grid_params(s),
        constraints=opts.option(s, "constraints"),
        tuning=opts.option(s, "tuning"),
    )


def _build_preconditioned(s: RunSettings):
    from ..estimators.preconditioned import PreconditionedSVC

    opts = SCHEMES["preconditioned"]
    p = _fixed_grid_params(s)
    for key in ("refit", "n_jobs"):
        p.pop(key)
    return PreconditionedSVC(pt=opts.option(s, "level"), ladder=opts.option(s, "ladder"), **p)


def _build_probing(s: RunSettings):
    from ..estimators.probing import ProbingClassifier

    opts = SCHEMES["probing"]
    return ProbingClassifier(
        learner=opts.option(s, "learner"),
        n_thresholds=opts.option(s, "n_thresholds"),
        loss=opts.option(s, "loss"),
        random_state=s.seed,
    )


def _build_multiclass(name: str) -> Callable[[RunSettings], Any]:
    def build(s: RunSettings):
        from ..estimators.multiclass import MulticlassWeightedSVMClassifier

        p = _fixed_grid_params(s)
        extra = {}
        if name == "ova":
            extra["ova_normalise"] = SCHEMES["ova"].option(s, "normalise")
        return MulticlassWeightedSVMClassifier(scheme=name, **p, solver=s.solver, **extra)

    return build


def _build_joint(variant: str) -> Callable[[RunSettings], Any]:
    def build(s: RunSettings):
        from ..estimators.joint import JointWSVMClassifier

        return JointWSVMClassifier(
            N=s.joint_n,
            kernel=s.kernel,
            degree=s.degree,
            coef0=s.coef0,
            poly_gamma=s.poly_gamma,
            lambdas=s.lambdas,
            sigmas=s.sigmas if s.kernel == "rbf" else None,
            scheme=variant,
            h_method=SCHEMES["joint-indirect"].option(s, "h_method")
            if variant == "indirect"
            else None,
            tune_fraction=s.tune_fraction,
            n_jobs=s.resolved_n_jobs(),
            random_state=s.seed,
        )

    return build


_MULTICLASS = {
    "pairwise": (
        "Pairwise coupling (P-SVM)",
        "All K(K-1)/2 pairwise ladders coupled with a per-point baseline (Zeng & Zhang)",
    ),
    "baseline1": ("Baseline learning B1", "K-1 ladders against the largest class (Zeng & Zhang)"),
    "baseline2": (
        "Baseline learning B2",
        "K-1 ladders against the class of median aggregated distance (Zeng & Zhang)",
    ),
    "bp1": (
        "Baseline-pairwise BP1",
        "B1's ladders rebuilt into a full pairwise table, then coupled (no extra fits)",
    ),
    "bp2": (
        "Baseline-pairwise BP2",
        "B2's ladders rebuilt into a full pairwise table, then coupled (no extra fits)",
    ),
    "ova": ("One-vs-All (A-SVM)", "K one-against-the-rest ladders, normalised to sum to one"),
}

_SCHEME_LIST = [
    Scheme(
        "binary",
        "Binary ladder",
        "Weighted-SVM ladder over class weights; probability where the label flips "
        "(Wang, Shen & Liu 2008)",
        False,
        "wsvmgui.estimators.binary",
        _build_binary,
    ),
    Scheme(
        "noncrossing",
        "Non-crossing ladder",
        "Ladder fitted outwards from pi = 1/2, each boundary kept from crossing its "
        "neighbour inside the hull (Wu & Liu 2011)",
        False,
        "wsvmgui.ladder.noncrossing",
        _build_noncrossing,
        {
            "constraints": ("auto", "auto, hull, pairs or compact constraint set"),
            "tuning": ("egkl-independent", "egkl-independent, egkl or hinge"),
        },
    ),
    Scheme(
        "preconditioned",
        "Preconditioned SVM",
        "Plain SVM on labels relabelled where the ladder's p_hat is below pt or above "
        "1 - pt (Wu & Liu 2011)",
        False,
        "wsvmgui.ladder.precondition",
        _build_preconditioned,
        {
            "level": (None, "level pt in [0, 0.5); empty: tuned by classification error"),
            "ladder": ("noncrossing", "noncrossing or independent ladder for p_hat"),
        },
    ),
    Scheme(
        "probing",
        "Probing",
        "Any learner taking sample weights, thresholds placed adaptively, answers counted "
        "(Langford & Zadrozny)",
        True,
        "wsvmgui.probing.reduction",
        _build_probing,
        {
            "learner": ("tree", "svm, logistic, tree, forest, boosting or naive_bayes"),
            "n_thresholds": (None, "classifiers per binary problem (empty: as the ladder)"),
            "loss": ("squared", "squared or cross_entropy"),
        },
    ),
    *[
        Scheme(
            name,
            label,
            desc,
            True,
            "wsvmgui.multiclass",
            _build_multiclass(name),
            {"normalise": ("sum", "sum or simplex")} if name == "ova" else {},
        )
        for name, (label, desc) in _MULTICLASS.items()
    ],
    Scheme(
        "joint-direct",
        "Joint simplex, direct",
        "One K-class truncated-hinge wSVM per simplex grid weight; p from the cells where "
        "all K classes meet (Wu, Zhang & Liu 2010)",
        True,
        "wsvmgui.joint",
        _build_joint("direct"),
    ),
    Scheme(
        "joint-indirect",
        "Joint simplex, indirect",
        "One K-class truncated-hinge wSVM per simplex grid weight; p from the share of "
        "the grid predicting each class (Wu, Zhang & Liu 2010)",
        True,
        "wsvmgui.joint",
        _build_joint("indirect"),
        {"h_method": (None, "count (exact grid count) or volume (continuous h_k)")},
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

    Divide-and-conquer schemes given two classes fall back to the binary engine (they
    reduce to it); the joint and Probing schemes fit two classes themselves.  A binary-only
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
    scheme.check_options(settings)
    if n_classes == 2 and scheme.module == "wsvmgui.multiclass":
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
