"""Schemas of wsvmgui's fitted classes (registered in :data:`wsvmgui.io.schema.VALIDATORS`).

Each validator reads, through :class:`~wsvmgui.io.schema.State`, the attributes its class's
prediction uses: the arrays of the exact path that compiled code reads (pointers, indices,
the cached block plan), ladders and their weights, kernels, support rows, sub-problem
indices, the simplex grid, and the consistency of each estimator with its parts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .schema import MAX_COUNT, MAX_DEGREE, SIGMA_RANGE, State, validator


def _same_kernel_data(s: State, X_attr: str, n_features: int | None) -> np.ndarray:
    X = s.array(X_attr, "f", 2)
    if n_features is not None and X.shape[1] != n_features:
        raise s.fail(X_attr, f"has {X.shape[1]} columns, the model takes {n_features}")
    return X


def _classes(s: State, size: int | None = None) -> np.ndarray:
    classes = s.get("classes_")
    if (
        not isinstance(classes, np.ndarray)
        or classes.ndim != 1
        or classes.dtype.kind not in "UiufO"
    ):
        raise s.fail("classes_", "must be a 1-d array of labels")
    if classes.size < 2 or (size is not None and classes.size != size):
        want = "at least 2" if size is None else str(size)
        raise s.fail("classes_", f"holds {classes.size} classes, expected {want}")
    if classes.dtype.kind == "O" and not all(
        isinstance(c, (str, int, float)) and not isinstance(c, bool) for c in classes
    ):
        raise s.fail("classes_", "must hold text or numbers")
    return classes


def _same_weights(s: State, attr: str, ladder: Any) -> None:
    """``attr`` must be the weight grid its ladder was fitted or drawn at."""
    inner = ladder.ladder if type(ladder).__name__ == "NonCrossingLadder" else ladder
    if not np.array_equal(s.state[attr], inner.weights):
        why = f"differs from its ladder's {inner.weights.size} weights"
        raise s.fail(attr, why, [inner.weights])


def _weights(s: State, attr: str) -> np.ndarray:
    w = s.array(attr, "f", 1, lo=0.0, hi=1.0)
    if w.size == 0 or np.any(w <= 0) or np.any(w >= 1) or np.any(np.diff(w) <= 0):
        raise s.fail(attr, "must be increasing weights strictly between 0 and 1")
    return w


# --------------------------------------------------------------------------- wsvmgui: solvers
@validator("wsvmgui.solvers.kernels:Kernel")
def _kernel(s: State) -> None:
    from ..solvers.kernels import KERNELS

    name = s.text("name", KERNELS)
    sigma = s.number("sigma", nan=name != "rbf")
    if name == "rbf" and not SIGMA_RANGE[0] <= sigma <= SIGMA_RANGE[1]:
        raise s.fail("sigma", f"is {sigma}, outside {SIGMA_RANGE[0]:g}..{SIGMA_RANGE[1]:g}")
    s.integer("degree", 1, MAX_DEGREE)
    s.number("coef0")
    s.number("gamma", lo=0.0)


@validator("wsvmgui.solvers.wsvm:WeightedFit")
def _weighted_fit(s: State) -> None:
    coef = s.array("coef", "f", 1)
    s.array("alpha", "f", 1, coef.shape)
    s.number("intercept")
    s.number("kkt_residual", nan=True)


# --------------------------------------------------------------------------- wsvmgui: ladder
@validator("wsvmgui.ladder.grid:Ladder")
def _grid_ladder(s: State) -> None:
    w = _weights(s, "weights")
    coef = s.array("coef", "f", 2, (w.size, None))
    s.array("intercept", "f", 1, (w.size,))
    s.array("kkt_residual", "f", 1, (w.size,), finite=False)
    s.text("fallback", optional=True)
    s.text("switched", optional=True)
    del coef


def ladder_points(ladder: Any) -> int:
    """Training points a checked ladder's coefficients follow (``Ladder`` or ``PathLadder``;
    a path over repeated points follows the points its ``columns`` name)."""
    if type(ladder).__name__ == "PathLadder":
        if ladder.columns is not None:
            return int(ladder.columns.max()) + 1 if ladder.columns.size else 0
        return int(ladder.path.y.size)
    return int(ladder.coef.shape[1])


@validator("wsvmgui.ladder.engines:PathLadder")
def _path_ladder(s: State) -> None:
    path = s.obj("path", "WeightPath")
    _weights(s, "weights")
    if s.get("columns", optional=True) is not None:  # integer sample weights as repeats
        n = int(path.y.size)
        columns = s.index("columns", n, 1, (n,))
        if n and np.unique(columns).size != int(columns.max()) + 1:
            raise s.fail("columns", "must name every training point 0..k-1")


@validator("wsvmgui.ladder.path:WeightPath")
def _weight_path(s: State) -> None:
    from ..ladder.path import BLOCK

    s.number("C", lo=0.0)
    y = s.array("y", "f", 1)
    n = y.size
    if n == 0 or not np.all((y == 1) | (y == -1)):
        raise s.fail("y", "must hold the labels -1 and +1")
    pis = s.array("pis", "f", 1, lo=0.0, hi=1.0)
    B = pis.size
    if B < 2 or np.any(np.diff(pis) < 0):
        raise s.fail("pis", "must be at least two non-decreasing weights in [0, 1]")
    s.array("intercepts", "f", 1, (B,))
    t_idx = s.index("t_idx", n)
    s.pointer("t_ptr", B + 1, t_idx.size)
    s.array("t_val", "f", 1, t_idx.shape)
    ev_idx = s.index("ev_idx", n)
    s.pointer("ev_ptr", B + 1, ev_idx.size)
    s.array("ev_state", "i", 1, ev_idx.shape, lo=0, hi=2)
    s.array("state0", "i", 1, (n,), lo=0, hi=2)
    for attr in ("kkt_residual", "path_residual", "dual_residual", "ridge", "work"):
        if s.has(attr):
            s.number(attr, nan=True)
    for attr in ("max_elbow", "n_duplicates"):
        if s.has(attr):
            s.integer(attr, 0, n)
    if s.has("_plan"):
        _path_plan(s, n, B, BLOCK)


def _path_plan(s: State, n: int, B: int, G: int) -> None:
    """The cached block plan the compiled prediction reads (``WeightPath._plan``)."""
    plan = s.get("_plan")
    names = ("v_ptr", "v_idx", "w_flat", "w_ptr", "lind")
    if not isinstance(plan, tuple) or len(plan) != 5:
        raise s.fail("_plan", "must be the five plan arrays (v_ptr, v_idx, w_flat, w_ptr, lind)")
    sub = State(s.name, dict(zip(names, plan, strict=True)), f"{s.where}._plan", s._member)
    sub.name = f"{s.name}._plan"
    nblk = (B - 1 + G - 1) // G
    v_idx = sub.index("v_idx", n)
    v_ptr = sub.pointer("v_ptr", nblk + 1, v_idx.size)
    w_flat = sub.array("w_flat", "f", 1)
    w_ptr = sub.pointer("w_ptr", nblk + 1, w_flat.size)
    sub.array("lind", "f", 1, (4 * v_idx.size,), lo=-1.0, hi=1.0)
    k0 = np.arange(nblk, dtype=np.int64) * G
    rows = np.minimum(k0 + G, B - 1) - k0 + 1
    if not np.array_equal(np.diff(w_ptr), rows * (np.diff(v_ptr) + 3)):
        raise sub.fail("w_ptr", "does not match the blocks' sizes in v_ptr")


@validator("wsvmgui.ladder.tuning_table:TuningResult")
def _tuning_result(s: State) -> None:
    """The generic search's table (:mod:`wsvmgui.ladder.tuning_table`): never read by
    prediction, checked for its shape."""
    axes = s.get("axes")
    if not isinstance(axes, dict) or not axes or not all(isinstance(k, str) for k in axes):
        raise s.fail("axes", "must map axis names to candidate values")
    sub = State(s.name, {f"axes[{k!r}]": v for k, v in axes.items()}, s.where, s._member)
    shape, arrays = [], []
    for key, values in axes.items():
        if isinstance(values, np.ndarray):
            arrays.append(sub.array(f"axes[{key!r}]", "f", 1, finite=False))
            shape.append(values.size)
        elif isinstance(values, (tuple, list)):
            shape.append(len(sub.get(f"axes[{key!r}]")))
        else:
            raise s.fail("axes", f"axis {key!r} must be an array or a tuple of values")
        if not shape[-1]:
            raise sub.fail(f"axes[{key!r}]", "must hold at least one candidate")
    sub.done()
    cells = tuple(shape)
    for attr in ("score", "error", "screened", "se"):
        table = s.array(attr, "f", len(cells), finite=False, optional=attr != "score")
        if table is not None and table.shape != cells:
            raise s.fail(attr, f"has shape {table.shape}, its axes make {cells}", arrays)
    best = s.get("best")
    if not (
        isinstance(best, tuple)
        and len(best) == len(cells)
        and all(isinstance(i, int) and 0 <= i < n for i, n in zip(best, cells, strict=True))
    ):
        raise s.fail("best", f"must be the index of a cell of the grid {cells}")
    s.text("score_name")


@validator("wsvmgui.ladder.recalibration:MonotoneMap")
def _monotone_map(s: State) -> None:
    from ..ladder.recalibration import MAPS

    name = s.text("name", MAPS)
    x = s.array("x", "f", 1, lo=0.0, hi=1.0)
    spline, plateau = name == "spline", name == "plateau"
    y = s.array("y", "f", 1, (0,) if spline else (2,) if plateau else x.shape, lo=0.0, hi=1.0)
    if plateau and (x.size != 0 or y[0] > y[1]):
        raise s.fail("y", "a plateau map needs no thresholds and a floor <= its ceiling")
    if name == "isotonic" and (x.size == 0 or np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0)):
        raise s.fail("x", "an isotonic map needs increasing estimates and non-decreasing values")
    if spline and (x.size == 0 or np.any(np.diff(x) <= 0) or x[0] <= 0 or x[-1] >= 1):
        raise s.fail("x", "a spline map needs increasing knots strictly inside (0, 1)")
    size = {"isotonic": 0, "spline": x.size + 2}.get(name, 3)
    coef = s.array("coef", "f", 1, (size,))
    if coef.size and np.any(coef[1:] < 0):
        raise s.fail("coef", "the slopes of a monotone map must be >= 0")
    lo = s.number("lo", 0.0, 1.0)
    s.number("hi", lo, 1.0)


@validator("wsvmgui.ladder.recalibration:LocalInterval")
def _local_interval(s: State) -> None:
    p = s.array("p", "f", 1, lo=0.0, hi=1.0)
    if p.size < 2 or np.any(np.diff(p) < 0):
        raise s.fail("p", "must be at least two sorted estimates")
    y = s.array("y", "f", 1, p.shape, lo=0.0, hi=1.0)
    if np.any((y != 0) & (y != 1)):
        raise s.fail("y", "must hold 0/1 labels")
    s.integer("k", 2, p.size)
    s.array("v", "f", 1, p.shape, lo=0.0, optional=True)
    s.integer("kj", 2, p.size, optional=True)


@validator("wsvmgui.ladder.noncrossing_types:FitRecord")
def _fit_record(s: State) -> None:
    """Diagnostics of one constrained fit: plain values only (checked by :meth:`State.done`)."""


@validator("wsvmgui.ladder.noncrossing:NonCrossingLadder")
def _noncrossing_ladder(s: State) -> None:
    X = s.array("X_train", "f", 2)
    s.obj("kernel", "Kernel")
    ladder = s.obj("ladder", "Ladder")
    if ladder.coef.shape[1] != X.shape[0]:
        raise s.fail("ladder", f"has {ladder.coef.shape[1]} coefficients per weight, "
                     f"X_train {X.shape[0]} rows")  # fmt: skip
    M1 = ladder.weights.size
    s.array("lams", "f", 1, (M1,), lo=0.0)
    s.array("linear_coef", "f", 2, (M1, X.shape[1]), optional=True)
    s.objs("records", "FitRecord")


# --------------------------------------------------------------------------- multiclass
@validator("wsvmgui.multiclass.subproblems:SubProblem")
def _subproblem(s: State) -> None:
    s.integer("positive", 0, MAX_COUNT)
    neg = s.get("negative")
    if (
        not isinstance(neg, tuple)
        or not neg
        or not all(
            isinstance(k, int) and not isinstance(k, bool) and 0 <= k < MAX_COUNT for k in neg
        )
    ):
        raise s.fail("negative", "must be a tuple of class indices")
    s.text("name")


@validator("wsvmgui.multiclass.subproblems:FittedSubProblem")
def _fitted_subproblem(s: State) -> None:
    s.obj("spec", "SubProblem")
    ladder = s.obj("ladder", "PathLadder", "Ladder")
    support = s.array("support", "i", 1, lo=0)
    if ladder_points(ladder) != support.size:
        raise s.fail("support", f"has {support.size} rows, its ladder {ladder_points(ladder)}")
    s.obj("kernel", "Kernel")
    _weights(s, "weights")
    _same_weights(s, "weights", ladder)
    s.diagnostic("tuning")


@validator("wsvmgui.multiclass.subproblems:SubproblemSet")
def _subproblem_set(s: State) -> None:
    fitted = s.objs("fitted", "FittedSubProblem")
    X = s.array("X_support", "f", 2)
    r = X.shape[0]
    positions = s.get("positions")
    if not isinstance(positions, list) or len(positions) != len(fitted):
        raise s.fail("positions", f"must list {len(fitted)} arrays")
    for i, (pos, f) in enumerate(zip(positions, fitted, strict=True)):
        sub = State(s.name, {f"positions[{i}]": pos}, s.where, s._member)
        sub.array(f"positions[{i}]", "i", 1, f.support.shape, lo=0, hi=r - 1)
    groups = s.get("groups")
    if not isinstance(groups, dict):
        raise s.fail("groups", "must map kernels to sub-problems")
    members: list[int] = []
    for kern, idx in groups.items():
        if type(kern).__name__ != "Kernel" or not isinstance(idx, list):
            raise s.fail("groups", "must map kernels to lists of sub-problems")
        for i in idx:
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(fitted):
                raise s.fail("groups", f"names sub-problem {i!r} of {len(fitted)}")
            if fitted[i].kernel != kern:
                raise s.fail("groups", f"puts sub-problem {i} under another kernel")
            members.append(i)
    if sorted(members) != list(range(len(fitted))):
        raise s.fail("groups", "must hold every sub-problem once")


# --------------------------------------------------------------------------- joint
@validator("wsvmgui.joint.simplex_grid:SimplexGrid")
def _simplex_grid(s: State) -> None:
    from ..joint.simplex_grid import n_grid_points

    counts = s.array("counts", "i", 2, lo=1)
    G, K = counts.shape
    s.integer("K", K, K)
    N = s.integer("N", K + 1, MAX_COUNT)
    if n_grid_points(K, N) != G or np.any(counts.sum(axis=1) != N):
        raise s.fail("counts", f"is not the simplex grid of K = {K}, N = {N}")
    if s.has("cells"):
        cells = s.get("cells")
        if not isinstance(cells, tuple) or len(cells) != 2:
            raise s.fail("cells", "must be (vertices, centres)")
        sub = State(s.name, {"cells[0]": cells[0], "cells[1]": cells[1]}, s.where, s._member)
        v = sub.array("cells[0]", "i", 2, (None, K), lo=0, hi=G - 1)
        sub.array("cells[1]", "f", 2, (v.shape[0], K), lo=0.0, hi=1.0)
    if s.has("_index"):
        index = s.get("_index")
        if not isinstance(index, dict) or len(index) != G:
            raise s.fail("_index", f"must map the {G} grid points to their indices")
        if sorted(index.values()) != list(range(G)):
            raise s.fail("_index", "must map to the grid indices 0..G-1 once each")


@validator("wsvmgui.joint.grid_fit:GridFit")
def _grid_fit(s: State) -> None:
    grid = s.obj("grid", "SimplexGrid")
    G, K = grid.counts.shape
    s.array("W", "f", 3, (G, None, K - 1))
    s.array("b", "f", 2, (G, K - 1))
    s.array("n_qp", "i", 1, (G,), lo=0)
    s.array("kkt_residual", "f", 1, (G,), finite=False)
    s.array("converged", "b", 1, (G,))
    s.array("restarts", "b", 1, (G,), optional=True)


@validator("wsvmgui.joint.features:FeatureMap")
def _feature_map(s: State) -> None:
    center = s.array("center", "f", 1)
    r = center.size
    Z = s.array("Z_train", "f", 2, (None, r))
    if Z.size and np.abs(Z.mean(axis=0)).max() > 1e-8 * (1.0 + np.abs(Z).max()):
        raise s.fail("Z_train", "is not centred (the training features are)")
    kernel = s.obj("kernel", "Kernel", optional=True)
    if kernel is None:
        if s.get("X_train") is not None or s.get("proj") is not None:
            raise s.fail("proj", "must be None for the linear map")
        return
    X = s.array("X_train", "f", 2, (Z.shape[0], None))
    s.array("proj", "f", 2, (X.shape[0], r))


# --------------------------------------------------------------------------- probing
@validator("wsvmgui.probing.reduction:BinaryProbing")
def _binary_probing(s: State) -> None:
    t = s.array("thresholds", "f", 1, lo=0.0, hi=1.0)
    if np.any(np.diff(t) < 0):
        raise s.fail("thresholds", "must be sorted")
    for clf in s.objs("classifiers", *PROBING_LEARNERS, size=t.size):
        if getattr(clf, "n_features_in_", None) is None:
            raise s.fail("classifiers", f"holds an unfitted {type(clf).__name__}")
        if clf.classes_.dtype.kind not in "iu" or clf.classes_.size != 2:
            why = f"holds a learner with classes {clf.classes_!r}, not the labels 0 and 1"
            raise s.fail("classifiers", why, [clf.classes_])
    order = s.get("order", optional=True)
    if order is not None and (
        not isinstance(order, list) or not all(isinstance(v, (int, float)) for v in order)
    ):
        raise s.fail("order", "must list thresholds")
    s.text("loss", ("squared", "cross_entropy"))


PROBING_LEARNERS = (
    "SVC",
    "LogisticRegression",
    "DecisionTreeClassifier",
    "RandomForestClassifier",
    "GradientBoostingClassifier",
    "GaussianNB",
)


# --------------------------------------------------------------------------- estimators
def _n_features(s: State) -> int:
    return s.integer("n_features_in_", 1, MAX_COUNT)


def _rule(s: State) -> str:
    from ..ladder.rules import RULES

    return s.text("rule", RULES)


@validator("wsvmgui.estimators.binary:WeightedSVMClassifier")
def _binary_estimator(s: State) -> None:
    _classes(s, 2)
    p = _n_features(s)
    X = _same_kernel_data(s, "X_support_", p)
    s.obj("kernel_", "Kernel")
    ladder = s.obj("ladder_", "PathLadder", "Ladder")
    if ladder_points(ladder) != X.shape[0]:
        raise s.fail("X_support_", f"has {X.shape[0]} rows, its ladder {ladder_points(ladder)}")
    _weights(s, "weights_")
    _same_weights(s, "weights_", ladder)
    _rule(s)
    s.diagnostic("tuning_")
    s.obj("calibration_", "MonotoneMap", optional=True)
    s.text("calibration_input_", ("count", "midrung"), optional=True)
    s.obj("interval_", "LocalInterval", optional=True)


@validator("wsvmgui.estimators.noncrossing:NonCrossingLadderClassifier")
def _noncrossing_estimator(s: State) -> None:
    _classes(s, 2)
    p = _n_features(s)
    model = s.obj("model_", "NonCrossingLadder")
    if model.X_train.shape[1] != p:
        raise s.fail("model_", f"takes {model.X_train.shape[1]} features, the model {p}")
    w = _weights(s, "weights_")
    _same_weights(s, "weights_", model)
    s.array("lambdas_", "f", 1, (w.size,), lo=0.0, optional=True)
    s.obj("kernel_", "Kernel", optional=True)
    _rule(s)
    tuning = s.get("tuning_", optional=True)
    if isinstance(tuning, dict):  # the hinge criterion's table: lambda per weight
        sub = State(s.name, {f"tuning_[{k!r}]": v for k, v in tuning.items()}, s.where, s._member)
        grid = sub.array("tuning_['lambdas']", "f", 1, lo=0.0)
        given = s.get("lambdas", optional=True)
        if isinstance(given, list) and not np.array_equal(np.asarray(given, float), grid):
            raise sub.fail("tuning_['lambdas']", f"differs from the lambdas {given} it tuned")
        sub.array("tuning_['lambda_per_weight']", "f", 1, (w.size,), lo=0.0)
        sigmas = sub.array("tuning_['sigmas']", "f", 1, lo=0.0, optional=True)
        if sigmas is not None:  # sigma chosen by each sigma's ladder's EGKL
            sub.array("tuning_['egkl']", "f", 1, sigmas.shape, finite=False)
            sub.number("tuning_['sigma']", lo=0.0, nan=True)
        sub.done()
    elif tuning is not None:
        s.obj("tuning_", "TuningResult")
    s.diagnostic("diagnostics_")


@validator("wsvmgui.estimators.preconditioned:PreconditionedSVC")
def _preconditioned(s: State) -> None:
    _classes(s, 2)
    p = _n_features(s)
    X = _same_kernel_data(s, "X_train_", p)
    n = X.shape[0]
    s.obj("kernel_", "Kernel")
    ladder = s.obj("ladder_", "NonCrossingLadder", "PathLadder", "Ladder")
    if type(ladder).__name__ == "NonCrossingLadder":
        if ladder.X_train.shape[1] != p:
            raise s.fail("ladder_", f"takes {ladder.X_train.shape[1]} features, the model {p}")
    elif ladder_points(ladder) != n:
        raise s.fail("ladder_", f"follows {ladder_points(ladder)} points, X_train_ has {n}")
    svm = s.obj("svm_", "WeightedFit")
    if svm.coef.size != n:
        raise s.fail("svm_", f"has {svm.coef.size} coefficients, X_train_ has {n} rows")
    w = _weights(s, "weights_")
    _same_weights(s, "weights_", ladder)
    s.array("p_train_", "f", 1, (n,), lo=0.0, hi=1.0, optional=True)
    relabeled = s.array("relabeled_", "i", 1, lo=0, hi=n - 1, optional=True)
    if relabeled is not None and np.any(np.diff(relabeled) <= 0):
        raise s.fail("relabeled_", "must be increasing row numbers")
    levels = s.get("level_svms_", optional=True)
    if levels is not None and (
        not isinstance(levels, dict)
        or not all(type(v).__name__ == "WeightedFit" for v in levels.values())
    ):
        raise s.fail("level_svms_", "must map levels to weighted fits")
    _rule(s)
    del w


@validator("wsvmgui.estimators.multiclass:MulticlassWeightedSVMClassifier")
def _multiclass_estimator(s: State) -> None:
    classes = _classes(s)
    K = classes.size
    p = _n_features(s)
    subs = s.obj("subproblems_", "SubproblemSet")
    if subs.X_support.shape[1] != p:
        raise s.fail("subproblems_", f"take {subs.X_support.shape[1]} features, the model {p}")
    for f in subs.fitted:
        if not (f.spec.positive < K and all(k < K for k in f.spec.negative)):
            raise s.fail("subproblems_", f"sub-problem {f.spec.name!r} names a class beyond {K}")
    base = s.get("baseline_index_", optional=True)
    if base is not None:
        s.integer("baseline_index_", 0, K - 1)
        label = s.get("baseline_", optional=True)
        if not (
            isinstance(label, np.generic)
            and label.dtype.kind == classes.dtype.kind
            and label == classes[base]
        ):
            raise s.fail("baseline_", f"must be class {base} of classes_", [classes])
    if s.get("calibrations_", optional=True) is not None:
        s.objs("calibrations_", "MonotoneMap", size=len(subs.fitted))
    ties = s.obj("tie_pairs_", "SubproblemSet", optional=True)
    if ties is not None:
        if ties.X_support.shape[1] != p:
            raise s.fail("tie_pairs_", f"take {ties.X_support.shape[1]} features, the model {p}")
        if any(f.spec.positive >= K or any(k >= K for k in f.spec.negative) for f in ties.fitted):
            raise s.fail("tie_pairs_", f"a tie pair names a class beyond {K}")
    _rule(s)


@validator("wsvmgui.estimators.joint:JointWSVMClassifier")
def _joint_estimator(s: State) -> None:
    from ..joint.schemes import H_METHODS

    classes = _classes(s)
    K = classes.size
    p = _n_features(s)
    grid = s.obj("simplex_grid_", "SimplexGrid")
    if grid.K != K:
        raise s.fail("simplex_grid_", f"is for K = {grid.K} classes, the model has {K}")
    fit = s.obj("fit_", "GridFit")
    if fit.W.shape[0] != grid.counts.shape[0] or fit.W.shape[2] != K - 1:
        raise s.fail("fit_", f"has weights of shape {fit.W.shape} for a grid of {grid.size}")
    fmap = s.obj("features_", "FeatureMap")
    if fmap.center.size != fit.W.shape[1]:
        raise s.fail("features_", f"gives {fmap.center.size} features, the fit takes "
                     f"{fit.W.shape[1]}")  # fmt: skip
    width = p if fmap.kernel is None else fmap.X_train.shape[1]
    if width != p:
        raise s.fail("features_", f"takes {width} features, the model {p}")
    s.array("grid_", "f", 2, (grid.counts.shape[0], K), lo=0.0, hi=1.0)
    s.array("n_qp_", "i", 1, lo=0, optional=True)
    s.text("scheme", ("direct", "indirect"))
    s.text("h_method_", H_METHODS)


@validator("wsvmgui.estimators.probing:ProbingClassifier")
def _probing_estimator(s: State) -> None:
    classes = _classes(s)
    p = _n_features(s)
    problems = s.objs("problems_", "BinaryProbing", size=max(classes.size - 1, 1))
    for prob in problems:
        for clf in prob.classifiers:
            if getattr(clf, "n_features_in_", p) != p:
                raise s.fail("problems_", f"hold a learner of {clf.n_features_in_} features, "
                             f"the model takes {p}")  # fmt: skip
    s.array("problem_classes_", "U", 1, (len(problems),))
    thresholds = s.get("thresholds_", optional=True)
    if thresholds is not None and not isinstance(thresholds, list):
        raise s.fail("thresholds_", "must be a list")
