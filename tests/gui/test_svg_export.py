"""Exported SVGs render like the PNG of the same view, in librsvg, Chromium and Qt.

Each view of a finished run is saved as PNG and SVG; the SVG is rendered by Qt's own
renderer (always), by librsvg's ``rsvg-convert`` and by headless Chromium (skipped when
not installed; scripts/setup.sh installs both), and compared with the PNG on 8 x 8 pixel
blocks: text antialiasing differs by a few grey levels at glyph edges, while a broken
export (strokes scaled with the data, garbled symbols, blurred cells) moves whole blocks.
"""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import TINY, run_and_wait

#: Largest mean and 99th percentile of block differences (grey levels, 0-255).
MEAN_LIMIT = 4.0
P99_LIMIT = 70.0
BLOCK = 8
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def _rgb(image) -> np.ndarray:
    from PySide6.QtGui import QImage

    im = image.convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(im.constBits(), np.uint8).reshape(im.height(), im.bytesPerLine())
    return rows[:, : im.width() * 3].reshape(im.height(), im.width(), 3).astype(float)


def _load(path) -> np.ndarray:
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), path
    return _rgb(image)


def block_difference(a: np.ndarray, b: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """Absolute differences of block means of two (h, w, 3) images of the same size."""
    assert a.shape == b.shape, (a.shape, b.shape)
    h, w = a.shape[0] // block * block, a.shape[1] // block * block

    def down(x):
        return x[:h, :w].reshape(h // block, block, w // block, block, 3).mean(axis=(1, 3))

    return np.abs(down(a) - down(b))


def assert_same_picture(png: np.ndarray, rendered: np.ndarray, what: str) -> None:
    d = block_difference(png, rendered)
    mean, p99 = float(d.mean()), float(np.percentile(d, 99))
    assert mean < MEAN_LIMIT and p99 < P99_LIMIT, f"{what}: mean {mean:.2f}, p99 {p99:.1f}"


def _qt_render(svg_path, size) -> np.ndarray:
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg_path))
    assert renderer.isValid()
    image = QImage(size[0], size[1], QImage.Format.Format_ARGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return _rgb(image)


@pytest.fixture
def exported(qtbot, window, tmp_path):
    """PNG and SVG of every view after a run (selected point, tuning surface shown)."""
    from wsvmgui.app.settings import RunSettings

    settings = RunSettings(
        n_weights=TINY.n_weights, lambdas=[0.05, 0.005], sigmas=[0.3, 0.6, 1.2], n_jobs=1
    )
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    window.selection.select(int(result.split.test.index[0]))
    out = []
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        qtbot.wait(50)
        view = window.tabs.currentWidget()
        if not hasattr(view, "graphics"):
            continue
        png, svg = tmp_path / f"view{i}.png", tmp_path / f"view{i}.svg"
        assert window.files.export_plot(str(png), view), window.messages.text()
        assert window.files.export_plot(str(svg), view), window.messages.text()
        out.append((window.tabs.tabText(i), png, svg))
    assert len(out) >= 4
    return out


def test_svg_is_plain_svg_with_pixel_size(exported):
    for name, png, svg in exported:
        root = ET.parse(svg).getroot()
        w, h = _load(png).shape[1], _load(png).shape[0]
        assert (root.get("width"), root.get("height")) == (str(w), str(h)), name
        text = svg.read_text()
        # every cosmetic stroke was baked into plain coordinates
        assert "non-scaling-stroke" not in text, name


def test_qt_renders_the_svg_like_the_png(exported):
    for name, png, svg in exported:
        ref = _load(png)
        assert_same_picture(ref, _qt_render(svg, (ref.shape[1], ref.shape[0])), f"Qt {name}")


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert not installed")
def test_librsvg_renders_the_svg_like_the_png(exported, tmp_path):
    for name, png, svg in exported:
        out = tmp_path / (svg.stem + ".rsvg.png")
        subprocess.run(
            ["rsvg-convert", "-b", "white", str(svg), "-o", str(out)], check=True, timeout=60
        )
        assert_same_picture(_load(png), _load(out), f"librsvg {name}")


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="chromium not installed")
def test_chromium_renders_the_svg_like_the_png(exported, tmp_path):
    """All SVGs in one page, one above the other, in one headless Chromium screenshot."""
    sizes = [(_load(png).shape[1], _load(png).shape[0]) for _, png, _ in exported]
    width = max(w for w, _ in sizes)
    tops = np.concatenate([[0], np.cumsum([h for _, h in sizes])]).astype(int)
    imgs = "".join(
        f'<img src="{svg.name}" style="position:absolute;left:0;top:{top}px;'
        f'width:{w}px;height:{h}px">'
        for (_, _, svg), top, (w, h) in zip(exported, tops, sizes, strict=False)
    )
    page = tmp_path / "page.html"
    page.write_text(f"<html><body style='margin:0;background:white'>{imgs}</body></html>")
    shot = tmp_path / "chromium.png"
    subprocess.run(
        [
            _chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={width},{int(tops[-1])}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        timeout=120,
        capture_output=True,
    )
    full = _load(shot)
    for (name, png, _), top, (w, h) in zip(exported, tops, sizes, strict=False):
        assert_same_picture(_load(png), full[top : top + h, :w], f"Chromium {name}")


def test_bake_maps_cosmetic_outlines_and_keeps_the_rest():
    from wsvmgui.gui.svg import bake_cosmetic_strokes

    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">'
        '<g stroke="#ff0000" stroke-width="2" transform="matrix(10,0,0,-10,50,50)">'
        '<path vector-effect="non-scaling-stroke" d="M0,0 L1,1 C1,2 2,2 2,1e-17 Z"/>'
        '<polyline fill="none" vector-effect="non-scaling-stroke" points="0,0 -1,1"/>'
        '<rect x="0" y="0" width="1" height="1"/>'
        "</g></svg>"
    )
    root = ET.fromstring(bake_cosmetic_strokes(svg))
    ns = "{http://www.w3.org/2000/svg}"
    groups = root.findall(f"{ns}g")
    assert len(groups) == 2
    baked, kept = groups
    assert "transform" not in baked.attrib and baked.get("stroke-width") == "2"
    paths = baked.findall(f"{ns}path")
    assert paths[0].get("d") == "M50,50 L60,40 C60,30 70,30 70,50 Z"
    assert paths[1].get("d") == "M50,50 L40,40" and paths[1].get("fill") == "none"
    # a shape without a cosmetic stroke keeps its transform (it scales on purpose)
    assert kept.get("transform") == "matrix(10,0,0,-10,50,50)"
    assert kept.find(f"{ns}rect") is not None
