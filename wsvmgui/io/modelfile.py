"""Model files that cannot run code: a zip of one JSON manifest and numpy arrays.

Layout of a model file (suffix ``.wsvm`` by convention)::

    manifest.json       the schema below, UTF-8 JSON
    arrays/0.npy ...    numpy arrays referenced by the manifest (no object arrays)

Manifest (schema 1)::

    format            "wsvmgui-model"
    schema            1
    wsvmgui_version   version that wrote it; loading requires the same version
    libraries         {"numpy": ..., "scikit-learn": ...} versions that wrote it
    label             label column of the training data
    classes           class labels (text)
    feature_names     feature columns, in order
    preprocessing     missing-value choice, medians, means, scales (plain JSON)
    settings          the run settings (plain JSON)
    meta              provenance (plain JSON: training file digest, rows, tuned values)
    estimator         the fitted estimator, encoded by :mod:`wsvmgui.io.serialize`
    check             {"X": ..., "proba": ...}: rows and the probabilities the estimator
                      gave them when saved; loading predicts them again and refuses a
                      model that does not reproduce them
    n_arrays          number of array members

Loading never unpickles: arrays are read with ``allow_pickle=False`` and objects are
rebuilt only for trusted types (:mod:`wsvmgui.io.serialize`).  Old pickle/joblib model
files are refused with a message saying how to refit.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import InputError
from ..estimators.report import ProbabilityReport
from .atomic import atomic_write_bytes, check_input
from .preprocessing import PreparedRows, Preprocessing, prepare_rows
from .serialize import Decoder, Encoder, UntrustedTypeError
from .tables import LabelledData

FORMAT = "wsvmgui-model"
SCHEMA = 1
SUFFIX = ".wsvm"
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 256 * 2**20
MAX_TOTAL_BYTES = 16 * 2**30
CHECK_ROWS = 8
CHECK_ATOL = 1e-9
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_REFIT = "refit it with: wsvmgui fit DATA --label LABEL --out OUT.csv --model MODEL.wsvm"


class ModelFileError(InputError):
    """A file that is not a usable wsvmgui model file; the message says why."""


def _libraries() -> dict[str, str]:
    import sklearn

    return {"numpy": np.__version__, "scikit-learn": sklearn.__version__}


@dataclass(frozen=True)
class FittedModel:
    """A fitted estimator with everything needed to predict new rows of a table.

    Attributes
    ----------
    estimator : fitted wsvmgui estimator
        Takes preprocessed features, shape (n, p).
    preprocessing : Preprocessing
        Applied to raw feature columns before the estimator.
    label : str
        Label column of the training data.
    settings : dict
        The run settings (``RunSettings.to_dict()``).
    meta : dict
        Plain-JSON provenance.
    """

    estimator: Any
    preprocessing: Preprocessing
    label: str
    settings: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def feature_names(self) -> tuple[str, ...]:
        return self.preprocessing.feature_names

    @property
    def classes(self) -> list[str]:
        return [str(c) for c in self.estimator.classes_]

    def prepare(self, data: LabelledData) -> PreparedRows:
        """Preprocess rows to predict (missing values as fitted; labels optional)."""
        return prepare_rows(self.preprocessing, data, "rows to predict", labels=False)

    def predict(self, data: LabelledData) -> tuple[PreparedRows, ProbabilityReport]:
        """Probabilities for the usable rows of ``data``: the rows and their report."""
        rows = self.prepare(data)
        return rows, self.estimator.report(rows.X)


def check_rows(X: np.ndarray | None, n_features: int, k: int = CHECK_ROWS) -> np.ndarray:
    """Synthetic rows near the training rows ``X`` (n, p) for a model's self-check.

    Drawn from a normal distribution with the columns' means and standard deviations
    (fixed seed), so no training row is stored for the check; shape (k, p).
    """
    rng = np.random.default_rng(20240611)
    z = rng.standard_normal((k, n_features))
    if X is None or X.size == 0:
        return z
    return X.mean(axis=0) + X.std(axis=0) * z


def model_to_bytes(model: FittedModel, X_check: np.ndarray | None = None) -> bytes:
    """The model file's bytes (deterministic: fixed member order and times).

    Parameters
    ----------
    model : FittedModel
    X_check : ndarray, shape (k, p), optional
        Model-space rows for the self-check; default :func:`check_rows` of nothing.

    Raises
    ------
    UntrustedTypeError
        The estimator holds a type the format does not allow.
    """
    p = len(model.feature_names)
    X_check = check_rows(None, p) if X_check is None else np.asarray(X_check, dtype=float)
    proba = np.asarray(model.estimator.predict_proba(X_check), dtype=float)
    enc = Encoder()
    manifest = {
        "format": FORMAT,
        "schema": SCHEMA,
        "wsvmgui_version": __version__,
        "libraries": _libraries(),
        "label": model.label,
        "classes": model.classes,
        "feature_names": list(model.feature_names),
        "preprocessing": model.preprocessing.to_dict(),
        "settings": model.settings,
        "meta": model.meta,
        "estimator": enc.encode(model.estimator),
        "check": {"X": enc.encode(X_check), "proba": enc.encode(proba)},
    }
    manifest["n_arrays"] = len(enc.arrays)
    text = json.dumps(manifest, sort_keys=True, allow_nan=False, separators=(",", ":"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        _member(zf, MANIFEST, text.encode("utf-8"))
        for i, arr in enumerate(enc.arrays):
            out = io.BytesIO()
            np.lib.format.write_array(out, arr, allow_pickle=False)
            _member(zf, f"arrays/{i}.npy", out.getvalue())
    return buf.getvalue()


def _member(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def save_model(
    path: str | os.PathLike, model: FittedModel, X_check: np.ndarray | None = None
) -> str:
    """Write ``model`` to ``path`` atomically; returns the file's sha256 (hex)."""
    import hashlib

    data = model_to_bytes(model, X_check)
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def _sniff_foreign(head: bytes, source: str) -> None:
    if head.startswith(b"PK\x03\x04"):
        return
    pickled = head[:1] == b"\x80" or head[:2] in (b"x\x9c", b"x\x01", b"x\xda", b"x^")
    compressed = head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"\x04\x22\x4d\x18"))
    if pickled or compressed:
        raise ModelFileError(
            f"{source} is an old pickle/joblib model file; wsvmgui no longer opens those "
            f"because opening one can run any code it holds; {_REFIT}"
        )
    raise ModelFileError(f"{source} is not a wsvmgui model file")


def model_from_bytes(data: bytes, source: str = "model file") -> FittedModel:
    """Rebuild a model from :func:`model_to_bytes` output, checking everything.

    Raises
    ------
    ModelFileError
        Not a model file, a pickle, another schema or wsvmgui version, damaged content,
        an untrusted type, or a model that does not reproduce its check probabilities.
    """
    _sniff_foreign(data[:8], source)
    try:
        manifest, arrays = _read_zip(data, source)
        _check_manifest(manifest, source)
        decoder = Decoder(arrays)
        estimator = decoder.decode(manifest["estimator"])
        X_check = decoder.decode(manifest["check"]["X"])
        proba = decoder.decode(manifest["check"]["proba"])
        preprocessing = Preprocessing.from_dict(manifest["preprocessing"])
    except ModelFileError:
        raise
    except UntrustedTypeError as exc:
        raise ModelFileError(f"{source}: {exc}; {_REFIT}") from None
    except InputError as exc:
        raise ModelFileError(f"{source} is damaged: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - anything a damaged member raises while rebuilt
        raise ModelFileError(f"{source} is damaged: {_why(exc)}") from None
    model = FittedModel(
        estimator, preprocessing, manifest["label"], manifest["settings"], manifest["meta"]
    )
    _self_check(model, manifest, X_check, proba, source)
    return model


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _read_zip(data: bytes, source: str) -> tuple[dict, list[np.ndarray]]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise ModelFileError(f"{source} is damaged (not a complete zip archive)") from None
    with zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        if MANIFEST not in names:
            raise ModelFileError(f"{source} is not a wsvmgui model file (no {MANIFEST})")
        if sum(i.file_size for i in infos) > MAX_TOTAL_BYTES:
            raise ModelFileError(f"{source} unpacks to more than {MAX_TOTAL_BYTES} bytes")
        if zf.getinfo(MANIFEST).file_size > MAX_MANIFEST_BYTES:
            raise ModelFileError(f"{source}: its manifest is too large")
        try:
            manifest = json.loads(zf.read(MANIFEST).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            why = _why(exc)
            raise ModelFileError(f"{source}: its manifest is not valid JSON ({why})") from None
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise ModelFileError(f"{source} is damaged ({_why(exc)})") from None
        if not isinstance(manifest, dict):
            raise ModelFileError(f"{source}: its manifest is not a JSON object")
        if manifest.get("format") != FORMAT:
            raise ModelFileError(f"{source} is not a wsvmgui model file (format is not {FORMAT})")
        n = manifest.get("n_arrays")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ModelFileError(f"{source}: n_arrays must be a non-negative integer")
        expected = {MANIFEST} | {f"arrays/{i}.npy" for i in range(n)}
        if set(names) != expected or len(names) != len(expected):
            raise ModelFileError(f"{source}: its members do not match its manifest")
        arrays = []
        for i in range(n):
            try:
                with zf.open(f"arrays/{i}.npy") as handle:
                    arrays.append(np.lib.format.read_array(handle, allow_pickle=False))
            except Exception as exc:  # noqa: BLE001 - damaged member: any numpy/zip error
                raise ModelFileError(f"{source}: array {i} is damaged ({_why(exc)})") from None
    return manifest, arrays


_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema": int,
    "wsvmgui_version": str,
    "libraries": dict,
    "label": str,
    "classes": list,
    "feature_names": list,
    "preprocessing": dict,
    "settings": dict,
    "meta": dict,
    "estimator": dict,
    "check": dict,
}


def _check_manifest(manifest: dict, source: str) -> None:
    for key, kind in _REQUIRED.items():
        if key not in manifest:
            raise ModelFileError(f"{source}: its manifest has no {key!r}")
        if not isinstance(manifest[key], kind) or isinstance(manifest[key], bool):
            raise ModelFileError(f"{source}: manifest entry {key!r} has the wrong type")
    if manifest["schema"] != SCHEMA:
        raise ModelFileError(
            f"{source} has model schema {manifest['schema']}; this wsvmgui reads schema "
            f"{SCHEMA}; {_REFIT}"
        )
    if manifest["wsvmgui_version"] != __version__:
        raise ModelFileError(
            f"{source} was written by wsvmgui {manifest['wsvmgui_version']!r}, this is "
            f"{__version__}; {_REFIT}"
        )
    wrote = manifest["libraries"].get("scikit-learn")
    now = _libraries()["scikit-learn"]
    if wrote != now and '"sklearn.' in json.dumps(manifest["estimator"]):
        raise ModelFileError(
            f"{source} holds scikit-learn {wrote} objects, this is scikit-learn {now}; {_REFIT}"
        )
    if set(manifest["check"]) != {"X", "proba"}:
        raise ModelFileError(f"{source}: manifest entry 'check' needs X and proba")
    for key in ("classes", "feature_names"):
        if not manifest[key] or not all(isinstance(v, str) for v in manifest[key]):
            raise ModelFileError(f"{source}: manifest entry {key!r} must list names")


def _self_check(model: FittedModel, manifest: dict, X_check: Any, proba: Any, source: str) -> None:
    est = model.estimator
    p = len(model.feature_names)
    if list(manifest["feature_names"]) != list(model.feature_names):
        raise ModelFileError(f"{source}: feature names disagree with its preprocessing")
    if not (
        isinstance(X_check, np.ndarray)
        and isinstance(proba, np.ndarray)
        and X_check.ndim == 2
        and X_check.shape[1] == p
        and proba.shape == (X_check.shape[0], len(manifest["classes"]))
        and X_check.dtype.kind == "f"
        and proba.dtype.kind == "f"
    ):
        raise ModelFileError(f"{source}: its check rows are malformed")
    try:
        classes = [str(c) for c in est.classes_]
        got = np.asarray(est.predict_proba(X_check), dtype=float)
    except Exception as exc:  # noqa: BLE001 - a damaged estimator fails in any way
        raise ModelFileError(
            f"{source} is damaged: its estimator cannot predict ({_why(exc)}); {_REFIT}"
        ) from None
    if classes != manifest["classes"]:
        raise ModelFileError(f"{source}: its estimator's classes disagree with its manifest")
    if got.shape != proba.shape or not np.allclose(got, proba, rtol=0.0, atol=CHECK_ATOL):
        raise ModelFileError(
            f"{source} does not reproduce the probabilities it was saved with (damaged, "
            f"or made with other library versions); {_REFIT}"
        )


def load_model(path: str | os.PathLike) -> FittedModel:
    """Read and check a model file written by :func:`save_model`.

    Raises
    ------
    ModelFileError
        With one line saying what is wrong and, where it helps, how to refit.
    """
    source = str(path)
    check_input(path, "model")
    try:
        size = os.path.getsize(path)
        if size > MAX_TOTAL_BYTES:
            raise ModelFileError(f"{source} is too large to be a model file")
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {source}: {exc.strerror or exc}") from None
    return model_from_bytes(data, source)
