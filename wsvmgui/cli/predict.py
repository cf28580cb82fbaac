"""``wsvmgui predict``: probabilities of new rows from a saved model file."""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import replace
from typing import Any

from ..errors import InputError
from ..io.atomic import check_outputs
from ..io.modelfile import FittedModel, load_model
from ..io.preprocessing import check_kernel_scale
from ..io.results import sidecar_path
from ..io.tables import read_data
from .console import note_dropped
from .output import write


def cmd_predict(args: argparse.Namespace) -> int:
    """``wsvmgui predict``."""
    check_outputs(
        {"--out": args.out, "sidecar": sidecar_path(args.out)},
        {"model file": args.model, "rows to predict": args.data},
    )
    model = _with_missing(load_model(args.model), args)
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
    note_dropped(args, rows, "rows to predict")
    meta = {
        "command": "predict",
        "model": {"file": os.path.basename(args.model), **model.meta},
        "predicted rows": rows.summary(),
        "id": args.id,
    }
    write(args.out, rows, report, model.settings, meta)
    print(f"wrote {rows.data.n} rows of probabilities to {args.out}")
    return 0


def _with_missing(model: FittedModel, args: argparse.Namespace) -> FittedModel:
    """The model with ``--missing`` over the rule it was fitted with (imputing needs the
    training medians the model file holds only when it was fitted imputing)."""
    if args.missing is None or args.missing == model.preprocessing.missing:
        return model
    if args.missing == "impute" and model.preprocessing.medians is None:
        raise InputError(
            f"{args.model} holds no training medians (it was fitted with --missing "
            f"{model.preprocessing.missing}); refit with --missing impute to impute"
        )
    return replace(model, preprocessing=replace(model.preprocessing, missing=args.missing))


def _setting(settings: dict, key: str, default: float) -> Any:
    """A finite number of the model's settings, or ``default``."""
    value = settings.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return value if ok else default
