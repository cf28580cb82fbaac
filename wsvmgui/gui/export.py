"""Writing what the app shows: probability tables, plots and settings (atomic writes).

The main window asks for the path (its save dialog confirms before overwriting) and then
calls these functions; tests call them directly.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsView, QWidget

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
    """Provenance of a run for the CSV's sidecar."""
    ds = result.split.dataset
    est = result.estimator
    meta: dict[str, Any] = {
        "data": ds.name,
        "data_sha256": ds.digest(),
        "label": ds.label_name,
        "id": ds.id_name if ds.ids is not None else None,
        "features": list(ds.feature_names),
        "missing": ds.missing,
        "rows_dropped": int(ds.n_dropped),
        "standardised": bool(np.any(result.split.scale != 1) or np.any(result.split.mean != 0)),
        "seconds": round(float(result.seconds), 3),
        "metrics": result.metrics,
    }
    fitted = est.fitted_summary()
    meta.update({k: fitted[k] for k in ("lambda", "sigma") if fitted[k] is not None})
    return meta


def export_probabilities(path: str | os.PathLike, result: Any, rows: str = "test") -> int:
    """Write the probabilities of ``rows`` as CSV with settings and provenance; returns rows.

    Each row is named as the command line names it: by the id column when the data have
    one, else by its 1-based row number in the input (1 = the first data row after the
    header, as the sidecar says); ``observed`` is its label.
    """
    from ..io.results import write_probabilities_csv

    report, index, split = probability_rows(result, rows)
    ds = result.split.dataset
    write_probabilities_csv(
        path,
        report,
        result.settings,
        run_meta(result),
        ds.row_ids[index],
        split,
        id_name=ds.id_name if ds.ids is not None else "row",
        observed=np.asarray(ds.y)[index],
    )
    return int(index.size)


def export_table(path: str | os.PathLike, result: Any) -> int:
    """The input table with the probability columns appended (every row of the input,
    ids and all columns as written; rows left out for missing values get empty cells).

    Returns the number of rows written.
    """
    from ..io.atomic import write_together
    from ..io.results import table_files, table_with_probabilities

    ds = result.split.dataset
    report, index, split = probability_rows(result, "all")
    columns, descriptions = table_with_probabilities(
        ds.input_columns(), report, ds.input_rows()[index], split
    )
    _, files = table_files(path, columns, descriptions, result.settings.to_dict(), run_meta(result))
    write_together(files)
    return len(next(iter(columns.values())))


#: Screen dots per inch assumed for a scale of 1 (the PNG records scale times this).
SCREEN_DPI = 96.0


def widget_image(widget: QWidget, scale: float = 1.0) -> QImage:
    """A widget rendered at ``scale`` times its size on screen, recording ``scale * 96``
    dpi.  A plot (a pyqtgraph ``GraphicsLayoutWidget``) is drawn again at that resolution:
    fonts, lines and points are sharp, not enlarged pixels; scale 1 is the screen's
    picture."""
    if not (np.isfinite(scale) and 0.25 <= scale <= 8):
        raise InputError(f"the PNG scale must lie between 0.25 and 8, got {scale}")
    if scale == 1.0 or not isinstance(widget, QGraphicsView):
        image = widget.grab().toImage()
        if scale != 1.0:
            image = image.scaled(
                round(image.width() * scale),
                round(image.height() * scale),
                Qt.AspectRatioMode.IgnoreAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
    else:
        # the scene drawn as on a screen of ``scale`` device pixels per pixel: every
        # item (legends and labels that ignore transformations too) at that resolution
        view = widget.viewport().rect()
        source = widget.mapToScene(view).boundingRect()
        image = QImage(
            round(view.width() * scale),
            round(view.height() * scale),
            QImage.Format.Format_ARGB32_Premultiplied,
        )
        image.setDevicePixelRatio(scale)
        image.fill(Qt.GlobalColor.white)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        widget.scene().render(painter, QRectF(0, 0, view.width(), view.height()), source)
        painter.end()
        image.setDevicePixelRatio(1.0)
    dots = round(scale * SCREEN_DPI / 0.0254)
    image.setDotsPerMeterX(dots)
    image.setDotsPerMeterY(dots)
    return image


def widget_png_bytes(widget: QWidget, scale: float = 1.0) -> bytes:
    """PNG bytes of a widget as it looks now, at ``scale`` times its screen size."""
    image = widget_image(widget, scale)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise InputError("could not render the plot as PNG")
    buf.close()
    return bytes(data.data())


def export_png(path: str | os.PathLike, widget: QWidget, scale: float = 1.0) -> None:
    """Save a widget as PNG at ``scale`` times its screen size, atomically."""
    atomic_write_bytes(path, widget_png_bytes(widget, scale))


def svg_bytes(widget: QWidget) -> bytes:
    """SVG of a plot widget (a pyqtgraph ``GraphicsView``): see :mod:`wsvmgui.gui.svg`."""
    from .svg import render_svg

    if not hasattr(widget, "scene") or not hasattr(widget, "viewport"):
        raise InputError("only plots can be saved as SVG")
    return render_svg(widget)


def export_svg(path: str | os.PathLike, widget: QWidget) -> None:
    """Save a widget as SVG, atomically."""
    atomic_write_bytes(path, svg_bytes(widget))


def export_plot(path: str | os.PathLike, widget: QWidget, scale: float = 1.0) -> None:
    """PNG (at ``scale`` times the screen size) or SVG of a widget, by the file's suffix."""
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix == ".svg":
        export_svg(path, widget)
    elif suffix == ".png":
        export_png(path, widget, scale)
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


def report_input(result: Any, baselines: Any = None, figures: list | None = None) -> Any:
    """What the app's run report shows (:class:`wsvmgui.app.report.ReportInput`): the
    measures of every part, the non-crossing comparison and the baselines, the test rows'
    calibration (the training rows' without a test part), and ``figures`` ((title, SVG))."""
    from ..app.measures import aligned_proba
    from ..app.report import ReportInput

    ds = result.split.dataset
    measures = {part: dict(v) for part, v in result.metrics.items() if part != "tune"}
    for part, values in result.comparison_metrics.items():
        if part != "tune":
            measures[f"non-crossing ({part})"] = dict(values)
    if baselines is not None:
        for name, values in baselines.metrics.items():
            measures[f"{name} ({baselines.part})"] = dict(values)
    rows = result.split.test if result.split.test.size else result.split.train
    proba = aligned_proba(result.report, ds.classes)[rows.index]
    data = {
        "name": ds.name,
        "sha256": ds.digest(),
        "n": int(ds.X.shape[0]),
        "rows_dropped": int(ds.n_dropped),
        "missing": ds.missing,
        "label": ds.label_name,
        "id": ds.id_name if ds.ids is not None else None,
        "classes": [str(c) for c in ds.classes],
        "features": list(ds.feature_names),
    }
    return ReportInput(
        data,
        result.settings.to_dict(),
        result.settings.scheme,
        measures,
        proba,
        np.asarray(rows.y),
        np.asarray(ds.classes),
        list(result.tunings),
        list(figures or []),
        list(result.notes),
        "wsvmgui desktop app",
    )


def export_report(
    path: str | os.PathLike,
    result: Any,
    baselines: Any,
    views: list,
    prepare: Any = None,
) -> None:
    """The run report (:mod:`wsvmgui.app.report`) with ``views`` ((title, view)) as SVG;
    ``prepare(view)``, when given, makes a view ready to be drawn (shown, laid out)."""
    from ..app.report import write_report

    figures = []
    for title, view in views:
        if prepare is not None:
            prepare(view)
        try:
            svg = svg_bytes(view.export_item()).decode("utf-8")
        except InputError:
            continue  # not a plot
        figures.append((title, svg))
    write_report(path, report_input(result, baselines, figures))
