"""Model files that cannot run code: a zip of one JSON manifest and numpy arrays.

Layout of a model file (suffix ``.wsvm`` by convention)::

    manifest.json       the schema below, UTF-8 JSON
    arrays/0.npy ...    numpy arrays referenced by the manifest (no object arrays)

Manifest (model format 3)::

    format            "wsvmgui-model"
    schema            the model format version, :data:`SCHEMA`
    wsvmgui_version   version that wrote it (provenance: the format version decides)
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
    arrays            [dtype descr, shape] of every array member, in order

The model format version (``schema``) changes whenever what a file stores changes:

* 2: arrays declared in the manifest, every type checked by its schema;
* 3: every estimator stores the fitted vocabulary ``lambda_``, ``sigma_``, ``C_`` and
  ``tuning_`` (format 2 files load with it filled by :mod:`wsvmgui.io.vocabulary`).

A file of an older format than :data:`OLDEST_SCHEMA` is refused (refit), as is one of a
newer format than :data:`SCHEMA` (written by a newer wsvmgui: the message names both).

Loading never unpickles and is bounded by what the manifest declares.  In order:

1. the file is at most :data:`MAX_FILE_BYTES`; the zip's member count is compared with
   ``n_arrays`` before any per-member work; the manifest (at most
   :data:`MAX_MANIFEST_BYTES`, strict JSON: NaN, Infinity and integers of more than
   4300 digits are refused) is read;
2. the declared array bytes ``D`` (sum over ``arrays`` of items x item size) must be at
   most ``min(MAX_ARRAY_BYTES, RATIO_CAP x file size + RATIO_SLACK)`` (the
   compression-ratio cap), and every member's size in the zip directory must be exactly
   its ``.npy`` header plus its declared bytes, with a declared plain dtype (numbers,
   booleans, text, or the one structured layout of scikit-learn's tree nodes), before
   it is read; a member is read with no more than its declared bytes;
3. every object is checked by its type's schema (:mod:`wsvmgui.io.schema`) before it is
   built, bottom-up; every array must be used;
4. only then does compiled code run: the model predicts its check rows (8 written, at
   most :data:`MAX_CHECK_ROWS` read).

So loading costs time and memory O(file size + D + manifest size), with D bounded as in
step 2, plus one prediction of at most 64 rows (linear in the model's arrays).  Old pickle/joblib
model files are refused with a message saying how to refit.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._sklearn_compat import tree_node_dtype
from .._version import __version__
from ..errors import InputError
from ..estimators.report import ProbabilityReport, with_intervals
from .atomic import atomic_write_bytes, check_input
from .preprocessing import PreparedRows, Preprocessing, prepare_rows
from .serialize import Decoder, Encoder, UntrustedTypeError
from .tables import LabelledData
from .vocabulary import fill_vocabulary, missing_vocabulary

FORMAT = "wsvmgui-model"
#: The model format version this wsvmgui writes (the manifest's ``schema``).
SCHEMA = 3
#: The oldest model format this wsvmgui reads.
OLDEST_SCHEMA = 2
SUFFIX = ".wsvm"
MANIFEST = "manifest.json"
#: Largest model file read.
MAX_FILE_BYTES = 4 * 2**30
#: Largest manifest (JSON text).
MAX_MANIFEST_BYTES = 64 * 2**20
#: Largest total of declared array bytes.
MAX_ARRAY_BYTES = 8 * 2**30
#: Compression-ratio cap: declared array bytes at most RATIO_CAP x file size + RATIO_SLACK.
RATIO_CAP = 64
RATIO_SLACK = 16 * 2**20
#: Largest .npy header read.
MAX_NPY_HEADER = 4096
CHECK_ROWS = 8
#: Most check rows a file may hold (loading predicts them all).
MAX_CHECK_ROWS = 64
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
    format_version : int
        The model format of the file it was loaded from (:data:`SCHEMA` for a model not
        loaded, or loaded from a current file; saving always writes :data:`SCHEMA`).
    """

    estimator: Any
    preprocessing: Preprocessing
    label: str
    settings: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    format_version: int = SCHEMA

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
        return rows, self.report(rows.X)

    def report(self, X: np.ndarray) -> ProbabilityReport:
        """The estimator's report of preprocessed rows ``X`` (n, p), with per-point
        intervals when the run that made the model asked for them (``intervals``)."""
        report = self.estimator.report(X)
        if self.settings.get("intervals"):
            report = with_intervals(report, self.estimator, X)
        return report


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
    manifest["arrays"] = [_declare(a) for a in enc.arrays]
    text = json.dumps(manifest, sort_keys=True, allow_nan=False, separators=(",", ":"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        _member(zf, MANIFEST, text.encode("utf-8"))
        for i, arr in enumerate(enc.arrays):
            out = io.BytesIO()
            np.lib.format.write_array(out, arr, allow_pickle=False)
            _member(zf, f"arrays/{i}.npy", out.getvalue())
    data = buf.getvalue()
    try:  # what is written must load: the schema and the self-check, as a reader will
        model_from_bytes(data, "the model being saved")
    except ModelFileError as exc:
        raise UntrustedTypeError(f"cannot save this model: {exc}") from None
    return data


def _declare(arr: np.ndarray) -> list:
    """An array's manifest entry: ``[dtype descr, shape]``."""
    arr = np.asarray(arr)
    return [np.lib.format.dtype_to_descr(arr.dtype), list(arr.shape)]


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
        Not a model file, a pickle, a model format this wsvmgui does not read, damaged content,
        an untrusted type, or a model that does not reproduce its check probabilities.
    """
    _sniff_foreign(data[:8], source)
    try:
        manifest, arrays = _read_zip(data, source)
        _check_manifest(manifest, source)
        decoder = Decoder(arrays)
        estimator = decoder.decode(manifest["estimator"], "estimator")
        X_check = decoder.decode(manifest["check"]["X"], "check.X")
        proba = decoder.decode(manifest["check"]["proba"], "check.proba")
        unused = decoder.unused()
        if unused:
            raise ModelFileError(
                f"{source}: member arrays/{unused[0]}.npy is not used by its manifest"
            )
        preprocessing = Preprocessing.from_dict(manifest["preprocessing"])
        if manifest["schema"] < 3:
            fill_vocabulary(estimator)  # written before lambda_, sigma_, C_, tuning_ existed
        elif lacking := missing_vocabulary(estimator):
            raise ModelFileError(
                f"{source} is damaged: its estimator lacks {', '.join(lacking)} (model "
                f"format {manifest['schema']} stores them); {_REFIT}"
            )
    except ModelFileError:
        raise
    except UntrustedTypeError as exc:
        raise ModelFileError(f"{source}: {exc}; {_REFIT}") from None
    except InputError as exc:
        raise ModelFileError(f"{source} is damaged: {exc}") from None
    except RecursionError:
        raise ModelFileError(f"{source} is damaged: its manifest nests too deep") from None
    except Exception as exc:  # noqa: BLE001 - anything a damaged member raises while rebuilt
        raise ModelFileError(f"{source} is damaged: {_why(exc)}") from None
    model = FittedModel(
        estimator,
        preprocessing,
        manifest["label"],
        manifest["settings"],
        manifest["meta"],
        manifest["schema"],
    )
    _self_check(model, manifest, X_check, proba, source)
    return model


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _read_zip(data: bytes, source: str) -> tuple[dict, list[np.ndarray]]:
    """The manifest and the arrays, read within the bounds the manifest declares."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise ModelFileError(f"{source} is damaged (not a complete zip archive)") from None
    with zf:
        infos = zf.infolist()
        by_name = {i.filename: i for i in infos}
        if MANIFEST not in by_name:
            raise ModelFileError(f"{source} is not a wsvmgui model file (no {MANIFEST})")
        if by_name[MANIFEST].file_size > MAX_MANIFEST_BYTES:
            raise ModelFileError(
                f"{source}: its manifest is larger than {MAX_MANIFEST_BYTES} bytes"
            )
        try:
            with zf.open(MANIFEST) as handle:
                text = handle.read(MAX_MANIFEST_BYTES + 1).decode("utf-8")
            manifest = json.loads(text, parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            why = "nested too deep" if isinstance(exc, RecursionError) else _why(exc)
            raise ModelFileError(f"{source}: its manifest is not valid JSON ({why})") from None
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ModelFileError(f"{source} is damaged ({_why(exc)})") from None
        if not isinstance(manifest, dict):
            raise ModelFileError(f"{source}: its manifest is not a JSON object")
        if manifest.get("format") != FORMAT:
            raise ModelFileError(f"{source} is not a wsvmgui model file (format is not {FORMAT})")
        _check_format(manifest, source)
        n = manifest.get("n_arrays")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ModelFileError(f"{source}: n_arrays must be a non-negative integer")
        if len(infos) != n + 1:  # counts first: nothing is built from n before this
            raise ModelFileError(
                f"{source}: its manifest declares {n} arrays, the file holds {len(infos) - 1}"
            )
        if len(by_name) != len(infos) or any(f"arrays/{i}.npy" not in by_name for i in range(n)):
            raise ModelFileError(f"{source}: its members do not match its manifest")
        decl = _declarations(manifest.get("arrays"), n, source)
        total = sum(nbytes for _, _, nbytes in decl)
        limit = min(MAX_ARRAY_BYTES, RATIO_CAP * len(data) + RATIO_SLACK)
        if total > limit:
            raise ModelFileError(
                f"{source}: its arrays declare {total} bytes, more than {limit} for a file of "
                f"{len(data)} bytes (a model file inflates at most {RATIO_CAP} times)"
            )
        arrays = [
            _read_member(zf, by_name[f"arrays/{i}.npy"], d, source) for i, d in enumerate(decl)
        ]
    return manifest, arrays


def _declarations(entries: Any, n: int, source: str) -> list[tuple[np.dtype, tuple, int]]:
    """``(dtype, shape, bytes)`` of every declared array (plain dtypes only)."""
    NODE_DTYPE = tree_node_dtype()

    if not isinstance(entries, list) or len(entries) != n:
        raise ModelFileError(f"{source}: manifest entry 'arrays' must declare {n} arrays")
    out = []
    for i, entry in enumerate(entries):
        what = f"{source}: member arrays/{i}.npy"
        try:
            descr, shape = entry
            if (
                not isinstance(shape, list)
                or len(shape) > 8
                or not all(
                    isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**40 for v in shape
                )
            ):
                raise ValueError("bad shape")
            dtype = _declared_dtype(descr)
        except (TypeError, ValueError, KeyError):
            raise ModelFileError(f"{what} has a malformed declaration in the manifest") from None
        plain = dtype.fields is None and dtype.subdtype is None and dtype.kind in "biufU"
        if not (plain or dtype == NODE_DTYPE):
            raise ModelFileError(f"{what} declares dtype {dtype}, which a model does not hold")
        count = int(np.prod(shape, dtype=object))
        out.append((dtype, tuple(shape), count * dtype.itemsize))
    return out


def _declared_dtype(descr: Any) -> np.dtype:
    """The dtype a manifest declares: a dtype string, or a list of ``[name, dtype string]``
    fields (a tree's node records); ValueError for anything else."""
    if isinstance(descr, str):
        return np.dtype(descr)  # what np.lib.format.descr_to_dtype does with a string
    fields = [tuple(f) for f in descr] if isinstance(descr, list) else None
    if not fields or not all(len(f) == 2 and all(isinstance(v, str) for v in f) for f in fields):
        raise ValueError("bad dtype declaration")
    return np.lib.format.descr_to_dtype([(str(name), str(kind)) for name, kind in fields])


def _read_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, decl: tuple[np.dtype, tuple, int], source: str
) -> np.ndarray:
    """One ``.npy`` member, checked against its declaration before its data is read."""
    dtype, shape, nbytes = decl
    what = f"{source}: member {info.filename}"
    try:
        with zf.open(info) as handle:
            version = np.lib.format.read_magic(handle)
            reader = {(1, 0): np.lib.format.read_array_header_1_0,
                      (2, 0): np.lib.format.read_array_header_2_0}.get(version)  # fmt: skip
            if reader is None:
                raise ValueError(f"npy version {version}")
            got_shape, fortran, got_dtype = reader(handle, max_header_size=MAX_NPY_HEADER)
            if got_dtype != dtype or tuple(got_shape) != shape:
                raise ModelFileError(
                    f"{what} holds {got_dtype} {tuple(got_shape)}, its manifest declares "
                    f"{dtype} {shape}"
                )
            header = handle.tell()
            if info.file_size != header + nbytes:
                raise ModelFileError(
                    f"{what} is {info.file_size} bytes, its declaration implies {header + nbytes}"
                )
            raw = bytearray(nbytes)
            view, got = memoryview(raw), 0
            while got < nbytes:
                # typeshed types ZipFile.open as IO[bytes]; reading returns a ZipExtFile,
                # an io.BufferedIOBase, which has readinto
                step = handle.readinto(view[got:])  # type: ignore[attr-defined]
                if not step:
                    raise ValueError("truncated")
                got += step
            if handle.read(1):
                raise ValueError("longer than declared")
    except ModelFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - damaged member: any numpy/zip error
        raise ModelFileError(f"{what} is damaged ({_why(exc)})") from None
    return np.frombuffer(raw, dtype=dtype).reshape(shape, order="F" if fortran else "C")


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
    "arrays": list,
}


def _check_format(manifest: dict, source: str) -> None:
    """Refuse a model format this wsvmgui does not read (before any array is read)."""
    version = manifest.get("schema")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(f"{source}: its manifest has no model format ('schema')")
    if version > SCHEMA:
        wrote_by = manifest.get("wsvmgui_version")
        raise ModelFileError(
            f"{source} has model format {version} (written by wsvmgui {wrote_by}), newer than "
            f"this wsvmgui {__version__} reads (formats {OLDEST_SCHEMA} to {SCHEMA}): load it "
            f"with a newer wsvmgui, or {_REFIT}"
        )
    if version < OLDEST_SCHEMA:
        raise ModelFileError(
            f"{source} has model format {version}, older than this wsvmgui reads (formats "
            f"{OLDEST_SCHEMA} to {SCHEMA}); {_REFIT}"
        )


def _check_manifest(manifest: dict, source: str) -> None:
    for key, kind in _REQUIRED.items():
        if key not in manifest:
            raise ModelFileError(f"{source}: its manifest has no {key!r}")
        if not isinstance(manifest[key], kind) or isinstance(manifest[key], bool):
            raise ModelFileError(f"{source}: manifest entry {key!r} has the wrong type")
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
        and 1 <= X_check.shape[0] <= MAX_CHECK_ROWS
        and X_check.shape[1] == p
        and proba.shape == (X_check.shape[0], len(manifest["classes"]))
        and X_check.dtype.kind == "f"
        and proba.dtype.kind == "f"
    ):
        raise ModelFileError(f"{source}: its check rows (check.X, check.proba) are malformed")
    if not (np.isfinite(X_check).all() and np.isfinite(proba).all()):
        raise ModelFileError(f"{source}: its check rows (check.X, check.proba) hold NaN or inf")
    try:
        classes = [str(c) for c in est.classes_]
        got = np.asarray(est.predict_proba(X_check), dtype=float)
    except Exception as exc:  # noqa: BLE001 - a damaged estimator fails in any way
        raise ModelFileError(
            f"{source} is damaged: its estimator cannot predict ({_why(exc)}); {_REFIT}"
        ) from None
    if classes != manifest["classes"]:
        raise ModelFileError(
            f"{source}: its estimator's classes (estimator.classes_) disagree with its manifest"
        )
    if got.shape != proba.shape or not np.allclose(got, proba, rtol=0.0, atol=CHECK_ATOL):
        raise ModelFileError(
            f"{source} does not reproduce the probabilities it was saved with (check.proba; "
            f"damaged, or made with other library versions); {_REFIT}"
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
        if size > MAX_FILE_BYTES:
            raise ModelFileError(f"{source} is too large to be a model file")
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {source}: {exc.strerror or exc}") from None
    return model_from_bytes(data, source)
