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
    Extension,
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


AB = ("a", "b")


def _log_bowl(a0: float, b0: float, fitted: list):
    """A bowl in (log2 a, log2 b) whose minimiser may lie outside the grid; ``fitted``
    collects every (cell params, fold) fitted."""

    def fit(job, ctx):
        ctx.step()
        fitted.append((job.params["a"], job.params["b"], job.fold))
        return job.params

    def score(model, job, ctx):
        d = (np.log2(model["a"]) - np.log2(a0)) ** 2 + (np.log2(model["b"]) - np.log2(b0)) ** 2
        return FoldScore(d * job.test.size, float(job.test.size))

    return fit, score


def test_an_edge_grows_the_grid_with_its_spacing_until_the_bound():
    # a descending axis (like lambda, largest first) and an ascending one; the minimiser
    # (a = 1/8, b = 16) lies past the small end of a and the large end of b
    grid = Grid({"a": [4.0, 2.0, 1.0], "b": [1.0, 2.0, 4.0]})
    fitted: list = []
    fit, score = _log_bowl(0.125, 16.0, fitted)
    tracker = ProgressTracker(0)
    plain = grid_search(grid, FOLDS, fit, score, tracker=ProgressTracker(0))
    assert plain.best_params == {"a": 1.0, "b": 4.0} and plain.edge == {"a": "min", "b": "max"}
    assert plain.extended == {}
    fitted.clear()
    res = grid_search(grid, FOLDS, fit, score, tracker=tracker, extend=Extension(AB, rounds=2))
    # two rounds, one value past each end per round, the spacing (ratio 2) continued
    np.testing.assert_allclose(res.axes["a"], [4.0, 2.0, 1.0, 0.5, 0.25])
    np.testing.assert_allclose(res.axes["b"], [1.0, 2.0, 4.0, 8.0, 16.0])
    assert res.extended == {"a": (0.5, 0.25), "b": (8.0, 16.0)}
    assert res.best_params == {"a": 0.25, "b": 16.0} and res.best_score < plain.best_score
    assert res.edge == {"a": "min", "b": "max"}  # still on the edge: the bound stopped it
    # each round fits the corner's 5 new neighbours (3 x 3 window minus the 4 old cells)
    new = len(fitted) // len(FOLDS) - grid.shape[0] * grid.shape[1]
    assert new == 2 * 5 == Extension(rounds=2).max_cells(2)
    assert tracker.total == len(fitted)  # progress counts the new jobs
    # cells the extension did not fit score NaN; every fitted cell its own bowl value
    fit_cells = {(a, b) for a, b, _ in fitted}
    for idx in np.ndindex(*res.score.shape):
        p = Grid(res.axes).params(idx)
        if (p["a"], p["b"]) in fit_cells:
            expected = (np.log2(p["a"]) + 3) ** 2 + (np.log2(p["b"]) - 4) ** 2
            assert res.score[idx] == pytest.approx(expected)
        else:
            assert np.isnan(res.score[idx])
    # with more rounds it reaches the minimiser and stops growing there
    fitted.clear()
    far = grid_search(grid, FOLDS, fit, score, tracker=ProgressTracker(0), extend=Extension(AB, 5))
    assert far.best_params == {"a": 0.125, "b": 16.0} and far.best_score == pytest.approx(0.0)
    # one value past the minimiser on each axis, then interior: no edge, no more rounds
    assert far.extended == {"a": (0.5, 0.25, 0.125, 0.0625), "b": (8.0, 16.0, 32.0)}
    assert far.edge == {}


def test_an_interior_best_cell_or_rounds_zero_leaves_the_grid_alone():
    grid = Grid({"a": [4.0, 2.0, 1.0], "b": [1.0, 2.0, 4.0]})
    fitted: list = []
    fit, score = _log_bowl(2.0, 2.0, fitted)
    res = grid_search(grid, FOLDS, fit, score, tracker=ProgressTracker(0), extend=Extension(AB))
    assert res.extended == {} and res.edge == {} and len(fitted) == 9 * len(FOLDS)
    fitted.clear()
    fit, score = _log_bowl(0.125, 2.0, fitted)
    res = grid_search(grid, FOLDS, fit, score, tracker=ProgressTracker(0), extend=Extension(AB, 0))
    assert res.extended == {} and res.edge == {"a": "min"} and len(fitted) == 9 * len(FOLDS)
    # an axis not named, or not positive, does not grow
    res = grid_search(
        grid, FOLDS, fit, score, tracker=ProgressTracker(0), extend=Extension(("b",), 2)
    )
    assert res.extended == {} and res.edge == {"a": "min"}
    with pytest.raises(Exception, match="rounds >= 0 and steps >= 1"):
        Extension(rounds=-1)


def test_a_cell_left_out_is_not_fitted_by_an_extension():
    # screening leaves cells out (``only``): an extension fits only new values
    grid = Grid({"a": [4.0, 2.0, 1.0], "b": [1.0, 2.0, 4.0]}, only=np.eye(3, dtype=bool))
    fitted: list = []
    fit, score = _log_bowl(0.5, 4.0, fitted)
    res = grid_search(grid, FOLDS, fit, score, tracker=ProgressTracker(0), extend=Extension(AB, 1))
    cells = {(a, b) for a, b, _ in fitted}
    assert cells == {(4.0, 1.0), (2.0, 2.0), (1.0, 4.0), (0.5, 2.0), (0.5, 4.0), (0.5, 8.0),
                     (1.0, 8.0), (2.0, 8.0)}  # fmt: skip
    assert res.best_params == {"a": 0.5, "b": 4.0} and res.extended == {"a": (0.5,), "b": (8.0,)}
