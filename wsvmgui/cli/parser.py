"""The argument parser: one builder per sub-command, the fit options in five groups (in
the order ``wsvmgui fit --help`` lists them)."""

from __future__ import annotations

import argparse
from typing import NoReturn

from .._version import __version__
from ..app.schemes import SCHEMES
from ..app.settings import (
    CALIBRATION_CHOICES,
    MAX_DEGREE,
    MAX_JOINT_N,
    MAX_WEIGHTS,
    TIES_CHOICES,
    TUNING_RULES,
    TUNING_SCORES,
)
from ..estimators.cost import DEFAULT_MAX_MINUTES, ENV_VAR
from ..estimators.multiclass import PAIR_TUNINGS
from ..io.preprocessing import MISSING_CHOICES
from ..ladder.engines import ENGINES
from .argtypes import floats, fraction, int_in, key_value, minutes, tokens
from .demo import TEST_SEED_OFFSET
from .status import EXIT_INPUT

SEED_MAX = 2**32 - 1


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``wsvmgui: error: <what> (see --help)``, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"wsvmgui: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = Parser(
        prog="wsvmgui",
        description="Class probabilities from weighted SVMs. Without a command, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"wsvmgui {__version__}")
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="compile the path engine and the joint fit's solver now (once per machine; "
        "scripts/setup.sh does it) and exit",
    )
    parser.add_argument(
        "--install-desktop",
        action="store_true",
        help="add wsvmgui to the desktop's applications menu (a .desktop entry and its icon "
        "under ~/.local/share) and exit",
    )
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    _add_fit(sub)
    _add_predict(sub)
    _add_demo(sub)
    sub.add_parser("schemes", help="list the probability schemes")
    gui = sub.add_parser("gui", help="open the desktop app")
    gui.add_argument("file", nargs="?", help="a data table (CSV or TSV) or session to open")
    return parser


def _add_data_options(cmd: argparse.ArgumentParser) -> None:
    """How rows are read: ``--id``, ``--na-values``, ``--missing`` (fit and predict)."""
    cmd.add_argument(
        "--id",
        metavar="COLUMN",
        help="a column carried through to the output as the rows' identity (default: the "
        "row number, 1 = first data row)",
    )
    cmd.add_argument(
        "--na-values",
        type=tokens,
        action="append",
        default=[],
        metavar="A,B",
        help="further cell values meaning missing, in every column (blank, NA and NaN "
        "already mean missing in feature columns)",
    )
    cmd.add_argument(
        "--missing",
        choices=MISSING_CHOICES,
        help="rows with missing values: refuse them (error, the default), leave them out "
        "(drop) or fill in training medians (impute)",
    )


def _add_cost_option(cmd: argparse.ArgumentParser) -> None:
    """``--max-minutes`` (fit and demo)."""
    cmd.add_argument(
        "--max-minutes",
        type=minutes,
        metavar="MIN",
        help="refuse a fit estimated to take longer than this, before it starts (default "
        f"{DEFAULT_MAX_MINUTES:g}, or ${ENV_VAR}; 0: no limit)",
    )


def _add_fit(sub: argparse._SubParsersAction) -> None:
    fit = sub.add_parser("fit", help="fit a scheme on a CSV file and write probabilities")
    _add_fit_inputs(fit)
    _add_fit_model(fit)
    _add_fit_tuning(fit)
    _add_fit_run(fit)
    _add_fit_outputs(fit)


def _add_fit_inputs(fit: argparse.ArgumentParser) -> None:
    """The training data and how it is read and prepared."""
    fit.add_argument("train", help="training data (CSV or TSV)")
    fit.add_argument("--label", required=True, help="label column")
    fit.add_argument("--features", nargs="+", help="feature columns (default: all but the label)")
    _add_data_options(fit)
    fit.add_argument(
        "--no-standardize",
        action="store_true",
        help="use the features as they are (default: centre and scale each by the training "
        "rows' mean and standard deviation)",
    )
    fit.add_argument("--settings", help="start from a saved settings JSON file")


def _add_fit_model(fit: argparse.ArgumentParser) -> None:
    """The scheme, the kernel, the ladder and the grids of lambda and sigma."""
    fit.add_argument(
        "--scheme",
        choices=list(SCHEMES),
        help="probability scheme (default: binary for two classes, pairwise for 3 or 4, "
        "bp1 for more)",
    )
    fit.add_argument("--kernel", choices=["rbf", "linear", "poly"])
    fit.add_argument("--degree", type=int_in(1, MAX_DEGREE), help="polynomial degree")
    fit.add_argument(
        "--engine",
        choices=list(ENGINES),
        help="ladder engine: path (exact weight path; default) or grid (M - 1 weighted fits)",
    )
    fit.add_argument(
        "--weights",
        type=int_in(2, MAX_WEIGHTS),
        metavar="M",
        help="weight grid m/M, m = 1..M-1 (fitted by the grid engine; the path draws at it)",
    )
    fit.add_argument(
        "--joint-n", type=int_in(3, MAX_JOINT_N), metavar="N", help="simplex grid spacing 1/N"
    )
    fit.add_argument(
        "--lambda",
        dest="lambdas",
        type=floats,
        metavar="L1,L2,...",
        help="penalty lambda or a grid to tune over",
    )
    fit.add_argument(
        "--sigma",
        dest="sigmas",
        type=floats,
        metavar="S1,S2,...",
        help="RBF width sigma or a grid to tune over",
    )
    fit.add_argument("--rule", choices=["count", "extreme"])
    fit.add_argument(
        "--calibration",
        choices=list(CALIBRATION_CHOICES),
        help="monotone recalibration of the ladder's estimate (binary and multiclass ladder "
        "schemes; default auto: the map of least cross-validated log loss; none: the "
        "papers' rule; plateau: a sigmoid between a fitted floor and ceiling)",
    )
    fit.add_argument(
        "--ties", choices=list(TIES_CHOICES), help="baseline schemes: how tied classes are resolved"
    )


def _add_fit_tuning(fit: argparse.ArgumentParser) -> None:
    """How the grids are tuned (and ``--intervals``, which --help lists among them)."""
    fit.add_argument(
        "--tuning-score",
        choices=list(TUNING_SCORES),
        help="what tuning minimises (default egkl; brier and log_loss score the recalibrated "
        "estimate when a calibration is on)",
    )
    fit.add_argument(
        "--tuning-rule",
        choices=list(TUNING_RULES),
        help="which cell tuning takes: the smallest score (min), the smoothest within one "
        "standard error of it (one_se), or the widest kernel near it (auto; the "
        "default): the binary scheme's within one standard error, the "
        "multiclass pair schemes' within half of one on their 3 folds, "
        "else the smallest",
    )
    fit.add_argument(
        "--one-se",
        action="store_true",
        help="tune to the smoothest cell within one standard error of the best score "
        "(--tuning-rule one_se)",
    )
    fit.add_argument(
        "--tuning-extend",
        type=int,
        metavar="N",
        help="binary scheme: grow the lambda x sigma grid by one value past an edge the "
        "tuned cell sits on, at most N times (0: the grid as given)",
    )
    fit.add_argument(
        "--pair-tuning",
        choices=list(PAIR_TUNINGS),
        help="multiclass pair schemes (pairwise, baseline1/2, bp1/2) on 3+ classes: folds "
        "(default: 3 stratified folds over C in {0.1, 1, 10, 100} x sigma in {0.25, 0.5, 1, "
        "1.5} sigma_M) or holdout (a 30%% hold-out over 7 C x 6 sigma, as one-vs-all); "
        "--cv, --tune-fraction, --tune, --lambda and --sigma override its split or grid",
    )
    fit.add_argument(
        "--intervals",
        action="store_true",
        help="add per-point 90%% intervals p_<class>_lo, p_<class>_hi to the output (binary "
        "scheme with --calibration)",
    )
    tune = fit.add_mutually_exclusive_group()
    tune.add_argument("--tune", metavar="TUNE.csv", help="tuning set with the same columns")
    tune.add_argument(
        "--tune-fraction",
        type=fraction,
        metavar="F",
        help="tune on a stratified split: this share of the training data",
    )
    tune.add_argument(
        "--cv", type=int_in(2), metavar="K", help="tune by stratified K-fold cross-validation"
    )
    fit.add_argument(
        "--no-refit",
        action="store_true",
        help="keep the training-only fit instead of refitting on train + tune",
    )
    fit.add_argument(
        "--no-screen",
        action="store_true",
        help="fit every tuning cell on the full folds (default: where folds train on 1000+ "
        "rows, every cell on a third of them first and the 6 best on all)",
    )


def _add_fit_run(fit: argparse.ArgumentParser) -> None:
    """Where and how the fits run: seed, threads, cluster, solver, scheme options."""
    fit.add_argument("--seed", type=int_in(0, SEED_MAX))
    fit.add_argument("--n-jobs", type=int_in(0), help="worker threads (0: all cores)")
    fit.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the fits on the Dask cluster of this scheduler (e.g. tcp://host:8786; "
        "needs pip install 'wsvmgui[cluster]')",
    )
    fit.add_argument("--solver", choices=["libsvm", "qp"])
    fit.add_argument(
        "--option",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="scheme-specific option, e.g. learner=tree for probing",
    )


def _add_fit_outputs(fit: argparse.ArgumentParser) -> None:
    """The rows to predict and the files written."""
    fit.add_argument(
        "--predict", metavar="NEW.csv", help="rows to predict (default: training rows)"
    )
    fit.add_argument("--out", required=True, help="probabilities CSV to write (and OUT.json)")
    fit.add_argument("--model", help="also save the fitted model here (e.g. model.wsvm)")
    fit.add_argument(
        "--report",
        metavar="REPORT.html",
        help="also write a run report: one self-contained HTML file (data, settings, "
        "versions, tuning, measures against baselines, calibration, references)",
    )
    fit.add_argument("--quiet", action="store_true", help="no progress or notes on stderr")
    _add_cost_option(fit)


def _add_predict(sub: argparse._SubParsersAction) -> None:
    pred = sub.add_parser("predict", help="predict with a saved model")
    pred.add_argument("model", help="model file written by fit --model")
    pred.add_argument("data", help="rows to predict (CSV or TSV); the label column is optional")
    _add_data_options(pred)
    pred.add_argument("--out", required=True, help="probabilities CSV to write (and OUT.json)")
    pred.add_argument("--quiet", action="store_true", help="no notes on stderr")


def _add_demo(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser(
        "demo", help="fit a simulation design and print accuracy against the truth"
    )
    demo.add_argument("--design", default="wuliu2011_ex1")
    demo.add_argument("--scheme", choices=list(SCHEMES))
    demo.add_argument("--n", type=int_in(2), help="training size (default: the paper's)")
    demo.add_argument("--n-test", type=int_in(1), default=5000)
    demo.add_argument("--seed", type=int_in(0, SEED_MAX - TEST_SEED_OFFSET), default=0)
    _add_cost_option(demo)
