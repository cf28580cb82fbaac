"""Sample weights of the estimators: checks, and integer weights as repeated rows.

Every estimator's ``fit`` takes ``sample_weight`` (n,): row i counts ``w_i`` times, as in
scikit-learn.  For the SVM fits the weight multiplies the row's bound ``C S(y_i)`` (as
libsvm's does), normalised to mean one over the rows of each fit, so that lambda keeps its
meaning; integer weights then give exactly the fit on the rows repeated (up to the tuning
splits, which split rows, not repeats).  A scheme whose fits do not take weights yet
(its ``_fit`` has no ``sample_weight`` parameter) is given the rows repeated instead
(:func:`repeat_rows`): integer weights only, and ``cv`` given as splits of the rows is
translated into splits of the repeats; ``"auto"``, an int or a float split the repeats.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from .._sklearn_compat import check_sample_weight
from ..errors import InputError, plain_value
from ..ladder.splits import resolve_cv

#: Most repeated rows (times the rows) a scheme fitted on repeats may be given.
MAX_REPEATS = 10


def fit_weights(
    sample_weight: Any, X: np.ndarray, classes: np.ndarray, codes: np.ndarray, n_classes: int | None
) -> np.ndarray | None:
    """Checked sample weights of ``X`` (n, p), or None when they are all equal.

    Raises
    ------
    ValueError
        Wrong shape, negative, non-finite or all-zero weights (scikit-learn's messages).
    InputError
        The rows of positive weight hold fewer classes than the estimator needs.
    """
    if sample_weight is None:
        return None
    sw = check_sample_weight(sample_weight, X)
    present = np.unique(codes[sw > 0])
    if present.size < classes.size:
        missing = [plain_value(c) for c in np.delete(classes, present)]
        need = n_classes or 2
        if present.size < need:
            raise InputError(
                f"the rows of positive sample weight hold {present.size} class(es); this "
                f"estimator needs {need} (class {missing[0]!r} has weight zero)"
            )
    if np.all(sw == sw[0]):
        return None
    return sw


def as_repeats(sample_weight: np.ndarray, who: str) -> np.ndarray:
    """Repeat counts of integer ``sample_weight`` (divided by their greatest common divisor).

    Raises
    ------
    InputError
        Weights that are not integers, or more repeats than :data:`MAX_REPEATS` times
        the rows.
    """
    if not np.all(sample_weight == np.round(sample_weight)):
        raise InputError(
            f"{who} takes integer sample weights only (a row of weight k counts as k repeated rows)"
        )
    counts = sample_weight.astype(np.int64)
    positive = counts[counts > 0]
    counts //= np.gcd.reduce(positive)
    if counts.sum() > MAX_REPEATS * counts.size:
        raise InputError(
            f"{who} fits integer sample weights as repeated rows; these weights ask for "
            f"{counts.sum()} rows, more than {MAX_REPEATS} times the {counts.size} rows"
        )
    return counts


def repeat_cv(cv: Any, y: np.ndarray, counts: np.ndarray) -> Any:
    """``cv`` for the rows repeated ``counts`` times: given splits of the rows become
    splits of their repeats (rows of weight zero leave); other values are kept."""
    if isinstance(cv, (str, Integral, Real)) and not isinstance(cv, bool):
        return cv
    starts = np.cumsum(counts) - counts

    def spread(rows: np.ndarray) -> np.ndarray:
        rows = rows[counts[rows] > 0]
        reps = counts[rows]
        offsets = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        return np.repeat(starts[rows], reps) + offsets

    return [(spread(tr), spread(te)) for tr, te in resolve_cv(cv, y)]
