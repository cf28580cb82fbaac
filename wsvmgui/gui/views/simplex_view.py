"""Simplex and ladder view of the selected point.

Left: for the joint simplex scheme with K = 3, the triangle of class weights, every grid
weight coloured by the class predicted there for the selected point, the estimated border
weight and the partition lines it implies.  Right: the selected point's sign ladder in
each binary sub-problem (one row for a binary ladder): the sign of f_pi at every weight and
the bracket of the probability.  Everything there lies on the pi axis of the ladder's own
fits: the signs, the bracket, the estimate (diamond) and, below, the zeros of f_pi(x).  A
fit with a recalibration reports ``g(p)`` for the ladder's own ``p``; that calibrated
estimate is a separate mark (a blue triangle), not a point where a sign changes.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from ...app.view_data import RunResult
from .common import (
    PHAT,
    add_title,
    class_brushes,
    class_qcolor,
    compact_name,
    configure_plot,
    fit_legend,
    fixed_lines,
    keep_legend_fitted,
    legend_line,
    legend_sample,
)

SQRT3_2 = np.sqrt(3.0) / 2.0
VERTICES = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, SQRT3_2]])
POSITIVE = pg.mkBrush(30, 150, 60, 230)
NEGATIVE = pg.mkBrush(200, 60, 50, 230)
BRACKET_PEN = pg.mkPen(255, 165, 0, 150, width=14)
#: The calibrated (reported) estimate beside the ladder's own: a blue triangle.
CALIBRATED_SYMBOL = "t1"
CALIBRATED_BRUSH = pg.mkBrush(30, 110, 230)
#: How far above its ladder's row the calibrated estimate sits (rows are 1 apart).
CALIBRATED_LIFT = 0.3
#: Colours of the f_pi(x) curves, one per sub-problem (at most six drawn).
CURVE_COLORS = [
    (20, 20, 20),
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (148, 103, 189),
    (255, 127, 14),
]
#: Widest left axis of the ladder plot (sub-problem names), in pixels, in a narrow view;
#: a wide one gives the names a fifth of its width, up to twice this.
MAX_NAME_WIDTH = 150


def to_triangle(weights: np.ndarray) -> np.ndarray:
    """Barycentric weights (m, 3) to plane coordinates (m, 2)."""
    return np.asarray(weights, dtype=float) @ VERTICES


def partition_segments(border: np.ndarray) -> np.ndarray:
    """Lines {pi_j p_j = pi_k p_k} implied by a border weight, from it to the triangle's edges.

    With ``p_k`` proportional to ``1 / border_k``, the line between classes j and k meets
    the edge ``pi_l = 0`` at ``pi_j = p_k / (p_j + p_k)``.

    Parameters
    ----------
    border : ndarray, shape (3,)

    Returns
    -------
    ndarray, shape (3, 2, 3)
        Three segments in barycentric coordinates.
    """
    border = np.asarray(border, dtype=float)
    p = (1.0 / border) / np.sum(1.0 / border)
    segs = []
    for j, k, l_ in ((0, 1, 2), (0, 2, 1), (1, 2, 0)):
        end = np.zeros(3)
        end[j] = p[k] / (p[j] + p[k])
        end[k] = p[j] / (p[j] + p[k])
        end[l_] = 0.0
        segs.append([border, end])
    return np.asarray(segs)


class SimplexView(QWidget):
    """Triangle of class weights (joint scheme, K = 3) and sign ladders of the selected point."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.ci.setContentsMargins(4, 12, 4, 4)  # room for overhanging end labels
        self.graphics.setMinimumSize(200, 200)
        self.info = QLabel("Select a point in any view to see its ladders.")
        fixed_lines(self.info, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.info)

        self._build_triangle()
        self._build_ladders()
        self._build_curves()
        self.legend = pg.LegendItem(labelTextColor=(30, 30, 30), colCount=1)
        keep_legend_fitted(self.graphics, self.legend)
        self.graphics.ci.addItem(self.legend, row=2, col=0, rowspan=1, colspan=2)
        self._legend_key: tuple | None = None
        self._curve_names: list[str] = []
        self._ladder_ticks: list[str] = []  # the sub-problem names on the ladder axis
        self._path_kinds: tuple[str, ...] = ()  # per shown ladder: "", "stored", "traced"
        self._recalibrated = False  # some ladder reports a recalibrated estimate
        self._has_ladders = False  # the result has binary ladders to draw
        self._names_fitted_to = MAX_NAME_WIDTH  # the name room the axis was fitted to
        self._dirty = False
        self._shown: list[pg.PlotItem] = []
        self._layout(False, True)

        self._result: RunResult | None = None
        self._row = -1

    def _build_triangle(self) -> None:
        """The simplex of class weights (K = 3): grid, partition, the point's border."""
        self.tri = pg.PlotItem()
        self.tri_title = add_title(self.tri, "class weights \u03c0 on the simplex")
        self.tri.setAspectLocked(True)
        self.tri.hideAxis("left")
        self.tri.hideAxis("bottom")
        self.tri.setMenuEnabled(False)
        self.tri.hideButtons()
        self.tri.setMinimumSize(120, 120)
        outline = np.vstack([VERTICES, VERTICES[:1]])
        self.outline = pg.PlotDataItem(outline[:, 0], outline[:, 1], pen=pg.mkPen(60, 60, 60))
        self.tri.addItem(self.outline)
        self.grid_points = pg.ScatterPlotItem(size=7, pen=None)
        self.tri.addItem(self.grid_points)
        self.partition = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(0, 0, 0, width=2))
        self.tri.addItem(self.partition)
        self.border_mark = pg.ScatterPlotItem(
            size=18, symbol="star", pen=pg.mkPen("k"), brush=pg.mkBrush(255, 215, 0)
        )
        self.tri.addItem(self.border_mark)
        self.vertex_labels = []
        for (x, y), anchor in zip(VERTICES, ((0.5, 0), (0.5, 0), (0.5, 1)), strict=True):
            text = pg.TextItem("", color=(30, 30, 30), anchor=anchor)
            text.setPos(x, y - 0.04 if y == 0 else y + 0.02)
            self.tri.addItem(text)
            self.vertex_labels.append(text)
        self.tri_note = pg.TextItem("", color=(90, 90, 90), anchor=(0.5, 0.5))
        self.tri_note.setPos(0.5, 0.35)
        self.tri.addItem(self.tri_note)
        self.tri.setXRange(-0.12, 1.12, padding=0)
        self.tri.setYRange(-0.14, 1.0, padding=0)

    def _build_ladders(self) -> None:
        """The sign ladder of the selected point, one row per sub-problem."""
        self.lad = pg.PlotItem()
        configure_plot(self.lad)
        self.lad_title = add_title(self.lad, "sign ladder of the selected point")
        self.lad_title.setToolTip(
            "One row per binary sub-problem: 'b|a,b' is the ladder of class b against class "
            "a (it estimates P(b | a or b)), 'j|rest' class j against all others; green where "
            "f\u03c0(x) > 0.  Long names drop the prefix all class labels share."
        )
        # The left axis carries the sub-problem names, painted without the cache (its
        # width changes with the names).
        left = self.lad.getAxis("left")
        left.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        self.lad.setLabel("bottom", "weight \u03c0")
        self.lad.setXRange(0, 1)
        self.lad.setLimits(xMin=-0.05, xMax=1.05)
        self.brackets = pg.PlotDataItem(connect="pairs", pen=BRACKET_PEN)
        self.lad.addItem(self.brackets)
        self.signs = pg.ScatterPlotItem(size=10, pen=None)
        self.lad.addItem(self.signs)
        self.estimates = pg.ScatterPlotItem(
            size=14, symbol="d", pen=pg.mkPen("k"), brush=pg.mkBrush(255, 255, 255)
        )
        self.lad.addItem(self.estimates)
        self.calibrated = _calibrated_marks()
        self.lad.addItem(self.calibrated)
        # Why the plots are empty, for a scheme without binary ladders (Probing, the
        # joint scheme with K != 3): before, two blank plots and a legend of their marks.
        self.lad_note = pg.TextItem("", color=(90, 90, 90), anchor=(0.5, 0.5))
        self.lad_note.setPos(0.5, 0.0)
        self.lad.addItem(self.lad_note)

    def _build_curves(self) -> None:
        """f_pi(x) of the selected point: the values behind the signs."""
        self.curve_plot = pg.PlotItem()
        configure_plot(self.curve_plot)
        self.curve_title = add_title(self.curve_plot, "f\u03c0(x) of the selected point")
        self.curve_plot.setLabel("bottom", "weight \u03c0")
        self.curve_plot.setLabel("left", "f\u03c0(x)")
        self.curve_plot.setXLink(self.lad)
        self.curve_plot.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.NoCache)
        # values as they are: an SI scale read "f\u03c0(x) (x0.001)" over ticks of 300
        self.curve_plot.getAxis("left").enableAutoSIPrefix(False)
        self.zero_line = pg.InfiniteLine(
            pos=0, angle=0, pen=pg.mkPen(120, 120, 120, style=Qt.PenStyle.DashLine)
        )
        self.curve_plot.addItem(self.zero_line)
        self.curves: list[pg.PlotDataItem] = []
        self.curve_marks = pg.ScatterPlotItem(
            size=14, symbol="d", pen=pg.mkPen("k"), brush=pg.mkBrush(255, 255, 255)
        )
        self.curve_marks.setZValue(5)
        self.curve_plot.addItem(self.curve_marks)
        self.curve_calibrated = _calibrated_marks()
        self.curve_plot.addItem(self.curve_calibrated)
        # values of the grid's own fits, drawn on a ladder's exact path traced after them
        self.fit_dots = pg.ScatterPlotItem(
            size=5, symbol="o", pen=None, brush=pg.mkBrush(20, 20, 20)
        )
        self.fit_dots.setZValue(2)
        self.curve_plot.addItem(self.fit_dots)
        self.zero_marks = pg.ScatterPlotItem(
            size=12, symbol="x", pen=None, brush=pg.mkBrush(200, 30, 30)
        )
        self.zero_marks.setZValue(6)
        self.curve_plot.addItem(self.zero_marks)

    def _layout(self, triangle: bool, ladders: bool) -> None:
        """Show the triangle and/or the ladders, side by side when both have content."""
        wanted = [p for p, on in ((self.tri, triangle), (self.lad, ladders or not triangle)) if on]
        if wanted == self._shown:
            return
        for plot in self._shown:
            self.graphics.ci.removeItem(plot)
            if plot is self.lad:
                self.graphics.ci.removeItem(self.curve_plot)
        for col, plot in enumerate(wanted):
            if plot is self.lad:
                self.graphics.ci.addItem(plot, row=0, col=col)
                self.graphics.ci.addItem(self.curve_plot, row=1, col=col)
            else:
                self.graphics.ci.addItem(plot, row=0, col=col, rowspan=2)
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)
        self._shown = wanted
        self._build_legend(triangle, None)

    def _build_legend(self, triangle: bool, classes) -> None:
        key = (
            triangle,
            None if classes is None else tuple(str(c) for c in classes),
            tuple(self._curve_names),
            self._path_kinds,
            self._recalibrated,
            self._has_ladders,
        )
        if key == self._legend_key:
            return
        self._legend_key = key
        self.legend.clear()
        if triangle and classes is not None:
            for k, c in enumerate(classes):
                self.legend.addItem(
                    legend_sample("o", pg.mkBrush(class_qcolor(k, 3)), pg.mkPen(None)),
                    f"grid weight predicts {c}",
                )
            self.legend.addItem(self.border_mark, "border weight")
        if self.lad in self._shown and self._has_ladders:
            self.legend.addItem(legend_sample("s", POSITIVE, pg.mkPen(None)), "fπ(x) > 0")
            self.legend.addItem(legend_sample("s", NEGATIVE, pg.mkPen(None)), "fπ(x) ≤ 0")
            self.legend.addItem(legend_line(BRACKET_PEN), "bracket")
            if self._recalibrated:
                self.legend.addItem(self.estimates, f"ladder's own {PHAT} (before calibration)")
                self.legend.addItem(self.calibrated, f"calibrated {PHAT} (reported)")
            else:
                self.legend.addItem(self.estimates, f"estimate {PHAT}")
            kinds = self._path_kinds
            for i, (name, color) in enumerate(zip(self._curve_names, CURVE_COLORS, strict=False)):
                label = f"f\u03c0(x), {name}" if len(self._curve_names) > 1 else "f\u03c0(x)"
                exact = i < len(kinds) and kinds[i] != ""
                label += " (exact path)" if exact else " at the fitted weights"
                self.legend.addItem(legend_line(pg.mkPen(*color, width=2)), label)
            if "traced" in kinds:
                self.legend.addItem(
                    legend_sample("o", pg.mkBrush(20, 20, 20), pg.mkPen(None), 6),
                    "the grid's fits",
                )
            if any(kinds):
                self.legend.addItem(
                    legend_sample("x", pg.mkBrush(200, 30, 30), pg.mkPen(None), 10), "zeros"
                )
        fit_legend(self.legend, self.graphics.viewport().width())

    def set_result(self, result) -> None:
        self._result = result
        ds = result.split.dataset
        K = ds.n_classes
        for text, c in zip(self.vertex_labels, list(ds.classes[:3]) + [""] * 3, strict=False):
            text.setText(f"\u03c0 of {c}" if K == 3 else "")
        triangle = result.simplex is not None and result.simplex.grid.shape[1] == 3
        self._curve_names = [lad.description for lad in result.ladders][: len(CURVE_COLORS)]
        paths = list(result.paths)
        self._path_kinds = tuple(
            "" if info is None else info.source for info in paths[: len(self._curve_names)]
        )
        self._recalibrated = any(lad.calibrated is not None for lad in result.ladders)
        self._has_ladders = bool(result.ladders)
        self._layout(triangle, bool(result.ladders))
        self._build_legend(triangle, ds.classes if triangle else None)
        self._fit_ladder_axis(result.ladders)
        self._draw()

    def clear(self) -> None:
        self._result = None
        self._layout(False, True)
        self._draw()

    def _fit_ladder_axis(self, ladders) -> None:
        """Left axis as wide as the longest sub-problem name (at most :meth:`name_width`)."""
        from PySide6.QtGui import QFontMetrics

        axis = self.lad.getAxis("left")
        metrics = QFontMetrics(axis.style.get("tickFont") or self.font())
        names = [self._elide(lad.description, "  (crossing)") for lad in ladders] or ["0.0"]
        width = max(metrics.horizontalAdvance(n) for n in names) + 14
        self._names_fitted_to = self.name_width()
        axis.setWidth(int(min(width, self._names_fitted_to)))
        self.curve_plot.getAxis("left").setWidth(int(min(width, self._names_fitted_to)))

    def name_width(self) -> int:
        """Room for the sub-problem names: MAX_NAME_WIDTH, or a fifth of a wide view (at
        1600 pixels "versicolor|setosa,versicolor" whole, not "versicolor|setosa,ve...")."""
        return int(min(max(MAX_NAME_WIDTH, 0.2 * self.width()), 2 * MAX_NAME_WIDTH))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._result is not None and self.name_width() != self._names_fitted_to:
            self._fit_ladder_axis(self._result.ladders)
            self._draw()

    def set_selection(self, row: int) -> None:
        self._row = row
        self._draw()

    def showEvent(self, ev) -> None:  # noqa: N802 - Qt override
        super().showEvent(ev)
        if self._dirty:
            self._draw()

    def ensure_drawn(self) -> None:
        """Draw now what a hidden view put off."""
        if self._dirty:
            self._dirty = False
            self._draw_now()

    def _draw(self) -> None:
        # Put off while hidden: a selection made in another view must not cost this
        # view's drawing on the GUI thread.
        if not self.isVisible():
            self._dirty = True
            return
        self._dirty = False
        self._draw_now()

    def _draw_now(self) -> None:
        res = self._result
        row = self._row
        valid = res is not None and 0 <= row < res.split.dataset.X.shape[0]
        self._draw_triangle(res if valid else None, row)
        self._draw_ladders(res if valid else None, row)
        if res is None:
            self.info.setText("Run an analysis, then select a point in any view.")
        elif not valid:
            self.info.setText("Select a point (click it in the Boundaries or Probabilities view).")
        else:
            ds = res.split.dataset
            p = res.report.proba[row]
            probs = ", ".join(f"{PHAT}({c}) = {v:.3f}" for c, v in zip(ds.classes, p, strict=True))
            truth = ""
            if ds.p_true is not None:
                truth = "; true " + ", ".join(f"{v:.3f}" for v in ds.p_true[row])
            self.info.setText(f"row {row} (label {ds.y[row]}): {probs}{truth}")

    def _draw_triangle(self, res, row: int) -> None:
        simplex = None if res is None else res.simplex
        if simplex is None or simplex.grid.shape[1] != 3:
            self.grid_points.setData([], [])
            self.partition.setData([], [])
            self.border_mark.setData([], [])
            if res is None:
                note = ""
            elif simplex is None:
                note = "the triangle shows the joint\nsimplex scheme (K = 3)"
            else:
                note = "the triangle needs K = 3"
            self.tri_note.setText(note)
            return
        self.tri_note.setText("")
        xy = to_triangle(simplex.grid)
        pred = simplex.predictions[row]
        self.grid_points.setData(x=xy[:, 0], y=xy[:, 1], brush=class_brushes(pred, 3, 200))
        if simplex.border is not None and np.all(np.isfinite(simplex.border[row])):
            b = simplex.border[row]
            bxy = to_triangle(b[None, :])[0]
            self.border_mark.setData(x=[bxy[0]], y=[bxy[1]])
            segs = to_triangle(partition_segments(b).reshape(-1, 3))
            self.partition.setData(segs[:, 0], segs[:, 1], connect="pairs")
        else:
            self.border_mark.setData([], [])
            self.partition.setData([], [])

    def _draw_ladders(self, res, row: int) -> None:
        ladders = [] if res is None else res.ladders
        if not ladders:
            self._draw_curves([], row)
            self.signs.setData([], [])
            self.brackets.setData([], [])
            self.estimates.setData([], [])
            self.calibrated.setData([], [])
            self.lad.getAxis("left").setTicks([[]])
            self._ladder_ticks = []
            self.lad_note.setText(no_ladder_note(res))
            self.lad.setYRange(-1, 1)
            return
        self.lad_note.setText("")
        xs, ys, brushes, bx, by, ex, ey, ticks = [], [], [], [], [], [], [], []
        cx, cy = [], []
        for r, lad in enumerate(ladders):
            y = -r
            s = lad.signs[row]
            xs.append(lad.weights)
            ys.append(np.full(lad.weights.size, y, dtype=float))
            brushes += [POSITIVE if v else NEGATIVE for v in s]
            bx += [lad.lo[row], lad.hi[row]]
            by += [y, y]
            ex.append(0.5 * (lad.lo[row] + lad.hi[row]))
            ey.append(y)
            if lad.calibrated is not None:  # just above the row: the diamond stays visible
                cx.append(float(lad.calibrated[row]))
                cy.append(y + CALIBRATED_LIFT)
            mono = "" if bool(np.all(s[:-1] >= s[1:])) else " (crossing)"
            ticks.append((y, self._elide(lad.description, mono)))
        self._draw_curves(ladders, row)
        self.signs.setData(x=np.concatenate(xs), y=np.concatenate(ys), brush=brushes, symbol="s")
        self.brackets.setData(np.asarray(bx, float), np.asarray(by, float), connect="pairs")
        self.estimates.setData(x=ex, y=ey)
        self.calibrated.setData(x=cx, y=cy)
        self.lad.getAxis("left").setTicks([ticks])
        self._ladder_ticks = [label for _, label in ticks]
        self.lad.setYRange(-len(ladders) + 0.5, 0.5)

    def _draw_curves(self, ladders, row: int) -> None:
        """f_pi(x) of the selected point, one curve per sub-problem: the exact path where
        the ladder has one (piecewise linear, knots at its breakpoints, zeros marked),
        otherwise straight between the fitted weights; diamonds at the estimates."""
        from ...app.path_view import zeros_of

        res = self._result
        shown = [lad for lad in ladders if lad.values is not None][: len(CURVE_COLORS)]
        if res is None:
            shown = []
        paths = list(res.paths) if res is not None and shown else []
        while len(self.curves) < len(shown):
            curve = pg.PlotDataItem()
            self.curve_plot.addItem(curve)
            self.curves.append(curve)
        x_row = res.split.X_all[row : row + 1] if res is not None else np.empty((0, 0))
        marks, values, zeros, dots_x, dots_y, breaks = [], [], [], [], [], []
        calibrated = []
        for i, lad in enumerate(shown):
            curve, color = self.curves[i], CURVE_COLORS[i]
            info = paths[i] if i < len(paths) else None
            if info is not None:
                f = info.curves(x_row)[0]
                curve.setData(info.pis, f, pen=pg.mkPen(*color, width=1.5), symbol=None)
                zeros.append(zeros_of(info.pis, f))
                breaks.append(info.n_breakpoints)
                values.append(f)
                if info.source == "traced":  # the grid's own fits on the exact curve
                    dots_x.append(lad.weights)
                    dots_y.append(lad.values[row])
            else:
                curve.setData(
                    lad.weights,
                    lad.values[row],
                    pen=pg.mkPen(*color, width=2),
                    symbol="o",
                    symbolSize=5,
                    symbolBrush=pg.mkBrush(*color),
                    symbolPen=pg.mkPen(*color),
                )
            values.append(lad.values[row])
            curve.setVisible(True)
            marks.append(0.5 * (lad.lo[row] + lad.hi[row]))
            if lad.calibrated is not None:
                calibrated.append(float(lad.calibrated[row]))
        for curve in self.curves[len(shown) :]:
            curve.setData([], [])
            curve.setVisible(False)
        self.curve_marks.setData(x=marks, y=np.zeros(len(marks)))
        self.curve_calibrated.setData(x=calibrated, y=np.zeros(len(calibrated)))
        z = np.concatenate(zeros) if zeros else np.empty(0)
        self.zero_marks.setData(x=z, y=np.zeros(z.size))
        if dots_x:
            self.fit_dots.setData(x=np.concatenate(dots_x), y=np.concatenate(dots_y))
        else:
            self.fit_dots.setData([], [])
        if len(breaks) == 1 and len(shown) == 1:
            title = (
                f"f\u03c0(x) of the selected point: exact path, {breaks[0]} breakpoints, "
                f"{z.size} zero(s)"
            )
        elif breaks:
            title = f"f\u03c0(x) of the selected point: exact paths of {len(breaks)} ladders"
        else:
            title = "f\u03c0(x) of the selected point"
        self.curve_title.setText(title)
        if values:
            top = float(np.max(np.abs(np.concatenate(values)))) or 1.0
            self.curve_plot.setYRange(-1.1 * top, 1.1 * top, padding=0)

    def _elide(self, text: str, suffix: str = "") -> str:
        """``text`` within the name axis: without the class labels' shared prefix when too
        wide (``class_2|class_1,class_2`` -> ``2|1,2``), then cut at the end, ``suffix``
        (the " (crossing)" flag) kept whole: a cut name lost the flag before."""
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QFontMetrics

        axis = self.lad.getAxis("left")
        metrics = QFontMetrics(axis.style.get("tickFont") or self.font())
        limit = self.name_width() - 14
        if metrics.horizontalAdvance(text + suffix) > limit and self._result is not None:
            text = compact_name(text, self._result.split.dataset.classes)
        room = max(limit - metrics.horizontalAdvance(suffix), limit // 3)
        return metrics.elidedText(text, Qt.TextElideMode.ElideRight, room) + suffix

    def ladder_names(self) -> list[str]:
        """The sub-problem names on the ladder plot's axis, as shown (for tests)."""
        return list(self._ladder_ticks)

    def ladder_arrays(self) -> dict[str, np.ndarray]:
        """Arrays the ladder items hold (for tests)."""
        self.ensure_drawn()
        x, y = self.brackets.getData()
        return {
            "sign_x": np.asarray(self.signs.data["x"]),
            "bracket_x": np.asarray(x if x is not None else []),
            "grid_x": np.asarray(self.grid_points.data["x"]),
            "estimate_x": np.asarray(self.estimates.data["x"]),
            "calibrated_x": np.asarray(self.calibrated.data["x"]),
            "zeros_x": np.asarray(self.zero_marks.data["x"]),
        }

    def legend_labels(self) -> list[str]:
        """The legend's entries (for tests)."""
        return [label.text for _sample, label in self.legend.items]

    def add_baselines(self, baselines) -> None:
        """Nothing to add: the baselines are measured in the results and calibration views."""

    def export_item(self) -> QWidget:
        return self.graphics


def no_ladder_note(result) -> str:
    """Why the ladder plots of ``result`` are empty ("" without a result)."""
    if result is None:
        return ""
    from ...app.schemes import SCHEMES

    scheme = SCHEMES.get(result.settings.scheme)
    name = scheme.label if scheme is not None else result.settings.scheme
    return (
        f"{name} keeps no sign ladder of this point:\nthese plots show the binary ladders "
        "of weighted SVMs\nthat a scheme keeps (the binary and non-crossing ladders,\n"
        "the pairwise, baseline and one-vs-all sub-problems)"
    )


def _calibrated_marks() -> pg.ScatterPlotItem:
    """Marks of the calibrated (reported) estimate, distinct from the ladder's diamonds."""
    marks = pg.ScatterPlotItem(
        size=13, symbol=CALIBRATED_SYMBOL, pen=pg.mkPen("k"), brush=CALIBRATED_BRUSH
    )
    marks.setZValue(6)
    return marks
