"""Scoring a new table with a model file's model (no Qt): probabilities to CSV."""

from __future__ import annotations

import os

import numpy as np

from ..io.modelfile import FittedModel
from ..io.results import write_results


def score_table(model: FittedModel, source: str, out: str) -> str:
    """Probabilities of a table's rows from ``model``, written to ``out``; a summary line.

    The table needs the model's feature columns; its label column, when present, is
    written beside the probabilities and scored.  Rows are named as in the app's export:
    by the id column the model was fitted with (``model.meta["id"]``) when the table has
    it, else by their 1-based row numbers.
    """
    from ..io.tables import labelled_data, read_table
    from .calibration import proper_scores

    table = read_table(source)
    label = model.label if model.label in table.columns else None
    id_column = model.meta.get("id") if isinstance(model.meta, dict) else None
    data = labelled_data(
        table,
        label,
        list(model.feature_names),
        id_column=id_column if id_column in table.columns else None,
        require_label=False,
    )
    rows, report = model.predict(data)
    write_results(
        out,
        report,
        ids=rows.data.row_ids,
        id_name=rows.data.id_name,
        observed=rows.data.y,
        settings=model.settings,
        meta={"scored": rows.summary(), "model_meta": model.meta},
    )
    text = f"Scored {rows.data.n} rows of {os.path.basename(source)} into {out}"
    if rows.n_dropped:
        text += f" ({rows.n_dropped} rows with missing values left out)"
    y = rows.data.y
    if y is not None and not any(v is None for v in y):
        classes = np.asarray(report.classes).astype(str)
        known = np.isin(np.asarray(y).astype(str), classes)
        if known.all():
            scores = proper_scores(report.proba, np.asarray(y).astype(str), classes)
            text += (
                f"; against its labels: error {scores['error']:.3f}, "
                f"log loss {scores['log_loss']:.3f}"
            )
    return text + "."
