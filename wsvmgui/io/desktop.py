"""The app in the desktop's applications menu: ``wsvmgui --install-desktop``.

Writes, for the current user (XDG base directories, ``~/.local/share`` by default):

* ``applications/wsvmgui.desktop``: the shipped entry
  (:data:`wsvmgui.resources.DESKTOP_ENTRY`) with ``Exec`` set to this installation's
  ``wsvmgui`` command (a virtual environment's is not on the desktop's ``PATH``) and
  ``gui %f``, so that a CSV/TSV file opened with it is loaded;
* ``icons/hicolor/256x256/apps/wsvmgui.png`` and ``icons/hicolor/scalable/apps/wsvmgui.svg``.

Every file is written atomically.  Removing the three files uninstalls the entry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import resources
from .atomic import atomic_write_bytes, atomic_write_text

#: Characters that make the Desktop Entry specification quote an ``Exec`` argument.
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def data_home(environ: dict[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME``, or ``~/.local/share`` when it is unset, empty or relative."""
    env = os.environ if environ is None else environ
    value = env.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / ".local" / "share"


def app_command() -> list[str]:
    """The command that starts this installation of wsvmgui, as absolute paths.

    The ``wsvmgui`` script beside this interpreter (a virtual environment's ``bin``, or
    ``/usr/bin``), else the one on ``PATH``, else ``python -m wsvmgui``.
    """
    script = Path(sys.executable).with_name("wsvmgui")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    found = shutil.which("wsvmgui")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "wsvmgui"]


def exec_quote(arg: str) -> str:
    """``arg`` as one argument of a desktop entry's ``Exec`` value, escaped as the file
    stores it (the specification's quoting, then its string escapes)."""
    arg = arg.replace("%", "%%")
    if any(c in _RESERVED for c in arg):
        inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        arg = f'"{inner}"'
    return arg.replace("\\", "\\\\")


def desktop_entry(command: list[str]) -> str:
    """The shipped desktop entry with ``Exec`` (and ``TryExec``) for ``command``."""
    template = resources.resource_path(resources.DESKTOP_ENTRY).read_text(encoding="utf-8")
    exec_value = " ".join([*(exec_quote(a) for a in command), "gui", "%f"])
    lines = []
    for line in template.splitlines():
        key = line.split("=", 1)[0].strip()
        if key == "Exec":
            lines.append(f"Exec={exec_value}")
            try_exec = command[0].replace("\\", "\\\\")  # the string escape of a backslash
            lines.append(f"TryExec={try_exec}")
        elif key != "TryExec":
            lines.append(line)
    return "\n".join(lines) + "\n"


def install_desktop(
    home: Path | None = None, command: list[str] | None = None, refresh: bool = True
) -> list[Path]:
    """Write the desktop entry and icons under ``home`` (default :func:`data_home`).

    Parameters
    ----------
    home : Path, optional
        The XDG data folder to install into.
    command : list of str, optional
        The command the entry runs (default :func:`app_command`).
    refresh : bool
        Run ``update-desktop-database`` on the applications folder when it is installed,
        so that the entry's file types take effect (failures are ignored: the entry
        works without it).

    Returns
    -------
    list of Path
        The files written: entry, PNG icon, SVG icon.
    """
    home = data_home() if home is None else Path(home)
    apps = home / "applications"
    icons = home / "icons" / "hicolor"
    targets = [
        apps / resources.DESKTOP_ENTRY,
        icons / "256x256" / "apps" / resources.ICON_PNG,
        icons / "scalable" / "apps" / resources.ICON_SVG,
    ]
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(targets[0], desktop_entry(command or app_command()))
    atomic_write_bytes(targets[1], resources.icon_path().read_bytes())
    atomic_write_bytes(targets[2], resources.icon_path(svg=True).read_bytes())
    tool = shutil.which("update-desktop-database") if refresh else None
    if tool:
        subprocess.run([tool, "-q", str(apps)], check=False, timeout=60, capture_output=True)
    return targets
