"""Boundaries view: the data in a plane, every fitted boundary {f_pi = 0}, p_hat behind.

One or two panels (the run's estimator, and the non-crossing fit beside a binary ladder
when the user asks for the comparison), a colour bar for the weight pi of each boundary,
one for the p_hat surface, and a legend of the marks.  With more than two features the
plane is a slice through a reference point (by default the selected point) whose other
feature values are shown and editable beside the plot; points far from the slice are
faded.  Plot items are created once; new results, planes and live fits only replace their
data.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ...app.contours import segments_to_xy
from ...app.datasets import Dataset, DataSplit
from ...app.plane import surface_stops
from ...app.slices import closeness, describe_cut, describe_reference
from ...app.view_data import BoundaryLayer, LiveBoundary, PlaneData, RunResult
from .boundary_parts import (
    CROSS_IN,
    CROSS_OUT,
    HULL_PEN,
    PI_STEPS,
    RING_PEN,
    BoundaryPanel,
    SlicePanel,
)
from .common import (
    PART_NAMES,
    PART_SYMBOLS,
    PHAT,
    PHAT_PLAIN,
    PI_COLORMAP,
    SELECT_PEN,
    TitleItem,
    class_entry,
    class_index,
    class_qcolor,
    faded_brushes,
    fit_legend,
    fixed_lines,
    keep_legend_fitted,
    legend_line,
    legend_sample,
    phat,
    set_bar_title,
    show_bar,
)

#: Titles of the weight colour bar, with boundaries in the plane and without.
PI_BAR = "weight \u03c0 of a boundary"
PI_BAR_NONE = "weight \u03c0 (no boundary in this plane)"
#: What the surface is under a chosen sub-problem: the app computes the K-class estimate
#: on the plane, not each sub-problem's (whose own p-hat the ladder plots show).
SURFACE_NOTE = (
    "The surface is the whole {K}-class estimate's largest " + PHAT_PLAIN + ", whichever "
    "sub-problem is chosen."
)


class BoundaryView(QWidget):
    """Boundaries of every fitted weight over the data, with plane and sub-problem choice.

    Signals
    -------
    plane_requested(ix, iy)
        The user picked another pair of features, or another slice, while a result is
        shown (the slice's reference point is :meth:`reference`).
    point_clicked(row)
    pi_requested(pi)
        The boundary at weight ``pi`` is wanted (a result with an exact path is shown).
    """

    plane_requested = Signal(int, int)
    point_clicked = Signal(int)
    pi_requested = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        controls = self._build_controls()
        self._build_pi_row()
        self._build_plots()
        self._right_shown = False
        self._slice_shown = False
        self.slice_panel = SlicePanel()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.graphics)
        self.splitter.addWidget(self.slice_panel)
        self.splitter.setStretchFactor(0, 4)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.slice_panel.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(controls)
        layout.addWidget(self._pi_row)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.info)

        self._dataset: Dataset | None = None
        self._split: DataSplit | None = None
        self._parts = np.empty(0, dtype=str)  # part name of each data row
        self._plane: PlaneData | None = None
        self._has_result = False
        self._result: RunResult | None = None
        self._row = -1
        self._updating = False
        self._reference = np.empty(0)
        self._legend_key: tuple | None = None
        self.x_combo.currentIndexChanged.connect(self._plane_changed)
        self.y_combo.currentIndexChanged.connect(self._plane_changed)
        self.sub_combo.currentIndexChanged.connect(self._draw_layers)
        self.sub_combo.currentIndexChanged.connect(self._sub_changed)
        self.surface_box.toggled.connect(self._toggle_surface)
        self.slice_panel.edited.connect(self._reference_edited)
        self.pi_slider.valueChanged.connect(self._pi_moved)
        self.pi_box.toggled.connect(self._pi_toggled)
        for panel in (self.left, self.right):
            panel.points.sigClicked.connect(self._clicked)

    def _build_controls(self) -> QHBoxLayout:
        """The feature and sub-problem choices and the surface switch (one row)."""
        self.x_combo = QComboBox()
        self.x_combo.setToolTip("Feature on the horizontal axis")
        self.y_combo = QComboBox()
        self.y_combo.setToolTip("Feature on the vertical axis")
        for combo in (self.x_combo, self.y_combo):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(8)
        self.sub_combo = QComboBox()
        self.sub_combo.setToolTip("Binary sub-problem whose boundaries are drawn")
        self.sub_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.sub_combo.setMinimumContentsLength(8)
        self.surface_box = QCheckBox(f"{PHAT_PLAIN} surface")
        self.surface_box.setChecked(True)
        self.surface_box.setToolTip(
            "Show the estimated probabilities behind the points: the colour of the most "
            "probable class, the stronger the more probable (white where classes tie)"
        )
        self.info = QLabel("")
        fixed_lines(self.info, 4)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        controls = QHBoxLayout()
        for label, widget in (
            ("x:", self.x_combo),
            ("y:", self.y_combo),
            ("sub-problem:", self.sub_combo),
        ):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget, 1)
        controls.addWidget(self.surface_box)
        return controls

    def _build_pi_row(self) -> None:
        """The boundary at any pi: a switch, a slider and its value."""
        self.pi_box = QCheckBox("boundary at \u03c0")
        self.pi_box.setToolTip(
            "Draw the boundary {f\u03c0 = 0} at any weight \u03c0 (thick dashed), from the "
            "exact solution path of the binary ladder; with a calibration, the points whose "
            "calibrated p-hat is g(\u03c0) (shown beside \u03c0)"
        )
        self.pi_slider = QSlider(Qt.Orientation.Horizontal)
        self.pi_slider.setRange(1, PI_STEPS - 1)
        self.pi_slider.setValue(PI_STEPS // 2)
        self.pi_slider.setToolTip("The weight \u03c0 of the drawn boundary")
        self.pi_label = QLabel("\u03c0 = 0.500")
        self.pi_label.setMinimumWidth(
            self.pi_label.fontMetrics().horizontalAdvance("\u03c0 = 0.000 ")
        )
        self._pi_row = QWidget()
        pi_layout = QHBoxLayout(self._pi_row)
        pi_layout.setContentsMargins(0, 0, 0, 0)
        pi_layout.addWidget(self.pi_box)
        pi_layout.addWidget(self.pi_slider, 1)
        pi_layout.addWidget(self.pi_label)
        # Always shown (enabled with a path): showing and hiding it would resize the plots,
        # and re-laying out the scene costs tens of milliseconds on the GUI thread.
        self._pi_row.setEnabled(False)
        self._pi_row.setToolTip(
            "Needs the exact solution path of the shown ladder (the path engine keeps one "
            "for every binary ladder; after a grid fit the app traces it for a binary ladder)"
        )
        self._pi_timer = QTimer(self)
        self._pi_timer.setSingleShot(True)
        self._pi_timer.setInterval(40)
        self._pi_timer.timeout.connect(self._request_pi)

    def _build_plots(self) -> None:
        """The two panels, the colour bars of pi and p_hat, and the legend."""
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.setMinimumSize(200, 200)
        ci = self.graphics.ci
        # room above for the colour bars' end labels, which overhang their bars
        ci.setContentsMargins(4, 12, 4, 4)
        self.slice_title = TitleItem("", point_size=9.5)
        self.left = BoundaryPanel(pg.PlotItem())
        ci.addItem(self.left.plot, row=1, col=0)
        self.right = BoundaryPanel(pg.PlotItem())
        self.right.plot.setXLink(self.left.plot)
        self.right.plot.setYLink(self.left.plot)
        self.right.plot.disableAutoRange()
        self.colorbar = pg.ColorBarItem(
            values=(0, 1), colorMap=pg.colormap.get(PI_COLORMAP), interactive=False, width=12
        )
        self.surface_bar = pg.ColorBarItem(
            values=(0, 1), colorMap=self._surface_map(2), interactive=False, width=12
        )
        set_bar_title(self.colorbar, PI_BAR)
        set_bar_title(self.surface_bar, PHAT)
        for bar in (self.colorbar, self.surface_bar):
            bar.getAxis("right").setWidth(30)
        ci.addItem(self.colorbar, row=1, col=2)
        ci.addItem(self.surface_bar, row=1, col=3)
        self.legend = pg.LegendItem(labelTextColor=(30, 30, 30), colCount=1)
        keep_legend_fitted(self.graphics, self.legend)
        ci.addItem(self.legend, row=2, col=0, rowspan=1, colspan=4)
        ci.layout.setRowStretchFactor(1, 1)

    # ---------------------------------------------------------------------- helpers
    @staticmethod
    def _surface_map(K: int) -> pg.ColorMap:
        pos, rgb = surface_stops(K)
        span = pos[-1] - pos[0]
        return pg.ColorMap((pos - pos[0]) / span, rgb.astype(np.ubyte))

    def _show_surface_bar(self, K: int, classes) -> None:
        pos, _ = surface_stops(K)
        self.surface_bar.setColorMap(self._surface_map(K))
        self.surface_bar.setLevels((float(pos[0]), float(pos[-1])))
        label = (
            f"surface: {phat(classes[1])}"
            if K == 2
            else f"surface: largest {PHAT} (all {K} classes)"
        )
        set_bar_title(self.surface_bar, label)

    def _fit_legend(self) -> None:
        fit_legend(self.legend, self.graphics.viewport().width())

    def _build_legend(self, ds) -> None:
        key = (tuple(str(c) for c in ds.classes), tuple(sorted(set(self._parts))))
        if key == self._legend_key:
            return
        self._legend_key = key
        self.legend.clear()
        K = ds.n_classes
        for k, c in enumerate(ds.classes):
            self.legend.addItem(
                legend_sample("o", pg.mkBrush(class_qcolor(k, K, 220))), class_entry(c)
            )
        for part in ("train", "tune", "test"):
            if part in key[1]:
                self.legend.addItem(legend_sample(PART_SYMBOLS[part]), PART_NAMES[part])
        self.legend.addItem(legend_line(HULL_PEN), "training hull")
        self.legend.addItem(legend_sample("x", CROSS_IN, pg.mkPen(None), 12), "crossing in hull")
        self.legend.addItem(legend_sample("x", CROSS_OUT, pg.mkPen(None), 11), "crossing outside")
        self.legend.addItem(legend_sample("o", pg.mkBrush(None), RING_PEN, 13), "not monotone")
        self.legend.addItem(legend_sample("o", pg.mkBrush(None), SELECT_PEN, 13), "selected")
        self._fit_legend()

    # -------------------------------------------------------------------------- data
    def set_split(self, split) -> None:
        """Show a data set (its split) without boundaries: feature combos and points."""
        ds = split.dataset
        same_features = self._dataset is not None and list(self._dataset.feature_names) == list(
            ds.feature_names
        )
        new_data = self._dataset is not ds
        self._dataset, self._split = ds, split
        self._parts = split.part_of_rows()
        self._has_result = False
        self._result = None
        self._plane = None
        self._pi_row.setEnabled(False)
        if not same_features:
            self._updating = True
            for combo, default in ((self.x_combo, 0), (self.y_combo, 1)):
                combo.clear()
                combo.addItems(list(ds.feature_names))
                combo.setCurrentIndex(min(default, len(ds.feature_names) - 1))
            self._updating = False
        if new_data or self._reference.size != ds.X.shape[1]:
            self._reference = ds.X.mean(axis=0)
            self.slice_panel.set_data(ds.X, list(ds.feature_names))
            self.slice_panel.set_reference(self._reference)
        self.slice_panel.set_axes(*self.plane())
        self._show_slice(ds.X.shape[1] > 2)
        self.sub_combo.clear()
        self.sub_combo.setEnabled(False)
        for panel in (self.left, self.right):
            panel.clear_boundaries()
        self._show_right(False)
        self._show_surface_bar(ds.n_classes, ds.classes)
        self._build_legend(ds)
        self.left.title.setText(ds.name)
        self._draw_points()
        self._update_slice_title()
        self.info.setText(ds.summary())

    @property
    def split(self):
        """The split whose points are drawn (a DataSplit; None before any data)."""
        return self._split

    def plane(self) -> tuple[int, int]:
        return max(self.x_combo.currentIndex(), 0), max(self.y_combo.currentIndex(), 0)

    def reference(self) -> np.ndarray:
        """The point the plane passes through (raw units), shape (p,)."""
        return self._reference.copy()

    def set_reference(self, reference: np.ndarray, request: bool = True) -> None:
        """Put the slice through ``reference`` (raw units); recompute the plane if shown."""
        reference = np.asarray(reference, float)
        if reference.shape == self._reference.shape and np.array_equal(reference, self._reference):
            return
        self._reference = reference.copy()
        self.slice_panel.set_reference(reference)
        self._draw_points()
        self._update_slice_title()
        if request and self._has_result and self._is_slice():
            self.plane_requested.emit(*self.plane())

    def set_plane_choice(self, ix: int, iy: int) -> None:
        self._updating = True
        self.x_combo.setCurrentIndex(ix)
        self.y_combo.setCurrentIndex(iy)
        self._updating = False
        self.slice_panel.set_axes(ix, iy)
        self._draw_points()

    def begin_run(self) -> None:
        """A run started: clear the boundaries and what the info line said of them, keep
        the points."""
        self._has_result = False
        self._pi_row.setEnabled(False)
        for panel in (self.left, self.right):
            panel.clear_boundaries()
        self._draw_selection()
        self.info.setText("Running\u2026 the boundaries of the final fit are drawn as they arrive.")
        self.info.setToolTip("")

    def add_live(self, live: LiveBoundary) -> None:
        self.left.add_live(live)
        self.info.setText(
            f"fitting: {live.done} of {live.total} fits; "
            f"boundaries of the final fit drawn as they arrive "
            f"(last \u03c0 = {live.weight:.3g})"
        )

    def set_result(self, result) -> None:
        """Draw a finished run."""
        if self._split is not result.split:
            self.set_split(result.split)
        self._has_result = True
        self._result = result
        self.set_plane(result.plane)
        self._update_pi_row()

    def clear(self) -> None:
        """No result: points only."""
        if self._split is not None:
            self.set_split(self._split)

    def set_plane(self, plane: PlaneData) -> None:
        """Draw boundaries and background of a plane computed by the worker."""
        self._plane = plane
        if self.plane() != (plane.ix, plane.iy):
            self.set_plane_choice(plane.ix, plane.iy)
        if plane.reference.size == self._reference.size:
            self._reference = plane.reference.copy()
            self.slice_panel.set_reference(self._reference)
        layer = plane.layers[0]
        keep = self.sub_combo.currentIndex()
        self._updating = True
        self.sub_combo.clear()
        self.sub_combo.addItems(layer.subproblems)
        self.sub_combo.setCurrentIndex(keep if 0 <= keep < len(layer.subproblems) else 0)
        self.sub_combo.setEnabled(len(layer.subproblems) > 1)
        self._updating = False
        self._show_right(len(plane.layers) > 1)
        rect = QRectF(
            float(plane.xs[0]),
            float(plane.ys[0]),
            float(plane.xs[-1] - plane.xs[0]),
            float(plane.ys[-1] - plane.ys[0]),
        )
        # each panel over its own estimator's surface (the comparison's on the right)
        own = plane.image if plane.comparison_image is None else plane.comparison_image
        for panel, image in ((self.left, plane.image), (self.right, own)):
            panel.image.setImage(image, autoLevels=False, levels=(0, 255))
            panel.image.setRect(rect)
            panel.image.setVisible(self.surface_box.isChecked())
            if plane.hull.size:
                panel.hull.setData(plane.hull[:, 0], plane.hull[:, 1])
            else:
                panel.hull.setData([], [])
        self._draw_points()
        self._update_slice_title()
        self._draw_layers()
        if self.pi_box.isChecked() and self._pi_row.isEnabled():
            self._pi_timer.start()  # the boundary at pi in the new plane

    # ------------------------------------------------------------------------ pi
    def pi(self) -> float:
        return self.pi_slider.value() / PI_STEPS

    def subproblem(self) -> int:
        """Index of the sub-problem shown (0 for a single ladder)."""
        return max(self.sub_combo.currentIndex(), 0)

    def path(self):
        """The exact path of the shown sub-problem's ladder (a PathInfo), or None."""
        paths = self._result.paths if self._result is not None else []
        k = self.subproblem()
        return paths[k] if k < len(paths) else None

    def _update_pi_row(self) -> None:
        """The slider works where the shown ladder has an exact path."""
        has = self.path() is not None
        self._pi_row.setEnabled(has)
        self.pi_label.setText(self.pi_text(self.pi()))
        self.left.pi_halo.setData([], [])
        self.left.pi_curve.setData([], [])
        if has and self.pi_box.isChecked():
            self._pi_timer.start()

    def _pi_moved(self, _value: int) -> None:
        self.pi_label.setText(self.pi_text(self.pi()))
        if not self.pi_box.isChecked():
            self.pi_box.setChecked(True)  # moving the slider asks for the boundary
        else:
            self._pi_timer.start()

    def _pi_toggled(self, on: bool) -> None:
        if on:
            self._pi_timer.start()
        else:
            self.left.pi_halo.setData([], [])
            self.left.pi_curve.setData([], [])

    def _sub_changed(self, _index: int) -> None:
        if not self._updating and self._result is not None:
            self._update_pi_row()

    def _request_pi(self) -> None:
        if self.pi_box.isChecked() and self._has_result:
            self.pi_requested.emit(self.pi())

    def set_pi_boundary(self, pi: float, segments: np.ndarray, subproblem: int = 0) -> None:
        """Draw the boundary at ``pi`` (segments (s, 2, 2)) of sub-problem ``subproblem``,
        computed from its exact path."""
        stale = abs(pi - self.pi()) > 0.5 / PI_STEPS or subproblem != self.subproblem()
        if not self.pi_box.isChecked() or stale:
            return  # an older request
        x, y = segments_to_xy(segments)
        self.left.pi_halo.setData(x, y, connect="pairs")
        self.left.pi_curve.setData(x, y, connect="pairs")
        self.pi_label.setText(self.pi_text(pi))

    def pi_text(self, pi: float) -> str:
        """``pi``, and the calibrated probability it stands for when the shown ladder's
        fit recalibrates its estimate (the boundary {f_pi = 0} is where the ladder's own
        estimate is pi, so the reported one is g(pi) there)."""
        text = f"\u03c0 = {pi:.3f}"
        ladders = self._result.ladders if self._result is not None else []
        k = self.subproblem()
        g = ladders[k].calibration if k < len(ladders) else None
        if g is not None:
            text += f" (calibrated p\u0302 = {float(np.asarray(g(np.array([pi])))[0]):.3f})"
        return text

    def pi_boundary_data(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of the drawn boundary at pi (for tests)."""
        x, y = self.left.pi_curve.getData()
        return np.asarray(x if x is not None else []), np.asarray(y if y is not None else [])

    # ------------------------------------------------------------------------ drawing
    def _is_slice(self) -> bool:
        return self._dataset is not None and self._dataset.X.shape[1] > 2

    def _show_slice(self, show: bool) -> None:
        self.slice_panel.setVisible(show)
        ci = self.graphics.ci
        if show and not self._slice_shown:
            ci.addItem(self.slice_title, row=0, col=0, rowspan=1, colspan=4)
        elif not show and self._slice_shown:
            ci.removeItem(self.slice_title)
        self._slice_shown = show

    def _update_slice_title(self) -> None:
        ds = self._dataset
        if ds is None or not self._is_slice():
            return
        ix, iy = self.plane()
        text = "slice at " + describe_reference(
            self._reference, list(ds.feature_names), ix, iy, limit=4
        )
        self.slice_title.setText(text)
        self.slice_title.setToolTip(
            "slice at "
            + describe_reference(self._reference, list(ds.feature_names), ix, iy, limit=999)
        )

    def _show_right(self, show: bool) -> None:
        if show and not self._right_shown:
            self.graphics.ci.addItem(self.right.plot, row=1, col=1)
            self._right_shown = True
            self._draw_points()  # its points
        elif not show and self._right_shown:
            self.graphics.ci.removeItem(self.right.plot)
        self._right_shown = show

    def _draw_points(self) -> None:
        ds = self._dataset
        if ds is None:
            return
        ix, iy = self.plane()
        # Setting 2 x n points with their own brushes, and a new axis range, costs tens of
        # milliseconds: only when something they show changed.
        key = (id(ds), id(self._parts), ix, iy, self._reference.tobytes(), self._right_shown)
        if key == getattr(self, "_points_key", None):
            self._draw_selection()
            return
        self._points_key = key
        x, y = ds.X[:, ix], ds.X[:, iy]
        idx = class_index(ds.y, ds.classes)
        if self._is_slice() and ix != iy and self._reference.size == ds.X.shape[1]:
            near = closeness(ds.X, self._reference, ix, iy)
        else:
            near = np.ones(x.size)
        brushes = faded_brushes(idx, ds.n_classes, 40 + 190 * near)
        symbols = [PART_SYMBOLS.get(p, "o") for p in self._parts]
        rows = np.arange(ds.X.shape[0])
        for panel in (self.left, self.right) if self._right_shown else (self.left,):
            panel.points.setData(x=x, y=y, brush=brushes, symbol=symbols, data=rows)
            panel.plot.setLabel("bottom", ds.feature_names[ix])
            panel.plot.setLabel("left", ds.feature_names[iy])
        self._draw_selection()
        # A fixed range: live boundaries and new results then never change the axes, whose
        # repainting is the costliest part of a redraw.
        pad_x = 0.05 * (np.ptp(x) or 1.0)
        pad_y = 0.05 * (np.ptp(y) or 1.0)
        self.left.plot.disableAutoRange()
        self.left.plot.setRange(
            xRange=(x.min() - pad_x, x.max() + pad_x),
            yRange=(y.min() - pad_y, y.max() + pad_y),
            padding=0,
        )

    def _draw_layers(self) -> None:
        if self._updating or self._plane is None:
            return
        k = max(self.sub_combo.currentIndex(), 0)
        texts = []
        panels = [self.left, self.right] if len(self._plane.layers) > 1 else [self.left]
        ladders = False
        for panel, layer in zip(panels, self._plane.layers, strict=False):
            texts.append(self._draw_layer(panel, layer, k))
            ladders = ladders or not np.all(np.isnan(layer.weights[min(k, len(layer.weights) - 1)]))
        show_bar(self.colorbar, ladders)
        if ladders:
            drawn = sum(
                int(
                    np.sum(
                        [
                            seg.shape[0] > 0
                            for seg in layer.segments[min(k, len(layer.segments) - 1)]
                        ]
                    )
                )
                for layer in self._plane.layers[: len(panels)]
            )
            self._dim_pi_bar(drawn == 0)
        notes = [" ".join(texts)]
        layer = self._plane.layers[0]
        if len(layer.subproblems) > 1 and self.surface_box.isChecked():
            K = self._dataset.n_classes if self._dataset is not None else len(layer.subproblems)
            notes.append(SURFACE_NOTE.format(K=K))
        if self._is_slice():
            notes.append(describe_cut(self._plane.hull))
        guarantee = self._guarantee_note()
        if guarantee:
            notes.append(guarantee)
        self.info.setText(" ".join(notes))
        self.info.setToolTip("\n".join(notes))

    def _dim_pi_bar(self, none: bool) -> None:
        """Grey out the weight colour bar when no boundary of the chosen ladder crosses
        the plane (hiding it would move the plots), and say so in its title."""
        self.colorbar.setOpacity(0.3 if none else 1.0)
        title = PI_BAR_NONE if none else PI_BAR
        if self.colorbar.getAxis("left").labelText != title:
            set_bar_title(self.colorbar, title)
        self.colorbar.setToolTip(
            "No boundary {f\u03c0 = 0} of this ladder crosses the plane: nothing drawn has "
            "these colours"
            if none
            else "The weight \u03c0 of each boundary drawn"
        )

    def _guarantee_note(self) -> str:
        """Where the non-crossing guarantee holds, and how many of its boundaries cross
        there: the whole-hull check, together with the crossings drawn in this plane."""
        res, plane = self._result, self._plane
        if res is None or plane is None:
            return ""
        layers = [layer for layer in plane.layers if "on-crossing" in layer.title]
        if not layers:
            return ""
        layer = layers[0]
        drawn = layer.crossing_pairs[0] if layer.crossing_pairs else np.empty((0, 2), int)
        checks = res.crossing_checks.get(layer.title, {})
        found = {space: _pairs(checks.get(space, {})) for space in ("input", "feature")}
        # a crossing drawn inside the hull's cut lies in the input hull: the input-space
        # count includes it whatever the sample of the whole hull found
        found["input"] |= {(int(j), int(k)) for j, k in drawn}
        n_points = max((int(c.get("n_points", 0)) for c in checks.values()), default=0)
        marks = layer.crossings[0] if layer.crossings else np.empty((0, 2))
        sample = f"a {n_points:,}-point sample of the hull" if checks else ""
        where = (f"{sample} and this plane" if sample else "this plane") + (
            f"; {_count(len(drawn), 'pair')} at the {_count(len(marks), 'mark')} inside the outline"
        )
        n_input = _count(len(found["input"]), "pair")
        if res.settings.kernel == "linear":
            plane_is = ", this plane" if plane.reference.size <= 2 else ""
            return (
                f"Its constraints hold in the training hull (input space{plane_is}): "
                f"{n_input} of its boundaries cross there ({where})."
            )
        feature = (
            f": {_count(len(found['feature']), 'pair')} cross there ({sample})"
            if "feature" in checks
            else ""
        )
        return (
            f"Its constraints hold in feature space (the kernel rows' hull), not in this "
            f"plane{feature}. Input space: {n_input} cross ({where})."
        )

    def _draw_layer(self, panel: BoundaryPanel, layer: BoundaryLayer, k: int) -> str:
        k = min(k, len(layer.subproblems) - 1)
        panel.set_boundaries(layer.weights[k], layer.segments[k])
        rows = layer.crossing_rows[k]
        ds = self._dataset
        ix, iy = self.plane()
        if rows.size and ds is not None:
            panel.nonmonotone.setData(x=ds.X[rows, ix], y=ds.X[rows, iy])
        else:
            panel.nonmonotone.setData([], [])
        inside = layer.crossings[k] if layer.crossings else np.empty((0, 2))
        outside = layer.crossings_outside[k] if layer.crossings_outside else np.empty((0, 2))
        panel.crossing.setData(x=inside[:, 0], y=inside[:, 1])
        panel.crossing_out.setData(x=outside[:, 0], y=outside[:, 1])
        sub = layer.subproblems[k]
        if np.all(np.isnan(layer.weights[k])):
            panel.title.setText(f"{layer.title}: class borders")
            return f"{layer.title}: borders between the predicted classes."
        n_bound = int(np.sum([s.shape[0] > 0 for s in layer.segments[k]]))
        panel.title.setText(f"{layer.title}" + (f" \u2014 {sub}" if sub else ""))
        return (
            f"{layer.title}: {_count(n_bound, 'boundary', 'boundaries')}, "
            f"{_count(len(inside), 'crossing')} in the hull (\u00d7), {len(outside)} outside "
            f"(grey), {_count(rows.size, 'point')} not monotone."
        )

    def _toggle_surface(self, on: bool) -> None:
        for panel in (self.left, self.right):
            panel.image.setVisible(on and self._plane is not None)
        show_bar(self.surface_bar, on)

    def _plane_changed(self) -> None:
        if self._updating:
            return
        self.slice_panel.set_axes(*self.plane())
        self._draw_points()
        self._update_slice_title()
        if self._has_result:
            self.plane_requested.emit(*self.plane())

    def _reference_edited(self, reference) -> None:
        self.set_reference(reference)

    # ---------------------------------------------------------------------- selection
    def set_selection(self, row: int) -> None:
        self._row = row
        ds = self._dataset
        if (
            ds is not None
            and self._is_slice()
            and self.slice_panel.follow.isChecked()
            and 0 <= row < ds.X.shape[0]
        ):
            self.set_reference(ds.X[row])
        self._draw_selection()

    def _draw_selection(self) -> None:
        ds = self._dataset
        ix, iy = self.plane()
        for panel in (self.left, self.right):
            if ds is None or not 0 <= self._row < ds.X.shape[0]:
                panel.selected.setData([], [])
            else:
                panel.selected.setData(x=[ds.X[self._row, ix]], y=[ds.X[self._row, iy]])

    def _clicked(self, _item, points, *_args) -> None:
        if len(points):
            self.point_clicked.emit(int(points[0].data()))

    def add_baselines(self, baselines) -> None:
        """Nothing to add: the baselines are measured in the results and calibration views."""

    def export_item(self) -> QWidget:
        return self.graphics


def _pairs(check: dict) -> set[tuple[int, int]]:
    """The crossing pairs of a whole-hull check's summary (weight indices)."""
    return {(int(j), int(k)) for j, k in check.get("pairs", [])}


def _count(n: int, one: str, many: str | None = None) -> str:
    """``"1 point"``, ``"3 points"``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
