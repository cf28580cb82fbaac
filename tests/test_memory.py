"""The memory budget: what the machine has, the plan before the work (dense kernel, values
on the fly, or a one-line refusal), and what the estimators and the command line make of it."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from wsvmgui.cli import EXIT_INPUT, main
from wsvmgui.errors import InputError, MemoryBudgetError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.path import fit_path
from wsvmgui.solvers import memory
from wsvmgui.solvers.kernels import Kernel
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


def test_the_path_plan_holds_its_own_rows_and_its_storage():
    """The path needs the dense matrix of its own rows: a tuning run holds one fold's
    matrix (not all rows' plus a copy per thread) and plans the path's storage."""
    n, fold = 6000, 4200  # the default 30% hold-out
    grid = ladder_storage(n, 5, fold, 153, 2, 8 * GB, kernel_free=True)
    path = ladder_storage(n, 5, fold, 153, 2, 8 * GB, kernel_free=False, n_held=fold, path=True)
    assert path.held_rows == fold and grid.held_rows == n
    assert path.engine_bytes == memory.path_bytes(fold) > 0
    # One fold's matrix and two paths: less than the grid's matrix of all rows.
    assert 8 * fold**2 + 2 * path.engine_bytes < path.need < grid.need
    assert "of 4,200 rows" in path.describe() and "path storage about" in path.describe()
    final = ladder_storage(n, 5, n, 153, 1, 8 * GB, kernel_free=False, path=True)
    assert final.need < 1.5 * 8 * n * n + 400 * MB  # issue 13's target, fixed run
    # A sub-problem on part of the held rows takes a copy of its rows' matrix.
    pair = ladder_storage(n, 5, 3000, 153, 2, 8 * GB, kernel_free=False, n_held=fold, path=True)
    sub = ladder_storage(n, 5, 3000, 153, 2, 8 * GB, kernel_free=False, n_held=3000, path=True)
    assert pair.need - 8 * fold**2 == pytest.approx(sub.need - 8 * 3000**2 + 2 * 8 * 3000**2)


def test_planned_path_storage_covers_a_measured_path():
    """What a path allocates beside its kernel matrix (numpy arrays, traced) stays within
    :func:`path_bytes` on a smooth design (small elbows, as planned)."""
    d = simulate("wuliu2011_ex1", 800, seed=0)
    y = np.where(d.y > 0, 1.0, -1.0)
    K = Kernel("rbf", sigma=1.0)(d.X)
    fit_path(K[:60, :60], y[:60], 0.01)  # compile first
    tracemalloc.start()
    try:
        path = fit_path(K, y, 1 / (2 * y.size))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert path.max_elbow < memory.PATH_ELBOW_SHARE * y.size
    assert path.nbytes < peak <= memory.path_bytes(y.size)


def test_a_path_run_that_does_not_fit_takes_the_grid_on_the_fly_or_is_refused():
    d = simulate("wuliu2011_ex1", 200, seed=1)
    tight = dict(available=200 * 1024)
    with memory_limits(**tight), pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "FLY_CACHE_MIN_MB", 0.1)
        mp.setattr(memory, "_per_fit", lambda *a: 1024.0)
        est = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
        assert "grid ladder of 7 weights instead of the path engine" in est.fit_info_["kernel"]
        with memory_limits(**tight, storage="dense"), pytest.raises(MemoryBudgetError):
            WeightedSVMClassifier(lam=0.01, sigma=1.0).fit(d.X, d.y)
    with memory_limits(storage="on-the-fly"):  # forced: the path gives way too
        forced = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
    assert forced.fit_info_["final_engines"] == {"grid": 1}
    np.testing.assert_array_equal(forced.predict_proba(d.X), est.predict_proba(d.X))
    roomy = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
    assert roomy.fit_info_["final_engines"] == {"path": 1}
    assert "path storage about" in roomy.fit_info_["kernel"]
    # A path whose own storage would not fit, where the grid's dense matrix does.
    with memory_limits(available=256 * MB), pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "path_bytes", lambda n: GB)
        grid = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
    assert grid.fit_info_["kernel"].startswith("dense kernel matrix")
    assert "instead of the path engine, whose matrix and storage" in grid.fit_info_["kernel"]
    assert grid.fit_info_["final_engines"] == {"grid": 1}


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
    probabilities (up to libsvm's tolerance) as the dense kernel.  The path (the default
    engine) needs the dense matrix, so the grid engine takes over and says so."""
    d = simulate("wuliu2011_ex1", 240, seed=2)
    params = dict(n_weights=16, lambdas=[0.02, 0.002], sigmas=[0.5, 1.5], cv=3)
    dense = WeightedSVMClassifier(engine="grid", **params).fit(d.X, d.y)
    assert dense.fit_info_["kernel"].startswith("dense kernel matrix")
    # 300 kB: the 450 kB kernel of 240 rows does not fit, values on the fly do.
    with memory_limits(available=300 * 1024), pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "FLY_CACHE_MIN_MB", 0.1)
        mp.setattr(memory, "BLOCK_BYTES", 1024)
        mp.setattr(memory, "_per_fit", lambda *a: 1024.0)
        fly = WeightedSVMClassifier(**params).fit(d.X, d.y)
        fly_grid = WeightedSVMClassifier(engine="grid", **params).fit(d.X, d.y)
    for info in (fly.fit_info_["kernel"], fly.fit_info_["tuning_kernel"]):
        assert "on the fly" in info and "instead of the path engine" in info
    assert fly.fit_info_["final_engines"] == {"grid": 1}
    assert fly.fit_info_["tuning_engines"] == {"grid": 2 * 2 * 3}
    assert "instead of" not in fly_grid.fit_info_["kernel"]
    np.testing.assert_array_equal(fly.predict_proba(d.X), fly_grid.predict_proba(d.X))
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
