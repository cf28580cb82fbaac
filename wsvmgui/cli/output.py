"""The files a run writes, together and atomically, and what was written when a run
is stopped part-way."""

from __future__ import annotations

from typing import Any

from ..io.atomic import write_together
from ..io.preprocessing import PreparedRows
from ..io.results import results_files
from ..io.tables import LabelledData

#: Outputs replaced so far by this run (for the message when a signal ends it).
WRITTEN: list[str] = []


def write(
    out: str,
    rows: PreparedRows,
    report: Any,
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
    write_together([model, *files] if model else files, WRITTEN)


def what_was_written() -> str:
    """What this run replaced: nothing, or the outputs written completely."""
    if not WRITTEN:
        return "nothing was written (existing outputs are unchanged)"
    return f"{' and '.join(WRITTEN)} had been written completely"
