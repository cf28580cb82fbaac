"""Model files written before the fitted vocabulary (``lambda_``, ``sigma_``, ``C_``,
``tuning_``) existed: they load with it filled from what they store.

The old files are built here: a current file with the attributes the estimators of
that version lacked taken out of its manifest (commit 2c27f06 added them: the binary
ladder had no ``C_``, divide and conquer none of the four, the preconditioned SVM no
``C_`` and ``tuning_``, the joint fit no ``lambda_`` and ``tuning_``, Probing none).
"""

from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np
import pytest

from wsvmgui.app.schemes import fit_scheme
from wsvmgui.app.settings import RunSettings
from wsvmgui.evaluation.designs import simulate
from wsvmgui.io.modelfile import (
    SCHEMA,
    FittedModel,
    ModelFileError,
    check_rows,
    model_from_bytes,
    model_to_bytes,
)
from wsvmgui.io.preprocessing import Preprocessing
from wsvmgui.io.serialize import Encoder
from wsvmgui.io.vocabulary import VOCABULARY, fill_vocabulary

BINARY = simulate("wuliu2011_ex1", 60, seed=0)
MULTI = simulate("wu2010_ex2", 45, seed=0)
ALL = set(VOCABULARY)
#: scheme -> the vocabulary its estimator lacked before commit 2c27f06.
OLD_FILES = {
    "binary": {"C_"},
    "pairwise": ALL,
    "ova": ALL,
    "preconditioned": {"C_", "tuning_"},
    "joint-direct": {"lambda_", "tuning_"},
    "probing": ALL,
}


def _fit(scheme: str, lambdas: list[float]) -> tuple[FittedModel, np.ndarray]:
    d = MULTI if scheme in ("pairwise", "ova") else BINARY
    settings = RunSettings(
        scheme=scheme, n_weights=5, joint_n=4, lambdas=lambdas, sigmas=[1.0], cv_folds=3
    )
    if len(lambdas) > 1:
        settings.tuning = "cv"
    if scheme == "probing":
        settings.options = {"n_thresholds": 4}
    names = [f"x{j}" for j in range(d.X.shape[1])]
    pre = Preprocessing.fit(d.X, names)
    X = pre.transform(d.X)
    est = fit_scheme(settings.validate(), X, d.y.astype(str))
    return FittedModel(est, pre, "label", settings.to_dict(), {}), X[:8]


def _old_file(model: FittedModel, X_check: np.ndarray, drop: set[str], schema: int = 2) -> bytes:
    """The model's file with the attributes ``drop`` taken out of its estimator, in model
    format ``schema`` (2: the format of the files written before they existed)."""
    data = model_to_bytes(model, check_rows(X_check, X_check.shape[1]))
    members = _unzip(data)
    manifest = json.loads(members.pop("manifest.json"))
    assert manifest["schema"] == SCHEMA == 3
    manifest["schema"] = schema
    state = manifest["estimator"]["state"]["$dict"]
    assert {k for k, _ in state} >= drop, "the estimator no longer stores these"
    manifest["estimator"]["state"]["$dict"] = [[k, v] for k, v in state if k not in drop]
    # the arrays only the dropped attributes held go too, the others are renumbered
    used = sorted(set(_array_refs(manifest["estimator"]) + _array_refs(manifest["check"])))
    number = {old: new for new, old in enumerate(used)}
    for key in ("estimator", "check"):
        manifest[key] = _renumber(manifest[key], number)
    manifest["arrays"] = [manifest["arrays"][old] for old in used]
    manifest["n_arrays"] = len(used)
    kept = {f"arrays/{number[old]}.npy": members[f"arrays/{old}.npy"] for old in used}
    return _zip(json.dumps(manifest), kept)


def _unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(manifest: str, members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", manifest)
        for name, member in members.items():
            zf.writestr(name, member)
    return buf.getvalue()


_REFS = ("$array", "$scalar")


def _array_refs(node) -> list[int]:
    if isinstance(node, dict):
        if len(node) == 1 and next(iter(node)) in _REFS:
            return [next(iter(node.values()))]
        return [i for v in node.values() for i in _array_refs(v)]
    if isinstance(node, list):
        return [i for v in node for i in _array_refs(v)]
    return []


def _renumber(node, number: dict[int, int]):
    if isinstance(node, dict):
        if len(node) == 1 and next(iter(node)) in _REFS:
            key, value = next(iter(node.items()))
            return {key: number[value]}
        return {k: _renumber(v, number) for k, v in node.items()}
    if isinstance(node, list):
        return [_renumber(v, number) for v in node]
    return node


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12) or (math.isnan(a) and math.isnan(b))
    return a == b


@pytest.mark.parametrize("scheme", sorted(OLD_FILES))
def test_an_old_file_loads_with_the_vocabulary_it_was_fitted_with(scheme):
    """Untuned fits: lambda, sigma and C are in the file, so the filled values equal the
    ones the fit set and fitted_summary() of the loaded model agrees with the original's;
    a tuning record the file does not hold is None."""
    model, X = _fit(scheme, [0.05])
    fitted = {k: getattr(model.estimator, k) for k in VOCABULARY}
    drop = OLD_FILES[scheme]
    old = _old_file(model, X, drop)
    loaded = model_from_bytes(old, "old.wsvm")
    assert loaded.format_version == 2 and model.format_version == SCHEMA
    est = loaded.estimator
    for name in ("lambda_", "sigma_", "C_"):
        assert _same(getattr(est, name), fitted[name]), (name, getattr(est, name), fitted[name])
    subproblems = getattr(model.estimator, "subproblems_", None)
    if "tuning_" not in drop or subproblems is not None:  # kept, or rebuilt from the parts
        assert _same(est.tuning_, fitted["tuning_"])
    else:
        assert est.tuning_ is None
    want = model.estimator.fitted_summary()
    got = est.fitted_summary()
    for key in ("lambda", "sigma", "C", "n_weights", "classes", "n_train"):
        assert got[key] == want[key], key
    assert got["tuned"] == (est.tuning_ is not None)
    np.testing.assert_allclose(
        est.predict_proba(X), model.estimator.predict_proba(X), rtol=0, atol=1e-12
    )
    # the same content claiming the current format is refused: format 3 stores all four
    lacking = ", ".join(name for name in VOCABULARY if name in drop)
    with pytest.raises(ModelFileError, match=f"lacks {lacking} \\(model format 3 stores"):
        model_from_bytes(_old_file(model, X, drop, schema=SCHEMA), "old.wsvm")


def test_an_old_tuned_binary_file_keeps_its_tuned_lambda_and_gets_c():
    """The binary ladder stored lambda_ and tuning_; C_ comes from lambda_ and the final
    fit's rows, as the fit computes it."""
    model, X = _fit("binary", [0.01, 0.1])
    est = model.estimator
    assert est.tuning_ is not None
    loaded = model_from_bytes(_old_file(model, X, {"C_"}), "old.wsvm").estimator
    assert loaded.lambda_ == est.lambda_
    assert math.isclose(loaded.C_, est.C_, rel_tol=1e-12)
    assert math.isclose(loaded.C_, 1 / (2 * est.fit_info_["n_train"] * est.lambda_))
    assert loaded.fitted_summary()["tuned"] is True


def test_a_tuned_value_missing_from_an_old_file_is_nan_not_a_guess():
    """Divide and conquer tuned over two lambdas: the value comes from the sub-problems
    (shared, else NaN), never from the parameter grid."""
    model, X = _fit("pairwise", [0.01, 0.1])
    est = model.estimator
    loaded = model_from_bytes(_old_file(model, X, ALL), "old.wsvm").estimator
    lams = [f.lam for f in est.subproblems_.fitted]
    if len(set(lams)) == 1:
        assert loaded.lambda_ == lams[0]
    else:
        assert math.isnan(loaded.lambda_)
    assert set(loaded.tuning_) == {f.spec.name for f in est.subproblems_.fitted}
    summary = loaded.fitted_summary()
    assert summary["tuned"] is True and summary["lambda"] == est.fitted_summary()["lambda"]


def test_an_old_joint_file_with_lam_and_a_tuning_table():
    """The joint fit stored ``lam_`` and a ``tuning_table_`` (a list of plain dicts)."""
    model, X = _fit("joint-direct", [0.05])
    est = model.estimator
    data = _old_file(model, X, {"lambda_", "tuning_"})
    members = _unzip(data)
    manifest = json.loads(members.pop("manifest.json"))
    table = Encoder().encode([{"lam": 0.05, "sigma": 1.0, "cross_entropy": 0.5}])
    manifest["estimator"]["state"]["$dict"] += [["lam_", est.lambda_], ["tuning_table_", table]]
    loaded = model_from_bytes(_zip(json.dumps(manifest), members), "old.wsvm").estimator
    assert loaded.lambda_ == est.lambda_ and loaded.C_ == est.C_
    assert loaded.fitted_summary()["lambda"] == est.fitted_summary()["lambda"]


def test_a_current_estimator_is_left_alone():
    model, _ = _fit("binary", [0.05])
    before = dict(vars(model.estimator))
    assert fill_vocabulary(model.estimator) == ()
    assert fill_vocabulary(object()) == ()
    assert vars(model.estimator).keys() == before.keys()
