"""K-class probabilities from binary weighted-SVM ladders by divide and conquer.

One estimator, :class:`MulticlassWeightedSVMClassifier`, runs every scheme of METHODS
section 5 (Wang, Zhang & Wu 2019; Zeng & Zhang), chosen by ``scheme``:

* ``"pairwise"`` (P-SVM): all K(K-1)/2 pairs, coupled with a per-point baseline;
* ``"baseline1"`` / ``"baseline2"`` (B1, B2): the K - 1 pairs against one baseline class
  (the largest class / the class of median aggregated distance);
* ``"bp1"`` / ``"bp2"`` (BP1, BP2): the baseline pairs rebuilt into a full pairwise table
  at no extra cost, then coupled per point; their probabilities equal B1's / B2's (the
  rebuilt table is consistent) and they add max voting;
* ``"ova"`` (A-SVM): K one-against-the-rest ladders, normalised to sum to one.

Each sub-problem is tuned on its own data by EGKL (Zeng section 6); see
:mod:`wsvmgui.multiclass.subproblems`.
"""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import Any, ClassVar

import numpy as np

from .._sklearn_compat import Interval, StrOptions
from ..errors import InputError
from ..ladder.engines import DEFAULT_ENGINE
from ..ladder.final import fit_ladders
from ..ladder.recalibration import (
    CALIBRATIONS,
    MonotoneMap,
    calibration_folds,
    choose_map,
    cross_fitted,
    fit_calibration,
)
from ..ladder.rules import LadderEstimate
from ..ladder.screening import Screening
from ..ladder.search import EGKL_FLOOR
from ..ladder.splits import TuningWarning
from ..ladder.tuning import DEFAULT_C_GRID, TuningResult
from ..ladder.weights import weight_grid
from ..multiclass import coupling
from ..multiclass.baseline_choice import choose_baseline
from ..multiclass.ova import OVA_NORMALISATIONS, OVA_SCREEN_MIN_ROWS, normalise
from ..multiclass.subproblems import (
    FittedSubProblem,
    SubProblem,
    SubproblemSet,
    as_ladder_problem,
    fitted_subproblem,
    pair_problem,
    rest_problem,
)
from ..progress import CancelCheck, ProgressCallback, ProgressTracker
from ..solvers.kernels import DEFAULT_SIGMA_FACTORS
from ._base import SOLVER_CONSTRAINTS, BaseProbabilityClassifier, n_threads, seed_of
from ._ladder import LADDER_SCHEME_CONSTRAINTS, SCREEN_CONSTRAINTS, LadderParams, engine_info
from .report import ProbabilityReport
from .views import LadderView, SubproblemViews

#: Scheme name -> one-line description, for the command line and the app.
SCHEME_INFO: dict[str, str] = {
    "pairwise": "P-SVM: all K(K-1)/2 class pairs, coupled with a per-point baseline class",
    "baseline1": "B1-SVM: K-1 pairs against the largest class (linear in K)",
    "baseline2": "B2-SVM: K-1 pairs against the class of median aggregated distance",
    "bp1": "BP1-SVM: B1's pairs rebuilt into a full pairwise table (no extra fits, adds voting)",
    "bp2": "BP2-SVM: B2's pairs rebuilt into a full pairwise table (no extra fits, adds voting)",
    "ova": "A-SVM: K one-against-the-rest ladders, normalised to sum to one",
}
SCHEMES = tuple(SCHEME_INFO)
_BASELINE_METHOD = {
    "baseline1": "largest",
    "bp1": "largest",
    "baseline2": "median_distance",
    "bp2": "median_distance",
}
#: Schemes with a full pairwise table, which also predict by max voting (TE2).
VOTING_SCHEMES = ("pairwise", "bp1", "bp2")
#: The pair schemes' tuning (all but One-vs-All): ``cv="auto"`` is this many stratified
#: folds, over the coarse grid C in :data:`PAIR_C_GRID` x sigma in
#: :data:`PAIR_SIGMA_FACTORS` sigma_M (16 cells instead of 7 x 6 on a 30% hold-out).
#: The recalibration maps then cross-fit on the same folds.  Chosen by
#: ``benchmarks/multiclass_cv_study.py`` (5 seeds; docs/notes/multiclass_accuracy.md
#: section 3): lower L1 on all 7 multiclass designs (0.77-0.97x) and lower log loss on
#: iris, wine and penguins (digits +1%) than the 30% hold-out over the full grid, for
#: 1.15-1.32x the CPU of the default before issue 23.
PAIR_TUNING_FOLDS = 3
#: Values of the ``ties`` parameter (the baseline schemes' classes in contest).
TIES = ("table", "pairs", "key")
#: Values of the ``pair_tuning`` parameter.
PAIR_TUNINGS = ("folds", "holdout")
PAIR_C_GRID = (0.1, 1.0, 10.0, 100.0)
#: The map of ``calibration="auto"`` for the pair schemes on three or more classes: the
#: sigmoid.  On a pair's few cross-fitted rows the cross-validated choice between the
#: sigmoid and isotonic maps (:data:`~wsvmgui.ladder.recalibration.AUTO_MAPS`) is noisy
#: (on wu2010_ex2, n = 100, it flipped with the order of the rows) and picked isotonic
#: where the sigmoid was closer to the truth (docs/notes/multiclass_accuracy.md, section 5).
PAIR_AUTO_MAP = "sigmoid"
PAIR_SIGMA_FACTORS = (0.25, 0.5, 1.0, 1.5)
#: The preference of ``tuning_rule="auto"`` under the pair schemes' tuning
#: (:func:`~wsvmgui.ladder.search.search_ladders`' ``one_se``): the widest kernel within
#: :data:`PAIR_AUTO_SE_MULTIPLE` standard errors of each pair's smallest EGKL.  Chosen by
#: ``benchmarks/multiclass_one_se_study.py`` (docs/notes/multiclass_accuracy.md, section 6):
#: half a standard error lowered L1 or log loss on 9 of 11 rows of seeds 0-4 and 10 of 11
#: of seeds 5-9, within 2 % elsewhere but on penguins' splits 0-4 (+29 %); one standard
#: error raised zeng_ex4 by 4.5 % and penguins by 3.6 % on the fresh seeds.
PAIR_AUTO_ONE_SE = "widest"
PAIR_AUTO_SE_MULTIPLE = 0.5
#: ... up to this many rows of all classes (the papers' sizes, 100-1000, and the real
#: sets); at n = 2000 the widest cell within half a standard error was worse on zeng_ex4
#: (1.07x the minimum's L1, 2 seeds) though better on wu2010_ex1, wu2010_ex4, zeng_ex1 and
#: zeng_ex2; above it ``large_n_auto`` says what the two "auto"s do (by default the widest
#: cell too, with the spline map where the guarded choice takes it: that keeps zeng_ex4).
PAIR_AUTO_ONE_SE_MAX_ROWS = 1000
#: Values of the ``large_n_auto`` parameter: what the two "auto"s of the pair schemes'
#: tuning do above :data:`PAIR_AUTO_ONE_SE_MAX_ROWS` rows.  ``"min_sigmoid"``: the
#: smallest EGKL and the sigmoid map (:data:`PAIR_AUTO_MAP`); ``"widest_spline"``: the
#: widest cell within :data:`PAIR_AUTO_SE_MULTIPLE` standard errors (as below the limit)
#: and, of :data:`PAIR_LARGE_MAPS`, the map the guarded cross-validated choice takes
#: (:func:`~wsvmgui.ladder.recalibration.choose_map`: the spline where it beats the
#: sigmoid by more than the guard, above 500 pairs).
LARGE_N_AUTO = ("min_sigmoid", "widest_spline")
#: The maps ``large_n_auto="widest_spline"`` chooses among besides the guarded spline:
#: the sigmoid only.  With isotonic too (``calibration="auto"`` of two classes) one pair of
#: zeng_ex1 took it and the draw's L1 rose 4 % (benchmarks/results/
#: multiclass_large_n_study.md, ``w05_auto`` against ``w05_sigspline``).
PAIR_LARGE_MAPS = ("sigmoid",)
#: Values of the ``pair_estimate`` parameter: the raw estimate each recalibrated pair's
#: map is applied to under the pair schemes' tuning.  ``"full"``: the pair's ladder fitted
#: on all rows; ``"fold_mean"``: the mean of the estimates of the pair's cross-fitting
#: fold fits (the ladders its map was fitted on), kept after the fit.
PAIR_ESTIMATES = ("full", "fold_mean")


def _shared(values: list[float]) -> float:
    """The value every sub-problem shares (NaN where they differ or it is NaN)."""
    first = float(values[0])
    return first if all(float(v) == first for v in values) else float("nan")


class MulticlassWeightedSVMClassifier(SubproblemViews, LadderParams, BaseProbabilityClassifier):
    """K-class probabilities from binary weighted-SVM ladders (divide and conquer).

    Parameters
    ----------
    scheme : {"pairwise", "baseline1", "baseline2", "bp1", "bp2", "ova"}, default="ova"
        See :data:`SCHEME_INFO`.
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    engine : {"path", "auto", "grid"}, default="path"
        Engine of every sub-problem's ladders, tuning and final fits alike (as in
        :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`); with the path the
        pairwise ratios are exact instead of capped at 2M - 1.
    n_weights : int >= 2 or None
        M of every grid ladder (interior weights ``m / M``; for the path only the weights
        the sign-ladder views report); None: ``default_n_weights`` of each sub-problem's
        final-fit size (one grid for tuning and final fits).
    weights : array-like of shape (M - 1,) or None
        Explicit increasing interior weights of every ladder; overrides ``n_weights``.
    final_n_weights : int >= 2 or None
        M of the final grid ladders only: tuning uses ``n_weights``, the final ladders
        this finer grid (a finer final ladder averages more sign changes; see
        benchmarks/results/zeng_reproduction.md).  None: as ``n_weights``.
    lam, sigma : float or None
        Fixed penalty / RBF width for every sub-problem; None tunes it.
    lambdas : array-like or None
        Lambda grid of every sub-problem; None: ``1 / (2 n_s C)`` for the sub-problem's
        rows ``n_s`` in the first fold's training part and C in :data:`PAIR_C_GRID`
        (0.1, 1, 10, 100) for the pair schemes, in 0.1, 0.3, ..., 100 for One-vs-All.
    sigmas : array-like or None
        RBF width grid shared by the sub-problems; None: :data:`PAIR_SIGMA_FACTORS`
        (0.25, 0.5, 1, 1.5) times sigma_M of all rows for the pair schemes, (0.25 .. 1.5)
        sigma_M in steps of 0.25 for One-vs-All.
    degree, coef0, poly_gamma : polynomial kernel ``(poly_gamma x'x' + coef0) ** degree``.
    rule : {"count", "extreme", "interpolate"}
        How a ladder becomes a probability (:mod:`wsvmgui.ladder.rules`).
    calibration : {"auto", "none", "auto_plateau", "sigmoid", "beta", "isotonic", "spline", \
"plateau"}, default="auto"
        Recalibration of every sub-problem's estimate by a monotone map fitted to its
        cross-fitted estimates on the tuning splits, as in
        :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier` (``calibrations_``),
        before coupling or normalising; ``"none"`` is the papers' plain estimate.  The
        default since the multiclass default study
        (benchmarks/results/multiclass_default_study.md; docs/notes/multiclass_accuracy.md).
        Under the pair schemes' tuning (``pair_tuning="folds"``, three or more classes)
        ``"auto"`` is the sigmoid map (:data:`PAIR_AUTO_MAP`): on a pair's few
        cross-fitted rows the cross-validated choice of the map was noisy.  A map's
        name (``"plateau"`` too) maps every sub-problem by that map; ``"auto_plateau"``
        chooses among :data:`~wsvmgui.ladder.recalibration.AUTO_PLATEAU_MAPS` per
        sub-problem (unmeasured on more than two classes; not the binary ``"auto"``'s
        meaning here).
    tuning_score : {"egkl", "brier", "log_loss"}, default="egkl"
        What the tuning search minimises over the cross-validated estimates: the papers'
        EGKL (the log loss with estimates floored at 0.01), the Brier score, or the log
        loss.  With a ``calibration``, ``"brier"`` and ``"log_loss"`` score the estimate
        this estimator returns: each cell's estimates of the tuning rows recalibrated by
        a map cross-validated on those rows (:mod:`wsvmgui.ladder.search`).
    tuning_rule : {"min", "one_se", "auto"}, default="auto"
        ``"min"``: the cell of the smallest score.  ``"one_se"``: the smoothest cell
        (largest lambda, then largest sigma) whose score is within one standard error of
        the smallest (``tuning_.se``).  ``"auto"``: under the pair schemes' tuning
        (``pair_tuning="folds"``, three or more classes, tuned on two or more folds) and
        up to :data:`PAIR_AUTO_ONE_SE_MAX_ROWS` (1000) rows, each pair's search takes the
        widest kernel (largest sigma, then largest lambda) within half a standard error
        (:data:`PAIR_AUTO_SE_MULTIPLE`) of its smallest EGKL; otherwise (One-vs-All, a
        hold-out, two classes, more rows) the smallest score.  The pairs' 3-fold EGKL over the
        coarse grid is flat and noisy, so its minimum lands on narrow kernels by chance
        where the multiclass designs are near-linear.  The baseline schemes' tie pairs
        borrow the cells of the baseline pairs' smallest EGKL whatever the rule.  The
        default since the seventh sitting: on the benchmark of record (seeds 0-4, the
        papers' n) it lowered L1 or log loss on 9 of 11 rows (iris 0.0979 -> 0.0749,
        wu2010_ex1 0.0975 -> 0.0926) for the same fits; penguins' log loss rose 0.0340
        -> 0.0437 on splits 0-4 and fell by a quarter on splits 5-9, level over the ten
        (docs/notes/multiclass_accuracy.md, section 6).
    cv : "auto", int, float, splitter or iterable, default="auto"
        Tuning splits, stratified on all K classes; every sub-problem is tuned on its own
        rows of them.  ``"auto"``: for the pair schemes, :data:`PAIR_TUNING_FOLDS` (3)
        stratified folds over the coarse default grid (16 cells; a class with fewer
        points than folds: as for One-vs-All); the recalibration maps cross-fit on the
        same folds.  On the multiclass designs this is more accurate than a hold-out
        over the full grid for 1.1-1.4x its CPU (docs/notes/multiclass_accuracy.md,
        section 3).  For One-vs-All a stratified 30% hold-out at every size: its K
        sub-problems each have every row, and 3 folds took 1.9-5.5x the CPU.
    screen : {"auto"} or None, default="auto"
        Screened tuning, as in :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier`;
        it applies where every sub-problem has at least 1000 rows in every fold's
        training part (One-vs-All, whose sub-problems all have every row: 300, with one
        class-stratified subsample shared by the K sub-problems; see
        :mod:`wsvmgui.multiclass.ova`).
    refit, n_jobs, random_state
        As in :class:`~wsvmgui.estimators.binary.WeightedSVMClassifier` (every
        sub-problem refitted keeping its tuned C); ``n_jobs`` threads run one task per
        (sigma, sub-problem) while tuning and one per sub-problem for the final fits.
    ties : {"table", "pairs", "key"}, default="table"
        Baseline schemes with K >= 3.  The pairs against the baseline cannot order two
        classes that both beat the baseline (each pair extrapolates at the other class's
        points, and saturated pairs tie exactly).  With ``"table"`` and ``"pairs"`` the
        pairwise ladders among such classes are fitted: the pairs among classes in
        contest at some training point, each once at the geometric mean of the C and
        sigma of its two classes' baseline pairs at their smallest EGKL (``tie_pairs_``;
        ``fit_info_["tie_pairs"]`` and ``["tie_points"]`` count them and the training
        points that needed them).  ``"table"``: at every point, the fitted pairs (against
        the baseline, unsaturated, and the tie pairs) fill a pairwise table whose other
        pairs are rebuilt from the baseline pairs (Zeng eq. 11), coupled by ``coupling``
        (:meth:`_full_table`); on the multiclass designs at the papers' n this lowered L1
        on every baseline-scheme design (zeng_ex3 0.171 -> 0.147, 5 seeds;
        docs/notes/multiclass_accuracy.md, section 5) for no extra fit.  ``"pairs"``: the
        classes in contest share their probability by coupling the tie pairs among just
        them (:func:`~wsvmgui.multiclass.coupling.resolve_ties`), the baseline-coupled
        probabilities elsewhere (the default of the fifth sitting).  A remaining tie for
        the top, and every tie with ``"key"`` (the behaviour before the tie pairs), goes
        to the decision-value key.  On digits the tie pairs lift B1 from 0.86 to 0.957
        accuracy (One-vs-All 0.95; benchmarks/results/baseline_collapse.md).
    coupling : {"least_squares", "baseline"}, default="least_squares"
        How P-SVM (``scheme="pairwise"``) couples its table
        (:mod:`wsvmgui.multiclass.coupling`): Wu, Lin & Weng's least squares (libsvm's),
        in which every pair weighs in at every point, or the papers' ratios to a
        per-point baseline class.  Least squares was closer to the truth on 6 of 6 draws
        of wu2010_ex1 / ex2 (L1 2-3% lower; docs/notes/multiclass_accuracy.md).  The
        baseline schemes' tables with ``ties="table"`` are coupled by it too; their rebuilt
        tables without tie pairs are consistent, so they do not depend on it.
    pair_tuning : {"folds", "holdout"}, default="folds"
        The defaults of the pair schemes' tuning on three or more classes.  ``"folds"``:
        ``cv="auto"`` is :data:`PAIR_TUNING_FOLDS` (3) stratified folds and the default
        grid the coarse C in :data:`PAIR_C_GRID` x sigma in :data:`PAIR_SIGMA_FACTORS`
        sigma_M (16 cells); ``"holdout"``: a 30% hold-out over 7 C x 6 sigma, as
        One-vs-All (the default before issue 23's fifth sitting).  An explicit ``cv``,
        ``lambdas`` or ``sigmas`` overrides either.
    pair_estimate : {"full", "fold_mean"}, default="full"
        The raw estimate each pair's recalibration map is applied to under the pair
        schemes' tuning (``pair_tuning="folds"``, three or more classes) with a
        ``calibration`` (:data:`PAIR_ESTIMATES`).  ``"full"``: the pair's final ladder on
        all rows.  ``"fold_mean"``: the mean of the raw estimates of the pair's
        cross-fitting fold fits -- the k ladders, each on the other folds' rows, whose
        out-of-fold estimates the map was fitted to -- kept after the fit
        (``fold_subproblems_``) and evaluated at prediction (k times the pairs' prediction
        work; the views still show the final ladders).  The baseline schemes' tie pairs,
        which are not recalibrated, keep their final ladders.  Elsewhere (One-vs-All, a
        hold-out, ``calibration="none"``) it has no effect; ``fit_info_["pair_estimate"]``
        names the value that applied.
    large_n_auto : {"min_sigmoid", "widest_spline"}, default="widest_spline"
        What ``tuning_rule="auto"`` and ``calibration="auto"`` do under the pair schemes'
        tuning when the final fits have more than :data:`PAIR_AUTO_ONE_SE_MAX_ROWS`
        (1000) rows (:data:`LARGE_N_AUTO`).  ``"min_sigmoid"``: each pair's smallest EGKL
        and the sigmoid map, as the limit says.  ``"widest_spline"``: the widest kernel
        within half a standard error, as below the limit, and the sigmoid map or, where
        its cross-validated log loss beats the sigmoid's by more than the guard (above
        500 pairs), the monotone spline (:data:`PAIR_LARGE_MAPS`): on a curved design
        (zeng_ex4) the pairs' distortion is not a sigmoid and the spline sees it, where
        the widest cell alone blurred the boundaries.  On the benchmark of record at
        n = 2000 (seeds 0-4) it lowered L1 on 6 of the 7 multiclass designs by 3.5-7 %
        (zeng_ex4 0.1268 -> 0.1180, 5 of 5 draws; wu2010_ex2 level, 1.006) and on
        fresh seeds 5-9 by 1.4-11.5 % on all 7 for the same fits and CPU
        (benchmarks/results/multiclass_large_n_study.md;
        docs/notes/multiclass_accuracy.md, section 8); the default since the eighth
        sitting.
        With more than 1000 rows under the pair schemes' tuning
        ``fit_info_["large_n_auto"]`` names the value that applied.
    ova_normalise : {"sum", "simplex"}
        How the One-vs-All values are made to sum to one (raw values stay available in
        :meth:`report` and :meth:`raw_ova`).
    solver : {"libsvm", "qp"}
    qp_solver : str

    Attributes
    ----------
    classes_ : ndarray, shape (K,)
    lambda_, sigma_, C_ : float
        The penalty, RBF width and ``1 / (2 n_s lambda_s)`` shared by every
        sub-problem's final fit, NaN where the sub-problems differ (each is tuned on its
        own; its values are in ``subproblems_.fitted`` and :meth:`fitted_summary`).
    tuning_ : dict of str to TuningResult, or None
        Every sub-problem's EGKL table by its name; None when nothing was tuned.
    baseline_ : label or None
        The common baseline class of the baseline schemes.
    subproblems_ : SubproblemSet
        The fitted sub-problems (``subproblems_.fitted``) and their support points.
    calibrations_ : list of MonotoneMap, or None
        Every sub-problem's recalibration map (None with ``calibration="none"``).
    tie_pairs_ : SubproblemSet or None
        The pairs fitted among classes in contest (``ties="table"`` or ``"pairs"``; None
        otherwise).
    fold_subproblems_ : SubproblemSet or None
        With ``pair_estimate="fold_mean"`` where it applies: every recalibrated
        sub-problem's cross-fitting fold fits, in sub-problem order (``fold_owner_``,
        shape (F,), gives each one's sub-problem index); None otherwise.
    fit_info_ : dict
        Fits made, sub-problem count, per-sub-problem seconds, wall time, how the
        kernel was held (``"kernel"``), where the fits ran (``"backend"``) and, per
        sub-problem, the axes on which its tuned cell sits at the grid's edge
        (``"tuning_edge"``; ``"tuning_min_edge"``: those of its cell of the smallest
        score, which differ where ``tuning_rule="auto"`` took the widest kernel near it).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **LADDER_SCHEME_CONSTRAINTS,
        **SOLVER_CONSTRAINTS,
        **SCREEN_CONSTRAINTS,
        "scheme": [StrOptions(set(SCHEMES))],
        "final_n_weights": [Interval(Integral, 2, None, closed="left"), None],
        "ova_normalise": [StrOptions(set(OVA_NORMALISATIONS))],
        "ties": [StrOptions(set(TIES))],
        "coupling": [StrOptions(set(coupling.COUPLINGS))],
        "pair_tuning": [StrOptions(set(PAIR_TUNINGS))],
        "calibration": [StrOptions(set(CALIBRATIONS))],
        "tuning_score": [StrOptions({"egkl", "brier", "log_loss"})],
        "tuning_rule": [StrOptions({"auto", "min", "one_se"})],
        "large_n_auto": [StrOptions(set(LARGE_N_AUTO))],
        "pair_estimate": [StrOptions(set(PAIR_ESTIMATES))],
    }

    _auto_holdout = True

    @property
    def _pair_tuning(self) -> bool:
        """Whether the pair schemes' tuning applies: ``pair_tuning="folds"`` and a pair
        scheme on three or more classes (on two, every scheme is the binary ladder,
        tuned as it is)."""
        classes = getattr(self, "classes_", None)
        return (
            self.pair_tuning == "folds"
            and self.scheme != "ova"
            and (classes is None or classes.size >= 3)
        )

    def _large_n(self, plan: Any) -> bool:
        """Whether ``large_n_auto`` acts: the pair schemes' tuning and final fits of more
        than :data:`PAIR_AUTO_ONE_SE_MAX_ROWS` rows."""
        return self._pair_tuning and plan.fit_rows.size > PAIR_AUTO_ONE_SE_MAX_ROWS

    def _large_widest(self, plan: Any) -> bool:
        """Whether ``large_n_auto="widest_spline"`` applies (:meth:`_large_n`)."""
        return self.large_n_auto == "widest_spline" and self._large_n(plan)

    @property
    def _fold_mean(self) -> bool:
        """Whether ``pair_estimate="fold_mean"`` applies: asked for, under the pair
        schemes' tuning (:attr:`_pair_tuning`) and with a ``calibration``."""
        return (
            self.pair_estimate == "fold_mean" and self._pair_tuning and self.calibration != "none"
        )

    @property
    def _map_name(self) -> str:
        """The map every sub-problem is recalibrated by: ``calibration``, except that
        ``"auto"`` is :data:`PAIR_AUTO_MAP` under the pair schemes' tuning
        (``pair_tuning="folds"``, three or more classes)."""
        auto = self.calibration == "auto"
        return PAIR_AUTO_MAP if auto and self._pair_tuning else self.calibration

    def _pair_map(self, plan: Any, p: np.ndarray, y: np.ndarray) -> MonotoneMap:
        """A sub-problem's map fitted to its cross-fitted estimates ``p`` (m,) and 0/1
        labels ``y`` (m,): :attr:`_map_name`, or with ``calibration="auto"`` where
        ``large_n_auto="widest_spline"`` applies, the guarded choice among
        :data:`PAIR_LARGE_MAPS` and the spline."""
        seed = seed_of(self.random_state)
        if self.calibration == "auto" and self._large_widest(plan):
            return choose_map(p, y, maps=PAIR_LARGE_MAPS, seed=seed)
        return fit_calibration(self._map_name, p, y, seed)

    _auto_se_multiple = PAIR_AUTO_SE_MULTIPLE

    def _auto_one_se(self, plan: Any) -> str | bool:
        """``tuning_rule="auto"``: :data:`PAIR_AUTO_ONE_SE` (within
        :data:`PAIR_AUTO_SE_MULTIPLE` standard errors) for the pair schemes' searches
        on two or more folds (``pair_tuning="folds"``, three or more classes) where the
        final fits have at most :data:`PAIR_AUTO_ONE_SE_MAX_ROWS` rows or
        ``large_n_auto="widest_spline"`` (the default), else the smallest score
        (One-vs-All, a hold-out and, under ``"min_sigmoid"``, larger data keep the
        minimum)."""
        folds = plan.folds or []
        widest = not self._large_n(plan) or self._large_widest(plan)
        return PAIR_AUTO_ONE_SE if self._pair_tuning and len(folds) >= 2 and widest else False

    @property
    def _auto_folds(self) -> int | None:  # type: ignore[override]
        """``cv="auto"``: :data:`PAIR_TUNING_FOLDS` folds for the pair schemes, the 30%
        hold-out for One-vs-All (its K sub-problems on every row cost too much)."""
        return PAIR_TUNING_FOLDS if self._pair_tuning else None

    @property
    def _default_c_grid(self) -> tuple[float, ...]:  # type: ignore[override]
        return PAIR_C_GRID if self._pair_tuning else DEFAULT_C_GRID

    @property
    def _default_sigma_factors(self) -> tuple[float, ...]:  # type: ignore[override]
        return PAIR_SIGMA_FACTORS if self._pair_tuning else DEFAULT_SIGMA_FACTORS

    def __init__(
        self,
        *,
        scheme: str = "ova",
        kernel: str = "rbf",
        engine: str = DEFAULT_ENGINE,
        n_weights: int | None = None,
        weights=None,
        final_n_weights: int | None = None,
        lam: float | None = None,
        sigma: float | None = None,
        lambdas=None,
        sigmas=None,
        degree: int = 3,
        coef0: float = 1.0,
        poly_gamma: float = 1.0,
        rule: str = "count",
        calibration: str = "auto",
        tuning_score: str = "egkl",
        tuning_rule: str = "auto",
        cv="auto",
        screen: str | None = "auto",
        refit: bool = True,
        ova_normalise: str = "sum",
        ties: str = "table",
        coupling: str = "least_squares",
        pair_tuning: str = "folds",
        large_n_auto: str = "widest_spline",
        pair_estimate: str = "full",
        solver: str = "libsvm",
        qp_solver: str = "quadprog",
        n_jobs: int | None = None,
        random_state=0,
    ) -> None:
        self.scheme = scheme
        self.kernel = kernel
        self.engine = engine
        self.n_weights = n_weights
        self.weights = weights
        self.final_n_weights = final_n_weights
        self.lam = lam
        self.sigma = sigma
        self.lambdas = lambdas
        self.sigmas = sigmas
        self.degree = degree
        self.coef0 = coef0
        self.poly_gamma = poly_gamma
        self.rule = rule
        self.calibration = calibration
        self.tuning_score = tuning_score
        self.tuning_rule = tuning_rule
        self.cv = cv
        self.screen = screen
        self.refit = refit
        self.ova_normalise = ova_normalise
        self.ties = ties
        self.coupling = coupling
        self.pair_tuning = pair_tuning
        self.large_n_auto = large_n_auto
        self.pair_estimate = pair_estimate
        self.solver = solver
        self.qp_solver = qp_solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _check_params(self) -> None:
        self._check_ladder_params()

    def _n_weights_fitted(self) -> Any:
        sizes = {int(f.weights.size) + 1 for f in self.subproblems_.fitted}
        return sizes.pop() if len(sizes) == 1 else None

    def _summary_extra(self) -> dict[str, Any]:
        return {
            "subproblems": [
                {
                    "name": f.spec.name,
                    "lambda": f.lam,
                    "sigma": f.sigma,
                    "C": 1.0 / (2.0 * f.n_train * f.lam),
                    "n_weights": int(f.weights.size) + 1,
                    "n_train": f.n_train,
                }
                for f in self.subproblems_.fitted
            ]
        }

    # ----------------------------------------------------------------------------- fit
    def _specs(self, K: int) -> list[SubProblem]:
        c = self.classes_
        if self.scheme == "ova":
            return [rest_problem(j, c) for j in range(K)]
        if self.scheme == "pairwise":
            return [pair_problem(a, b, c) for a in range(K) for b in range(a + 1, K)]
        k = self._baseline_index()
        return [pair_problem(j, k, c) for j in range(K) if j != k]

    def _baseline_index(self) -> int:
        """Index of the common baseline class of the baseline schemes."""
        assert self.baseline_index_ is not None, "not a baseline scheme"
        return int(self.baseline_index_)

    def _fit(
        self,
        X: np.ndarray,
        codes: np.ndarray,
        progress: ProgressCallback | None,
        should_cancel: CancelCheck | None,
        sample_weight: np.ndarray | None = None,
    ) -> dict[str, Any]:
        n, K = codes.size, self.classes_.size
        method = _BASELINE_METHOD.get(self.scheme)
        keep = slice(None) if sample_weight is None else sample_weight > 0
        sw = None if sample_weight is None else sample_weight[keep]
        self.baseline_index_ = (
            None if method is None else choose_baseline(method, X[keep], codes[keep], K, sw)
        )
        self.baseline_ = None if method is None else self.classes_[self.baseline_index_]
        specs = self._specs(K)
        problems = [as_ladder_problem(s, codes, sample_weight) for s in specs]
        plan = self._plan(X, codes, sample_weight)
        # One weight grid per sub-problem, sized by its final fit, for tuning and final
        # fits alike (unless final_n_weights asks for a finer final grid).
        w_tune = [self._weight_grid(p.size(plan.fit_rows, n, sample_weight)) for p in problems]
        w_fit = (
            w_tune
            if self.final_n_weights is None
            else [weight_grid(self.final_n_weights)] * len(specs)
        )
        tracker = ProgressTracker(sum(w.size for w in w_fit), progress, should_cancel)
        tunings: list[TuningResult | None] = [None] * len(specs)
        if plan.tuned:
            strata = codes if self.scheme == "ova" else None
            found, chosen = self._search(X, problems, plan, w_tune, tracker, strata=strata)
            tunings = list(found)
        else:
            chosen = self._untuned(problems, plan, n)
        fits = fit_ladders(
            X,
            problems,
            plan.fit_rows,
            plan.kernel,
            chosen,
            w_fit,
            engine=self.engine,
            solver=self.solver,
            qp_solver=self.qp_solver,
            n_jobs=n_threads(self.n_jobs),
            tracker=tracker,
            sample_weight=sample_weight,
        )
        fitted = [
            fitted_subproblem(s, f, w, t)
            for s, f, w, t in zip(specs, fits, w_fit, tunings, strict=True)
        ]
        self.subproblems_ = SubproblemSet(fitted, X)
        self.lambda_ = _shared([f.lam for f in fitted])
        self.sigma_ = _shared([f.sigma for f in fitted])
        self.C_ = _shared([1.0 / (2.0 * f.n_train * f.lam) for f in fitted])
        self.tuning_ = (
            None if plan.folds is None else {s.name: t for s, t in zip(specs, tunings, strict=True)}
        )
        self.calibrations_: list[MonotoneMap] | None = None
        folds = self._calibration_folds(plan, codes, sample_weight)
        self.fold_subproblems_: SubproblemSet | None = None
        self.fold_owner_: np.ndarray | None = None
        fold_mean = folds is not None and self._fold_mean
        kept: list[FittedSubProblem] = []
        owner: list[int] = []
        if folds is not None:
            self.calibrations_ = []
            for i, (spec, prob, f) in enumerate(zip(specs, problems, fitted, strict=True)):
                fold_fits: list[Any] | None = [] if fold_mean else None
                p_cf, y_cf = cross_fitted(
                    X, prob, folds, f.kernel, f.lam, f.n_train, f.weights, rule=self.rule,
                    engine=self.engine, solver=self.solver, n_jobs=n_threads(self.n_jobs),
                    tracker=tracker, sample_weight=sample_weight, fits_out=fold_fits,
                )  # fmt: skip
                self.calibrations_.append(self._pair_map(plan, p_cf, y_cf))
                for ff in fold_fits or []:
                    kept.append(fitted_subproblem(spec, ff, f.weights, None))
                    owner.append(i)
        self.tie_pairs_: SubproblemSet | None = None
        extra: dict[str, Any] = {}
        if method is not None and K >= 3 and self.ties != "key":
            # the classes in contest at the training rows: by the final ladders either way
            extra = self._fit_tie_pairs(X, codes, plan, tracker)
        if fold_mean:
            self.fold_subproblems_ = SubproblemSet(kept, X)
            self.fold_owner_ = np.array(owner, dtype=int)
        if self.calibrations_ is not None:
            extra["calibration"] = ", ".join(sorted({g.name for g in self.calibrations_}))
        if self._large_n(plan):
            extra["large_n_auto"] = self.large_n_auto
        if self._pair_tuning and self.calibrations_ is not None:
            extra["pair_estimate"] = "fold_mean" if fold_mean else "full"
        tuned = [(s, t) for s, t in zip(specs, tunings, strict=True) if t]
        return {
            **extra,
            "scheme": self.scheme,
            "n_subproblems": len(fitted),
            "n_fits": tracker.done,
            "subproblem_seconds": {f.spec.name: f.seconds for f in fitted},
            "n_train": plan.size(plan.fit_rows),
            "n_jobs": n_threads(self.n_jobs),
            "kernel": fits[0].storage,
            "backend": fits[0].backend,
            "tuning_edge": {s.name: dict(t.edge) for s, t in tuned},
            "tuning_min_edge": {s.name: t.min_edge for s, t in tuned},
            **engine_info(self.engine, [f.ladder for f in fitted], tunings),
        }

    def _calibration_folds(
        self, plan: Any, codes: np.ndarray, sample_weight: np.ndarray | None
    ) -> list | None:
        """The folds to cross-fit the recalibration maps on; None without a calibration,
        or (with a :class:`~wsvmgui.ladder.splits.TuningWarning`) when a class has too
        few points to be split, as tuning is then skipped too."""
        if self.calibration == "none":
            return None
        try:
            return calibration_folds(plan.folds, codes, self.random_state, sample_weight)
        except InputError as exc:
            warnings.warn(
                f"no recalibration ({exc}); the sub-problems' plain estimates are used",
                TuningWarning,
                stacklevel=4,
            )
            return None

    @property
    def _screen_min_rows(self) -> int:  # type: ignore[override]
        """Training rows per fold from which tuning screens: One-vs-All's from smaller
        folds (:data:`~wsvmgui.multiclass.ova.OVA_SCREEN_MIN_ROWS`); read by the cost plan."""
        return OVA_SCREEN_MIN_ROWS if self.scheme == "ova" else Screening.min_rows

    def _fit_tie_pairs(
        self, X: np.ndarray, codes: np.ndarray, plan: Any, tracker: ProgressTracker
    ) -> dict[str, int]:
        """Fit the pairs among the classes in contest (:meth:`_contest`) at some training
        point.

        Returns the ``fit_info_`` entries ``tie_pairs`` (pairs fitted) and
        ``tie_points`` (training points with two or more classes in contest).
        """
        n = codes.size
        tied = self._contest(self._estimates(X))
        rows = np.flatnonzero(tied.sum(axis=1) > 1)
        pairs = sorted({(a, b) for t in np.unique(tied[rows], axis=0) for a, b in _pairs_of(t)})
        if not pairs:
            return {"tie_pairs": 0, "tie_points": 0}
        specs = [pair_problem(a, b, self.classes_) for a, b in pairs]
        sw = plan.sample_weight
        problems = [as_ladder_problem(s, codes, sw) for s in specs]
        w = [self._weight_grid(p.size(plan.fit_rows, n, sw)) for p in problems]
        tracker.add_total(sum(x.size for x in w))
        if plan.tuned:  # untuned: the cells tuned for the two classes' baseline pairs
            chosen = [
                self._borrowed_cell(a, b, p.size(plan.fit_rows, n, sw))
                for (a, b), p in zip(pairs, problems, strict=True)
            ]
        else:
            chosen = self._untuned(problems, plan, n)
        fits = fit_ladders(
            X, problems, plan.fit_rows, plan.kernel, chosen, w, engine=self.engine,
            solver=self.solver, qp_solver=self.qp_solver, n_jobs=n_threads(self.n_jobs),
            tracker=tracker, sample_weight=sw,
        )  # fmt: skip
        self.tie_pairs_ = SubproblemSet(
            [fitted_subproblem(s, f, x, None) for s, f, x in zip(specs, fits, w, strict=True)], X
        )
        return {"tie_pairs": len(pairs), "tie_points": int(rows.size)}

    def _borrowed_cell(self, a: int, b: int, n_rows: float) -> tuple[float, float]:
        """(lambda, sigma) of the tie pair (a, b), untuned: the geometric means of the
        C and sigma of the two classes' pairs against the baseline (a baseline class's
        own: its pair's) at their smallest tuning score (:func:`_smallest_score_cell`),
        lambda for the pair's final rows."""
        k = self._baseline_index()
        tuned = {
            (f.spec.positive if f.spec.positive != k else f.spec.negative[0]): f
            for f in self.subproblems_.fitted
        }
        cells = [_smallest_score_cell(tuned[c]) for c in (a, b) if c in tuned]
        C = float(np.exp(np.mean([np.log(c) for c, _ in cells])))
        sigma = float(np.exp(np.mean([np.log(s) for _, s in cells])))
        return 1.0 / (2.0 * n_rows * C), sigma

    # ------------------------------------------------------------------------- predict
    def _raw_estimates(self, X: np.ndarray) -> list[LadderEstimate]:
        """Every sub-problem's raw estimate at ``X`` (m, p): its final ladder's, or with
        ``pair_estimate="fold_mean"`` where it applied (``fold_subproblems_``), the mean
        of its fold fits' estimates (p, lo and hi averaged; monotone where every fold
        fit's is)."""
        folds = getattr(self, "fold_subproblems_", None)
        if folds is None:
            return self.subproblems_.estimates(X, self.rule)
        owner = self.fold_owner_
        assert owner is not None
        n_sub = len(self.subproblems_.fitted)
        # the final ladders are evaluated only if some sub-problem has no fold fit
        full = (
            self.subproblems_.estimates(X, self.rule)
            if np.setdiff1d(np.arange(n_sub), owner).size
            else None
        )
        per_fold = folds.estimates(X, self.rule)
        out = []
        for i in range(n_sub):
            mine = [per_fold[j] for j in np.flatnonzero(owner == i)]
            if not mine:
                assert full is not None
                out.append(full[i])
                continue
            out.append(
                LadderEstimate(
                    np.mean([m.p for m in mine], axis=0),
                    np.mean([m.lo for m in mine], axis=0),
                    np.mean([m.hi for m in mine], axis=0),
                    np.logical_and.reduce([m.monotone for m in mine]),
                )
            )
        return out

    def _estimates(self, X: np.ndarray) -> list[LadderEstimate]:
        ests = self._raw_estimates(X)
        maps = getattr(self, "calibrations_", None)
        if maps is None:
            return ests
        return [
            LadderEstimate(g(e.p), g(e.lo), g(e.hi), e.monotone)
            for g, e in zip(maps, ests, strict=True)
        ]

    def _table(self, ests: list[LadderEstimate], n: int) -> np.ndarray:
        """Pairwise table (n, K, K) of the pair schemes (pairs not fitted stay 1/2).

        Values are kept inside ``[Q_EPS, 1 - Q_EPS]`` (:mod:`wsvmgui.multiclass.coupling`):
        a path's estimate may come arbitrarily close to 0 or 1.
        """
        Q = coupling.empty_table(n, self.classes_.size)
        for f, est in zip(self.subproblems_.fitted, ests, strict=True):
            coupling.set_pair(Q, f.spec.positive, f.spec.negative[0], coupling.clip_pair(est.p))
        return Q

    def _baseline_key(self, X: np.ndarray) -> np.ndarray:
        """Tie-break key of the baseline schemes at ``X`` (m, p); shape (m, K).

        Column j is the decision value at pi = 1/2 (the weight of the grid nearest it) of
        the pair j against the baseline; the baseline's own column is minus the largest.
        """
        k = self._baseline_index()
        key = np.zeros((X.shape[0], self.classes_.size))
        for f, d in zip(self.subproblems_.fitted, self.subproblems_.decisions(X), strict=True):
            key[:, f.spec.positive if f.spec.positive != k else f.spec.negative[0]] = d[
                :, int(np.argmin(np.abs(f.weights - 0.5)))
            ] * (1.0 if f.spec.positive != k else -1.0)
        others = np.delete(key, k, axis=1)
        key[:, k] = -others.max(axis=1)
        return key

    def _combine(self, ests: list[LadderEstimate], X: np.ndarray) -> dict[str, np.ndarray]:
        """Probabilities (and the pairwise table or raw One-vs-All values) from estimates.

        Baseline schemes: with three or more classes the pairs against the baseline are
        saturated at the tuning's EGKL floor (:func:`~wsvmgui.multiclass.coupling.saturate`;
        two classes have no third class to extrapolate to).  With tie pairs fitted,
        ``ties="table"`` couples the full table of :meth:`_full_table` by ``coupling``,
        and ``ties="pairs"`` lets the classes in contest (:meth:`_contest`) share their
        probability by the tie pairs (:meth:`_share_ties`).  Where the largest
        probabilities still tie (pairwise ratios at the grid's cap or saturated, or equal),
        :func:`~wsvmgui.multiclass.coupling.break_ties` gives the point to the tied class
        whose pair against the baseline has the largest decision value at pi = 1/2,
        instead of to the first in class order.
        """
        n, K = ests[0].p.size, self.classes_.size
        if self.scheme == "ova":
            raw = np.column_stack([e.p for e in ests])
            m_max = max(f.weights.size + 1 for f in self.subproblems_.fitted)
            proba = normalise(raw, self.ova_normalise, floor=1.0 / (2.0 * m_max * K))
            return {"proba": proba, "raw": raw}
        Q = self._table(ests, n)
        if self.scheme == "pairwise":
            return {"proba": coupling.COUPLINGS[self.coupling](Q), "table": Q}
        k = self._baseline_index()
        q_base = self._baseline_pairs(Q)
        table = coupling.rebuild_table(q_base, k)
        proba = coupling.couple_baseline(q_base, k)
        if getattr(self, "tie_pairs_", None) is not None:
            if self.ties == "table":
                table = self._full_table(Q, table, X)
                proba = coupling.COUPLINGS[self.coupling](table)
            else:
                contest = self._contest(ests)
                rows = np.flatnonzero(contest.sum(axis=1) > 1)
                proba[rows] = self._share_ties(proba[rows], contest[rows], X[rows])
        tied = coupling.tied_rows(proba)
        if tied.size:
            proba[tied] = coupling.break_ties(proba[tied], self._baseline_key(X[tied]))
        if self.scheme in ("baseline1", "baseline2"):
            return {"proba": proba}
        # BP: without tie pairs the rebuilt table is consistent, so coupling it gives B's
        # probabilities.
        return {"proba": proba, "table": table}

    def _full_table(self, Q: np.ndarray, rebuilt: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The pairwise table (m, K, K) the baseline schemes couple with ``ties="table"``.

        Every fitted pair's own estimate (the pairs against the baseline from the table
        ``Q`` (m, K, K), unsaturated, and the tie pairs at ``X`` (m, p)); the other pairs
        from the ``rebuilt`` table (m, K, K)
        (:func:`~wsvmgui.multiclass.coupling.rebuild_table` of the saturated baseline
        pairs).
        """
        k = self._baseline_index()
        out = rebuilt.copy()
        out[:, k, :] = Q[:, k, :]
        out[:, :, k] = Q[:, :, k]
        for a, b, p in self._tie_pair_estimates(X):
            coupling.set_pair(out, a, b, coupling.clip_pair(p))
        return out

    def _baseline_pairs(self, Q: np.ndarray) -> np.ndarray:
        """``q_{j|(j,k*)}`` (n, K) from a table; saturated at the EGKL floor for K >= 3."""
        q = Q[:, :, self._baseline_index()]
        return q if self.classes_.size == 2 else coupling.saturate(q, EGKL_FLOOR)

    def _contest(self, ests: list[LadderEstimate]) -> np.ndarray:
        """Classes whose order the baseline pairs cannot tell; bool (n, K).

        The classes tied for the largest baseline-coupled probability, and, where two
        or more classes beat the baseline in their pairs, all of them (each pair
        extrapolates at the other class's points).
        """
        q = self._baseline_pairs(self._table(ests, ests[0].p.size))
        k = self._baseline_index()
        tied = coupling.tied_mask(coupling.couple_baseline(q, k))
        beat = q > 0.5
        beat[:, k] = False
        return tied | (beat & (beat.sum(axis=1, keepdims=True) > 1))

    def _tie_pair_estimates(self, X: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
        """Each fitted tie pair's classes ``(a, b)`` and its estimate of
        P(a | a or b, x) at ``X`` (m, p), shape (m,)."""
        assert self.tie_pairs_ is not None
        return [
            (f.spec.positive, f.spec.negative[0], e.p)
            for f, e in zip(
                self.tie_pairs_.fitted, self.tie_pairs_.estimates(X, self.rule), strict=True
            )
        ]

    def _share_ties(self, proba: np.ndarray, tied: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The probabilities ``proba`` (m, K) with each row's ``tied`` classes (m, K)
        sharing their total by the tie pairs' coupling.

        Rows whose tied classes include a pair without a fitted ladder are returned
        unchanged (a top tie among them then goes to the decision-value key).
        """
        K = self.classes_.size
        Q = coupling.empty_table(X.shape[0], K)
        known = np.eye(K, dtype=bool)
        for a, b, p in self._tie_pair_estimates(X):
            coupling.set_pair(Q, a, b, coupling.clip_pair(p))
            known[a, b] = known[b, a] = True
        ok = np.array([known[np.ix_(t, t)].all() for t in tied])
        out = proba.copy()
        if ok.any():
            out[ok] = coupling.resolve_ties(proba[ok], tied[ok], Q[ok])
        return out

    def _proba(self, X: np.ndarray) -> np.ndarray:
        return self._combine(self._estimates(X), X)["proba"]

    def _require(self, schemes: tuple[str, ...], what: str) -> None:
        if self.scheme not in schemes:
            raise InputError(
                f"{what} needs scheme {' or '.join(map(repr, schemes))}, not {self.scheme!r}"
            )

    def predict_vote(self, X) -> np.ndarray:
        """Class with the most pairwise wins (TE2; pairwise, bp1 and bp2 only); shape (n,)."""
        X = self._check_X(X)
        self._require(VOTING_SCHEMES, "max voting (a full pairwise table)")
        out = self._combine(self._estimates(X), X)
        return self.classes_[coupling.vote_predict(out["table"], out["proba"])]

    def raw_ova(self, X) -> np.ndarray:
        """One-vs-All values before normalisation; shape (n, K) (scheme "ova" only)."""
        X = self._check_X(X)
        self._require(("ova",), "raw One-vs-All values")
        return np.column_stack([e.p for e in self._estimates(X)])

    def pairwise_table(self, X) -> np.ndarray:
        """Full pairwise table ``Q[i, j, k] = q_{j|(j,k)}``; shape (n, K, K) (voting schemes)."""
        X = self._check_X(X)
        self._require(VOTING_SCHEMES, "a full pairwise table")
        return self._combine(self._estimates(X), X)["table"]

    def subproblem_ladders(self, X) -> list[LadderView]:
        """Every sub-problem's weights, signs and bracket at ``X`` (n, p), for drawing."""
        X = self._check_X(X)
        decisions = self.subproblems_.decisions(X)
        raw = self.subproblems_.estimates(X, self.rule)  # brackets on the signs' pi axis
        maps = getattr(self, "calibrations_", None) or [None] * len(raw)
        return [
            LadderView(f.spec.name, f.weights, d > 0, e.lo, e.hi, None if g is None else g(e.p), g)
            for f, d, e, g in zip(self.subproblems_.fitted, decisions, raw, maps, strict=True)
        ]

    def subproblem_decisions(self, X) -> list[np.ndarray]:
        """Decision values of every sub-problem's ladder; arrays of shape (n, M_s - 1)."""
        X = self._check_X(X)  # NotFittedError before subproblems_ is read
        return self.subproblems_.decisions(X)

    def _report(self, X: np.ndarray) -> ProbabilityReport:
        """Probabilities, labels and every sub-problem's bracket.

        Extra columns: ``lo_<name>`` and ``hi_<name>`` for each sub-problem (``name`` as
        in :class:`~wsvmgui.estimators.views.LadderView`), ``raw_<class>`` for
        One-vs-All, ``vote_label`` for the schemes with a full pairwise table.
        """
        ests = self._estimates(X)
        out = self._combine(ests, X)
        extra: dict[str, np.ndarray] = {}
        if "table" in out:
            extra["vote_label"] = self.classes_[coupling.vote_predict(out["table"], out["proba"])]
        if "raw" in out:
            for k, c in enumerate(self.classes_):
                extra[f"raw_{c}"] = out["raw"][:, k]
        for f, e in zip(self.subproblems_.fitted, ests, strict=True):
            extra[f"lo_{f.spec.name}"] = e.lo
            extra[f"hi_{f.spec.name}"] = e.hi
        return ProbabilityReport.from_proba(self.classes_, out["proba"], extra)


def _smallest_score_cell(f: Any) -> tuple[float, float]:
    """(C, sigma) of the fitted sub-problem ``f`` at its tuning table's smallest score.

    Where a one-standard-error rule chose another cell (``tuning_rule="auto"`` or
    ``"one_se"``), C is the final fit's ``1 / (2 n lambda)`` moved by the ratio of the
    two cells' lambdas (both on the same first fold's rows); untuned: the final fit's.
    The baseline schemes' tie pairs borrow these cells: they are not recalibrated, and
    the ladder's own estimate needs the minimum's flexible fits -- at the widest one-SE
    cells (often C = 1) the tie pairs raised L1 by 11-14 % on wu2010_ex4, zeng_ex1,
    zeng_ex2 and zeng_ex4 (docs/notes/multiclass_accuracy.md, section 6).
    """
    c_final = 1.0 / (2.0 * f.n_train * f.lam)
    t = f.tuning
    if t is None:
        return c_final, float(f.sigma)
    i, j = t.min_cell
    return c_final * float(t.lambdas[t.best[0]] / t.lambdas[i]), float(t.sigmas[j])


def _pairs_of(mask: np.ndarray) -> list[tuple[int, int]]:
    """Every pair (a, b), a < b, of the classes set in ``mask`` (K,)."""
    cls = np.flatnonzero(mask)
    return [(int(a), int(b)) for i, a in enumerate(cls) for b in cls[i + 1 :]]


__all__ = [
    "PAIR_ESTIMATES",
    "SCHEME_INFO",
    "SCHEMES",
    "VOTING_SCHEMES",
    "MulticlassWeightedSVMClassifier",
]
