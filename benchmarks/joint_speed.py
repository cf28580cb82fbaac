"""Speed of the joint multiclass wSVM (Wu, Zhang & Liu 2010): before and after the
active-set solver, side by side in one run.

Writes benchmarks/results/joint_speed.{md,json}.  Run:
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/joint_speed.py [--quick]``
(``--parts`` picks parts; ``--rewrite`` rebuilds the .md from the .json).

"Before" is the general QP (Clarabel, with its working-set warm start), the solver the
library used until now and the reference of the tests; "after" is the default
active-set solver (:mod:`wsvmgui.joint.active_set`).  All times are CPU seconds
(``time.process_time``), BLAS pinned to one thread.

1. ``subproblem``: one convex DCA subproblem (Ex.1, n = 400, linear; Ex.2, n = 189,
   Gaussian kernel), cold and warm-started from a grid neighbour.
2. ``grids``: whole warm-started grids on one thread (Ex.1 d_pi = 0.02; Ex.2 with the
   Gaussian kernel, d_pi = 0.05; Ex.4, K = 5, d_pi = 0.05, the general QP on the
   first 200 grid weights of the snake path, the active-set solver on the same 200 and
   on the whole grid).
Issue 20's targets (iris against One-vs-All, the app's thorough preset) are measured by
``benchmarks/joint_targets.py``.

3. ``cells``: the CPU of each of the thorough preset's 30 (C, sigma) grids on its first
   fold (active-set): how much one cell's cost says about the others (for estimates).
4. ``scaling``: CPU per fit of one grid (N = 20, C = 10) against the training rows n,
   linear and Gaussian kernel (sigma = sigma_M / 2), and against the grid size N.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
C_COST = 10.0  # C = 1/(2 n lambda); the value tuning picks most often on Ex.1
GENERAL, ACTIVE = "clarabel", "active-set"
PARTS = ("subproblem", "grids", "cells", "scaling")


def _problem(design: str, n: int, kernel: str, seed: int = 0):
    from wsvmgui.evaluation.designs import simulate
    from wsvmgui.joint.features import FeatureMap
    from wsvmgui.joint.subproblem import JointProblem
    from wsvmgui.solvers.kernels import Kernel, median_between_class_distance

    d = simulate(design, n, seed)
    ker = None
    if kernel == "rbf":
        ker = Kernel("rbf", sigma=0.5 * median_between_class_distance(d.X, d.y - 1, seed=0))
    K = int(np.unique(d.y).size)
    return JointProblem(FeatureMap.fit(d.X, ker).Z_train, d.y - 1, K)


# ----------------------------------------------------------------------------- part 1
def _subproblem_cases(pr, w, trunc, jc, beta, nb_fit, nb_answer):
    from wsvmgui.joint import active_set
    from wsvmgui.joint.subproblem import solve_subproblem

    return [
        ("general QP, full", lambda: solve_subproblem(pr, w, trunc, jc, GENERAL)),
        (
            "general QP, working set from the neighbour's fit",
            lambda: solve_subproblem(pr, w, trunc, jc, GENERAL, start=nb_fit),
        ),
        ("active-set, cold", lambda: active_set.solve(pr, pr.arrays, w, beta)),
        (
            "active-set, path from the neighbour's answer",
            lambda: active_set.solve(pr, pr.arrays, w, beta, nb_answer),
        ),
    ]


def subproblem(repeat: int) -> list[dict]:
    from wsvmgui.joint import active_set
    from wsvmgui.joint.dca import minimal_truncation, truncated_set
    from wsvmgui.joint.subproblem import solve_subproblem

    rows = []
    for design, n, kernel in (("wu2010_ex1", 400, "linear"), ("wu2010_ex2", 189, "rbf")):
        pr = _problem(design, n, kernel)
        s = minimal_truncation(3)
        pi, pi_nb = np.array([0.3, 0.3, 0.4]), np.array([0.35, 0.25, 0.4])
        w, w_nb = C_COST * pi[pr.yi], C_COST * pi_nb[pr.yi]
        base = solve_subproblem(pr, w, np.zeros(n, bool), np.zeros(n, int), GENERAL)
        trunc, jc = truncated_set(pr, base.W, base.b, s)
        beta = pr.beta(w, trunc, jc)
        nb = solve_subproblem(pr, w_nb, trunc, jc, GENERAL)
        nb_answer = active_set.solve(pr, pr.arrays, w_nb, beta)
        cases = _subproblem_cases(pr, w, trunc, jc, beta, (nb.W, nb.b), nb_answer)
        found = []
        for name, fn in cases:
            best, sol = np.inf, None
            for _ in range(repeat):
                c0 = time.process_time()
                sol = fn()
                best = min(best, time.process_time() - c0)
            found.append((name, best, sol))
        lowest = min(sol.objective for _, _, sol in found)
        ref = found[0][1]
        for name, sec, sol in found:
            rows.append(
                {
                    "design": design,
                    "n": n,
                    "kernel": kernel,
                    "solver": name,
                    "cpu_seconds": sec,
                    "ratio_to_general_full": sec / ref,
                    "kkt_residual": float(sol.kkt_residual),
                    "objective_above_lowest": float(sol.objective - lowest),
                }
            )
            print(rows[-1], flush=True)
    return rows


# ----------------------------------------------------------------------------- part 2
def _grid(pr, K, N, solver, limit=None, C=C_COST):
    from wsvmgui.joint.dca import minimal_truncation
    from wsvmgui.joint.grid_fit import fit_grid
    from wsvmgui.joint.simplex_grid import SimplexGrid

    grid = SimplexGrid.build(K, N)
    if limit is not None:  # a contiguous part of the snake path
        grid = SimplexGrid(K, N, grid.counts[:limit])
    c0 = time.process_time()
    gf = fit_grid(pr, grid, C, minimal_truncation(K), qp_solver=solver, n_jobs=1)
    return time.process_time() - c0, gf


def grids(quick: bool) -> list[dict]:
    cases = [
        ("wu2010_ex1", 400, "linear", 3, 20 if quick else 50, None, None),
        ("wu2010_ex2", 189, "rbf", 3, 10 if quick else 20, None, None),
        ("wu2010_ex4", 1000, "linear", 5, 10 if quick else 20, 50 if quick else 200, True),
    ]
    rows = []
    for design, n, kernel, K, N, limit, also_full in cases:
        pr = _problem(design, n, kernel)
        cpu_g, g = _grid(pr, K, N, GENERAL, limit)
        cpu_a, a = _grid(pr, K, N, ACTIVE, limit)
        P = pr.P
        agree = float(
            np.mean(
                [
                    np.mean(
                        np.argmax(pr.Z @ a.W[k] @ P.T + a.b[k] @ P.T, 1)
                        == np.argmax(pr.Z @ g.W[k] @ P.T + g.b[k] @ P.T, 1)
                    )
                    for k in range(a.W.shape[0])
                ]
            )
        )
        q_a = np.array([o[-1] for o in a.objectives])
        q_g = np.array([o[-1] for o in g.objectives])
        row = {
            "design": design,
            "n": n,
            "kernel": kernel,
            "K": K,
            "N": N,
            "fits": int(a.W.shape[0]),
            "general_cpu": cpu_g,
            "active_cpu": cpu_a,
            "ratio": cpu_g / cpu_a,
            "general_qp_per_fit": float(g.n_qp.mean()),
            "active_qp_per_fit": float(a.n_qp.mean()),
            "general_max_kkt": float(g.kkt_residual.max()),
            "active_max_kkt": float(a.kkt_residual.max()),
            "prediction_agreement": agree,
            "objective_rel_diff_mean": float(np.mean((q_a - q_g) / np.abs(q_g))),
            "objective_same_share": float(np.mean(np.abs(q_a - q_g) <= 1e-5 * np.abs(q_g))),
        }
        if also_full:
            cpu_full, full = _grid(pr, K, N, ACTIVE)
            row["active_full_fits"] = int(full.W.shape[0])
            row["active_full_cpu"] = cpu_full
        rows.append(row)
        print(row, flush=True)
    return rows


# ----------------------------------------------------------------------------- part 3
def _demo_fold():
    from wsvmgui.app.datasets import load_builtin, split_dataset
    from wsvmgui.ladder.splits import resolve_cv

    ds = load_builtin("design:wu2010_ex1")
    sp = split_dataset(ds, test_fraction=0.3, seed=0, standardise=True)
    X, y = sp.train.X, sp.train.y
    codes = np.searchsorted(np.unique(y), y)
    tr, _ = resolve_cv(10, y, 0, holdout=True, holdout_share=0.5)[0]
    return X, codes, tr


def cells() -> list[dict]:
    from wsvmgui.estimators.joint import DEFAULT_C_GRID
    from wsvmgui.joint.features import FeatureMap
    from wsvmgui.joint.subproblem import JointProblem
    from wsvmgui.solvers.kernels import Kernel, default_sigma_grid

    X, codes, tr = _demo_fold()
    rows = []
    for sigma in default_sigma_grid(X, codes, seed=0):
        fm = FeatureMap.fit(X[tr], Kernel("rbf", sigma=float(sigma)))
        pr = JointProblem(fm.Z_train, codes[tr], 3)
        for C in DEFAULT_C_GRID:
            cpu, gf = _grid(pr, 3, 20, ACTIVE, C=float(C))
            rows.append(
                {
                    "sigma": float(sigma),
                    "C": float(C),
                    "r": pr.r,
                    "cpu": cpu,
                    "fits": int(gf.W.shape[0]),
                    "fallbacks": int(gf.fallbacks),
                }
            )
            print(rows[-1], flush=True)
    return rows


def scaling(quick: bool) -> list[dict]:
    rows = []
    sizes = (100, 200) if quick else (100, 200, 400)
    for kernel in ("linear", "rbf"):
        for n in sizes:
            pr = _problem("wu2010_ex1", n, kernel)
            for N in (10, 20) if n == sizes[-2] else (20,):
                cpu, gf = _grid(pr, 3, N, ACTIVE)
                rows.append(
                    {
                        "kernel": kernel,
                        "n": n,
                        "r": pr.r,
                        "N": N,
                        "fits": int(gf.W.shape[0]),
                        "cpu": cpu,
                        "ms_per_fit": 1e3 * cpu / gf.W.shape[0],
                        "qp_per_fit": float(gf.n_qp.mean()),
                    }
                )
                print(rows[-1], flush=True)
    return rows


# ----------------------------------------------------------------------------- report
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller grids (smoke run)")
    ap.add_argument("--parts", nargs="*", default=list(PARTS), choices=PARTS)
    ap.add_argument("--rewrite", action="store_true", help="rebuild the .md from the .json")
    args = ap.parse_args()
    path = RESULTS / "joint_speed.json"
    if args.rewrite:
        write(json.loads(path.read_text()))
        return
    out: dict = json.loads(path.read_text()) if path.exists() else {}
    if out.get("version") != 2:
        out = {"version": 2}
    out["cpu_count"] = os.cpu_count()
    out["load_average_start"] = os.getloadavg()[0]
    for part in args.parts:
        print(f"{part} ...", flush=True)
        if part == "subproblem":
            out[part] = subproblem(2 if args.quick else 3)
        elif part == "grids":
            out[part] = grids(args.quick)
        elif part == "cells":
            out[part] = cells()
        else:
            out[part] = scaling(args.quick)
        out["load_average_end"] = os.getloadavg()[0]
        write(out)


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 10 else f"{x:.0f}"


def write(out: dict) -> None:
    """Write the JSON and the markdown summary of whatever has been measured so far."""
    RESULTS.mkdir(exist_ok=True)
    tmp = RESULTS / "joint_speed.json.tmp"
    tmp.write_text(json.dumps(out, indent=2, default=float))
    tmp.replace(RESULTS / "joint_speed.json")
    lines = [
        "# Joint multiclass wSVM: speed before and after the active-set solver",
        "",
        __doc__.split("\n\n", 2)[1].strip(),
        "",
        f"Machine: {out.get('cpu_count')} cores shared with other jobs (load average "
        f"{out.get('load_average_start', float('nan')):.1f} at the start of the last run, "
        f"{out.get('load_average_end', float('nan')):.1f} at its end); ratios are measured "
        f"in one run.  C = {C_COST} (lambda = 1/(2 n C)) unless stated, truncation "
        "s = -1/(K-1).",
        "",
    ]
    if "subproblem" in out:
        lines += [
            "## One convex subproblem (pi = (0.3, 0.3, 0.4), the truncated set of the "
            "untruncated fit; neighbour pi = (0.35, 0.25, 0.4))",
            "",
            "| design | n | kernel | solver | CPU s | ratio to the general QP | KKT residual "
            "| objective above the lowest |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in out["subproblem"]:
            lines.append(
                f"| {r['design']} | {r['n']} | {r['kernel']} | {r['solver']} | "
                f"{r['cpu_seconds']:.4f} | {r['ratio_to_general_full']:.3f} | "
                f"{r['kkt_residual']:.1e} | {r['objective_above_lowest']:.1e} |"
            )
        lines.append("")
    if "grids" in out:
        lines += [
            "## Whole warm-started grids, one thread",
            "",
            "| design | n | kernel | K | d_pi | fits | general QP CPU s | active-set CPU s | "
            "ratio | QPs/fit (general, active) | max KKT (general, active) | same class "
            "predicted | same final objective |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in out["grids"]:
            lines.append(
                f"| {r['design']} | {r['n']} | {r['kernel']} | {r['K']} | {1 / r['N']:.2f} | "
                f"{r['fits']} | {r['general_cpu']:.1f} | {r['active_cpu']:.2f} | "
                f"{r['ratio']:.1f}x | {r['general_qp_per_fit']:.2f}, "
                f"{r['active_qp_per_fit']:.2f} | {r['general_max_kkt']:.0e}, "
                f"{r['active_max_kkt']:.0e} | {r['prediction_agreement']:.4f} | "
                f"{r['objective_same_share']:.3f} |"
            )
            if "active_full_fits" in r:
                lines.append(
                    f"| {r['design']} (whole grid) | {r['n']} | {r['kernel']} | {r['K']} | "
                    f"{1 / r['N']:.2f} | {r['active_full_fits']} | - | "
                    f"{r['active_full_cpu']:.1f} | | | | | |"
                )
        lines += [
            "",
            "QPs/fit counts every convex subproblem: the untruncated guard fit plus the DCA "
            "steps.  'Same class predicted': share of (training point, grid weight) pairs "
            "where both fits predict the same class; 'same final objective': share of grid "
            "weights whose DCA ends at the same objective (within 1e-5 relative).  DCA is "
            "not convex: where the two solvers' round-off-sized differences change a "
            "truncated set, the chains can stop in different local minima (then either "
            "can be lower).",
            "",
        ]
    if "cells" in out:
        c = np.array([r["cpu"] for r in out["cells"]])
        mid = [r for r in out["cells"] if r["C"] == 10.0]
        lines += [
            "## Cost of each (C, sigma) cell of the thorough preset (first fold, active-set)",
            "",
            "| sigma | "
            + " | ".join(f"C = {C:g}" for C in sorted({r["C"] for r in out["cells"]}))
            + " |",
            "| --- |" + " --- |" * len({r["C"] for r in out["cells"]}),
        ]
        for sigma in sorted({r["sigma"] for r in out["cells"]}):
            row = sorted((r for r in out["cells"] if r["sigma"] == sigma), key=lambda r: r["C"])
            lines.append(
                f"| {sigma:.3g} (r = {row[0]['r']}) | "
                + " | ".join(f"{r['cpu']:.2f}" for r in row)
                + " |"
            )
        lines += [
            "",
            f"CPU seconds per grid of {out['cells'][0]['fits']} fits: mean {c.mean():.2f}, "
            f"median {np.median(c):.2f}, min {c.min():.2f}, max {c.max():.2f}; the middle C's "
            f"mean over sigma {np.mean([r['cpu'] for r in mid]):.2f}.  Subproblems left to the "
            f"general QP: {sum(r['fallbacks'] for r in out['cells'])}.",
            "",
        ]
    if "scaling" in out:
        lines += [
            "## CPU per fit against n and N (wu2010_ex1, K = 3, C = 10, one grid)",
            "",
            "| kernel | n | features r | N | fits | CPU s | ms per fit | QPs per fit |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in out["scaling"]:
            lines.append(
                f"| {r['kernel']} | {r['n']} | {r['r']} | {r['N']} | {r['fits']} | "
                f"{r['cpu']:.2f} | {r['ms_per_fit']:.2f} | {r['qp_per_fit']:.2f} |"
            )
        lines.append("")
    (RESULTS / "joint_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
