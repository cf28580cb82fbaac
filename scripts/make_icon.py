"""Render wsvmgui/resources/wsvmgui.svg to wsvmgui/resources/wsvmgui.png (256 x 256).

    python scripts/make_icon.py [--size 256]

Uses Qt's SVG renderer offscreen, so it runs without a display.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

RESOURCES = Path(__file__).resolve().parent.parent / "wsvmgui" / "resources"


def render(svg: Path, png: Path, size: int) -> None:
    """Render ``svg`` to a transparent ``size`` x ``size`` PNG at ``png``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"cannot parse {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png), "PNG"):
        raise SystemExit(f"cannot write {png}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args(argv)
    svg = RESOURCES / "wsvmgui.svg"
    png = RESOURCES / "wsvmgui.png"
    render(svg, png, args.size)
    print(f"wrote {png} ({args.size} x {args.size})")


if __name__ == "__main__":
    main()
