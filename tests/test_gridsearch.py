"""The generic tuning search: cells x folds -> summed score -> the first best cell.

Checked on scores whose minimiser is known (a quadratic bowl, weighted rows), and on the
bookkeeping every scheme relies on: ties in grid order, failures scoring inf, cells left
out scoring NaN, the grid's edges, a batch of searches, a batched fit, progress units.
"""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.errors import Cancelled, SolverError
from wsvmgui.executor import LocalExecutor
from wsvmgui.ladder.gridsearch import (
    FoldScore,
    Grid,
    Search,
    grid_edges,
    grid_search,
    grid_searches,
    rescale_lambda,
)
from wsvmgui.progress import ProgressTracker

X = np.linspace(-1.0, 1.0, 30)
FOLDS = [
    (np.arange(30)[np.arange(30) % 3 != k], np.arange(30)[np.arange(30) % 3 == k]) for k in range(3)
]


def _bowl(a0: float, b0: float):
    """fit: the cell itself; score: squared distance to (a0, b0) on every tuning row."""

    def fit(job, ctx):
        ctx.step()
        return job.params

    def score(model, job, ctx):
        d = (model["a"] - a0) ** 2 + (model["b"] - b0) ** 2
        return FoldScore(d * job.test.size, float(job.test.size), error=0.0)

    return fit, score


def test_the_minimiser_is_found_and_every_cell_scored():
    fit, score = _bowl(0.5, -1.0)
    grid = Grid({"a": [0.0, 0.5, 1.0], "b": [-1.0, 0.0]})
    res = grid_search(grid, FOLDS, fit, score, tracker=ProgressTracker(0), score_name="d")
    assert res.best_params == {"a": 0.5, "b": -1.0} and res.best == (1, 0)
    expected = [[(a - 0.5) ** 2 + (b + 1.0) ** 2 for b in (-1.0, 0.0)] for a in (0.0, 0.5, 1.0)]
    np.testing.assert_allclose(res.score, expected, rtol=1e-12)
    assert res.score_name == "d" and {r["d"] for r in res.rows()} == set(res.score.ravel())
    assert res.edge == {"b": "min"}  # a = 0.5 is inside its axis, b = -1 its smallest


def test_ties_go_to_the_first_cell_in_grid_order_and_tol_widens_them():
    def fit(job, ctx):
        return job.params["c"]

    def score(model, job, ctx):
        return FoldScore({0: 1.0, 1: 0.5, 2: 0.5 - 1e-13, 3: 2.0}[model], 1.0)

    grid = Grid({"c": [0, 1, 2, 3]})
    exact = grid_search(grid, FOLDS[:1], fit, score, tracker=ProgressTracker(0))
    loose = grid_search(grid, FOLDS[:1], fit, score, tracker=ProgressTracker(0), tol=1e-12)
    assert exact.best == (2,) and loose.best == (1,)


def test_failures_score_inf_cells_left_out_nan_and_all_failing_raises():
    def fit(job, ctx):
        if job.params["a"] == 1:
            ctx.step()
            raise SolverError("no answer at a = 1")
        ctx.step(2)
        return job.params["a"]

    def score(model, job, ctx):
        return FoldScore(float(model), 1.0)

    only = np.array([True, True, False])
    seen: list[tuple[int, int]] = []
    tracker = ProgressTracker(0, lambda d, t, p: seen.append((d, t)))
    res = grid_search(Grid({"a": [2, 1, 0]}, only), FOLDS, fit, score, tracker=tracker, units=2)
    assert res.best == (0,) and np.isinf(res.score[1]) and np.isnan(res.score[2])
    assert len(res.failures) == 3 and "a = 1" in res.failures[0]
    assert seen[-1] == (12, 12)  # a failing job's units are all counted
    with pytest.raises(SolverError, match="sub-problem x: every fit of the tuning grid failed"):
        grid_search(
            Grid({"a": [1]}), FOLDS, fit, score, tracker=ProgressTracker(0), name="sub-problem x"
        )


def test_sample_weights_weigh_the_folds():
    """A fold's score is its loss over its weight: folds count by their weight."""

    def fit(job, ctx):
        return None

    def score(model, job, ctx):
        w = np.where(job.test < 10, 3.0, 1.0)  # the first ten rows weigh three
        return FoldScore(float(np.sum(w * X[job.test] ** 2)), float(w.sum()))

    res = grid_search(Grid({"a": [0]}), FOLDS, fit, score, tracker=ProgressTracker(0))
    w = np.where(np.arange(30) < 10, 3.0, 1.0)
    assert res.score[0] == pytest.approx(np.sum(w * X**2) / w.sum(), rel=1e-12)


def test_a_batch_of_searches_and_a_batched_fit_agree_with_single_searches():
    fit, score = _bowl(1.0, 0.0)
    grids = [Grid({"a": [0.0, 1.0], "b": [0.0]}), Grid({"a": [1.0, 2.0, 3.0], "b": [0.0, 1.0]})]
    batch = grid_searches(
        [Search(g, FOLDS) for g in grids], fit, score, tracker=ProgressTracker(0),
        executor=LocalExecutor(2),
    )  # fmt: skip
    for g, res in zip(grids, batch, strict=True):
        alone = grid_search(g, FOLDS, fit, score, tracker=ProgressTracker(0))
        np.testing.assert_array_equal(res.score, alone.score)
        calls = []

        def fit_all(jobs, calls=calls):
            calls.append(len(jobs))
            return [j.params for j in jobs]

        batched = grid_search(
            g, FOLDS, None, score, tracker=ProgressTracker(0), fit_all=fit_all
        )  # fmt: skip
        np.testing.assert_array_equal(batched.score, alone.score)
        assert calls == [int(np.prod(g.shape)) * len(FOLDS)]  # one call for every job


def test_cancellation_stops_the_search():
    fit, score = _bowl(0.0, 0.0)
    done = []
    tracker = ProgressTracker(0, lambda d, t, p: done.append(d), lambda: len(done) >= 4)
    with pytest.raises(Cancelled):
        grid_search(Grid({"a": [0.0, 1.0, 2.0], "b": [0.0]}), FOLDS, fit, score, tracker=tracker)
    assert len(done) == 4


def test_edges_and_rescaled_lambda():
    axes = {"lambda": np.array([1e-1, 1e-2, 1e-3]), "sigma": np.array([np.nan]), "k": ("x", "y")}
    assert grid_edges(axes, (0, 0, 1)) == {"lambda": "max", "k": "last"}
    assert grid_edges(axes, (1, 0, 0)) == {"k": "first"}
    # C = 1 / (2 n lambda) is kept from 84 rows to 120.
    lam = rescale_lambda(0.01, 84, 120)
    assert 1 / (2 * 120 * lam) == pytest.approx(1 / (2 * 84 * 0.01))
