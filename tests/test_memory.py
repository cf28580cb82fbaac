"""The memory budget: what the machine has, the plan before the work (dense kernel, values
on the fly, or a one-line refusal), and what the estimators and the command line make of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wsvmgui.cli import EXIT_INPUT, main
from wsvmgui.errors import InputError, MemoryBudgetError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.solvers import memory
from wsvmgui.solvers.memory import available_memory, ladder_storage, memory_limits

GB = 2**30
MB = 2**20


def test_meminfo_and_cgroup_limits_are_read(tmp_path: Path):
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:  24000000 kB\nMemFree: 100 kB\nMemAvailable:   2000000 kB\n")
    assert memory._meminfo_available(info) == 2000000 * 1024
    assert memory._meminfo_available(tmp_path / "missing") is None
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.max").write_text("max\n")
    assert memory._cgroup_room(v2) is None  # no limit
    (v2 / "memory.max").write_text(f"{3 * GB}\n")
    (v2 / "memory.current").write_text(f"{1 * GB}\n")
    assert memory._cgroup_room(v2) == 2 * GB
    v1 = tmp_path / "v1"
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text(str(2**63 - 4096))
    assert memory._cgroup_room(v1) is None  # v1's "no limit"
    (v1 / "memory" / "memory.limit_in_bytes").write_text(str(4 * GB))
    (v1 / "memory" / "memory.usage_in_bytes").write_text(str(GB))
    assert memory._cgroup_room(v1) == 3 * GB


def test_available_memory_is_positive_here_and_can_be_overridden():
    found = available_memory()
    assert found is None or found > 0
    with memory_limits(available=123 * MB):
        assert available_memory() == 123 * MB
    assert available_memory() == found or available_memory() is not None
    with pytest.raises(ValueError, match="storage"), memory_limits(storage="swap"):
        pass


def test_the_plan_is_dense_when_it_fits_and_on_the_fly_when_it_does_not():
    n = 6000
    kernel = 8 * n * n
    roomy = ladder_storage(n, 5, n, 153, 2, 8 * GB, kernel_free=True)
    assert roomy.dense and roomy.kernel_bytes == kernel
    # One kernel plus two fits' working memory: under 1.5 kernels + 400 MB (issue 13).
    assert kernel < roomy.need < 1.5 * kernel + 400 * MB
    tight = ladder_storage(n, 5, n, 153, 2, 400 * MB, kernel_free=True)
    assert tight.mode == "on-the-fly" and tight.need <= 0.9 * 400 * MB
    assert tight.cache_mb >= memory.FLY_CACHE_MIN_MB
    assert "on the fly" in tight.describe() and "275 MB" in tight.describe()
    unknown = ladder_storage(n, 5, n, 153, 2, None, kernel_free=False)
    assert unknown.dense  # nothing is refused when the memory is unknown


def test_refusal_is_one_line_naming_the_sizes_and_the_ways_out():
    with pytest.raises(MemoryBudgetError) as info:
        ladder_storage(60_000, 5, 60_000, 200, 2, 8 * GB, kernel_free=False, what="tuning")
    msg = str(info.value)
    assert "\n" not in msg and isinstance(info.value, InputError)
    assert "60,000 rows" in msg and "26.8 GB" in msg and "8.0 GB is available" in msg
    for way in ("fewer threads", "subsample", "linear kernel", "Dask cluster"):
        assert way in msg
    with pytest.raises(MemoryBudgetError, match="each Dask worker's.*more memory"):
        ladder_storage(60_000, 5, 60_000, 200, 1, 4 * GB, kernel_free=False, cluster=True)
    with pytest.raises(MemoryBudgetError, match="even with kernel values made on the fly"):
        ladder_storage(60_000, 5, 60_000, 200, 2, 50 * MB, kernel_free=True)


def test_estimator_chooses_on_the_fly_by_itself_and_agrees_with_the_dense_fit():
    """Kernel-free mode on a small problem: the same tuning choice and the same
    probabilities (up to libsvm's tolerance) as the dense kernel."""
    d = simulate("wuliu2011_ex1", 240, seed=2)
    params = dict(n_weights=16, lambdas=[0.02, 0.002], sigmas=[0.5, 1.5], cv=3)
    dense = WeightedSVMClassifier(**params).fit(d.X, d.y)
    assert dense.fit_info_["kernel"].startswith("dense kernel matrix")
    # 300 kB: the 450 kB kernel of 240 rows does not fit, values on the fly do.
    with memory_limits(available=300 * 1024), pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "FLY_CACHE_MIN_MB", 0.1)
        mp.setattr(memory, "BLOCK_BYTES", 1024)
        mp.setattr(memory, "_per_fit", lambda *a: 1024.0)
        fly = WeightedSVMClassifier(**params).fit(d.X, d.y)
    assert "on the fly" in fly.fit_info_["kernel"]
    assert (fly.lambda_, fly.sigma_) == (dense.lambda_, dense.sigma_)
    np.testing.assert_allclose(fly.tuning_.egkl, dense.tuning_.egkl, atol=0.02)
    p_dense, p_fly = dense.predict_proba(d.X)[:, 1], fly.predict_proba(d.X)[:, 1]
    # Brackets of width 1/16: a point may move by one bracket where a boundary moved.
    assert np.mean(np.abs(p_fly - p_dense) < 1e-9) > 0.95
    assert np.max(np.abs(p_fly - p_dense)) <= 1 / 16 + 1e-9


def test_estimators_refuse_before_fitting_when_nothing_fits():
    d = simulate("zeng_ex3", 150, seed=0)
    tiny = memory_limits(available=64 * 1024)
    with tiny, pytest.raises(MemoryBudgetError, match="not enough memory.*150 rows"):
        MulticlassWeightedSVMClassifier(scheme="ova", lam=0.01, sigma=1.0).fit(d.X, d.y)
    fly = memory_limits(storage="on-the-fly")  # the QP reference needs the dense matrix
    with fly, pytest.raises(MemoryBudgetError, match="needs a dense kernel matrix"):
        WeightedSVMClassifier(lam=0.01, sigma=1.0, solver="qp").fit(d.X[:40], d.y[:40] == 1)


def test_command_line_shows_the_refusal_in_one_line_and_exits_2(tmp_path: Path, capsys):
    d = simulate("wuliu2011_ex1", 120, seed=0)
    train = tmp_path / "train.csv"
    rows = ["x1,x2,y"] + [f"{a},{b},{int(c)}" for (a, b), c in zip(d.X, d.y, strict=True)]
    train.write_text("\n".join(rows) + "\n")
    out = tmp_path / "p.csv"
    argv = [
        "fit",
        str(train),
        "--label",
        "y",
        "--lambda",
        "0.01",
        "--sigma",
        "1",
        "--out",
        str(out),
    ]
    with memory_limits(available=16 * 1024):
        status = main(argv)
    err = capsys.readouterr().err.strip()
    assert status == EXIT_INPUT and not out.exists()
    assert err.count("\n") == 0 and "not enough memory" in err and "Dask cluster" in err
    assert "internal error" not in err
