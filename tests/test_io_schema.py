"""Model-file schemas: every class a saved model holds has one, and corrupting any array
member of any model type is refused in one line naming it, never a crash.

The corrupted files are predicted by the real command line in a child process (one for
all of them, so the cases stay fast), which writes each case's outcome before starting
the next: a SIGSEGV or a hang in compiled code shows as that process dying, with the
case it was on.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile

import numpy as np
import pytest

from wsvmgui.app.schemes import SCHEMES, fit_scheme
from wsvmgui.app.settings import RunSettings
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.estimators.probing import ProbingClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.io import schema
from wsvmgui.io.modelfile import FittedModel, model_from_bytes, model_to_bytes
from wsvmgui.io.preprocessing import Preprocessing
from wsvmgui.io.serialize import UntrustedTypeError

BINARY = simulate("wuliu2011_ex1", 40, seed=3)
MULTI = simulate("wu2010_ex2", 45, seed=3)
TUNED = {"lambdas": [0.02, 0.1], "sigmas": [0.7, 1.4]}


def _save(est, d) -> bytes:
    names = [f"x{j}" for j in range(d.X.shape[1])]
    pre = Preprocessing.fit(d.X, names)
    est.fit(pre.transform(d.X), d.y.astype(str))
    return model_to_bytes(FittedModel(est, pre, "label", {"kernel": "rbf"}, {}))


def _scheme(name: str, engine: str = "path", tuned: bool = False, **options) -> tuple:
    d = MULTI if SCHEMES[name].multiclass and name != "probing" else BINARY
    grids = TUNED if tuned else {"lambdas": [0.05], "sigmas": [1.0]}
    settings = RunSettings(
        scheme=name, engine=engine, n_weights=6, joint_n=5, options=options, n_jobs=1, **grids
    )
    names = [f"x{j}" for j in range(d.X.shape[1])]
    pre = Preprocessing.fit(d.X, names)
    est = fit_scheme(settings, pre.transform(d.X), d.y.astype(str))
    return model_to_bytes(FittedModel(est, pre, "label", settings.to_dict(), {})), d


def _probing(learner: str, **params) -> tuple:
    est = ProbingClassifier(learner=learner, learner_params=params or None, n_thresholds=3)
    return _save(est, BINARY), BINARY


#: Every model type: each scheme, both engines, tuning tables, every Probing learner.
MODEL_TYPES = {
    "binary-path": lambda: _scheme("binary"),
    "binary-grid-tuned": lambda: _scheme("binary", "grid", tuned=True),
    "noncrossing": lambda: _scheme("noncrossing"),
    "noncrossing-hinge": lambda: _scheme("noncrossing", tuned=True, criterion="hinge"),
    "preconditioned": lambda: _scheme("preconditioned", level=0.2),
    "preconditioned-independent": lambda: _scheme(
        "preconditioned", level=0.2, ladder="independent"
    ),
    "ova-path-tuned": lambda: _scheme("ova", tuned=True),
    "pairwise-grid": lambda: _scheme("pairwise", "grid"),
    "baseline2": lambda: _scheme("baseline2"),
    # recalibration maps and intervals, tie pairs (library parameters, not run settings)
    "binary-calibrated": lambda: (
        _save(WeightedSVMClassifier(calibration="isotonic", lam=0.05, sigma=1.0), BINARY),
        BINARY,
    ),
    "baseline1-calibrated": lambda: (
        _save(
            MulticlassWeightedSVMClassifier(
                scheme="baseline1", calibration="sigmoid", lam=0.05, sigma=1.0
            ),
            MULTI,
        ),
        MULTI,
    ),
    "joint-indirect": lambda: _scheme("joint-indirect"),
    "joint-direct-linear": lambda: _linear_joint(),
    "probing-svm": lambda: _probing("svm"),
    "probing-logistic": lambda: _probing("logistic"),
    "probing-tree": lambda: _probing("tree"),
    "probing-forest": lambda: _probing("forest", n_estimators=2),
    "probing-boosting": lambda: _probing("boosting", n_estimators=2),
    "probing-naive_bayes": lambda: _probing("naive_bayes"),
}


def _linear_joint() -> tuple:
    settings = RunSettings(scheme="joint-direct", kernel="linear", joint_n=5, lambdas=[0.05])
    names = [f"x{j}" for j in range(MULTI.X.shape[1])]
    pre = Preprocessing.fit(MULTI.X, names)
    est = fit_scheme(settings, pre.transform(MULTI.X), MULTI.y.astype(str))
    return model_to_bytes(FittedModel(est, pre, "label", settings.to_dict(), {})), MULTI


@pytest.fixture(scope="module")
def models() -> dict[str, tuple[bytes, object]]:
    return {name: make() for name, make in MODEL_TYPES.items()}


def _members(data: bytes) -> tuple[dict, dict[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    return json.loads(members.pop("manifest.json")), members


def _classes(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        if "$object" in node:
            out.add(node["$object"])
        for v in node.values():
            _classes(v, out)
    elif isinstance(node, list):
        for v in node:
            _classes(v, out)
    return out


def test_every_class_of_every_saved_model_has_a_schema_and_no_schema_is_stale(models):
    seen: set[str] = set()
    for data, _ in models.values():
        manifest, _ = _members(data)
        seen |= _classes(manifest["estimator"], set())
    assert seen <= set(schema.VALIDATORS), sorted(seen - set(schema.VALIDATORS))
    # every registered schema is met by some saved model: none is left over unchecked
    assert set(schema.VALIDATORS) <= seen, sorted(set(schema.VALIDATORS) - seen)


def test_a_fitted_class_without_a_schema_cannot_be_saved(models, monkeypatch):
    data, _ = models["binary-path"]
    model = model_from_bytes(data)
    monkeypatch.delitem(schema.VALIDATORS, "wsvmgui.ladder.engines:PathLadder")
    with pytest.raises(UntrustedTypeError, match="PathLadder is not a trusted model type"):
        model_to_bytes(model)


def test_an_array_a_schema_does_not_declare_cannot_be_saved(models):
    model = model_from_bytes(models["binary-path"][0])
    model.estimator.extra_table_ = np.arange(3)
    with pytest.raises(UntrustedTypeError, match="extra_table_.*array this type does not hold"):
        model_to_bytes(model)


def test_no_timing_is_stored(models):
    for name, (data, _) in models.items():
        text = _members(data)[0]
        stack, timings = [text], []
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                pairs = node["$dict"] if set(node) == {"$dict"} else list(node.items())
                for k, v in pairs:
                    if schema.is_timing(k):
                        timings.append(v)
                    stack.append(v)
            elif isinstance(node, list):
                stack.extend(node)
        flat = json.dumps(timings).replace("0.0", "").strip("[]{}, ")
        assert timings and not any(c.isdigit() for c in flat.split('"')[::2]), (name, timings)


# ------------------------------------------------------------------ tampered members
def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _paths(node, path: str, out: dict[int, str]) -> dict[int, str]:
    """Array index -> where it sits (``estimator.ladder_.path``: its owner object)."""
    if isinstance(node, dict):
        if "$array" in node or "$scalar" in node:
            out.setdefault(node.get("$array", node.get("$scalar")), path)
        for k, v in node.items():
            if k == "$dict":
                for pair in v:
                    key = pair[0] if isinstance(pair[0], str) else ""
                    _paths(pair[1], f"{path}.{key}" if key else path, out)
            else:
                _paths(v, path, out)
    elif isinstance(node, list):
        for v in node:
            _paths(v, path, out)
    return out


def _mutations(arr: np.ndarray) -> dict[str, np.ndarray]:
    """Wrong dtype, wrong shape and out-of-range values of one array."""
    out: dict[str, np.ndarray] = {}
    if arr.dtype.kind == "f":
        out["dtype"] = arr.astype(np.int64) if arr.size else np.zeros(arr.shape, np.int64)
    else:
        out["dtype"] = np.zeros(arr.shape, dtype=np.float64)
    if arr.ndim == 0:
        out["shape"] = np.zeros(2, dtype=arr.dtype)
    elif arr.shape[0] > 0:
        out["shape"] = arr[:-1].copy()
    else:  # an empty array: one dimension more
        out["shape"] = arr.reshape(*arr.shape, 1)
    if arr.size:
        bad = arr.copy()
        flat = bad.reshape(-1)
        if arr.dtype.names:
            flat["left_child"][0] = -(10**6)
        elif arr.dtype.kind in "iu":
            info = np.iinfo(arr.dtype)
            flat[0] = max(info.min, -(10**6)) if arr.dtype.kind == "i" else info.max
        elif arr.dtype.kind == "f":
            flat[0] = np.nan
        elif arr.dtype.kind == "b":
            flat[0] = not flat[0]
        else:
            flat[0] = "zz"
        out["values"] = bad
    return out


def _tampered(data: bytes, index: int, arr: np.ndarray) -> bytes:
    """The model with member ``arrays/<index>.npy`` replaced, its declaration updated."""
    manifest, members = _members(data)
    members[f"arrays/{index}.npy"] = _npy(arr)
    manifest["arrays"][index] = [np.lib.format.dtype_to_descr(arr.dtype), list(arr.shape)]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for name, value in members.items():
            zf.writestr(name, value)
    return buf.getvalue()


_DRIVER = textwrap.dedent(
    """
    import contextlib, io, json, os, sys
    from wsvmgui.cli import main
    cases, rows, log = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(log, "a") as out:
        for name in sorted(os.listdir(cases)):
            out.write(json.dumps({"start": name}) + "\\n"); out.flush()
            err = io.StringIO()
            target = os.path.join(cases, name + ".csv")
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = main(["predict", os.path.join(cases, name), rows, "--out", target])
            csv = open(target).read() if code == 0 else None
            out.write(json.dumps({"case": name, "code": code, "err": err.getvalue(),
                                  "csv": csv}) + "\\n"); out.flush()
    """
)


#: A case is one ``predict`` of a two-row file: a case that has not finished after this
#: long hangs (a loop or an allocation the reader failed to refuse), whatever the load.
STALL_SECONDS = 600.0


def _run_watched(cmd: list[str], env: dict[str, str], log) -> tuple[int, str]:
    """Run the driver until it ends; kill it only when no case finishes for a long time.

    The whole run's length depends on the machine and its load (hundreds of cases), so
    it has no deadline; a single case that makes no progress is the failure we look for.
    """
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True, env=env)
        size, last = -1, time.monotonic()
        while proc.poll() is None:
            time.sleep(1.0)
            now_size = log.stat().st_size if log.exists() else 0
            if now_size != size:
                size, last = now_size, time.monotonic()
            elif time.monotonic() - last > STALL_SECONDS:
                proc.kill()
                proc.wait()
                last_line = log.read_text().splitlines()[-1:] if log.exists() else []
                raise AssertionError(f"no case finished in {STALL_SECONDS:.0f} s: {last_line}")
        err.seek(0)
        return proc.returncode, err.read()


def test_corrupting_any_member_of_any_model_is_refused_by_name(models, tmp_path):
    cases, expected = tmp_path / "cases", {}
    cases.mkdir()
    for name, (data, _) in models.items():
        manifest, members = _members(data)
        where = _paths(manifest["estimator"], "estimator", {})
        where.update(_paths(manifest["check"], "check", {}))
        (cases / f"{name}.orig").write_bytes(data)
        for i in range(manifest["n_arrays"]):
            arr = np.lib.format.read_array(io.BytesIO(members[f"arrays/{i}.npy"]))
            for kind, bad in _mutations(arr).items():
                case = f"{name}.{i:04d}.{kind}"
                (cases / case).write_bytes(_tampered(data, i, bad))
                owner = where.get(i, "?").rpartition(".")[0] or where.get(i, "?")
                expected[case] = (name, f"arrays/{i}.npy", owner, kind)
    rows = tmp_path / "rows.csv"
    rows.write_text("x0,x1\n0.1,0.2\n-1,1\n")
    log = tmp_path / "log.jsonl"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    returncode, stderr = _run_watched(
        [sys.executable, "-c", _DRIVER, str(cases), str(rows), str(log)], env, log
    )
    records = [json.loads(line) for line in log.read_text().splitlines()]
    started = [r["start"] for r in records if "start" in r]
    assert returncode == 0, (returncode, started[-1:], stderr[-2000:])
    done = {r["case"]: r for r in records if "case" in r}
    assert len(done) == len(expected) + len(models)
    originals = {}
    for name in models:
        r = done[f"{name}.orig"]
        assert r["code"] == 0, (name, r["err"])
        originals[name] = r["csv"]
    harmless, wrong = [], []
    for case, (name, member, owner, kind) in expected.items():
        r = done[case]
        lines = r["err"].strip().splitlines()
        if r["code"] == 0:  # a value change prediction does not read: harmless, identical
            if kind == "values" and r["csv"] == originals[name]:
                harmless.append(f"{case}: {owner} ({member})")
            else:
                diff = [
                    (a, b)
                    for a, b in zip(
                        r["csv"].splitlines(), originals[name].splitlines(), strict=False
                    )
                    if a != b
                ]
                wrong.append((case, owner, "exit 0 with other output", diff[:2]))
        elif r["code"] != 2 or len(lines) != 1 or "internal error" in r["err"]:
            wrong.append((case, owner, r["code"], r["err"][-300:]))
        elif member not in lines[0] and owner not in lines[0]:
            wrong.append((case, owner, lines[0][-200:]))
    assert not wrong, "\n".join(map(str, wrong))
    print("harmless value changes:", sorted(set(harmless)))
