"""Screened tuning of the joint fit (:mod:`wsvmgui.joint.tuning`) against the full search.

Writes benchmarks/results/joint_tuning.{md,json}.  Run:
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/joint_tuning.py``.

The setting is the app's thorough preset for the joint-indirect scheme on the K = 3
designs (300 rows, the app's 70 % training part: 210 rows; Gaussian kernel; 5 C x 6
sigma; N = 20), with 3-fold instead of 10-fold cross-validation to keep the run short.
Both searches run in one process on the same folds, feature maps and problems: the full
search fits every cell on the full grid; the screened one fits every cell on the grid of
N = 10 and the 3 best on N = 20 (:class:`~wsvmgui.joint.tuning.JointScreening`).  Each
chosen cell is refitted on all training rows and scored against the true probabilities
of 3000 test points (L1, METHODS section 7).  CPU seconds are the grid fits' (one
thread, active-set solver).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from wsvmgui.estimators.joint import DEFAULT_C_GRID, DEFAULT_H_METHOD
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import truth_metrics
from wsvmgui.joint.dca import minimal_truncation
from wsvmgui.joint.features import FeatureMap
from wsvmgui.joint.grid_fit import fit_grid
from wsvmgui.joint.simplex_grid import SimplexGrid
from wsvmgui.joint.subproblem import JointProblem
from wsvmgui.joint.tuning import JointScreening, coarse_grid, cross_entropy, scheme_proba
from wsvmgui.ladder.splits import resolve_cv
from wsvmgui.solvers.kernels import Kernel, default_sigma_grid

RESULTS = Path(__file__).resolve().parent / "results"
N_FULL = 20
FOLDS = 3


def _fit(pr, grid, C):
    c0 = time.process_time()
    gf = fit_grid(pr, grid, C, minimal_truncation(3), n_jobs=1)
    return gf, time.process_time() - c0


def run(design: str, seed: int) -> dict:
    d = simulate(design, 300, seed)
    rng = np.random.default_rng(seed)
    train = np.sort(rng.permutation(300)[:210])
    X, codes = d.X[train], d.y[train] - 1
    mu, sd = X.mean(axis=0), X.std(axis=0)
    X = (X - mu) / sd
    test = simulate(design, 3000, seed + 500)
    X_test = (test.X - mu) / sd
    folds = resolve_cv(FOLDS, codes, seed, holdout=True, holdout_share=0.5)
    n_first = folds[0][0].size
    grid = SimplexGrid.build(3, N_FULL)
    screening = JointScreening()
    coarse = coarse_grid(grid, screening)
    sigmas = [float(s) for s in default_sigma_grid(X, codes, seed=seed)]
    lams = [1.0 / (2.0 * n_first * C) for C in DEFAULT_C_GRID]
    fmaps = [[FeatureMap.fit(X[tr], Kernel("rbf", sigma=s)) for tr, _ in folds] for s in sigmas]
    problems = [
        [JointProblem(f.Z_train, codes[tr], 3) for f, (tr, _) in zip(row, folds, strict=True)]
        for row in fmaps
    ]
    cells = [(si, lam) for si in range(len(sigmas)) for lam in lams]
    cpu: dict = {"full": [], "coarse": []}
    score: dict = {"full": [], "coarse": []}
    for si, lam in cells:
        for name, g in (("full", grid), ("coarse", coarse)):
            total = 0.0
            cpu[name].append(0.0)
            for f, (tr, te) in enumerate(folds):
                gf, sec = _fit(problems[si][f], g, 1.0 / (2.0 * tr.size * lam))
                cpu[name][-1] += sec
                pred = gf.predict_classes(fmaps[si][f].transform(X[te]), problems[si][f].P)
                total += cross_entropy(pred, g, codes[te], "indirect", DEFAULT_H_METHOD)
            score[name].append(total / sum(te.size for _, te in folds))
        print(design, seed, sigmas[si], lam, score["full"][-1], score["coarse"][-1], flush=True)
    full_best = int(np.argmin(score["full"]))
    kept = screening.survivors(score["coarse"])
    screened_best = int(kept[np.argmin([score["full"][k] for k in kept])])
    screened_cpu = sum(cpu["coarse"]) + sum(cpu["full"][k] for k in kept)
    order = np.argsort(score["full"])
    out = {
        "design": design,
        "seed": seed,
        "cells": len(cells),
        "folds": FOLDS,
        "full_cpu": sum(cpu["full"]),
        "coarse_cpu": sum(cpu["coarse"]),
        "cell_cpu_full": cpu["full"],
        "screened_cpu_estimate": screened_cpu,
        "full_choice": full_best,
        "screened_choice": screened_best,
        "screened_choice_full_rank": int(np.where(order == screened_best)[0][0]) + 1,
        "kept": [int(k) for k in kept],
        "spearman": float(
            np.corrcoef(
                np.argsort(np.argsort(score["full"])), np.argsort(np.argsort(score["coarse"]))
            )[0, 1]
        ),  # fmt: skip
    }
    for name, k in (("full", full_best), ("screened", screened_best)):
        si, lam = cells[k]
        fm = FeatureMap.fit(X, Kernel("rbf", sigma=sigmas[si]))
        pr = JointProblem(fm.Z_train, codes, 3)
        gf, _ = _fit(pr, grid, 1.0 / (2.0 * n_first * lam))
        pred = gf.predict_classes(fm.transform(X_test), pr.P)
        p = scheme_proba(pred, grid, "indirect", DEFAULT_H_METHOD)
        out[f"{name}_L1"] = truth_metrics(p, test.p)["L1"]
        out[f"{name}_cell"] = {"sigma": sigmas[si], "C": 1.0 / (2.0 * n_first * lam)}
    print(out, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--designs", nargs="*", default=["wu2010_ex1", "wu2010_ex2"])
    ap.add_argument("--seeds", type=int, nargs="*", default=[0, 1])
    args = ap.parse_args()
    rows = [run(design, seed) for design in args.designs for seed in args.seeds]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "joint_tuning.json").write_text(json.dumps(rows, indent=2))
    lines = [
        "# Joint tuning: screened against the full search",
        "",
        __doc__.split("\n\n", 2)[2].strip(),
        "",
        "| design | seed | full search CPU s | screened CPU s | saving | full choice (sigma, C) "
        "| screened choice | its rank in the full search | rank correlation of the scores "
        "| test L1 full | test L1 screened |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        fc, sc = r["full_cell"], r["screened_cell"]
        lines.append(
            f"| {r['design']} | {r['seed']} | {r['full_cpu']:.0f} | "
            f"{r['screened_cpu_estimate']:.0f} | {r['full_cpu'] / r['screened_cpu_estimate']:.1f}x "
            f"| {fc['sigma']:.2f}, {fc['C']:g} | {sc['sigma']:.2f}, {sc['C']:g} | "
            f"{r['screened_choice_full_rank']} of {r['cells']} | {r['spearman']:.2f} | "
            f"{r['full_L1']:.4f} | {r['screened_L1']:.4f} |"
        )
    lines += [
        "",
        "Screened CPU = every cell on N = 10 + the kept cells on N = 20 (both measured; the "
        "kept cells' full-grid fits are the full search's).",
    ]
    (RESULTS / "joint_tuning.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
