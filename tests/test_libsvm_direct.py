"""The private libsvm binding: live on the supported scikit-learn, and a fallback that
gives the same answers and says so once."""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from wsvmgui.errors import LibsvmFallbackWarning
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.solvers import _libsvm_direct
from wsvmgui.solvers.kernels import Kernel

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _sklearn_spec() -> SpecifierSet:
    """The scikit-learn requirement of pyproject.toml's dependencies."""
    (spec,) = re.findall(r'^\s*"scikit-learn([^"]*)",', PYPROJECT.read_text(), re.MULTILINE)
    return SpecifierSet(spec)


@pytest.fixture
def fresh_check():
    _libsvm_direct.reset()
    yield
    _libsvm_direct.reset()


def test_direct_binding_is_live_on_the_supported_versions(fresh_check):
    """pyproject.toml caps scikit-learn; on every version it allows (the one installed
    here is one of them), the private binding passes its self-check."""
    spec = _sklearn_spec()
    assert any(s.operator in ("<", "<=", "~=", "==") for s in spec), f"no upper bound: {spec}"
    assert Version(sklearn.__version__) in spec
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibsvmFallbackWarning)
        assert _libsvm_direct.direct_binding_live()


def test_forced_fallback_gives_the_same_ladder_and_warns_once(fresh_check, monkeypatch, caplog):
    d = simulate("wuliu2011_ex1", 80, seed=3)
    y = np.where(d.y > 0, 1.0, -1.0)
    K = Kernel("rbf", sigma=1.0)(d.X)
    weights = weight_grid(6)
    direct = fit_ladder(K, y, weights, 0.005)
    assert _libsvm_direct.direct_binding_live()
    _libsvm_direct.reset()  # decide again, now with a binding that fails

    def broken(*args, **kwargs):
        raise TypeError("fit() got an unexpected keyword argument")

    monkeypatch.setattr(_libsvm_direct, "fit_direct", broken)
    calls = []
    real_public = _libsvm_direct.fit_public
    monkeypatch.setattr(_libsvm_direct, "fit_public", lambda *a: calls.append(1) or real_public(*a))
    with caplog.at_level(logging.WARNING, logger="wsvmgui"):
        with pytest.warns(LibsvmFallbackWarning, match="unusable.*public SVC"):
            public = fit_ladder(K, y, weights, 0.005)
        with warnings.catch_warnings():
            warnings.simplefilter("error", LibsvmFallbackWarning)  # once only
            again = fit_ladder(K, y, weights, 0.005)
    assert len(calls) == 2 * weights.size  # every fit of both ladders
    assert sum("unusable" in r.message for r in caplog.records) == 1
    for other in (public, again):
        np.testing.assert_allclose(other.coef, direct.coef, atol=1e-10)
        np.testing.assert_allclose(other.intercept, direct.intercept, atol=1e-10)


def test_a_disagreeing_binding_is_not_used(fresh_check, monkeypatch):
    real = _libsvm_direct.fit_direct
    monkeypatch.setattr(
        _libsvm_direct, "fit_direct", lambda K, y, u, C: (real(K, y, u, C)[0] * 0.5, 0.0)
    )
    with pytest.warns(LibsvmFallbackWarning, match="differs"):
        assert not _libsvm_direct.direct_binding_live()


def test_binding_is_called_without_the_deprecated_probability_keyword(monkeypatch):
    """scikit-learn 1.9 deprecates ``probability`` and 1.11 removes it: not passed."""
    from sklearn.svm import _libsvm

    seen = []
    real = _libsvm.fit

    def spy(*args, **kwargs):
        seen.append(set(kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(_libsvm, "fit", spy)
    K = np.eye(4) + 0.5
    y = np.array([1.0, -1.0, 1.0, -1.0])
    _libsvm_direct.fit_direct(K, y, np.full(4, 0.5), 1.0)
    assert seen and "probability" not in seen[0]
