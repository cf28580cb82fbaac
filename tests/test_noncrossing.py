"""Non-crossing ladder (Wu & Liu 2011): constraints, QP checks, guarantee, estimator."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from wsvmgui.errors import InputError
from wsvmgui.estimators.noncrossing import NonCrossingLadderClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import egkl
from wsvmgui.ladder.crossing import crossing_diagnostics, crossing_from_values, hull_combinations
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.hull_edges import hull_edges
from wsvmgui.ladder.noncrossing import fit_noncrossing_ladder, fitting_order
from wsvmgui.ladder.noncrossing_qp import build_constraints, fit_constrained
from wsvmgui.ladder.splits import with_tuning_set
from wsvmgui.ladder.tuning import default_lambda_grid
from wsvmgui.ladder.tuning_table import TuningResult
from wsvmgui.solvers.kernels import Kernel


def _pm(y):
    return np.where(np.asarray(y) > 0, 1.0, -1.0)


def test_fitting_order_starts_nearest_half_and_moves_out():
    order = fitting_order(np.array([0.1, 0.3, 0.45, 0.7, 0.9]))
    assert order[0] == (2, None, 0)
    assert order[1:3] == [(3, 2, 1), (4, 3, 1)]
    assert order[3:] == [(1, 2, -1), (0, 1, -1)]


def test_hull_edges_of_a_square_with_interior_points():
    rng = np.random.default_rng(0)
    X = np.vstack([[[-1, -1], [1, -1], [1, 1], [-1, 1]], rng.uniform(-0.9, 0.9, (20, 2))])
    hull, why = hull_edges(X)
    assert why == ""
    assert sorted(hull.vertices.tolist()) == [0, 1, 2, 3]
    assert sorted(map(tuple, hull.edges.tolist())) == [(0, 1), (0, 3), (1, 2), (2, 3)]
    assert hull_edges(rng.normal(size=(30, 9)))[0] is None  # too many dimensions


def test_constraint_forms_agree_on_random_fits():
    """Pairs and compact forms accept exactly the same fits."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        f_prev = rng.normal(size=12)
        f_new = rng.normal(size=12) - rng.uniform(0, 2)
        verdicts = []
        for mode in ("pairs", "compact"):
            cons, _ = build_constraints(f_prev, 1, mode, eps=0.0)
            verdicts.append(cons.satisfied_by(f_new, slack=1e-9)[0])
        # Brute force: every separated pair's crossing point and every non-positive point.
        pos, neg = f_prev > 0, f_prev <= 0
        ok = np.all(f_new[neg] <= 1e-9)
        for a in np.flatnonzero(pos):
            for b in np.flatnonzero(f_prev < 0):
                t = f_prev[a] / (f_prev[a] - f_prev[b])
                ok &= (1 - t) * f_new[a] + t * f_new[b] <= 1e-9
        assert verdicts == [bool(ok), bool(ok)]


def test_unconstrained_qp_matches_scikit_learn_svc():
    d = simulate("wuliu2011_ex1", 60, 3)
    y = _pm(d.y)
    kern = Kernel("rbf", sigma=1.0)
    K = kern(d.X)
    pi, lam = 0.3, 0.005
    cons, _ = build_constraints(np.ones(60), 1, "pairs")  # nothing non-positive: no rows
    assert cons.n_rows == 0
    fit = fit_constrained(K, K, K, y, pi, lam, cons)
    C = 1 / (2 * 60 * lam)
    svc = SVC(kernel="precomputed", C=C, tol=1e-6)
    svc.fit(K, y, sample_weight=np.where(y > 0, 1 - pi, pi))
    assert np.max(np.abs(fit.f_train - svc.decision_function(K))) < 1e-3
    assert fit.gap < 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_example1_removes_crossings(seed):
    d = simulate("wuliu2011_ex1", 100, seed)
    y = _pm(d.y)
    w = np.arange(1, 100) / 100
    kern = Kernel("linear")
    lam = default_lambda_grid(100)[4]
    ind = fit_ladder(kern(d.X), y, w, lam)
    nc = fit_noncrossing_ladder(d.X, y, w, lam, kern)
    assert nc.diagnostics["constraints_used"] == ["hull"]
    assert nc.diagnostics["n_qp"] + nc.diagnostics["n_active_set"] > 0
    assert nc.diagnostics["max_duality_gap"] < 1e-5
    assert nc.diagnostics["max_violation"] <= 0.5 * nc.diagnostics["eps"]
    rep_nc = nc.crossing(n_samples=20_000, seed=seed)
    assert rep_nc.n_crossing_pairs == 0 and rep_nc.share_nonmonotone == 0.0
    assert np.all(nc.estimate(d.X).monotone)
    rep_ind = crossing_diagnostics(ind, d.X, kernel=kern, n_samples=20_000, seed=seed)
    assert rep_ind.n_crossing_pairs > 0  # with 99 weights the free ladder crosses


@pytest.mark.parametrize("kernel", [Kernel("rbf", sigma=0.8), Kernel("poly", degree=2)])
def test_kernel_ladder_has_no_crossing_in_feature_space(kernel):
    d = simulate("wuliu2011_ex1", 50, 4)
    y = _pm(d.y)
    w = np.arange(1, 20) / 20
    lam = default_lambda_grid(50)[5]
    ind = fit_ladder(kernel(d.X), y, w, lam)
    nc = fit_noncrossing_ladder(d.X, y, w, lam, kernel)
    rep = nc.crossing("feature", n_samples=20_000)
    assert rep.n_crossing_pairs == 0 and rep.share_nonmonotone == 0.0
    assert np.all(nc.estimate(d.X).monotone)
    assert nc.diagnostics["max_duality_gap"] < 1e-5
    rep_ind = crossing_diagnostics(ind, d.X, kernel=kernel, space="feature", n_samples=20_000)
    if rep_ind.n_crossing_pairs:  # whenever the free ladder crossed, QPs were needed
        assert nc.diagnostics["n_qp"] + nc.diagnostics["n_active_set"] > 0


def test_pairs_and_compact_give_the_same_ladder():
    d = simulate("wuliu2011_ex1", 40, 5)
    y = _pm(d.y)
    w = np.arange(1, 10) / 10
    kern = Kernel("rbf", sigma=0.7)
    a = fit_noncrossing_ladder(d.X, y, w, 0.002, kern, constraints="pairs", shortcut=False)
    b = fit_noncrossing_ladder(d.X, y, w, 0.002, kern, constraints="compact", shortcut=False)
    assert a.diagnostics["constraints_used"] == ["pairs"]
    assert b.diagnostics["constraints_used"] == ["compact"]
    assert np.max(np.abs(a.decision_at(d.X) - b.decision_at(d.X))) < 1e-3
    # Too many pairs for the limit: compact form, and the diagnostics say so.
    c = fit_noncrossing_ladder(d.X, y, w, 0.002, kern, constraints="pairs", max_constraints=10)
    assert "compact" in c.diagnostics["constraints_used"]
    assert any("compact" in note for note in c.diagnostics["notes"])
    assert c.crossing("feature").n_crossing_pairs == 0


def test_shortcut_does_not_change_the_answer():
    d = simulate("wuliu2011_ex1", 60, 6)
    y = _pm(d.y)
    w = np.arange(1, 20) / 20
    kern = Kernel("linear")
    a = fit_noncrossing_ladder(d.X, y, w, 0.01, kern, engine="sequential", shortcut=True)
    b = fit_noncrossing_ladder(d.X, y, w, 0.01, kern, engine="sequential", shortcut=False)
    assert a.diagnostics["n_shortcut"] > 0 and b.diagnostics["n_shortcut"] == 0
    assert np.max(np.abs(a.decision_at(d.X) - b.decision_at(d.X))) < 2e-2


def test_example1_reduced_gkl_no_worse_than_independent():
    """Wu & Liu Table 1, reduced: 3 seeds, 49 weights, lambda per weight by hinge loss."""
    w = np.arange(1, 50) / 50
    grid = np.concatenate([[0.0], w, [1.0]])
    kern = Kernel("linear")
    lambdas = default_lambda_grid(100)[2:5]
    g_ind, g_nc, crossed = [], [], 0
    for seed in range(3):
        tr, tu = simulate("wuliu2011_ex1", 100, seed), simulate("wuliu2011_ex1", 100, 50 + seed)
        te = simulate("wuliu2011_ex1", 3000, 90 + seed)
        y = _pm(tr.y)
        nc = fit_noncrossing_ladder(
            tr.X, y, w, 0.0, kern, lam_grid=lambdas, X_tune=tu.X, y_tune=_pm(tu.y)
        )
        assert nc.crossing(n_samples=5000).n_crossing_pairs == 0
        # The independent ladder at the same per-weight lambdas.
        fits = [fit_ladder(kern(tr.X), y, w[[k]], nc.lams[k]) for k in range(w.size)]
        F_tr = np.column_stack([kern(tr.X) @ f.coef[0] + f.intercept[0] for f in fits])
        F_te = np.column_stack([kern(te.X, tr.X) @ f.coef[0] + f.intercept[0] for f in fits])
        crossed += (
            crossing_diagnostics(
                lambda Z, fits=fits, X=tr.X: np.column_stack(
                    [kern(Z, X) @ f.coef[0] + f.intercept[0] for f in fits]
                ),
                tr.X,
                w,
                n_samples=5000,
            ).n_crossing_pairs
            > 0
        )
        assert F_tr.shape == (100, w.size)
        c = (F_te > 0).sum(axis=1)
        p_ind = (grid[c] + grid[c + 1]) / 2
        p_nc = nc.estimate(te.X).p
        g_nc.append(egkl(np.column_stack([1 - p_nc, p_nc]), te.p))
        g_ind.append(egkl(np.column_stack([1 - p_ind, p_ind]), te.p))
    assert crossed >= 2
    assert np.mean(g_nc) <= 1.05 * np.mean(g_ind)


def test_crossing_diagnostics_on_known_boundaries():
    X = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    w = np.array([0.3, 0.6])
    nested = lambda Z: np.column_stack([Z[:, 0] + 0.5, Z[:, 0]])  # noqa: E731
    crossing = lambda Z: np.column_stack([Z[:, 0], Z[:, 1]])  # noqa: E731
    assert crossing_diagnostics(nested, X, w).n_crossing_pairs == 0
    rep = crossing_diagnostics(crossing, X, w, n_samples=5000)
    assert rep.n_crossing_pairs == 1 and rep.crossing_weight_pairs() == [(0.3, 0.6)]
    assert 0.05 < rep.share_nonmonotone < 0.5 and rep.depth > 0
    F = np.array([[1.0, -1.0, 1.0], [1.0, 1.0, -1.0], [-1.0, 1.0, 1.0]])
    rep = crossing_from_values(F, np.array([0.2, 0.5, 0.8]))
    assert rep.n_nonmonotone == 2
    assert sorted(map(tuple, rep.crossing_pairs.tolist())) == [(0, 1), (0, 2), (1, 2)]
    idx, wts = hull_combinations(10, 100, 3, seed=1)
    assert np.allclose(wts.sum(axis=1), 1) and wts.min() >= 0 and idx.max() < 10


def test_estimator_contract_with_string_labels():
    d = simulate("wuliu2011_ex6", 80, 7)
    labels = np.where(d.y > 0, "yes", "no")
    est = NonCrossingLadderClassifier(kernel="rbf", lam=0.005, sigma=0.8, n_weights=10)
    est.fit(d.X, labels)
    assert list(est.classes_) == ["no", "yes"]
    P = est.predict_proba(d.X[:20])
    assert P.shape == (20, 2) and np.allclose(P.sum(axis=1), 1)
    assert np.array_equal(est.predict(d.X[:20]), est.classes_[np.argmax(P, axis=1)])
    cols = est.report(d.X[:20]).columns()
    assert np.all(cols["lo_yes"] <= cols["p_yes"])
    assert np.all(cols["p_yes"] <= cols["hi_yes"])
    assert np.allclose(cols["lo_no"], 1 - cols["hi_yes"])
    assert est.crossing_diagnostics(n_samples=5000).n_crossing_pairs == 0
    assert np.mean(est.predict(d.X) == labels) > 0.75


@pytest.mark.parametrize("criterion", ["egkl-independent", "egkl", "hinge"])
def test_estimator_tunes_on_a_tuning_set(criterion):
    tr, tu = simulate("wuliu2011_ex1", 60, 8), simulate("wuliu2011_ex1", 60, 9)
    X, y, cv = with_tuning_set(tr.X, tr.y, tu.X, tu.y)
    grid = default_lambda_grid(60)[1:5]
    est = NonCrossingLadderClassifier(
        kernel="linear", n_weights=10, criterion=criterion, lambdas=grid, cv=cv
    )
    est.fit(X, y)
    assert est.lambdas_.shape == (9,)
    # The refit on training plus tuning rows keeps every tuned C = 1 / (2 n lambda).
    hinge = criterion == "hinge"
    tuned = est.fit_info_["tuning_lambdas"] if hinge else est.tuning_.best_lambda
    np.testing.assert_allclose(est.lambdas_, np.broadcast_to(tuned, (9,)) * 60 / 120)
    assert est.crossing_diagnostics(n_samples=5000).n_crossing_pairs == 0
    te = simulate("wuliu2011_ex1", 2000, 10)
    assert egkl(est.predict_proba(te.X), te.p) < 0.1


def test_progress_and_cancel():
    d = simulate("wuliu2011_ex1", 40, 11)
    calls = []
    fit_noncrossing_ladder(
        d.X,
        _pm(d.y),
        np.arange(1, 6) / 6,
        0.01,
        Kernel("linear"),
        progress=lambda done, total, ev: calls.append((done, total, ev)),
    )
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5] and calls[-1][1] == 5
    assert calls[0][2].fit.pi == pytest.approx(0.5)
    from wsvmgui.errors import Cancelled

    with pytest.raises(Cancelled):
        fit_noncrossing_ladder(
            d.X, _pm(d.y), np.arange(1, 6) / 6, 0.01, Kernel("linear"), should_cancel=lambda: True
        )


def test_bad_inputs_raise_input_error():
    d = simulate("wuliu2011_ex1", 30, 12)
    with pytest.raises(InputError, match="one class"):
        NonCrossingLadderClassifier(lam=0.01, sigma=1.0).fit(d.X, np.ones(30))
    X = d.X.copy()
    X[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        NonCrossingLadderClassifier(lam=0.01, sigma=1.0).fit(X, d.y)
    with pytest.raises(InputError, match="constraints"):
        NonCrossingLadderClassifier(lam=0.01, sigma=1.0, constraints="edges").fit(d.X, d.y)
    with pytest.raises(InputError, match="linear kernel only"):
        fit_noncrossing_ladder(d.X, _pm(d.y), [0.5], 0.01, Kernel("rbf"), constraints="hull")
    with pytest.raises(InputError, match="'lam' parameter"):
        NonCrossingLadderClassifier(lam=-1.0, sigma=1.0).fit(d.X, d.y)
    with pytest.raises(InputError, match="space"):
        crossing_diagnostics(lambda Z: Z, d.X, [0.3, 0.6], space="kernel")


def test_pivoted_cholesky_factor():
    from wsvmgui.ladder.noncrossing_qp import pivoted_cholesky

    d = simulate("wuliu2011_ex1", 120, 13)
    for kern in (Kernel("rbf", sigma=1.5), Kernel("rbf", sigma=0.2), Kernel("poly", degree=3)):
        K = kern(d.X)
        piv, L = pivoted_cholesky(K)
        assert np.max(np.abs(K - L @ L.T)) <= 1e-10 * np.max(np.diag(K))
        R = L[piv]
        assert np.allclose(np.triu(R, 1), 0)
        assert np.allclose(L @ R.T, K[:, piv], atol=1e-10 * np.max(np.diag(K)))
    assert pivoted_cholesky(Kernel("poly", degree=2)(d.X))[0].size <= 6  # rank of degree 2 in 2-D


# --------------------------------------------------------------------------- path engine
def _crossing_setup(seed=21, n=120, C=30.0, sigma=0.6, k=9, d=1):
    """A free fit at weight k from the exact path and rows from its crossing neighbour."""
    from wsvmgui.ladder.path import fit_path

    data = simulate("wuliu2011_ex1", n, seed)
    y = _pm(data.y)
    K = Kernel("rbf", sigma=sigma)(data.X)
    lam = 1 / (2 * n * C)
    w = np.arange(1, 20) / 20
    path = fit_path(K, y, lam)
    coef, b = path.coef_matrix(w)
    F = K @ coef.T + b
    return data, y, K, lam, w, path, coef, b, F, k, k - d, d


@pytest.mark.parametrize("mode", ["compact", "pairs"])
def test_active_set_repair_equals_the_reference_qp(mode):
    """The repair from the path's solution is the constrained optimum Clarabel finds."""
    from wsvmgui.ladder.noncrossing_active import repair_check, repair_fit
    from wsvmgui.ladder.noncrossing_qp import pivoted_cholesky, weighted_objective

    data, y, K, lam, w, path, coef, b, F, k, prev, d = _crossing_setup()
    # The neighbour is pushed down so that the free fit at k crosses it.
    f_prev = F[:, prev] - 0.3 * d
    cons, _ = build_constraints(f_prev, d, mode, max_rows=100_000)
    assert not cons.satisfied_by(F[:, k])[0]
    U = path.C * np.where(y > 0, 1 - w[k], w[k])
    rep = repair_fit(K, y, U, cons, coef[k], b[k])
    f = K @ rep.coef + rep.intercept
    kkt, gap, viol = repair_check(K, y, U, cons, rep.coef, rep.intercept, rep.alpha, rep.mu, rep.s)
    assert kkt < 1e-6 and abs(gap) < 1e-6 and viol == 0.0
    assert rep.n_active >= 1 and rep.n_events > 0
    piv, L = pivoted_cholesky(K)
    ref = fit_constrained(L, np.eye(L.shape[1]), K, y, w[k], lam, cons)
    assert np.max(np.abs(f - ref.f_train)) < 1e-5
    S = np.where(y > 0, 1 - w[k], w[k])
    mine = weighted_objective(f, y, S, float(rep.coef @ K @ rep.coef), lam)
    assert abs(mine - ref.objective) <= 1e-7 * ref.objective


def test_repair_merges_exact_duplicates():
    """Repeated training rows: the repair on merged points is the QP's optimum, split evenly.

    Duplicates have equal kernel columns, so without merging every step system of the
    homotopy is singular.
    """
    from wsvmgui.ladder.noncrossing_active import repair_check, repair_fit
    from wsvmgui.ladder.noncrossing_qp import pivoted_cholesky
    from wsvmgui.ladder.path import duplicate_groups, fit_path

    data = simulate("wuliu2011_ex1", 100, 31)
    rows = np.concatenate([np.arange(100), np.arange(0, 40, 2)])  # 20 rows twice
    X, y = data.X[rows], _pm(data.y[rows])
    n = y.size
    K = Kernel("rbf", sigma=0.6)(X)
    lam, w, k, d = 1 / (2 * n * 30.0), np.arange(1, 20) / 20, 9, 1
    path = fit_path(K, y, lam)
    coef, b = path.coef_matrix(w)
    F = K @ coef.T + b
    groups = duplicate_groups(K, y)
    assert np.sum(groups != np.arange(n)) == 20
    cons, _ = build_constraints(F[:, k - d] - 0.3 * d, d, "pairs", max_rows=100_000)
    assert not cons.satisfied_by(F[:, k])[0]
    U = path.C * np.where(y > 0, 1 - w[k], w[k])
    K_start = K + path.ridge * np.eye(n) if path.ridge else K
    rep = repair_fit(K_start, y, U, cons, coef[k], b[k], groups=groups)
    kkt, gap, viol = repair_check(K, y, U, cons, rep.coef, rep.intercept, rep.alpha, rep.mu, rep.s)
    assert kkt < 1e-6 and abs(gap) < 1e-6 and viol == 0.0
    dup = np.flatnonzero(groups != np.arange(n))
    np.testing.assert_allclose(rep.alpha[dup], rep.alpha[groups[dup]])
    assert np.all((rep.alpha >= 0) & (rep.alpha <= U * (1 + 1e-12)))
    piv, L = pivoted_cholesky(K)
    ref = fit_constrained(L, np.eye(L.shape[1]), K, y, w[k], lam, cons)
    assert np.max(np.abs(K @ rep.coef + rep.intercept - ref.f_train)) < 1e-5


def test_repair_check_rejects_a_wrong_answer():
    from wsvmgui.ladder.noncrossing_active import repair_check, repair_fit

    data, y, K, lam, w, path, coef, b, F, k, prev, d = _crossing_setup()
    cons, _ = build_constraints(F[:, prev] - 0.3 * d, d, "compact")
    U = path.C * np.where(y > 0, 1 - w[k], w[k])
    rep = repair_fit(K, y, U, cons, coef[k], b[k])
    # The unconstrained optimum violates the rows; a perturbed repair is not optimal.
    free = repair_check(K, y, U, cons, coef[k], b[k], y * coef[k], np.zeros(cons.n_rows))
    assert free[2] > 0.01
    moved = repair_check(
        K, y, U, cons, rep.coef, rep.intercept + 0.05 * d, rep.alpha, rep.mu, rep.s
    )
    assert moved[0] > 0.01 or moved[2] > 0


@pytest.mark.parametrize(
    "kernel, lam",
    [(Kernel("rbf", sigma=0.7), 1 / (2 * 80 * 30.0)), (Kernel("linear"), 0.01)],
)
def test_path_engine_equals_the_sequential_reference(kernel, lam):
    """The whole ladder: the fits of the libsvm + QP engine, to the solvers' tolerances.

    The reference's first fit is libsvm's (its stopping tolerance leaves ~1e-3 in the
    decision values), and each later fit is constrained by the previous one, so the
    ladders agree to ~1e-3, not to the 1e-5 of one repair against one QP (tested above).
    """
    d = simulate("wuliu2011_ex1", 80, 22)
    y = _pm(d.y)
    w = np.arange(1, 20) / 20
    fast = fit_noncrossing_ladder(d.X, y, w, lam, kernel)
    ref = fit_noncrossing_ladder(d.X, y, w, lam, kernel, engine="sequential", shortcut=False)
    dg = fast.diagnostics
    assert dg["engine"] == "path" and dg["n_paths"] == 1
    assert dg["n_active_set"] > 0 and dg["n_qp"] == 0  # repaired, never the QP
    assert dg["max_kkt_residual"] < 1e-5 and dg["max_duality_gap"] < 1e-6
    assert dg["max_violation"] <= 0.5 * dg["eps"]
    F, G = fast.decision_at(d.X), ref.decision_at(d.X)
    assert np.max(np.abs(F - G)) < 1e-2 and np.mean(np.abs(F - G)) < 1e-3
    test = simulate("wuliu2011_ex1", 2000, 23)
    assert np.mean(np.abs(fast.estimate(test.X).p - ref.estimate(test.X).p)) < 2e-3
    for ladder in (fast, ref):
        assert np.all(ladder.estimate(d.X).monotone)


def test_path_engine_falls_back_to_the_qp_when_the_repair_fails(monkeypatch):
    import wsvmgui.ladder.noncrossing_frompath as frompath
    from wsvmgui.ladder.noncrossing_active import RepairFailed

    def fail(*args, **kwargs):
        raise RepairFailed("injected")

    monkeypatch.setattr(frompath, "repair_fit", fail)
    d = simulate("wuliu2011_ex1", 50, 24)
    nc = fit_noncrossing_ladder(d.X, _pm(d.y), np.arange(1, 10) / 10, 0.002, Kernel("rbf"))
    qp = [r for r in nc.records if r.method == "qp"]
    assert qp and nc.diagnostics["n_active_set"] == 0
    assert all("injected" in r.note for r in qp)
    assert nc.crossing("feature", n_samples=5000).n_crossing_pairs == 0


def test_a_repair_that_lies_is_caught_and_replaced(monkeypatch):
    """A repair returning the unconstrained fit fails its check; the QP answers instead."""
    import wsvmgui.ladder.noncrossing_frompath as frompath
    from wsvmgui.ladder.noncrossing_active import Repair

    def lie(K, y, upper, cons, c0, b0, **kw):
        return Repair(c0, b0, np.clip(y * c0, 0, upper), np.zeros(cons.n_rows), 0.0, 1, 1, 0)

    monkeypatch.setattr(frompath, "repair_fit", lie)
    d = simulate("wuliu2011_ex1", 50, 25)
    nc = fit_noncrossing_ladder(d.X, _pm(d.y), np.arange(1, 10) / 10, 0.002, Kernel("rbf"))
    assert nc.diagnostics["n_qp"] > 0
    assert any("check failed" in r.note for r in nc.records)
    assert nc.diagnostics["max_violation"] <= 0.5 * nc.diagnostics["eps"]


def test_path_breakdown_gives_way_to_libsvm_fits(monkeypatch):
    import wsvmgui.ladder.noncrossing_frompath as frompath
    from wsvmgui.ladder.path import PathBreakdown

    def broken(*args, **kwargs):
        raise PathBreakdown("injected breakdown")

    monkeypatch.setattr(frompath, "fit_path", broken)
    d = simulate("wuliu2011_ex1", 50, 26)
    nc = fit_noncrossing_ladder(d.X, _pm(d.y), np.arange(1, 10) / 10, 0.002, Kernel("rbf"))
    assert any("injected breakdown" in note for note in nc.diagnostics["notes"])
    assert nc.diagnostics["n_paths"] == 0
    assert nc.crossing("feature", n_samples=5000).n_crossing_pairs == 0
    assert np.all(nc.estimate(d.X).monotone)


def test_a_non_monotone_path_ladder_is_refitted_by_the_sequential_engine(monkeypatch):
    """A wrong fit that no per-fit check sees (its record says it met the rows): the final
    monotonicity check catches the ladder and the reference engine fits it instead."""
    from wsvmgui.ladder.noncrossing_frompath import PathFitter
    from wsvmgui.ladder.noncrossing_types import WeightFit

    d = simulate("wuliu2011_ex1", 80, 22)
    y, w, lam, kernel = _pm(d.y), np.arange(1, 20) / 20, 1 / (2 * 80 * 30.0), Kernel("rbf", 0.7)
    ref = fit_noncrossing_ladder(d.X, y, w, lam, kernel, engine="sequential")
    honest = PathFitter.fit

    def lying(self, step, pi, lam, f_prev, direction):
        fit = honest(self, step, pi, lam, f_prev, direction)
        if pi != w[-1]:
            return fit
        # every point positive at the largest weight: negative ones below it flip back
        return WeightFit(fit.coef, fit.intercept + 5.0, fit.f_train + 5.0, fit.record)

    monkeypatch.setattr(PathFitter, "fit", lying)
    assert np.any(ref.decision_at(d.X)[:, -2] < 0)  # so the lie breaks monotonicity
    nc = fit_noncrossing_ladder(d.X, y, w, lam, kernel)
    assert nc.diagnostics["engine"] == "sequential"
    assert "not monotone" in nc.diagnostics["notes"][0]
    assert np.all(nc.estimate(d.X).monotone)
    np.testing.assert_allclose(nc.decision_at(d.X), ref.decision_at(d.X), atol=1e-8)


def test_the_final_monotonicity_check_names_the_point():
    from wsvmgui.errors import SolverError
    from wsvmgui.ladder.noncrossing import _check_monotone

    F = np.array([[1.0, -1.0, -2.0], [0.5, -0.1, 0.2]])
    with pytest.raises(SolverError, match="1 training point.*point 1"):
        _check_monotone(F, np.array([0.25, 0.5, 0.75]))
    _check_monotone(F[:1], np.array([0.25, 0.5, 0.75]))


def test_interpolate_rule_uses_the_limits_at_the_ends():
    from wsvmgui.ladder.noncrossing import estimate_with_ends

    w = np.array([0.25, 0.5, 0.75])
    D = np.array(
        [
            [0.6, 0.2, -0.2],  # crosses between 0.5 and 0.75 at the middle: 0.625
            [-1.0, -2.0, -3.0],  # negative everywhere: line from +1 at 0 to -1 at 0.25
            [3.0, 2.0, 1.0],  # positive everywhere: line from 1 at 0.75 to -1 at 1
        ]
    )
    est = estimate_with_ends(D, w, "interpolate")
    np.testing.assert_allclose(est.p, [0.625, 0.125, 0.875])
    assert np.all((est.lo <= est.p) & (est.p <= est.hi))
    count = estimate_with_ends(D, w, "count")
    np.testing.assert_allclose(count.p, [0.625, 0.125, 0.875])  # midpoints agree here
    D2 = np.array([[-0.5, -1.0, -1.5], [0.1, 0.05, 0.02]])
    np.testing.assert_allclose(
        estimate_with_ends(D2, w, "interpolate").p, [0.25 / 1.5, 0.75 + 0.25 * 0.02 / 1.02]
    )


def test_hinge_criterion_tunes_sigma():
    """Not the middle of the grid: the sigma whose ladder scores best on the tuning set.
    The table (the generic search's, over sigma) holds each sigma's EGKL, recomputed here
    from ladders fitted directly with lambda chosen per weight by the hinge loss."""
    tr, tu = simulate("wuliu2011_ex6", 84, 27), simulate("wuliu2011_ex6", 36, 127)
    X, y, cv = with_tuning_set(tr.X, tr.y, tu.X, tu.y)
    sigmas = [0.4, 60.0, 1.0]  # the middle one is far too wide for this design
    lambdas = default_lambda_grid(84)[1:5]
    est = NonCrossingLadderClassifier(
        criterion="hinge", sigmas=sigmas, n_weights=10, lambdas=lambdas, cv=cv
    ).fit(X, y)
    t = est.tuning_
    assert isinstance(t, TuningResult) and t.score_name == "egkl"
    assert list(t.sigmas) == sigmas and t.score.shape == (3,)
    assert est.sigma_ == sigmas[int(np.argmin(t.score))] == t.best_sigma
    assert est.sigma_ != 60.0 and t.score[1] > min(t.score)
    assert t.edge == ({"sigma": "min"} if est.sigma_ == 0.4 else {})  # 1.0: inside the grid
    expected, per_weight = [], {}
    for sg in sigmas:
        ladder = fit_noncrossing_ladder(
            tr.X, _pm(tr.y), est.weights_, np.nan, Kernel("rbf", sigma=sg),
            lam_grid=lambdas, X_tune=tu.X, y_tune=_pm(tu.y),
        )  # fmt: skip
        p = np.clip(ladder.estimate(tu.X).p, 0.01, 0.99)
        expected.append(-np.mean(np.where(_pm(tu.y) > 0, np.log(p), np.log(1 - p))))
        per_weight[sg] = ladder.lams
    np.testing.assert_allclose(t.score, expected, rtol=1e-9, atol=0)
    chosen = per_weight[est.sigma_]
    np.testing.assert_allclose(est.fit_info_["tuning_lambdas"], chosen, rtol=1e-12)
    assert set(np.round(chosen / lambdas[0], 6)) <= set(np.round(lambdas / lambdas[0], 6))
    np.testing.assert_allclose(est.lambdas_, chosen * 84 / 120, rtol=1e-12)  # C kept
    summary = est.fitted_summary()
    assert summary["tuning"]["best"] == {"sigma": est.sigma_}
    assert summary["tuning"]["best_score"] == pytest.approx(min(expected), rel=1e-9)


def test_estimator_engines_and_diagnostics():
    d = simulate("wuliu2011_ex1", 60, 28)
    path = NonCrossingLadderClassifier(lam=0.005, sigma=0.8, n_weights=10).fit(d.X, d.y)
    grid = NonCrossingLadderClassifier(lam=0.005, sigma=0.8, n_weights=10, engine="grid")
    grid.fit(d.X, d.y)
    assert path.diagnostics_["engine"] == "path" and grid.diagnostics_["engine"] == "sequential"
    te = simulate("wuliu2011_ex1", 1000, 29)
    a, b = path.predict_proba(te.X), grid.predict_proba(te.X)
    assert np.mean(np.abs(a - b)) < 5e-3


def test_default_matches_the_truth_without_crossings_and_no_worse_than_independent():
    """Wu & Liu Example 1 at the paper's n = 100, seeds 0-2, both estimators at their
    defaults (the same lambda and sigma search).  Bounds from
    ``benchmarks/results/noncrossing_accuracy.md`` (seeds 0-4): the non-crossing L1 was
    0.074-0.143 per seed; non-crossing minus independent -0.0001 (SE 0.0011) on the
    mean of seeds 0-4 and -0.0004 on seeds 0-2 (paired SD per seed 0.0025, so the
    margin 0.003 is about two SEs of a three-seed mean); the final ladder read off the
    tuning's 39 weights was +0.0009 over seeds 0-4."""
    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.evaluation.metrics import l1_error

    te = simulate("wuliu2011_ex1", 3000, 10_000)
    nc, ind = [], []
    for seed in range(3):
        tr = simulate("wuliu2011_ex1", 100, seed)
        est = NonCrossingLadderClassifier().fit(tr.X, tr.y)
        # the non-crossing ladder's search takes the smallest EGKL
        base = WeightedSVMClassifier(calibration="none", tuning_rule="min").fit(tr.X, tr.y)
        assert est.sigma_ == base.sigma_ and est.lambda_ == base.lambda_  # one search
        assert est.weights_.size == 159  # the final ladder's finer read-off
        nc.append(l1_error(est.predict_proba(te.X), te.p))
        ind.append(l1_error(base.predict_proba(te.X), te.p))
        assert nc[-1] < 0.16, (seed, nc)
        # the guarantee: no crossing in the hull of the kernel rows (feature space)
        assert est.crossing_diagnostics("feature", n_samples=3000).n_crossing_pairs == 0
        # and in the input hull no more non-monotone points than the independent ladder
        cross = [
            crossing_diagnostics(m, tr.X, space="input", n_samples=3000).n_nonmonotone
            for m in (est, base)
        ]
        assert cross[0] <= cross[1], (seed, cross)
    assert np.mean(nc) - np.mean(ind) <= 0.003, (nc, ind)


def test_tuning_edge_is_reported_and_read_by_the_app():
    """A sigma grid of two widths: either choice sits on the grid's edge, and the fit
    says which end, for the EGKL and the hinge criteria; a choice inside says nothing."""
    from wsvmgui.app.capabilities import tuning_notes

    d = simulate("wuliu2011_ex1", 60, 3)
    kw = dict(n_weights=8, sigmas=[0.3, 3.0], lambdas=default_lambda_grid(60)[2:4], cv=2)
    for criterion in ("egkl-independent", "hinge"):
        est = NonCrossingLadderClassifier(criterion=criterion, **kw).fit(d.X, d.y)
        edge = est.fit_info_["tuning_edge"]
        end = "min" if est.sigma_ == 0.3 else "max"
        assert edge == dict(est.tuning_.edge) and edge["sigma"] == end, (criterion, edge)
        (note,) = tuning_notes(est.fit_info_)
        word = "smallest" if end == "min" else "largest"
        assert f"sigma at its {word} value" in note
    inside = NonCrossingLadderClassifier(
        criterion="hinge", n_weights=8, sigmas=[0.01, 1.0, 60.0],
        lambdas=default_lambda_grid(60)[2:4], cv=2,
    ).fit(d.X, d.y)  # fmt: skip
    assert inside.sigma_ == 1.0 and inside.fit_info_["tuning_edge"] == {}
    assert tuning_notes(inside.fit_info_) == []
    fixed = NonCrossingLadderClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
    assert fixed.fit_info_["tuning_edge"] == {} and fixed.tuning_ is None
