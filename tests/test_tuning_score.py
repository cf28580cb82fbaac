"""Tuning on a proper score (issue 23 item 3): the Brier score and the log loss of the
estimate the estimator returns (recalibrated when it is), the one-standard-error rule, and
the edge hits reported to the user.

The search's scores are checked against an independent computation: each cell refitted
at fixed (lambda, sigma) on each fold by the untuned estimator, its estimates of the
fold's tuning rows collected and scored by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from wsvmgui.app.capabilities import tuning_notes
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.gridsearch import FoldScore, Grid, grid_search, one_se_cell
from wsvmgui.ladder.recalibration import recalibrated_terms
from wsvmgui.ladder.search import brier_terms
from wsvmgui.progress import ProgressTracker

LAMBDAS = [0.05, 0.005]
SIGMAS = [0.6, 1.5]


def _data(n: int = 150, seed: int = 3):
    d = simulate("wuliu2011_ex6", n, seed)
    return d.X, d.y


def _folds(y, k=3):
    return list(StratifiedKFold(k, shuffle=True, random_state=0).split(np.zeros(y.size), y))


def _by_hand(X, y, folds, lam, sigma):
    """Estimates of every tuning row by the cell (lam, sigma) fitted on the other folds."""
    p = np.empty(y.size)
    for tr, te in folds:
        est = WeightedSVMClassifier(lam=lam, sigma=sigma, calibration="none").fit(X[tr], y[tr])
        p[te] = est.predict_proba(X[te])[:, 1]
    order = np.concatenate([te for _, te in folds])
    return p[order], (y[order] == est.classes_[1]).astype(float)


# ------------------------------------------------------------------------ generic search
def test_one_se_cell_takes_the_preferred_cell_within_one_standard_error():
    score = np.array([[1.0, 0.9], [0.95, 2.0]])
    se = np.array([[0.0, 0.06], [0.0, 0.0]])
    # bound 0.96: cells (0, 1) and (1, 0); preference: the largest first index
    assert one_se_cell(score, se, lambda c: -c[0]) == (1, 0)
    assert one_se_cell(score, se, lambda c: c) == (0, 1)
    assert one_se_cell(score, np.zeros_like(se), lambda c: -c[0]) == (0, 1)
    assert one_se_cell(np.full((2, 2), np.inf), se, lambda c: c) is None


def test_search_standard_errors_pool_and_one_se_rule():
    rng = np.random.default_rng(0)
    noise = rng.normal(size=30)
    folds = [(np.setdiff1d(np.arange(30), te), te) for te in np.array_split(np.arange(30), 3)]

    def fit(job, ctx):
        return job.params["a"]

    def score(a, job, ctx):  # row terms (noise + a)^2, minimised at the mean of noise
        terms = (noise[job.test] + a) ** 2
        return FoldScore(float(terms.sum()), float(terms.size), terms=terms, data=job.test)

    grid = Grid({"a": [-1.0, -0.5, 0.0, 0.5]})
    res = grid_search(grid, folds, fit, score, tracker=ProgressTracker(0))
    for i, a in enumerate(grid.axes["a"]):
        terms = (noise + a) ** 2
        assert res.score[i] == pytest.approx(terms.mean())
        assert res.se[i] == pytest.approx(terms.std(ddof=1) / np.sqrt(30))
    assert res.rule == "min" and res.best == (int(np.argmin(res.score)),)
    one = grid_search(
        grid, folds, fit, score, tracker=ProgressTracker(0), one_se=True,
        prefer=lambda params: abs(params["a"] + 1.0),  # nearest to -1 preferred
    )  # fmt: skip
    close = np.flatnonzero(res.score <= res.score[res.best] + res.se[res.best])
    assert one.rule == "one_se" and one.best == (int(close.min()),)
    # pool: a cell scored from every fold at once (here: only the rows of the even folds)
    pooled = grid_search(
        grid, folds, fit, score, tracker=ProgressTracker(0),
        pool=lambda scores: np.concatenate([s.terms for s in scores[::2]]),
    )  # fmt: skip
    rows = np.concatenate([folds[0][1], folds[2][1]])
    for i, a in enumerate(grid.axes["a"]):
        assert pooled.score[i] == pytest.approx(((noise[rows] + a) ** 2).mean())


def test_recalibrated_terms_undo_a_distortion_and_auto_takes_the_best_map():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 1500)
    y = (rng.random(p.size) < p).astype(float)
    q = 1 / (1 + np.exp(-3 * np.log(p / (1 - p))))  # too extreme
    raw = brier_terms(q, y).mean()
    fitted = {m: recalibrated_terms(q, y, m, brier_terms).mean() for m in ("sigmoid", "isotonic")}
    assert max(fitted.values()) < raw - 0.01
    assert recalibrated_terms(q, y, "auto", brier_terms).mean() <= min(fitted.values()) + 1e-12
    # a class of one row: scored unmapped
    y1 = np.zeros(10)
    y1[0] = 1
    np.testing.assert_allclose(
        recalibrated_terms(q[:10], y1, "auto", brier_terms), (q[:10] - y1) ** 2
    )


# ------------------------------------------------------------------------ estimators
@pytest.mark.parametrize("score", ["brier", "log_loss"])
def test_plain_proper_score_matches_refits_by_hand(score):
    X, y = _data()
    folds = _folds(y)
    est = WeightedSVMClassifier(
        lambdas=LAMBDAS, sigmas=SIGMAS, cv=folds, tuning_score=score, calibration="none",
        tuning_rule="min",
    ).fit(X, y)  # fmt: skip
    t = est.tuning_
    assert t.score_name == score and t.rule == "min"
    for i, lam in enumerate(LAMBDAS):
        for j, sg in enumerate(SIGMAS):
            p, y01 = _by_hand(X, y, folds, lam, sg)
            if score == "brier":
                want = np.mean((p - y01) ** 2)
            else:
                q = np.clip(p, 1e-6, 1 - 1e-6)
                want = -np.mean(y01 * np.log(q) + (1 - y01) * np.log(1 - q))
            assert t.score[i, j] == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert t.best == np.unravel_index(np.argmin(t.score), t.score.shape)


def test_recalibrated_brier_matches_refits_by_hand_and_one_se_picks_the_smoothest():
    X, y = _data()
    folds = _folds(y)
    kw = dict(lambdas=LAMBDAS, sigmas=SIGMAS, cv=folds, calibration="sigmoid")
    est = WeightedSVMClassifier(tuning_score="brier", tuning_rule="min", **kw).fit(X, y)
    t = est.tuning_
    assert t.score_name == "brier (recalibrated: sigmoid)" and t.rule == "min"
    for i, lam in enumerate(LAMBDAS):
        for j, sg in enumerate(SIGMAS):
            p, y01 = _by_hand(X, y, folds, lam, sg)
            terms = recalibrated_terms(p, y01, "sigmoid", brier_terms)
            assert t.score[i, j] == pytest.approx(terms.mean(), rel=1e-6)
            assert t.se[i, j] == pytest.approx(terms.std(ddof=1) / np.sqrt(terms.size), rel=1e-6)
    one = WeightedSVMClassifier(tuning_score="brier", tuning_rule="one_se", **kw).fit(X, y)
    assert one.tuning_.rule == "one_se"
    np.testing.assert_allclose(one.tuning_.score, t.score)
    bound = t.score[t.best] + t.se[t.best]
    close = [(i, j) for i in range(2) for j in range(2) if t.score[i, j] <= bound]
    # smoothest: the largest lambda (index 0 here), then the largest sigma (index 1)
    assert one.tuning_.best == min(close, key=lambda c: (c[0], -c[1]))
    assert one.fit_info_["tuning_edge"] == dict(one.tuning_.edge)
    # the calibrated estimate of the one-SE cell is still a probability
    P = one.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_multiclass_tunes_every_subproblem_on_the_score():
    d = simulate("wu2010_ex1", 120, 0)
    est = MulticlassWeightedSVMClassifier(
        scheme="ova", lambdas=LAMBDAS, sigmas=SIGMAS, cv=3, calibration="auto",
        tuning_score="brier", tuning_rule="one_se",
    ).fit(d.X, d.y)  # fmt: skip
    assert len(est.tuning_) == 3
    for t in est.tuning_.values():
        assert t.rule == "one_se" and t.score_name.startswith("brier (recalibrated")
        assert (
            t.score[t.best]
            <= np.nanmin(t.score)
            + t.se[np.unravel_index(np.nanargmin(t.score), t.score.shape)]
            + 1e-12
        )
    np.testing.assert_allclose(est.predict_proba(d.X).sum(axis=1), 1.0)


def test_bad_tuning_parameters_are_refused():
    X, y = _data(60)
    with pytest.raises(ValueError, match="tuning_score"):
        WeightedSVMClassifier(tuning_score="auc").fit(X, y)
    with pytest.raises(ValueError, match="tuning_rule"):
        WeightedSVMClassifier(tuning_rule="two_se").fit(X, y)


# ------------------------------------------------------------------------ notes
def test_tuning_notes_name_the_edges():
    assert tuning_notes(None) == [] and tuning_notes({"tuning_edge": {}}) == []
    (one,) = tuning_notes({"tuning_edge": {"lambda": "max", "sigma": "min"}})
    assert "lambda at its largest value and sigma at its smallest value" in one
    (many,) = tuning_notes(
        {"tuning_edge": {"1|2": {"sigma": "max"}, "1|3": {}, "2|3": {"sigma": "max"}}}
    )
    assert (
        many.startswith("Tuning: in 2 of 3 sub-problems the chosen cell sits")
        and "sigma at its largest value in 2" in many
    )
    assert tuning_notes({"tuning_edge": {"1|2": {}, "1|3": {}}}) == []
    # an extended grid is named, and an edge after it is said to be still there
    grown, still = tuning_notes(
        {"tuning_edge": {"sigma": "max"}, "tuning_extended": {"sigma": [0.675, 1.0125]}}
    )
    assert "grid was extended (sigma 0.675, 1.01)" in grown
    assert "cell still sits on the grid's edge (sigma at its largest value)" in still
    (inside,) = tuning_notes({"tuning_edge": {}, "tuning_extended": {"lambda": [0.001]}})
    assert "extended (lambda 0.001)" in inside


def test_a_fit_on_the_edge_gets_a_note():
    X, y = _data(80)
    est = WeightedSVMClassifier(lambdas=[1.0, 0.5], sigma=1.0, cv=2).fit(X, y)
    edge = est.fit_info_["tuning_edge"]
    assert edge and set(edge) == {"lambda"}  # two lambdas: either choice is an edge
    assert any("grid's edge" in note for note in tuning_notes(est.fit_info_))


def _table(score, best, rule):
    from wsvmgui.ladder.tuning_table import TuningResult, grid_edges

    axes = {"lambda": np.array([1.0, 0.1, 0.01]), "sigma": np.array([0.5, 1.0, 2.0])}
    return TuningResult(axes, np.asarray(score), best, "egkl", edge=grid_edges(axes, best),
                        rule=rule)  # fmt: skip


def test_the_smallest_scores_edge_is_read_from_the_table():
    inside = [[0.5, 0.4, 0.41], [0.45, 0.30, 0.31], [np.nan, 0.5, np.inf]]
    one_se = _table(inside, (0, 2), "one_se")  # the widest kernel within one SE
    assert one_se.edge == {"lambda": "max", "sigma": "max"} and one_se.min_edge == {}
    low = [[0.5, 0.4, 0.41], [0.45, 0.35, 0.31], [0.2, 0.5, np.inf]]
    assert _table(low, (0, 2), "one_se").min_edge == {"lambda": "min", "sigma": "min"}
    # under rule "min" the chosen cell is the smallest score's (its edge, as before)
    assert _table(low, (2, 0), "min").min_edge == {"lambda": "min", "sigma": "min"}


def test_a_one_se_choice_on_the_edge_gets_no_note_unless_the_minimum_is_there():
    edge = {"sigma": "max"}
    assert tuning_notes({"tuning_edge": edge, "tuning_min_edge": {}}) == []
    (note,) = tuning_notes({"tuning_edge": edge, "tuning_min_edge": {"lambda": "min"}})
    assert note.startswith("Tuning: the cell of the smallest score sits on the grid's edge "
                           "(lambda at its smallest value)")  # fmt: skip
    (note,) = tuning_notes({"tuning_edge": {}, "tuning_min_edge": {"sigma": "min"}})
    assert "smallest score sits on the grid's edge (sigma at its smallest value)" in note
    # the same cell's edges (rule "min", or both on it): the chosen cell's note, as before
    (same,) = tuning_notes({"tuning_edge": edge, "tuning_min_edge": edge})
    assert "the chosen cell sits on the grid's edge (sigma at its largest value)" in same


def test_sub_problems_under_the_one_se_rule_are_noted_by_their_smallest_scores_edges():
    chosen = {"1|2": {"sigma": "max"}, "1|3": {"sigma": "max"}, "2|3": {"sigma": "max"}}
    lowest = {"1|2": {}, "1|3": {"lambda": "min"}, "2|3": {"lambda": "min", "sigma": "max"}}
    (note,) = tuning_notes({"tuning_edge": chosen, "tuning_min_edge": lowest})
    assert note == (
        "Tuning: in 2 of 3 sub-problems the cell of the smallest score sits on the grid's "
        "edge (lambda at its smallest value in 2, sigma at its largest value in 1); the best "
        "may lie outside the grid (widen it)."
    )
    inside = {"1|2": {}, "1|3": {}, "2|3": {}}
    assert tuning_notes({"tuning_edge": chosen, "tuning_min_edge": inside}) == []
    # rule "min": the same edges, the chosen cells' note as before
    (same,) = tuning_notes({"tuning_edge": chosen, "tuning_min_edge": chosen})
    assert same.startswith("Tuning: in 3 of 3 sub-problems the chosen cell sits on the grid's edge")


def test_the_multiclass_fit_records_each_pairs_smallest_score_edge():
    """Pairwise under tuning_rule="auto" (widest within half an SE): each pair's
    ``tuning_min_edge`` is the edge of its table's smallest score, ``tuning_edge`` that of
    the chosen cell."""
    from wsvmgui.evaluation.designs import DESIGNS
    from wsvmgui.ladder.tuning_table import grid_edges

    d = DESIGNS["wu2010_ex1"].sample(150, 0)
    est = MulticlassWeightedSVMClassifier(scheme="pairwise", random_state=0).fit(d.X, d.y)
    info = est.fit_info_
    assert set(info["tuning_min_edge"]) == set(info["tuning_edge"]) and info["tuning_edge"]
    assert {t.rule for t in est.tuning_.values()} == {"one_se"}
    for name, t in est.tuning_.items():
        score = np.where(np.isfinite(t.score), t.score, np.nan)
        lowest = tuple(map(int, np.unravel_index(np.nanargmin(score), score.shape)))
        assert info["tuning_min_edge"][name] == grid_edges(t.axes, lowest)
        assert info["tuning_edge"][name] == grid_edges(t.axes, tuple(map(int, t.best)))


def test_the_default_fit_records_the_edge_of_its_smallest_score():
    """Binary n = 100 under tuning_rule="auto" (one SE): the choice sits at the largest
    sigma, the smallest EGKL inside the grid: no edge note."""
    from wsvmgui.evaluation.designs import DESIGNS
    from wsvmgui.ladder.tuning_table import grid_edges

    d = DESIGNS["wuliu2011_ex1"].sample(100, 0)
    est = WeightedSVMClassifier(random_state=0).fit(d.X, d.y)
    t = est.tuning_
    assert t.rule == "one_se" and est.fit_info_["tuning_edge"] == {"sigma": "max"}
    lowest = np.unravel_index(np.nanargmin(np.where(np.isfinite(t.score), t.score, np.nan)),
                              t.score.shape)  # fmt: skip
    assert est.fit_info_["tuning_min_edge"] == grid_edges(t.axes, tuple(map(int, lowest))) == {}
    assert tuning_notes(est.fit_info_) == []


def test_the_preconditioned_svms_stages_are_named_not_counted_as_sub_problems():
    """The preconditioned SVM records its kernel width search's and its level choice's
    edges apart (``{"kernel": ..., "level": ...}``): the note names each stage that sits
    on an edge, not "k of 2 sub-problems"; a fit whose two-value lambda grid puts the
    kernel stage on an edge gets that sentence."""
    from wsvmgui.estimators.preconditioned import PreconditionedSVC

    (one,) = tuning_notes({"tuning_edge": {"kernel": {"sigma": "min"}, "level": {}}})
    assert one.startswith("Tuning: the kernel width search chose a cell on its grid's edge "
                          "(sigma at its smallest value)")  # fmt: skip
    both = tuning_notes({"tuning_edge": {"kernel": {"lambda": "max"}, "level": {"level": "max"}}})
    assert [n.split(" chose")[0] for n in both] == [
        "Tuning: the kernel width search",
        "Tuning: the choice of level",
    ]
    assert tuning_notes({"tuning_edge": {"kernel": {}, "level": {}}}) == []
    X, y = _data(120)
    est = PreconditionedSVC(n_weights=6, lambdas=[0.1, 0.01], sigmas=[0.5, 1.0]).fit(X, y)
    edge = est.fit_info_["tuning_edge"]
    assert set(edge) == {"kernel", "level"} and edge["kernel"]  # two values: an edge each
    notes = tuning_notes(est.fit_info_)
    assert notes and not any("sub-problems" in n for n in notes)
    assert any(n.startswith("Tuning: the kernel width search chose a cell") for n in notes)


def test_an_extended_grid_is_named_beside_the_sub_problems_edges():
    grown, edges = tuning_notes(
        {
            "tuning_edge": {"1|2": {"sigma": "max"}, "1|3": {}},
            "tuning_extended": {"sigma": [0.675]},
        }
    )
    assert "grid was extended (sigma 0.675)" in grown
    assert edges.startswith(
        "Tuning: in 1 of 2 sub-problems the chosen cell still sits on the grid's edge"
    )


def test_every_edge_note_is_one_sentence_whatever_its_cell_or_count():
    """One phrasing for the chosen cell and the smallest score's, of one search or of
    sub-problems: "Tuning: [in k of n sub-problems] <cell> sits on the grid's edge
    (<where>); the best may lie outside the grid (widen it)." (the run notes used to say
    the sub-problems' two ways)."""
    tail = "; the best may lie outside the grid (widen it)."
    subs = {"1|2": {"sigma": "max"}, "1|3": {}}
    inside = {"1|2": {}, "1|3": {}}
    cases = {
        "the chosen cell sits on the grid's edge (sigma at its largest value)": {
            "tuning_edge": {"sigma": "max"}
        },
        "the cell of the smallest score sits on the grid's edge (sigma at its largest value)": {
            "tuning_edge": {"lambda": "max"},
            "tuning_min_edge": {"sigma": "max"},
        },
        "in 1 of 2 sub-problems the chosen cell sits on the grid's edge "
        "(sigma at its largest value in 1)": {"tuning_edge": subs},
        "in 1 of 2 sub-problems the cell of the smallest score sits on the grid's edge "
        "(sigma at its largest value in 1)": {"tuning_edge": inside, "tuning_min_edge": subs},
    }
    for middle, info in cases.items():
        assert tuning_notes(info) == [f"Tuning: {middle}{tail}"], info
