"""Model files: every scheme round-trips, nothing in a file can run code, damage is named."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest

from wsvmgui._version import __version__
from wsvmgui.app.schemes import SCHEMES, fit_scheme
from wsvmgui.app.settings import RunSettings
from wsvmgui.evaluation.designs import simulate
from wsvmgui.io import modelfile
from wsvmgui.io.modelfile import (
    SCHEMA,
    FittedModel,
    ModelFileError,
    check_rows,
    load_model,
    model_from_bytes,
    model_to_bytes,
    save_model,
)
from wsvmgui.io.preprocessing import Preprocessing
from wsvmgui.io.serialize import UntrustedTypeError

BINARY = simulate("wuliu2011_ex1", 60, seed=0)
MULTI = simulate("wu2010_ex2", 45, seed=0)
CASES = [(name, {}) for name in SCHEMES] + [
    ("probing", {"learner": learner})
    for learner in ("svm", "logistic", "forest", "boosting", "naive_bayes")
]


def _fit(name: str, options: dict) -> tuple[FittedModel, np.ndarray]:
    d = MULTI if SCHEMES[name].multiclass and not options else BINARY
    if name == "probing":
        options = {"n_thresholds": 4, **options}
    settings = RunSettings(
        scheme=name, n_weights=5, joint_n=4, lambdas=[0.05], sigmas=[1.0], options=options
    )
    names = [f"x{j}" for j in range(d.X.shape[1])]
    pre = Preprocessing.fit(d.X, names)
    X = pre.transform(d.X)
    est = fit_scheme(settings, X, d.y.astype(str))
    model = FittedModel(est, pre, "label", settings.to_dict(), {"note": "test"})
    new = simulate("wu2010_ex2" if d is MULTI else "wuliu2011_ex1", 30, seed=7)
    return model, pre.transform(new.X)


@pytest.fixture(scope="module")
def binary_model():
    return _fit("binary", {})


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}{o}" for n, o in CASES])
def test_every_scheme_round_trips_and_predicts_identically(tmp_path, name, options):
    model, X_new = _fit(name, options)
    path = tmp_path / "m.wsvm"
    digest = save_model(path, model, modelfile.check_rows(X_new, X_new.shape[1]))
    assert len(digest) == 64
    back = load_model(path)
    assert type(back.estimator) is type(model.estimator)
    assert back.label == "label" and back.meta == {"note": "test"}
    assert back.settings == model.settings and back.classes == model.classes
    assert back.preprocessing.to_dict() == model.preprocessing.to_dict()
    np.testing.assert_array_equal(
        back.estimator.predict_proba(X_new), model.estimator.predict_proba(X_new)
    )
    a, b = model.estimator.report(X_new), back.estimator.report(X_new)
    assert list(a.extra) == list(b.extra)
    for key in a.extra:
        np.testing.assert_array_equal(a.extra[key], b.extra[key])
    np.testing.assert_array_equal(a.label, b.label)


def test_same_model_same_bytes(binary_model):
    model, _ = binary_model
    assert model_to_bytes(model) == model_to_bytes(model)


# ------------------------------------------------------------------ nothing runs
class _Payload:
    """Unpickling this touches the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_payload_runs_when_unpickled(tmp_path):
    """The control: the payload does run under pickle, so the tests below mean something."""
    marker = tmp_path / "ran"
    pickle.loads(pickle.dumps(_Payload(marker)))
    assert marker.exists()


@pytest.mark.parametrize("how", ["pickle2", "pickle5", "joblib", "joblib-zlib", "joblib-gzip"])
def test_pickle_and_joblib_files_are_refused_without_running(tmp_path, how):
    marker, path = tmp_path / "ran", tmp_path / "m.joblib"
    payload = {"kind": "wsvmgui-model", "estimator": _Payload(marker)}
    if how.startswith("pickle"):
        path.write_bytes(pickle.dumps(payload, protocol=int(how[-1])))
    else:
        compress = {"joblib": 0, "joblib-zlib": ("zlib", 3), "joblib-gzip": ("gzip", 3)}[how]
        joblib.dump(payload, path, compress=compress)
    with pytest.raises(ModelFileError) as info:
        load_model(path)
    msg = str(info.value)
    assert "old pickle/joblib model file" in msg and "wsvmgui fit" in msg and "--model" in msg
    assert not marker.exists()


def _members(data: bytes) -> tuple[dict, dict[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    return json.loads(members.pop("manifest.json")), members


def _rezip(manifest: dict, members: dict[str, bytes], redeclare: bool = True) -> bytes:
    """Zip a (tampered) model again; ``redeclare`` updates the manifest's array
    declarations to the members, as a careful tamperer would."""
    if redeclare and isinstance(manifest.get("arrays"), list):
        for i in range(len(manifest["arrays"])):
            data = members.get(f"arrays/{i}.npy")
            if data is not None:
                handle = io.BytesIO(data)
                np.lib.format.read_magic(handle)
                shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
                manifest["arrays"][i] = [np.lib.format.dtype_to_descr(dtype), list(shape)]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _npy(arr: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def test_pickled_array_member_is_refused_without_running(tmp_path, binary_model):
    marker = tmp_path / "ran"
    manifest, members = _members(model_to_bytes(binary_model[0]))
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload(marker)
    members["arrays/0.npy"] = _npy(evil, allow_pickle=True)
    with pytest.raises(ModelFileError, match="arrays/0.npy"):
        model_from_bytes(_rezip(manifest, members), "m.wsvm")
    assert not marker.exists()


@pytest.mark.parametrize(
    "node, pattern",
    [
        ({"$object": "pathlib:Path", "id": 99, "state": None}, "not a trusted model type"),
        ({"$object": "builtins:eval", "id": 99, "args": {"$tuple": ["1"]}}, "not a trusted"),
        ({"$object": "posix:system", "id": 99, "args": {"$tuple": ["touch x"]}}, "not a trusted"),
        ({"$object": "os.path:join", "id": 99}, "not a trusted model type"),
        ({"$object": "wsvmgui.io.atomic:Path", "id": 99}, "not a trusted model type"),
        (
            {"$object": "wsvmgui.solvers.kernels:Kernel", "id": 99, "args": {"$tuple": []}},
            "may not be constructed with arguments",
        ),
        ({"$object": "wsvmgui.errors:InputError", "id": 99}, "not a trusted model type"),
        ({"$object": "wsvmgui.ladder.grid:NoSuchClass", "id": 99}, "has no schema"),
        ({"$object": "__import__('os')", "id": 99}, "bad type name"),
    ],
)
def test_untrusted_types_are_refused(tmp_path, binary_model, node, pattern):
    manifest, members = _members(model_to_bytes(binary_model[0]))
    manifest["meta"] = {}
    manifest["estimator"]["state"]["$dict"].append(["intruder", node])
    with pytest.raises(ModelFileError, match=pattern):
        model_from_bytes(_rezip(manifest, members), "m.wsvm")


def test_saving_an_untrusted_type_is_refused(binary_model):
    model, _ = binary_model
    est = model.estimator
    est.extra_ = Path("/tmp")
    try:
        with pytest.raises(UntrustedTypeError, match="pathlib"):
            model_to_bytes(model)
        est.extra_ = lambda x: x
        with pytest.raises(UntrustedTypeError, match="function"):
            model_to_bytes(model)
    finally:
        del est.extra_


# ------------------------------------------------------------------ damage named
def _edit(manifest, key, value):
    manifest[key] = value
    return manifest


def _without(estimator, name):
    """An encoded estimator without attribute ``name`` (a plain value)."""
    state = estimator["state"]["$dict"]
    estimator["state"]["$dict"] = [[k, v] for k, v in state if k != name]
    return estimator


def test_the_model_format_decides_not_the_wsvmgui_version(binary_model):
    """A file of a newer format is refused, naming both formats and the version that wrote
    it; a file of this format loads whatever wsvmgui version wrote it."""
    model = binary_model[0]
    manifest, members = _members(model_to_bytes(model))
    newer = _rezip(_edit(dict(manifest), "schema", SCHEMA + 1), members)
    with pytest.raises(ModelFileError) as err:
        model_from_bytes(newer, "m.wsvm")
    text = str(err.value)
    assert f"model format {SCHEMA + 1} (written by wsvmgui {__version__})" in text
    assert f"newer than this wsvmgui {__version__} reads (formats 2 to {SCHEMA})" in text
    other = _rezip(_edit(dict(manifest), "wsvmgui_version", "0.0.1"), members)
    loaded = model_from_bytes(other, "m.wsvm")
    assert loaded.format_version == SCHEMA
    X = check_rows(None, 2)
    np.testing.assert_allclose(
        loaded.estimator.predict_proba(X), model.estimator.predict_proba(X), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize(
    "change, pattern",
    [
        (lambda m: _edit(m, "schema", 1), r"model format 1, older than .* \(formats 2 to 3\)"),
        (lambda m: _edit(m, "estimator", _without(m["estimator"], "C_")), "lacks C_"),
        (lambda m: _edit(m, "format", "other"), "not a wsvmgui model file"),
        (lambda m: _edit(m, "classes", ["a", "b"]), r"classes \(estimator.classes_\) disagree"),
        (lambda m: _edit(m, "label", 3), "'label' has the wrong type"),
        (lambda m: {k: v for k, v in m.items() if k != "settings"}, "has no 'settings'"),
        (lambda m: _edit(m, "n_arrays", m["n_arrays"] + 1), "declares .* arrays, the file holds"),
        (lambda m: _edit(m, "n_arrays", 10**12), "declares 1000000000000 arrays"),
        (lambda m: _edit(m, "arrays", m["arrays"][:-1]), "must declare"),
        (lambda m: _edit(m, "n_arrays", -1), "n_arrays must be"),
        (lambda m: _edit(m, "estimator", {"$nope": 1}), "unknown node tag"),
        (lambda m: _edit(m, "estimator", {"$ref": 5}), "not finished before"),
        (lambda m: _edit(m, "estimator", {"$array": 10**6}), "out of range"),
        (lambda m: _edit(m, "estimator", [1, 2]), "'estimator' has the wrong type"),
        (lambda m: _edit(m, "preprocessing", {"missing": "x"}), "feature_names"),
        (lambda m: _edit(m, "libraries", {"scikit-learn": "0.1"}), None),
    ],
)
def test_manifest_damage_is_named(binary_model, change, pattern):
    manifest, members = _members(model_to_bytes(binary_model[0]))
    data = _rezip(change(manifest), members)
    if pattern is None:  # a binary-ladder model holds no scikit-learn objects
        assert model_from_bytes(data, "m.wsvm").classes == binary_model[0].classes
        return
    with pytest.raises(ModelFileError, match=pattern):
        model_from_bytes(data, "m.wsvm")


def test_changed_numbers_fail_the_self_check(binary_model):
    manifest, members = _members(model_to_bytes(binary_model[0]))
    n_before = len(members)
    for name, data in list(members.items()):
        arr = np.lib.format.read_array(io.BytesIO(data))
        if arr.dtype.kind == "f" and arr.ndim == 2 and arr.shape[1] == 2:  # support rows
            members[name] = _npy(arr + 0.5)
    assert len(members) == n_before
    with pytest.raises(ModelFileError, match="does not reproduce the probabilities"):
        model_from_bytes(_rezip(manifest, members), "m.wsvm")


def test_inconsistent_tree_links_are_refused(tmp_path):
    model, _ = _fit("probing", {"learner": "tree"})
    manifest, members = _members(model_to_bytes(model))
    for name, data in members.items():
        arr = np.lib.format.read_array(io.BytesIO(data))
        if arr.dtype.names and "left_child" in arr.dtype.names and arr.size > 1:
            arr = arr.copy()
            arr["left_child"][0] = 0  # a loop back to the root
            members[name] = _npy(arr)
            break
    else:
        pytest.fail("no tree nodes found")
    with pytest.raises(ModelFileError, match="node links are inconsistent"):
        model_from_bytes(_rezip(manifest, members), "m.wsvm")


@pytest.mark.parametrize("cut", [10, 100, 1000, -30])
def test_truncated_files_are_damaged(binary_model, cut):
    data = model_to_bytes(binary_model[0])
    with pytest.raises(ModelFileError, match="damaged|not a wsvmgui"):
        model_from_bytes(data[:cut], "m.wsvm")


def test_manifest_is_inspectable_json(binary_model):
    manifest, members = _members(model_to_bytes(binary_model[0]))
    assert manifest["format"] == "wsvmgui-model" and manifest["schema"] == SCHEMA == 3
    assert manifest["wsvmgui_version"] == __version__
    assert manifest["feature_names"] == ["x0", "x1"] and manifest["label"] == "label"
    assert manifest["preprocessing"]["standardize"] is True
    assert manifest["estimator"]["$object"] == "wsvmgui.estimators.binary:WeightedSVMClassifier"
    assert sorted(members) == sorted(f"arrays/{i}.npy" for i in range(manifest["n_arrays"]))


def test_a_tuned_model_round_trips_and_loads_under_the_old_table_name():
    """A tuned fit keeps its tuning table (``TuningResult``); files written before the
    table moved from ``ladder.gridsearch`` to ``ladder.tuning_table`` name the old module."""
    d = BINARY
    settings = RunSettings(scheme="binary", n_weights=5, lambdas=[0.01, 0.1], sigmas=[1.0])
    pre = Preprocessing.fit(d.X, [f"x{j}" for j in range(d.X.shape[1])])
    X = pre.transform(d.X)
    model = FittedModel(fit_scheme(settings, X, d.y.astype(str)), pre, "label",
                        settings.to_dict(), {})  # fmt: skip
    data = model_to_bytes(model, X)
    loaded = model_from_bytes(data, "new.wsvm").estimator
    assert loaded.fitted_summary()["tuning"] == model.estimator.fitted_summary()["tuning"]
    manifest, members = _members(data)
    text = json.dumps(manifest)
    new, old = "wsvmgui.ladder.tuning_table:TuningResult", "wsvmgui.ladder.gridsearch:TuningResult"
    assert new in text
    old_file = _rezip(json.loads(text.replace(new, old)), members)
    loaded = model_from_bytes(old_file, "old.wsvm").estimator
    assert type(loaded.tuning_).__name__ == "TuningResult"
    np.testing.assert_array_equal(loaded.tuning_.score, model.estimator.tuning_.score)
    np.testing.assert_allclose(loaded.predict_proba(X), model.estimator.predict_proba(X))
