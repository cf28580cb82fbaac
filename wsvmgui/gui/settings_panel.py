"""The run settings panel, bound to :class:`wsvmgui.app.settings.RunSettings`.

Every scheme of :data:`wsvmgui.app.schemes.SCHEMES` is listed; an unavailable one (or a
binary-only one when the data hold more than two classes) is disabled with the reason as
its tooltip.  A preset (:mod:`wsvmgui.app.presets`) fills every field from the scheme and
the training data; editing a field makes the settings "custom".  Rarely changed settings
sit in an "Advanced" section, folded by default.  Every field has a tooltip.
"""

from __future__ import annotations

import json
from typing import cast

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..app.presets import PRESET_LABELS, PRESETS, default_scheme, preset_settings, with_scheme
from ..app.schemes import (
    SCHEMES,
    auto_split,
    is_pair_scheme,
    pair_tuning_decides,
    split_settings_read,
)
from ..app.settings import (
    CALIBRATION_CHOICES,
    TIES_CHOICES,
    TUNING_MODES,
    TUNING_RULES,
    TUNING_SCORES,
    RunSettings,
)
from ..errors import InputError
from ..estimators.multiclass import PAIR_TUNINGS
from ..ladder.engines import ENGINES
from ..ladder.rules import RULES
from ..ladder.tuning import default_n_weights
from ..solvers.kernels import KERNELS
from ..solvers.wsvm import SOLVERS

CUSTOM = "custom"

TIPS = {
    "preset": "Fill every setting for the chosen scheme and data: quick (seconds on the "
    "built-in data), standard (the library's defaults, can take minutes), thorough. "
    "Editing a field makes the settings custom.",
    "scheme": "How the probabilities are estimated (hover over an entry for its method)",
    "kernel": "rbf: Gaussian kernel of width \u03c3; linear: boundaries are straight "
    "lines (the non-crossing guarantee then holds in the input space); poly: polynomial",
    "sigmas": "RBF widths \u03c3 to tune over, separated by commas; one value fixes \u03c3; "
    "blank: 0.25 \u2026 1.5 times the median distance between classes",
    "degree": "Degree of the polynomial kernel (x\u00b7z \u03b3 + coef0)^degree",
    "coef0": "Constant term of the polynomial kernel",
    "poly_gamma": "Scale \u03b3 of the inner product in the polynomial kernel",
    "n_weights": "M: the ladder fits the weights \u03c0 = m/M, m = 1 \u2026 M-1; "
    "the probabilities come out on a 1/M grid (auto: M = max(2\u221an, 40))",
    "joint_n": "N of the joint simplex grid: class weights in steps of 1/N; the number of "
    "K-class fits grows like N^(K-1)",
    "lambdas": "Penalties \u03bb = 1/(2nC) to tune over, separated by commas; one value "
    "fixes \u03bb; blank: C = 0.1 \u2026 100 (7 values)",
    "tuning": "How \u03bb and \u03c3 are chosen: split: hold out a share of the training "
    "rows; cv: k-fold cross-validation (k times the fits); auto: each scheme's default "
    "(binary ladders: cv up to 500 points, else split; multiclass pair schemes: see pair "
    "tuning); tune-set: the data's tuning part",
    "tune_fraction": "Share of the training rows held out for tuning (split mode), or of "
    "all rows as the tuning part (tune-set mode)",
    "cv_folds": "Folds of cross-validated tuning: each adds a full tuning grid of fits",
    "compare": "Also fit the non-crossing ladder and draw both sets of boundaries side by "
    "side (two classes only; about doubles the run time)",
    "rule": "How a point's sign ladder becomes a probability: count the positive signs, "
    "or use the extreme sign changes",
    "refit": "After tuning, refit on training and tuning rows together",
    "screen_box": "Where each tuning fold trains on 1000 or more rows: fit every (\u03bb, \u03c3) "
    "cell on a third of them first and only the 6 best on all (several times faster; "
    "off: every cell on all rows)",
    "seed": "Seed of every random choice (tuning split, folds): the same seed gives the "
    "same result",
    "n_jobs": "Threads for the weighted fits (0: all cores)",
    "solver": "libsvm: fast; qp: a general QP solver (slower, for checking)",
    "engine": "How each binary ladder is fitted. path: the exact weight path, p-hat "
    "grid-free (the grid answers where a path breaks down); auto: the path, the grid "
    "where its elbow grows large; grid: one weighted SVM per weight (p-hat on a 1/M grid)",
    "options": 'Scheme-specific options as a JSON object, e.g. {"learner": "svm"} for '
    "Probing; hover over the scheme for its options",
    "calibration": "Monotone recalibration of the ladder's estimate, fitted to cross-fitted "
    "estimates of the training rows (binary and the multiclass ladder schemes): auto "
    "chooses the map on held-out folds (binary: sigmoid, isotonic or plateau); none: the "
    "ladder's own reading; plateau: a sigmoid between a fitted floor and ceiling; "
    "default: auto",
    "tuning_score": "What the tuning minimises: egkl (default), or the Brier score or log "
    "loss of the estimate returned (recalibrated when a calibration is on)",
    "tuning_rule": "The cell of the smallest score (min), the smoothest cell within one "
    "standard error of it (one_se), or the widest kernel near it (auto, the default: the "
    "binary scheme's within one standard error, the multiclass pair schemes' within "
    "half of one on their 3 folds; else the smallest)",
    "ties": "How the baseline schemes resolve tied classes: table (the pairwise ladders "
    "among them join the pairs against the baseline in one coupled table), pairs (the "
    "tied classes share by their pairwise ladders alone) or key (the decision value at "
    "pi = 1/2)",
    "pair_tuning": "How the multiclass pair schemes (pairwise, B1, B2, BP1, BP2) tune on 3 "
    "or more classes when tuning is auto and the \u03bb and \u03c3 grids are blank: "
    "folds (default) or holdout; hover over an entry for what it does",
    "intervals": "Add a 90% interval for each point's probabilities (the binary scheme "
    "with a calibration): drawn on the probability bars, exported as p_<class>_lo/hi",
}


def parse_grid(text: str, name: str) -> list[float] | None:
    """``"0.1, 1e-2 0.001"`` -> list of floats; blank or "auto" -> None."""
    text = text.strip()
    if not text or text.lower() == "auto":
        return None
    values = []
    for token in text.replace(";", ",").replace(",", " ").split():
        try:
            value = float(token)
        except ValueError:
            raise InputError(f"{name}: {token!r} is not a number") from None
        if not value > 0:
            raise InputError(f"{name}: values must be positive, got {token}")
        values.append(value)
    return values


def format_grid(values: list[float] | None) -> str:
    return "" if values is None else ", ".join(f"{v:g}" for v in values)


def resolution_note(M: int | None, n: int | None, engine: str = "grid") -> str:
    """What the weight grid means for the probabilities: their step and their ends."""
    if engine != "grid":
        drawn = "max(2\u221an, 40)" if M is None else str(M)
        if M is None and n is not None:
            drawn = str(default_n_weights(n))
        return f"p-hat exact (weight path); M = {drawn} weights draw the sign ladder"
    if M is None:
        if n is None:
            return "auto: M = max(2\u221an, 40)"
        M = default_n_weights(n)
        head = f"auto: M = {M} for n = {n}"
    else:
        head = f"M = {M}"
    return f"{head}: p-hat on a 1/{M} grid, ends {1 / (2 * M):.3g} and {1 - 1 / (2 * M):.3g}"


class SettingsPanel(QWidget):
    """Form for one :class:`RunSettings`.

    Signals
    -------
    changed()
        Any field was edited (by the user or a preset).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._make_fields()
        self._lay_out()
        self._n_classes = 2
        self._n_train: int | None = None
        self._train: tuple[np.ndarray, np.ndarray] | None = None
        self._programmatic = False
        self.set_settings(RunSettings())
        self.refresh_availability(2)
        self._connect_fields()

    def _make_fields(self) -> None:
        """One widget per setting, with its tooltip."""
        self.preset = QComboBox()
        for name in PRESETS:
            self.preset.addItem(PRESET_LABELS[name], name)
        self.preset.addItem("custom", CUSTOM)
        self.scheme = QComboBox()
        model = QStandardItemModel(self.scheme)
        self.scheme.setModel(model)
        self._sync_schemes()
        self.scheme_info = QLabel("")
        self.scheme_info.setWordWrap(True)
        self.scheme_info.setForegroundRole(self.scheme_info.foregroundRole())
        self.scheme_info.setEnabled(False)  # the palette's muted text colour, also when dark
        self.kernel = QComboBox()
        self.kernel.addItems(list(KERNELS))
        self.sigmas = QLineEdit()
        self.sigmas.setPlaceholderText("auto: (0.25 \u2026 1.5) \u00d7 \u03c3_M")
        self.degree = QSpinBox()
        self.degree.setRange(1, 10)
        self.coef0 = QDoubleSpinBox()
        self.coef0.setRange(-100, 100)
        self.coef0.setDecimals(3)
        self.poly_gamma = QDoubleSpinBox()
        self.poly_gamma.setRange(1e-4, 1e4)
        self.poly_gamma.setDecimals(4)
        self.n_weights = QSpinBox()
        self.n_weights.setRange(1, 1000)
        self.n_weights.setSpecialValueText("auto")
        self.resolution = QLabel("")
        self.resolution.setWordWrap(True)
        self.resolution.setEnabled(False)
        self.joint_n = QSpinBox()
        self.joint_n.setRange(3, 200)
        self.joint_label = QLabel("")
        self.joint_label.setEnabled(False)
        self.lambdas = QLineEdit()
        self.lambdas.setPlaceholderText("auto: 1/(2 n C), C = 0.1 \u2026 100")
        self.tuning = QComboBox()
        self.tuning.addItems(list(TUNING_MODES))
        self.tune_fraction = QDoubleSpinBox()
        self.tune_fraction.setRange(0.05, 0.9)
        self.tune_fraction.setSingleStep(0.05)
        self.cv_folds = QSpinBox()
        self.cv_folds.setRange(2, 20)
        self.split_note = QLabel("")
        self.split_note.setWordWrap(True)
        self.split_note.setEnabled(False)
        self.compare = QCheckBox("side by side with non-crossing")
        self.rule = QComboBox()
        self.rule.addItems(list(RULES))
        self.refit = QCheckBox("refit on training + tuning rows")
        self.screen_box = QCheckBox("screened tuning on large data")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.n_jobs = QSpinBox()
        self.n_jobs.setRange(0, 64)
        self.n_jobs.setSpecialValueText("all cores")
        self.scheduler = QLineEdit()
        self.scheduler.setPlaceholderText("this machine")
        self.scheduler.setToolTip(
            "Address of a Dask scheduler, e.g. tcp://host:8786, to run the fits on its "
            "workers (needs pip install 'wsvmgui[cluster]'); empty: this machine"
        )
        self.solver = QComboBox()
        self.solver.addItems(list(SOLVERS))
        self.engine = QComboBox()
        self.engine.addItems(list(ENGINES))
        self.options = QLineEdit()
        self.options.setPlaceholderText('{} e.g. {"learner": "svm"}')
        self.calibration = _choices(CALIBRATION_CHOICES)
        self.tuning_score = _choices(TUNING_SCORES)
        self.tuning_rule = _choices(TUNING_RULES)
        self.ties = QComboBox()
        self.ties.addItems(list(TIES_CHOICES))
        self.intervals = QCheckBox("per-point 90% intervals")
        self.pair_tuning = _choices(PAIR_TUNINGS)
        for row, tip in enumerate(PAIR_TUNING_TIPS):
            self.pair_tuning.setItemData(row, tip, Qt.ItemDataRole.ToolTipRole)
        self.pair_note = QLabel("")
        self.pair_note.setWordWrap(True)
        self.pair_note.setEnabled(False)
        for name, tip in TIPS.items():
            getattr(self, name).setToolTip(tip)
        for combo in (self.scheme, self.preset):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(12)

    def _lay_out(self) -> None:
        """The main form, and the advanced settings folded below it."""
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        rows = [
            ("Preset", self.preset),
            ("Scheme", self.scheme),
            ("", self.scheme_info),
            ("Kernel", self.kernel),
            ("\u03c3 grid", self.sigmas),
            ("degree", self.degree),
            ("coef0", self.coef0),
            ("poly \u03b3", self.poly_gamma),
            ("engine", self.engine),
            ("weights M", self.n_weights),
            ("", self.resolution),
            ("simplex N", self.joint_n),
            ("", self.joint_label),
            ("\u03bb grid", self.lambdas),
            ("tuning", self.tuning),
            ("tune fraction", self.tune_fraction),
            ("CV folds", self.cv_folds),
            ("", self.split_note),
            ("pair tuning", self.pair_tuning),
            ("", self.pair_note),
            ("", self.compare),
        ]
        for label, widget in rows:
            form.addRow(label, widget)
            lab = form.labelForField(widget)
            if lab is not None and widget.toolTip():
                lab.setToolTip(widget.toolTip())
        self.advanced_button = QToolButton()
        self.advanced_button.setText("Advanced settings")
        self.advanced_button.setCheckable(True)
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_button.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_button.setToolTip(
            "Rule, refit, screened tuning, seed, workers, solver, scheme options"
        )
        self.advanced = QWidget()
        adv = QFormLayout(self.advanced)
        adv.setContentsMargins(0, 0, 0, 0)
        adv.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for label, widget in (
            ("rule", self.rule),
            ("", self.refit),
            ("", self.screen_box),
            ("seed", self.seed),
            ("workers", self.n_jobs),
            ("Dask scheduler", self.scheduler),
            ("calibration", self.calibration),
            ("", self.intervals),
            ("tuning score", self.tuning_score),
            ("tuning rule", self.tuning_rule),
            ("ties", self.ties),
            ("solver", self.solver),
            ("options", self.options),
        ):
            adv.addRow(label, widget)
            lab = adv.labelForField(widget)
            if lab is not None:
                lab.setToolTip(widget.toolTip())
        self.advanced.setVisible(False)
        self.advanced_button.toggled.connect(self._toggle_advanced)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(form)
        outer.addWidget(self.advanced_button)
        outer.addWidget(self.advanced)
        self._form = form

    def _connect_fields(self) -> None:
        """Every edit of a field marks the settings changed."""
        for combo in (self.scheme, self.kernel, self.rule, self.tuning, self.solver, self.engine):
            combo.currentIndexChanged.connect(self._on_change)
        for combo in (
            self.calibration,
            self.tuning_score,
            self.tuning_rule,
            self.ties,
            self.pair_tuning,
        ):
            combo.currentIndexChanged.connect(self._on_change)
        self.intervals.toggled.connect(self._on_change)
        for spin in (self.degree, self.n_weights, self.joint_n, self.seed, self.n_jobs):
            spin.valueChanged.connect(self._on_change)
        self.cv_folds.valueChanged.connect(self._on_change)
        for number in (self.coef0, self.poly_gamma, self.tune_fraction):
            number.valueChanged.connect(self._on_change)
        for edit in (self.sigmas, self.lambdas, self.options, self.scheduler):
            edit.textChanged.connect(self._on_change)
        self.refit.toggled.connect(self._on_change)
        self.screen_box.toggled.connect(self._on_change)
        self.compare.toggled.connect(self._on_change)
        self.preset.activated.connect(self._preset_chosen)

    # ------------------------------------------------------------------- availability
    def _sync_schemes(self) -> None:
        """List every registered scheme (again, if the registry changed)."""
        names = list(SCHEMES)
        listed = [self.scheme.itemData(i) for i in range(self.scheme.count())]
        if names == listed:
            return
        current = self.scheme.currentData()
        self.scheme.blockSignals(True)
        self.scheme.clear()
        for scheme in SCHEMES.values():
            self.scheme.addItem(scheme.label, scheme.name)
        if current in names:
            self.scheme.setCurrentIndex(names.index(current))
        self.scheme.blockSignals(False)

    def refresh_availability(self, n_classes: int) -> str | None:
        """Enable the schemes that can run on data with ``n_classes`` classes.

        The scheme follows the number of classes: one that cannot run on them, or the
        default of the previous number (:func:`default_scheme`, which the user kept), is
        replaced by the default for ``n_classes``.  Returns the scheme chosen so, or None
        when the scheme stays.
        """
        before = self.scheme.currentData()
        follows = before == default_scheme(self._n_classes) != default_scheme(n_classes)
        self._n_classes = n_classes
        self._sync_schemes()
        model = self._scheme_model()
        for row, scheme in enumerate(SCHEMES.values()):
            item = model.item(row)
            ok, why = scheme.availability()
            if ok and n_classes > 2 and not scheme.multiclass:
                ok, why = False, f"handles two classes; the data hold {n_classes}"
            item.setEnabled(ok)
            opts = "; ".join(f"{k}: {d}" for k, (_v, d) in scheme.options.items())
            tip = scheme.description + (f"\nOptions: {opts}" if opts else "")
            item.setToolTip(tip if ok else f"Unavailable: {why}")
        current = model.item(self.scheme.currentIndex())
        if current is not None and (follows or not current.isEnabled()):
            preferred = [n for n in (default_scheme(n_classes), "pairwise") if n in SCHEMES]
            rows = [self.scheme.findData(n) for n in preferred] + list(range(model.rowCount()))
            for row in rows:
                if row >= 0 and model.item(row).isEnabled():
                    self.scheme.setCurrentIndex(row)
                    break
        self._update_visibility()
        after = self.scheme.currentData()
        return after if after != before else None

    def scheme_enabled(self, name: str) -> bool:
        self.refresh_availability(self._n_classes)
        row = self.scheme.findData(name)
        return row >= 0 and self._scheme_model().item(row).isEnabled()

    def _scheme_model(self) -> QStandardItemModel:
        """The scheme combo's items (a standard model: items can be disabled)."""
        return cast(QStandardItemModel, self.scheme.model())

    # ------------------------------------------------------------------------ presets
    def set_training_data(self, X: np.ndarray | None, y: np.ndarray | None) -> None:
        """The training part the presets size their grids for (None: no data)."""
        self._train = None if X is None or y is None else (np.asarray(X), np.asarray(y))
        self._n_train = None if y is None else int(np.asarray(y).size)
        if self.preset_name() != CUSTOM:
            self.apply_preset(self.preset_name())
        self._update_visibility()

    def preset_name(self) -> str:
        return self.preset.currentData() or CUSTOM

    def apply_preset(self, name: str) -> bool:
        """Fill the fields from preset ``name`` for the current scheme; False if it cannot."""
        if name == CUSTOM or self._train is None:
            self._set_preset_label(name)
            return False
        try:
            base = self._current_or_default()
            settings = preset_settings(name, base.scheme, *self._train, base=base)
        except InputError:
            return False
        self.set_settings(settings, preset=name)
        self.changed.emit()
        return True

    def _preset_chosen(self, _index: int) -> None:
        self.apply_preset(self.preset_name())

    def _set_preset_label(self, name: str) -> None:
        self.preset.blockSignals(True)
        self.preset.setCurrentIndex(max(self.preset.findData(name), 0))
        self.preset.blockSignals(False)

    def _current_or_default(self) -> RunSettings:
        try:
            return self.settings()
        except InputError:
            return with_scheme(RunSettings(), self.scheme.currentData() or "binary")

    # ------------------------------------------------------------------------ binding
    def set_settings(self, s: RunSettings, preset: str = CUSTOM) -> None:
        """Show ``s``; ``preset`` names the preset it came from ("custom" otherwise)."""
        self._programmatic = True
        try:
            self._sync_schemes()
            row = self.scheme.findData(s.scheme)
            if row >= 0:
                self.scheme.setCurrentIndex(row)
            self.kernel.setCurrentText(s.kernel)
            self.sigmas.setText(format_grid(s.sigmas))
            self.degree.setValue(s.degree)
            self.coef0.setValue(s.coef0)
            self.poly_gamma.setValue(s.poly_gamma)
            self.n_weights.setValue(s.n_weights or 1)
            self.joint_n.setValue(s.joint_n)
            self.lambdas.setText(format_grid(s.lambdas))
            self.rule.setCurrentText(s.rule)
            self.tuning.setCurrentText(s.tuning)
            self.tune_fraction.setValue(s.tune_fraction)
            self.cv_folds.setValue(s.cv_folds)
            self.refit.setChecked(s.refit)
            self.screen_box.setChecked(s.screen)
            self.seed.setValue(s.seed)
            self.n_jobs.setValue(s.n_jobs)
            self.scheduler.setText(s.scheduler)
            self.solver.setCurrentText(s.solver)
            self.engine.setCurrentText(s.engine)
            self.options.setText(json.dumps(s.options) if s.options else "")
            for combo, value in (
                (self.calibration, s.calibration),
                (self.tuning_score, s.tuning_score),
                (self.tuning_rule, s.tuning_rule),
                (self.pair_tuning, s.pair_tuning),
            ):
                combo.setCurrentIndex(max(combo.findData(value), 0))
            self.ties.setCurrentText(s.ties)
            self.intervals.setChecked(s.intervals)
            self._set_preset_label(preset)
        finally:
            self._programmatic = False
        self._update_visibility()

    def settings(self) -> RunSettings:
        """The settings shown, validated (InputError names the bad field)."""
        text = self.options.text().strip()
        try:
            options = json.loads(text) if text else {}
        except json.JSONDecodeError as exc:
            raise InputError(f"options must be a JSON object: {exc}") from None
        if not isinstance(options, dict):
            raise InputError('options must be a JSON object such as {"learner": "svm"}')
        s = RunSettings(
            scheme=self.scheme.currentData(),
            kernel=self.kernel.currentText(),
            degree=self.degree.value(),
            coef0=self.coef0.value(),
            poly_gamma=self.poly_gamma.value(),
            n_weights=None if self.n_weights.value() == 1 else self.n_weights.value(),
            joint_n=self.joint_n.value(),
            lambdas=parse_grid(self.lambdas.text(), "\u03bb grid"),
            sigmas=parse_grid(self.sigmas.text(), "\u03c3 grid"),
            rule=self.rule.currentText(),
            tuning=self.tuning.currentText(),
            tune_fraction=round(self.tune_fraction.value(), 4),
            cv_folds=self.cv_folds.value(),
            refit=self.refit.isChecked(),
            screen=self.screen_box.isChecked(),
            seed=self.seed.value(),
            n_jobs=self.n_jobs.value(),
            scheduler=self.scheduler.text().strip(),
            solver=self.solver.currentText(),
            engine=self.engine.currentText(),
            options=options,
            calibration=self.calibration.currentData(),
            ties=self.ties.currentText(),
            tuning_score=self.tuning_score.currentData(),
            tuning_rule=self.tuning_rule.currentData(),
            pair_tuning=self.pair_tuning.currentData(),
            intervals=self.intervals.isChecked() and self.intervals.isEnabled(),
        )
        return s.validate()

    def compare_requested(self) -> bool:
        return self.compare.isChecked() and self.compare.isEnabled()

    # ------------------------------------------------------------------------- helpers
    def _toggle_advanced(self, on: bool) -> None:
        self.advanced.setVisible(on)
        self.advanced_button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)

    def _set_row_visible(self, widget: QWidget, visible: bool) -> None:
        self._form.setRowVisible(widget, visible)

    def _update_visibility(self) -> None:
        kernel = self.kernel.currentText()
        self._set_row_visible(self.sigmas, kernel == "rbf")
        for w in (self.degree, self.coef0, self.poly_gamma):
            self._set_row_visible(w, kernel == "poly")
        name = self.scheme.currentData() or ""
        joint = name.startswith("joint")
        self._set_row_visible(self.joint_n, joint)
        self._set_row_visible(self.joint_label, joint)
        self._set_row_visible(self.n_weights, not joint)
        self._set_row_visible(self.resolution, not joint)
        self._set_row_visible(self.engine, not joint)
        N = self.joint_n.value()
        self.joint_label.setText(f"d\u03c0 = 1/{N} = {1 / N:.3g}: p-hat on a 1/{N} grid")
        M = None if self.n_weights.value() == 1 else self.n_weights.value()
        self.resolution.setText(resolution_note(M, self._n_train, self.engine.currentText()))
        scheme = SCHEMES.get(name)
        self.scheme_info.setText(scheme.description if scheme else "")
        self.compare.setEnabled(self._n_classes == 2 and name != "noncrossing")
        calibrated = self.calibration.currentData() != "none"  # None: the default, auto
        self.intervals.setEnabled(name == "binary" and calibrated)
        mode = self.tuning.currentText()
        self._update_split_fields(name, mode)
        self._update_pair_tuning(name, mode)

    def _update_split_fields(self, scheme: str, mode: str) -> None:
        """Show the tune fraction and CV folds where the tuning mode reads them; under
        "auto", which ignores both, show them disabled with what auto does instead."""
        shape = RunSettings(scheme=scheme, tuning=mode, pair_tuning=self.pair_tuning.currentData())
        read = split_settings_read(shape)
        auto = mode == "auto"
        note = _auto_text(shape, self._n_classes) if auto else ""
        for name, widget in (("tune_fraction", self.tune_fraction), ("cv_folds", self.cv_folds)):
            self._set_row_visible(widget, auto or name in read)
            widget.setEnabled(name in read)
            widget.setToolTip(f"{TIPS[name]}.\nNow: {f'not used: {note}' if auto else 'used'}")
        self._set_row_visible(self.split_note, auto)
        self.split_note.setText(note)

    def _update_pair_tuning(self, scheme: str, mode: str) -> None:
        """Show the pair tuning for a pair scheme on 3+ classes; enable it, and say what it
        sets, where the tuning mode and the grids leave it something to set."""
        shown = is_pair_scheme(scheme) and self._n_classes >= 3
        self._set_row_visible(self.pair_tuning, shown)
        self._set_row_visible(self.pair_note, shown)
        if not shown:
            return
        shape = RunSettings(  # what decides it: the mode, and whether grids are given
            scheme=scheme,
            kernel=self.kernel.currentText(),
            tuning=mode,
            lambdas=[1.0] if _grid_given(self.lambdas) else None,
            sigmas=[1.0] if _grid_given(self.sigmas) else None,
        )
        decides = pair_tuning_decides(shape, self._n_classes)
        self.pair_tuning.setEnabled(bool(decides))
        if decides:
            names = [PAIR_TUNING_SETS[d] for d in decides]
            what = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
            every = 3 if shape.kernel == "rbf" else 2  # sigma only with the RBF kernel
            text = f"sets {what}" + ("" if len(decides) == every else "; the rest is set above")
        else:
            text = (
                "no effect: the split and the grids are set above (as the quick preset sets "
                "them); tuning auto or a blank grid lets it choose"
            )
        self.pair_note.setText(text)
        self.pair_tuning.setToolTip(f"{TIPS['pair_tuning']}.\nNow: {text}")

    def _on_change(self, *_args) -> None:
        if self._programmatic:
            return
        if self.sender() is self.scheme and self.preset_name() != CUSTOM:
            # a new scheme under a preset: the preset's settings for it
            self._update_visibility()
            self.apply_preset(self.preset_name())
            return
        self._set_preset_label(CUSTOM)
        self._update_visibility()
        self.changed.emit()


#: Tooltips of the pair tuning's entries, in the combo's order (default, folds, holdout).
PAIR_TUNING_TIPS = (
    "The library's default: folds",
    "3 stratified folds over the coarse grid C \u2208 {0.1, 1, 10, 100} \u00d7 \u03c3 \u2208 "
    "{0.25, 0.5, 1, 1.5} \u03c3_M (16 cells); the recalibration cross-fits on the same folds",
    "A 30% hold-out over the full grid, 7 C \u00d7 6 \u03c3 (as One-vs-All; the pair "
    "schemes' default before)",
)
#: What :func:`pair_tuning_decides` names, in the panel's words.
PAIR_TUNING_SETS = {
    "split": "the split",
    "lambda grid": "the \u03bb grid",
    "sigma grid": "the \u03c3 grid",
}


def _auto_text(shape: RunSettings, n_classes: int) -> str:
    """The split note under tuning "auto" (:func:`~wsvmgui.app.schemes.auto_split`)."""
    return (
        f"tuning auto: {auto_split(shape, n_classes)}; the fraction and the folds apply to "
        "tuning split and cv"
    )


def _grid_given(edit: QLineEdit) -> bool:
    """Whether a grid field holds values (a text that does not parse counts: it is not
    blank, and :meth:`SettingsPanel.settings` names the problem)."""
    try:
        return parse_grid(edit.text(), "grid") is not None
    except InputError:
        return True


def _choices(names: tuple[str, ...]) -> QComboBox:
    """A combo of ``names`` after "default" (None: the estimator's own default)."""
    combo = QComboBox()
    combo.addItem("default", None)
    for name in names:
        combo.addItem(name, name)
    return combo
