"""``wsvmgui fit``'s run settings: a settings file, the options over it, the default
scheme for the number of classes, and the classes a scheme can fit."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..app.presets import default_scheme
from ..app.schemes import is_pair_scheme, pair_tuning_decides
from ..app.settings import RunSettings
from ..errors import InputError
from ..io.atomic import check_input
from ..io.preprocessing import PreparedRows
from .console import note, one_line

#: A class needs this many training rows for a multiclass scheme to fit it.
MIN_CLASS_ROWS = 2

#: RunSettings field <- option dest, for the options that set a field as they are.
_FIELDS = {
    "scheme": "scheme",
    "kernel": "kernel",
    "degree": "degree",
    "engine": "engine",
    "n_weights": "weights",
    "joint_n": "joint_n",
    "lambdas": "lambdas",
    "sigmas": "sigmas",
    "rule": "rule",
    "tune_fraction": "tune_fraction",
    "seed": "seed",
    "n_jobs": "n_jobs",
    "scheduler": "scheduler",
    "solver": "solver",
    "missing": "missing",
    "calibration": "calibration",
    "ties": "ties",
    "tuning_score": "tuning_score",
    "tuning_rule": "tuning_rule",
    "tuning_extend": "tuning_extend",
    "pair_tuning": "pair_tuning",
}


def read_settings_file(path: str) -> RunSettings:
    """The settings of a saved settings JSON file (``--settings``)."""
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
        raise InputError(f"settings file {path}: {one_line(exc)}") from None


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    """The run settings of ``wsvmgui fit``: the settings file (or the defaults) with
    every option given on the command line over it, validated."""
    settings = read_settings_file(args.settings) if args.settings else RunSettings()
    for key, dest in _FIELDS.items():
        value = getattr(args, dest)
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


def with_default_scheme(
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
    note(args, f"{k} classes: scheme {scheme} (the default for {k} classes; --scheme chooses)")
    return replace(settings, scheme=scheme).validate()


def pair_tuning_note(settings: RunSettings, train: PreparedRows) -> str | None:
    """What to say when ``--pair-tuning`` (or the settings file's) changes nothing: the
    scheme or the classes are not a pair scheme's on 3+, or the tuning mode and the grids
    are all given (:func:`wsvmgui.app.schemes.pair_tuning_decides`); None otherwise."""
    if settings.pair_tuning is None:
        return None
    k = int(np.unique(np.asarray(train.data.y).astype(str)).size)
    if pair_tuning_decides(settings, k):
        return None
    head = f"pair tuning {settings.pair_tuning!r} changes nothing"
    if not is_pair_scheme(settings.scheme) or k < 3:
        return (
            f"{head}: it applies to the pair schemes (pairwise, baseline1/2, bp1/2) on 3+ "
            f"classes, not scheme {settings.scheme} on {k}"
        )
    return f"{head}: the tuning mode (--cv, --tune-fraction or --tune) and the grids are given"


def check_classes(train: PreparedRows, settings: RunSettings) -> None:
    """Refuse classes with fewer than two rows (a continuous label, most often)."""
    labels = train.data.labels()
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
