"""Reproduce Zeng & Zhang's simulation tables (Examples 1-4) for every scheme and baseline.

Setting (Zeng section 7): n = 500 training, 500 tuning, 10,000 test points; RBF kernel;
EGKL tuning of every binary sub-problem over lambda x sigma.  Our defaults differ from the
paper's R code where the paper's code is defective or where ours is a documented
improvement: the ladders are refitted on training plus tuning data (``refit=True``), the
weight grid follows each sub-problem's size (see NOTES for the two settings run), the
count rule reads the ladder, and sigma really is tuned (METHODS section 1).

Per (example, seed) one JSON file is written to ``results/zeng_reproduction_runs/``;
existing files are skipped, so the script is resumable and can be run in pieces:

    python benchmarks/zeng_reproduction.py --seeds 0-9 --examples 1,2,3,4
    python benchmarks/zeng_reproduction.py --report-only

Fitting once and reading several schemes: B1, B2, BP1 and BP2 use exactly the sub-problems
(pairs against k*) that P-SVM fits with the same split, grids and seed, so their
probabilities are computed from the P-SVM fit's pairwise table (a unit test checks that
this equals fitting the scheme directly); their wall time is the sum of the wall times of
their own sub-problems.  "+interp" rows read the same fitted ladders with the
"interpolate" rule (zero crossing of the decision values inside the count bracket).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.evaluation.baselines import BASELINES, fit_baseline
from wsvmgui.evaluation.designs import simulate
from wsvmgui.evaluation.metrics import truth_metrics
from wsvmgui.ladder.splits import with_tuning_set
from wsvmgui.multiclass import coupling
from wsvmgui.multiclass.baseline_choice import largest_class, median_distance_class
from wsvmgui.multiclass.ova import normalise_sum, project_simplex

HERE = Path(__file__).resolve().parent
RUNS = HERE / "results" / "zeng_reproduction_runs"
OUT = HERE / "results" / "zeng_reproduction"

#: The paper's EGKL-tuned tables (x100): mean and standard error (Tables 1 and 2).
PAPER = {
    "zeng_ex1": {
        "B1": {
            "L1": (47.9, 0.2),
            "L2": (9.5, 0.1),
            "EGKL": (31.7, 1.9),
            "GKL": (25.1, 0.7),
            "TE1": (60.7, 0.2),
            "time_min": 0.9,
        },
        "BP1": {
            "L1": (47.9, 0.2),
            "L2": (9.5, 0.1),
            "EGKL": (31.7, 1.9),
            "GKL": (25.1, 0.7),
            "TE1": (60.5, 0.2),
            "TE2": (60.3, 0.2),
            "time_min": 0.9,
        },
        "B2": {
            "L1": (48.0, 0.3),
            "L2": (9.8, 0.1),
            "EGKL": (33.3, 1.9),
            "GKL": (26.9, 1.2),
            "TE1": (60.9, 0.2),
            "time_min": 0.8,
        },
        "BP2": {
            "L1": (48.0, 0.3),
            "L2": (9.8, 0.1),
            "EGKL": (33.3, 1.9),
            "GKL": (26.9, 1.2),
            "TE1": (60.7, 0.2),
            "TE2": (60.5, 0.2),
            "time_min": 0.8,
        },
        "A": {
            "L1": (41.8, 0.2),
            "L2": (8.5, 0.1),
            "EGKL": (26.7, 1.3),
            "GKL": (15.1, 0.4),
            "TE1": (60.0, 0.1),
            "time_min": 30.7,
        },
        "P": {
            "L1": (46.5, 0.1),
            "L2": (9.1, 0.0),
            "EGKL": (30.2, 1.2),
            "GKL": (24.6, 0.4),
            "TE1": (60.3, 0.1),
            "TE2": (60.3, 0.1),
            "time_min": 2.8,
        },
        "logistic": {"L1": (36.5, 0.2), "L2": (8.2, 0.1), "EGKL": (22.5, 1.2), "TE1": (57.6, 0.1)},
        "lda": {"L1": (36.0, 0.1), "L2": (8.1, 0.0), "EGKL": (22.1, 1.2), "TE1": (57.7, 0.1)},
        "tree": {"L1": (56.3, 0.2), "L2": (11.7, 0.1), "TE1": (61.9, 0.1)},
        "random_forest": {"L1": (72.0, 0.1), "L2": (19.4, 0.1), "TE1": (64.7, 0.1)},
        "gradient_boosting": {
            "L1": (95.2, 0.2),
            "L2": (35.6, 0.1),
            "EGKL": (124.6, 2.6),
            "TE1": (65.7, 0.1),
        },
    },
    "zeng_ex2": {
        "B1": {
            "L1": (46.1, 0.3),
            "L2": (12.4, 0.1),
            "EGKL": (32.0, 2.4),
            "GKL": (22.6, 1.1),
            "TE1": (61.2, 0.2),
            "time_min": 0.8,
        },
        "BP1": {
            "L1": (46.1, 0.3),
            "L2": (12.4, 0.1),
            "EGKL": (32.0, 2.4),
            "GKL": (22.6, 1.1),
            "TE1": (60.4, 0.2),
            "TE2": (60.3, 0.2),
            "time_min": 0.8,
        },
        "B2": {
            "L1": (47.0, 0.3),
            "L2": (12.3, 0.1),
            "EGKL": (32.2, 2.2),
            "GKL": (22.5, 1.2),
            "TE1": (61.6, 0.3),
            "time_min": 0.8,
        },
        "BP2": {
            "L1": (47.0, 0.3),
            "L2": (12.3, 0.1),
            "EGKL": (32.2, 2.2),
            "GKL": (22.5, 1.2),
            "TE1": (60.9, 0.3),
            "TE2": (60.6, 0.3),
            "time_min": 0.8,
        },
        "A": {
            "L1": (43.5, 0.1),
            "L2": (11.1, 0.1),
            "EGKL": (27.0, 1.6),
            "GKL": (18.5, 0.6),
            "TE1": (60.1, 0.1),
            "time_min": 31.6,
        },
        "P": {
            "L1": (45.2, 0.1),
            "L2": (12.0, 0.0),
            "EGKL": (31.6, 1.2),
            "GKL": (21.7, 0.5),
            "TE1": (60.9, 0.1),
            "TE2": (60.9, 0.1),
            "time_min": 3.4,
        },
        "logistic": {"L1": (43.5, 0.2), "L2": (10.6, 0.1), "EGKL": (26.9, 1.4), "TE1": (57.4, 0.1)},
        "lda": {"L1": (42.7, 0.2), "L2": (10.4, 0.1), "EGKL": (25.9, 1.3), "TE1": (57.3, 0.1)},
        "tree": {"L1": (64.0, 0.2), "L2": (14.5, 0.1), "TE1": (62.5, 0.1)},
        "random_forest": {"L1": (75.2, 0.1), "L2": (21.7, 0.1), "TE1": (64.2, 0.1)},
        "gradient_boosting": {
            "L1": (99.8, 0.1),
            "L2": (40.0, 0.1),
            "EGKL": (145.2, 2.8),
            "TE1": (65.3, 0.1),
        },
    },
    "zeng_ex3": {
        "B1": {
            "L1": (19.2, 0.3),
            "L2": (4.1, 0.2),
            "EGKL": (12.5, 0.9),
            "GKL": (22.6, 0.6),
            "TE1": (16.6, 0.3),
            "time_min": 1.5,
        },
        "BP1": {
            "L1": (19.2, 0.3),
            "L2": (4.1, 0.2),
            "EGKL": (12.5, 0.9),
            "GKL": (22.6, 0.6),
            "TE1": (16.6, 0.3),
            "TE2": (16.5, 0.3),
            "time_min": 1.5,
        },
        "B2": {
            "L1": (21.1, 1.2),
            "L2": (4.3, 0.7),
            "EGKL": (13.7, 1.9),
            "GKL": (26.9, 2.3),
            "TE1": (16.7, 0.8),
            "time_min": 0.7,
        },
        "BP2": {
            "L1": (21.1, 1.2),
            "L2": (4.3, 0.7),
            "EGKL": (13.7, 1.9),
            "GKL": (26.9, 2.3),
            "TE1": (16.7, 0.8),
            "TE2": (16.6, 0.8),
            "time_min": 0.7,
        },
        "A": {
            "L1": (15.2, 0.1),
            "L2": (3.3, 0.1),
            "EGKL": (9.2, 0.6),
            "GKL": (15.6, 0.3),
            "TE1": (16.4, 0.1),
            "time_min": 11.7,
        },
        "P": {
            "L1": (18.9, 0.1),
            "L2": (4.0, 0.1),
            "EGKL": (12.2, 0.5),
            "GKL": (20.8, 0.3),
            "TE1": (16.5, 0.1),
            "TE2": (16.6, 0.1),
            "time_min": 2.4,
        },
        "logistic": {
            "L1": (115.9, 0.1),
            "L2": (50.7, 0.1),
            "EGKL": (60.7, 0.8),
            "TE1": (62.1, 0.4),
        },
        "lda": {"L1": (116.3, 0.1), "L2": (50.4, 0.1), "EGKL": (60.8, 0.8), "TE1": (61.8, 0.4)},
        "tree": {"L1": (27.9, 0.2), "L2": (7.0, 0.1), "TE1": (17.5, 0.1)},
        "random_forest": {"L1": (22.4, 0.1), "L2": (4.4, 0.1), "TE1": (17.2, 0.1)},
        "gradient_boosting": {
            "L1": (27.9, 0.1),
            "L2": (9.4, 0.1),
            "EGKL": (28.6, 1.2),
            "TE1": (18.2, 0.1),
        },
    },
    "zeng_ex4": {
        "B1": {
            "L1": (23.3, 0.3),
            "L2": (5.3, 0.1),
            "EGKL": (12.0, 1.8),
            "GKL": (16.6, 0.7),
            "TE1": (41.5, 0.1),
            "time_min": 1.0,
        },
        "BP1": {
            "L1": (23.3, 0.3),
            "L2": (5.3, 0.1),
            "EGKL": (12.0, 1.8),
            "GKL": (16.6, 0.7),
            "TE1": (41.4, 0.1),
            "TE2": (41.3, 0.1),
            "time_min": 1.0,
        },
        "B2": {
            "L1": (24.4, 0.7),
            "L2": (5.6, 0.3),
            "EGKL": (12.5, 1.7),
            "GKL": (17.2, 1.0),
            "TE1": (42.5, 0.4),
            "time_min": 0.8,
        },
        "BP2": {
            "L1": (24.4, 0.7),
            "L2": (5.6, 0.3),
            "EGKL": (12.5, 1.7),
            "GKL": (17.2, 1.0),
            "TE1": (42.5, 0.4),
            "TE2": (42.3, 0.4),
            "time_min": 0.8,
        },
        "A": {
            "L1": (20.1, 0.2),
            "L2": (4.6, 0.1),
            "EGKL": (10.1, 1.2),
            "GKL": (14.9, 0.5),
            "TE1": (40.8, 0.1),
            "time_min": 7.2,
        },
        "P": {
            "L1": (22.6, 0.2),
            "L2": (5.2, 0.1),
            "EGKL": (11.9, 1.0),
            "GKL": (16.5, 0.4),
            "TE1": (41.5, 0.1),
            "TE2": (41.1, 0.1),
            "time_min": 2.1,
        },
        "logistic": {"L1": (41.2, 0.1), "L2": (7.1, 0.0), "EGKL": (18.0, 1.0), "TE1": (45.0, 0.1)},
        "lda": {"L1": (41.2, 0.1), "L2": (7.2, 0.0), "EGKL": (18.6, 1.0), "TE1": (44.6, 0.1)},
        "tree": {"L1": (31.9, 0.2), "L2": (6.1, 0.1), "TE1": (43.7, 0.2)},
        "random_forest": {"L1": (44.0, 0.1), "L2": (9.9, 0.1), "TE1": (46.3, 0.1)},
        "gradient_boosting": {
            "L1": (64.1, 0.2),
            "L2": (21.6, 0.1),
            "EGKL": (65.1, 1.9),
            "TE1": (47.9, 0.1),
        },
    },
}
WSVM_ROWS = ("B1", "BP1", "B2", "BP2", "A", "P")


def parse_seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def scores(p: np.ndarray, data, classes, votes: np.ndarray | None = None) -> dict:
    out = {k: 100 * v for k, v in truth_metrics(p, data.p).items()}
    out["TE1"] = 100 * float(np.mean(classes[np.argmax(p, axis=1)] != data.y))
    if votes is not None:
        out["TE2"] = 100 * float(np.mean(classes[votes] != data.y))
    return out


def pair_seconds(est, pairs: list[str]) -> float:
    sec = est.fit_info_["subproblem_seconds"]
    return float(sum(sec[name] for name in pairs))


def run_wsvm(train, tune, test, seed: int, n_jobs: int, extra: dict) -> dict:
    res: dict[str, dict] = {}
    common = dict(n_jobs=n_jobs, random_state=seed, **extra)
    # --- pairwise: P, and B1 / B2 / BP1 / BP2 from the same pairwise table.
    t0 = time.perf_counter()
    X, y, cv = with_tuning_set(train.X, train.y, tune.X, tune.y)
    est = MulticlassWeightedSVMClassifier(scheme="pairwise", cv=cv, **common)
    est.fit(X, y)
    t_fit = time.perf_counter() - t0
    classes = est.classes_
    K = classes.size
    codes = np.searchsorted(classes, train.y)
    t1 = time.perf_counter()
    k1 = largest_class(codes, K)
    t_k1 = time.perf_counter() - t1
    t1 = time.perf_counter()
    k2 = median_distance_class(train.X, codes, K)
    t_k2 = time.perf_counter() - t1
    for rule in ("count", "interpolate"):
        est.set_params(rule=rule)
        tag = "" if rule == "count" else "+interp"
        _, ests = est._estimates(test.X)
        Q = est._table(ests, test.X.shape[0])
        p = coupling.couple(Q)
        res["P" + tag] = scores(p, test, classes, coupling.vote_predict(Q, p))
        res["P" + tag]["seconds"] = t_fit
        for name, k, tk in (("1", k1, t_k1), ("2", k2, t_k2)):
            q_base = Q[:, :, k]
            pb = coupling.couple_baseline(q_base, k)
            table = coupling.rebuild_table(q_base, k)
            pairs = [
                f.spec.name
                for f in est.subproblems_.fitted
                if k in (f.spec.positive, f.spec.negative[0])
            ]
            sec = pair_seconds(est, pairs) + tk
            res["B" + name + tag] = scores(pb, test, classes)
            res["B" + name + tag].update(seconds=sec, k_star=str(classes[k]))
            pbp = coupling.couple(table)
            res["BP" + name + tag] = scores(pbp, test, classes, coupling.vote_predict(table, pbp))
            res["BP" + name + tag].update(seconds=sec, k_star=str(classes[k]))
    # --- One-vs-All.
    t0 = time.perf_counter()
    ova = MulticlassWeightedSVMClassifier(scheme="ova", cv=cv, **common)
    ova.fit(X, y)
    t_fit = time.perf_counter() - t0
    m_max = max(f.weights.size + 1 for f in ova.subproblems_.fitted)
    for rule in ("count", "interpolate"):
        ova.set_params(rule=rule)
        tag = "" if rule == "count" else "+interp"
        raw = ova.raw_ova(test.X)
        res["A" + tag] = scores(normalise_sum(raw), test, classes)
        res["A" + tag]["seconds"] = t_fit
        res["A-raw" + tag] = {k: 100 * v for k, v in truth_metrics(raw, test.p).items()}
        res["A-raw" + tag]["sum_dev"] = 100 * float(np.mean(np.abs(raw.sum(axis=1) - 1)))
        res["A-simplex" + tag] = scores(project_simplex(raw, 1.0 / (2 * m_max * K)), test, classes)
    res["_chosen"] = {
        "pairwise": [
            (f.spec.name, f.lam, f.sigma, int(f.weights.size + 1)) for f in est.subproblems_.fitted
        ],
        "ova": [
            (f.spec.name, f.lam, f.sigma, int(f.weights.size + 1)) for f in ova.subproblems_.fitted
        ],
    }
    return res


def run_baselines(train, tune, test, seed: int, names: list[str]) -> dict:
    res = {}
    for name in names:
        t0 = time.perf_counter()
        with threadpool_limits(1):
            model = fit_baseline(name, train.X, train.y, tune.X, tune.y, random_state=seed)
            p = model.predict_proba(test.X)
        res[name] = scores(p, test, model.classes_)
        res[name]["seconds"] = time.perf_counter() - t0
        res[name]["best"] = {
            k: (v if isinstance(v, str | type(None)) else float(v))
            for k, v in model.baseline_tuning_.best.items()
        }
    return res


def run_one(example: str, seed: int, args) -> dict:
    design = f"zeng_ex{example}"
    train = simulate(design, args.n_train, seed=10_000 * seed + 1)
    tune = simulate(design, args.n_tune, seed=10_000 * seed + 2)
    test = simulate(design, args.n_test, seed=10_000 * seed + 3)
    out = {
        "design": design,
        "seed": seed,
        "n_train": args.n_train,
        "n_tune": args.n_tune,
        "n_test": args.n_test,
        "methods": {},
    }
    extra = {}
    if args.n_weights:
        extra["n_weights"] = args.n_weights
    if args.final_n_weights:
        extra["final_n_weights"] = args.final_n_weights
    if not args.no_wsvm:
        out["methods"].update(run_wsvm(train, tune, test, seed, args.n_jobs, extra))
    if args.baselines:
        out["methods"].update(run_baselines(train, tune, test, seed, args.baselines))
    return out


# ----------------------------------------------------------------------------- report
ORDER = [
    "B1",
    "BP1",
    "B2",
    "BP2",
    "A",
    "P",
    "B1+interp",
    "B2+interp",
    "A+interp",
    "P+interp",
    "A-raw",
    "A-simplex",
    "A-raw+interp",
    "A-simplex+interp",
    "logistic",
    "lda",
    "tree",
    "random_forest",
    "gradient_boosting",
    "svc_platt",
    "svc_calibrated",
]
PAPER_NAME = {"B1": "B1", "BP1": "BP1", "B2": "B2", "BP2": "BP2", "A": "A", "P": "P"}
METRICS = ("L1", "L2", "EGKL", "GKL", "TE1", "TE2")


NOTES = """
## Notes

**Setting of the 10-seed table.** The default rows were run with the code of 05:50 UTC
(sub-problem weight grid M = max(floor(sqrt(n_s)), 20), lambda kept when refitting on
training plus tuning data). The estimator's defaults now follow the binary engine (one
grid M = floor(2 sqrt(n_s)) of the final-fit size for tuning and final fits, the tuned
C kept when refitting, sigma_M of all labelled points); with K = 2 it agrees exactly
with `WeightedSVMClassifier` (tests/test_multiclass_estimator.py). Rows `[current]`
(Example 3, wSVM only, 10 seeds) use these current defaults; rows `[final100]` refit
every sub-problem with M = 100 (`final_n_weights=100`). Seeds per row: column `n` (the
shared machine ran at a load of 15-25 on 2 cores, so fewer than 10 seeds finished for
some examples).

**Examples 1 and 2 are not comparable with the paper's L1/L2/EGKL.** Our TE1 of the
oracle (multinomial logistic regression) matches the paper's (Ex.1 57.7 vs 57.6), so the
design is the same, but the paper's L1 of that correctly specified model is 36.5 where
ours is about 10, and every method differs by a similar factor; the paper's L1/L2/EGKL
of Examples 1-2 must be computed differently. The checks pass there trivially.

**Baseline learning (B1, B2) on Examples 3 and 4.** Our B1/B2 are far worse than the
paper's (Ex.3 B1 about 35 vs 19.2, B2 about 65 vs 21.1). Coupling against one baseline k*
uses r_j = q_j|(j,k*) / (1 - q_j|(j,k*)), which the ladder caps at 2M - 1 (the top
bracket's midpoint): where k* is improbable (Ex.3: class 2 is about e^-40 as likely as
class 5 near x1 = x2 = 5) every competing class saturates at the cap and the estimate
becomes uniform over them. A finer final ladder raises the cap (`[final100]`: Ex.3 B1
27.7, B2 47.4 on seed 0) but cannot remove it; we could not find how the paper's R code
avoids it. BP1/BP2 rebuild a consistent pairwise table, so their probabilities and
TE1 equal B1/B2's exactly and max voting (TE2) equals TE1 up to ties; the paper's small
TE1 differences between B and BP cannot arise from eq. (11).

**One-vs-All normalisation.** `A` divides the K bracketed values by their sum, `A-raw`
is unnormalised (does not sum to one), `A-simplex` is the Euclidean projection onto the
simplex (floor 1/(2MK)). Neither wins everywhere: the projection is best on Example 3,
the sum on Examples 1, 2 and 4 (see the rows); the default stays "sum".

**Closing the gap to Platt scaling (Example 3, single-seed explorations, L1 x100).**
Tuned `SVC(probability=True)` reaches about 11 (rows `svc_platt`); the paper's A-SVM
15.2. What we measured on seed 0 / seed 1 data of Example 3 (OVA unless stated):
* refitting on training + tuning data: 20.8 without -> 15.2 with (seed 1): large gain;
  the paper's training-only fit with M = 22 and the extreme rule gives 21.1.
* extreme vs count rule: 15.4 vs 15.2: count slightly better.
* C grid up to 1000 (lambda 10x smaller): 14.9 vs 15.2; smaller sigmas (0.1 sigma_M):
  15.1: tuning grids are not the bottleneck (the chosen cells barely move).
* "interpolate" rule (zero crossing of the decision values inside the count bracket,
  `rule="interpolate"`): 0.1-0.6 better; the bracket quantisation is not the bottleneck.
* finer weight grids: the main lever. M = 60 throughout: 11.6 (seed 1, vs 15.2) and 14.4
  (seed 0, vs 18.0); M = 100 throughout 13.1 (seed 0). Tuning on the default grid and
  refitting the final ladders only with `final_n_weights` = 100 / 200 / 400 gives
  13.5 / 12.6 / 12.2 (seed 0; Platt 11.1 on the same data) at about 1.1x the default
  cost (tuning dominates). A finer final ladder averages more sign changes, which
  smooths the count and reduces variance, not just quantisation.
* P-SVM with final M = 100: 21.7 -> 16.6 (seed 0).
* the current defaults (M = floor(2 sqrt(n_s)), tuned C kept; rows `[current]`, 10
  seeds) give A 13.3 (0.3) and P 16.0 (0.4) on Example 3, inside the paper's bounds
  (15.4, 19.1); B1 34.4 and B2 54.2 stay far outside them.
So refitting and finer ladders close most of the gap to the better Platt on
Example 3 but do not close it; on Example 4 all wSVM schemes but B2 already beat both
Platt spellings, and on Example 1 (a linear design) the logistic oracle and Platt lead.
"""


RUN_NAME = re.compile(r"^(zeng_ex\d)_seed(\d+)(.*)$")


def aggregate() -> dict:
    """Mean and standard error of every metric over seeds; variants (run-file tags) give
    methods named ``<method> [<tag>]``."""
    table: dict = {}
    for path in sorted(RUNS.glob("*.json")):
        match = RUN_NAME.match(path.stem)
        if not match:
            continue
        tag = match.group(3).lstrip("_")
        r = json.loads(path.read_text())
        ex = table.setdefault(r["design"], {})
        for method, vals in r["methods"].items():
            if method.startswith("_"):
                continue
            m = ex.setdefault(f"{method} [{tag}]" if tag else method, {})
            for key, v in vals.items():
                if isinstance(v, int | float):
                    m.setdefault(key, []).append(float(v))
                elif key == "k_star":
                    m.setdefault("k_star", []).append(v)
    summary: dict = {}
    for design, methods in table.items():
        summary[design] = {}
        for method, vals in methods.items():
            s = {}
            for key, xs in vals.items():
                if key == "k_star":
                    ks, counts = np.unique(xs, return_counts=True)
                    s["k_star_mode"] = str(ks[np.argmax(counts)])
                    continue
                a = np.asarray(xs)
                s[key] = {
                    "mean": float(a.mean()),
                    "se": float(a.std(ddof=1) / np.sqrt(a.size)) if a.size > 1 else 0.0,
                    "n": int(a.size),
                }
            summary[design][method] = s
    return summary


def fmt(cell: dict | None) -> str:
    if not cell:
        return "-"
    return f"{cell['mean']:.1f} ({cell['se']:.1f})"


def write_report() -> None:
    summary = aggregate()
    lines = [
        "# Zeng & Zhang simulation tables: reproduction",
        "",
        "Generated by `benchmarks/zeng_reproduction.py` (see its docstring for the "
        "setting). Values x100, mean (standard error) over seeds (`n`); time in seconds "
        "per replication, wall time on the shared 2-core machine (heavily loaded by "
        "other jobs, so times are inflated; see multiclass_speed.md for timing); B/BP "
        "times are the sums of their own sub-problems' times inside the P-SVM fit. "
        "Paper values: EGKL tuning, 100 replications, time in minutes. Rows `[tag]` "
        "are variants run on fewer seeds (see the summary in the json).",
        "",
    ]
    checks = []
    for design in sorted(summary):
        s = summary[design]
        lines += [
            f"## {design}",
            "",
            "| method | n | L1 | L2 | EGKL | GKL | TE1 | TE2 | time (s) | k* | "
            "paper L1 | paper L2 | paper EGKL | paper TE1 | paper time (min) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for method in ORDER + sorted(set(s) - set(ORDER)):
            if method not in s:
                continue
            row = s[method]
            paper = PAPER.get(design, {}).get(method, {})
            pcells = [
                f"{paper[k][0]} ({paper[k][1]})" if k in paper else "-"
                for k in ("L1", "L2", "EGKL", "TE1")
            ]
            n = row.get("L1", {}).get("n", 0)
            t = f"{row['seconds']['mean']:.1f}" if "seconds" in row else "-"
            lines.append(
                f"| {method} | {n} | "
                + " | ".join(fmt(row.get(k)) for k in METRICS)
                + f" | {t} | {row.get('k_star_mode', '-')} | "
                + " | ".join(pcells)
                + f" | {paper.get('time_min', '-')} |"
            )
            if method in WSVM_ROWS:
                for k in ("L1", "L2", "EGKL"):
                    if k in paper and k in row:
                        bound = paper[k][0] + 2 * paper[k][1]
                        checks.append(
                            (design, method, k, row[k]["mean"], bound, row[k]["mean"] <= bound)
                        )
        lines.append("")
    lines += [
        "## Check: ours <= paper + 2 SE (L1, L2, EGKL; wSVM schemes, default settings)",
        "",
        "| design | method | metric | ours | bound | ok |",
        "|---|---|---|---|---|---|",
    ]
    for d, m, k, ours, bound, ok in checks:
        lines.append(f"| {d} | {m} | {k} | {ours:.2f} | {bound:.2f} | {'yes' if ok else 'NO'} |")
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n" + NOTES)
    OUT.with_suffix(".json").write_text(
        json.dumps(
            {
                "summary": summary,
                "paper": PAPER,
                "checks": [
                    dict(zip(("design", "method", "metric", "ours", "bound", "ok"), c, strict=True))
                    for c in checks
                ],
            },
            indent=1,
        )
    )
    print(f"wrote {OUT.with_suffix('.md')}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--examples", default="1,2,3,4")
    ap.add_argument("--n-train", type=int, default=500)
    ap.add_argument("--n-tune", type=int, default=500)
    ap.add_argument("--n-test", type=int, default=10_000)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--n-weights", type=int, default=0, help="M of every ladder (0: default)")
    ap.add_argument(
        "--final-n-weights",
        type=int,
        default=0,
        help="M of the final fits only (0: as --n-weights)",
    )
    ap.add_argument("--tag", default="", help="suffix of the run files (a variant)")
    ap.add_argument(
        "--baselines",
        default=",".join(BASELINES),
        help="comma-separated baseline names ('' for none)",
    )
    ap.add_argument("--no-wsvm", action="store_true")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)
    args.baselines = [b for b in args.baselines.split(",") if b]
    RUNS.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        for seed in parse_seeds(args.seeds):
            for ex in args.examples.split(","):
                path = RUNS / f"zeng_ex{ex}_seed{seed}{args.tag}.json"
                if path.exists():
                    continue
                t0 = time.perf_counter()
                out = run_one(ex, seed, args)
                out["seconds"] = time.perf_counter() - t0
                path.write_text(json.dumps(out, indent=1, default=float))
                l1 = {
                    m: round(v["L1"], 1)
                    for m, v in out["methods"].items()
                    if not m.startswith("_") and "L1" in v
                }
                print(f"ex{ex} seed {seed}: {out['seconds']:.0f} s {l1}", flush=True)
    write_report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
