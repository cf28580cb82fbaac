"""The command line: ``wsvmgui fit``, ``predict``, ``demo`` and ``schemes``.

Bad input gets one clear line on stderr and a non-zero exit status, never a traceback
(set ``WSVMGUI_DEBUG=1`` to see one for unexpected errors).  Output files are written
atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import joblib
import numpy as np

from ._version import __version__
from .app.schemes import SCHEMES, fit_scheme
from .app.settings import RunSettings
from .errors import Cancelled, InputError, SolverError, WSVMError
from .io.atomic import atomic_write_text, atomic_writer
from .io.tables import read_table, select_xy, write_probabilities_csv

EXIT_INPUT, EXIT_SOLVER, EXIT_INTERNAL, EXIT_CANCELLED = 2, 3, 1, 130
MODEL_KIND = "wsvmgui-model"


def _floats(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        msg = f"expected comma-separated numbers, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


def _option(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed: Any = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = argparse.ArgumentParser(
        prog="wsvmgui",
        description="Class probabilities from weighted SVMs. Without a command, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"wsvmgui {__version__}")
    sub = parser.add_subparsers(dest="command")

    fit = sub.add_parser("fit", help="fit a scheme on a CSV file and write probabilities")
    fit.add_argument("train", help="training data (CSV or TSV)")
    fit.add_argument("--label", required=True, help="label column")
    fit.add_argument("--features", nargs="+", help="feature columns (default: all but the label)")
    fit.add_argument("--settings", help="start from a saved settings JSON file")
    fit.add_argument("--scheme", choices=list(SCHEMES), help="probability scheme (default binary)")
    fit.add_argument("--kernel", choices=["rbf", "linear", "poly"])
    fit.add_argument("--degree", type=int, help="polynomial degree")
    fit.add_argument("--weights", type=int, metavar="M", help="weight grid m/M, m = 1..M-1")
    fit.add_argument("--joint-n", type=int, metavar="N", help="simplex grid spacing 1/N")
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
    tune = fit.add_mutually_exclusive_group()
    tune.add_argument("--tune", metavar="TUNE.csv", help="tuning set with the same columns")
    tune.add_argument(
        "--tune-fraction",
        type=float,
        metavar="F",
        help="tune on a stratified split: this share of the training data",
    )
    tune.add_argument(
        "--cv", type=int, metavar="K", help="tune by stratified K-fold cross-validation"
    )
    fit.add_argument(
        "--no-refit",
        action="store_true",
        help="keep the training-only fit instead of refitting on train + tune",
    )
    fit.add_argument("--seed", type=int)
    fit.add_argument("--n-jobs", type=int, help="worker threads (0: all cores)")
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
    fit.add_argument("--out", required=True, help="probabilities CSV to write")
    fit.add_argument("--model", help="also save the fitted model here")
    fit.add_argument("--quiet", action="store_true", help="no progress on stderr")

    pred = sub.add_parser("predict", help="predict with a saved model")
    pred.add_argument("model", help="model file written by fit --model")
    pred.add_argument("data", help="rows to predict (CSV or TSV)")
    pred.add_argument("--out", required=True, help="probabilities CSV to write")

    demo = sub.add_parser(
        "demo", help="fit a simulation design and print accuracy against the truth"
    )
    demo.add_argument("--design", default="wuliu2011_ex1")
    demo.add_argument("--scheme", choices=list(SCHEMES))
    demo.add_argument("--n", type=int, help="training size (default: the paper's)")
    demo.add_argument("--n-test", type=int, default=5000)
    demo.add_argument("--seed", type=int, default=0)

    sub.add_parser("schemes", help="list the probability schemes")
    sub.add_parser("gui", help="open the desktop app")
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


def _settings_from_args(args: argparse.Namespace) -> RunSettings:
    if args.settings:
        try:
            settings = RunSettings.from_json(Path(args.settings).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"cannot read settings file {args.settings}: {exc.strerror}") from None
    else:
        settings = RunSettings()
    mapping = {
        "scheme": args.scheme,
        "kernel": args.kernel,
        "degree": args.degree,
        "n_weights": args.weights,
        "joint_n": args.joint_n,
        "lambdas": args.lambdas,
        "sigmas": args.sigmas,
        "rule": args.rule,
        "tune_fraction": args.tune_fraction,
        "seed": args.seed,
        "n_jobs": args.n_jobs,
        "solver": args.solver,
    }
    for key, value in mapping.items():
        if value is not None:
            setattr(settings, key, value)
    if args.no_refit:
        settings.refit = False
    if args.tune:
        settings.tuning = "tune-set"
    elif args.cv:
        settings.tuning, settings.cv_folds = "cv", args.cv
    elif args.tune_fraction is not None:
        settings.tuning = "split"
    settings.options = {**settings.options, **dict(args.option)}
    return settings.validate()


def _check_output(path: str) -> None:
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        raise InputError(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise InputError(f"cannot write {path}: folder {folder} is not writable")
    if Path(path).is_dir():
        raise InputError(f"cannot write {path}: it is a folder")


def _load_rows(path: str, features: list[str]) -> np.ndarray:
    frame = read_table(path)
    missing = [c for c in features if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: feature column {missing[0]!r} is missing")
    # The label column is optional in rows to predict: pass a dummy label.
    frame = frame.assign(__label__=0)
    X, _, _ = select_xy(frame, "__label__", features)
    return X


def _write_outputs(out: str, estimator, X: np.ndarray, settings: RunSettings, meta: dict) -> None:
    report = estimator.report(X)
    write_probabilities_csv(out, report, settings, meta, index=np.arange(1, X.shape[0] + 1))
    atomic_write_text(
        str(out) + ".json",
        json.dumps({"settings": settings.to_dict(), "meta": meta}, indent=2, default=str),
    )


def _fit_meta(estimator, args, feature_names) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "wsvmgui_version": __version__,
        "train": str(Path(args.train).resolve()),
        "label": args.label,
        "features": feature_names,
        "classes": [str(c) for c in estimator.classes_],
    }
    for attr in ("lambda_", "sigma_", "fit_info_"):
        if hasattr(estimator, attr):
            meta[attr.rstrip("_")] = getattr(estimator, attr)
    tuning = getattr(estimator, "tuning_", None)
    if hasattr(tuning, "best_lambda"):
        meta["tuning_best"] = {"lambda": tuning.best_lambda, "sigma": tuning.best_sigma}
    return meta


def cmd_fit(args: argparse.Namespace) -> int:
    """``wsvmgui fit``."""
    settings = _settings_from_args(args)
    _check_output(args.out)
    if args.model:
        _check_output(args.model)
    frame = read_table(args.train)
    X, y, names = select_xy(frame, args.label, args.features)
    X_tune = y_tune = None
    if args.tune:
        X_tune, y_tune, _ = select_xy(read_table(args.tune), args.label, names)
    X_new = _load_rows(args.predict, names) if args.predict else X
    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    estimator = fit_scheme(settings, X, y, X_tune, y_tune, progress=progress)
    meta = _fit_meta(estimator, args, names)
    meta["predicted_rows"] = str(Path(args.predict).resolve()) if args.predict else "train"
    if args.model:
        model = {
            "kind": MODEL_KIND,
            "version": __version__,
            "estimator": estimator,
            "settings": settings.to_dict(),
            "features": names,
            "label": args.label,
        }
        with atomic_writer(args.model, "wb") as handle:
            joblib.dump(model, handle)
    _write_outputs(args.out, estimator, X_new, settings, meta)
    print(f"wrote {X_new.shape[0]} rows of probabilities to {args.out}")
    return 0


def load_model(path: str) -> dict[str, Any]:
    """Load a model file written by ``wsvmgui fit --model``."""
    if not Path(path).is_file():
        raise InputError(f"model file not found: {path}")
    try:
        model = joblib.load(path)
    except Exception as exc:  # joblib raises many types for foreign files
        raise InputError(f"{path} is not a wsvmgui model file ({type(exc).__name__})") from None
    if not isinstance(model, dict) or model.get("kind") != MODEL_KIND:
        raise InputError(f"{path} is not a wsvmgui model file")
    return model


def cmd_predict(args: argparse.Namespace) -> int:
    """``wsvmgui predict``."""
    _check_output(args.out)
    model = load_model(args.model)
    X = _load_rows(args.data, model["features"])
    settings = RunSettings.from_dict(model["settings"])
    meta = {
        "model": str(Path(args.model).resolve()),
        "data": str(Path(args.data).resolve()),
        "features": model["features"],
        "wsvmgui_version": __version__,
    }
    _write_outputs(args.out, model["estimator"], X, settings, meta)
    print(f"wrote {X.shape[0]} rows of probabilities to {args.out}")
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
    est = fit_scheme(settings, train.X, train.y, progress=progress)
    seconds = time.perf_counter() - start
    p_hat = est.predict_proba(test.X)
    print(f"scheme   {settings.scheme}; fitted in {seconds:.2f} s")
    if hasattr(est, "lambda_"):
        print(
            f"tuned    lambda = {est.lambda_:.4g}, sigma = {est.sigma_:.4g}, "
            f"M = {len(est.weights_) + 1}"
        )
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
    return 0


COMMANDS = {"fit": cmd_fit, "predict": cmd_predict, "demo": cmd_demo, "schemes": cmd_schemes}


def main(argv: list[str] | None = None, open_app: Callable[[], int] | None = None) -> int:
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    open_app : callable, optional
        Opens the desktop app for ``wsvmgui gui`` (and no command); given by the entry
        point, which is the only place that knows the app (the command line is Qt-free).
    """
    args = build_parser().parse_args(argv)
    try:
        if args.command in (None, "gui"):
            if open_app is None:
                raise InputError("the desktop app opens from the wsvmgui command")
            return open_app()
        return COMMANDS[args.command](args)
    except (InputError, SolverError) as exc:
        print(f"wsvmgui: error: {exc}", file=sys.stderr)
        return EXIT_INPUT if isinstance(exc, InputError) else EXIT_SOLVER
    except Cancelled:
        print("wsvmgui: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
    except KeyboardInterrupt:
        print("\nwsvmgui: interrupted", file=sys.stderr)
        return EXIT_CANCELLED
    except WSVMError as exc:
        print(f"wsvmgui: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as exc:
        print(f"wsvmgui: error: {exc.strerror or exc}: {exc.filename or ''}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as exc:
        if os.environ.get("WSVMGUI_DEBUG"):
            raise
        print(
            f"wsvmgui: internal error: {type(exc).__name__}: {exc} "
            "(set WSVMGUI_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
