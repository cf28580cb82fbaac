"""Speed of the weight ladder against dense QP and against one Platt-scaled SVM.

For each training size n (design ``wuliu2011_ex1``, RBF kernel with sigma = sigma_M,
lambda = 1 / (2 n C) with C = 1, the middle of the default grid) this times, side by side
and round-robin in one process:

* ``ladder_sqrt`` / ``ladder_default``: the kernel matrix built once plus ``fit_ladder``
  (solver "libsvm", one thread) over the M - 1 interior weights, for M = floor(sqrt(n))
  and for the project default ``default_n_weights(n)``;
* ``ladder_sqrt_2jobs``: the same with ``fit_ladder(n_jobs=2)`` (weights on two threads);
* ``ladder_sqrt_svc``: the same ladder through the public ``SVC`` path of
  ``wsvmgui.solvers.wsvm`` (the library's direct libsvm binding switched off), i.e. with
  scikit-learn's per-call validation of the n x n kernel;
* ``proto_direct`` (prototype, not the library): direct libsvm calls as the library makes
  them, with the KKT check of all fits batched into one matrix product;
* ``platt_svc``: libsvm's Platt scaling (the baselines' rebuild of ``SVC(probability=True)``,
  which scikit-learn 1.11 removes; results before that rebuild used ``SVC`` itself) and
  ``calibrated_cv``: its named replacement
  ``CalibratedClassifierCV(SVC(), ensemble=False)``; ``svc_plain``: one plain ``SVC`` fit;
  all with gamma = 1 / sigma^2 and the same C;
* ``qp_ladder``: the ladder with the dense dual solved by quadprog (``solver="qp"``).  A
  single fit is timed first; the full ladder is timed when it fits in a time budget,
  otherwise one or two fits are timed and multiplied by M - 1 (marked "extrapolated"); a
  size whose single fit is predicted (by n^3 scaling from the previous size) to exceed
  ``--qp-max-predicted`` seconds is not run at all (marked "estimated, not run").

Every timing is repeated and the median reported; ratios are medians of per-round ratios
(each round runs every method once, in a rotating order), which is robust to other
processes on a shared machine.  BLAS is limited to one thread (``--threads``) so that
numpy's kernel build and libsvm are both single-threaded.

Writes ``benchmarks/results/ladder_speed.{md,json}``.  Run::

    python benchmarks/ladder_speed.py            # full run, ~5 min CPU (longer when loaded)
    python benchmarks/ladder_speed.py --quick    # n <= 1000, about 1 minute
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import numpy as np
import sklearn
from sklearn.calibration import CalibratedClassifierCV
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

import wsvmgui.solvers._libsvm_direct as libsvm_direct
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.evaluation.baselines import _PlattSVC
from wsvmgui.evaluation.designs import simulate
from wsvmgui.ladder.grid import fit_ladder
from wsvmgui.ladder.splits import AUTO_CV_MAX_N
from wsvmgui.ladder.tuning import default_lambda_grid, default_n_weights
from wsvmgui.ladder.weights import weight_grid
from wsvmgui.solvers.kernels import Kernel, median_between_class_distance
from wsvmgui.solvers.wsvm import (
    fit_weighted_svm,
    kkt_residual,
    penalty_to_C,
    sample_bounds,
)

RESULTS = Path(__file__).resolve().parent / "results"


# --------------------------------------------------------------------------- prototypes
def _kkt_from_fits(
    F: np.ndarray, y: np.ndarray, alpha: np.ndarray, b: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """The KKT residual of :func:`wsvmgui.solvers.wsvm.kkt_residual` for many fits at once.

    Parameters
    ----------
    F : ndarray, shape (n, L)
        ``K @ coef.T``; the fits without intercept at the training points.
    y : ndarray, shape (n,)
    alpha, upper : ndarray, shape (L, n)
    b : ndarray, shape (L,)

    Returns
    -------
    ndarray, shape (L,)
    """
    safe = np.maximum(upper, 1e-300)
    r = alpha / safe
    bound = np.maximum(np.maximum((-r).max(axis=1), (r - 1.0).max(axis=1)), 0.0)
    equality = np.abs(alpha @ y) / np.maximum(alpha.sum(axis=1), 1e-300)
    margin = y[None, :] * (F.T + b[:, None]) - 1.0
    rc = np.clip(r, 0.0, 1.0)
    slack = (np.maximum(-margin, 0.0) * (1.0 - rc)).max(axis=1)
    excess = (np.maximum(margin, 0.0) * rc).max(axis=1)
    return np.maximum.reduce([bound, equality, slack, excess])


def _direct_fit(K: np.ndarray, y: np.ndarray, y01: np.ndarray, pi: float, C: float):
    """One weighted fit through the direct libsvm binding (no input validation).

    Returns alpha (n,), intercept, upper bounds (n,), libsvm CPU seconds of this thread.
    """
    upper = sample_bounds(y, pi, C)
    t0 = time.thread_time()
    alpha, intercept = libsvm_direct.fit_direct(K, y, upper, C)
    return alpha, intercept, upper, time.thread_time() - t0


def direct_ladder(
    K: np.ndarray, y: np.ndarray, weights: np.ndarray, lam: float, threads: int = 1
) -> dict:
    """Prototype ladder: direct libsvm calls, batched KKT check; parts and CPU timings."""
    C = penalty_to_C(lam, y.size)
    y01 = np.ascontiguousarray((y > 0).astype(np.float64))
    t0 = time.process_time()
    if threads > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            outs = list(pool.map(lambda pi: _direct_fit(K, y, y01, float(pi), C), weights))
    else:
        outs = [_direct_fit(K, y, y01, float(pi), C) for pi in weights]
    t1 = time.process_time()
    alpha = np.vstack([o[0] for o in outs])
    b = np.array([o[1] for o in outs])
    upper = np.vstack([o[2] for o in outs])
    F = K @ (alpha * y[None, :]).T
    resid = _kkt_from_fits(F, y, alpha, b, upper)
    t2 = time.process_time()
    return {
        "alpha": alpha,
        "intercept": b,
        "kkt": resid,
        "fits_s": t1 - t0,
        "kkt_s": t2 - t1,
        "libsvm_s": float(sum(o[3] for o in outs)),
    }


# ------------------------------------------------------------------------------ helpers
def _platt(X, y, C, gamma):
    return _PlattSVC(C=C, gamma=gamma, random_state=0).fit(X, y)


def _calibrated(X, y, C, gamma):
    return CalibratedClassifierCV(SVC(C=C, gamma=gamma), ensemble=False).fit(X, y)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _timed2(fn) -> tuple[float, float]:
    """Wall-clock and process CPU seconds of ``fn()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def _median(xs) -> float:
    return float(statistics.median(xs))


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return []


def check_prototype(K, y, weights, lam) -> dict:
    """The prototype's answer equals the library's (coefficients, intercepts, KKT)."""
    ref = fit_ladder(K, y, weights, lam)
    proto = direct_ladder(K, y, weights, lam)
    coef = proto["alpha"] * y[None, :]
    m = len(weights) // 2
    single = kkt_residual(
        K,
        y,
        proto["alpha"][m],
        proto["intercept"][m],
        sample_bounds(y, weights[m], penalty_to_C(lam, y.size)),
    )
    return {
        "max_coef_diff": float(np.abs(coef - ref.coef).max()),
        "max_intercept_diff": float(np.abs(proto["intercept"] - ref.intercept).max()),
        "max_kkt_diff": float(np.abs(proto["kkt"] - ref.kkt_residual).max()),
        "batched_vs_single_kkt_diff": float(abs(single - proto["kkt"][m])),
    }


# ------------------------------------------------------------------------------- one n
def bench_size(n: int, args, qp_state: dict) -> dict:
    data = simulate(args.design, n, seed=args.seed)
    X, y = data.X, data.y.astype(float)
    sigma = median_between_class_distance(X, y)
    kern = Kernel("rbf", sigma=sigma)
    gamma = 1.0 / sigma**2
    lam = float(default_lambda_grid(n)[2])
    C = penalty_to_C(lam, n)
    m_sqrt = int(np.floor(np.sqrt(n)))
    m_def = default_n_weights(n)
    w_sqrt, w_def = weight_grid(m_sqrt), weight_grid(m_def)
    parts: dict[str, list[dict]] = {}

    def ladder(weights, key):
        def run():
            t0 = time.process_time()
            K = kern(X)
            t1 = time.process_time()
            fit_ladder(K, y, weights, lam)
            parts.setdefault(key, []).append(
                {"kernel_s": t1 - t0, "fits_s": time.process_time() - t1}
            )

        return run

    def svc_path():
        with mock.patch.object(libsvm_direct, "direct_binding_live", lambda: False):
            t0 = time.process_time()
            fit_ladder(kern(X), y, w_sqrt, lam)
            parts.setdefault("ladder_sqrt_svc", []).append({"fits_s": time.process_time() - t0})

    def jobs2():
        fit_ladder(kern(X), y, w_sqrt, lam, n_jobs=2)

    def proto(threads, key):
        def run():
            t0 = time.process_time()
            K = kern(X)
            t1 = time.process_time()
            out = direct_ladder(K, y, w_sqrt, lam, threads)
            parts.setdefault(key, []).append(
                {
                    "kernel_s": t1 - t0,
                    "fits_s": out["fits_s"],
                    "kkt_s": out["kkt_s"],
                    "libsvm_s": out["libsvm_s"],
                }
            )

        return run

    methods = {
        "ladder_sqrt": ladder(w_sqrt, "ladder_sqrt"),
        "ladder_default": ladder(w_def, "ladder_default"),
        "ladder_sqrt_svc": svc_path,
        "proto_direct": proto(1, "proto_direct"),
        "platt_svc": lambda: _platt(X, y, C, gamma),
        "calibrated_cv": lambda: _calibrated(X, y, C, gamma),
        "svc_plain": lambda: SVC(C=C, gamma=gamma).fit(X, y),
    }
    if not args.no_threads:
        methods["ladder_sqrt_2jobs"] = jobs2
    names = list(methods)
    for fn in methods.values():  # warm-up (imports, caches), not timed
        fn()
    parts.clear()
    times: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    repeats = args.repeats if n < 2000 else min(args.repeats, args.repeats_large)
    for r in range(repeats):
        order = names[r % len(names) :] + names[: r % len(names)]
        for k in order:
            wall, c = _timed2(methods[k])
            times[k].append(wall)
            cpu[k].append(c)
    rounds = {k: np.array(v) for k, v in times.items()}
    crounds = {k: np.array(v) for k, v in cpu.items()}
    ratios = {f"{k}/platt_svc": _median(rounds[k] / rounds["platt_svc"]) for k in names}
    ratios.update(
        {
            f"{k}/calibrated_cv": _median(rounds[k] / rounds["calibrated_cv"])
            for k in ("ladder_sqrt", "ladder_default", "proto_direct")
        }
    )
    cpu_ratios = {f"{k}/platt_svc": _median(crounds[k] / crounds["platt_svc"]) for k in names}
    cpu_ratios.update(
        {
            f"{k}/calibrated_cv": _median(crounds[k] / crounds["calibrated_cv"])
            for k in ("ladder_sqrt", "ladder_default", "proto_direct")
        }
    )

    # Where the library ladder's time goes (one extra, untimed-by-rounds pass).
    K = kern(X)
    fits = [fit_weighted_svm(K, y, float(pi), lam) for pi in w_sqrt]
    t0 = time.process_time()
    for f in fits:
        kkt_residual(K, y, f.alpha, f.intercept, sample_bounds(y, f.pi, C))
    kkt_core = time.process_time() - t0
    med = {k: _median(v) for k, v in times.items()}
    ladder_fit_s = _median([p["fits_s"] for p in parts["ladder_sqrt"]])
    libsvm_s = _median([p["libsvm_s"] for p in parts["proto_direct"]])
    breakdown = {
        "kernel_build_s": _median([p["kernel_s"] for p in parts["ladder_sqrt"]]),
        "fit_ladder_s": ladder_fit_s,
        "libsvm_s": libsvm_s,
        "kkt_check_s": kkt_core,
        "other_overhead_s": ladder_fit_s - libsvm_s - kkt_core,
        "svc_path_fit_ladder_s": (
            svc_fit := _median([p["fits_s"] for p in parts["ladder_sqrt_svc"]])
        ),
        "svc_path_overhead_s": svc_fit - libsvm_s - kkt_core,
        "batched_kkt_s": _median([p["kkt_s"] for p in parts["proto_direct"]]),
        "per_fit_libsvm_ms": 1e3 * libsvm_s / len(w_sqrt),
    }
    check = check_prototype(K, y, w_sqrt, lam)

    med_cpu = {k: _median(v) for k, v in cpu.items()}
    qp = bench_qp(
        n, K, y, lam, w_sqrt, w_def, (med["ladder_sqrt"], med_cpu["ladder_sqrt"]), args, qp_state
    )
    return {
        "n": n,
        "sigma": sigma,
        "lambda": lam,
        "C": C,
        "M_sqrt": m_sqrt,
        "M_default": m_def,
        "times_s": times,
        "cpu_s": cpu,
        "median_s": med,
        "median_cpu_s": med_cpu,
        "ratios": ratios,
        "cpu_ratios": cpu_ratios,
        "breakdown": breakdown,
        "prototype_check": check,
        "qp": qp,
        "load_after": _load(),
    }


def bench_qp(n, K, y, lam, w_sqrt, w_def, ladder_med, args, state) -> dict:
    """Dense quadprog ladder: measured, extrapolated from 1-3 fits, or estimated.

    ``ladder_med`` is the (wall, cpu) median of the libsvm ladder at this size; times
    here are (wall, cpu) too, and the extrapolations use CPU seconds per fit.
    """
    out: dict = {"solver": "quadprog"}
    if args.no_qp:
        out["status"] = "not run (--no-qp)"
        return out
    last = state.get("last")  # (n, cpu seconds per fit)
    predicted = None if last is None else last[1] * (n / last[0]) ** 3
    mid = float(w_sqrt[len(w_sqrt) // 2])

    def one(pi):
        return _timed2(lambda: fit_weighted_svm(K, y, pi, lam, solver="qp"))

    if state.get("stopped") or (predicted is not None and predicted > args.qp_max_predicted):
        wall, cpu = None, predicted  # a CPU-time estimate; there is no wall-clock one
        out.update(
            status="estimated, not run",
            note=f"one fit predicted {predicted:.0f} s by n^3 scaling from n={last[0]}",
        )
    else:
        wall, cpu = one(mid)
        out["first_fit"] = {"pi": mid, "wall_s": wall, "cpu_s": cpu}
        if cpu > args.qp_cap:
            state["stopped"] = True
            out.update(
                status="extrapolated from 1 fit",
                note=f"single fit took {cpu:.0f} s > {args.qp_cap:.0f} s: no more QP "
                "fits at this or larger sizes",
            )
        elif cpu * len(w_sqrt) <= args.qp_full_budget:
            wall_f, cpu_f = _timed2(lambda: fit_ladder(K, y, w_sqrt, lam, solver="qp"))
            wall, cpu = wall_f / len(w_sqrt), cpu_f / len(w_sqrt)
            out.update(status="measured (full ladder)")
        else:
            pis = (float(w_sqrt[len(w_sqrt) // 4]), float(w_sqrt[(3 * len(w_sqrt)) // 4]))
            more = [one(pi) for pi in pis]
            out["sampled"] = [
                {"pi": pi, "wall_s": t[0], "cpu_s": t[1]} for pi, t in zip(pis, more, strict=True)
            ]
            wall = float(np.mean([wall, *(t[0] for t in more)]))
            cpu = float(np.mean([cpu, *(t[1] for t in more)]))
            out.update(status="extrapolated from 3 fits")
        state["last"] = (n, cpu)
    wall_ladder = None if wall is None else wall * len(w_sqrt)
    out.update(
        per_fit_wall_s=wall,
        per_fit_cpu_s=cpu,
        ladder_sqrt_wall_s=wall_ladder,
        ladder_sqrt_cpu_s=cpu * len(w_sqrt),
        ladder_default_cpu_s=cpu * len(w_def),
    )
    out["qp_over_ladder_sqrt_wall"] = None if wall is None else wall_ladder / ladder_med[0]
    out["qp_over_ladder_sqrt_cpu"] = out["ladder_sqrt_cpu_s"] / ladder_med[1]
    return out


def bench_tuned(n: int, args) -> dict:
    """The whole default tuned fit against one Platt-scaled SVC (interleaved)."""
    data = simulate(args.design, n, seed=args.seed)
    X, y = data.X, data.y
    sigma = median_between_class_distance(X, y)
    C = 1.0
    tuned, platt = [], []
    info = {}
    for _ in range(args.tuned_repeats):
        platt.append(_timed2(lambda: _platt(X, y, C, 1.0 / sigma**2)))
        clf = WeightedSVMClassifier()
        tuned.append(_timed2(lambda clf=clf: clf.fit(X, y)))
        info = dict(
            clf.fit_info_,
            M=len(clf.weights_) + 1,
            best_lambda=clf.lambda_,
            best_sigma=clf.sigma_,
            tuning="5-fold CV" if n <= AUTO_CV_MAX_N else "30% hold-out",
        )
    tw, tc = _median([t[0] for t in tuned]), _median([t[1] for t in tuned])
    pw, pc = _median([t[0] for t in platt]), _median([t[1] for t in platt])
    return {
        "n": n,
        "tuned_wall_cpu_s": tuned,
        "platt_wall_cpu_s": platt,
        "tuned_wall_s": tw,
        "tuned_cpu_s": tc,
        "platt_wall_s": pw,
        "platt_cpu_s": pc,
        "tuned_over_platt_wall": tw / pw,
        "tuned_over_platt_cpu": tc / pc,
        "fit_info": info,
    }


# ------------------------------------------------------------------------------ report
def fmt_s(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    return f"{x * 1e3:.1f} ms"


def _ratio(x: float | None) -> str:
    if x is None or not np.isfinite(x):
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}"


METHOD_TITLES = {
    "ladder_sqrt": "ladder, M = floor(sqrt n)",
    "ladder_default": "ladder, M = default_n_weights(n)",
    "ladder_sqrt_2jobs": "ladder, M = floor(sqrt n), fit_ladder(n_jobs=2)",
    "ladder_sqrt_svc": "ladder, M = floor(sqrt n), through public SVC (old path)",
    "proto_direct": "prototype: direct libsvm + batched KKT",
    "platt_svc": "SVC(probability=True)",
    "calibrated_cv": "CalibratedClassifierCV(SVC(), ensemble=False)",
    "svc_plain": "SVC() (one fit, no probabilities)",
}


def write_markdown(res: dict, path: Path) -> None:
    L = []
    meta = res["meta"]
    sizes = res["sizes"]
    L += [
        "# Ladder speed: weight ladder vs dense QP vs one Platt-scaled SVM",
        "",
        f"Generated by `python benchmarks/ladder_speed.py {' '.join(meta['argv'])}`".rstrip()
        + f" on {meta['date']} ({meta['machine']}, {meta['cpus']} CPUs shared with other "
        f"jobs; load average at start {meta['load_start']}, at end {meta['load_end']}; BLAS "
        f"threads {meta['threads']}; total {meta['total_s']:.0f} s).  Python "
        f"{meta['python']}, numpy {meta['numpy']}, scikit-learn {meta['sklearn']}.",
        "",
        f"Design `{meta['design']}` (seed {meta['seed']}), RBF kernel with sigma = sigma_M, "
        "lambda = 1/(2n) (C = 1, the middle of the default grid), the same gamma = "
        "1/sigma^2 and C for the scikit-learn fits.  Each of "
        f"{meta['repeats']} rounds (at most {meta['repeats_large']} for n >= 2000) runs every "
        "method once (rotating order); times are "
        "medians, ratios are medians of the per-round ratios.  Ladder times include "
        "building the n x n kernel matrix once.  Because the machine is shared, both "
        "wall-clock and process CPU time are recorded; CPU time is the more stable measure "
        "for these single-threaded methods (not for the n_jobs=2 ladder, whose CPU time "
        "adds both threads).",
        "",
        *(f"Note: {note}" for note in meta.get("notes", [])),
        *([""] if meta.get("notes") else []),
        "## Median wall-clock time",
        "",
        "| method | " + " | ".join(f"n = {r['n']}" for r in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for k, title in METHOD_TITLES.items():
        if k not in sizes[0]["median_s"]:
            continue
        L.append(f"| {title} | " + " | ".join(fmt_s(r["median_s"][k]) for r in sizes) + " |")
    L.append(
        "| M = floor(sqrt n) / default | "
        + " | ".join(f"{r['M_sqrt']} / {r['M_default']}" for r in sizes)
        + " |"
    )
    L.append(
        "| dense-QP ladder, M = floor(sqrt n) (CPU) | "
        + " | ".join(
            fmt_s(r["qp"].get("ladder_sqrt_cpu_s"))
            + (
                ""
                if r["qp"].get("status", "").startswith("measured")
                else f" ({r['qp'].get('status')})"
            )
            for r in sizes
        )
        + " |"
    )
    L += [
        "",
        "## Median CPU time",
        "",
        "| method | " + " | ".join(f"n = {r['n']}" for r in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for k, title in METHOD_TITLES.items():
        if k not in sizes[0]["median_cpu_s"]:
            continue
        L.append(f"| {title} | " + " | ".join(fmt_s(r["median_cpu_s"][k]) for r in sizes) + " |")
    L += [
        "",
        "## Ratios (wall / CPU)",
        "",
        "| ratio | " + " | ".join(f"n = {r['n']}" for r in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    rows = [
        ("ladder sqrt / Platt", "ladder_sqrt/platt_svc"),
        ("ladder default / Platt", "ladder_default/platt_svc"),
        ("ladder sqrt / CalibratedCV", "ladder_sqrt/calibrated_cv"),
        ("CalibratedCV / Platt", "calibrated_cv/platt_svc"),
        ("plain SVC / Platt", "svc_plain/platt_svc"),
        ("ladder sqrt, n_jobs=2 / Platt", "ladder_sqrt_2jobs/platt_svc"),
        ("ladder sqrt via public SVC / Platt", "ladder_sqrt_svc/platt_svc"),
        ("prototype batched KKT / Platt", "proto_direct/platt_svc"),
    ]
    for title, key in rows:
        if key not in sizes[0]["ratios"]:
            continue
        L.append(
            f"| {title} | "
            + " | ".join(
                f"{_ratio(r['ratios'][key])} / {_ratio(r['cpu_ratios'][key])}" for r in sizes
            )
            + " |"
        )
    L.append(
        "| dense-QP ladder / ladder sqrt | "
        + " | ".join(
            f"{_ratio(r['qp'].get('qp_over_ladder_sqrt_wall'))} / "
            f"{_ratio(r['qp'].get('qp_over_ladder_sqrt_cpu'))}"
            for r in sizes
        )
        + " |"
    )
    L += [
        "",
        "## Where the library ladder's time goes (M = floor(sqrt n), CPU time)",
        "",
        "libsvm time is measured inside the direct prototype (the library's own calls); "
        "`other` = fit_ladder - libsvm - KKT checks (Python bookkeeping of the library "
        "path); `SVC-path overhead` is the same for the public SVC path, i.e. mostly "
        "scikit-learn's per-call validation of the n x n precomputed kernel (finiteness "
        "scan, type_of_target, sample-weight checks).",
        "",
        "| n | kernel build | fit_ladder | libsvm | KKT checks (M-1 mat-vecs) | other "
        "| fit_ladder via SVC | SVC-path overhead | batched KKT (1 GEMM) | libsvm per fit |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sizes:
        b = r["breakdown"]
        L.append(
            f"| {r['n']} | {fmt_s(b['kernel_build_s'])} | {fmt_s(b['fit_ladder_s'])} "
            f"| {fmt_s(b['libsvm_s'])} | {fmt_s(b['kkt_check_s'])} "
            f"| {fmt_s(b['other_overhead_s'])} | {fmt_s(b['svc_path_fit_ladder_s'])} "
            f"| {fmt_s(b['svc_path_overhead_s'])} | {fmt_s(b['batched_kkt_s'])} "
            f"| {b['per_fit_libsvm_ms']:.2f} ms |"
        )
    L += [
        "",
        "Prototype check (direct libsvm + batched KKT against the library's "
        "fit_ladder, same data): "
        + "; ".join(
            f"n={r['n']}: max |coef diff| {r['prototype_check']['max_coef_diff']:.1e}, "
            f"max |KKT diff| {r['prototype_check']['max_kkt_diff']:.1e}"
            for r in sizes
        )
        + ".",
        "",
    ]
    L += ['## Dense QP (quadprog, solver="qp")', ""]
    for r in sizes:
        qp = r["qp"]
        extra = f"; {qp['note']}" if "note" in qp else ""
        L.append(
            f"- n = {r['n']}: {qp.get('status')}, "
            f"{fmt_s(qp.get('per_fit_cpu_s'))} CPU per fit{extra}."
        )
    if res.get("tuned"):
        L += [
            "",
            "## Whole tuned fit (WeightedSVMClassifier() defaults)",
            "",
            "Default grids (7 lambdas x 6 sigmas), tuned by 5-fold CV for n <= 500 and on "
            "a 70/30 split above, then the final ladder on all n points; compared with one "
            "SVC(probability=True) fit at C = 1, sigma = sigma_M (no tuning).",
            "",
            "| n | M (refit) | weighted fits | tuned fit wall / CPU | one Platt SVC wall / CPU "
            "| ratio wall / CPU |",
            "|---|---|---|---|---|---|",
        ]
        for t in res["tuned"]:
            L.append(
                f"| {t['n']} | {t['fit_info'].get('M')} | {t['fit_info'].get('n_fits')} "
                f"| {fmt_s(t['tuned_wall_s'])} / {fmt_s(t['tuned_cpu_s'])} "
                f"| {fmt_s(t['platt_wall_s'])} / {fmt_s(t['platt_cpu_s'])} "
                f"| {_ratio(t['tuned_over_platt_wall'])} / {_ratio(t['tuned_over_platt_cpu'])} |"
            )
    if res.get("findings"):
        L += ["", "## Findings", "", *res["findings"]]
    path.write_text("\n".join(L) + "\n")


def findings(res: dict) -> list[str]:
    out = []
    by_n = {r["n"]: r for r in res["sizes"]}
    n_t = 2000 if 2000 in by_n else max(by_n)
    r = by_n[n_t]
    q, c = r["ratios"], r["cpu_ratios"]
    qp = r["qp"]
    if "qp_over_ladder_sqrt_cpu" in qp:
        qp_txt = (
            f"dense QP / ladder = {_ratio(qp['qp_over_ladder_sqrt_cpu'])} CPU, "
            f"{_ratio(qp['qp_over_ladder_sqrt_wall'])} wall (target >= 300: "
            f"{'met' if qp['qp_over_ladder_sqrt_cpu'] >= 300 else 'MISSED'}; "
            f"QP {qp['status']})"
        )
    else:
        qp_txt = "dense QP not run"
    out.append(
        f"- Targets at n = {n_t} (M = {r['M_sqrt']}): ladder / Platt = "
        f"{c['ladder_sqrt/platt_svc']:.1f} CPU, {q['ladder_sqrt/platt_svc']:.1f} wall "
        f"(target <= 5: {'met' if c['ladder_sqrt/platt_svc'] <= 5 else 'MISSED'}); {qp_txt}."
        f"  With the project default M = {r['M_default']}: {c['ladder_default/platt_svc']:.1f} "
        "x Platt CPU (cost is linear in M)."
    )
    b = r["breakdown"]
    tot = b["kernel_build_s"] + b["fit_ladder_s"]
    platt_cpu = r["median_cpu_s"]["platt_svc"]
    out.append(
        f"- Ladder time split at n = {n_t}: kernel build {100 * b['kernel_build_s'] / tot:.0f}%, "
        f"libsvm {100 * b['libsvm_s'] / tot:.0f}%, KKT checks {100 * b['kkt_check_s'] / tot:.0f}%, "
        f"other {100 * b['other_overhead_s'] / tot:.0f}%.  libsvm alone is "
        f"{b['libsvm_s'] / platt_cpu:.1f} x one Platt fit ({b['per_fit_libsvm_ms']:.1f} ms per "
        f"weighted fit vs {1e3 * r['median_cpu_s']['svc_plain']:.1f} ms for a whole plain SVC "
        "fit, which Platt scaling repeats about 5-6 times)"
        + (
            ": on one thread, removing overheads alone cannot reach 5x at M = floor(sqrt n)."
            if b["libsvm_s"] / platt_cpu > 5
            else "."
        )
    )
    out += [
        "",
        f"Options, with what each measured (CPU ratios to one Platt fit at n = {n_t}; "
        "the direct prototype's coefficients equal the library's exactly, see above):",
        "",
        "1. Direct `sklearn.svm._libsvm.fit` binding (now in "
        "`wsvmgui.solvers._libsvm_direct`, checked once against SVC with a public "
        "fallback): the same ladder through the public SVC "
        f"path costs {c['ladder_sqrt_svc/platt_svc']:.1f} x Platt, through the binding "
        f"{c['ladder_sqrt/platt_svc']:.1f} x.",
        f"2. Batch the KKT check of all M - 1 fits into one K @ coef.T product: "
        f"{fmt_s(b['kkt_check_s'])} -> {fmt_s(b['batched_kkt_s'])} "
        f"(prototype {c['proto_direct/platt_svc']:.1f} x Platt).",
        "3. Weights on several threads (`fit_ladder(n_jobs=2)`; libsvm releases the GIL): "
        f"{q.get('ladder_sqrt_2jobs/platt_svc', float('nan')):.1f} x Platt wall-clock "
        "(CPU time adds both threads); at most 2x on two idle cores, less on this machine "
        "shared with other jobs.",
        "4. Warm starts: scikit-learn's libsvm takes no initial alpha, so neighbouring "
        "weights cannot share work through it; the solution path in pi (METHODS section 2, "
        "Wang 2008 section 4) gives all M - 1 fits for about the cost of one path and is the "
        "way to a ladder within a few Platt fits on one thread.",
        "5. Fewer weights: cost is linear in M (accuracy: see default_weight_grid.md).",
    ]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="n in 250, 500, 1000; fewer repeats")
    ap.add_argument("--sizes", type=int, nargs="+", default=None)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--repeats-large", type=int, default=3, help="rounds for n >= 2000")
    ap.add_argument("--design", default="wuliu2011_ex1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    ap.add_argument(
        "--qp-cap",
        type=float,
        default=60.0,
        help="a single QP fit slower than this stops QP timing (seconds)",
    )
    ap.add_argument(
        "--qp-max-predicted",
        type=float,
        default=200.0,
        help="skip a size whose single QP fit is predicted slower (seconds)",
    )
    ap.add_argument(
        "--qp-full-budget",
        type=float,
        default=10.0,
        help="time the full QP ladder when it should take less (seconds)",
    )
    ap.add_argument("--no-qp", action="store_true")
    ap.add_argument("--no-threads", action="store_true", help="skip the 2-thread prototype")
    ap.add_argument("--tuned-sizes", type=int, nargs="*", default=None)
    ap.add_argument("--tuned-repeats", type=int, default=None)
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument(
        "--from-json",
        type=Path,
        default=None,
        help="only rewrite the markdown from an earlier run's JSON",
    )
    args = ap.parse_args(argv)
    if args.from_json is not None:
        res = json.loads(args.from_json.read_text())
        res["findings"] = findings(res)
        args.from_json.write_text(json.dumps(res, indent=1, default=float))
        write_markdown(res, args.from_json.with_suffix(".md"))
        return 0
    if args.sizes is None:
        args.sizes = [250, 500, 1000] if args.quick else [250, 500, 1000, 2000, 4000]
    if args.repeats is None:
        args.repeats = 3 if args.quick else 5
    if args.tuned_sizes is None:
        args.tuned_sizes = [500] if args.quick else [500, 2000]
    if args.tuned_repeats is None:
        args.tuned_repeats = 1
    if args.quick:
        args.qp_full_budget = min(args.qp_full_budget, 5.0)
        args.qp_max_predicted = min(args.qp_max_predicted, 30.0)

    res: dict = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "quick": args.quick,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "threads": args.threads,
            "load_start": _load(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "sklearn": sklearn.__version__,
            "design": args.design,
            "seed": args.seed,
            "repeats": args.repeats,
            "repeats_large": args.repeats_large,
            "argv": sys.argv[1:],
        }
    }
    qp_state: dict = {}
    start = time.perf_counter()
    with threadpool_limits(args.threads):
        res["sizes"] = []
        for n in args.sizes:
            r = bench_size(n, args, qp_state)
            res["sizes"].append(r)
            print(
                f"n={n}: ladder_sqrt {fmt_s(r['median_s']['ladder_sqrt'])}, "
                f"platt {fmt_s(r['median_s']['platt_svc'])}, "
                f"ratio wall {r['ratios']['ladder_sqrt/platt_svc']:.2f} "
                f"cpu {r['cpu_ratios']['ladder_sqrt/platt_svc']:.2f}; "
                f"qp {r['qp'].get('status')} {fmt_s(r['qp'].get('per_fit_cpu_s'))}/fit; "
                f"{time.perf_counter() - start:.0f} s elapsed",
                flush=True,
            )
        res["tuned"] = []
        for n in args.tuned_sizes:
            t = bench_tuned(n, args)
            res["tuned"].append(t)
            print(
                f"tuned n={n}: {fmt_s(t['tuned_wall_s'])} "
                f"({t['tuned_over_platt_cpu']:.0f} x Platt CPU)",
                flush=True,
            )
    res["meta"]["load_end"] = _load()
    res["meta"]["total_s"] = time.perf_counter() - start
    res["findings"] = findings(res)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "ladder_speed.json").write_text(json.dumps(res, indent=1, default=float))
    write_markdown(res, args.out_dir / "ladder_speed.md")
    print(f"wrote {args.out_dir / 'ladder_speed.md'} in {res['meta']['total_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
