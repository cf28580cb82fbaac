"""The probes of each kind of work a fit plan holds (see :mod:`wsvmgui.estimators.cost_probe`).

Each probe is ``probe(estimator, X, codes, K, stage, probe)``: it fits a few real units of
``stage``'s kind of work on the data, a representative size, and records them in
``probe`` (:class:`~wsvmgui.estimators.cost_probe.Probe`), which prices them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cost_plan import (
    EVERY_WIDTH,
    HINGE_EVERY_WIDTH,
    WIDTH_CHOSEN_FIRST,
    Stage,
    detached,
    joint_resolution,
)
from .cost_probe import PATH_ROW_EXPONENT, Probe

#: CPU seconds of ladder probes after which no further cell is fitted.
TARGET_CPU = 0.15
#: Largest number of cells a ladder probe fits.
MAX_CELLS = 5
#: Units beyond which a probe's ladder (grid engine) is not fitted to its end.
PROBE_UNITS = 200
#: Units a probe of units of one kind (constrained fits, a learner's) measures.
UNIT_SAMPLE = 8
#: Rows a ladder probe fits at most (a larger stage is priced by the rows' scaling,
#: :data:`~wsvmgui.estimators.cost_probe.ROW_EXPONENT`): the probe of a fit at
#: n = 20,000 must not itself trace a path on 20,000 rows.
PROBE_ROWS = 1000


# ----------------------------------------------------------------------- probe data
def _binary_rows(
    codes: np.ndarray, K: int, rows: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a representative binary problem, and its labels in {0, 1}.

    Two classes: all rows.  More: the two largest classes, or (when the stage's problems
    are larger: One-vs-All) the largest class against the rest; cut to ``rows`` rows,
    stratified, with a fixed seed.
    """
    counts = np.bincount(codes, minlength=K)
    order = np.argsort(-counts, kind="stable")
    if K == 2:
        idx, y = np.arange(codes.size), codes.copy()
    elif rows <= counts[order[0]] + counts[order[1]]:
        idx = np.flatnonzero(np.isin(codes, order[:2]))
        y = (codes[idx] == order[0]).astype(int)
    else:
        idx, y = np.arange(codes.size), (codes == order[0]).astype(int)
    return _cut(idx, y, rows, seed)


def _cut(idx: np.ndarray, y: np.ndarray, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` of ``idx`` drawn at random within each label (every label kept)."""
    if rows >= idx.size:
        return idx, y
    rng = np.random.default_rng(seed)
    keep = []
    for label in np.unique(y):
        mine = np.flatnonzero(y == label)
        m = max(1, int(round(rows * mine.size / y.size)))
        keep.append(rng.choice(mine, min(m, mine.size), replace=False))
    chosen = np.sort(np.concatenate(keep))
    return idx[chosen], y[chosen]


def _grids(
    estimator: Any, X: np.ndarray, y: np.ndarray, c_grid: tuple[float, ...]
) -> tuple[list[float], list[float]]:
    """The estimator's lambda and sigma grids (sorted; NaN for a kernel without a width)
    for data ``X`` (n, p), ``y`` (n,)."""
    from ..solvers.kernels import DEFAULT_SIGMA_FACTORS, median_between_class_distance

    n = y.size
    lam = getattr(estimator, "lam", None)
    if lam is not None:
        lams = [float(lam)]
    elif getattr(estimator, "lambdas", None) is not None:
        lams = sorted(float(v) for v in np.ravel(estimator.lambdas))
    else:
        lams = sorted(1.0 / (2.0 * n * c) for c in c_grid)
    if estimator.kernel != "rbf":
        sigmas = [float("nan")]
    elif estimator.sigma is not None:
        sigmas = [float(estimator.sigma)]
    elif estimator.sigmas is not None:
        sigmas = sorted(float(v) for v in np.ravel(estimator.sigmas))
    else:
        scale = median_between_class_distance(X, y, max_pairs=200_000)
        factors = getattr(estimator, "_default_sigma_factors", DEFAULT_SIGMA_FACTORS)
        sigmas = [f * scale if scale > 0 else f for f in factors]
    return lams, sigmas


def _cells(estimator: Any, X: np.ndarray, y: np.ndarray, c_grid: tuple[float, ...]) -> list:
    """Up to :data:`MAX_CELLS` (lambda, sigma) of the estimator's grids for ``y.size``
    rows: the middle first, then each grid's ends."""
    lams, sigmas = _grids(estimator, X, y, c_grid)
    lm, sm = lams[len(lams) // 2], sigmas[len(sigmas) // 2]
    cells = [(lm, sm), (lams[0], sm), (lams[-1], sm), (lm, sigmas[0]), (lm, sigmas[-1])]
    unique = list(dict.fromkeys(cells))
    return unique[:MAX_CELLS]


def _kernel_params(estimator: Any) -> dict[str, Any]:
    return {
        "kernel": estimator.kernel,
        "degree": estimator.degree,
        "coef0": estimator.coef0,
        "poly_gamma": estimator.poly_gamma,
    }


def _sigma(value: float) -> float | None:
    return None if not np.isfinite(value) else float(value)


# --------------------------------------------------------------------------- probes
def _probe_ladder(estimator: Any, X, codes, K, stage: Stage, probe: Probe) -> None:
    """Bare ladders, as a search's or a final fit's task fits them: the cell's kernel
    matrix and :func:`~wsvmgui.ladder.engines.fit_binary_ladder` on a stage's rows, then
    its estimate of every :data:`SCORED_EVERY`-th row (a search task's scoring), at up to
    :data:`MAX_CELLS` cells, a task priced at their geometric mean
    (:func:`_geometric_over_tasks`).  Not a whole ``WeightedSVMClassifier.fit``: its checks,
    cost guard, memory look-up and bookkeeping (about 1.5 ms a fit) are paid once per fit,
    not per task, and priced at 2.4 ms the pair schemes' 68-row tuning tasks that take
    1.4 ms; the map a fit's calibration chooses is a stage of its own (:func:`_probe_map`).
    """
    from ..ladder.engines import fit_binary_ladder
    from ..ladder.tuning import DEFAULT_C_GRID, kernel_with_sigma
    from ..ladder.weights import weight_grid

    idx, y = _binary_rows(codes, K, min(stage.rows, PROBE_ROWS))
    probe.rows = idx.size
    if stage.engine in ("path", "auto"):
        probe.exponent = PATH_ROW_EXPONENT
    Xp, yp = X[idx], np.where(y == 1, 1.0, -1.0)
    per_task = max(stage.fits // max(stage.tasks, 1), 1)
    M = min(per_task, PROBE_UNITS) + 1
    weights = weight_grid(M)
    engine = stage.engine if stage.engine in ("path", "auto", "grid") else "path"
    template = estimator._kernel_template()
    rule = getattr(estimator, "rule", "count")
    solver = str(getattr(estimator, "solver", "libsvm"))
    qp_solver = str(getattr(estimator, "qp_solver", "quadprog"))
    probe.factor = _geometric_over_tasks(M - 1)
    for lam, sigma in _cells(
        estimator, Xp, y, getattr(estimator, "_default_c_grid", DEFAULT_C_GRID)
    ):
        kernel = kernel_with_sigma(template, sigma)

        def fit(progress, should_cancel, kernel=kernel, lam=lam) -> None:
            ladder = fit_binary_ladder(
                kernel(Xp), yp, weights, float(lam), engine=engine, progress=progress,
                should_cancel=should_cancel, n_jobs=1, solver=solver, qp_solver=qp_solver,
            )  # fmt: skip
            # a search's task then estimates its fold's tuning rows (a cross-fit its
            # tuning part): half its training rows with 3 folds, cut from the probe's
            ladder.estimate(kernel(Xp[::SCORED_EVERY], Xp), rule)

        probe.events(M - 1).run(fit)
        _, _, cut_short = probe.task_done()
        if cut_short or probe.cpu() >= TARGET_CPU or probe.spent():
            return


def _geometric_over_tasks(units: int):
    """``Probe.factor`` pricing a ladder task at the geometric mean over the probe's
    finished tasks (its cells) of ``start + units x unit``, over the first task's.

    A grid's cells differ in cost by a factor: on breast cancer (standard preset, 319
    rows) the probe's five tasks took 5.4, 5.1, 3.8, 23.8 (the narrowest width) and 4.8 ms
    and the search's 210 tasks 7.0 ms each on average; on wu2010_ex1 at n = 2000 (639
    rows) 16, 25, 12 and 149 ms.  The median (5.1 ms; 20 ms) priced the tuning at 0.7x,
    the mean (8.6 ms) at 1.2x, over-weighting the grid's ends (two of five probe cells,
    one of six widths); the geometric mean (6.5 ms; 29 ms) lies between.  A first task
    that paid for loading code is diluted, not dropped, as the median dropped it."""

    def factor(tasks: list) -> float:
        first = tasks[0][0] + units * tasks[0][1]
        done = [s + units * u for s, u, lower in tasks if not lower and s + units * u > 0]
        if first <= 0 or tasks[0][2] or not done:
            return 1.0
        return float(np.exp(np.mean(np.log(done)))) / first

    return factor


#: A ladder probe's task estimates every this many of its rows after the fit, as a
#: search's task estimates its fold's tuning rows (half the training rows of 3 folds, 3/7
#: of a 30% hold-out's).
SCORED_EVERY = 2
#: Cross-fitted points a map probe fits at most (a larger stage is priced by
#: :data:`MAP_ROW_EXPONENT`).
MAP_ROWS = 2000
#: Exponent of a map choice's cost in its points: the binary default's choice took
#: 0.035-0.047 s from 70 to 500 points and 0.063-0.086 s from 501 to 1400 (the spline's
#: candidates join above 500), one thread, 2026: less than linear; 1 errs long.
MAP_ROW_EXPONENT = 1.0
#: Map choices a map probe times at most (the price is their median).
MAP_TASKS = 3


def map_points(rows: int, n_weights: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Cross-fitted points of a calibrated problem, made up: ``rows`` count estimates on
    the grid of ``n_weights`` weights (``round(q M) / M`` of a uniform ``q``) and labels
    drawn with probability ``q``; two arrays of shape (rows,).  A map's fit depends on its
    points' number more than on their values."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.0, 1.0, rows)
    M = max(int(n_weights), 2)
    return np.round(q * M) / M, (rng.random(rows) < q).astype(int)


def fit_stage_map(engine: str, p: np.ndarray, y: np.ndarray) -> Any:
    """The map a stage of kind ``"map"`` and engine ``engine`` fits to points ``p`` (m,),
    labels ``y`` (m,) (:func:`~wsvmgui.estimators.cost_plan._map_engine`)."""
    from ..ladder.recalibration import choose_map, fit_calibration
    from .cost_plan import CHOOSE_MAP

    if engine.startswith(CHOOSE_MAP):
        return choose_map(p, y, maps=tuple(engine[len(CHOOSE_MAP) :].split(",")))
    return fit_calibration(engine, p, y)


def _probe_map(estimator: Any, X, codes, K, stage: Stage, probe: Probe) -> None:
    """The calibration map of one problem fitted to made-up cross-fitted points
    (:func:`map_points`) of the stage's number, up to :data:`MAP_ROWS`, a task each (one
    progress event at its end: the map choice reports no units), :data:`MAP_TASKS` times
    unless the budget is spent."""
    rows = max(min(stage.rows, MAP_ROWS), 2)
    probe.rows = rows
    probe.exponent = MAP_ROW_EXPONENT
    n_weights = getattr(estimator, "n_weights", None) or 40
    p, y = map_points(rows, n_weights)

    def run(progress, should_cancel) -> None:
        should_cancel()
        fit_stage_map(stage.engine, p, y)
        progress(1, 1, None)

    for _ in range(MAP_TASKS):
        probe.events(1).run(run)
        probe.task_done()
        if probe.spent():
            break


def noncrossing_cell(
    estimator: Any, X: np.ndarray, codes: np.ndarray, idx: np.ndarray, y: np.ndarray, stage: Stage
) -> tuple[float, float]:
    """``(lambda, sigma)`` a non-crossing probe fits at on the rows ``idx`` of ``X`` (n, p),
    labelled ``y`` (len(idx),): the middle of the grids; for a stage of engine
    :data:`~wsvmgui.estimators.cost_plan.WIDTH_CHOSEN_FIRST` (a ladder at the width an
    earlier stage chooses), that width, found by the estimator's own search on its own
    split (``codes``: class indices, shape (n,)) when the split trains on at most
    :data:`WIDTH_SEARCH_ROWS` rows, else the grid's narrowest.  The width decides the
    price: on wuliu2011_ex1, 700 rows, middle lambda, a constrained fit took 97 ms at a
    quarter of the median distance, 9 ms at half of it, 4 ms at the middle width."""
    from ..ladder.tuning import DEFAULT_C_GRID

    lams, sigmas = _grids(estimator, X[idx], y, DEFAULT_C_GRID)
    if stage.engine != WIDTH_CHOSEN_FIRST:
        return lams[len(lams) // 2], sigmas[len(sigmas) // 2]
    if stage.rows > WIDTH_SEARCH_ROWS:
        return lams[len(lams) // 2], sigmas[0]
    return lams[len(lams) // 2], chosen_width(estimator, X, codes)


#: Training rows up to which a probe runs the preconditioned SVM's width search (its 42
#: plain SVMs took 0.1-0.3 CPU s on 700 rows) to price the ladder at the chosen width.
WIDTH_SEARCH_ROWS = PROBE_ROWS


def chosen_width(estimator: Any, X: np.ndarray, codes: np.ndarray) -> float:
    """The RBF width the preconditioned SVM ``estimator`` (``classes_`` set) chooses on
    ``X`` (n, p), class indices ``codes`` (n,): its own width search on its own tuning
    split, drawn from a copy of its ``random_state`` (the fit's stays as it was)."""
    est = detached(estimator)
    plan = est._plan(X, codes)
    tr, te = plan.folds[0]
    y = np.where(codes == 1, 1.0, -1.0)
    kernel, _ = est._choose_kernel(plan, X, y, tr, te, est._lambda_grid(plan.size(tr)))
    return float(kernel.sigma)


def _probe_noncrossing(estimator: Any, X, codes, K, stage: Stage, probe: Probe) -> None:
    from .noncrossing import NonCrossingLadderClassifier

    if stage.engine in (EVERY_WIDTH, HINGE_EVERY_WIDTH, "hinge"):
        every_width(estimator, X, codes, K, stage, probe)
        return
    idx, y = _binary_rows(codes, K, min(stage.rows, PROBE_ROWS))
    probe.rows = idx.size
    Xp = X[idx]
    lam, sigma = noncrossing_cell(estimator, X, codes, idx, y, stage)
    per_task = max(stage.fits // max(stage.tasks, 1), 1)
    M = min(per_task, PROBE_UNITS) + 1
    fitter = NonCrossingLadderClassifier(
        **_kernel_params(estimator), n_weights=M, lam=lam, sigma=_sigma(sigma), n_jobs=1
    )
    probe.events(min(M - 1, UNIT_SAMPLE)).run(lambda **kw: fitter.fit(Xp, y, **kw))
    probe.task_done()


def every_width(estimator: Any, X, codes, K, stage: Stage, probe: Probe) -> None:
    """The non-crossing estimator's ladders at every width of its grid (engines
    :data:`~wsvmgui.estimators.cost_plan.EVERY_WIDTH` and
    :data:`~wsvmgui.estimators.cost_plan.HINGE_EVERY_WIDTH`; engine ``"hinge"``: a grid of
    one width), the middle width first, then the others from the narrowest, a task per
    width of :data:`WIDTH_UNITS` weights, priced at the mean over the widths measured
    (``probe.factor``).

    The estimator's own width grid (of all rows, as the fit's) and lambda grid (for the
    stage's rows), at the middle lambda; for the hinge engines each weight at every
    lambda, chosen by the weighted hinge loss on rows left out of the probe's (a 30%
    hold-out's share), as the fit's tuning does.  ``X`` (n, p), ``codes`` (n,).
    """
    from ..ladder.tuning import kernel_with_sigma
    from ..ladder.weights import weight_grid
    from . import noncrossing

    idx, y = _binary_rows(codes, K, min(stage.rows, PROBE_ROWS))
    probe.rows = idx.size
    Xp, yp = X[idx], np.where(y == 1, 1.0, -1.0)
    # the fit's own grids: widths of all rows, lambdas for the stage's rows
    est = detached(estimator)
    sigmas = np.sort(est._sigma_grid(X, codes, None))
    grid = np.asarray(est._lambda_grid(idx.size), dtype=float)
    tune: dict[str, Any] = {}
    if stage.engine in (HINGE_EVERY_WIDTH, "hinge"):
        rest = np.setdiff1d(np.arange(codes.size), idx)
        te, y_te = _cut(rest, codes[rest], max(idx.size * 3 // 7, 2), 1) if rest.size else (idx, y)
        tune = {"lam_grid": grid, "X_tune": X[te], "y_tune": np.where(y_te == 1, 1.0, -1.0)}
    L = grid.size if tune else 1
    per_task = max(stage.fits // max(stage.tasks, 1) // L, 1)  # weights of one ladder
    weights = weight_grid(min(per_task, PROBE_UNITS) + 1)
    units = min(weights.size, WIDTH_UNITS) * L
    lam = float(np.sort(grid)[grid.size // 2])
    template = estimator._kernel_template()
    probe.factor = _mean_over_tasks(units)
    # the middle width first (a probe cut short after it prices as the middle cell did),
    # then the rest from the narrowest
    middle = sigmas.size // 2
    for sigma in [sigmas[middle], *np.delete(sigmas, middle)]:
        kernel = kernel_with_sigma(template, sigma)

        def fit(progress, should_cancel, kernel=kernel) -> None:
            noncrossing.fit_noncrossing_ladder(
                Xp, yp, weights, lam, kernel, engine=estimator._nc_engine,
                constraints=estimator.constraints, max_constraints=estimator.max_constraints,
                progress=progress, should_cancel=should_cancel, **tune,
            )  # fmt: skip

        probe.events(units).run(fit)
        probe.task_done()
        if probe.spent():
            return


#: Weights a task of :func:`every_width` fits (each at every lambda for the hinge engines).
WIDTH_UNITS = 3


def _mean_over_tasks(units: int):
    """``Probe.factor`` pricing a task at the mean over the probe's tasks: the first
    task's price times the mean of each task's ``start + units x unit`` over the first's."""

    def factor(tasks: list) -> float:
        first = tasks[0][0] + units * tasks[0][1]
        if first <= 0:
            return 1.0
        return float(np.mean([s + units * u for s, u, _ in tasks])) / first

    return factor


def _probe_joint(estimator: Any, X, codes, K, stage: Stage, probe: Probe) -> None:
    """The middle cell's grid fits; the other widths priced by their feature counts.

    A grid fit's QPs grow with its features r (the kernel matrix's numerical rank: close
    to the rows for a narrow RBF width, a few dozen for a wide one), and its cost with
    them as ``r ** b``, ``b`` = :data:`JOINT_RANK_EXPONENT`: the grid's mean cost is the
    middle cell's times the mean of ``(r / r_middle) ** b`` over the widths.  ``b`` is
    fixed, not measured: measured from a second probe at the narrowest width (when the
    budget allowed one) it was the ratio of two single timings, raised to powers up to
    the grid's rank ratio, and two identical requests differed by 2.4x.
    """
    from .joint import DEFAULT_C_GRID

    idx, y = _cut(np.arange(codes.size), codes, stage.rows, 0)
    probe.rows = idx.size
    Xp = X[idx]
    lams, sigmas = _grids(estimator, Xp, y, DEFAULT_C_GRID)
    lam, mid = lams[len(lams) // 2], sigmas[len(sigmas) // 2]
    ranks = {s: _feature_share(estimator, Xp, s) for s in dict.fromkeys(sigmas)}
    spread = float(np.mean([(ranks[s] / ranks[mid]) ** JOINT_RANK_EXPONENT for s in sigmas]))
    probe.factor = lambda tasks: spread
    _joint_task(estimator, Xp, y, lam, mid, probe)


#: Exponent of a joint grid fit's cost in its feature count.
JOINT_RANK_EXPONENT = 2.0
#: Rows the feature counts of the joint probe are computed on (at most).
RANK_ROWS = 150


def _feature_share(estimator: Any, X: np.ndarray, sigma: float) -> float:
    """Share of the rows that are features of the joint fit at ``sigma`` (its kernel
    matrix's numerical rank over the rows, on at most :data:`RANK_ROWS` of them)."""
    from ..joint.features import EIGEN_REL_TOL

    if estimator.kernel != "rbf":
        return 1.0
    from ..solvers.kernels import Kernel

    Xs = X[:: max(1, int(np.ceil(X.shape[0] / RANK_ROWS)))]
    lam = np.linalg.eigvalsh(Kernel("rbf", sigma=float(sigma))(Xs))
    return max(int(np.sum(lam > EIGEN_REL_TOL * max(float(lam[-1]), 1e-300))), 1) / Xs.shape[0]


def _joint_task(estimator: Any, Xp, y, lam: float, sigma: float, probe: Probe) -> None:
    """A few grid fits of the joint scheme at one cell, its feature map timed apart."""
    from ..joint.features import FeatureMap
    from ..solvers.kernels import Kernel
    from .joint import JointWSVMClassifier

    params = _kernel_params(estimator)
    kernel = None
    if estimator.kernel == "rbf":
        kernel = Kernel("rbf", sigma=float(sigma))
    elif estimator.kernel == "poly":
        kernel = Kernel(
            "poly", degree=params["degree"], coef0=params["coef0"], gamma=params["poly_gamma"]
        )
    c0 = probe.cpu()
    FeatureMap.fit(Xp, kernel)  # the start of every grid fit
    probe.known_start = probe.cpu() - c0
    fitter = JointWSVMClassifier(
        **params,
        n_weights=joint_resolution(estimator),
        lam=lam,
        sigma=_sigma(sigma),
        scheme=estimator.scheme,
        n_jobs=1,
        qp_solver=estimator.qp_solver,
    )
    labels = np.asarray(estimator.classes_)[y]
    probe.events(JOINT_UNITS).run(lambda **kw: fitter.fit(Xp, labels, **kw))
    probe.task_done()


#: Grid fits per cell of the joint probe (the first starts cold, the rest warm).
JOINT_UNITS = 4


def _probe_estimator(estimator: Any, X, codes, K, stage: Stage, probe: Probe) -> None:
    from sklearn.base import clone

    fitter = clone(estimator)
    if "n_jobs" in fitter.get_params():
        fitter.set_params(n_jobs=1)
    probe.rows = codes.size
    labels = np.asarray(estimator.classes_)[codes]
    probe.events(UNIT_SAMPLE).run(lambda **kw: fitter.fit(X, labels, **kw))
    probe.task_done()


def _probe_svm(estimator: Any, X, codes, K, stage: Stage, probe: Probe) -> None:
    """Plain SVMs as the preconditioned SVM fits them
    (:mod:`wsvmgui.ladder.precondition`), at the middle of its width grid on a stage's
    rows, each task ending in one progress event (its units are the stage's tasks):
    engine ``"hinge"``, a level's SVMs over the lambda grid chosen by the hinge loss on
    held-out rows; ``"plain"``, one SVM at the middle lambda.  The labels are the data's
    (a level relabels some points; the problem's size is the same)."""
    from ..ladder.precondition import fit_plain_svm, fit_svm_by_hinge
    from ..ladder.tuning import DEFAULT_C_GRID, kernel_with_sigma

    idx, codes_fit = _cut(np.arange(codes.size), codes, min(stage.rows, PROBE_ROWS), 0)
    probe.rows = idx.size
    y = np.where(codes_fit == 1, 1.0, -1.0)
    lams, sigmas = _grids(estimator, X[idx], codes_fit, DEFAULT_C_GRID)
    kernel = kernel_with_sigma(estimator._kernel_template(), sigmas[len(sigmas) // 2])
    K_fit = kernel(X[idx])
    solvers = (estimator.solver, estimator.qp_solver)
    if stage.engine == "hinge":  # the tuning rows: rows left, at a 30% hold-out's share
        rest = np.setdiff1d(np.arange(codes.size), idx)
        te = _cut(rest, codes[rest], max(idx.size * 3 // 7, 2), 1)[0] if rest.size else idx
        K_te, y_te = kernel(X[te], X[idx]), np.where(codes[te] == 1, 1.0, -1.0)
        grid = np.array(sorted(lams, reverse=True))  # large lambda first, as the fit's

        def task() -> None:
            fit_svm_by_hinge(K_fit, y, K_te, y_te, grid, None, None, *solvers)

    else:
        lam = lams[len(lams) // 2]

        def task() -> None:
            fit_plain_svm(K_fit, y, lam, None, *solvers)

    def run(progress, should_cancel) -> None:
        should_cancel()
        task()
        progress(1, 1, None)

    for _ in range(SVM_TASKS):
        probe.events(1).run(run)
        probe.task_done()
        if probe.spent():
            break


#: Tasks an SVM probe fits at most (the price is their median).
SVM_TASKS = 3

#: Kind of work -> (probe, whether a unit not finished prices the unit (else the task)).
PROBES = {
    "ladder": (_probe_ladder, False),
    "noncrossing": (_probe_noncrossing, True),
    "joint": (_probe_joint, True),
    "svm": (_probe_svm, False),
    "map": (_probe_map, False),
    "estimator": (_probe_estimator, True),
}
