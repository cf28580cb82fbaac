"""The menus and the toolbar of the main window, as a table.

Each row of :data:`ACTIONS` is one menu entry: where it goes, its text, shortcut and tip,
and the method it calls, named by its path from the window (``"files.export_csv_dialog"``
is ``window.files.export_csv_dialog``).  The path is looked up when the entry is
triggered, so the table can be built before the helpers it names exist and a test can
replace a method.  :func:`build_actions` makes the menus, the toolbar and one QAction per
named row; ``window.actions["run"]`` is the Run entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

Key = str | QKeySequence.StandardKey
MENUS = ("File", "Edit", "View", "Run", "Help")
#: The view tabs, in order (View menu entries with Ctrl+1 ... Ctrl+5).
VIEW_TITLES = ("Boundaries", "Simplex and ladders", "Probabilities", "Calibration", "Results")


@dataclass(frozen=True)
class Entry:
    """One menu entry (a QAction).

    Attributes
    ----------
    menu : str
        ``"File"`` or a submenu path ``"File/Settings"``.
    text : str
    slot : str
        Path of the method from the window, called with ``args`` when triggered.
    name : str
        Key of the action in ``window.actions`` ("" for an entry nothing else needs).
    key : str or QKeySequence.StandardKey, optional
    tip : str
        Tooltip and status tip (default: the text).
    args : tuple
    toolbar : bool
        Also on the toolbar.
    enabled : bool
        Enabled at start.
    """

    menu: str
    text: str
    slot: str
    name: str = ""
    key: Key | None = None
    tip: str = ""
    args: tuple[Any, ...] = ()
    toolbar: bool = False
    enabled: bool = True


@dataclass(frozen=True)
class Separator:
    """A separator in ``menu`` ("" for none) and on the toolbar when ``toolbar``."""

    menu: str
    toolbar: bool = False


@dataclass(frozen=True)
class Submenu:
    """An empty submenu that its owner fills (``window.menus[path]``), e.g. recent files."""

    path: str


@dataclass(frozen=True)
class Toggle:
    """The show/hide action of a dock or toolbar: ``window.<target>.toggleViewAction()``."""

    menu: str
    target: str


Item = Entry | Separator | Submenu | Toggle

ACTIONS: tuple[Item, ...] = (
    # File
    Entry(
        "File",
        "Open data\u2026",
        "files.open_file_dialog",
        "open",
        QKeySequence.StandardKey.Open,
        "Read a CSV/TSV table (Ctrl+O); or drop it on the window",
        toolbar=True,
    ),
    Submenu("File/Open recent"),
    Entry(
        "File",
        "Choose columns\u2026",
        "data_panel.choose_columns",
        "columns",
        tip="The label and feature columns of the file in use",
    ),
    Separator("File"),
    Entry(
        "File",
        "Open session\u2026",
        "sessions.open_session_dialog",
        "open_session",
        "Ctrl+Shift+O",
        "Reopen a saved session: data, settings, view; runs it again",
    ),
    Entry(
        "File",
        "Save session\u2026",
        "sessions.save_session_dialog",
        "save_session",
        QKeySequence.StandardKey.Save,
        "Save the data reference, settings, view and results",
    ),
    Separator("File"),
    Entry(
        "File",
        "Export probabilities\u2026",
        "files.export_csv_dialog",
        "export_csv",
        "Ctrl+E",
        "Probabilities, labels and brackets of the shown result as CSV (Ctrl+E)",
        enabled=False,
    ),
    Entry(
        "File",
        "Export plot\u2026",
        "files.export_plot_dialog",
        "export_plot",
        "Ctrl+Shift+E",
        "The current view as PNG or SVG (Ctrl+Shift+E)",
        toolbar=True,
    ),
    Separator("File"),
    Entry(
        "File",
        "Save model\u2026",
        "files.save_model_dialog",
        "save_model",
        tip="The fitted model of the shown result as a model file (.wsvm, no code)",
        enabled=False,
    ),
    Entry(
        "File",
        "Load model\u2026",
        "files.load_model_dialog",
        "load_model",
        tip="Read a model file to score new data with it",
    ),
    Entry(
        "File",
        "Score a file\u2026",
        "files.score_file_dialog",
        "score",
        tip="Probabilities of a new table's rows from the loaded (or shown) model, as CSV",
    ),
    Entry("File/Settings", "Save settings\u2026", "files.save_settings_dialog"),
    Entry("File/Settings", "Load settings\u2026", "files.load_settings_dialog"),
    Separator("File"),
    Entry("File", "Quit", "close", key="Ctrl+Q"),
    # Edit
    Entry(
        "Edit",
        "Copy plot",
        "files.copy_plot",
        "copy",
        QKeySequence.StandardKey.Copy,
        "Copy the current view as an image (Ctrl+C)",
    ),
    Entry(
        "Edit",
        "Copy selected point",
        "files.copy_selected",
        "copy_row",
        "Ctrl+Shift+C",
        "Copy the selected point's probabilities as text",
    ),
    Separator("Edit"),
    Entry(
        "Edit",
        "Quick preset",
        "settings_panel.apply_preset",
        tip="Settings that run in seconds on the built-in data",
        args=("quick",),
    ),
    # View
    *(
        Entry("View", title, "deck.show_tab", key=f"Ctrl+{i + 1}", args=(i,))
        for i, title in enumerate(VIEW_TITLES)
    ),
    Separator("View"),
    Toggle("View", "left_dock"),
    Toggle("View", "message_dock"),
    Toggle("View", "toolbar"),
    # Run
    Separator("", toolbar=True),
    Entry("Run", "Run", "start_run", "run", "Ctrl+R", "Fit and show (Ctrl+R)", toolbar=True),
    Entry(
        "Run",
        "Cancel",
        "cancel_run",
        "cancel",
        "Esc",
        "Stop the run (Esc)",
        toolbar=True,
        enabled=False,
    ),
    Separator("Run"),
    Entry(
        "Run",
        "Fit baselines again",
        "runs.request_baselines",
        "baselines",
        tip="Logistic regression, SVC + Platt scaling and k nearest neighbours",
    ),
    # Help
    Entry("Help", "User guide", "show_guide", key=QKeySequence.StandardKey.HelpContents),
    Entry("Help", "About wsvmgui", "show_about"),
)


def resolve(root: object, path: str) -> Any:
    """``root.a.b`` for ``path = "a.b"``."""
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _caller(window: QMainWindow, entry: Entry) -> Callable[[], None]:
    def call(*_checked: object) -> None:
        resolve(window, entry.slot)(*entry.args)

    return call


def build_actions(
    window: QMainWindow, toolbar: QToolBar, items: tuple[Item, ...] = ACTIONS
) -> tuple[dict[str, QAction], dict[str, QMenu]]:
    """Make ``items``' menus (in the window's menu bar), toolbar entries and actions.

    Returns
    -------
    actions : dict
        Entry name -> QAction (named entries only).
    menus : dict
        Menu path ("File", "File/Open recent") -> QMenu.
    """
    bar = window.menuBar()
    menus: dict[str, QMenu] = {name: bar.addMenu(f"&{name}") for name in MENUS}

    def menu(path: str) -> QMenu:
        if path not in menus:
            parent, _, title = path.rpartition("/")
            menus[path] = menu(parent).addMenu(title)
        return menus[path]

    actions: dict[str, QAction] = {}
    for item in items:
        if isinstance(item, Separator):
            if item.menu:
                menu(item.menu).addSeparator()
            if item.toolbar:
                toolbar.addSeparator()
        elif isinstance(item, Submenu):
            menu(item.path)
        elif isinstance(item, Toggle):
            menu(item.menu).addAction(resolve(window, item.target).toggleViewAction())
        else:
            act = QAction(item.text, window)
            if item.key is not None:
                act.setShortcut(QKeySequence(item.key))
            act.setToolTip(item.tip or item.text.replace("\u2026", ""))
            act.setStatusTip(item.tip)
            act.setEnabled(item.enabled)
            act.triggered.connect(_caller(window, item))
            menu(item.menu).addAction(act)
            if item.toolbar:
                toolbar.addAction(act)
            if item.name:
                actions[item.name] = act
    return actions, menus
