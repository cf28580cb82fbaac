"""Tuned fits whose choices and probabilities are pinned against values recorded on main.

``python -m tests.reference.tuning_cases record`` (from the repository root) writes
``tuning_main.json``: for every case, the tuning table, the chosen parameters and the
probabilities at test points, as the code of main before the generic search
(``wsvmgui.ladder.gridsearch``) replaced the tuning loops.  ``tests/test_tuning_reference.py``
fits the same cases with the current code and compares.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from wsvmgui import (
    JointWSVMClassifier,
    MulticlassWeightedSVMClassifier,
    NonCrossingLadderClassifier,
    PreconditionedSVC,
    ProbingClassifier,
    WeightedSVMClassifier,
)
from wsvmgui.evaluation.designs import simulate

RECORD = Path(__file__).with_name("tuning_main.json")
#: The record predates the recalibration default (and P-SVM's least-squares coupling):
#: its fits are the ladders' own estimates.
PLAIN = "none"
#: ... and the pair schemes' 3-fold coarse-grid defaults: their grid was the full one.
HOLDOUT = "holdout"
#: ... and the binary default's widest one-SE cell (up to 500 rows since the sixth
#: sitting, on the hold-out too since the ninth): the smallest EGKL.
MIN = "min"


def _cases() -> dict[str, tuple[Any, str, int, int]]:
    """name -> (estimator, design, n, seed)."""
    return {
        "binary_path_5fold": (
            WeightedSVMClassifier(calibration=PLAIN, tuning_rule=MIN),
            "wuliu2011_ex1",
            120,
            3,
        ),
        "binary_grid_holdout": (
            # screen=None: recorded before the binary ladder screened from 250 rows per fold
            WeightedSVMClassifier(
                engine="grid", n_weights=12, screen=None, calibration=PLAIN, tuning_rule=MIN
            ),
            "wang2008_ex1",
            560,
            4,
        ),
        "binary_screened": (
            WeightedSVMClassifier(
                engine="grid",
                n_weights=8,
                lambdas=[1e-2, 1e-3, 1e-4],
                cv=0.3,
                n_jobs=2,
                calibration=PLAIN,
                tuning_rule=MIN,
            ),
            "wuliu2011_ex1",
            1500,
            5,
        ),
        "binary_norefit_poly": (
            WeightedSVMClassifier(
                kernel="poly", degree=2, refit=False, cv=3, calibration=PLAIN, tuning_rule=MIN
            ),
            "wuliu2011_ex2",
            90,
            6,
        ),
        "ova": (
            MulticlassWeightedSVMClassifier(n_weights=10, calibration=PLAIN),
            "wu2010_ex1",
            150,
            7,
        ),
        "pairwise_cv3": (
            MulticlassWeightedSVMClassifier(
                scheme="pairwise",
                engine="grid",
                cv=3,
                calibration=PLAIN,
                coupling="baseline",
                pair_tuning=HOLDOUT,
            ),
            "wu2010_ex1",
            120,
            8,
        ),
        "baseline2": (
            # ties="key": the record predates the tie pairs (main's default since)
            MulticlassWeightedSVMClassifier(
                scheme="baseline2",
                sigmas=[0.5, 1.0, 2.0],
                ties="key",
                calibration=PLAIN,
                pair_tuning=HOLDOUT,
            ),
            "zeng_ex1",
            150,
            9,
        ),
        "noncrossing_egkl_independent": (
            NonCrossingLadderClassifier(n_weights=8, lambdas=[1e-2, 1e-3], sigmas=[0.7, 1.5]),
            "wuliu2011_ex1",
            80,
            10,
        ),
        "preconditioned": (PreconditionedSVC(n_weights=8), "wuliu2011_ex1", 100, 11),
        "preconditioned_independent": (
            PreconditionedSVC(n_weights=8, ladder="independent", refit=False),
            "wuliu2011_ex2",
            100,
            12,
        ),
        "joint_rbf": (
            # recorded before the joint search was screened and solved by the active set:
            # every cell in full, by the general QP
            JointWSVMClassifier(
                N=8,
                kernel="rbf",
                lambdas=[0.05, 0.005],
                sigmas=[0.7, 1.5],
                screen=None,
                qp_solver="clarabel",
            ),
            "wu2010_ex1",
            90,
            13,
        ),
        "joint_linear_cv3": (
            JointWSVMClassifier(N=8, kernel="linear", cv=3, screen=None, qp_solver="clarabel"),
            "wu2010_ex1",
            90,
            14,
        ),
        "probing": (
            ProbingClassifier(
                n_thresholds=6, param_grid={"min_samples_leaf": [2, 10], "max_depth": [2, 4]}
            ),
            "wuliu2011_ex1",
            120,
            15,
        ),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.floating, float)):
        return float(value) if np.isfinite(value) else repr(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def _chosen(est: Any) -> dict[str, Any]:
    """The parameters tuning chose, read the way main's estimators expose them."""
    out: dict[str, Any] = {}
    for name in ("lambda_", "lam_", "sigma_", "pt_", "best_params_", "C_"):
        if name in vars(est):
            out[name.rstrip("_")] = getattr(est, name)
    if "subproblems_" in vars(est):
        out["subproblems"] = [[f.lam, f.sigma] for f in est.subproblems_.fitted]
    return out


def _table(est: Any) -> Any:
    """The tuning scores as main keeps them."""
    if "subproblems_" in vars(est):
        return [f.tuning.egkl for f in est.subproblems_.fitted]
    tuning = vars(est).get("tuning_")
    if tuning is not None and hasattr(tuning, "egkl"):
        return tuning.egkl
    if "tuning_table_" in vars(est):
        return [row["cross_entropy"] for row in est.tuning_table_]
    if "level_errors_" in vars(est):
        return est.level_errors_
    return None


def run_case(name: str) -> dict[str, Any]:
    """Fit case ``name``; its chosen parameters, tuning scores and test probabilities."""
    est, design, n, seed = _cases()[name]
    data = simulate(design, n, seed=seed)
    test = simulate(design, 40, seed=seed + 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(data.X, data.y)
    return _plain(
        {"chosen": _chosen(est), "table": _table(est), "proba": est.predict_proba(test.X)}
    )


def case_names() -> list[str]:
    return list(_cases())


if __name__ == "__main__" and sys.argv[1:] == ["record"]:
    RECORD.write_text(json.dumps({k: run_case(k) for k in case_names()}, indent=1) + "\n")
    print(f"wrote {RECORD}")
