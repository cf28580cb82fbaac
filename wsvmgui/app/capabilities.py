"""What a fitted estimator shows beyond its probabilities, as the views' data (no Qt).

The estimators declare their view capabilities (:mod:`wsvmgui.estimators.views`), so a
scheme without one simply shows less:

* :class:`~wsvmgui.estimators.views.LadderViews`: one binary ladder (boundaries, sign
  ladder, bracket);
* :class:`~wsvmgui.estimators.views.SubproblemViews`: the ladders of divide and conquer,
  one per sub-problem;
* :class:`~wsvmgui.estimators.views.SimplexViews`: the joint simplex scheme's grid
  predictions.

This module reads them (:func:`ladders_of`, :func:`simplex_of`), checks a binary ladder for
crossings over the whole training hull (:func:`crossing_checks`), turns the fit's own
notes into sentences (:func:`engine_notes`) and a final fit's progress event into a live
boundary (:func:`live_boundary`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from ..estimators.views import LadderViews, SimplexViews, SubproblemViews
from .contours import zero_contour
from .view_data import LadderInfo, LiveBoundary, SimplexInfo


def _class_text(label: Any, signed: bool) -> str:
    if signed and isinstance(label, (int, float, np.integer, np.floating)) and label > 0:
        return f"+{label}"
    return str(label)


def pair_name(positive: Any, negative: Any) -> str:
    """The name of a binary ladder: its positive class (the one whose ``p_hat`` it
    estimates, the second of the sorted classes) first, ``"malignant vs benign"``.

    Numeric labels of which one is negative get their signs, ``"+1 vs -1"`` (read as
    "1 vs -1" before, as if one minus one)."""
    numbers = all(
        isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, bool)
        for c in (positive, negative)
    )
    signed = numbers and min(positive, negative) < 0
    return f"{_class_text(positive, signed)} vs {_class_text(negative, signed)}"


def ladders_of(estimator: Any, X: np.ndarray, classes: np.ndarray) -> list[LadderInfo]:
    """The sign ladders of every binary sub-problem at ``X`` (n, p); [] if none."""
    if isinstance(estimator, SubproblemViews):
        values = estimator.subproblem_decisions(X)
        return [
            LadderInfo(
                str(view.label),
                np.asarray(view.weights),
                np.asarray(view.signs, bool),
                np.asarray(view.lo, float),
                np.asarray(view.hi, float),
                np.asarray(f, float),
                None if view.calibrated is None else np.asarray(view.calibrated, float),
                view.calibration,
            )
            for view, f in zip(estimator.subproblem_ladders(X), values, strict=True)
        ]
    if isinstance(estimator, LadderViews):
        raw = estimator.raw_estimate(X)  # the bracket on the signs' pi axis
        g = estimator.recalibration
        est_classes = estimator.classes_
        decision = np.asarray(estimator.ladder_decision(X), float)
        return [
            LadderInfo(
                pair_name(est_classes[1], est_classes[0]),
                np.asarray(estimator.weights_),
                decision > 0,
                np.asarray(raw.lo, float),
                np.asarray(raw.hi, float),
                decision,
                None if g is None else np.asarray(estimator.estimate(X).p, float),
                g,
            )
        ]
    return []


def simplex_of(estimator: Any, X: np.ndarray) -> SimplexInfo | None:
    """The joint simplex scheme's grid predictions at ``X``; None for other estimators."""
    if not isinstance(estimator, SimplexViews):
        return None
    return SimplexInfo(
        np.asarray(estimator.grid_, float),
        np.asarray(estimator.grid_predictions(X), int),
        np.asarray(estimator.border_weights(X), float),
    )


def crossing_checks(estimator: Any, X_fit: np.ndarray) -> dict[str, dict]:
    """Crossings of a binary ladder over the whole training hull, in both spaces.

    Returns
    -------
    dict
        ``"input"`` and ``"feature"`` -> :meth:`CrossingReport.summary` plus ``"pairs"``,
        the crossing pairs ``[j, k]`` of weight indices (empty for an estimator without
        :class:`LadderViews`).
    """
    if not isinstance(estimator, LadderViews):
        return {}
    from ..ladder.crossing import crossing_diagnostics

    out = {}
    for space in ("input", "feature"):
        try:
            rep = crossing_diagnostics(estimator, X_fit, space=space, n_samples=5000, seed=0)
        except (InputError, ValueError, AttributeError):
            continue
        out[space] = {**rep.summary(), "pairs": rep.crossing_pairs.tolist()}
    return out


def engine_notes(info: dict[str, Any] | None) -> list[str]:
    """What the user should know about the ladder engines of a fit (``fit_info_``).

    Paths that broke down (the grid ladder answered, with a warning in the log), for the
    ``"auto"`` engine the ladders it gave to the grid, and a screened tuning search;
    nothing when every ladder ran on the engine asked for and tuning was not screened.
    """
    info = info or {}
    counts = {**info.get("tuning_engines", {})}
    for k, v in info.get("final_engines", {}).items():
        counts[k] = counts.get(k, 0) + v
    total = sum(counts.values())
    notes = []
    if info.get("path_fallbacks"):
        notes.append(
            f"Weight path broke down for {info['path_fallbacks']} of {total} ladders; the "
            "grid ladder answered for them (reasons in the log)."
        )
    if info.get("auto_grid"):
        notes.append(
            f"Engine auto: the grid ladder for {info['auto_grid']} of {total} ladders "
            "(large elbows), the exact path for the rest."
        )
    if info.get("tuning_screened"):
        notes.append(
            "Tuning screened: every (\u03bb, \u03c3) cell on a third of the training rows, "
            "the 6 best on all of them (turn off 'screened tuning' or pass --no-screen for "
            "the full search)."
        )
    return notes


def calibration_notes(info: dict[str, Any] | None) -> list[str]:
    """What the user should know about a binary fit's recalibration (``fit_info_``).

    Where the count measure saturated (``info["calibration_input"] == "midrung"``: more
    than half of the cross-fitted estimates outside the grid's end weights,
    :mod:`wsvmgui.ladder.midrung`) the map is Platt's sigmoid on the ladder's middle rung,
    and the estimate has no bracket on the weight axis: one sentence saying so, with the
    share; nothing otherwise.
    """
    info = info or {}
    if info.get("calibration_input") != "midrung":
        return []
    share = info.get("saturated_share")
    how_many = "" if share is None else f" ({share:.0%} of the cross-fitted points)"
    return [
        "Calibration: the ladder's estimates sat beyond its end weights for most points"
        f"{how_many}, so the probabilities are the middle rung's decision value through "
        "a sigmoid (Platt's map on the ladder's unweighted SVM); their brackets are the "
        "point itself."
    ]


def fit_notes(info: dict[str, Any] | None) -> list[str]:
    """Every note of a fit (``fit_info_``) for the command line, the report and the app:
    :func:`engine_notes`, :func:`tuning_notes`, :func:`calibration_notes`, in that order."""
    return engine_notes(info) + tuning_notes(info) + calibration_notes(info)


#: The tuning stages of one fit that record their edges apart, ``{stage: {axis: end}}``
#: (the preconditioned SVM's kernel width search and its choice of level): not
#: sub-problems (whose names hold a "|").
_TUNING_STAGES = {"kernel": "the kernel width search", "level": "the choice of level"}
#: How an edge of an axis reads in a note (``TuningResult.edge`` values).
_EDGE_WORDS = {"min": "smallest", "max": "largest", "first": "first", "last": "last"}


def tuning_notes(info: dict[str, Any] | None) -> list[str]:
    """The tuning search's edge hits of a fit as sentences: the one source of this note for
    the command line, the run report and the app.

    Parameters
    ----------
    info : dict or None
        The estimator's ``fit_info_``.  ``info["tuning_edge"]`` is ``{axis: "min" | "max" |
        "first" | "last"}`` for one search, ``{sub-problem: {axis: ...}}`` for a scheme
        with several, or ``{stage: {axis: ...}}`` for the preconditioned SVM's stages
        (``"kernel"``, ``"level"``) (every estimator that tunes records it).  A grid the
        search extended (``info["tuning_extended"]``, ``{axis: values added}``) is named
        first; ``tuning_edge`` is then the grown grid's.  Where ``info["tuning_min_edge"]``
        (the edges of the smallest score's cell) differs from ``tuning_edge`` (the one-SE
        rule chose another cell), it decides: the one-SE choice sits on an edge on purpose.

    Returns
    -------
    list of str
        A sentence for an extended grid and one for a chosen cell (or, under the one-SE
        rule, the smallest score's cell) at an end of its grid; nothing when neither
        happened.
    """
    edge = (info or {}).get("tuning_edge") or {}
    grown = (info or {}).get("tuning_extended") or {}
    notes = []
    if grown:
        what = "; ".join(
            f"{axis} {', '.join(f'{v:.3g}' for v in values)}" for axis, values in grown.items()
        )
        notes.append(
            f"Tuning: the chosen cell sat on the grid's edge, so the grid was extended ({what})."
        )
    lowest = (info or {}).get("tuning_min_edge")
    if lowest is not None and lowest != edge:
        # the one-SE rule chose another cell than the smallest score's, on an edge on
        # purpose (the widest kernel near it): the best may lie outside the grid only
        # where the smallest score's cell sits on an edge
        return [*notes, *_edge_notes(lowest, "the cell of the smallest score")]
    if _per_subproblem(edge) and set(edge) <= set(_TUNING_STAGES):
        return [
            *notes,
            *(
                _edge_note(f"{_TUNING_STAGES[stage]} chose a cell", _edge_words(axes), "its")
                for stage, axes in edge.items()
                if axes
            ),
        ]
    return [*notes, *_edge_notes(edge, "the chosen cell" + (" still" if grown else ""))]


def _edge_note(subject: str, where: str, grid: str = "the") -> str:
    """The one sentence of every edge hit: ``subject`` (``"the chosen cell sits"``, ``"in 2
    of 3 sub-problems the cell of the smallest score sits"``, ``"the choice of level chose
    a cell"``) on ``grid`` grid's edge at ``where`` (the axes and their ends)."""
    return (
        f"Tuning: {subject} on {grid} grid's edge ({where}); the best may lie outside the "
        "grid (widen it)."
    )


def _edge_notes(edge: dict[str, Any], cell: str) -> list[str]:
    """The note of ``edge`` (``{axis: end}`` of one search or ``{sub-problem: {axis:
    end}}``) for the tuned ``cell`` (``"the chosen cell"``, ``"the cell of the smallest
    score"``): one sentence, counting the sub-problems on an edge; none without a hit."""
    if _per_subproblem(edge):
        hits = {k: v for k, v in edge.items() if v}
        if not hits:
            return []
        subject = f"in {len(hits)} of {len(edge)} sub-problems {cell} sits"
        return [_edge_note(subject, _edge_counts(hits))]
    return [_edge_note(f"{cell} sits", _edge_words(edge))] if edge else []


def _per_subproblem(edge: dict[str, Any]) -> bool:
    """Whether ``edge`` is ``{sub-problem: {axis: end}}`` rather than ``{axis: end}``."""
    return bool(edge) and all(isinstance(v, dict) for v in edge.values())


def _edge_counts(hits: dict[str, dict[str, str]]) -> str:
    """``"lambda at its smallest value in 2, sigma at its largest value in 3"``: in how
    many of the sub-problems ``hits`` the cell sits at each end."""
    counts: dict[str, int] = {}
    for axes in hits.values():
        for axis, end in axes.items():
            key = f"{axis} at its {_EDGE_WORDS.get(end, end)} value"
            counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} in {n}" for k, n in sorted(counts.items()))


def _edge_words(edge: dict[str, str]) -> str:
    """``"sigma at its largest value and lambda at its smallest value"``."""
    return " and ".join(f"{a} at its {_EDGE_WORDS.get(e, e)} value" for a, e in edge.items())


def live_boundary(
    partial: Any,
    grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    done: int,
    total: int,
) -> LiveBoundary | None:
    """A live boundary from a progress partial that can evaluate itself, else None.

    A partial qualifies when it is a final-stage fit event
    (:class:`wsvmgui.ladder.grid.FitEvent`: ``stage == "final"``, ``fit.pi`` and
    ``decision(X) -> (m,)`` over model inputs) of a binary problem (empty ``label``).
    Older duck-typed events with ``phase``, ``weight`` and ``decision_function`` work too.
    """
    if grid is None or partial is None:
        return None
    stage = getattr(partial, "stage", getattr(partial, "phase", None))
    if stage != "final" or getattr(partial, "label", ""):
        return None
    fn = getattr(partial, "decision", None) or getattr(partial, "decision_function", None)
    fit = getattr(partial, "fit", None)
    weight = getattr(fit, "pi", getattr(partial, "weight", None))
    if not callable(fn) or weight is None:
        return None
    xs, ys, X_grid = grid
    Z = np.asarray(fn(X_grid), float).reshape(ys.size, xs.size)
    return LiveBoundary(float(weight), zero_contour(xs, ys, Z), done, total)
