"""Peak memory and CPU of the binary default against the former default and plain, side by side.

Ninth sitting: ``WeightedSVMClassifier``'s ``calibration="auto"`` became the choice among
the sigmoid, isotonic and plateau maps (``binary.AUTO_CALIBRATION = "auto_plateau"``) and
its ``tuning_rule="auto"`` the widest one-SE cell on every split (the hold-out above 500
rows too).  CPU was measured side by side (``binary_map_study.py --cpu``, one process per
draw), peak memory not.  Here each fit runs in a fresh single-threaded worker process
(``benchmarks/_worker.py``), the methods alternated within every (data, seed):

* ``default``: today's default (``wsvmgui`` of ``accuracy_vs_peers.py``; since the tenth
  sitting with the middle rung where the count saturates, which fires on breast cancer
  and on none of the design draws);
* ``former``: the default before the ninth sitting, reconstructed: ``"auto"`` choosing
  among :data:`~wsvmgui.ladder.recalibration.AUTO_MAPS` (the sigmoid and isotonic maps,
  the spline guard as today: ``binary.AUTO_CALIBRATION`` set to ``"auto"`` in the worker)
  and ``tuning_rule="min"`` above 500 rows (the hold-out; ``"auto"``, the widest one-SE
  cell on 5 folds, up to 500 rows, as today), never the middle rung
  (``midrung.SATURATION_SHARE`` set to 1 in the worker) -- what ``binary_map_study.py``
  pins;
* ``plain``: ``wsvmgui_plain``, the 1.5x budget's reference.

The draws are the benchmark of record's (``accuracy_vs_peers.load``, 10,000 test points).
Measured: the fit's CPU, the worker's peak resident memory before the fit (imports, data,
compiled kernels), after it and after ``predict_proba`` at the test points,
``predict_proba``'s CPU, the pickled model's size.  Each fit's L1 (designs) or log loss
(real sets) is set against the record's run of the same definition (``runs``: today's
default and ``wsvmgui_plain``; ``stale``: the former default's, the definition with
``AUTO_ONE_SE_MAX_ROWS``), so the reconstruction is checked, not assumed.

Results: ``benchmarks/results/binary_default_memory.{md,json}``.

Usage: ``nice -n 5 python benchmarks/binary_default_memory.py [--data ...] [--seeds 0 1]
[--n 2000] [--out-dir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import _worker as bench  # noqa: E402

#: The record's binary draws: two designs at n (2000) and breast cancer's splits.
DATA = ("wang2008_ex1", "wuliu2011_ex1", "breast_cancer")
METHODS = ("default", "former", "plain")
#: The record's test points per design draw.
N_TEST = 10_000
#: Above this many rows ``cv="auto"`` holds out 30 % and the former ``tuning_rule="auto"``
#: took the smallest score (its ``AUTO_ONE_SE_MAX_ROWS``).
FORMER_ONE_SE_MAX_ROWS = 500


def _estimator(acc, method: str, X, codes):
    """``method``'s unfitted estimator on the rows ``X`` (n, p), labels ``codes`` (n,)
    as the command line prepares them: ``(estimator, X, codes)``."""
    from wsvmgui.estimators import binary
    from wsvmgui.ladder import midrung

    group = "wsvmgui_plain" if method == "plain" else "wsvmgui"
    est, X, codes, _ = acc.method_estimator(group, 2, X, codes)
    assert isinstance(est, binary.WeightedSVMClassifier), type(est)
    if method == "former":
        binary.AUTO_CALIBRATION = "auto"  # this worker only: the choice of AUTO_MAPS
        midrung.SATURATION_SHARE = 1.0  # and never the middle rung (tenth sitting's rule)
        if codes.size > FORMER_ONE_SE_MAX_ROWS:
            est.set_params(tuning_rule="min")
    return est, X, codes


def _measure(data: str, n: str, seed: int, method: str) -> dict:
    """Fit and predict ``method`` on the record's draw ``seed`` of ``data`` (``n`` rows,
    or ``"split"``) in this (fresh) process."""
    acc = bench.record_module()
    X, codes, Xt, yt, P_true, K = acc.load(data, None if n == "split" else int(n), seed, N_TEST)
    assert K == 2, f"{data} is not binary"
    est, X, codes = _estimator(acc, method, X, codes)
    cost = bench.timed_fit(est, X, codes)
    t0 = time.process_time()
    P = est.predict_proba(Xt)
    predict = time.process_time() - t0
    peak = bench.peak_mb()
    score = acc.metrics(P, yt, P_true)
    return {
        "data": data, "n": int(codes.size), "seed": seed, "method": method,
        "size": n, "calibration": est.fit_info_.get("calibration", "none"),
        "tuning_rule": est.get_params()["tuning_rule"], "lambda": est.lambda_,
        "sigma": est.sigma_, "cpu": cost["cpu"], "before_mb": cost["before_mb"],
        "peak_fit_mb": cost["peak_mb"], "predict_cpu": predict, "peak_mb": peak,
        "fit_adds_mb": cost["peak_mb"] - cost["before_mb"],
        "model_mb": len(pickle.dumps(est)) / 2**20,
        "score": score["L1"] if P_true is not None else score["log_loss"],
    }  # fmt: skip


def _recorded(row: dict, record: dict) -> float | None:
    """The record's L1 (designs) or log loss (real sets) of ``row``'s draw and method."""
    draw = f"{row['data']}|{row['size']}|{row['seed']}"
    key = "L1" if row["size"] != "split" else "log_loss"
    if row["method"] != "former":
        group = "wsvmgui_plain" if row["method"] == "plain" else "wsvmgui"
        runs = record["runs"].get(f"{draw}|{group}")
        return float(runs[0][key]) if runs else None
    for name, runs in record.get("stale", {}).items():
        method = runs[0]["definition"]["method"]
        former = method.get("calibration=auto") == ["sigmoid", "isotonic"] and (
            "tuning_rule=auto:AUTO_ONE_SE_MAX_ROWS" in method
        )
        if name.startswith(f"{draw}|wsvmgui|") and former:
            return float(runs[0][key])
    return None


def _report(rows: list[dict], host: str, record: dict) -> str:
    names = list(METHODS)
    groups = bench.paired(rows, names)
    lines = [
        "# Peak memory and CPU of the binary default (side by side)",
        "",
        "Generated by `benchmarks/binary_default_memory.py`: each fit in a fresh "
        "single-threaded worker process, the methods alternated within every (data, seed); "
        "the benchmark of record's draws (10,000 test points) and estimators.  **default**: "
        'today\'s (`calibration="auto"`: `"auto_plateau"` on the count, the middle rung '
        "where the count saturates, the widest one-SE cell on every split); **former**: the "
        'default before the ninth sitting (`"auto"` among the sigmoid and isotonic maps, '
        '`tuning_rule="min"` above 500 rows, never the middle rung); **plain**: '
        f"`wsvmgui_plain`.  Machine: {host}.  Medians over the seeds; ratios per seed, then "
        "the median.  Peak MB: the worker's peak resident memory at the end of the fit "
        "(fit adds: over the peak before it: imports, data, compiled kernels) and after "
        "`predict_proba` at the test points; model: the pickled fitted estimator.",
        "",
        "| data | n | seeds | CPU default | CPU former | CPU plain | default / former | "
        "default / plain | former / plain | peak MB (fit) default | former | plain | "
        "default / former | default / plain | fit adds MB default | former | plain | "
        "peak MB (predict) default / former | predict CPU default / former | "
        "model MB default | former | plain |",
        "|---|---:|---:|" + "---:|" * 20,
    ]
    versus = [("default", "former"), ("default", "plain"), ("former", "plain")]
    for d, g in groups.items():
        cells = [
            d,
            str(g.first["n"]),
            str(len(g.seeds)),
            g.cells("cpu", ".2f"),
            g.ratios(versus),
            g.cells("peak_fit_mb", ".0f"),
            g.ratios(versus[:2], "peak_fit_mb", ".3f"),
            g.cells("fit_adds_mb", ".0f"),
            g.ratios(versus[:1], "peak_mb", ".3f"),
            g.ratios(versus[:1], "predict_cpu"),
            g.cells("model_mb", ".2f"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    draws = [(g, s) for g in groups.values() for s in g.seeds]
    if draws:

        def total(key: str, m: str) -> float:
            return sum(g.by[(s, m)][key] for g, s in draws)

        lines += [
            "",
            f"Over all {len(draws)} draws (sums): CPU default / former "
            f"{total('cpu', 'default') / total('cpu', 'former'):.2f}, default / plain "
            f"{total('cpu', 'default') / total('cpu', 'plain'):.2f}, former / plain "
            f"{total('cpu', 'former') / total('cpu', 'plain'):.2f}; peak MB (fit) default / "
            f"former {total('peak_fit_mb', 'default') / total('peak_fit_mb', 'former'):.3f}, "
            f"default / plain "
            f"{total('peak_fit_mb', 'default') / total('peak_fit_mb', 'plain'):.3f}; fit adds "
            f"MB default / former "
            f"{total('fit_adds_mb', 'default') / total('fit_adds_mb', 'former'):.3f}; peak MB "
            f"(predict) default / former "
            f"{total('peak_mb', 'default') / total('peak_mb', 'former'):.3f}.",
        ]
    lines += [
        "",
        "Every fit (score: L1 on designs, log loss on breast cancer; record: the benchmark "
        "of record's run of the same definition, the former default's among `stale`):",
        "",
        "| data | seed | method | map | tuning_rule | CPU s | MB before | peak MB (fit) | fit "
        "adds MB | predict s | peak MB | model MB | score | record | abs diff |",
        "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rec = _recorded(r, record)
        diff = "" if rec is None else f"{abs(r['score'] - rec):.1e}"
        lines.append(
            f"| {r['data']} | {r['seed']} | {r['method']} | {r['calibration']} | "
            f"{r['tuning_rule']} | {r['cpu']:.2f} | {r['before_mb']:.0f} | "
            f"{r['peak_fit_mb']:.0f} | {r['fit_adds_mb']:.0f} | {r['predict_cpu']:.2f} | "
            f"{r['peak_mb']:.0f} | {r['model_mb']:.2f} | {r['score']:.5f} | "
            + ("" if rec is None else f"{rec:.5f}")
            + f" | {diff} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", choices=list(DATA), default=list(DATA))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--n", type=int, default=2000, help="rows of a design draw")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results")
    parser.add_argument("--report-only", action="store_true", help="rewrite the .md")
    parser.add_argument("--worker", nargs=4, metavar=("DATA", "N", "SEED", "METHOD"))
    args = parser.parse_args()
    if args.worker:
        data, n, seed, method = args.worker
        print(json.dumps(_measure(data, n, int(seed), method)))
        return
    out = args.out_dir / "binary_default_memory"
    record = json.loads((HERE / "results" / "accuracy_vs_peers.json").read_text())
    if args.report_only:
        payload = json.loads(out.with_suffix(".json").read_text())
        bench.write_results(out, payload, _report(payload["rows"], payload["machine"], record))
        return
    acc = bench.record_module()
    cases = [
        ([d, "split" if d in acc.REAL else str(args.n), str(s)], s)
        for d in args.data
        for s in args.seeds
    ]
    rows = bench.side_by_side(
        __file__,
        cases,
        METHODS,
        ROOT,
        lambda r: (
            f"{r['cpu']:.2f} s, peak {r['peak_fit_mb']:.0f} / {r['peak_mb']:.0f} MB, "
            f"{r['calibration']}, score {r['score']:.5f}"
        ),
    )
    host = bench.machine()
    bench.write_results(out, {"machine": host, "rows": rows}, _report(rows, host, record))


if __name__ == "__main__":
    main()
