"""Fitted objects as JSON plus numpy arrays, and back, for trusted types only.

Nothing here unpickles: arrays are read with ``allow_pickle=False`` and objects are
rebuilt only for types on an allow-list, never by calling a function named in the file.

Encoding (each JSON object is a tagged node with exactly one ``$`` key):

- ``null``, booleans, integers, strings, finite floats, lists: as JSON;
- ``{"$float": "nan" | "inf" | "-inf"}``; ``{"$tuple": [...]}``; ``{"$dict": [[k, v], ...]}``;
  ``{"$set": [...]}``; ``{"$bytes": "<hex>"}``;
- ``{"$array": i}``: array number ``i`` (any non-object dtype, structured included);
  ``{"$scalar": i}``: a numpy scalar, stored as a 0-d array;
- ``{"$objarray": [shape, [items...]]}``: an object-dtype array, items encoded;
- ``{"$random_state": state}``: a ``numpy.random.RandomState`` (legacy MT19937 state);
- ``{"$object": "module:QualName", "id": k, "state": ..., ["args": ...]}``: an object of a
  trusted type, rebuilt like pickle does but only for that type: ``cls.__new__(cls)``
  then its state (``__setstate__`` or ``__dict__``); with ``args``, ``cls(*args)`` for the
  few compiled types that need constructor arguments (:data:`CONSTRUCTED`);
- ``{"$ref": k}``: the object ``id`` k again (shared references and cycles survive).

Trusted types (:func:`trusted_class`) are exactly the classes with a schema in
:data:`wsvmgui.io.schema.VALIDATORS`: wsvmgui's fitted classes and the scikit-learn types
Probing uses.  A new fitted class must be registered there before it can be saved.
Loading calls no function named in the file: wsvmgui's classes are built with ``__new__``
(no ``__init__``) and given their attributes, and nothing outside the allow-list is ever
imported.

Decoding is bottom-up and checked: an object's state (its arrays and its already checked
child objects) is validated by its schema *before* the object is built, a ``$ref`` may
only name a finished object (no cycles), nesting is limited to :data:`MAX_DEPTH`, and
every array of the file must be used.  Timings are written as 0.0
(:func:`wsvmgui.io.schema.scrub_timing`), so the same fit gives the same bytes.
"""

from __future__ import annotations

import copyreg
import importlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from . import schema


class UntrustedTypeError(InputError):
    """A type outside the allow-list, met while saving or loading."""


#: Deepest nesting of a decoded node (a real model nests about 15 deep).
MAX_DEPTH = 64

#: Types rebuilt by calling the class with stored (plain-data) arguments.
CONSTRUCTED = frozenset(
    {
        "sklearn.tree._tree:Tree",
        "sklearn._loss._loss:CyHalfBinomialLoss",
    }
)

#: Third-party types a model may hold (the Probing learners and what they contain).
TRUSTED_EXTERNAL = CONSTRUCTED | frozenset(
    {
        "sklearn.svm._classes:SVC",
        "sklearn.linear_model._logistic:LogisticRegression",
        "sklearn.tree._classes:DecisionTreeClassifier",
        "sklearn.tree._classes:DecisionTreeRegressor",
        "sklearn.ensemble._forest:RandomForestClassifier",
        "sklearn.ensemble._gb:GradientBoostingClassifier",
        "sklearn.dummy:DummyClassifier",
        "sklearn.naive_bayes:GaussianNB",
        "sklearn._loss.loss:HalfBinomialLoss",
        "sklearn._loss.link:LogitLink",
        "sklearn._loss.link:Interval",
    }
)

#: How pickle (protocol 2+) builds an object without calling ``__init__``:
#: ``cls.__new__(cls)``.  typeshed's copyreg stub omits it (Lib/copyreg.py defines it).
_NEWOBJ = copyreg.__newobj__  # type: ignore[attr-defined]
_NAME = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


#: Classes that moved, by the name files written before use -> their name now (the
#: current name is what is checked and built).
MOVED = {
    "wsvmgui.ladder.gridsearch:TuningResult": "wsvmgui.ladder.tuning_table:TuningResult",
}


def type_name(cls: type) -> str:
    """``module:QualName`` of a class."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(name: str) -> type:
    module_name, _, qualname = name.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise UntrustedTypeError(
            f"type {name} does not exist in this installation (the file was made by another "
            "version of wsvmgui or scikit-learn)"
        ) from None
    if not isinstance(obj, type) or type_name(obj) != name:
        raise UntrustedTypeError(f"{name} is not a class")
    return obj


def trusted_class(name: str) -> type[Any]:
    """The class named ``module:QualName`` if it is trusted; UntrustedTypeError otherwise.

    A name is checked before anything is imported: only the modules of classes with a
    schema (:data:`wsvmgui.io.schema.VALIDATORS`) are ever imported.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise UntrustedTypeError(f"bad type name {name!r}")
    if name not in schema.VALIDATORS:
        raise UntrustedTypeError(f"type {name} is not a trusted model type (it has no schema)")
    return _resolve(name)


class Encoder:
    """Turns an object graph into a JSON-able tree plus a list of arrays."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self._array_ids: dict[int, int] = {}
        self._object_ids: dict[int, int] = {}
        self._keep: list[Any] = []  # keep encoded objects alive so ids stay unique

    def encode(self, obj: Any) -> Any:
        """The JSON-able node of ``obj``; raises UntrustedTypeError for other types."""
        if isinstance(obj, np.ndarray):
            return self._array(obj)
        if isinstance(obj, np.generic):  # before str and float: np.str_, np.float64 subclass them
            return {"$scalar": self._store(np.asarray(obj))}
        if obj is None or isinstance(obj, (bool, str)):
            return str(obj) if isinstance(obj, str) else obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            if np.isfinite(obj):
                return float(obj)
            return {"$float": "nan" if np.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        if type(obj) is list:
            return [self.encode(v) for v in obj]
        if type(obj) is tuple:
            return {"$tuple": [self.encode(v) for v in obj]}
        if type(obj) is dict:
            return {"$dict": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if type(obj) in (set, frozenset):
            return {"$set": [self.encode(v) for v in sorted(obj, key=repr)]}
        if type(obj) is bytes:
            return {"$bytes": obj.hex()}
        if type(obj) is np.random.RandomState:
            return {"$random_state": self.encode(obj.get_state(legacy=True))}
        return self._object(obj)

    def _store(self, arr: np.ndarray) -> int:
        self.arrays.append(arr)
        self._keep.append(arr)
        return len(self.arrays) - 1

    def _array(self, arr: np.ndarray) -> dict[str, Any]:
        if arr.dtype.hasobject:
            if arr.dtype != object:
                raise UntrustedTypeError(f"cannot save a structured array with objects {arr.dtype}")
            return {"$objarray": [list(arr.shape), [self.encode(v) for v in arr.ravel()]]}
        index = self._array_ids.get(id(arr))
        if index is None:
            index = self._array_ids[id(arr)] = self._store(arr)
        return {"$array": index}

    def _object(self, obj: Any) -> dict[str, Any]:
        if id(obj) in self._object_ids:
            return {"$ref": self._object_ids[id(obj)]}
        cls = type(obj)
        name = type_name(cls)
        trusted_class(name)
        reduced = obj.__reduce_ex__(4)
        if not isinstance(reduced, tuple) or len(reduced) < 2:
            raise UntrustedTypeError(f"cannot save an object of type {name}")
        func, args, state = reduced[0], reduced[1], reduced[2] if len(reduced) > 2 else None
        if any(r is not None for r in reduced[3:]):
            raise UntrustedTypeError(f"cannot save an object of type {name} (list/dict items)")
        k = len(self._object_ids)
        self._object_ids[id(obj)] = k
        self._keep.append(obj)
        node: dict[str, Any] = {"$object": name, "id": k}
        if func is _NEWOBJ and tuple(args) == (cls,):
            pass
        elif func is cls and name in CONSTRUCTED:
            node["args"] = self.encode(tuple(args))
        else:
            raise UntrustedTypeError(f"cannot save an object of type {name} (custom reduce)")
        node["state"] = self.encode(schema.scrub_timing(state))
        return node


class Decoder:
    """Rebuilds what :class:`Encoder` wrote, from trusted types only, checking each object.

    Parameters
    ----------
    arrays : sequence of ndarray
        The file's arrays, in member order (``arrays/<i>.npy``).
    """

    def __init__(self, arrays: Sequence[np.ndarray]) -> None:
        self.arrays = arrays
        self.used = [False] * len(arrays)
        self._objects: dict[int, Any] = {}
        self._member = {id(a): f"arrays/{i}.npy" for i, a in enumerate(arrays)}
        self._depth = 0
        self._where = ["model"]

    def member(self, value: Any) -> str:
        """The zip member an array came from ('' for arrays made while decoding)."""
        return self._member.get(id(value), "")

    def decode(self, node: Any, where: str | None = None) -> Any:
        """The object of ``node``; InputError (or a subclass) for anything malformed."""
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        self._depth += 1
        if where is not None:
            self._where.append(where)
        try:
            if self._depth > MAX_DEPTH:
                raise InputError(f"{self.where}: nested more than {MAX_DEPTH} deep")
            if isinstance(node, list):
                return [self.decode(v) for v in node]
            if not isinstance(node, dict):
                raise InputError(f"unexpected {type(node).__name__} node")
            tags = [k for k in node if k.startswith("$")]
            if len(tags) != 1:
                raise InputError(f"node with keys {sorted(node)[:5]} is not a tagged value")
            tag = tags[0]
            value = node[tag]
            handler = getattr(self, "_" + tag[1:], None)
            if handler is None:
                raise InputError(f"unknown node tag {tag!r}")
            return handler(value, node)
        finally:
            self._depth -= 1
            if where is not None:
                self._where.pop()

    @property
    def where(self) -> str:
        return ".".join(self._where)

    def unused(self) -> list[int]:
        """Indices of the file's arrays no node referred to."""
        return [i for i, u in enumerate(self.used) if not u]

    def _float(self, value: Any, node: dict) -> float:
        if value not in ("nan", "inf", "-inf"):
            raise InputError(f"bad $float {value!r}")
        return float(value)

    def _tuple(self, value: Any, node: dict) -> tuple:
        return tuple(self.decode(v) for v in _list(value, "$tuple"))

    def _dict(self, value: Any, node: dict, named: bool = False) -> dict:
        out = {}
        for pair in _list(value, "$dict"):
            if not isinstance(pair, list) or len(pair) != 2:
                raise InputError("$dict entries must be [key, value] pairs")
            key = self.decode(pair[0])
            try:
                hash(key)
            except TypeError:
                raise InputError(f"unhashable $dict key of type {type(key).__name__}") from None
            out[key] = self.decode(pair[1], str(key) if named and isinstance(key, str) else None)
        return out

    def _set(self, value: Any, node: dict) -> set:
        return set(self._tuple(value, node))

    def _bytes(self, value: Any, node: dict) -> bytes:
        if not isinstance(value, str):
            raise InputError("$bytes must be hex text")
        return bytes.fromhex(value)

    def _get_array(self, value: Any) -> np.ndarray:
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or not 0 <= value < len(self.arrays)
        ):
            raise InputError(f"array reference {value!r} out of range")
        self.used[value] = True
        return self.arrays[value]

    def _array(self, value: Any, node: dict) -> np.ndarray:
        return self._get_array(value)

    def _scalar(self, value: Any, node: dict) -> np.generic:
        arr = self._get_array(value)
        if arr.ndim != 0:
            raise InputError(f"$scalar must refer to a 0-d array ({self.member(arr)})")
        value = arr[()]
        if not isinstance(value, np.generic):
            raise InputError(f"$scalar must refer to an array of a numpy type ({self.member(arr)})")
        return value

    def _objarray(self, value: Any, node: dict) -> np.ndarray:
        value = _list(value, "$objarray")
        if len(value) != 2:
            raise InputError("$objarray must be [shape, items]")
        shape = tuple(_list(value[0], "$objarray shape"))
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise InputError("$objarray shape must be non-negative integers")
        items = _list(value[1], "$objarray items")
        if len(shape) > 8 or int(np.prod(shape, dtype=object)) != len(items):
            raise InputError("$objarray shape does not match its items")
        out = np.empty(len(items), dtype=object)
        for i, v in enumerate(items):
            out[i] = self.decode(v)
        return out.reshape(shape)

    def _random_state(self, value: Any, node: dict) -> np.random.RandomState:
        state = self.decode(value)
        schema.check_random_state(state, self.where)
        rs = np.random.RandomState()
        rs.set_state(state)
        return rs

    def _ref(self, value: Any, node: dict) -> Any:
        if isinstance(value, bool) or value not in self._objects:
            raise InputError(f"{self.where}: $ref {value!r} to an object not finished before")
        return self._objects[value]

    def _object(self, value: Any, node: dict) -> Any:
        if set(node) - {"$object", "id", "state", "args"}:
            raise InputError("unexpected keys in an $object node")
        value = MOVED.get(value, value) if isinstance(value, str) else value
        cls = trusted_class(value)
        k = node.get("id")
        if not isinstance(k, int) or isinstance(k, bool) or k in self._objects:
            raise InputError(f"bad or repeated object id {k!r}")
        args = None
        if "args" in node:
            if value not in CONSTRUCTED:
                raise UntrustedTypeError(f"type {value} may not be constructed with arguments")
            args = self.decode(node["args"])
            if not isinstance(args, tuple):
                raise InputError("$object args must be a $tuple")
        raw = node.get("state")
        if isinstance(raw, dict) and set(raw) == {"$dict"}:
            state = self._dict(raw["$dict"], raw, named=True)
        else:
            state = self.decode(raw)
        where = self.where
        schema.validate_state(value, state, where, self.member)
        if value == schema.TREE:
            _check_tree_state(schema.check_tree_args(args, where), state, where)
        obj = cls(*args) if args is not None else _NEWOBJ(cls)
        _set_state(obj, state)
        self._objects[k] = obj
        return obj


def _check_tree_state(args: tuple, state: dict, where: str) -> None:
    """A tree's splits read features it has and its values hold its classes (pre-build)."""
    nodes, values = state["nodes"], state["values"]
    inner = nodes["left_child"] != -1
    if np.any(nodes["feature"][inner] >= args[0]):
        raise schema.SchemaError(f"{where}.nodes (Tree): a split reads a feature beyond {args[0]}")
    if values.shape[2] != int(args[1][0]):
        raise schema.SchemaError(f"{where}.values (Tree): holds {values.shape[2]} classes, "
                                 f"the tree {int(args[1][0])}")  # fmt: skip


def _list(value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise InputError(f"{what} must be a list")
    return value


def _set_state(obj: Any, state: Any) -> None:
    """Apply ``state`` as pickle's BUILD does (``__setstate__`` or ``__dict__``/slots)."""
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is not None and not (
            isinstance(part, dict) and all(isinstance(k, str) for k in part)
        ):
            raise InputError(f"state of {type(obj).__name__} must map names to values")
    if state:
        obj.__dict__.update(state)
    for key, val in (slots or {}).items():
        object.__setattr__(obj, key, val)
