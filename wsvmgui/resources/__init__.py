"""Files shipped with wsvmgui: the application icon, the desktop entry and demo data.

They are package data, so these paths work from a checkout, an editable install and a
wheel alike. Regenerate them with ``scripts/make_icon.py`` and ``scripts/make_demo_data.py``.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

ICON_SVG = "wsvmgui.svg"
ICON_PNG = "wsvmgui.png"
DESKTOP_ENTRY = "wsvmgui.desktop"
DEMO_CSV = "demo/two_moons_like.csv"


def resource_path(name: str) -> Path:
    """Filesystem path of the shipped file ``name`` (e.g. ``"wsvmgui.png"``).

    Raises
    ------
    FileNotFoundError
        If no such file ships with the package.
    """
    resource = files(__name__).joinpath(name)
    with as_file(resource) as path:
        # installed as plain files (not a zip), so the path outlives the context
        if not Path(path).is_file():
            raise FileNotFoundError(f"wsvmgui resource not found: {name}")
        return Path(path)


def icon_path(svg: bool = False) -> Path:
    """Path of the application icon: the 256 x 256 PNG, or the SVG source."""
    return resource_path(ICON_SVG if svg else ICON_PNG)


def demo_csv_path() -> Path:
    """Path of the demo data set (200 rows; columns x1, x2, label in {-1, +1})."""
    return resource_path(DEMO_CSV)
