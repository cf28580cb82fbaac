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
:data:`VALIDATORS` maps a class's ``module:QualName`` to its validator (wsvmgui's classes
in :mod:`.schema_wsvmgui`, the scikit-learn ones in :mod:`.schema_sklearn`); a class that is
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


# The validators register themselves on import (kept in two modules by family).
from . import schema_sklearn, schema_wsvmgui  # noqa: E402, F401
from .schema_sklearn import TREE, check_random_state, check_tree_args  # noqa: E402, F401
