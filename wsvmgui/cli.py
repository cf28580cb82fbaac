"""The command line: ``wsvmgui fit``, ``predict``, ``demo`` and ``schemes``.

Every bad value gets one line on stderr naming it and exit status 2, never a traceback
(set ``WSVMGUI_DEBUG=1`` to see one for unexpected errors).  Inputs are read as written
(:mod:`wsvmgui.io.tables`), features are standardised by the training rows unless
``--no-standardize``, outputs are checked before any work and written atomically
(:mod:`wsvmgui.io.atomic`), model files cannot run code (:mod:`wsvmgui.io.modelfile`),
and the probabilities are a plain CSV with a JSON sidecar (:mod:`wsvmgui.io.results`).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ._version import __version__
from .app.analysis import engine_notes
from .app.capabilities import tuning_notes
from .app.presets import default_scheme
from .app.schemes import SCHEMES, fit_scheme
from .app.settings import (
    CALIBRATION_CHOICES,
    MAX_DEGREE,
    MAX_JOINT_N,
    MAX_WEIGHTS,
    TIES_CHOICES,
    TUNING_SCORES,
    VALUE_RANGE,
    RunSettings,
)
from .errors import Cancelled, CostLimitError, InputError, SolverError, WSVMError
from .estimators.cost import DEFAULT_MAX_MINUTES, ENV_VAR, cost_limit
from .estimators.report import with_intervals
from .io.atomic import (
    TERMINATING,
    Terminated,
    check_input,
    check_outputs,
    termination_raises,
    write_together,
)
from .io.modelfile import FittedModel, check_rows, load_model, model_to_bytes
from .io.numbers import parse_integer, parse_number
from .io.preprocessing import (
    MISSING_CHOICES,
    PreparedRows,
    check_kernel_scale,
    prepare_rows,
    prepare_training,
)
from .io.results import plain_json, results_files, sidecar_path
from .io.tables import LabelledData, read_data
from .ladder.engines import ENGINES
from .ladder.warmup import compile_notice, warm_up

EXIT_INPUT, EXIT_SOLVER, EXIT_INTERNAL, EXIT_CANCELLED = 2, 3, 1, 130
SEED_MAX = 2**32 - 1


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``wsvmgui: error: <what> (see --help)``, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"wsvmgui: error: {message} (see {self.prog} --help)\n")


def _floats(text: str) -> list[float]:
    items = text.replace(";", ",").split(",")
    if not text.strip():
        raise argparse.ArgumentTypeError("expected at least one number")
    values = []
    for k, item in enumerate(items):
        if not item.strip():
            raise argparse.ArgumentTypeError(
                f"item {k + 1} of {text!r} is empty; expected comma-separated numbers"
            )
        value = parse_number(item)
        if value is None:
            msg = f"{item.strip()!r} in {text!r} is not a number; expected comma-separated numbers"
            raise argparse.ArgumentTypeError(msg)
        values.append(value)
    bad = [v for v in values if not (math.isfinite(v) and v > 0)]
    if bad:
        raise argparse.ArgumentTypeError(f"expected positive finite numbers, got {bad[0]}")
    low, high = VALUE_RANGE
    far = [item.strip() for item, v in zip(items, values, strict=True) if not low <= v <= high]
    if far:
        raise argparse.ArgumentTypeError(
            f"{far[0]} is outside {low:g}..{high:g} (its square would over- or underflow)"
        )
    return values


def _int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = parse_integer(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
        if value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {value}")
        return value

    return parse


def _fraction(text: str) -> float:
    value = parse_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text}")
    return value


def _option(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    if not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        parsed = value
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise argparse.ArgumentTypeError(f"option {key.strip()} must be finite, got {value!r}")
    return key.strip(), parsed


def _tokens(text: str) -> list[str]:
    return [t.strip() for t in text.split(",")]


def _add_data_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--id",
        metavar="COLUMN",
        help="a column carried through to the output as the rows' identity (default: the "
        "row number, 1 = first data row)",
    )
    cmd.add_argument(
        "--na-values",
        type=_tokens,
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


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of minutes, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected minutes >= 0, got {text!r}")
    return value


def _add_cost_option(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--max-minutes",
        type=_minutes,
        metavar="MIN",
        help="refuse a fit estimated to take longer than this, before it starts (default "
        f"{DEFAULT_MAX_MINUTES:g}, or ${ENV_VAR}; 0: no limit)",
    )


def _cost_limit(args: argparse.Namespace):
    """The cost guard's limit of ``--max-minutes`` (absent: the library's default)."""
    if args.max_minutes is None:
        return contextlib.nullcontext()
    return cost_limit(args.max_minutes or None)


def _refusal(exc: CostLimitError) -> str:
    """One line: the estimate, the limit, and the flag that allows the fit."""
    cost, limit = exc.cost, exc.limit or 0.0
    if cost is None:
        return str(exc)
    minutes = cost.seconds / 60.0
    allow = "0" if cost.lower_bound else f"{max(math.ceil(1.5 * minutes), 1)}"
    return (
        f"this fit is estimated to take {cost.describe()}, over the limit of "
        f"{limit:g} min; to run it anyway, pass --max-minutes {allow} (0: no limit)"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = _Parser(
        prog="wsvmgui",
        description="Class probabilities from weighted SVMs. Without a command, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"wsvmgui {__version__}")
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="compile the path engine now (once per machine; scripts/setup.sh does it) and exit",
    )
    parser.add_argument(
        "--install-desktop",
        action="store_true",
        help="add wsvmgui to the desktop's applications menu (a .desktop entry and its icon "
        "under ~/.local/share) and exit",
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    fit = sub.add_parser("fit", help="fit a scheme on a CSV file and write probabilities")
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
    fit.add_argument(
        "--scheme",
        choices=list(SCHEMES),
        help="probability scheme (default: binary for two classes, pairwise for 3 or 4, "
        "bp1 for more)",
    )
    fit.add_argument("--kernel", choices=["rbf", "linear", "poly"])
    fit.add_argument("--degree", type=_int_in(1, MAX_DEGREE), help="polynomial degree")
    fit.add_argument(
        "--engine",
        choices=list(ENGINES),
        help="ladder engine: path (exact weight path; default) or grid (M - 1 weighted fits)",
    )
    fit.add_argument(
        "--weights",
        type=_int_in(2, MAX_WEIGHTS),
        metavar="M",
        help="weight grid m/M, m = 1..M-1 (fitted by the grid engine; the path draws at it)",
    )
    fit.add_argument(
        "--joint-n", type=_int_in(3, MAX_JOINT_N), metavar="N", help="simplex grid spacing 1/N"
    )
    fit.add_argument(
        "--lambda",
        dest="lambdas",
        type=_floats,
        metavar="L1,L2,...",
        help="penalty lambda or a grid to tune over",
    )
    fit.add_argument(
        "--sigma",
        dest="sigmas",
        type=_floats,
        metavar="S1,S2,...",
        help="RBF width sigma or a grid to tune over",
    )
    fit.add_argument("--rule", choices=["count", "extreme"])
    fit.add_argument(
        "--calibration",
        choices=list(CALIBRATION_CHOICES),
        help="monotone recalibration of the ladder's estimate (binary and multiclass ladder "
        "schemes; default none: the papers' rule)",
    )
    fit.add_argument(
        "--ties", choices=list(TIES_CHOICES), help="baseline schemes: how tied classes are resolved"
    )
    fit.add_argument(
        "--tuning-score",
        choices=list(TUNING_SCORES),
        help="what tuning minimises (default egkl; brier and log_loss score the recalibrated "
        "estimate when a calibration is on)",
    )
    fit.add_argument(
        "--one-se",
        action="store_true",
        help="tune to the smoothest cell within one standard error of the best score",
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
        type=_fraction,
        metavar="F",
        help="tune on a stratified split: this share of the training data",
    )
    tune.add_argument(
        "--cv", type=_int_in(2), metavar="K", help="tune by stratified K-fold cross-validation"
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
    fit.add_argument("--seed", type=_int_in(0, SEED_MAX))
    fit.add_argument("--n-jobs", type=_int_in(0), help="worker threads (0: all cores)")
    fit.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the fits on the Dask cluster of this scheduler (e.g. tcp://host:8786; "
        "needs pip install 'wsvmgui[cluster]')",
    )
    fit.add_argument("--solver", choices=["libsvm", "qp"])
    fit.add_argument(
        "--option",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="scheme-specific option, e.g. learner=tree for probing",
    )
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

    pred = sub.add_parser("predict", help="predict with a saved model")
    pred.add_argument("model", help="model file written by fit --model")
    pred.add_argument("data", help="rows to predict (CSV or TSV); the label column is optional")
    _add_data_options(pred)
    pred.add_argument("--out", required=True, help="probabilities CSV to write (and OUT.json)")
    pred.add_argument("--quiet", action="store_true", help="no notes on stderr")

    demo = sub.add_parser(
        "demo", help="fit a simulation design and print accuracy against the truth"
    )
    demo.add_argument("--design", default="wuliu2011_ex1")
    demo.add_argument("--scheme", choices=list(SCHEMES))
    demo.add_argument("--n", type=_int_in(2), help="training size (default: the paper's)")
    demo.add_argument("--n-test", type=_int_in(1), default=5000)
    demo.add_argument("--seed", type=_int_in(0, SEED_MAX - 1_000_003), default=0)
    _add_cost_option(demo)

    sub.add_parser("schemes", help="list the probability schemes")
    gui = sub.add_parser("gui", help="open the desktop app")
    gui.add_argument("file", nargs="?", help="a data table (CSV or TSV) or session to open")
    return parser


class _Progress:
    """Single-line progress on stderr, at most ten updates a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = 0.0

    def __call__(self, done: int, total: int, partial: Any = None) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        sys.stderr.write(f"\rfits {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


@contextlib.contextmanager
def _interrupt_cancels() -> Iterator[threading.Event]:
    """Ctrl-C (SIGINT) and SIGTERM, SIGHUP, SIGQUIT also set an event the fit's worker
    threads check, so they stop with the main thread instead of finishing their queue."""
    cancelled = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield cancelled
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *TERMINATING)}

    def interrupt(signum, frame):
        cancelled.set()
        old = previous[signum]
        if callable(old):
            old(signum, frame)
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)

    ours = {
        sig
        for sig, old in previous.items()
        if old is signal.default_int_handler or (callable(old) and sig != signal.SIGINT)
    }
    for sig in ours:
        signal.signal(sig, interrupt)
    try:
        yield cancelled
    finally:
        for sig in ours:
            signal.signal(sig, previous[sig])


def _note(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        print(f"wsvmgui: {text}", file=sys.stderr)


def _announce(args: argparse.Namespace) -> Callable[[str], None]:
    """Where the path engine's compile notice goes: stderr, unless ``--quiet``."""

    def say(text: str) -> None:
        if not getattr(args, "quiet", False):
            print(f"wsvmgui: {text}\u2026", file=sys.stderr, flush=True)

    return say


def _note_dropped(args: argparse.Namespace, rows: PreparedRows, what: str) -> None:
    if rows.n_dropped:
        _note(args, f"left out {rows.n_dropped} of {rows.n_read} {what} with missing values")


def _read_settings_file(path: str) -> RunSettings:
    check_input(path, "settings")
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"settings file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"cannot read settings file {path}: {exc.strerror or exc}") from None
    try:
        return RunSettings.from_json(text)
    except InputError as exc:
        raise InputError(f"settings file {path}: {_one_line(exc)}") from None


def _settings_from_args(args: argparse.Namespace) -> RunSettings:
    settings = _read_settings_file(args.settings) if args.settings else RunSettings()
    mapping = {
        "scheme": args.scheme,
        "kernel": args.kernel,
        "degree": args.degree,
        "engine": args.engine,
        "n_weights": args.weights,
        "joint_n": args.joint_n,
        "lambdas": args.lambdas,
        "sigmas": args.sigmas,
        "rule": args.rule,
        "tune_fraction": args.tune_fraction,
        "seed": args.seed,
        "n_jobs": args.n_jobs,
        "scheduler": args.scheduler,
        "solver": args.solver,
        "missing": args.missing,
        "calibration": args.calibration,
        "ties": args.ties,
        "tuning_score": args.tuning_score,
    }
    for key, value in mapping.items():
        if value is not None:
            setattr(settings, key, value)
    if args.no_refit:
        settings.refit = False
    if args.one_se:
        settings.tuning_rule = "one_se"
    if args.intervals:
        settings.intervals = True
    if args.no_screen:
        settings.screen = False
    if args.no_standardize:
        settings.standardize = False
    if args.na_values:
        settings.na_values = sorted({*settings.na_values, *(t for g in args.na_values for t in g)})
    if args.tune:
        settings.tuning = "tune-set"
    elif args.cv:
        settings.tuning, settings.cv_folds = "cv", args.cv
    elif args.tune_fraction is not None:
        settings.tuning = "split"
    settings.options = {**settings.options, **dict(args.option)}
    return settings.validate()


def _fitted_summary(estimator) -> dict[str, Any]:
    """Tuned values and fit facts that do not depend on timing (``fitted_summary()``)."""
    out = estimator.fitted_summary()
    if out["tuning"] and "best" in out["tuning"]:
        out["tuning_best"] = out["tuning"]["best"]
    return plain_json(out)


#: Outputs replaced so far by this run (for the message when a signal ends it).
_WRITTEN: list[str] = []


def _write(
    out: str,
    rows: PreparedRows,
    report,
    settings: dict,
    meta: dict,
    model: tuple[str, bytes] | None = None,
) -> None:
    """The model file (if any), the CSV and its sidecar, written together."""
    data: LabelledData = rows.data
    _, files = results_files(
        out,
        report,
        ids=data.row_ids,
        id_name=data.id_name,
        observed=data.y,
        settings=settings,
        meta=meta,
    )
    write_together([model, *files] if model else files, _WRITTEN)


def cmd_fit(args: argparse.Namespace) -> int:
    """``wsvmgui fit``."""
    settings = _settings_from_args(args)
    check_outputs(
        {
            "--out": args.out,
            "sidecar": sidecar_path(args.out),
            "--model": args.model,
            "--report": args.report,
        },
        {
            "training data": args.train,
            "tuning data": args.tune,
            "rows to predict": args.predict,
            "settings file": args.settings,
        },
    )
    read = dict(id_column=args.id, na_values=settings.na_values)
    train_data = read_data(args.train, args.label, args.features, **read)
    pre, train = prepare_training(train_data, settings.missing, settings.standardize)
    names = list(pre.feature_names)
    _note_dropped(args, train, "training rows")
    tune = None
    if args.tune:
        tune_data = read_data(args.tune, args.label, names, na_values=settings.na_values)
        tune = prepare_rows(pre, tune_data, "tuning rows", labels=True)
        _note_dropped(args, tune, "tuning rows")
    new = train
    if args.predict:
        new_data = read_data(args.predict, args.label, names, require_label=False, **read)
        new = prepare_rows(pre, new_data, "rows to predict")
        _note_dropped(args, new, "rows to predict")
    for rows in (train, tune, new):
        if rows is not None:
            check_kernel_scale(
                rows, settings.kernel, settings.degree, settings.coef0, settings.poly_gamma
            )
    settings = _default_scheme(args, settings, train)
    _check_classes(train, settings)
    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    with _cost_limit(args), _interrupt_cancels() as cancelled:
        estimator = fit_scheme(
            settings,
            train.X,
            train.data.y.astype(str),
            None if tune is None else tune.X,
            None if tune is None else tune.data.y.astype(str),
            progress=progress,
            should_cancel=cancelled.is_set,
        )
    for text in engine_notes(estimator.fit_info_) + tuning_notes(estimator.fit_info_):
        _note(args, text)
    kernel = estimator.fit_info_.get("kernel", "")
    if "on the fly" in kernel:
        _note(args, kernel)
    model_meta = {
        "training data": train.summary(),
        "label": args.label,
        "features": names,
        "preprocessing": pre.to_dict(),
        "fitted": _fitted_summary(estimator),
    }
    if tune is not None:
        model_meta["tuning data"] = tune.summary()
    meta = {"command": "fit", **model_meta, "id": args.id}
    meta["predicted rows"] = new.summary() if args.predict else "the training rows"
    model_file = None
    if args.model:
        model = FittedModel(estimator, pre, args.label, settings.to_dict(), plain_json(model_meta))
        model_file = (args.model, model_to_bytes(model, check_rows(train.X, len(names))))
        digest = hashlib.sha256(model_file[1]).hexdigest()
        meta["model"] = {"file": os.path.basename(args.model), "sha256": digest}
    report = estimator.report(new.X)
    if settings.intervals:
        report = with_intervals(report, estimator, new.X)
    _write(args.out, new, report, settings.to_dict(), meta, model_file)
    print(f"wrote {new.data.n} rows of probabilities to {args.out}")
    if args.report:
        from .app.report import write_report

        write_report(args.report, _report_input(args, settings, estimator, train, new, report))
        print(f"wrote the run report to {args.report}")
    return 0


def _report_input(
    args: argparse.Namespace,
    settings: RunSettings,
    estimator: Any,
    train: PreparedRows,
    new: PreparedRows,
    report: Any,
) -> Any:
    """What ``fit --report`` shows: measures of the model and of three baselines fitted
    on the training rows, on the predicted rows when they are labelled, else in-sample on
    the training rows (and said so)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier

    from .app.measures import aligned_proba
    from .app.report import ReportInput
    from .app.tuning_view import tuning_notes, tuning_surfaces
    from .estimators.report import ProbabilityReport
    from .evaluation.metrics import label_metrics

    y_train = np.asarray(train.data.y).astype(str)
    classes = np.unique(y_train)
    labelled = args.predict and new.data.y is not None and not any(v is None for v in new.data.y)
    target, part = (new, "predicted rows") if labelled else (train, "training rows, in-sample")
    y = np.asarray(target.data.y).astype(str)
    ok = np.isin(y, classes)
    p_model = aligned_proba(report if target is new else estimator.report(train.X), classes)
    measures = {f"{settings.scheme} ({part})": label_metrics(p_model[ok], y[ok], classes)}
    for name, model in (
        ("logistic regression", LogisticRegression(max_iter=2000)),
        ("k nearest neighbours (k=15)", KNeighborsClassifier(n_neighbors=min(15, len(y_train)))),
    ):
        model.fit(train.X, y_train)
        rep = ProbabilityReport.from_proba(model.classes_, model.predict_proba(target.X))
        measures[f"{name} ({part})"] = label_metrics(
            aligned_proba(rep, classes)[ok], y[ok], classes
        )
    surfaces = tuning_surfaces(estimator)
    data = {
        "name": os.path.basename(args.train),
        "sha256": train.data.sha256,
        "n": int(train.X.shape[0]),
        "rows_dropped": int(train.n_read - train.data.n),
        "missing": settings.missing,
        "label": args.label,
        "id": args.id,
        "classes": classes.tolist(),
        "features": list(train.data.feature_names),
    }
    return ReportInput(
        data,
        settings.to_dict(),
        settings.scheme,
        measures,
        p_model[ok],
        y[ok],
        classes,
        surfaces,
        notes=tuning_notes(surfaces),
        made_by=f"wsvmgui {__version__} (command line: fit)",
    )


def _setting(settings: dict, key: str, default: float) -> Any:
    value = settings.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return value if ok else default


def _default_scheme(
    args: argparse.Namespace, settings: RunSettings, train: PreparedRows
) -> RunSettings:
    """Without --scheme (or a settings file) the scheme follows the number of classes, as
    in the app (:func:`wsvmgui.app.presets.default_scheme`), and a note says which."""
    if args.scheme is not None or args.settings:
        return settings
    k = int(np.unique(np.asarray(train.data.y).astype(str)).size)
    scheme = default_scheme(k)
    if scheme == settings.scheme:
        return settings
    _note(args, f"{k} classes: scheme {scheme} (the default for {k} classes; --scheme chooses)")
    return replace(settings, scheme=scheme).validate()


#: A class needs this many training rows for a multiclass scheme to fit it.
MIN_CLASS_ROWS = 2


def _check_classes(train: PreparedRows, settings: RunSettings) -> None:
    """Refuse classes with fewer than two rows (a continuous label, most often)."""
    labels = train.data.y.astype(str)
    classes, counts = np.unique(labels, return_counts=True)
    small = classes[counts < MIN_CLASS_ROWS]
    if classes.size <= 2 or small.size == 0:
        return
    label = train.data.label
    if small.size > classes.size / 2:
        raise InputError(
            f"{train.data.source}: label {label!r} has {classes.size} distinct values in "
            f"{labels.size} rows ({small.size} with one row each): it looks continuous, not "
            f"a class label; choose a label column of classes"
        )
    raise InputError(
        f"{train.data.source}: class {str(small[0])!r} of label {label!r} has "
        f"{int(counts[counts < MIN_CLASS_ROWS][0])} row; every class needs at least "
        f"{MIN_CLASS_ROWS} rows for scheme {settings.scheme!r} (and {small.size} classes "
        "are that small)"
    )


def cmd_predict(args: argparse.Namespace) -> int:
    """``wsvmgui predict``."""
    check_outputs(
        {"--out": args.out, "sidecar": sidecar_path(args.out)},
        {"model file": args.model, "rows to predict": args.data},
    )
    model = load_model(args.model)
    if args.missing is not None and args.missing != model.preprocessing.missing:
        if args.missing == "impute" and model.preprocessing.medians is None:
            raise InputError(
                f"{args.model} holds no training medians (it was fitted with --missing "
                f"{model.preprocessing.missing}); refit with --missing impute to impute"
            )
        pre = replace(model.preprocessing, missing=args.missing)
        model = replace(model, preprocessing=pre)
    na_values = sorted(
        {*model.settings.get("na_values", []), *(t for g in args.na_values for t in g)}
    )
    data = read_data(
        args.data,
        model.label,
        list(model.feature_names),
        id_column=args.id,
        na_values=na_values,
        require_label=False,
    )
    rows = model.prepare(data)
    st = model.settings
    check_kernel_scale(
        rows, str(st.get("kernel", "rbf")), _setting(st, "degree", 3),
        _setting(st, "coef0", 1.0), _setting(st, "poly_gamma", 1.0),
    )  # fmt: skip
    report = model.report(rows.X)
    _note_dropped(args, rows, "rows to predict")
    meta = {
        "command": "predict",
        "model": {"file": os.path.basename(args.model), **model.meta},
        "predicted rows": rows.summary(),
        "id": args.id,
    }
    _write(args.out, rows, report, model.settings, meta)
    print(f"wrote {rows.data.n} rows of probabilities to {args.out}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``wsvmgui demo``: fit a simulation design and print accuracy against the truth."""
    from .evaluation.designs import get_design
    from .evaluation.metrics import truth_metrics

    design = get_design(args.design)
    n = args.n or design.default_n
    train = design.sample(n, seed=args.seed)
    test = design.sample(args.n_test, seed=args.seed + 1_000_003)
    settings = RunSettings(seed=args.seed)
    if args.scheme:
        settings.scheme = args.scheme
    elif design.n_classes > 2:
        multi = [s.name for s in SCHEMES.values() if s.multiclass and s.availability()[0]]
        if not multi:
            raise InputError(
                f"design {design.name} has {design.n_classes} classes and no "
                "multiclass scheme is available"
            )
        settings.scheme = multi[0]
    print(f"design   {design.name}: {design.source} ({design.description})")
    print(f"data     n = {n} training points, {args.n_test} test points, K = {design.n_classes}")
    start = time.perf_counter()
    progress = _Progress(enabled=sys.stderr.isatty())
    with _cost_limit(args):
        est = fit_scheme(settings, train.X, train.y, progress=progress)
    seconds = time.perf_counter() - start
    p_hat = est.predict_proba(test.X)
    print(f"scheme   {settings.scheme}; fitted in {seconds:.2f} s")
    for text in engine_notes(est.fit_info_) + tuning_notes(est.fit_info_):
        print(f"note     {text}")
    fitted = est.fitted_summary()
    chosen = [f"{k} = {fitted[k]:.4g}" for k in ("lambda", "sigma") if fitted[k] is not None]
    if fitted["n_weights"] is not None:
        chosen.append(f"M = {fitted['n_weights']}")
    if chosen:
        print(f"tuned    {', '.join(chosen)}")
    metrics = truth_metrics(p_hat, test.p)
    err = float(np.mean(est.classes_[p_hat.argmax(1)] != test.y))
    bayes = float(np.mean(test.classes[test.p.argmax(1)] != test.y))
    print("accuracy against the true probabilities on the test set:")
    for key, value in metrics.items():
        print(f"  {key:5s} {value:.4f}")
    print(f"  error {err:.4f}  (Bayes error {bayes:.4f})")
    return 0


def cmd_schemes(args: argparse.Namespace) -> int:
    """``wsvmgui schemes``: list the schemes and whether each is available."""
    for scheme in SCHEMES.values():
        ok, why = scheme.availability()
        kind = "K classes" if scheme.multiclass else "2 classes"
        status = "" if ok else f"  [unavailable: {why}]"
        print(f"{scheme.name:16s} {kind:10s} {scheme.description}{status}")
        if scheme.tuning:
            print(f"{'':27s} tunes: {scheme.tuning}")
    return 0


def cmd_setup(args: argparse.Namespace) -> int:
    """``wsvmgui --install-desktop`` and ``wsvmgui --warm-up`` (after installing)."""
    if args.command is not None:
        raise InputError(f"--warm-up and --install-desktop take no command ({args.command})")
    if args.install_desktop:
        from .io.desktop import install_desktop

        for path in install_desktop():
            print(f"wrote {path}")
    if args.warm_up:
        with compile_notice(lambda text: print(text + "\u2026", flush=True)):
            from .joint import _active_set_kernel  # noqa: F401  (the joint fit's kernels)

            result = warm_up()
        print(result.describe())
    return 0


COMMANDS = {"fit": cmd_fit, "predict": cmd_predict, "demo": cmd_demo, "schemes": cmd_schemes}


def main(argv: list[str] | None = None, open_app: Callable[[str | None], int] | None = None) -> int:
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    open_app : callable, optional
        ``open_app(file)`` opens the desktop app, with ``file`` (a path or None) loaded,
        for ``wsvmgui gui [FILE]`` and no command; given by the entry point, which is the
        only place that knows the app (the command line is Qt-free).
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error
        return int(exc.code) if isinstance(exc.code, int) else EXIT_INPUT
    _WRITTEN.clear()
    hook = sys.unraisablehook
    sys.unraisablehook = _quiet_unraisable
    try:
        if args.warm_up or args.install_desktop:
            return cmd_setup(args)
        if args.command in (None, "gui"):
            if open_app is None:
                raise InputError("the desktop app opens from the wsvmgui command")
            return open_app(getattr(args, "file", None))
        fits = args.command in ("fit", "predict", "demo")
        notice = compile_notice(_announce(args)) if fits else contextlib.nullcontext()
        with termination_raises(), notice:
            return COMMANDS[args.command](args)
    except CostLimitError as exc:
        print(f"wsvmgui: error: {_refusal(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except (InputError, SolverError) as exc:
        print(f"wsvmgui: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT if isinstance(exc, InputError) else EXIT_SOLVER
    except Cancelled:
        print(f"wsvmgui: cancelled; {_what_was_written()}", file=sys.stderr)
        return EXIT_CANCELLED
    except KeyboardInterrupt:
        print(f"\nwsvmgui: interrupted (SIGINT); {_what_was_written()}", file=sys.stderr)
        return EXIT_CANCELLED
    except Terminated as exc:
        name = signal.Signals(exc.signum).name
        print(f"wsvmgui: stopped by {name}; {_what_was_written()}", file=sys.stderr)
        return 128 + exc.signum
    except WSVMError as exc:
        print(f"wsvmgui: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except MemoryError as exc:
        print(
            f"wsvmgui: error: not enough memory for this run ({_one_line(exc) or 'MemoryError'}); "
            f"use fewer weights, rows or grid values; {_what_was_written()}",
            file=sys.stderr,
        )
        return EXIT_INPUT
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"wsvmgui: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as exc:
        if os.environ.get("WSVMGUI_DEBUG"):
            raise
        print(
            f"wsvmgui: internal error: {type(exc).__name__}: {_one_line(exc)} "
            "(set WSVMGUI_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        gc.collect()  # third-party destructors run now, while they are kept quiet
        sys.unraisablehook = hook


def _quiet_unraisable(unraisable: Any) -> None:
    """Errors in third-party destructors (a Dask client that never connected) after the
    run has said what went wrong: kept off stderr unless WSVMGUI_DEBUG is set."""
    if os.environ.get("WSVMGUI_DEBUG"):
        sys.__unraisablehook__(unraisable)


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(exc).split())


def _what_was_written() -> str:
    """What this run replaced: nothing, or the outputs written completely."""
    if not _WRITTEN:
        return "nothing was written (existing outputs are unchanged)"
    return f"{' and '.join(_WRITTEN)} had been written completely"
