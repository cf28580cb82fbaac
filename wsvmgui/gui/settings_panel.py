"""The run settings panel, bound to :class:`wsvmgui.app.settings.RunSettings`.

Every scheme of :data:`wsvmgui.app.schemes.SCHEMES` is listed; an unavailable one (or a
binary-only one when the data hold more than two classes) is disabled with the reason as
its tooltip.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from ..app.schemes import SCHEMES
from ..app.settings import TUNING_MODES, RunSettings
from ..errors import InputError
from ..ladder.rules import RULES
from ..solvers.kernels import KERNELS
from ..solvers.wsvm import SOLVERS


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


class SettingsPanel(QWidget):
    """Form for one :class:`RunSettings`.

    Signals
    -------
    changed()
        Any field was edited.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.scheme = QComboBox()
        model = QStandardItemModel(self.scheme)
        self.scheme.setModel(model)
        self._sync_schemes()
        self.scheme_info = QLabel("")
        self.scheme_info.setWordWrap(True)
        self.scheme_info.setStyleSheet("color: #555;")
        self.kernel = QComboBox()
        self.kernel.addItems(list(KERNELS))
        self.sigmas = QLineEdit()
        self.sigmas.setPlaceholderText("auto: (0.25 \u2026 1.5) \u00d7 \u03c3_M")
        self.sigmas.setToolTip("RBF widths to tune over, separated by commas; blank = default")
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
        self.n_weights.setToolTip("M: the ladder fits the weights m/M, m = 1..M-1 (auto: by n)")
        self.joint_n = QSpinBox()
        self.joint_n.setRange(3, 200)
        self.joint_n.setToolTip("N of the joint simplex grid: d\u03c0 = 1/N")
        self.joint_label = QLabel("")
        self.lambdas = QLineEdit()
        self.lambdas.setPlaceholderText("auto: 1/(2 n C), C = 0.1 \u2026 100")
        self.lambdas.setToolTip(
            "Penalties \u03bb to tune over, separated by commas; one value "
            "fixes \u03bb; blank = default"
        )
        self.rule = QComboBox()
        self.rule.addItems(list(RULES))
        self.tuning = QComboBox()
        self.tuning.addItems(list(TUNING_MODES))
        self.tuning.setToolTip(
            "auto: cross-validation for small data, a split for large; "
            "split: a share of the training rows; cv: k-fold "
            "cross-validation; tune-set: the data's tuning part"
        )
        self.tune_fraction = QDoubleSpinBox()
        self.tune_fraction.setRange(0.05, 0.9)
        self.tune_fraction.setSingleStep(0.05)
        self.cv_folds = QSpinBox()
        self.cv_folds.setRange(2, 20)
        self.cv_folds.setToolTip("Folds of cross-validated tuning")
        self.refit = QCheckBox("refit on training + tuning rows")
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
        self.options = QLineEdit()
        self.options.setPlaceholderText('{} e.g. {"learner": "svm"}')
        self.options.setToolTip("Scheme-specific options as a JSON object")
        self.compare = QCheckBox("side by side with non-crossing (K = 2)")
        self.compare.setToolTip("Also fit the non-crossing ladder and draw both boundary sets")

        form.addRow("Scheme", self.scheme)
        form.addRow("", self.scheme_info)
        form.addRow("Kernel", self.kernel)
        form.addRow("\u03c3 grid", self.sigmas)
        form.addRow("degree", self.degree)
        form.addRow("coef0", self.coef0)
        form.addRow("poly \u03b3", self.poly_gamma)
        form.addRow("weights M", self.n_weights)
        form.addRow("simplex N", self.joint_n)
        form.addRow("", self.joint_label)
        form.addRow("\u03bb grid", self.lambdas)
        form.addRow("rule", self.rule)
        form.addRow("tuning", self.tuning)
        form.addRow("tune fraction", self.tune_fraction)
        form.addRow("CV folds", self.cv_folds)
        form.addRow("", self.refit)
        form.addRow("seed", self.seed)
        form.addRow("workers", self.n_jobs)
        form.addRow("Dask scheduler", self.scheduler)
        form.addRow("solver", self.solver)
        form.addRow("options", self.options)
        form.addRow("", self.compare)
        self._form = form

        self._n_classes = 2
        self.set_settings(RunSettings())
        self.refresh_availability(2)
        for w in (self.scheme, self.kernel, self.rule, self.tuning, self.solver):
            w.currentIndexChanged.connect(self._on_change)
        for w in (self.degree, self.n_weights, self.joint_n, self.seed, self.n_jobs, self.cv_folds):
            w.valueChanged.connect(self._on_change)
        for w in (self.coef0, self.poly_gamma, self.tune_fraction):
            w.valueChanged.connect(self._on_change)
        for w in (self.sigmas, self.lambdas, self.options, self.scheduler):
            w.textChanged.connect(self._on_change)
        self.refit.toggled.connect(self._on_change)
        self.compare.toggled.connect(self._on_change)

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

    def refresh_availability(self, n_classes: int) -> None:
        """Enable the schemes that can run on data with ``n_classes`` classes."""
        self._n_classes = n_classes
        self._sync_schemes()
        model = self.scheme.model()
        for row, scheme in enumerate(SCHEMES.values()):
            item = model.item(row)
            ok, why = scheme.availability()
            if ok and n_classes > 2 and not scheme.multiclass:
                ok, why = False, f"handles two classes; the data hold {n_classes}"
            item.setEnabled(ok)
            item.setToolTip(scheme.description if ok else f"Unavailable: {why}")
        current = model.item(self.scheme.currentIndex())
        if current is not None and not current.isEnabled():
            for row in range(model.rowCount()):
                if model.item(row).isEnabled():
                    self.scheme.setCurrentIndex(row)
                    break
        self._update_visibility()

    def scheme_enabled(self, name: str) -> bool:
        self.refresh_availability(self._n_classes)
        row = self.scheme.findData(name)
        return row >= 0 and self.scheme.model().item(row).isEnabled()

    # ------------------------------------------------------------------------ binding
    def set_settings(self, s: RunSettings) -> None:
        self._sync_schemes()
        widgets = [self.scheme, self.kernel, self.rule, self.tuning, self.solver]
        for w in widgets:
            w.blockSignals(True)
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
        self.seed.setValue(s.seed)
        self.n_jobs.setValue(s.n_jobs)
        self.scheduler.setText(s.scheduler)
        self.solver.setCurrentText(s.solver)
        self.options.setText(json.dumps(s.options) if s.options else "")
        for w in widgets:
            w.blockSignals(False)
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
            seed=self.seed.value(),
            n_jobs=self.n_jobs.value(),
            scheduler=self.scheduler.text().strip(),
            solver=self.solver.currentText(),
            options=options,
        )
        return s.validate()

    def compare_requested(self) -> bool:
        return self.compare.isChecked() and self.compare.isEnabled()

    # ------------------------------------------------------------------------- helpers
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
        self.joint_label.setText(
            f"d\u03c0 = 1/{self.joint_n.value()} = {1 / self.joint_n.value():.3g}"
        )
        scheme = SCHEMES.get(name)
        self.scheme_info.setText(scheme.description if scheme else "")
        self.compare.setEnabled(self._n_classes == 2)
        mode = self.tuning.currentText()
        self._set_row_visible(self.tune_fraction, mode in ("auto", "split", "tune-set"))
        self._set_row_visible(self.cv_folds, mode in ("auto", "cv"))

    def _on_change(self, *_args) -> None:
        self._update_visibility()
        self.changed.emit()
