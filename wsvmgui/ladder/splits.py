"""How the training data are split for tuning: the one splitter of every scheme.

Every tuned scheme takes scikit-learn's ``cv`` idiom, resolved here into a list of
``(train, test)`` index pairs over the rows given to ``fit``:

* ``"auto"``: stratified 5-fold cross-validation up to :data:`AUTO_CV_MAX_N` points,
  above it one stratified
  hold-out of :data:`DEFAULT_HOLDOUT` of the points (a single split wastes too many points
  on small data; k folds cost k times as much on large data;
  benchmarks/results/binary_tuning.md).  A scheme for which k folds cost too much, or
  whose choices are made on one tuning set, passes ``holdout=True``: its ``"auto"`` is
  the hold-out at every size (each such scheme says so in its docstring and in
  ``wsvmgui schemes``).  ``"auto"`` adapts to small classes (:func:`auto_cv`), never
  refusing data that scikit-learn's ``GridSearchCV`` would go on with: the folds shrink
  to the smallest class (down to :data:`AUTO_MIN_FOLDS`), then a stratified hold-out of
  one point per class, then no tuning at all, each with a :class:`TuningWarning`;
* an int ``k >= 2``: stratified k-fold cross-validation, shuffled with ``random_state``;
* a float in (0, 1): one stratified hold-out of that share of the points;
* a scikit-learn splitter (``split`` and ``get_n_splits``), e.g. ``PredefinedSplit`` for
  a user's own tuning set, or an iterable of ``(train, test)`` index pairs: used as given.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.model_selection import PredefinedSplit, StratifiedKFold, train_test_split

from ..errors import InputError, WSVMWarning, plain_value

#: A tuning split: row indices of the training part and of the tuning part.
Fold = tuple[np.ndarray, np.ndarray]
#: Largest training size that ``cv="auto"`` tunes by cross-validation.
AUTO_CV_MAX_N = 500
#: Folds of ``cv="auto"`` on small data.
AUTO_FOLDS = 5
#: Share held out by ``cv="auto"`` on large data (and by single-split schemes).
DEFAULT_HOLDOUT = 0.3
#: Fewest folds ``cv="auto"`` shrinks to before it holds out one point per class.
AUTO_MIN_FOLDS = 3


class TuningWarning(WSVMWarning):
    """``cv="auto"`` adapted to small classes: fewer folds, a smaller hold-out, no tuning."""


def holdout_split(y: np.ndarray, fraction: float, seed: Any = None) -> Fold:
    """One stratified split into a training part and a tuning part of share ``fraction``.

    Parameters
    ----------
    y : ndarray, shape (n,)
        Labels (any dtype; messages name them).
    fraction : float
        Share of points in the tuning part, in (0, 1).
    seed : int, RandomState or None

    Returns
    -------
    (train, test) : ndarrays of int
        Row indices; the training part in the shuffled order of ``train_test_split``.
    """
    if not 0.0 < fraction < 1.0:
        raise InputError(f"tuning fraction must lie strictly between 0 and 1, got {fraction!r}")
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    need = max(int(np.ceil(1 / min(fraction, 1 - fraction))), 2)
    small = counts < need
    if small.any():
        k = int(np.flatnonzero(small)[0])
        raise InputError(
            f"class {plain_value(classes[k])!r} has only {counts[k]} point(s): too few for a "
            f"tuning split of {fraction:.0%} (each class needs at least {need})"
        )
    try:
        # Stratify on class indices: labels in an object array (a pandas column of
        # integers) are "unknown" to scikit-learn's splitters.
        train, test = train_test_split(
            np.arange(y.size), test_size=fraction, stratify=codes.ravel(), random_state=seed
        )
    except ValueError as exc:
        raise InputError(f"cannot split the data for tuning: {exc}") from exc
    return np.asarray(train), np.asarray(test)


def small_holdout_split(y: np.ndarray, fraction: float, seed: Any = None) -> Fold:
    """A stratified split keeping at least one point of every class on each side.

    Each class of ``n_c >= 2`` points puts ``round(fraction * n_c)``, clipped to
    ``1 .. n_c - 1``, of them (drawn with ``seed``) into the tuning part.

    Returns
    -------
    (train, test) : ndarrays of int, sorted
    """
    _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if counts.min() < 2:
        raise InputError("a stratified hold-out needs two points of every class")
    rng = np.random.RandomState(seed) if not isinstance(seed, np.random.RandomState) else seed
    test = []
    for k, n_c in enumerate(counts):
        rows = np.flatnonzero(codes.ravel() == k)
        take = int(np.clip(round(fraction * n_c), 1, n_c - 1))
        test.append(rng.permutation(rows)[:take])
    held = np.sort(np.concatenate(test))
    return np.setdiff1d(np.arange(y.size), held), held


def _smallest(y: np.ndarray) -> tuple[Any, int]:
    classes, counts = np.unique(y, return_counts=True)
    k = int(np.argmin(counts))
    return plain_value(classes[k]), int(counts[k])


def auto_cv(
    y: np.ndarray,
    random_state: Any = None,
    holdout: bool = False,
    holdout_share: float = DEFAULT_HOLDOUT,
) -> list[Fold]:
    """The folds of ``cv="auto"``, adapted to small classes (see the module docstring).

    Stratified :data:`AUTO_FOLDS`-fold CV up to :data:`AUTO_CV_MAX_N` points (unless
    ``holdout``), else one stratified hold-out of ``holdout_share``.  Where a class is
    too small for that, with a :class:`TuningWarning`: k-fold CV with as many folds as
    the smallest class has points (at least :data:`AUTO_MIN_FOLDS`); a hold-out of
    ``holdout_share`` of every class but at least one point on each side; with a class
    of one point, no folds at all (the caller fits without tuning).

    Returns
    -------
    list of (train, test)
        Empty when the data are too small to tune on.
    """
    y = np.asarray(y)
    label, m = _smallest(y)
    if not holdout and y.size <= AUTO_CV_MAX_N:
        if m >= AUTO_FOLDS:
            return kfold_splits(y, AUTO_FOLDS, random_state)
        if m >= AUTO_MIN_FOLDS:
            _warn(f"class {label!r} has only {m} points: {m}-fold cross-validation")
            return kfold_splits(y, m, random_state)
        share = DEFAULT_HOLDOUT
    else:
        share = holdout_share if holdout else DEFAULT_HOLDOUT
        need = max(int(np.ceil(1 / min(share, 1 - share))), 2)
        if m >= need:
            return [holdout_split(y, share, random_state)]
    if m >= 2:
        _warn(f"class {label!r} has only {m} points: a hold-out of one point per small class")
        return [small_holdout_split(y, share, random_state)]
    _warn(f"class {label!r} has only {m} point: too few to tune on; no tuning")
    return []


def _warn(what: str) -> None:
    warnings.warn(f"cv='auto': {what}", TuningWarning, stacklevel=3)


def kfold_splits(y: np.ndarray, n_folds: int, seed: Any = None) -> list[Fold]:
    """Stratified, shuffled k-fold index pairs ``(train, test)`` over labels ``y`` (n,)."""
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if n_folds < 2:
        raise InputError(f"cross-validation needs at least 2 folds, got {n_folds}")
    small = counts < n_folds
    if small.any():
        k = int(np.flatnonzero(small)[0])
        raise InputError(
            f"class {plain_value(classes[k])!r} has only {counts[k]} point(s): too few for "
            f"{n_folds}-fold cross-validation (each class needs at least {n_folds})"
        )
    splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    return [(tr, te) for tr, te in splitter.split(np.zeros((y.size, 1)), codes.ravel())]


def tuning_set_split(n_train: int, n_tune: int) -> PredefinedSplit:
    """The split of ``n_train`` training rows followed by ``n_tune`` rows of a tuning set."""
    return PredefinedSplit(np.concatenate([np.full(n_train, -1), np.zeros(n_tune, dtype=int)]))


def with_tuning_set(X, y, X_tune, y_tune) -> tuple[Any, np.ndarray, PredefinedSplit]:
    """Training rows followed by a tuning set's rows, and the ``cv`` that tells them apart.

    ``est.set_params(cv=cv).fit(X_all, y_all)`` tunes on the tuning set and (with
    ``refit=True``) fits the final model on both, as every scheme does with a split.

    Parameters
    ----------
    X : array-like or DataFrame, shape (n, p)
    y : array-like, shape (n,)
    X_tune : array-like or DataFrame, shape (m, p)
    y_tune : array-like, shape (m,)
        Labels among those of ``y``.

    Returns
    -------
    X_all : ndarray or DataFrame, shape (n + m, p)
    y_all : ndarray, shape (n + m,)
    cv : PredefinedSplit

    Raises
    ------
    InputError
        Lengths or column counts that do not match, or a tuning label that is not a
        training class.
    """
    y, y_tune = np.asarray(y), np.asarray(y_tune)
    if y_tune.ndim != 1 or len(y_tune) != np.shape(X_tune)[0]:
        raise InputError("the tuning set's X and y have different lengths")
    width, width_tune = np.shape(X)[1:], np.shape(X_tune)[1:]
    if width != width_tune:
        raise InputError(
            f"the tuning set has {width_tune[0] if width_tune else 1} feature columns, the "
            f"training data {width[0] if width else 1}"
        )
    try:
        unknown = ~np.isin(y_tune, np.unique(y))
    except TypeError:  # labels of different kinds cannot be compared
        unknown = np.ones(y_tune.size, dtype=bool)
    if unknown.any():
        raise InputError(
            f"tuning label {plain_value(y_tune[unknown][0])!r} is not a training class"
        )
    if hasattr(X, "iloc") and hasattr(X_tune, "iloc"):
        import pandas as pd

        X_all = pd.concat([X, X_tune], ignore_index=True)
    else:
        X_all = np.vstack([np.asarray(X), np.asarray(X_tune)])
    return X_all, np.concatenate([y, y_tune]), tuning_set_split(len(y), len(y_tune))


def describe_cv(cv: Any, holdout: bool = False) -> str:
    """Words for a ``cv`` value, for settings headers and the scheme list."""
    if isinstance(cv, str) and cv == "auto":
        if holdout:
            return f"one stratified {DEFAULT_HOLDOUT:.0%} hold-out"
        return (
            f"stratified {AUTO_FOLDS}-fold CV up to {AUTO_CV_MAX_N} points, "
            f"a {DEFAULT_HOLDOUT:.0%} hold-out above"
        )
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        return f"stratified {int(cv)}-fold CV"
    if isinstance(cv, Real) and not isinstance(cv, bool):
        return f"one stratified {float(cv):.0%} hold-out"
    return f"the given splits ({type(cv).__name__})"


def resolve_cv(
    cv: Any,
    y: np.ndarray,
    random_state: Any = None,
    holdout: bool = False,
    holdout_share: float = DEFAULT_HOLDOUT,
) -> list[Fold]:
    """The ``(train, test)`` folds of ``cv`` over labels ``y`` (see the module docstring).

    Parameters
    ----------
    cv : "auto", int, float, splitter or iterable of (train, test)
    y : ndarray, shape (n,)
        Labels or class indices (stratification and messages).
    random_state : int, RandomState or None
        Shuffles the folds / draws the hold-out.
    holdout : bool
        ``"auto"`` means the hold-out at every size.
    holdout_share : float
        Share of that hold-out (default :data:`DEFAULT_HOLDOUT`).

    Returns
    -------
    list of (train, test)
        Index arrays into the rows of ``y``; every test part non-empty.  Empty only for
        ``"auto"`` on data too small to tune on (:func:`auto_cv`; a warning says so).

    Raises
    ------
    InputError
        Too few points per class for an explicit split, or a split that is not a
        partition of valid row indices.
    """
    y = np.asarray(y)
    n = y.size
    if isinstance(cv, str):
        if cv != "auto":
            raise InputError(f"unknown cv {cv!r}; use 'auto', an int, a float or a splitter")
        return auto_cv(y, random_state, holdout, holdout_share)
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        return kfold_splits(y, int(cv), random_state)
    if isinstance(cv, Real) and not isinstance(cv, bool):
        return [holdout_split(y, float(cv), random_state)]
    if hasattr(cv, "split"):
        folds = list(cv.split(np.zeros((n, 1)), np.unique(y, return_inverse=True)[1].ravel()))
    else:
        try:
            folds = list(cv)
        except TypeError:
            raise InputError(
                f"cv must be 'auto', an int, a float or a splitter, got {cv!r}"
            ) from None
    if not folds:
        raise InputError("cv gave no (train, test) split")
    return [_check_fold(f, n) for f in folds]


def _check_fold(fold: Any, n: int) -> Fold:
    try:
        train, test = (np.asarray(part, dtype=int).ravel() for part in fold)
    except (TypeError, ValueError):
        raise InputError(f"a cv split must be a pair of index arrays, got {fold!r}") from None
    for part in (train, test):
        if part.size and (part.min() < 0 or part.max() >= n):
            raise InputError(f"a cv split holds a row index outside 0..{n - 1}")
    if train.size == 0 or test.size == 0:
        raise InputError("a cv split has an empty training or tuning part")
    return train, test
