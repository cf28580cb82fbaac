"""The data panel: built-in data sets or a CSV/TSV file, its columns, and the split.

A file that cannot be read, or a column choice that does not make a data set, is reported
through :attr:`DataPanel.error` and the data loaded before stay in place.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QWidget,
)

from ..app.datasets import (
    DEFAULT_DESIGN_N,
    Dataset,
    DataSplit,
    builtin_label,
    builtin_names,
    dataset_from_table,
    is_simulation,
    load_builtin,
    split_dataset,
)
from ..errors import InputError

FILE_ITEM = "__file__"
LABEL_GUESSES = ("label", "labels", "class", "y", "target", "species")


class DataPanel(QWidget):
    """Chooses the data set and how it is split.

    Signals
    -------
    dataset_changed(Dataset)
    error(message)
    open_requested()
        The user pressed "Open file..." (the main window shows the file dialog).
    """

    dataset_changed = Signal(object)
    error = Signal(str)
    open_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = QComboBox()
        for name in builtin_names():
            self.source.addItem(builtin_label(name), name)
        self.source.setToolTip("Built-in data sets; simulation designs know the true probabilities")
        self.open_button = QPushButton("Open CSV/TSV\u2026")
        self.n_points = QSpinBox()
        self.n_points.setRange(20, 100000)
        self.n_points.setValue(DEFAULT_DESIGN_N)
        self.n_points.setToolTip("Points drawn from the simulation design")
        self.data_seed = QSpinBox()
        self.data_seed.setRange(0, 2**31 - 1)
        self.data_seed.setToolTip("Seed of the simulation draw")
        self.load_button = QPushButton("Load")
        self.label_column = QComboBox()
        self.features = QListWidget()
        self.features.setMaximumHeight(110)
        self.features.setToolTip("Feature columns (checked ones are used)")
        self.apply_button = QPushButton("Use these columns")
        self.standardise = QCheckBox("standardise features (training mean and sd)")
        self.test_fraction = QDoubleSpinBox()
        self.test_fraction.setRange(0.0, 0.8)
        self.test_fraction.setSingleStep(0.05)
        self.test_fraction.setValue(0.3)
        self.test_fraction.setToolTip("Share of rows held out as the test part")
        self.summary = QLabel("")
        self.summary.setWordWrap(True)

        form = QFormLayout(self)
        row = QHBoxLayout()
        row.addWidget(self.source, 1)
        form.addRow("Data", row)
        sim = QHBoxLayout()
        sim.addWidget(QLabel("n"))
        sim.addWidget(self.n_points)
        sim.addWidget(QLabel("seed"))
        sim.addWidget(self.data_seed)
        sim.addWidget(self.load_button)
        form.addRow("", sim)
        form.addRow("", self.open_button)
        form.addRow("Label column", self.label_column)
        form.addRow("Features", self.features)
        form.addRow("", self.apply_button)
        form.addRow("", self.standardise)
        form.addRow("Test fraction", self.test_fraction)
        form.addRow(self.summary)
        self._form = form

        self.dataset: Dataset | None = None
        self.path: str | None = None
        self._frame_columns: list[str] = []
        self._set_file_mode(False)
        self.source.activated.connect(self._source_chosen)
        self.load_button.clicked.connect(self._source_chosen)
        self.open_button.clicked.connect(self.open_requested)
        self.apply_button.clicked.connect(self.apply_columns)

    # -------------------------------------------------------------------------- built-in
    def load_builtin(self, name: str) -> bool:
        """Load a built-in data set; False (and an error signal) if it fails."""
        try:
            ds = load_builtin(name, n=self.n_points.value(), seed=self.data_seed.value())
        except (InputError, OSError) as exc:
            self.error.emit(f"Could not load {name}: {exc}")
            return False
        row = self.source.findData(name)
        if row >= 0:
            self.source.setCurrentIndex(row)
        self.path = None
        self._set_file_mode(False)
        self._set_dataset(ds)
        return True

    def _source_chosen(self, *_args) -> None:
        name = self.source.currentData()
        if name == FILE_ITEM:
            if self.path:
                self.open_file(self.path)
            return
        self.load_builtin(name)

    # ------------------------------------------------------------------------------ files
    def open_file(self, path: str) -> bool:
        """Read a CSV/TSV file, guess its label column and use every other column.

        On failure the previous data set stays and an error is signalled.
        """
        from ..io.tables import read_table

        try:
            frame = read_table(path)
        except (InputError, OSError) as exc:
            self.error.emit(f"Could not open the file. {exc}")
            return False
        columns = list(frame.columns)
        label = next((c for c in columns if c.lower() in LABEL_GUESSES), columns[-1])
        try:
            ds = dataset_from_table(path, label, [c for c in columns if c != label])
        except InputError as exc:
            # The table is readable but the guessed columns are not usable: let the user
            # choose, and keep the data set loaded before.
            self._show_columns(path, columns, label)
            self.error.emit(
                f"{os.path.basename(path)}: {exc}. Choose the label and feature "
                "columns, then press \u201cUse these columns\u201d."
            )
            return False
        self._show_columns(path, columns, label)
        self._set_dataset(ds)
        return True

    def apply_columns(self) -> bool:
        """Rebuild the data set from the file with the chosen label and feature columns."""
        if not self.path:
            return False
        label = self.label_column.currentText()
        features = [
            self.features.item(i).text()
            for i in range(self.features.count())
            if self.features.item(i).checkState() == Qt.CheckState.Checked
            and self.features.item(i).text() != label
        ]
        try:
            ds = dataset_from_table(self.path, label, features)
        except (InputError, OSError) as exc:
            self.error.emit(f"Bad column choice: {exc}")
            return False
        self._set_dataset(ds)
        return True

    def _show_columns(self, path: str, columns: list[str], label: str) -> None:
        self.path = path
        self._frame_columns = columns
        row = self.source.findData(FILE_ITEM)
        text = f"File: {os.path.basename(path)}"
        if row < 0:
            self.source.addItem(text, FILE_ITEM)
            row = self.source.count() - 1
        else:
            self.source.setItemText(row, text)
        self.source.setCurrentIndex(row)
        self.label_column.clear()
        self.label_column.addItems(columns)
        self.label_column.setCurrentText(label)
        self.features.clear()
        for c in columns:
            item = QListWidgetItem(c)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if c == label else Qt.CheckState.Checked)
            self.features.addItem(item)
        self._set_file_mode(True)

    # ----------------------------------------------------------------------------- state
    def _set_file_mode(self, on: bool) -> None:
        for w in (self.label_column, self.features, self.apply_button):
            self._form.setRowVisible(w, on)
        sim = is_simulation(self.source.currentData() or "")
        for w in (self.n_points, self.data_seed):
            w.setEnabled(sim and not on)

    def _set_dataset(self, ds: Dataset) -> None:
        self.dataset = ds
        self.summary.setText(ds.summary())
        self._set_file_mode(self.path is not None and self.source.currentData() == FILE_ITEM)
        self.dataset_changed.emit(ds)

    def make_split(self, tune_fraction: float, seed: int) -> DataSplit:
        """Split the current data set (InputError if there is none or it cannot be split)."""
        if self.dataset is None:
            raise InputError("no data loaded")
        return split_dataset(
            self.dataset,
            tune_fraction,
            self.test_fraction.value(),
            seed,
            self.standardise.isChecked(),
        )
