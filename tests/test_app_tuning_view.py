"""Tuning surfaces: every scheme's own tuning table, in one shape, chosen cell included."""

from __future__ import annotations

import numpy as np

from wsvmgui.app.tuning_view import _from_rows, tuning_surfaces
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier
from wsvmgui.estimators.probing import ProbingClassifier
from wsvmgui.evaluation.designs import simulate


def test_binary_ladder_surface_is_its_egkl_table():
    d = simulate("wuliu2011_ex1", 120, 0)
    est = WeightedSVMClassifier(
        n_weights=6, lambdas=[0.05, 0.005], sigmas=[0.5, 1.0, 2.0], random_state=0, n_jobs=1
    ).fit(d.X, d.y)
    (s,) = tuning_surfaces(est)
    np.testing.assert_array_equal(s.score, est.tuning_.egkl)
    assert s.score.shape == (2, 3) and (s.x_name, s.y_name, s.score_name) == ("λ", "σ", "EGKL")
    i, j = s.best
    assert s.xs[i] == est.tuning_.best_lambda and s.ys[j] == est.tuning_.best_sigma
    assert s.score[i, j] == np.min(s.score)


def test_noncrossing_hinge_surface_is_its_sigma_table():
    """The hinge criterion tunes sigma alone (lambda per weight inside each ladder's fit):
    a one-parameter surface, sorted by sigma, its best cell the chosen sigma."""
    d = simulate("wuliu2011_ex1", 80, 5)
    est = NonCrossingLadderClassifier(
        criterion="hinge", n_weights=5, lambdas=[0.05, 0.005], sigmas=[2.0, 0.5, 1.0]
    ).fit(d.X, d.y)
    (s,) = tuning_surfaces(est)
    assert (s.x_name, s.y_name, s.score.shape) == ("σ", "", (3, 1))
    np.testing.assert_array_equal(s.xs, [0.5, 1.0, 2.0])
    np.testing.assert_array_equal(s.score[:, 0], est.tuning_.score[[1, 2, 0]])
    assert s.xs[s.best[0]] == est.sigma_


def test_untuned_ladder_has_no_surface():
    d = simulate("wuliu2011_ex1", 80, 1)
    est = WeightedSVMClassifier(n_weights=5, lam=0.01, sigma=1.0, n_jobs=1).fit(d.X, d.y)
    assert tuning_surfaces(est) == []


def test_every_subproblem_keeps_its_own_surface():
    d = simulate("wu2010_ex1", 120, 2)
    est = MulticlassWeightedSVMClassifier(
        scheme="pairwise", n_weights=5, lambdas=[0.05, 0.005], sigmas=[1.0, 2.0],
        random_state=0, n_jobs=1,
    ).fit(d.X, d.y)  # fmt: skip
    surfaces = tuning_surfaces(est)
    fitted = est.subproblems_.fitted
    assert [s.name for s in surfaces] == [f.spec.name for f in fitted] and len(surfaces) == 3
    for s, f in zip(surfaces, fitted, strict=True):
        np.testing.assert_array_equal(s.score, f.tuning.egkl)
        assert s.ys[s.best[1]] == f.sigma  # the final fit keeps the chosen width
        assert s.xs[s.best[0]] == f.tuning.best_lambda


def test_joint_cross_entropy_table_becomes_a_grid():
    d = simulate("wu2010_ex1", 90, 3)
    est = JointWSVMClassifier(
        n_weights=5,
        kernel="rbf",
        lambdas=[0.05, 0.01, 0.002],
        sigmas=[1.0, 2.0],
        random_state=0,
        n_jobs=1,
    ).fit(d.X, d.y)
    (s,) = tuning_surfaces(est)
    assert s.score.shape == (3, 2) and s.score_name == "cross-entropy"
    rows = est.tuning_.rows()
    # screened (the default): 3 of the 6 cells fitted on the full grid, the rest are
    # missing from the table (NaN) and drawn as inf
    assert sum(np.isfinite(r["cross_entropy"]) for r in rows) == 3
    for row in rows:
        i = int(np.flatnonzero(s.xs == row["lambda"])[0])
        j = int(np.flatnonzero(s.ys == row["sigma"])[0])
        score = row["cross_entropy"]
        assert s.score[i, j] == (score if np.isfinite(score) else np.inf)
    assert s.ys[s.best[1]] == est.sigma_
    assert s.score[s.best] == np.nanmin([r["cross_entropy"] for r in rows])


def test_probing_with_one_parameter_and_tables_that_give_no_plane():
    d = simulate("wuliu2011_ex1", 100, 4)
    est = ProbingClassifier(
        learner="logistic", n_thresholds=5, param_grid={"C": [0.1, 1.0, 10.0]}, random_state=0
    ).fit(d.X, d.y)
    (s,) = tuning_surfaces(est)
    assert s.score.shape == (3, 1) and s.y_name == "" and np.isnan(s.ys[0])
    np.testing.assert_array_equal(s.xs, [0.1, 1.0, 10.0])
    assert s.xs[s.best[0]] == est.best_params_["C"]
    # three parameters or a text one: no plane to draw
    assert _from_rows("", [{"a": 1, "b": 2, "c": 3, "cross_entropy": 0.5}]) is None
    assert _from_rows("", [{"kernel": "rbf", "cross_entropy": 0.5}]) is None
    assert _from_rows("", []) is None


def test_an_optimum_on_the_grid_edge_is_said_and_lambda_is_explained():
    from wsvmgui.app.capabilities import tuning_notes
    from wsvmgui.app.tuning_view import used_values

    d = simulate("wuliu2011_ex1", 120, 0)
    est = WeightedSVMClassifier(
        n_weights=6, lambdas=[0.05, 0.005], sigmas=[0.5, 1.0, 2.0], random_state=0, n_jobs=1
    ).fit(d.X, d.y)
    (s,) = tuning_surfaces(est)
    i, j = s.best
    # the surface drawn and the fit's own record agree on where the chosen cell sits:
    # two lambdas, so lambda is always on an edge; of three sigmas, unless the middle
    expected = {"lambda": "min" if s.xs[i] == s.xs.min() else "max"}
    if j != 1:
        expected["sigma"] = "min" if s.ys[j] == s.ys.min() else "max"
    assert est.fit_info_["tuning_edge"] == expected
    (note,) = tuning_notes(est.fit_info_)
    words = {"min": "smallest", "max": "largest"}
    assert "grid's edge" in note
    assert all(f"{a} at its {words[e]} value" in note for a, e in expected.items())
    parts = used_values(est.fitted_summary(), [s])
    n = est.fit_info_["n_train"]
    assert parts[0].startswith(f"λ = {est.lambda_:.4g}") and f"final fit on {n} rows" in parts[0]
    # the C kept: 1 / (2 n lambda) of the final fit equals the tuned one's
    C = 1.0 / (2.0 * n * est.lambda_)
    assert f"C = {C:.4g}" in parts[0]
    if not np.isclose(s.chosen[0], est.lambda_, rtol=1e-6):
        assert any(f"tuned λ = {s.chosen[0]:.4g}" in p for p in parts)
