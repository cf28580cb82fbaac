"""Writing what the app shows: probability tables, plots and settings (atomic writes).

The main window asks for the path (its save dialog confirms before overwriting) and then
calls these functions; tests call them directly.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtWidgets import QWidget

from ..app.settings import RunSettings
from ..errors import InputError
from ..estimators.report import ProbabilityReport
from ..io.atomic import atomic_write_bytes, atomic_write_text

ROW_CHOICES = ("test", "train", "tune", "all")


def probability_rows(
    result: Any, rows: str = "test"
) -> tuple[ProbabilityReport, np.ndarray, np.ndarray]:
    """The report of a finished run restricted to one part (or every row).

    Returns
    -------
    report : ProbabilityReport
    index : ndarray of int, shape (m,)
        Data set rows (0-based).
    split : ndarray of str, shape (m,)
    """
    if rows not in ROW_CHOICES:
        raise InputError(f"rows must be one of {', '.join(ROW_CHOICES)}, got {rows!r}")
    parts = result.split.part_of_rows()
    index = np.arange(parts.size) if rows == "all" else np.flatnonzero(parts == rows)
    if index.size == 0:
        raise InputError(f"the {rows} part is empty; choose other rows")
    rep = result.report
    sub = ProbabilityReport(
        rep.classes,
        rep.proba[index],
        rep.label[index],
        {k: np.asarray(v)[index] for k, v in rep.extra.items()},
    )
    return sub, index, parts[index]


def run_meta(result: Any) -> dict[str, Any]:
    """Provenance of a run for the CSV header."""
    ds = result.split.dataset
    est = result.estimator
    meta: dict[str, Any] = {
        "data": ds.name,
        "features": list(ds.feature_names),
        "standardised": bool(np.any(result.split.scale != 1) or np.any(result.split.mean != 0)),
        "seconds": round(float(result.seconds), 3),
        "metrics": result.metrics,
    }
    fitted = est.fitted_summary()
    meta.update({k: fitted[k] for k in ("lambda", "sigma") if fitted[k] is not None})
    return meta


def export_probabilities(path: str | os.PathLike, result: Any, rows: str = "test") -> int:
    """Write the probabilities of ``rows`` as CSV with settings and provenance; returns rows."""
    from ..io.results import write_probabilities_csv

    report, index, split = probability_rows(result, rows)
    write_probabilities_csv(path, report, result.settings, run_meta(result), index, split)
    return int(index.size)


def widget_png_bytes(widget: QWidget) -> bytes:
    """PNG bytes of a widget as it looks now."""
    image = widget.grab().toImage()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise InputError("could not render the plot as PNG")
    buf.close()
    return bytes(data.data())


def export_png(path: str | os.PathLike, widget: QWidget) -> None:
    """Save a widget as PNG, atomically."""
    atomic_write_bytes(path, widget_png_bytes(widget))


def svg_bytes(widget: QWidget) -> bytes:
    """SVG of a plot widget (a pyqtgraph ``GraphicsView``): see :mod:`wsvmgui.gui.svg`."""
    from .svg import render_svg

    if not hasattr(widget, "scene") or not hasattr(widget, "viewport"):
        raise InputError("only plots can be saved as SVG")
    return render_svg(widget)


def export_svg(path: str | os.PathLike, widget: QWidget) -> None:
    """Save a widget as SVG, atomically."""
    atomic_write_bytes(path, svg_bytes(widget))


def export_plot(path: str | os.PathLike, widget: QWidget) -> None:
    """PNG or SVG of a widget, by the file's suffix."""
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix == ".svg":
        export_svg(path, widget)
    elif suffix == ".png":
        export_png(path, widget)
    else:
        raise InputError(f"plots are saved as .png or .svg, not {suffix or 'no suffix'!r}")


def save_settings(path: str | os.PathLike, settings: RunSettings) -> None:
    atomic_write_text(path, settings.to_json() + "\n")


def load_settings(path: str | os.PathLike) -> RunSettings:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    return RunSettings.from_json(text)
