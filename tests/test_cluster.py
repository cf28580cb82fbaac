"""Fits on a Dask cluster (two worker processes, one thread each): the local answers, the
fits done by the workers, cancellation that stops the cluster's work, and the command
line's --scheduler.  One cluster serves the whole module.

"The local answer" means: the same classes, predicted labels, chosen grid cells, weight
grids and path structure exactly, and the same floating-point values to ``RTOL``.  Not to
the last bit: a worker process and this one may sum in a different order (another number
of BLAS threads, other memory alignment for numpy's SIMD reductions), which moves values by
a few units in the last place (4e-15 seen on an idle 2-core machine)."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import fields, replace
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from distributed import Client, Future, LocalCluster

from wsvmgui.app.schemes import fit_scheme
from wsvmgui.app.settings import RunSettings
from wsvmgui.cli import main
from wsvmgui.errors import Cancelled, InputError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.joint import JointWSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.designs import simulate
from wsvmgui.executor import task_counts, use_scheduler


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


def _counts(client) -> dict[str, dict[str, int]]:
    return client.run(task_counts)


def _done_by_workers(client, before) -> list[int]:
    after = _counts(client)
    return [after[w]["finished"] - before.get(w, {}).get("finished", 0) for w in after]


#: Relative tolerance between a cluster's and the local floating-point results: summation
#: order may differ between processes (see the module docstring); 1e-12 is about 5000 units
#: in the last place, far below any difference a change of the fit itself would make.
RTOL = 1e-12


def _assert_close(a, b, rtol: float = RTOL) -> None:
    """Floating-point arrays equal to ``rtol`` of the larger magnitude in ``b`` (absolute
    tolerance ``rtol * max|b|``, for entries near zero); other arrays exactly equal."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    if np.issubdtype(a.dtype, np.inexact):
        scale = float(np.max(np.abs(b), initial=1.0))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)
    else:
        np.testing.assert_array_equal(a, b)


def _assert_same_probabilities(remote, local, X) -> None:
    """The same classes and predicted labels exactly, the probabilities to RTOL."""
    np.testing.assert_array_equal(remote.classes_, local.classes_)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))
    _assert_close(remote.predict_proba(X), local.predict_proba(X))


#: The path's own arrays (breakpoints, coefficients at each breakpoint) are the solutions
#: of a chain of elbow systems, each step's rounding carried into the next: between two
#: processes they differ by up to about 1e-10 of their scale (7e-11 seen), while the
#: probabilities read off them agree to RTOL.
PATH_RTOL = 1e-8


def _assert_same_ladder(a, b) -> None:
    """Every array of two fitted ladders (a path's breakpoints, or a grid's fits): integer
    arrays (the weight grids' sizes, the path's events and index sets) exactly, floats to
    PATH_RTOL."""
    a, b = getattr(a, "path", a), getattr(b, "path", b)
    assert type(a) is type(b)
    for f in fields(a):
        if isinstance(getattr(a, f.name), np.ndarray):
            _assert_close(getattr(a, f.name), getattr(b, f.name), PATH_RTOL)


def _fit_both(client, make, X, y):
    """Fit locally and on the cluster; the tasks each worker finished for the latter."""
    local = make().fit(X, y)
    before, mine = _counts(client), task_counts()
    with use_scheduler(client):
        remote = make().fit(X, y)
    assert task_counts() == mine  # this process ran none of the cluster's tasks
    return local, remote, _done_by_workers(client, before)


def test_tuned_binary_on_the_cluster_is_the_local_fit(client):
    d = simulate("wuliu2011_ex1", 200, seed=1)
    params = dict(n_weights=12, lambdas=[0.02, 0.002], sigmas=[0.5, 1.5], cv=3, n_jobs=2)
    local, remote, done = _fit_both(
        client, lambda: WeightedSVMClassifier(calibration="none", **params), d.X, d.y
    )
    assert remote.fit_info_["backend"].startswith("dask cluster at tcp://")
    assert local.fit_info_["backend"] == "2 threads"
    _assert_close(remote.tuning_.egkl, local.tuning_.egkl)
    assert (remote.lambda_, remote.sigma_) == (local.lambda_, local.sigma_)
    assert remote.fit_info_["final_engines"] == local.fit_info_["final_engines"] == {"path": 1}
    assert remote.fit_info_["tuning_engines"] == local.fit_info_["tuning_engines"]
    _assert_same_ladder(remote.ladder_, local.ladder_)
    _assert_same_probabilities(remote, local, d.X)
    # 2 sigmas x 2 lambdas x 3 folds tuning cells and the final ladder; both workers fit.
    assert sum(done) == 2 * 2 * 3 + 1 and min(done) >= 1


def test_one_vs_all_on_the_cluster_is_the_local_fit(client):
    d = simulate("wu2010_ex1", 150, seed=2)
    params = dict(
        scheme="ova", n_weights=8, lambdas=[0.01, 0.001], sigma=1.0, cv=2, calibration="none"
    )
    local, remote, done = _fit_both(
        client, lambda: MulticlassWeightedSVMClassifier(**params), d.X, d.y
    )
    _assert_same_probabilities(remote, local, d.X)
    for a, b in zip(remote.subproblems_.fitted, local.subproblems_.fitted, strict=True):
        _assert_same_ladder(a.ladder, b.ladder)
    assert sum(done) == 3 * (2 * 2) + 3 and min(done) >= 1  # 3 sub-problems: cells, finals


def test_joint_on_the_cluster_is_the_local_fit(client):
    d = simulate("wu2010_ex1", 90, seed=3)
    params = dict(N=6, kernel="linear", lambdas=[0.05, 0.005], n_jobs=2)
    local, remote, done = _fit_both(client, lambda: JointWSVMClassifier(**params), d.X, d.y)
    _assert_close(remote.fit_.W, local.fit_.W)
    _assert_same_probabilities(remote, local, d.X)
    # Two lambdas on the hold-out, then the refit: 4 warm-start segments each (n_jobs=2).
    assert sum(done) == 3 * 4 and min(done) >= 1


def _arrays(value):
    """Every ndarray in ``value`` (nested tuples and lists)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays(v)]
    return []


def test_data_is_scattered_once_per_stage_and_progress_counts_every_fit(client, monkeypatch):
    d = simulate("wuliu2011_ex1", 300, seed=7)
    scattered, submitted, seen = [], [], []
    scatter, submit = client.scatter, client.submit

    def record_scatter(data, **kw):
        scattered.append(kw)
        return scatter(data, **kw)

    def record_submit(fn, *args, **kw):
        submitted.append(args)
        return submit(fn, *args, **kw)

    monkeypatch.setattr(client, "scatter", record_scatter)
    monkeypatch.setattr(client, "submit", record_submit)
    params = dict(n_weights=10, lambdas=[0.01, 0.001], sigmas=[0.5, 1.0, 2.0], cv=2)
    with use_scheduler(client):
        WeightedSVMClassifier(calibration="none", **params).fit(
            d.X, d.y, progress=lambda done, total, _p: seen.append((done, total))
        )
    # Once for the tuning cells, once for the final fit, each to every worker.
    assert len(scattered) == 2 and all(kw["broadcast"] for kw in scattered)
    assert len(submitted) == 3 * 2 * 2 + 1
    for args in submitted:  # (fn, event, data, ...): the data travel as a future
        assert isinstance(args[2], Future)
        assert all(a.size < d.y.size for a in _arrays(args[3:]))  # no rows of the data
    # Progress grows to its total over the cluster's tasks, never beyond it.
    assert seen[-1][0] == seen[-1][1] == (3 * 2 * 2 + 1) * 9
    assert all(done <= total for done, total in seen)


def test_joblib_dask_backend_sends_the_fits_to_the_cluster(client):
    d = simulate("wuliu2011_ex1", 120, seed=4)
    local = WeightedSVMClassifier(calibration="none", lam=0.01, sigma=1.0, n_weights=10).fit(
        d.X, d.y
    )
    before = _counts(client)
    with joblib.parallel_config(backend="dask"):  # the client above is the default one
        remote = WeightedSVMClassifier(calibration="none", lam=0.01, sigma=1.0, n_weights=10).fit(
            d.X, d.y
        )
    assert sum(_done_by_workers(client, before)) == 1
    assert remote.fit_info_["backend"].startswith("dask cluster")
    _assert_same_probabilities(remote, local, d.X)


def test_cancellation_stops_the_cluster_work(client):
    d = simulate("wuliu2011_ex1", 600, seed=5)
    n_tasks = 4 * 3 * 5
    params = dict(n_weights=120, lambdas=[0.01, 0.003, 0.001], sigmas=[0.3, 0.6, 1, 2], cv=5)
    stop = threading.Event()
    asked = []

    def progress(done, total, partial):
        if done and not stop.is_set():
            asked.append(time.perf_counter())
            stop.set()

    before = _counts(client)
    with use_scheduler(client), pytest.raises(Cancelled):
        WeightedSVMClassifier(calibration="none", **params).fit(
            d.X, d.y, progress=progress, should_cancel=stop.is_set
        )
    # It stops at the next fit whatever the machine's load: the count below is the check;
    # this bound only catches a hang.
    assert time.perf_counter() - asked[0] < 60.0
    # Running tasks see the cancel event at their next fit; none is left running.
    deadline = time.perf_counter() + 15
    while True:
        now = _counts(client)
        started = sum(now[w]["started"] - before[w]["started"] for w in now)
        ended = sum(
            now[w]["finished"] + now[w]["cancelled"] - before[w]["finished"]
            - before[w]["cancelled"]
            for w in now
        )  # fmt: skip
        if started == ended or time.perf_counter() > deadline:
            break
        time.sleep(0.2)
    assert started == ended
    assert started < n_tasks / 2  # most cells never started


def test_command_line_scheduler_gives_the_local_probabilities(client, tmp_path: Path):
    d = simulate("wuliu2011_ex1", 100, seed=6)
    train = tmp_path / "train.csv"
    rows = ["x1,x2,y"] + [f"{a},{b},{int(c)}" for (a, b), c in zip(d.X, d.y, strict=True)]
    train.write_text("\n".join(rows) + "\n")
    argv = ["fit", str(train), "--label", "y", "--lambda", "0.01,0.001", "--sigma", "1"]
    argv += ["--weights", "10", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "local.csv")]) == 0
    address = client.scheduler.address
    assert main([*argv, "--scheduler", address, "--out", str(tmp_path / "dask.csv")]) == 0
    local = pd.read_csv(tmp_path / "local.csv")
    remote = pd.read_csv(tmp_path / "dask.csv")
    assert list(remote.columns) == list(local.columns)
    for column in local.columns:
        a, b = remote[column].to_numpy(), local[column].to_numpy()
        assert a.dtype == b.dtype
        if np.issubdtype(a.dtype, np.floating):
            # written with 10 significant digits: values RTOL apart may round to
            # neighbouring last digits
            np.testing.assert_allclose(a, b, rtol=2e-10, atol=1e-12)
        else:  # row numbers, predicted labels, flags: exactly
            np.testing.assert_array_equal(a, b)


def test_app_settings_with_a_scheduler_fit_on_the_cluster(client):
    """The app's one entry point (CLI and GUI runs) with ``scheduler`` set: the workers
    fit, the answer is the local one, and the setting survives a settings file."""
    d = simulate("wu2010_ex1", 120, seed=8)
    local = RunSettings(
        scheme="ova", lambdas=[0.01, 0.001], sigmas=[1.0], n_weights=8, calibration="none"
    )
    remote = replace(local, scheduler=client.scheduler.address)
    assert RunSettings.from_json(remote.to_json()).scheduler == client.scheduler.address
    a = fit_scheme(local.validate(), d.X, d.y)
    before = _counts(client)
    b = fit_scheme(remote.validate(), d.X, d.y)
    assert sum(_done_by_workers(client, before)) > 0
    assert b.fit_info_["backend"].startswith("dask cluster at tcp://")
    _assert_same_probabilities(b, a, d.X)
    with pytest.raises(InputError, match="scheduler must be an address"):
        replace(local, scheduler=8786).validate()
