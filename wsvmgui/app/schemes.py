"""The registry of probability schemes that the command line and the desktop app offer.

Each scheme has a name, a label and a one-line description for display, says whether it
takes two classes or K, and builds a configured (unfitted) estimator from a
:class:`~wsvmgui.app.settings.RunSettings`.  A scheme whose implementation is missing is
listed as unavailable with the reason, so front ends can show it disabled.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..executor import use_scheduler
from ..ladder.splits import with_tuning_set
from ..progress import CancelCheck, ProgressCallback

if TYPE_CHECKING:  # settings.py imports this registry; the type is all we need of it
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
    tuning : str
        What the scheme tunes, by which score, and what ``tuning = auto`` means for it
        (the tuning settings themselves mean the same in every scheme).
    """

    name: str
    label: str
    description: str
    multiclass: bool
    module: str
    build: Callable[[RunSettings], Any]
    options: dict[str, tuple[Any, str]] = field(default_factory=dict)
    tuning: str = ""

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


def _cv(s: RunSettings) -> Any:
    """The estimators' ``cv`` for the settings' tuning mode (a tuning set is placed by
    :func:`fit_scheme`, which knows the data sizes)."""
    if s.tuning == "split":
        return s.tune_fraction
    if s.tuning == "cv":
        return s.cv_folds
    return "auto"


def _tuning_params(s: RunSettings) -> dict[str, Any]:
    """``cv``, ``refit`` and ``random_state``: the same meaning in every scheme."""
    return {"cv": _cv(s), "refit": s.refit, "random_state": s.seed}


def _kernel_params(s: RunSettings) -> dict[str, Any]:
    return {"kernel": s.kernel, "degree": s.degree, "coef0": s.coef0, "poly_gamma": s.poly_gamma}


def _ladder_params(s: RunSettings) -> dict[str, Any]:
    """Everything the ladder schemes share."""
    return {
        **_kernel_params(s),
        **_tuning_params(s),
        "engine": s.engine,
        "n_weights": s.n_weights,
        "lambdas": s.lambdas,
        "sigmas": s.sigmas if s.kernel == "rbf" else None,
        "rule": s.rule,
    }


def _screen(s: RunSettings) -> dict[str, Any]:
    """``screen`` of the schemes tuned by the EGKL search."""
    return {"screen": "auto" if s.screen else None}


def _calibrated(s: RunSettings) -> dict[str, Any]:
    """``calibration`` and the tuning score and rule of the schemes that take them (those
    left at None: the estimator's own default)."""
    names = ("calibration", "tuning_score", "tuning_rule")
    return {k: getattr(s, k) for k in names if getattr(s, k) is not None}


def _build_binary(s: RunSettings):
    from ..estimators.binary import WeightedSVMClassifier

    est = WeightedSVMClassifier(
        **_ladder_params(s), **_screen(s), **_calibrated(s), solver=s.solver,
        n_jobs=s.resolved_n_jobs(),
    )  # fmt: skip
    if s.tuning_extend is not None:  # None: the estimator's default
        est.set_params(tuning_extend=s.tuning_extend)
    return est


def _build_noncrossing(s: RunSettings):
    from ..estimators.noncrossing import NonCrossingLadderClassifier

    opts = SCHEMES["noncrossing"]
    return NonCrossingLadderClassifier(
        **_ladder_params(s),
        **_screen(s),
        constraints=opts.option(s, "constraints"),
        criterion=opts.option(s, "criterion"),
        n_jobs=s.resolved_n_jobs(),
    )


def _build_preconditioned(s: RunSettings):
    from ..estimators.preconditioned import PreconditionedSVC

    opts = SCHEMES["preconditioned"]
    return PreconditionedSVC(
        **_ladder_params(s), pt=opts.option(s, "level"), ladder=opts.option(s, "ladder")
    )


def _build_probing(s: RunSettings):
    from ..estimators.probing import ProbingClassifier

    opts = SCHEMES["probing"]
    return ProbingClassifier(
        **_tuning_params(s),
        learner=opts.option(s, "learner"),
        param_grid=opts.option(s, "param_grid"),
        n_thresholds=opts.option(s, "n_thresholds"),
        loss=opts.option(s, "loss"),
    )


def _build_multiclass(name: str) -> Callable[[RunSettings], Any]:
    def build(s: RunSettings):
        from ..estimators.multiclass import MulticlassWeightedSVMClassifier

        extra = {}
        if name == "ova":
            extra["ova_normalise"] = SCHEMES["ova"].option(s, "normalise")
        if s.pair_tuning is not None:  # None: the estimator's default
            extra["pair_tuning"] = s.pair_tuning
        return MulticlassWeightedSVMClassifier(
            scheme=name,
            **_ladder_params(s),
            **_screen(s),
            **_calibrated(s),
            ties=s.ties,
            solver=s.solver,
            n_jobs=s.resolved_n_jobs(),
            **extra,
        )

    return build


def _build_joint(variant: str) -> Callable[[RunSettings], Any]:
    def build(s: RunSettings):
        from ..estimators.joint import JointWSVMClassifier

        return JointWSVMClassifier(
            **_kernel_params(s),
            **_tuning_params(s),
            n_weights=s.joint_n,
            lambdas=s.lambdas,
            sigmas=s.sigmas if s.kernel == "rbf" else None,
            scheme=variant,
            h_method=SCHEMES["joint-indirect"].option(s, "h_method")
            if variant == "indirect"
            else None,
            n_jobs=s.resolved_n_jobs(),
        )

    return build


#: How each family tunes: what, by which score, and what ``tuning = auto`` means.
_LADDER_TUNING = (
    "lambda x sigma by EGKL of the ladder; auto: 5-fold CV up to 500 points, a 30% hold-out above"
)
_JOINT_TUNING = (
    "lambda (C in 1 ... 100) x sigma by cross-entropy of the tuning labels; auto: a 50% "
    "hold-out (every candidate costs a whole simplex grid)"
)
_DC_TUNING = (
    "lambda x sigma per sub-problem by EGKL; pair schemes: C in {0.1, 1, 10, 100} x sigma "
    "in {0.25, 0.5, 1, 1.5} sigma_M, auto: 3-fold CV (pair tuning holdout: grids as "
    "binary, auto: a 30% hold-out); One-vs-All: grids as binary, auto: a "
    "30% hold-out (its K sub-problems on every row cost about K binary ones); two classes: "
    "the binary ladder"
)
#: What the engine setting does in the ladder schemes (printed by ``wsvmgui schemes``).
_ENGINE_NOTE = (
    "; engine: path (default; the exact weight path, grid-free p, the grid where a path "
    "breaks down), auto (the path, the grid where its elbow grows past 0.2 n) or grid "
    "(M - 1 weighted SVMs); weights M matter for the grid only (the path draws its sign "
    "ladder at them)"
)


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
        tuning=_LADDER_TUNING + _ENGINE_NOTE,
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
            "criterion": ("egkl-independent", "egkl-independent, egkl or hinge"),
        },
        tuning=_LADDER_TUNING + " (criterion hinge: lambda per weight by hinge loss on one "
        "hold-out, sigma by that ladder's EGKL on it); engine: path reads the ladder off "
        "the exact weight path and repairs crossing fits by an active-set method, grid "
        "fits M - 1 weighted SVMs and a QP per crossing fit",
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
        tuning="each SVM's lambda by hinge loss, sigma with the plain SVM, the level by "
        "error, on one split; auto: a 30% hold-out; engine: of the independent ladder "
        "(ladder=independent)",
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
            "param_grid": (None, 'learner parameters to tune, e.g. {"max_depth": [3, 5]}'),
            "n_thresholds": (None, "classifiers per binary problem (empty: as the ladder)"),
            "loss": ("squared", "squared or cross_entropy"),
        },
        tuning="nothing, unless param_grid is given: then the learner's parameters by "
        "cross-entropy; auto: 5-fold CV up to 500 points, a 30% hold-out above",
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
            tuning=_DC_TUNING + _ENGINE_NOTE,
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
        tuning=_JOINT_TUNING,
    ),
    Scheme(
        "joint-indirect",
        "Joint simplex, indirect",
        "One K-class truncated-hinge wSVM per simplex grid weight; p from the share of "
        "the grid predicting each class (Wu, Zhang & Liu 2010)",
        True,
        "wsvmgui.joint",
        _build_joint("indirect"),
        {"h_method": (None, "count (exact grid count) or continuous (volume share h_k)")},
        tuning=_JOINT_TUNING,
    ),
]

SCHEMES: dict[str, Scheme] = {s.name: s for s in _SCHEME_LIST}


def is_pair_scheme(name: str) -> bool:
    """Whether scheme ``name`` is a multiclass pair scheme (pairwise, the baseline schemes
    and their pairwise rebuilds), whose tuning ``pair_tuning`` sets on 3+ classes."""
    scheme = SCHEMES.get(name)
    return scheme is not None and scheme.module == "wsvmgui.multiclass" and name != "ova"


def pair_tuning_decides(settings: RunSettings, n_classes: int) -> tuple[str, ...]:
    """What ``settings.pair_tuning`` decides for data of ``n_classes`` classes: any of
    "split" (tuning "auto": 3 folds or a 30% hold-out), "lambda grid" and "sigma grid"
    (left blank); empty where it decides nothing (another scheme, two classes, or the
    tuning mode and the grids all set, as the app's quick preset sets them)."""
    if not is_pair_scheme(settings.scheme) or n_classes < 3:
        return ()
    decides = []
    if settings.tuning == "auto":
        decides.append("split")
    if settings.lambdas is None:
        decides.append("lambda grid")
    if settings.sigmas is None and settings.kernel == "rbf":
        decides.append("sigma grid")
    return tuple(decides)


def split_settings_read(settings: RunSettings) -> tuple[str, ...]:
    """The split settings the tuning mode reads: ``"tune_fraction"`` under "split" (the
    share held out) and "tune-set" (the tuning part's share of all rows), ``"cv_folds"``
    under "cv"; none under "auto", where each scheme chooses its own split
    (:func:`auto_split`) and both are ignored."""
    return {
        "split": ("tune_fraction",),
        "tune-set": ("tune_fraction",),
        "cv": ("cv_folds",),
    }.get(settings.tuning, ())


def auto_split(settings: RunSettings, n_classes: int) -> str:
    """The split tuning "auto" makes for ``settings.scheme`` on ``n_classes`` classes (the
    estimator's ``cv="auto"``; a class too small for it changes it, with a warning): a 50%
    hold-out for the joint schemes, 30% for the preconditioned SVM and One-vs-All, 3-fold
    CV for the pair schemes (30% with ``pair_tuning="holdout"``), else 5-fold CV up to 500
    rows and a 30% hold-out above (the binary ladders, Probing, every scheme on two
    classes but the joint and preconditioned ones)."""
    name = settings.scheme
    if name.startswith("joint"):
        return "a 50% hold-out"
    if name == "preconditioned" or (name == "ova" and n_classes >= 3):
        return "a 30% hold-out"
    if is_pair_scheme(name) and n_classes >= 3:
        return "a 30% hold-out" if settings.pair_tuning == "holdout" else "3-fold CV"
    return "5-fold CV up to 500 rows, a 30% hold-out above"


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


def prepare_scheme(
    settings: RunSettings,
    X: np.ndarray,
    y: np.ndarray,
    X_tune: np.ndarray | None = None,
    y_tune: np.ndarray | None = None,
) -> tuple[Any, np.ndarray, np.ndarray]:
    """The estimator of ``settings`` and the rows :func:`fit_scheme` fits it on, unfitted.

    The settings' tuning mode becomes the estimator's ``cv``: "auto" -> ``"auto"``,
    "split" -> ``tune_fraction``, "cv" -> ``cv_folds``, "tune-set" -> the training rows
    followed by the tuning set's rows with a ``PredefinedSplit`` (so ``refit`` refits on
    both, as for a split).

    Returns
    -------
    estimator, X, y
        ``estimator.fit(X, y)`` is the run's fit (the cost estimate plans it).
    """
    n_classes = np.unique(np.asarray(y)).size
    estimator = make_estimator(settings, max(n_classes, 2))
    if settings.tuning == "tune-set":
        if X_tune is None or y_tune is None:
            raise InputError("tuning mode 'tune-set' needs a tuning set")
        X, y, split = with_tuning_set(X, y, X_tune, y_tune)
        estimator.set_params(cv=split)
    return estimator, X, y


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

    The estimator and its rows are :func:`prepare_scheme`'s.  With ``settings.scheduler``
    the fits run on that Dask cluster (:func:`wsvmgui.executor.use_scheduler`).

    Parameters
    ----------
    settings : RunSettings
    X : array-like, shape (n, p)
    y : array-like, shape (n,)
    X_tune, y_tune : array-likes, shapes (m, p) and (m,), optional
        Used when ``settings.tuning == "tune-set"``.
    progress, should_cancel
        Forwarded to the estimator's ``fit``.

    Returns
    -------
    fitted estimator
    """
    estimator, X, y = prepare_scheme(settings, X, y, X_tune, y_tune)
    address = settings.scheduler.strip()
    with use_scheduler(address) if address else nullcontext():
        return estimator.fit(X, y, progress=progress, should_cancel=should_cancel)
