"""Why the binary default loses on the logistic design at the papers' size (issue 23).

Study of branch acc-small (docs/notes/calibration.md, "Sixth sitting").  For each draw of
the benchmark of record (:func:`accuracy_vs_peers.load`: the designs at n = 100 with
10,000 test points, breast cancer's 70/30 splits), every cell of a widened grid,
C in :data:`C_GRID` x sigma = f sigma_M, f in :data:`FACTORS` (the default's 7 x 6 grid
is the sub-grid C >= 0.1, f <= 1.5), is fitted at fixed values:

* its cross-fitted raw estimates of every training row on the default's own 5 tuning
  folds (``cross_fitted``: the ladder refitted on each fold's training part, C kept);
  these are both what the EGKL search scores and what ``calibration="auto"`` maps;
* its raw estimate of the test rows from the fit on all rows.

and the default estimator itself is fitted (its chosen cell, test probabilities, CPU) to
check that the cache reproduces it.  Cached per draw in ``--cache`` (.npz); ``--report``
then evaluates cell-choice rules offline: a rule picks a cell from the cross-fitted
estimates only, the "auto" map is fitted to that cell's cross-fitted estimates and applied
to its test estimate (what the estimator returns), and L1 (designs; both classes) or log
loss (breast cancer) is taken against the truth.  Results: ``benchmarks/results/
small_n_study.{md,json}``.

    python benchmarks/small_n_study.py --data wuliu2011_ex1 --seeds 0 1 2 3 4
    python benchmarks/small_n_study.py --report
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
FACTORS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)
DATA = ("wuliu2011_ex1", "wuliu2011_ex2", "wuliu2011_ex6", "wang2008_ex1", "breast_cancer")
CACHE = Path("/tmp/acc-small/cache")
N_TEST = 10_000


def cache_draw(data: str, seed: int, cache: Path) -> Path:
    """Fit every cell of the widened grid on one draw; write and return its .npz."""
    from accuracy_vs_peers import load

    from wsvmgui.estimators.binary import WeightedSVMClassifier
    from wsvmgui.ladder.problems import LadderProblem
    from wsvmgui.ladder.recalibration import cross_fitted
    from wsvmgui.ladder.splits import resolve_cv
    from wsvmgui.ladder.tuning import default_n_weights
    from wsvmgui.ladder.weights import weight_grid
    from wsvmgui.progress import ProgressTracker
    from wsvmgui.solvers.kernels import Kernel, default_sigma_grid

    out = cache / f"{data}_{seed}.npz"
    if out.exists():
        return out
    n = None if data == "breast_cancer" else 100
    X, codes, Xt, codes_t, P, _ = load(data, n, seed, N_TEST)
    m = codes.size
    # the default itself (reproduction check, and its CPU)
    t0 = time.process_time()
    est = WeightedSVMClassifier(random_state=0).fit(X, codes)
    p_def = est.predict_proba(Xt)[:, 1]
    cpu_def = time.process_time() - t0
    folds = resolve_cv("auto", codes, 0)
    sigma_m = default_sigma_grid(X, codes, (1.0,), 0)[0]
    weights = weight_grid(default_n_weights(m))
    problem = LadderProblem(np.arange(m), np.where(codes == 1, 1.0, -1.0))
    cf = np.empty((len(C_GRID), len(FACTORS), m))
    test = np.empty((len(C_GRID), len(FACTORS), Xt.shape[0]))
    y_cf = None
    t0 = time.process_time()
    for i, C in enumerate(C_GRID):
        lam = 1.0 / (2.0 * m * C)
        for j, f in enumerate(FACTORS):
            s = f * sigma_m
            p, y_cf = cross_fitted(
                X, problem, folds, Kernel("rbf", sigma=s), lam, m, weights,
                tracker=ProgressTracker(10**9),
            )  # fmt: skip
            cf[i, j] = p
            fixed = WeightedSVMClassifier(lam=lam, sigma=s, calibration="none", random_state=0)
            test[i, j] = fixed.fit(X, codes).predict_proba(Xt)[:, 1]
    cpu_cells = time.process_time() - t0
    fold_of = np.concatenate([np.full(te.size, k) for k, (_, te) in enumerate(folds)])
    rows = np.concatenate([te for _, te in folds])
    cache.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(
        tmp, cf=cf, y_cf=y_cf, fold_of=fold_of, rows=rows, test=test,
        y_test=codes_t, p_true=np.full(codes_t.size, np.nan) if P is None else P[:, 1],
        p_default=p_def, cpu_default=cpu_def, cpu_cells=cpu_cells, sigma_m=sigma_m,
        C_default=est.C_, sigma_default=est.sigma_, map_default=est.fit_info_["calibration"],
        C_grid=np.array(C_GRID), factors=np.array(FACTORS),
    )  # fmt: skip
    os.replace(tmp, out)
    return out


# ------------------------------------------------------------------------------ offline
def _metric(q: np.ndarray, d) -> float:
    """L1 (both classes) against the truth, or log loss where there is none."""
    from wsvmgui.evaluation.metrics import cross_entropy

    pt = d["p_true"]
    if np.isfinite(pt).all():
        return float(2.0 * np.mean(np.abs(q - pt)))
    P = np.column_stack([1.0 - q, q])
    return float(cross_entropy(P, d["y_test"], np.arange(2)))


class Draw:
    """One cached draw: cell scores computed once, returned estimates on demand."""

    def __init__(self, path: Path) -> None:
        from wsvmgui.ladder.recalibration import recalibrated_terms
        from wsvmgui.ladder.search import brier_terms, egkl_terms, log_loss_terms

        d = dict(np.load(path))
        self.d = d
        y = d["y_cf"]
        cf = d["cf"]
        L, S, _ = cf.shape
        self.terms = {"egkl": np.empty(cf.shape), "ll_recal": np.empty(cf.shape),
                      "brier_recal": np.empty(cf.shape), "brier": np.empty(cf.shape),
                      "ll_sigmoid": np.empty(cf.shape)}  # fmt: skip
        for i in range(L):
            for j in range(S):
                p = cf[i, j]
                self.terms["egkl"][i, j] = egkl_terms(p, y)
                self.terms["brier"][i, j] = brier_terms(p, y)
                self.terms["ll_recal"][i, j] = recalibrated_terms(p, y, "auto", log_loss_terms)
                self.terms["brier_recal"][i, j] = recalibrated_terms(p, y, "auto", brier_terms)
                self.terms["ll_sigmoid"][i, j] = recalibrated_terms(p, y, "sigmoid", log_loss_terms)
        self._out: dict[tuple[int, int], float] = {}

    def estimate(self, i: int, j: int) -> np.ndarray:
        """What the estimator returns at cell (i, j): the "auto" map of the cell's
        cross-fitted estimates applied to its test estimate; shape (m_test,)."""
        from wsvmgui.ladder.recalibration import fit_calibration

        g = fit_calibration("auto", self.d["cf"][i, j], self.d["y_cf"], seed=0)
        return g(self.d["test"][i, j])

    def returned(self, i: int, j: int) -> float:
        """The metric of what the estimator returns at cell (i, j)."""
        if (i, j) not in self._out:
            self._out[i, j] = _metric(self.estimate(i, j), self.d)
        return self._out[i, j]

    def ranked(self, score: str, Cs, Fs) -> list[tuple[int, int]]:
        """The cells of C values ``Cs`` and factors ``Fs``, best ``score`` first."""
        cells = [(C_GRID.index(c), FACTORS.index(f)) for c in Cs for f in Fs]
        mean = self.terms[score].mean(axis=2)
        return sorted(cells, key=lambda c: mean[c])

    def averaged(self, score: str, Cs, Fs, k: int) -> float:
        """The metric of the mean of the ``k`` best cells' returned estimates."""
        top = self.ranked(score, Cs, Fs)[:k]
        return _metric(np.mean([self.estimate(*c) for c in top], axis=0), self.d)

    def choose(self, score: str, Cs, Fs, rule: str = "min") -> tuple[int, int]:
        """The cell a rule picks among C values ``Cs`` and factors ``Fs``."""
        ci = [C_GRID.index(c) for c in Cs]
        fj = [FACTORS.index(f) for f in Fs]
        t = self.terms[score][np.ix_(ci, fj)]
        mean = t.mean(axis=2)
        if rule.startswith("smooth"):
            # each cell scored by the mean over it and its grid neighbours
            pad = np.pad(mean, 1, constant_values=np.nan)
            stack = [pad[1 + a : 1 + a + mean.shape[0], 1 + b : 1 + b + mean.shape[1]]
                     for a in (-1, 0, 1) for b in (-1, 0, 1)]  # fmt: skip
            mean = np.nanmean(stack, axis=0)
        # the search's order: lambda decreasing (C increasing), then sigma increasing
        flat = mean.ravel()
        best = int(np.flatnonzero(flat <= flat.min())[0])
        bi, bj = np.unravel_index(best, mean.shape)
        if rule.startswith("one_se"):
            se = t.std(axis=2, ddof=1) / np.sqrt(t.shape[2])
            bound = mean[bi, bj] + se[bi, bj]
            close = [(a, b) for a in range(mean.shape[0]) for b in range(mean.shape[1])
                     if mean[a, b] <= bound]  # fmt: skip
            if rule == "one_se":  # the search's: smallest C, then widest sigma
                bi, bj = min(close, key=lambda c: (c[0], -c[1]))
            else:  # widest sigma, then smallest C
                bi, bj = min(close, key=lambda c: (-c[1], c[0]))
        return ci[bi], fj[bj]

    def oracle(self, Cs, Fs) -> tuple[int, int]:
        cells = [(C_GRID.index(c), FACTORS.index(f)) for c in Cs for f in Fs]
        return min(cells, key=lambda c: self.returned(*c))


# ------------------------------------------------------------------------------ check
#: The fits the check compares, in one process per draw: the default before the sixth
#: sitting's tuning rule (``calibration="auto"``, the EGKL minimum), the same without
#: the recalibration (the record's ``wsvmgui_plain``), and ``tuning_rule="auto"``.
CHECK_VARIANTS = {
    "plain": {"calibration": "none", "tuning_rule": "min"},
    "min": {"calibration": "auto", "tuning_rule": "min"},
    "auto": {"calibration": "auto", "tuning_rule": "auto"},
}


def check_draw(data: str, n: int | None, seed: int) -> dict:
    """Fit every :data:`CHECK_VARIANTS` on one draw (order rotated by seed); their
    metric (L1, or log loss for a real set), CPU seconds and chosen cell."""
    from accuracy_vs_peers import load

    from wsvmgui.estimators.binary import WeightedSVMClassifier

    X, codes, Xt, codes_t, P, _ = load(data, n, seed, N_TEST)
    d = {"p_true": np.full(codes_t.size, np.nan) if P is None else P[:, 1], "y_test": codes_t}
    names = list(CHECK_VARIANTS)
    names = names[seed % 3 :] + names[: seed % 3]
    out: dict = {"data": data, "n": codes.size, "seed": seed}
    for name in names:
        t0 = time.process_time()
        est = WeightedSVMClassifier(random_state=0, **CHECK_VARIANTS[name]).fit(X, codes)
        q = est.predict_proba(Xt)[:, 1]
        cpu = time.process_time() - t0
        out[name] = {"metric": _metric(q, d), "cpu": cpu, "C": est.C_, "sigma": est.sigma_,
                     "rule": est.tuning_.rule if est.tuning_ is not None else ""}  # fmt: skip
    return out


def run_check(data: list[str], sizes: list[str], seeds: list[int], path: Path) -> None:
    """Append the check's draws to ``path`` (JSON; finished draws are skipped)."""
    state = json.loads(path.read_text()) if path.exists() else {"check": []}
    done = {(r["data"], r["n"], r["seed"]) for r in state["check"]}
    for name in data:
        for size in sizes if name != "breast_cancer" else ["split"]:
            n = None if size in ("split", "paper") else int(size)
            for seed in seeds:
                key = (name, 398 if name == "breast_cancer" else (n or 100), seed)
                if key in done:
                    continue
                row = check_draw(name, n if name != "breast_cancer" else None, seed)
                state["check"].append(row)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(state, indent=1))
                os.replace(tmp, path)
                print(name, row["n"], seed, {k: round(row[k]["metric"], 4) for k in CHECK_VARIANTS},
                      flush=True)  # fmt: skip


# ------------------------------------------------------------------------------ report
DEF_C = C_GRID[2:]  # the default grid: C 0.1 ... 100
DEF_F = FACTORS[:6]  # sigma (0.25 ... 1.5) sigma_M
WIDE3 = FACTORS[:9]  # ... up to 3 sigma_M
#: Offline rules: (score, C values, sigma factors, rule); "oracle" takes the cell of the
#: least test error (hindsight), an int k averages the k best cells' returned estimates.
RULES = {
    "default (EGKL, min)": ("egkl", DEF_C, DEF_F, "min"),
    "EGKL, min, sigma to 3": ("egkl", DEF_C, WIDE3, "min"),
    "EGKL, min, sigma to 6": ("egkl", DEF_C, FACTORS, "min"),
    "recal. log loss, min": ("ll_recal", DEF_C, DEF_F, "min"),
    "recal. log loss, min, sigma to 6": ("ll_recal", DEF_C, FACTORS, "min"),
    "recal. Brier, min": ("brier_recal", DEF_C, DEF_F, "min"),
    "sigmoid-map log loss, min": ("ll_sigmoid", DEF_C, DEF_F, "min"),
    "sigmoid-map log loss, min, sigma to 6": ("ll_sigmoid", DEF_C, FACTORS, "min"),
    "EGKL, 3 best averaged": ("egkl", DEF_C, DEF_F, 3),
    "EGKL, neighbours-smoothed min": ("egkl", DEF_C, DEF_F, "smooth"),
    "EGKL, one-SE smoothest (`one_se`)": ("egkl", DEF_C, DEF_F, "one_se"),
    "EGKL, one-SE widest (`auto`)": ("egkl", DEF_C, DEF_F, "one_se_sigma"),
    "EGKL, one-SE widest, sigma to 3": ("egkl", DEF_C, WIDE3, "one_se_sigma"),
    "oracle, default grid": ("oracle", DEF_C, DEF_F, ""),
    "oracle, sigma to 6": ("oracle", DEF_C, FACTORS, ""),
}


def _value(D: Draw, rule) -> tuple[float, tuple[int, int] | None]:
    score, Cs, Fs, how = rule
    if score == "oracle":
        cell = D.oracle(Cs, Fs)
        return D.returned(*cell), cell
    if isinstance(how, int):
        return D.averaged(score, Cs, Fs, how), None
    cell = D.choose(score, Cs, Fs, how)
    return D.returned(*cell), cell


def report(cache: Path, out: Path) -> None:
    """Evaluate :data:`RULES` on every cached draw; write ``out``.md and .json."""
    rows: dict = {}
    for data in DATA:
        for path in sorted(cache.glob(f"{data}_*.npz")):
            seed = int(path.stem.rsplit("_", 1)[1])
            D = Draw(path)
            sm = float(D.d["sigma_m"])
            for name, rule in RULES.items():
                v, cell = _value(D, rule)
                rows.setdefault(data, {}).setdefault(name, {})[seed] = {
                    "value": v,
                    "C": None if cell is None else C_GRID[cell[0]],
                    "sigma_factor": None if cell is None else FACTORS[cell[1]],
                }
            rows[data].setdefault("_sigma_M", {})[seed] = sm
            rows[data].setdefault("_cpu_cells", {})[seed] = float(D.d["cpu_cells"])
    sets = {"0-4": range(5), "5-9": range(5, 10), "0-9": range(10)}

    def mean(data: str, name: str, seeds) -> float:
        vals = [rows[data][name][s]["value"] for s in seeds if s in rows[data][name]]
        return float(np.mean(vals)) if vals else float("nan")

    lines = [
        "# Small-n study (issue 23, branch acc-small): the cell the binary default chooses",
        "",
        "Made by `benchmarks/small_n_study.py --report` from per-cell caches (every cell of",
        "C in "
        + ", ".join(f"{c:g}" for c in C_GRID)
        + " x sigma = f sigma_M, f in "
        + ", ".join(f"{f:g}" for f in FACTORS)
        + ", fitted at fixed values: cross-fitted",
        "estimates on the default's 5 tuning folds, and the fit on all rows at the 10,000 test",
        'points).  Each rule picks a cell from the cross-fitted estimates; the "auto" map',
        "fitted to that cell's cross-fitted estimates maps its test estimate (what the",
        "estimator returns).  L1 (both classes) against the truth for the designs (n = 100),",
        "log loss for breast cancer (70/30 splits, 398 training rows).  Ratio: to the",
        "default's mean on the same seeds.  The cache reproduces the library's default on",
        "every draw (same cell, same L1).",
        "",
    ]
    for label, seeds in sets.items():
        lines += [f"## Seeds {label}", "", "| rule | " + " | ".join(DATA) + " |",
                  "|---" * (len(DATA) + 1) + "|"]  # fmt: skip
        for name in RULES:
            cells = []
            for data in DATA:
                m, b = mean(data, name, seeds), mean(data, "default (EGKL, min)", seeds)
                cells.append(f"{m:.4f} ({m / b:.2f})")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Picks per draw (C, f = sigma / sigma_M, value)", "",
              "| data | seed | default | `auto` | oracle (sigma to 6) |",
              "|---|---|---|---|---|"]  # fmt: skip
    shown = ("default (EGKL, min)", "EGKL, one-SE widest (`auto`)", "oracle, sigma to 6")
    for data in DATA:
        for seed in sorted(rows[data]["default (EGKL, min)"]):
            pick = []
            for name in shown:
                r = rows[data][name][seed]
                pick.append(f"C {r['C']:g}, f {r['sigma_factor']:g}: {r['value']:.4f}")
            lines.append(f"| {data} | {seed} | " + " | ".join(pick) + " |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"C_grid": C_GRID, "factors": FACTORS, "rows": rows}, indent=1))
    os.replace(tmp, out.with_suffix(".json"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="*", default=list(DATA))
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--cache", default=str(CACHE))
    ap.add_argument("--check", help="fit the CHECK_VARIANTS side by side; write this JSON")
    ap.add_argument("--sizes", nargs="*", default=["paper"])
    ap.add_argument("--report", action="store_true", help="evaluate RULES on the cache")
    args = ap.parse_args(argv)
    if args.report:
        report(Path(args.cache), HERE / "results" / "small_n_study")
        return 0
    if args.check:
        run_check(args.data, args.sizes, args.seeds, Path(args.check))
        return 0
    for data in args.data:
        for seed in args.seeds:
            t0 = time.time()
            path = cache_draw(data, seed, Path(args.cache))
            print(f"{data} {seed} -> {path} ({time.time() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
