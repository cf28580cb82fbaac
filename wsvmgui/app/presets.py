"""Named settings presets of the desktop app: quick, standard, thorough (no Qt).

A preset turns a scheme and the training data into a complete :class:`RunSettings`; the
settings panel shows the result and calls the settings "custom" once the user edits one.

``quick``
    The first-launch settings: a few seconds for every scheme on every built-in data set
    (``benchmarks/gui_app_defaults.py`` measures it), with the weight grid fine enough
    that the probabilities are not visibly quantised (M >= 40: estimates on a 1/40 grid,
    ends 0.0125 and 0.9875).  The penalty and width are tuned on a split over 3 x 3
    values (C = 0.3, 3, 30; 0.5, 1, 1.5 times the median between-class distance); the
    joint simplex schemes, whose fits are K-class problems, use one penalty and width
    and the grid N = 10.  The pair schemes on three or more classes keep the estimator's
    own tuning (3-fold cross-validation over its coarse 4 x 4 grid, C = 0.1 ... 100 and
    0.25 ... 1.5 sigma_M, ``pair_tuning="folds"``), already about a second on the
    built-in sets: the first multiclass view shows the library's default, whose
    ``tuning_rule="auto"`` acts only on folds (on the 3 x 3 hold-out it was the
    smallest score's cell).
``standard``
    The library's defaults: 7 penalties, 6 widths, cross-validation for n <= 500, the
    simplex grid N = 20 (minutes for the joint schemes and for many classes).
``thorough``
    ``standard`` with M = 80 and 10-fold cross-validation.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..solvers.kernels import median_between_class_distance
from .schemes import SCHEMES, is_pair_scheme
from .settings import RunSettings

PRESETS = ("quick", "standard", "thorough")
PRESET_LABELS = {
    "quick": "quick (seconds)",
    "standard": "standard (library defaults)",
    "thorough": "thorough (slow)",
}
QUICK_C = (0.3, 3.0, 30.0)
QUICK_SIGMA_FACTORS = (0.5, 1.0, 1.5)
QUICK_JOINT_C = 10.0
QUICK_JOINT_N = {3: 10, 4: 8}
QUICK_M = 40


def is_joint(scheme: str) -> bool:
    return scheme.startswith("joint")


def lambda_for(C: float, n: int) -> float:
    """``lambda = 1 / (2 n C)`` rounded to 3 significant digits (readable in the panel)."""
    return float(f"{1.0 / (2.0 * max(n, 1) * C):.3g}")


def sigma_scale(X: np.ndarray, y: np.ndarray) -> float:
    """Median distance between points of different classes (sigma_M); 1.0 if undefined."""
    try:
        value = median_between_class_distance(np.asarray(X, float), np.asarray(y), seed=0)
    except (InputError, ValueError):
        return 1.0
    return float(value) if np.isfinite(value) and value > 0 else 1.0


def preset_settings(
    name: str,
    scheme: str,
    X_train: np.ndarray,
    y_train: np.ndarray,
    base: RunSettings | None = None,
) -> RunSettings:
    """The settings of preset ``name`` for ``scheme`` on the training part.

    Parameters
    ----------
    name : {"quick", "standard", "thorough"}
    scheme : str
        A name of :data:`SCHEMES`.
    X_train : ndarray, shape (n, p)
        Model inputs of the training part (standardised when the split is).
    y_train : ndarray, shape (n,)
    base : RunSettings, optional
        Settings whose seed, workers, solver and kernel are kept (default: fresh).

    Returns
    -------
    RunSettings
        Validated.
    """
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    if scheme not in SCHEMES:
        raise InputError(f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    base = base or RunSettings()
    kept = RunSettings(
        scheme=scheme,
        seed=base.seed,
        n_jobs=base.n_jobs,
        solver=base.solver,
        scheduler=base.scheduler,
        kernel=base.kernel,
        degree=base.degree,
        coef0=base.coef0,
        poly_gamma=base.poly_gamma,
        options={k: v for k, v in base.options.items() if k in SCHEMES[scheme].options},
    )
    n = int(np.asarray(y_train).size)
    if name == "standard":
        return kept.validate()
    if name == "thorough":
        return replace(kept, n_weights=80, tuning="cv", cv_folds=10).validate()
    rbf = kept.kernel == "rbf"
    scale = sigma_scale(X_train, y_train) if rbf else 1.0
    n_fit = int(round(n * (1 - base.tune_fraction)))
    if is_joint(scheme):
        # the joint fit tunes on a split of the training part
        K = int(np.unique(np.asarray(y_train)).size)
        settings = replace(
            kept,
            joint_n=QUICK_JOINT_N.get(K, K + 2) if K >= 3 else QUICK_JOINT_N[3],
            lambdas=[lambda_for(QUICK_JOINT_C, n_fit)],
            sigmas=[float(f"{scale:.3g}")] if rbf else None,
            tuning="split",
        )
    elif is_pair_scheme(scheme) and np.unique(np.asarray(y_train)).size >= 3:
        settings = replace(kept, n_weights=QUICK_M)  # the estimator's pair tuning
    else:
        settings = replace(
            kept,
            n_weights=QUICK_M,
            lambdas=[lambda_for(C, n_fit) for C in QUICK_C],
            sigmas=[float(f"{f * scale:.3g}") for f in QUICK_SIGMA_FACTORS] if rbf else None,
            tuning="split",
        )
    return settings.validate()


def with_scheme(settings: RunSettings, scheme: str) -> RunSettings:
    """``settings`` for another scheme, dropping options the new scheme does not take."""
    opts = SCHEMES[scheme].options if scheme in SCHEMES else {}
    return replace(
        settings, scheme=scheme, options={k: v for k, v in settings.options.items() if k in opts}
    )


def default_scheme(n_classes: int) -> str:
    """The scheme the app picks for data with ``n_classes`` classes.

    Two classes: the binary ladder.  Three or four: pairwise coupling (K(K-1)/2 ladders;
    with the estimator's defaults each pair recalibrated and the table coupled by least
    squares).  Five or more: baseline-pairwise BP1, K - 1 ladders rebuilt into a pairwise
    table, whose cost grows linearly in K.  Chosen by benchmarks/results/
    multiclass_default_study.md: One-vs-All (recalibrated) had the lower L1 on every
    design with five or more classes (zeng_ex3 0.85x the best SVM peer against BP1's
    1.10x, zeng_ex2 1.54x against 1.91x) but 1.3-2.5x BP1's CPU, over the 1.5x budget of
    issue 23; with three classes it won on wu2010_ex1 / ex2 and lost on iris (1.24x the
    best peer's log loss against pairwise's 0.89x) and wine
    (docs/notes/multiclass_accuracy.md).  Both pair schemes tune on 3 folds over a coarse
    grid (the estimator's ``pair_tuning="folds"``); with it they beat their hold-out
    tuning on every multiclass design, while One-vs-All on 3 folds cost 1.9-5.5x the old
    default's CPU (benchmarks/results/multiclass_cv_study.md).
    """
    if n_classes <= 2:
        return "binary"
    return "pairwise" if n_classes <= 4 else "bp1"
