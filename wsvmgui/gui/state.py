"""What the app remembers between sessions (QSettings): window layout, last folder, settings.

Tests point QSettings at a temporary folder with :func:`use_settings_folder` before
creating the window, so a test run never touches the user's real settings.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from ..app.settings import RunSettings
from ..errors import InputError

ORGANISATION = "wsvmgui"
APPLICATION = "wsvmgui"


def use_settings_folder(folder: str | os.PathLike) -> None:
    """Store every later QSettings as an INI file under ``folder``."""
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(folder))


class AppState:
    """Typed access to the app's QSettings.

    Parameters
    ----------
    store : QSettings, optional
        Default: the user-scope settings of "wsvmgui" in QSettings' default format, so that
        :func:`use_settings_folder` redirects it (``QSettings(org, app)`` alone would
        always use the native location).
    """

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store or QSettings(
            QSettings.defaultFormat(), QSettings.Scope.UserScope, ORGANISATION, APPLICATION
        )

    # ------------------------------------------------------------------------ folder
    @property
    def last_folder(self) -> str:
        value = str(self.store.value("paths/last_folder", "", type=str) or "")
        return value if value and Path(value).is_dir() else str(Path.home())

    @last_folder.setter
    def last_folder(self, folder: str | os.PathLike) -> None:
        path = Path(folder)
        self.store.setValue("paths/last_folder", str(path if path.is_dir() else path.parent))

    # ---------------------------------------------------------------------- settings
    def last_settings(self) -> RunSettings | None:
        """The settings of the last session, or None if missing or no longer valid."""
        text = str(self.store.value("run/settings", "", type=str) or "")
        if not text:
            return None
        try:
            return RunSettings.from_json(text)
        except InputError:
            return None

    def save_settings(self, settings: RunSettings) -> None:
        self.store.setValue("run/settings", settings.to_json())

    def value(self, key: str, default=None, type_=str):
        return self.store.value(key, default, type=type_)

    def set_value(self, key: str, value) -> None:
        self.store.setValue(key, value)

    # ------------------------------------------------------------------------ window
    def save_window(self, geometry: QByteArray, state: QByteArray) -> None:
        self.store.setValue("window/geometry", geometry)
        self.store.setValue("window/state", state)

    def window(self) -> tuple[QByteArray | None, QByteArray | None]:
        geometry = self.store.value("window/geometry")
        state = self.store.value("window/state")
        return (
            geometry if isinstance(geometry, QByteArray) else None,
            state if isinstance(state, QByteArray) else None,
        )

    def sync(self) -> None:
        self.store.sync()
