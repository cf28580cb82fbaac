"""Schemas of the scikit-learn types a Probing model holds (SVC, logistic regression,
trees, forests, gradient boosting, naive Bayes and their parts).

libsvm's prediction and scikit-learn's tree code read these arrays without bounds checks:
support vectors, dual coefficients, intercepts and class counts must agree, tree nodes
must link forwards inside the tree and split on features the tree has, and every learner
must be fitted on the labels 0 and 1 Probing gives it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .schema import MAX_COUNT, MAX_DEGREE, SchemaError, State, validator


def _n_features(s: State) -> int:
    return s.integer("n_features_in_", 1, MAX_COUNT)


def _sk_classes(s: State, size: int | None = None, kind: str = "if") -> np.ndarray:
    """A learner's classes: Probing trains every learner on the labels 0 and 1 (0..k-1)."""
    classes = s.array("classes_", kind, 1)
    if classes.size < 1 or (size is not None and classes.size != size):
        raise s.fail("classes_", f"holds {classes.size} classes, expected {size}")
    if not np.array_equal(classes, np.arange(classes.size)):
        raise s.fail("classes_", f"must be the labels 0..{classes.size - 1}")
    return classes


@validator("sklearn.svm._classes:SVC")
def _svc(s: State) -> None:
    if not s.fitted():
        return
    p = _n_features(s)
    s.text("kernel", ("linear", "poly", "rbf", "sigmoid"))
    s.integer("degree", 0, MAX_DEGREE)
    s.number("coef0")
    s.number("_gamma", lo=0.0)
    if s.flag("_sparse"):
        raise s.fail("_sparse", "sparse SVMs are not model contents")
    nsv = s.array("_n_support", "i", 1, lo=0, hi=MAX_COUNT)
    k = nsv.size
    classes = _sk_classes(s, k)
    l_sv = int(nsv.sum())
    if k < 2:
        raise s.fail("_n_support", f"counts {k} classes, expected at least 2")
    m = k * (k - 1) // 2
    s.array("support_vectors_", "f", 2, (l_sv, p))
    shape_fit = s.get("shape_fit_")
    if not (isinstance(shape_fit, tuple) and len(shape_fit) == 2 and isinstance(shape_fit[0], int)):
        raise s.fail("shape_fit_", "must be (rows, features)")
    s.index("support_", max(int(shape_fit[0]), 0), 1, (l_sv,))
    s.array("_dual_coef_", "f", 2, (k - 1, l_sv))
    s.array("dual_coef_", "f", 2, (k - 1, l_sv))
    s.array("_intercept_", "f", 1, (m,))
    s.array("intercept_", "f", 1, (m,))
    for attr in ("_probA", "_probB"):
        arr = s.array(attr, "f", 1)
        if arr.size not in (0, m):
            raise s.fail(attr, f"has {arr.size} values, expected 0 or {m}")
    s.array("class_weight_", "f", 1, (k,))
    s.array("_num_iter", "i", 1, (m,), lo=0)
    s.array("n_iter_", "i", 1, (m,), lo=0)
    del classes


@validator("sklearn.linear_model._logistic:LogisticRegression")
def _logistic(s: State) -> None:
    if not s.fitted():
        return
    p = _n_features(s)
    classes = _sk_classes(s)
    rows = 1 if classes.size == 2 else classes.size
    s.array("coef_", "f", 2, (rows, p))
    s.array("intercept_", "f", 1, (rows,))
    s.array("n_iter_", "i", 1, (1,), lo=0)


@validator("sklearn.naive_bayes:GaussianNB")
def _gaussian_nb(s: State) -> None:
    if not s.fitted():
        return
    p = _n_features(s)
    k = _sk_classes(s).size
    s.array("theta_", "f", 2, (k, p))
    s.array("var_", "f", 2, (k, p), lo=0.0)
    s.array("class_prior_", "f", 1, (k,), lo=0.0, hi=1.0)
    s.array("class_count_", "f", 1, (k,), lo=0.0)
    s.number("epsilon_", lo=0.0)


@validator("sklearn.dummy:DummyClassifier")
def _dummy(s: State) -> None:
    if "classes_" not in s.state:
        return
    k = _sk_classes(s).size
    s.array("class_prior_", "f", 1, (k,), lo=0.0, hi=1.0)
    s.integer("n_classes_", k, k)
    s.integer("n_outputs_", 1, 1)
    s.text("_strategy", ("prior", "most_frequent", "stratified", "uniform"))


def _tree_owner(s: State, regressor: bool) -> Any:
    if not s.fitted():
        return None
    p = _n_features(s)
    tree = s.obj("tree_", "Tree")
    if tree.n_features != p:
        raise s.fail("tree_", f"reads {tree.n_features} features, the learner takes {p}")
    s.integer("n_outputs_", 1, 1)
    if tree.n_outputs != 1:
        raise s.fail("tree_", f"has {tree.n_outputs} outputs, expected 1")
    s.integer("max_features_", 1, p)
    if not regressor:
        k = _sk_classes(s).size
        n_classes = s.integer("n_classes_", 1, MAX_COUNT)
        if n_classes != k or int(tree.n_classes[0]) != k:
            raise s.fail("n_classes_", f"is {n_classes}, the classes and tree say {k}")
    return tree


@validator("sklearn.tree._classes:DecisionTreeClassifier")
def _decision_tree(s: State) -> None:
    _tree_owner(s, regressor=False)


@validator("sklearn.tree._classes:DecisionTreeRegressor")
def _regression_tree(s: State) -> None:
    _tree_owner(s, regressor=True)


@validator("sklearn.ensemble._forest:RandomForestClassifier")
def _forest(s: State) -> None:
    if not s.fitted():
        return
    p = _n_features(s)
    k = _sk_classes(s).size
    s.integer("n_outputs_", 1, 1)
    s.integer("n_classes_", k, k)
    trees = s.objs("estimators_", "DecisionTreeClassifier")
    if not trees:
        raise s.fail("estimators_", "holds no trees")
    for t in trees:
        if getattr(t, "n_features_in_", None) is None:
            raise s.fail("estimators_", "holds an unfitted tree")
        if t.classes_.dtype.kind != "f":  # a forest fits its trees on float labels
            raise s.fail("estimators_", "holds a tree with integer classes", [t.classes_])
        if t.n_features_in_ != p or t.classes_.size != k:
            raise s.fail("estimators_", f"holds a tree for {t.n_features_in_} features and "
                         f"{t.classes_.size} classes, the forest {p} and {k}")  # fmt: skip
    s.obj("estimator", "DecisionTreeClassifier", optional=True)
    s.obj("estimator_", "DecisionTreeClassifier", optional=True)
    n = s.integer("_n_samples", 1, MAX_COUNT)
    s.array("_sample_weight", "f", 1, (n,), lo=0.0, optional=True)


@validator("sklearn.ensemble._gb:GradientBoostingClassifier")
def _boosting(s: State) -> None:
    if not s.fitted():
        return
    p = _n_features(s)
    k = _sk_classes(s).size
    s.integer("n_classes_", k, k)
    per = s.integer("n_trees_per_iteration_", 1, MAX_COUNT)
    if per != (1 if k == 2 else k):
        raise s.fail("n_trees_per_iteration_", f"is {per} for {k} classes")
    stages = s.integer("n_estimators_", 1, MAX_COUNT)
    est = s.get("estimators_")
    if not isinstance(est, np.ndarray) or est.dtype != object or est.shape != (stages, per):
        got = getattr(est, "shape", type(est).__name__)
        raise s.fail("estimators_", f"must be an array of {stages} x {per} trees, got {got}")
    s.objs("estimators_", "DecisionTreeRegressor")
    for t in est.ravel():
        if getattr(t, "n_features_in_", None) != p:
            raise s.fail("estimators_", f"holds a tree for {t.n_features_in_} features, not {p}")
    s.number("learning_rate")
    init = s.obj("init_", "DummyClassifier")
    if init.classes_.dtype.kind != "f" or init.classes_.size != k:
        raise s.fail("init_", "must be fitted on the float labels of the classes", [init.classes_])
    s.obj("_loss", "HalfBinomialLoss")
    s.array("train_score_", "f", 1, (stages,), finite=False, optional=True)
    rng = s.get("_rng", optional=True)
    if rng is not None and not isinstance(rng, np.random.RandomState):
        raise s.fail("_rng", "must be a random state")
    s.get("init", optional=True)


@validator("sklearn._loss.loss:HalfBinomialLoss")
def _binomial_loss(s: State) -> None:
    s.obj("closs", "CyHalfBinomialLoss")
    s.obj("link", "LogitLink")
    s.obj("interval_y_true", "Interval")
    s.obj("interval_y_pred", "Interval")


@validator("sklearn._loss._loss:CyHalfBinomialLoss", "sklearn._loss.link:LogitLink")
def _stateless(s: State) -> None:
    if s.state:
        raise s.fail(None, "holds no state")


@validator("sklearn._loss.link:Interval")
def _interval(s: State) -> None:
    for attr in ("low", "high"):
        value = s.get(attr)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise s.fail(attr, "must be a number")
    s.flag("low_inclusive")
    s.flag("high_inclusive")


#: Trees: checked by :func:`check_tree_args` before construction, then their state.
TREE = "sklearn.tree._tree:Tree"
#: The node layout scikit-learn's Tree reads (compared exactly: the compiled code takes it).
_MAX_TREE_CLASSES = 2**20


def check_tree_args(args: Any, where: str) -> tuple:
    """``Tree(n_features, n_classes, n_outputs)`` arguments, before the tree is built;
    returns them (a tuple) or raises SchemaError."""
    ok = (
        isinstance(args, tuple)
        and len(args) == 3
        and isinstance(args[0], int)
        and not isinstance(args[0], bool)
        and 1 <= args[0] <= MAX_COUNT
        and isinstance(args[1], np.ndarray)
        and args[1].dtype.kind in "iu"
        and args[1].shape == (1,)
        and 1 <= int(args[1][0]) <= _MAX_TREE_CLASSES
        and args[2] == 1
        and type(args[2]) is int
    )
    if not ok:
        raise SchemaError(f"{where} (Tree): its arguments must be (features, [classes], 1)")
    return args


@validator(TREE)
def _tree(s: State) -> None:
    from sklearn.tree._tree import NODE_DTYPE

    count = s.integer("node_count", 1, MAX_COUNT)
    s.integer("max_depth", 0, count)
    nodes = s.get("nodes")
    if not isinstance(nodes, np.ndarray) or nodes.dtype != NODE_DTYPE or nodes.shape != (count,):
        raise s.fail("nodes", f"must be {count} nodes of scikit-learn's node layout")
    values = s.array("values", "f", 3, (count, 1, None))
    del values
    left, right = nodes["left_child"], nodes["right_child"]
    feature = nodes["feature"]
    idx = np.arange(count)
    leaf = left == -1
    inner = ~leaf
    ok = (
        np.array_equal(leaf, right == -1)
        and np.all((left[inner] > idx[inner]) & (left[inner] < count))
        and np.all((right[inner] > idx[inner]) & (right[inner] < count))
        and np.all(feature[inner] >= 0)
        and np.all(np.isin(nodes["missing_go_to_left"], (0, 1)))
    )
    if not ok:
        raise s.fail("nodes", "node links are inconsistent")


def check_random_state(state: Any, where: str) -> None:
    """A legacy MT19937 state: ("MT19937", 624 uint32 keys, pos, has_gauss, cached)."""
    ok = (
        isinstance(state, tuple)
        and len(state) == 5
        and state[0] == "MT19937"
        and isinstance(state[1], np.ndarray)
        and state[1].dtype.kind in "iu"
        and state[1].shape == (624,)
        and isinstance(state[2], int)
        and 0 <= state[2] <= 624
        and isinstance(state[3], int)
        and isinstance(state[4], float)
    )
    if not ok:
        raise SchemaError(f"{where}: not a valid random state")
