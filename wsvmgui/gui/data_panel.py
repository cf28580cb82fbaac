"""The data panel: built-in data sets or a CSV/TSV file, its columns, and the split.

One rule: what the panel shows is the data set in use.  A file that cannot be read, or a
column choice that does not make a data set, is reported through :attr:`DataPanel.error`
and the data, file name and columns shown before stay.  When a readable file's guessed
columns do not work, a dialog asks for the label and feature columns.  Before any new data
replace the old, :attr:`DataPanel.confirm_change` is asked (the main window asks the user
when a run is going); changing the number of points or the seed of a simulation reloads it
after a short pause.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QWidget,
)

from ..app.datasets import (
    DEFAULT_DESIGN_N,
    ColumnGuess,
    Dataset,
    DataSplit,
    builtin_label,
    builtin_names,
    dataset_from_table,
    guess_columns,
    guess_label,
    is_simulation,
    load_builtin,
    split_dataset,
    text_column_message,
)
from ..errors import InputError
from ..io.preprocessing import MissingValuesError

FILE_ITEM = "__file__"
#: The id choice "no id column" (rows are named by their numbers).
NO_ID = "(none: row numbers)"
#: Pause after the last change of n or seed before the simulation is drawn again (ms).
RELOAD_DELAY_MS = 500


class ElidedComboBox(QComboBox):
    """A combo box whose current text ends in "\u2026" where its width does not hold it
    (Qt cuts it off), with the whole text first in its tooltip; its list opens wide enough
    for the longest item.

    ``currentText()`` is the whole text; :meth:`shown_text` what is drawn.  The tooltip
    set with :meth:`setToolTip` follows the whole text when it is elided.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._about = ""
        self.currentTextChanged.connect(self._retip)

    def setToolTip(self, text: str) -> None:  # noqa: N802 - Qt override
        self._about = text
        self._retip()

    def _field_width(self) -> int:
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        return field.width()

    def shown_text(self) -> str:
        """The current text as drawn: whole, or its start and "\u2026"."""
        return self.fontMetrics().elidedText(
            self.currentText(), Qt.TextElideMode.ElideRight, max(self._field_width(), 0)
        )

    def _retip(self, *_args) -> None:
        full, about = self.currentText(), self._about
        cut = bool(full) and self.shown_text() != full
        super().setToolTip(f"{full}\n\n{about}" if cut and about else full if cut else about)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._retip()

    def showPopup(self) -> None:  # noqa: N802 - Qt override
        view = self.view()
        view.setMinimumWidth(view.sizeHintForColumn(0) + 2 * view.frameWidth() + 24)
        super().showPopup()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        option.currentText = self.shown_text()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)


class ColumnDialog(QDialog):
    """Choose the label, feature and id columns of a table.

    The id column names the rows in every export and is never a feature; the dialog
    proposes one (:func:`wsvmgui.app.datasets.guess_columns`) and says why.
    """

    def __init__(
        self,
        name: str,
        columns: list[str],
        label: str,
        parent=None,
        features: list[str] | None = None,
        id_column: str | None = None,
        notes: list[str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Columns of {name}")
        self.label = QComboBox()
        self.label.addItems(columns)
        self.label.setCurrentText(label)
        self.label.setToolTip("The column that holds the classes")
        self.id_column = QComboBox()
        self.id_column.addItem(NO_ID, None)
        for c in columns:
            self.id_column.addItem(c, c)
        self.id_column.setCurrentIndex(max(self.id_column.findData(id_column), 0))
        self.id_column.setToolTip(
            "A column that names the rows (a sample or patient id): carried into every "
            "export beside the probabilities, never used as a feature"
        )
        checked = set(features) if features is not None else set(columns)
        self.features = QListWidget()
        self.features.setToolTip("Checked columns are the features (numbers)")
        for c in columns:
            item = QListWidgetItem(c)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            on = c in checked and c not in (label, id_column)
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            self.features.addItem(item)
        self.note = QLabel(" ".join(notes or []))
        self.note.setWordWrap(True)
        self.note.setVisible(bool(notes))
        self.id_column.currentIndexChanged.connect(self._id_chosen)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(QLabel(f"<b>{name}</b>: choose the label, id and feature columns."))
        form.addRow("Label column", self.label)
        form.addRow("Id column", self.id_column)
        form.addRow(self.note)
        form.addRow("Features", self.features)
        form.addRow(buttons)

    def _id_chosen(self, _index: int) -> None:
        """The id column is no feature."""
        chosen = self.id_column.currentData()
        for i in range(self.features.count()):
            item = self.features.item(i)
            if item.text() == chosen:
                item.setCheckState(Qt.CheckState.Unchecked)

    def choice(self) -> tuple[str, list[str], str | None]:
        """The label, the features and the id column (None: none)."""
        label = self.label.currentText()
        id_column = self.id_column.currentData()
        features = [
            self.features.item(i).text()
            for i in range(self.features.count())
            if self.features.item(i).checkState() == Qt.CheckState.Checked
            and self.features.item(i).text() not in (label, id_column)
        ]
        return label, features, id_column


class DataPanel(QWidget):
    """Chooses the data set and how it is split.

    Signals
    -------
    dataset_changed(Dataset)
        New data are in use.
    error(message)
    open_requested()
        The user pressed "Open file..." (the main window shows the file dialog).
    file_loaded(path)
        A file was loaded (for the recent-files list).

    Attributes
    ----------
    confirm_change : callable
        ``confirm_change() -> bool`` asked before new data replace the old.
    """

    dataset_changed = Signal(object)
    error = Signal(str)
    open_requested = Signal()
    file_loaded = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.confirm_change: Callable[[], bool] = lambda: True
        self.source = ElidedComboBox()
        for name in builtin_names():
            self.source.addItem(builtin_label(name), name)
        self.source.setToolTip(
            "Built-in data sets: a demo, simulation designs whose true probabilities are "
            "known, and scikit-learn's tables; or an opened file"
        )
        self.source.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.source.setMinimumContentsLength(14)
        self.open_button = QPushButton("Open CSV/TSV\u2026")
        self.open_button.setToolTip("Read a table of numbers with a label column (Ctrl+O)")
        self.n_points = QSpinBox()
        self.n_points.setRange(20, 100000)
        self.n_points.setValue(DEFAULT_DESIGN_N)
        self.n_points.setToolTip("Points drawn from the simulation design (applied at once)")
        self.data_seed = QSpinBox()
        self.data_seed.setRange(0, 2**31 - 1)
        self.data_seed.setToolTip("Seed of the simulation draw (applied at once)")
        self.label_column = QLabel("")
        self.label_column.setToolTip("The column that holds the classes")
        self.label_column.setWordWrap(True)  # "label (30 features, id sample_id)" > the dock
        self.label_column.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.missing = QComboBox()
        self.missing.addItems(["error", "drop", "impute"])
        self.missing.setToolTip(
            "Rows with a missing feature value (an empty cell, NA, NaN, ...): refuse the "
            "file and name the first one (error), leave those rows out (drop), or fill "
            "the gaps with the training part's medians (impute)"
        )
        self.columns_button = QPushButton("Columns\u2026")
        self.columns_button.setToolTip("Choose the label and feature columns of the file")
        self.standardise = QCheckBox("standardise features")
        self.standardise.setChecked(True)
        self.standardise.setToolTip(
            "Centre and scale every feature by the training part's mean and standard "
            "deviation before fitting (plots stay in the original units)"
        )
        self.test_fraction = QDoubleSpinBox()
        self.test_fraction.setRange(0.0, 0.8)
        self.test_fraction.setSingleStep(0.05)
        self.test_fraction.setValue(0.3)
        self.test_fraction.setToolTip(
            "Share of rows held out as the test part (measures and calibration use it)"
        )
        self.summary = QLabel("")
        self.summary.setWordWrap(True)

        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Data", self.source)
        form.addRow("Points n", self.n_points)
        form.addRow("Draw seed", self.data_seed)
        form.addRow("", self.open_button)
        cols = QHBoxLayout()
        cols.setContentsMargins(0, 0, 0, 0)
        cols.addWidget(self.label_column, 1)
        cols.addWidget(self.columns_button)
        self._cols_row = QWidget()
        self._cols_row.setLayout(cols)
        form.addRow("Label", self._cols_row)
        form.addRow("Missing values", self.missing)
        form.addRow("", self.standardise)
        form.addRow("Test fraction", self.test_fraction)
        form.addRow(self.summary)
        self._form = form

        self.dataset: Dataset | None = None
        self.path: str | None = None
        self.columns: list[str] = []
        self.label: str | None = None
        self.features: list[str] = []
        self.id_column: str | None = None
        #: What the last load decided about the columns (id proposed, ...), one sentence each.
        self.load_notes: list[str] = []
        self.pending_dialog: ColumnDialog | None = None
        self._pending_file: tuple[str, str | None, list[str] | None, str | None] | None = None
        self._reload = QTimer(self)
        self._reload.setSingleShot(True)
        self._reload.setInterval(RELOAD_DELAY_MS)
        self._reload.timeout.connect(self._reload_simulation)
        self._shown_source = self.source.currentData()
        self._update_rows()
        self.source.activated.connect(self._source_chosen)
        self.open_button.clicked.connect(self.open_requested)
        self.columns_button.clicked.connect(self.choose_columns)
        self.missing.activated.connect(self._missing_chosen)
        self.n_points.valueChanged.connect(self._simulation_edited)
        self.data_seed.valueChanged.connect(self._simulation_edited)

    # -------------------------------------------------------------------------- built-in
    def load_builtin(self, name: str) -> bool:
        """Load a built-in data set; False (and an error signal) if it fails or is declined."""
        try:
            ds = load_builtin(name, n=self.n_points.value(), seed=self.data_seed.value())
        except (InputError, OSError) as exc:
            self.error.emit(f"Could not load {name}: {exc}")
            self._show_source()
            return False
        if not self._accept(ds):
            return False
        self.path = None
        self.columns, self.label, self.features, self.id_column = [], None, [], None
        self.load_notes = []
        self._pending_file = None
        self._shown_source = name
        self._show_source()
        return True

    def _source_chosen(self, *_args) -> None:
        name = self.source.currentData()
        if name == FILE_ITEM:
            if self.path and self._shown_source != FILE_ITEM:
                self.open_file(self.path, self.label, self.features, self.id_column)
            return
        if name != self._shown_source or self.path is not None:
            self.load_builtin(name)

    def _simulation_edited(self, *_args) -> None:
        if is_simulation(self._shown_source or ""):
            self.summary.setText(
                f"{self.dataset.summary() if self.dataset else ''} "
                f"(drawing n = {self.n_points.value()}, seed {self.data_seed.value()}\u2026)"
            )
            self._reload.start()

    def _reload_simulation(self) -> None:
        name = self._shown_source or ""
        if is_simulation(name) and not self.load_builtin(name):
            self._set_summary()

    def reload_pending(self) -> bool:
        """A change of n or seed waits for its reload."""
        return self._reload.isActive()

    def discard_pending(self) -> None:
        """Forget a pending reload (the caller loads the data itself)."""
        self._reload.stop()

    def apply_pending(self) -> None:
        """Reload now if n or seed changed (before a run)."""
        if self._reload.isActive():
            self._reload.stop()
            self._reload_simulation()

    # ------------------------------------------------------------------------------ files
    def open_file(
        self,
        path: str,
        label: str | None = None,
        features: list[str] | None = None,
        id_column: str | None = None,
    ) -> bool:
        """Read a CSV/TSV file with the given (or guessed) label, feature and id columns.

        Without ``features`` the columns are guessed (:func:`guess_columns`): a column
        named like an id, or holding integers that step by one, becomes the rows' id and
        not a feature, with a note (:attr:`load_notes`).  On failure the data set, file
        and columns in use stay and an error is signalled; when the file is readable but
        the columns are not usable, a column dialog opens (without blocking).
        """
        from ..io.tables import read_table

        name = os.path.basename(path)
        try:
            table = read_table(path)
        except (InputError, OSError) as exc:
            self.error.emit(f"Could not open {name}. {exc}")
            return False
        columns = [str(c) for c in table.columns]
        guess: ColumnGuess | None = None
        if features is None:
            guess = guess_columns(table, label)
            chosen_label, chosen, id_column = guess.label, guess.features, guess.id_column
            notes = guess.notes
        else:
            chosen_label = label if label in columns else guess_label(columns)
            chosen = [c for c in features if c in columns and c not in (chosen_label, id_column)]
            id_column = id_column if id_column in columns else None
            notes = []
        text = guess.text if guess is not None else {}
        if text:
            self._refuse_text(path, table, columns, chosen_label, chosen, id_column, text)
            return False
        try:
            ds = dataset_from_table(
                path, chosen_label, chosen, self.missing.currentText(), (), id_column, table
            )
        except MissingValuesError as exc:
            self.error.emit(
                f"{exc}. The data in use did not change; choose drop or impute under "
                "Missing values."
            )
            self._pending_file = (path, chosen_label, chosen, id_column)
            self._show_missing_row(True)
            return False
        except InputError as exc:
            text = guess_columns(table, chosen_label).text
            text = {c: v for c, v in text.items() if c in chosen}
            if text:
                self._refuse_text(path, table, columns, chosen_label, chosen, id_column, text)
                return False
            self.error.emit(
                f"{name}: {exc}. The data in use did not change; choose the label and "
                "feature columns."
            )
            self._ask_columns(path, columns, chosen_label, chosen, id_column)
            return False
        if not self._accept(ds, notes):
            return False
        self.path = path
        self.columns, self.label, self.features = columns, chosen_label, chosen
        self.id_column = id_column
        self._pending_file = None
        self._shown_source = FILE_ITEM
        self._show_source()
        self.file_loaded.emit(path)
        return True

    def _refuse_text(
        self,
        path: str,
        table,
        columns: list[str],
        label: str,
        chosen: list[str],
        id_column: str | None,
        text: dict[str, tuple[int, str]],
    ) -> None:
        """Chosen features that hold text: say which and ask (proposing an id)."""
        first = next(iter(text))
        row, cell = text[first]
        unique = len(set(table.column(first))) == table.shape[0]
        self.error.emit(
            f"{os.path.basename(path)}: {text_column_message(first, row, cell, unique)}. "
            "The data in use did not change; choose the columns."
        )
        if id_column is None and unique:
            id_column = first
        features = [c for c in chosen if c not in text]
        note = [f"Column {first!r} holds text: it can be the id column, not a feature."]
        self._ask_columns(path, columns, label, features, id_column, note)

    def _missing_chosen(self, *_args) -> None:
        """Read the file again with the new choice: the one that failed for missing
        values, else the file in use."""
        target = self._pending_file
        if target is None and self.path and self._shown_source == FILE_ITEM:
            target = (self.path, self.label, self.features, self.id_column)
        if target is None:
            return
        if not self.open_file(*target):
            # the data in use stay, with the choice they were read with
            self.missing.setCurrentText(self.missing_choice())

    def missing_choice(self) -> str:
        """The missing-value choice of the data in use ("error" for built-in data)."""
        return self.dataset.missing if self.dataset is not None else "error"

    def set_options(self, missing: str, standardise: bool) -> None:
        """Show the preprocessing choices of loaded settings (they apply to the next load
        and split)."""
        self.missing.setCurrentText(missing)
        self.standardise.setChecked(standardise)

    def choose_columns(self) -> None:
        """Open the column dialog for the file in use."""
        if self.path:
            label = self.label or guess_label(self.columns)
            self._ask_columns(self.path, self.columns, label, self.features, self.id_column)

    def _ask_columns(
        self,
        path: str,
        columns: list[str],
        label: str,
        features: list[str] | None = None,
        id_column: str | None = None,
        notes: list[str] | None = None,
    ) -> None:
        dialog = ColumnDialog(
            os.path.basename(path), columns, label, self, features, id_column, notes
        )
        self.pending_dialog = dialog

        def done(code: int) -> None:
            self.pending_dialog = None
            if code == QDialog.DialogCode.Accepted:
                chosen_label, chosen, chosen_id = dialog.choice()
                if not chosen:
                    self.error.emit("Bad column choice: choose at least one feature column")
                    return
                self.open_file(path, chosen_label, chosen, chosen_id)
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def apply_columns(self, label: str, features: list[str], id_column: str | None = None) -> bool:
        """Use other columns of the file in use (an error message if they do not work)."""
        if not self.path:
            return False
        if not features:
            self.error.emit("Bad column choice: choose at least one feature column")
            return False
        try:
            ds = dataset_from_table(
                self.path, label, features, self.missing.currentText(), (), id_column
            )
        except (InputError, OSError) as exc:
            self.error.emit(f"Bad column choice: {exc}")
            return False
        if not self._accept(ds):
            return False
        self.label, self.features, self.id_column = label, list(features), id_column
        self._show_source()
        return True

    # ----------------------------------------------------------------------------- state
    def _accept(self, ds: Dataset, notes: list[str] | None = None) -> bool:
        """Make ``ds`` the data in use if the main window agrees; emits dataset_changed
        (``notes``, what the load decided about the columns, are :attr:`load_notes`)."""
        if not self.confirm_change():
            self._show_source()
            return False
        self.dataset = ds
        self.load_notes = list(notes or [])
        self.dataset_changed.emit(ds)
        return True

    def _show_source(self) -> None:
        """Show the source, file and columns of the data in use."""
        if self._shown_source == FILE_ITEM and self.path:
            row = self.source.findData(FILE_ITEM)
            text = f"File: {os.path.basename(self.path)}"
            if row < 0:
                self.source.addItem(text, FILE_ITEM)
                row = self.source.count() - 1
            else:
                self.source.setItemText(row, text)
            self.source.setItemData(row, self.path, Qt.ItemDataRole.ToolTipRole)
        else:
            row = self.source.findData(self._shown_source)
        if row >= 0:
            self.source.setCurrentIndex(row)
        self._update_rows()
        self._set_summary()

    def _set_summary(self) -> None:
        self.summary.setText(self.dataset.summary() if self.dataset is not None else "")

    def _show_missing_row(self, show: bool) -> None:
        self._form.setRowVisible(self.missing, show)

    def _update_rows(self) -> None:
        file_mode = self._shown_source == FILE_ITEM and bool(self.path)
        self._form.setRowVisible(self._cols_row, file_mode)
        self._show_missing_row(file_mode or self.missing.currentText() != "error")
        if file_mode:
            named = f", id {self.id_column}" if self.id_column else ""
            self.label_column.setText(f"{self.label} ({len(self.features)} features{named})")
        sim = is_simulation(self._shown_source or "")
        self._form.setRowVisible(self.n_points, sim)
        self._form.setRowVisible(self.data_seed, sim)

    def source_reference(self) -> dict:
        """Where the data in use come from (for sessions)."""
        if self._shown_source == FILE_ITEM and self.path:
            return {
                "kind": "file",
                "path": os.path.abspath(self.path),
                "label": self.label,
                "features": list(self.features),
                "id": self.id_column,
                "missing": self.missing_choice(),
            }
        ref = {"kind": "builtin", "name": self._shown_source}
        if is_simulation(self._shown_source or ""):
            ref.update(n=self.n_points.value(), seed=self.data_seed.value())
        return ref

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
