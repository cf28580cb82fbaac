"""Screened tuning: every cell on a subsample, the best few on the full folds.

The EGKL search (:func:`~wsvmgui.ladder.search.search_ladders`) fits one ladder per
(lambda, sigma) cell and fold.  On large data most of those cells are clearly worse than
the best, and each costs a path on all of a fold's training rows.  Screening is the first
round of successive halving (Jamieson & Talwalkar 2016; scikit-learn's
``HalvingGridSearchCV``):

1. every cell is fitted on a random :attr:`Screening.share` of each fold's training rows
   and scored on the fold's full tuning rows, with the lambda that keeps the cell's
   ``C = 1 / (2 n lambda)`` (so a cell means the same model on fewer rows);
2. the :attr:`Screening.keep` cells of lowest EGKL per problem are fitted on the full
   folds, and the best of those is chosen as without screening.

A path's cost grows faster than linearly in its rows (its breakpoints grow with n and its
elbow with them on data with flat probabilities), so a third of the rows costs a tenth
or less; ``benchmarks/tuning_screen.py`` measures cost and accuracy against the full
search.  Screening applies only where every problem's training part of every fold has at
least :attr:`Screening.min_rows` rows and the grid has more cells than are kept: on small
data the full search is cheap, and subsamples would be too small to rank the cells.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..progress import ProgressTracker
from ..solvers.kernels import Kernel
from .problems import LadderProblem
from .search import search_ladders
from .splits import Fold
from .tuning import TuningResult

#: The binary ladder screens from this many training rows per fold (:attr:`Screening.min_rows`
#: of :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`), like the other schemes'
#: ladders.  250 was measured (``accuracy_vs_peers.py --quick``, seed 0,
#: ``benchmarks/results/scheme_speed.md``): half the CPU at n = 500 with the same cell on
#: breast cancer, ``wuliu2011_ex1`` and ``wuliu2011_ex6``, but ``wuliu2011_ex2`` L1 0.166 ->
#: 0.190 (``wang2008_ex1`` 0.139 -> 0.121).  One seed cannot show it costs no accuracy, and
#: the binary speed targets hold without it, so it stays at 1000 until several seeds do.
BINARY_MIN_ROWS = 1000


@dataclass(frozen=True)
class Screening:
    """How tuning is screened (see the module docstring).

    Attributes
    ----------
    share : float in (0, 1)
        Share of each fold's training rows the screening fits use.
    keep : int >= 1
        Cells per problem fitted on the full folds.
    min_rows : int
        Screen only if every problem has at least this many rows in every fold's
        training part.
    seed : int
        Seeds the subsamples.
    """

    share: float = 1.0 / 3.0
    keep: int = 6
    min_rows: int = 1000
    seed: int = 0

    def applies(
        self,
        X: np.ndarray,
        problems: Sequence[LadderProblem],
        folds: Sequence[Fold],
        n_cells: Sequence[int],
    ) -> bool:
        """Whether to screen ``problems`` over ``folds`` with ``n_cells`` cells each.

        ``X`` (n, p) is the data the problems' rows index; ``n_cells`` counts each
        problem's (lambda, sigma) cells.
        """
        n = X.shape[0]
        if min(n_cells) <= self.keep:
            return False
        return all(
            p.select(np.asarray(train), n)[0].size >= self.min_rows
            for p in problems
            for train, _ in folds
        )

    def subsample(self, folds: Sequence[Fold], strata: np.ndarray | None = None) -> list[Fold]:
        """Each fold's training rows cut to :attr:`share` at random (sorted), tuning rows kept.

        Parameters
        ----------
        folds : sequence of (train, test)
        strata : ndarray, shape (n,), optional
            A stratum (e.g. the class) of every data row: each stratum of a training part
            is cut to :attr:`share` on its own, keeping at least two of its rows (all of
            them if it has fewer), so that every class the part trains on stays in its
            subsample (the sub-problems of One-vs-All share it).  None: one draw from
            the whole part.
        """
        rng = np.random.default_rng(self.seed)
        out = []
        for train, test in folds:
            train = np.asarray(train)
            if strata is None:
                m = max(2, int(round(self.share * train.size)))
                sub = rng.choice(train, m, replace=False)
            else:
                groups = np.asarray(strata)[train]
                sub = np.concatenate(
                    [_cut(train[groups == g], self.share, rng) for g in np.unique(groups)]
                )
            out.append((np.sort(sub), np.asarray(test)))
        return out


def _cut(rows: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """``share`` of ``rows`` at random, at least two (all of them if fewer)."""
    m = min(rows.size, max(2, int(round(share * rows.size))))
    return rng.choice(rows, m, replace=False)


def best_cells(egkl: np.ndarray, keep: int) -> np.ndarray:
    """Mask of the ``keep`` finite cells of lowest ``egkl`` (L, S); ties in grid order."""
    flat = np.asarray(egkl, dtype=float).ravel()
    order = np.argsort(np.where(np.isfinite(flat), flat, np.inf), kind="stable")
    chosen = order[:keep]
    chosen = chosen[np.isfinite(flat[chosen])]
    mask = np.zeros(flat.size, dtype=bool)
    mask[chosen] = True
    return mask.reshape(np.shape(egkl))


def screened_search(
    X: np.ndarray,
    problems: Sequence[LadderProblem],
    folds: Sequence[Fold],
    kernel: Kernel,
    sigmas: np.ndarray,
    weights: Sequence[np.ndarray],
    lambdas: Sequence[np.ndarray],
    *,
    screening: Screening | None,
    strata: np.ndarray | None = None,
    **search: Any,
) -> list[TuningResult]:
    """:func:`~wsvmgui.ladder.search.search_ladders`, screened where ``screening`` applies.

    Parameters
    ----------
    X, problems, folds, kernel, sigmas, weights, lambdas
        As :func:`~wsvmgui.ladder.search.search_ladders` (``lambdas`` for the full folds).
    screening : Screening or None
        None: the full search.
    strata : ndarray, shape (n,), optional
        Strata of the screening subsample (:meth:`Screening.subsample`); the problems
        share one subsample per fold, and so one kernel matrix per (sigma, fold).
    **search
        Keyword arguments of :func:`~wsvmgui.ladder.search.search_ladders` (``rule``,
        ``engine``, ``n_jobs``, ``tracker``, ``executor``, ``score``, ``sample_weight``,
        ``extend``: the full round's only, its new cells fitted on the full folds).

    Returns
    -------
    list of TuningResult
        One per problem.  When screened: ``score`` of the cells fitted on the full folds
        (NaN elsewhere), ``screened`` the table of the screening round, ``seconds``,
        ``engines`` and ``fallbacks`` of both rounds.
    """
    grids = (kernel, sigmas, weights)
    n_cells = [np.size(g) * np.size(sigmas) for g in lambdas]
    if screening is None or not screening.applies(X, problems, folds, n_cells):
        return search_ladders(X, problems, folds, *grids, lambdas, **search)
    small = screening.subsample(folds, strata)
    n = X.shape[0]
    first, small_first = np.asarray(folds[0][0]), small[0][0]
    sw = search.get("sample_weight")
    scaled = [  # the same C = 1 / (2 n lambda) on fewer rows
        np.asarray(g, dtype=float) * (p.size(first, n, sw) / max(p.size(small_first, n, sw), 1))
        for g, p in zip(lambdas, problems, strict=True)
    ]
    tracker: ProgressTracker = search.pop("tracker")
    extend = search.pop("extend", None)  # the full round's choice only
    # The full-fold round is announced before the screening round starts, so that the
    # progress total does not jump when it begins.
    planned = sum(screening.keep * len(folds) * np.size(w) for w in weights)
    tracker.add_total(planned)
    rough = search_ladders(X, problems, small, *grids, scaled, tracker=tracker, **search)
    only = [best_cells(t.egkl, screening.keep) for t in rough]
    announced = _Announced(tracker)
    full = search_ladders(
        X, problems, folds, *grids, lambdas, only=only, tracker=announced, extend=extend,
        **search,
    )  # fmt: skip
    tracker.add_total(announced.added - planned)  # fewer where cells failed or folds lack rows
    return [
        replace(
            f,
            screened=_padded(r.egkl, (lams[0], sigmas[0]), f.axes),
            seconds=f.seconds + r.seconds,
            engines=dict(Counter(f.engines) + Counter(r.engines)),
            fallbacks=[*r.fallbacks, *f.fallbacks],
            failures=[*r.failures, *f.failures],
        )
        for f, r, lams in zip(full, rough, lambdas, strict=True)
    ]


def _padded(table: np.ndarray, first: Sequence[float], grown: dict) -> np.ndarray:
    """The screening ``table`` placed in the full round's (possibly extended) ``grown``
    axes, NaN in the cells an extension added; ``first`` is the first value of each of
    the full round's axes before it grew."""
    shape = tuple(len(v) for v in grown.values())
    if shape == table.shape:
        return table
    start = [
        int(np.flatnonzero((np.asarray(v) == f) | (np.isnan(v) & np.isnan(f)))[0])
        for v, f in zip(grown.values(), first, strict=True)
    ]
    out = np.full(shape, np.nan)
    out[tuple(slice(a, a + m) for a, m in zip(start, table.shape, strict=True))] = table
    return out


class _Announced(ProgressTracker):
    """``tracker`` for work whose units were added to its total beforehand: growth is
    counted in :attr:`added` instead of being added again; everything else is passed on."""

    def __init__(self, tracker: ProgressTracker) -> None:
        self._tracker = tracker
        self.added = 0

    def add_total(self, n: int) -> None:
        self.added += int(n)

    def step(self, n: int = 1, partial: Any = None) -> None:
        self._tracker.step(n, partial)

    def check(self) -> None:
        self._tracker.check()

    def cancel_requested(self) -> bool:
        return self._tracker.cancel_requested()
