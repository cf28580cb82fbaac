"""``wsvmgui fit``: read and prepare the rows, fit the scheme, write the probabilities
(and the model file and run report when asked)."""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from typing import Any

from ..app.capabilities import fit_notes
from ..app.schemes import fit_scheme
from ..estimators.report import with_intervals
from ..io.atomic import check_outputs
from ..io.modelfile import FittedModel, check_rows, model_to_bytes
from ..io.preprocessing import check_kernel_scale, prepare_rows, prepare_training
from ..io.results import plain_json, sidecar_path
from ..io.tables import read_data
from .console import Progress, interrupt_cancels, note, note_dropped
from .fit_settings import check_classes, pair_tuning_note, settings_from_args, with_default_scheme
from .limits import run_cost_limit
from .output import write


def cmd_fit(args: argparse.Namespace) -> int:
    """``wsvmgui fit``."""
    settings = settings_from_args(args)
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
    note_dropped(args, train, "training rows")
    tune = None
    if args.tune:
        tune_data = read_data(args.tune, args.label, names, na_values=settings.na_values)
        tune = prepare_rows(pre, tune_data, "tuning rows", labels=True)
        note_dropped(args, tune, "tuning rows")
    new = train
    if args.predict:
        new_data = read_data(args.predict, args.label, names, require_label=False, **read)
        new = prepare_rows(pre, new_data, "rows to predict")
        note_dropped(args, new, "rows to predict")
    for rows in (train, tune, new):
        if rows is not None:
            check_kernel_scale(
                rows, settings.kernel, settings.degree, settings.coef0, settings.poly_gamma
            )
    settings = with_default_scheme(args, settings, train)
    check_classes(train, settings)
    unused = pair_tuning_note(settings, train)
    if unused:
        note(args, unused)
    progress = Progress(enabled=not args.quiet and sys.stderr.isatty())
    with run_cost_limit(args), interrupt_cancels() as cancelled:
        estimator = fit_scheme(
            settings,
            train.X,
            train.data.labels(),
            None if tune is None else tune.X,
            None if tune is None else tune.data.labels(),
            progress=progress,
            should_cancel=cancelled.is_set,
        )
    for text in fit_notes(estimator.fit_info_):
        note(args, text)
    kernel = estimator.fit_info_.get("kernel", "")
    if "on the fly" in kernel:
        note(args, kernel)
    model_meta = {
        "training data": train.summary(),
        "label": args.label,
        "features": names,
        "preprocessing": pre.to_dict(),
        "fitted": fitted_summary(estimator),
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
    write(args.out, new, report, settings.to_dict(), meta, model_file)
    print(f"wrote {new.data.n} rows of probabilities to {args.out}")
    if args.report:
        from ..app.report import write_report
        from .report import report_input

        write_report(args.report, report_input(args, settings, estimator, train, new, report))
        print(f"wrote the run report to {args.report}")
    return 0


def fitted_summary(estimator: Any) -> dict[str, Any]:
    """Tuned values and fit facts that do not depend on timing (``fitted_summary()``)."""
    out = estimator.fitted_summary()
    if out["tuning"] and "best" in out["tuning"]:
        out["tuning_best"] = out["tuning"]["best"]
    return plain_json(out)
