"""Session files of the desktop app: data reference, settings, view and results (JSON).

A session names its data (a built-in data set with its size and seed, or a file by path
with its SHA-256, label and feature columns), the split, the run settings, what the views
showed, and the results of the last run: every row's probabilities and the measures.  No
fitted model is stored: runs are deterministic given the data, settings and seed, so
reopening a session runs the fit again and :func:`compare_results` checks that it
reproduced the saved probabilities.  Only plain JSON is read: nothing in a session file
is executed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io.atomic import atomic_write_text
from .settings import RunSettings

SESSION_VERSION = 1
SESSION_SUFFIX = ".wsvm-session.json"
#: Largest difference of probabilities still counted as the same result.
REPRODUCE_TOL = 1e-6


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class Session:
    """Everything needed to reopen the app where it was.

    Attributes
    ----------
    data : dict
        ``{"kind": "builtin", "name", "n"?, "seed"?}`` or
        ``{"kind": "file", "path", "sha256", "label", "features"}``.
    split : dict
        ``{"test_fraction": float, "standardise": bool}``.
    settings : RunSettings
    preset : str
    compare : bool
    view : dict
        ``{"tab", "ix", "iy", "reference" (list or None), "follow", "selected"}``.
    results : dict or None
        ``{"scheme", "seconds", "classes", "proba" (n x K list), "metrics"}`` of the run
        shown when the session was saved.
    """

    data: dict[str, Any]
    split: dict[str, Any]
    settings: RunSettings
    preset: str = "custom"
    compare: bool = False
    view: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_version": SESSION_VERSION,
            "data": self.data,
            "split": self.split,
            "settings": self.settings.to_dict(),
            "preset": self.preset,
            "compare": self.compare,
            "view": self.view,
            "results": self.results,
        }


def results_record(result: Any) -> dict[str, Any]:
    """The results part of a session from a finished run (:class:`RunResult`)."""
    return {
        "scheme": result.settings.scheme,
        "seconds": round(float(result.seconds), 3),
        "classes": [_plain(c) for c in result.report.classes],
        "proba": np.round(np.asarray(result.report.proba, float), 12).tolist(),
        "metrics": _finite(result.metrics),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def _finite(obj: Any) -> Any:
    """Metrics with non-finite numbers as None (JSON has no NaN)."""
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return _plain(obj)


def save_session(path: str | os.PathLike, session: Session) -> None:
    """Write ``session`` as JSON, atomically; a data file's digest is recorded now."""
    data = dict(session.data)
    if data.get("kind") == "file":
        try:
            data["sha256"] = file_digest(data["path"])
        except OSError as exc:
            raise InputError(f"cannot read the data file {data['path']}: {exc}") from None
    body = Session(
        data,
        session.split,
        session.settings,
        session.preset,
        session.compare,
        session.view,
        session.results,
    ).to_dict()
    atomic_write_text(path, json.dumps(body, indent=1, allow_nan=False) + "\n")


def _require(mapping: Any, key: str, kinds, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise InputError(f"session file: {where} lacks {key!r}")
    value = mapping[key]
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
        raise InputError(f"session file: {where}.{key} has the wrong type")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_session(path: str | os.PathLike) -> Session:
    """Read and check a session file (InputError with one line naming the problem)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{Path(path).name} is not a session file (not UTF-8 text)") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise InputError(
            f"{Path(path).name} is not a session file (JSON nested too deep)"
        ) from None
    except ValueError as exc:  # invalid JSON, NaN/Infinity, an integer of > 4300 digits
        why = " ".join(str(exc).split())[:200]
        raise InputError(f"{Path(path).name} is not a session file (invalid JSON: {why})") from None
    if not isinstance(body, dict) or "session_version" not in body:
        raise InputError(f"{Path(path).name} is not a wsvmgui session file")
    if body["session_version"] != SESSION_VERSION:
        raise InputError(
            f"session version {str(body['session_version'])[:40]} is not supported "
            f"(expected {SESSION_VERSION})"
        )
    data = _require(body, "data", dict, "the session")
    kind = _require(data, "kind", str, "data")
    if kind == "builtin":
        _require(data, "name", str, "data")
    elif kind == "file":
        _require(data, "path", str, "data")
        _require(data, "label", str, "data")
        _require(data, "features", list, "data")
    else:
        raise InputError(f"session file: unknown data kind {kind!r}")
    split = _require(body, "split", dict, "the session")
    fraction = _require(split, "test_fraction", (int, float), "split")
    if not 0 <= fraction < 1:
        raise InputError(f"session file: test fraction {fraction} is not in [0, 1)")
    _require(split, "standardise", bool, "split")
    settings = RunSettings.from_dict(_require(body, "settings", dict, "the session"))
    view = body.get("view") or {}
    if not isinstance(view, dict):
        raise InputError("session file: view must be an object")
    results = body.get("results")
    if results is not None:
        try:
            proba = np.asarray(_require(results, "proba", list, "results"), dtype=float)
        except (TypeError, ValueError, OverflowError, RecursionError):
            proba = np.empty(0)
        if proba.ndim != 2:
            raise InputError("session file: results.proba must be a table of numbers")
    return Session(
        data,
        split,
        settings,
        str(body.get("preset", "custom")),
        bool(body.get("compare", False)),
        view,
        results,
    )


def check_data_file(data: dict[str, Any]) -> str:
    """For a file reference: '' if the file is there and unchanged, else a warning.

    Raises
    ------
    InputError
        The file is missing.
    """
    if data.get("kind") != "file":
        return ""
    path = data["path"]
    if not os.path.isfile(path):
        raise InputError(f"the session's data file {path} is not there any more")
    digest = data.get("sha256")
    if digest and file_digest(path) != digest:
        return f"the data file {os.path.basename(path)} changed since the session was saved"
    return ""


def compare_results(saved: dict[str, Any] | None, result: Any) -> tuple[bool, float]:
    """Whether a new run reproduced the saved probabilities; and the largest difference."""
    if not saved:
        return False, float("nan")
    old = np.asarray(saved.get("proba", []), dtype=float)
    new = np.asarray(result.report.proba, dtype=float)
    if old.shape != new.shape:
        return False, float("inf")
    diff = float(np.max(np.abs(old - new))) if old.size else 0.0
    return diff <= REPRODUCE_TOL, diff
