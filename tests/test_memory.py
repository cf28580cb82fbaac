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


def test_a_path_run_that_does_not_fit_works_on_the_fly_or_gives_way_to_the_grid():
    d = simulate("wuliu2011_ex1", 200, seed=1)
    roomy = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
    assert roomy.fit_info_["final_engines"] == {"path": 1}
    assert "path storage about" in roomy.fit_info_["kernel"]
    with memory_limits(storage="on-the-fly"):  # forced: the path reads rows made on the fly
        fly = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
    assert fly.fit_info_["final_engines"] == {"path": 1}
    assert "on the fly" in fly.fit_info_["kernel"] and "path rows up to" in fly.fit_info_["kernel"]
    np.testing.assert_allclose(fly.predict_proba(d.X), roomy.predict_proba(d.X), atol=1e-8)
    # Too tight even for the path's rows and blocks: the grid on the fly takes over.
    tight = dict(available=200 * 1024)
    with memory_limits(**tight), pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "FLY_CACHE_MIN_MB", 0.1)
        mp.setattr(memory, "_per_fit", lambda *a: 1024.0)
        est = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
        assert "grid ladder of 7 weights instead of the path engine" in est.fit_info_["kernel"]
        assert est.fit_info_["final_engines"] == {"grid": 1}
        with memory_limits(**tight, storage="dense"), pytest.raises(MemoryBudgetError):
            WeightedSVMClassifier(lam=0.01, sigma=1.0).fit(d.X, d.y)
    # A path whose own storage would not fit, where the grid's dense matrix does.
    with memory_limits(available=256 * MB), pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "path_bytes", lambda n: GB)
        mp.setattr(memory, "path_fly_bytes", lambda n: GB)
        grid = WeightedSVMClassifier(lam=0.01, sigma=1.0, n_weights=8).fit(d.X, d.y)
    assert grid.fit_info_["kernel"].startswith("dense kernel matrix")
    assert "instead of the path engine, whose matrix and storage" in grid.fit_info_["kernel"]
    assert grid.fit_info_["final_engines"] == {"grid": 1}


def test_the_budget_defaults_to_what_a_laptop_has(monkeypatch):
    """The plan's budget is at most DEFAULT_BUDGET (2 GB) unless the environment says
    otherwise: n = 20,000 (a 3 GB kernel) runs the path on the fly, not dense."""
    monkeypatch.delenv(memory.BUDGET_VARIABLE, raising=False)
    assert memory.budget() == memory.DEFAULT_BUDGET == 2 * GB
    found = available_memory()
    assert found is not None and found <= 2 * GB
    plan = ladder_storage(20_000, 2, 20_000, 282, 1, found, kernel_free=False, path=True)
    assert plan.mode == "on-the-fly" and plan.need <= 0.9 * found
    assert plan.engine_bytes == memory.path_fly_bytes(20_000)
    for text, value in (("8G", 8 * GB), ("512m", 512 * MB), ("1.5GB", int(1.5 * GB))):
        monkeypatch.setenv(memory.BUDGET_VARIABLE, text)
        assert memory.budget() == value
    monkeypatch.setenv(memory.BUDGET_VARIABLE, "none")
    assert memory.budget() is None
    monkeypatch.setenv(memory.BUDGET_VARIABLE, "lots")
    with pytest.raises(InputError, match="WSVMGUI_MEMORY_BUDGET='lots'.*8G"):
        available_memory()
    with memory_limits(available=123 * MB):  # an explicit limit wins
        assert available_memory() == 123 * MB


def test_freed_blocks_go_back_to_the_system():
    """On glibc the threshold for returning freed blocks is fixed at 4 MB: blocks of kernel
    values (here 5 MB) freed by a thread after a larger one (which would have raised
    glibc's threshold to 32 MB) do not stay resident."""
    import os
    import sys
    import threading

    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        pytest.skip("glibc only")
    assert memory.bound_heap_retention() is True

    def rss() -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def churn() -> None:
        big = np.ones(5_000_000)  # 40 MB
        del big
        for _ in range(3):
            blocks = [np.ones(650_000) for _ in range(30)]  # 30 x 5 MB
            del blocks

    before = rss()
    t = threading.Thread(target=churn)
    t.start()
    t.join()
    assert rss() - before < 50 * MB


def test_estimator_chooses_on_the_fly_by_itself_and_agrees_with_the_dense_fit():
    """Kernel-free mode on a small problem: the same tuning choice and the same
    probabilities (up to libsvm's tolerance) as the dense kernel.  The path (the default
    engine) would work on the fly too, but its rows and blocks do not fit in 300 kB, so the
    grid engine takes over and says so."""
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
        WeightedSVMClassifier(lam=0.01, sigma=1.0, solver="qp", engine="grid").fit(
            d.X[:40], d.y[:40] == 1
        )


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
    # refused by the fit's plan (its ladders' storage) before the kernel's own check
    assert err.count("\n") == 0 and "not enough memory" in err and "120 rows" in err
    assert "internal error" not in err


def test_the_kernel_refusal_names_the_ways_out():
    """The kernel storage's own refusal (reached where a fit's plan fits but its kernel
    does not) says how much, what is available and the ways out, a cluster among them."""
    from wsvmgui.solvers.memory import ladder_storage

    with pytest.raises(MemoryBudgetError) as err:
        ladder_storage(5000, 3, 4000, 39, 2, 2**20, kernel_free=True, what="the fit")
    text = str(err.value)
    assert text.startswith("not enough memory: the fit on 5,000 rows needs about")
    assert "1 MB is available" in text and "Dask cluster (--scheduler)" in text
    with pytest.raises(MemoryBudgetError) as err:
        ladder_storage(5000, 3, 4000, 39, 2, 2**20, kernel_free=True, cluster=True)
    assert "each Dask worker's" in str(err.value)
