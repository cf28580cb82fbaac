"""The schema of every type a model file may hold: checked before an object is built.

A model file is decoded by :class:`wsvmgui.io.serialize.Decoder` bottom-up: the children
of an object (its arrays, and objects already checked) are decoded first, then the
object's state is handed to the validator registered here for its class, and only then is
the object built.  Nothing compiled runs on a file's arrays before they pass: the exact
path's compiled prediction (:mod:`wsvmgui.ladder._path_predict`), libsvm's prediction of
the Probing SVC and scikit-learn's tree code read arrays without bounds checks, so every
array they read is checked here for dtype, shape, range and consistency (pointers
monotone and inside their index arrays, indices inside ``n``, counts matching).

Registry
--------
:data:`VALIDATORS` maps a class's ``module:QualName`` to its validator; a class that is
not registered cannot be saved or loaded (:func:`wsvmgui.io.serialize.trusted_class`), so
a new fitted class cannot slip through unchecked (tests/test_io_schema.py fits and saves
every estimator and scheme and asserts that each class met is registered).  A validator
reads the attributes prediction uses through :class:`State`, which names the class, the
attribute and the array member in every refusal; attributes it does not read may hold
only plain values (numbers, text, None, and lists, tuples and dicts of them, or checked
objects), never arrays, so an array prediction might read is always declared.

Volatile values: attributes and dict keys naming seconds (``seconds``, ``fit_seconds_``,
``fit_info_["seconds"]``) are timings and are written as 0.0 (:func:`scrub_timing`), so
the same fit gives the same bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..errors import InputError


class SchemaError(InputError):
    """A model file's object that does not satisfy its type's schema; the message says why."""


#: Largest integer any count or size in a model may hold (2**40: far above any real model).
MAX_COUNT = 2**40
#: Largest simplex grid (N) and class count (K) of a stored joint model.
MAX_GRID_N = 100_000
MAX_GRID_K = 1000
#: Largest polynomial degree accepted in a stored kernel.
MAX_DEGREE = 1000
#: RBF widths whose square is a positive normal float64 (the kernel divides by it).
SIGMA_RANGE = (1e-150, 1e150)

_TIMING = re.compile(r"(^|_)seconds?(_|$)")


def is_timing(name: Any) -> bool:
    """Whether an attribute or dict key names a timing (``seconds``, ``fit_seconds_``)."""
    return isinstance(name, str) and bool(_TIMING.search(name))


def scrub_timing(state: Any, depth: int = 0) -> Any:
    """``state`` with every timing (see :func:`is_timing`) set to 0.0.

    Applies to the object's own attributes and inside plain dicts among them
    (``fit_info_["seconds"]``, a dict of seconds per sub-problem).
    """
    if not isinstance(state, dict) or depth > 4:
        return state
    return {k: _zero(v) if is_timing(k) else scrub_timing(v, depth + 1) for k, v in state.items()}


def _zero(value: Any) -> Any:
    """Every number in ``value`` (a number, or a dict or list of them) as 0.0."""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_)):
        return 0.0
    if isinstance(value, dict):
        return {k: _zero(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_zero(v) for v in value)
    return value


class State:
    """The decoded state of one object, read through checked getters.

    Parameters
    ----------
    cls_name : str
        ``module:QualName`` of the class (its short name appears in messages).
    state : dict
        Attribute name to decoded value.
    where : str
        Where the object sits in the model (``estimator.ladder_.path``).
    member : callable
        ``member(array) -> str``: the zip member an array came from (for messages).
    """

    def __init__(
        self, cls_name: str, state: dict, where: str, member: Callable[[Any], str]
    ) -> None:
        self.name = cls_name.rpartition(":")[2]
        self.state = state
        self.where = where
        self._member = member
        self._read: set[str] = set()
        self._arrays: list[np.ndarray] = []

    # -- messages ---------------------------------------------------------------------
    def fail(self, attr: str | None, why: str, also: Iterable[Any] = ()) -> SchemaError:
        """The error naming ``attr`` and its array member, with ``why``.

        The members of the arrays it was checked against (this object's arrays read
        before it, and ``also``: arrays of child objects) are named too, since either
        side of a failed comparison may be the damaged one.
        """
        if attr is None:
            return SchemaError(f"{self.where} ({self.name}): {why}")
        value = self.state.get(attr)
        member = self._member(value) if isinstance(value, np.ndarray) else ""
        at = f" ({member})" if member else ""
        others = [self._member(a) for a in [*self._arrays[-4:], *also] if a is not value]
        others = list(dict.fromkeys(m for m in others if m))
        against = f" (checked against {', '.join(others)})" if others else ""
        return SchemaError(f"{self.where}.{attr} ({self.name}.{attr}{at}): {why}{against}")

    # -- getters ----------------------------------------------------------------------
    def has(self, attr: str) -> bool:
        return attr in self.state

    def get(self, attr: str, optional: bool = False) -> Any:
        self._read.add(attr)
        if attr not in self.state:
            if optional:
                return None
            raise self.fail(None, f"has no attribute {attr!r}")
        return self.state[attr]

    def array(
        self,
        attr: str,
        kind: str = "f",
        ndim: int | None = 1,
        shape: tuple | None = None,
        *,
        finite: bool = True,
        lo: float | None = None,
        hi: float | None = None,
        optional: bool = False,
    ) -> np.ndarray:
        """A numeric array attribute, checked.

        Parameters
        ----------
        kind : str
            Allowed dtype kinds (``"f"`` float, ``"i"`` signed int, ``"u"``, ``"b"`` bool,
            ``"U"`` text); integer kinds accept both ``i`` and ``u``.
        ndim : int or None
        shape : tuple, optional
            Expected shape; None entries are free.
        finite : bool
            Floats must be finite (NaN and inf refused).
        lo, hi : float, optional
            Inclusive bounds of every value.
        optional : bool
            None is allowed (and returned).
        """
        value = self.get(attr, optional)
        if value is None and optional:
            return None  # type: ignore[return-value]
        if not isinstance(value, np.ndarray):
            raise self.fail(attr, f"must be an array, got {type(value).__name__}")
        self._arrays.append(value)
        kinds = kind + ("iu" if "i" in kind else "")
        if value.dtype.kind not in kinds or value.dtype.fields is not None:
            raise self.fail(attr, f"has dtype {value.dtype}, expected kind {kind!r}")
        if ndim is not None and value.ndim != ndim:
            raise self.fail(attr, f"has {value.ndim} dimensions, expected {ndim}")
        if shape is not None and (
            len(shape) != value.ndim
            or any(s is not None and int(s) != v for s, v in zip(shape, value.shape, strict=True))
        ):
            want = tuple("*" if s is None else int(s) for s in shape)
            raise self.fail(attr, f"has shape {value.shape}, expected {want}")
        if value.size and value.dtype.kind in "fiu":
            if value.dtype.kind == "f" and finite and not np.isfinite(value).all():
                raise self.fail(attr, "holds NaN or infinite values")
            if lo is not None or hi is not None:
                data = value[~np.isnan(value)] if value.dtype.kind == "f" else value
                if data.size:
                    low, high = data.min(), data.max()
                    if lo is not None and low < lo:
                        raise self.fail(attr, f"holds {low}, below {lo}")
                    if hi is not None and high > hi:
                        raise self.fail(attr, f"holds {high}, above {hi}")
        return value

    def index(self, attr: str, n: int, ndim: int = 1, shape: tuple | None = None) -> np.ndarray:
        """An integer array of indices into ``n`` items (``0 <= i < n``)."""
        return self.array(attr, "i", ndim, shape, lo=0, hi=n - 1)

    def pointer(self, attr: str, size: int, length: int) -> np.ndarray:
        """A CSR pointer: ``size`` entries from 0 rising to ``length``."""
        ptr = self.array(attr, "i", 1, (size,))
        if size and (ptr[0] != 0 or ptr[-1] != length):
            raise self.fail(attr, f"must run from 0 to {length}, runs {ptr[0]}..{ptr[-1]}")
        if size > 1 and np.any(np.diff(ptr) < 0):
            raise self.fail(attr, "must not decrease")
        return ptr

    def integer(self, attr: str, lo: int = 0, hi: int = MAX_COUNT, optional: bool = False) -> int:
        value = self.get(attr, optional)
        if value is None and optional:
            return None  # type: ignore[return-value]
        if isinstance(value, np.integer):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(attr, f"must be an integer, got {type(value).__name__}")
        if not lo <= value <= hi:
            raise self.fail(attr, f"is {value}, expected {lo}..{hi}")
        return value

    def number(
        self,
        attr: str,
        lo: float | None = None,
        hi: float | None = None,
        *,
        nan: bool = False,
        optional: bool = False,
    ) -> float:
        value = self.get(attr, optional)
        if value is None and optional:
            return None  # type: ignore[return-value]
        if isinstance(value, np.generic):
            if value.dtype.kind != "f":
                raise self.fail(attr, f"must be a float, got {value.dtype}")
            value = value.item()
        if not isinstance(value, (float, int)) or isinstance(value, bool):
            raise self.fail(attr, f"must be a number, got {type(value).__name__}")
        value = float(value)
        if math.isnan(value):
            if nan:
                return value
            raise self.fail(attr, "is NaN")
        if not math.isfinite(value):
            raise self.fail(attr, "is infinite")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.fail(attr, f"is {value}, expected {lo}..{hi}")
        return value

    def text(self, attr: str, choices: Iterable[str] | None = None, optional: bool = False) -> str:
        value = self.get(attr, optional)
        if value is None and optional:
            return None  # type: ignore[return-value]
        if isinstance(value, np.str_):
            value = str(value)
        if not isinstance(value, str):
            raise self.fail(attr, f"must be text, got {type(value).__name__}")
        if choices is not None and value not in tuple(choices):
            raise self.fail(attr, f"is {value!r}, expected one of {', '.join(choices)}")
        return value

    def flag(self, attr: str, optional: bool = False) -> bool:
        value = self.get(attr, optional)
        if value is None and optional:
            return None  # type: ignore[return-value]
        if not isinstance(value, (bool, np.bool_)):
            raise self.fail(attr, f"must be true or false, got {type(value).__name__}")
        return bool(value)

    def obj(self, attr: str, *types: str, optional: bool = False) -> Any:
        """A child object of one of ``types`` (short class names); already checked."""
        value = self.get(attr, optional)
        if value is None and optional:
            return None
        if type(value).__name__ not in types:
            got = "None" if value is None else type(value).__name__
            raise self.fail(attr, f"must be a {' or '.join(types)}, got {got}")
        return value

    def objs(self, attr: str, *types: str, size: int | None = None) -> list:
        """A list (or tuple, or object array) of child objects of ``types``."""
        value = self.get(attr)
        if isinstance(value, np.ndarray) and value.dtype == object:
            value = list(value.ravel())
        if not isinstance(value, (list, tuple)):
            raise self.fail(attr, f"must be a list, got {type(value).__name__}")
        bad = next((v for v in value if type(v).__name__ not in types), None)
        if bad is not None:
            raise self.fail(attr, f"must hold {' or '.join(types)}, holds {type(bad).__name__}")
        if size is not None and len(value) != size:
            raise self.fail(attr, f"holds {len(value)} items, expected {size}")
        return list(value)

    def diagnostic(self, attr: str) -> Any:
        """An attribute prediction never reads (tuning tables, diagnostics): any checked
        content, arrays included (their size is bounded by the file's declarations)."""
        return self.get(attr, optional=True)

    def fitted(self) -> bool:
        """Whether a scikit-learn object is fitted (a template inside a forest is not)."""
        return "n_features_in_" in self.state

    def done(self) -> None:
        """Refuse attributes not read that hold arrays (only plain values may go unread)."""
        for key, value in self.state.items():
            if key not in self._read and _holds_array(value):
                raise self.fail(key, "is an array this type does not hold")


def _holds_array(value: Any, depth: int = 0) -> bool:
    if isinstance(value, np.ndarray):
        return True
    if depth > 3:
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds_array(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_holds_array(v, depth + 1) for v in value.values())
    return False


# ------------------------------------------------------------------------------ registry
Validator = Callable[[State], None]
#: ``module:QualName`` -> validator of the decoded state (before the object is built).
VALIDATORS: dict[str, Validator] = {}


def validator(*names: str) -> Callable[[Validator], Validator]:
    """Register a validator for the classes ``names`` (``module:QualName``)."""

    def register(fn: Validator) -> Validator:
        for name in names:
            VALIDATORS[name] = fn
        return fn

    return register


def validate_state(cls_name: str, state: Any, where: str, member: Callable[[Any], str]) -> None:
    """Check the decoded ``state`` of an object of class ``cls_name``.

    Raises
    ------
    SchemaError
        Naming the object's place in the model, the attribute and its array member.
    """
    check = VALIDATORS.get(cls_name)
    short = cls_name.rpartition(":")[2]
    if check is None:
        raise SchemaError(f"{where}: type {cls_name} has no schema")
    if state is None:
        state = {}
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise SchemaError(f"{where} ({short}): its state must map names to values")
    s = State(cls_name, state, where, member)
    check(s)
    s.done()


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
    """Training points a checked ladder's coefficients follow (``Ladder`` or ``PathLadder``)."""
    if type(ladder).__name__ == "PathLadder":
        return int(ladder.path.y.size)
    return int(ladder.coef.shape[1])


@validator("wsvmgui.ladder.engines:PathLadder")
def _path_ladder(s: State) -> None:
    s.obj("path", "WeightPath")
    _weights(s, "weights")


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


@validator("wsvmgui.ladder.tuning:TuningResult")
def _tuning_result(s: State) -> None:
    lambdas = s.array("lambdas", "f", 1, lo=0.0)
    sigmas = s.array("sigmas", "f", 1, finite=False)
    cells = (lambdas.size, sigmas.size)
    s.array("egkl", "f", 2, cells, finite=False)
    s.array("error", "f", 2, cells, finite=False)
    s.array("screened", "f", 2, cells, finite=False, optional=True)


@validator("wsvmgui.ladder.noncrossing:FitRecord")
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


# --------------------------------------------------------------------------- scikit-learn
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


def check_tree_args(args: Any, where: str) -> None:
    """``Tree(n_features, n_classes, n_outputs)`` arguments, before the tree is built."""
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
