"""SVG export of a pyqtgraph view that renders the same in librsvg, browsers and Qt.

Qt's :class:`QSvgGenerator` writes every item under its world transform and marks the
outlines drawn with cosmetic pens (all of pyqtgraph's) ``vector-effect="non-scaling-stroke"``.
Renderers that ignore that attribute (librsvg, ImageMagick) scale the stroke with the
item's transform: a 2-pixel boundary in data units of 1/100 becomes a filled band across
the plot.  :func:`bake_cosmetic_strokes` removes the problem at its root: it applies each
group's transform to the coordinates of its cosmetic outlines and draws them without a
transform, so the stroke widths are the pixel widths every renderer agrees on.

:func:`render_svg` paints a view's scene with its items in pyqtgraph's export mode
(scatter symbols as vector paths, not fragments of a pixmap atlas), through SVG 1.1 (clip
paths keep curves inside their plots), then bakes the strokes and names a generic font
family as the fallback.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_MATRIX = re.compile(r"matrix\(([^)]*)\)")
_SHAPES = ("path", "polyline", "polygon", "line", "rect", "ellipse", "circle")
#: Cubic Bezier constant of a quarter ellipse.
_KAPPA = 0.5522847498

ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)


def _tag(el: ET.Element) -> str:
    return el.tag.rsplit("}", 1)[-1]


def parse_matrix(text: str | None) -> np.ndarray | None:
    """``"matrix(a,b,c,d,e,f)"`` -> 3 x 3 affine matrix; None for anything else."""
    if not text:
        return None
    m = _MATRIX.fullmatch(text.strip())
    if m is None:
        return None
    a, b, c, d, e, f = (float(v) for v in re.findall(_NUM, m.group(1)))
    return np.array([[a, c, e], [b, d, f], [0.0, 0.0, 1.0]])


def _fmt(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") if np.isfinite(v) else "0"


def _points(text: str) -> np.ndarray:
    values = [float(v) for v in re.findall(_NUM, text)]
    return np.asarray(values, dtype=float).reshape(-1, 2)


def shape_to_path(el: ET.Element) -> list[tuple[str, np.ndarray]]:
    """An SVG shape as absolute path commands: ``[(command, points (k, 2)), ...]``.

    Handles what QSvgGenerator writes: paths of absolute M, L, C and Z commands, polylines,
    polygons, lines, rects, ellipses and circles.

    Raises
    ------
    ValueError
        A path command other than M, L, C, Z (absolute).
    """
    tag = _tag(el)
    get = el.get
    if tag == "path":
        out = []
        # path commands are letters other than the "e" of exponents ("1.4e-17")
        for cmd, args in re.findall(r"([A-DF-Za-df-z])([^A-DF-Za-df-z]*)", get("d", "")):
            if cmd not in "MLCZ":
                raise ValueError(f"path command {cmd!r} not handled")
            pts = _points(args) if cmd != "Z" else np.empty((0, 2))
            if cmd in "ML":
                # "M x,y x,y" continues as line-tos
                out.append((cmd, pts[:1]))
                out += [("L", p[None, :]) for p in pts[1:]]
            elif cmd == "C":
                out += [("C", pts[i : i + 3]) for i in range(0, len(pts), 3)]
            else:
                out.append(("Z", pts))
        return out
    if tag in ("polyline", "polygon"):
        pts = _points(get("points", ""))
        out = [("M", pts[:1])] + [("L", p[None, :]) for p in pts[1:]]
        return out + ([("Z", np.empty((0, 2)))] if tag == "polygon" else [])
    if tag == "line":
        a = np.array([[float(get("x1", 0)), float(get("y1", 0))]])
        b = np.array([[float(get("x2", 0)), float(get("y2", 0))]])
        return [("M", a), ("L", b)]
    if tag == "rect":
        x, y = float(get("x", 0)), float(get("y", 0))
        w, h = float(get("width", 0)), float(get("height", 0))
        corners = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])
        lines = [("L", c[None, :]) for c in corners[1:]]
        return [("M", corners[:1]), *lines, ("Z", corners[:0])]
    if tag in ("ellipse", "circle"):
        cx, cy = float(get("cx", 0)), float(get("cy", 0))
        rx = float(get("rx", get("r", 0)))
        ry = float(get("ry", get("r", 0)))
        k = _KAPPA
        p = np.array
        return [
            ("M", p([[cx + rx, cy]])),
            ("C", p([[cx + rx, cy + k * ry], [cx + k * rx, cy + ry], [cx, cy + ry]])),
            ("C", p([[cx - k * rx, cy + ry], [cx - rx, cy + k * ry], [cx - rx, cy]])),
            ("C", p([[cx - rx, cy - k * ry], [cx - k * rx, cy - ry], [cx, cy - ry]])),
            ("C", p([[cx + k * rx, cy - ry], [cx + rx, cy - k * ry], [cx + rx, cy]])),
            ("Z", p(np.empty((0, 2)))),
        ]
    raise ValueError(f"element {tag!r} not handled")


def path_text(commands: list[tuple[str, np.ndarray]], matrix: np.ndarray) -> str:
    """Path data of ``commands`` with every point mapped by the affine ``matrix`` (3, 3)."""
    parts = []
    for cmd, pts in commands:
        if cmd == "Z":
            parts.append("Z")
            continue
        mapped = pts @ matrix[:2, :2].T + matrix[:2, 2]
        parts.append(cmd + " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in mapped))
    return " ".join(parts)


def bake_cosmetic_strokes(svg: str | bytes) -> bytes:
    """Apply each group's transform to its cosmetic outlines (see the module docstring).

    Parameters
    ----------
    svg : str or bytes
        SVG written by QSvgGenerator.

    Returns
    -------
    bytes
        The same drawing; every ``non-scaling-stroke`` shape is now a path in the
        coordinates of the enclosing untransformed group, in a group without a transform
        that keeps the original group's presentation attributes, in painting order.
    """
    root = ET.fromstring(svg)
    for parent in list(root.iter()):
        children = list(parent)
        transformed = [parse_matrix(c.get("transform")) is not None for c in children]
        if not any(t and _tag(c) == "g" for c, t in zip(children, transformed, strict=True)):
            continue
        rebuilt: list[ET.Element] = []
        for child in children:
            rebuilt += _split_group(child) if _tag(child) == "g" else [child]
        for child in children:
            parent.remove(child)
        parent.extend(rebuilt)
    for el in root.iter():
        family = el.get("font-family")
        if family and "sans-serif" not in family:
            el.set("font-family", f"{family}, DejaVu Sans, sans-serif")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _split_group(group: ET.Element) -> list[ET.Element]:
    """A transformed group as consecutive groups: baked cosmetic outlines, the rest as is."""
    matrix = parse_matrix(group.get("transform"))
    if matrix is None or any(_tag(c) == "g" for c in group):
        return [group]
    runs: list[tuple[bool, list[ET.Element]]] = []
    for child in group:
        bake = _tag(child) in _SHAPES and child.get("vector-effect") == "non-scaling-stroke"
        if bake:
            try:
                commands = shape_to_path(child)
            except ValueError:
                bake = False
        if bake:
            path = ET.Element(f"{{{SVG_NS}}}path")
            for key, value in child.attrib.items():
                if key not in (
                    "d",
                    "points",
                    "x",
                    "y",
                    "width",
                    "height",
                    "x1",
                    "y1",
                    "x2",
                    "y2",
                    "cx",
                    "cy",
                    "rx",
                    "ry",
                    "r",
                    "vector-effect",
                ):
                    path.set(key, value)
            if _tag(child) in ("polyline", "line"):
                path.set("fill", child.get("fill", "none"))
            path.set("d", path_text(commands, matrix))
            child = path
        if runs and runs[-1][0] == bake:
            runs[-1][1].append(child)
        else:
            runs.append((bake, [child]))
    out = []
    for baked, members in runs:
        g = ET.Element(group.tag, dict(group.attrib))
        if baked:
            del g.attrib["transform"]
        g.extend(members)
        out.append(g)
    return out or [group]


def _clip_rect(item, to_view) -> tuple[float, float, float, float] | None:
    """Viewport rectangle ``(x, y, w, h)`` that clips ``item``'s painting, or None."""
    from PySide6.QtWidgets import QGraphicsItem

    flags = QGraphicsItem.GraphicsItemFlag
    rect = None
    node = item
    if item.flags() & flags.ItemClipsToShape:
        rect = to_view(item, item.shape())
    node = item.parentItem()
    while node is not None:
        if node.flags() & flags.ItemClipsChildrenToShape:
            r = to_view(node, node.shape())
            rect = r if rect is None else rect.intersected(r)
        node = node.parentItem()
    if rect is None:
        return None
    return (rect.x(), rect.y(), rect.width(), rect.height())


def _paint_run(items, view, size) -> ET.Element:
    """SVG (SVG Tiny: Qt writes no clip paths) of ``items`` painted in order."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRect, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

    from ..errors import InputError

    w, h = size
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(w, h))
    gen.setViewBox(QRect(0, 0, w, h))
    gen.setResolution(96)
    painter = QPainter()
    if not painter.begin(gen):
        raise InputError("could not render the plot as SVG")
    vt = view.viewportTransform()
    try:
        for item in items:
            option = QStyleOptionGraphicsItem()
            option.exposedRect = item.boundingRect()
            painter.save()
            painter.setTransform(item.deviceTransform(vt))
            painter.setOpacity(item.effectiveOpacity())
            item.paint(painter, option, None)
            painter.restore()
    finally:
        painter.end()
    buf.close()
    return ET.fromstring(bytes(data.data()))


def render_svg(view) -> bytes:
    """SVG of a pyqtgraph ``GraphicsView`` (its visible scene), ready for any renderer.

    Every visible item is painted in stacking order with pyqtgraph's export mode on (scatter
    symbols as paths) and without pixmap caches (cached items are not painted into an SVG
    at all).  Consecutive items with the same clip (a plot's view box) are painted into one
    SVG fragment and wrapped in a clip path written here: QSvgGenerator's own clip paths
    use a stale transform.  Then :func:`bake_cosmetic_strokes`.

    Parameters
    ----------
    view : pyqtgraph.GraphicsView
        E.g. a ``GraphicsLayoutWidget``.

    Returns
    -------
    bytes
        SVG whose size in pixels is the view's viewport size.
    """
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QGraphicsItem

    scene = view.scene()
    rect = view.viewport().rect()
    w, h = rect.width(), rect.height()
    no_cache = QGraphicsItem.CacheMode.NoCache
    flags = QGraphicsItem.GraphicsItemFlag

    def to_view(item, shape):
        return view.viewportTransform().map(item.mapToScene(shape)).boundingRect()

    all_items = scene.items(Qt.SortOrder.AscendingOrder)
    painted = [
        it
        for it in all_items
        if it.isVisible()
        and it.effectiveOpacity() > 0
        and not (it.flags() & flags.ItemHasNoContents)
    ]
    exporting = [it for it in all_items if hasattr(it, "setExportMode")]
    cached = [(it, it.cacheMode()) for it in all_items if it.cacheMode() != no_cache]
    background = view.backgroundBrush().color()
    for it, _mode in cached:
        it.setCacheMode(no_cache)
    for it in exporting:
        it.setExportMode(True, {"antialias": True, "background": background})
    try:
        runs: list[tuple[tuple | None, list]] = []
        for it in painted:
            clip = _clip_rect(it, to_view)
            if runs and runs[-1][0] == clip:
                runs[-1][1].append(it)
            else:
                runs.append((clip, [it]))
        fragments = [(clip, _paint_run(items, view, (w, h))) for clip, items in runs]
    finally:
        for it in exporting:
            it.setExportMode(False)
        for it, mode in cached:
            it.setCacheMode(mode)

    root = ET.Element(
        f"{{{SVG_NS}}}svg",
        {"width": str(w), "height": str(h), "viewBox": f"0 0 {w} {h}", "version": "1.1"},
    )
    ET.SubElement(root, f"{{{SVG_NS}}}title").text = "wsvmgui plot"
    defs = ET.SubElement(root, f"{{{SVG_NS}}}defs")
    color = background.name() if background.alpha() else "none"
    ET.SubElement(
        root,
        f"{{{SVG_NS}}}rect",
        {"x": "0", "y": "0", "width": str(w), "height": str(h), "fill": color},
    )
    for k, (clip, frag) in enumerate(fragments):
        body = [c for c in frag if _tag(c) not in ("title", "desc", "defs")]
        if clip is None:
            root.extend(body)
            continue
        cid = f"clip{k}"
        cp = ET.SubElement(defs, f"{{{SVG_NS}}}clipPath", {"id": cid})
        x, y, cw, ch = clip
        ET.SubElement(
            cp,
            f"{{{SVG_NS}}}rect",
            {"x": _fmt(x), "y": _fmt(y), "width": _fmt(cw), "height": _fmt(ch)},
        )
        group = ET.SubElement(root, f"{{{SVG_NS}}}g", {"clip-path": f"url(#{cid})"})
        group.extend(body)
    sharpen_images(root)
    return bake_cosmetic_strokes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def repeat_pixels(image, kx: int, ky: int):
    """``image`` (a QImage, w x h) with every pixel repeated ``kx`` times across and ``ky``
    times down: (w kx) x (h ky).

    Qt's own fast scaling of a 2 x 3 tuning table to 718 x 372 put the border between the
    two columns 14 pixels right of the middle (the exported plot's cells no longer matched
    its axis ticks); repeating the pixels keeps every cell exactly ``kx`` wide.
    """
    from PySide6.QtGui import QImage

    src = image.convertToFormat(QImage.Format.Format_ARGB32)
    w, h = src.width(), src.height()
    rows = np.frombuffer(src.constBits(), np.uint8).reshape(h, src.bytesPerLine())
    pixels = rows[:, : 4 * w].reshape(h, w, 4)
    big = np.ascontiguousarray(np.repeat(np.repeat(pixels, ky, axis=0), kx, axis=1))
    out = QImage(big.data, w * kx, h * ky, 4 * w * kx, QImage.Format.Format_ARGB32)
    return out.copy()  # owns its pixels (``big`` is freed on return)


def sharpen_images(root: ET.Element, limit: int = 2400) -> None:
    """Enlarge embedded images by whole factors up to their drawn size, pixel by pixel.

    Qt draws a small image (a 3 x 6 tuning table, an 80 x 80 probability grid) with hard
    pixel edges; renderers that ignore ``image-rendering`` would blur it across the plot.
    With each pixel repeated to about its drawn size, every renderer shows the same cells.
    """
    import base64

    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImage

    parents = {child: parent for parent in root.iter() for child in parent}
    for el in list(root.iter(f"{{{SVG_NS}}}image")):
        href_key = f"{{{XLINK_NS}}}href" if f"{{{XLINK_NS}}}href" in el.attrib else "href"
        href = el.get(href_key, "")
        prefix = "data:image/png;base64,"
        if not href.startswith(prefix):
            continue
        image = QImage.fromData(base64.b64decode(href[len(prefix) :]), "PNG")
        if image.isNull() or image.width() == 0 or image.height() == 0:
            continue
        matrix = parse_matrix(parents.get(el, root).get("transform")) if el in parents else None
        sx = sy = 1.0
        if matrix is not None:
            sx, sy = float(np.hypot(*matrix[:2, 0])), float(np.hypot(*matrix[:2, 1]))
        drawn_w = float(el.get("width", image.width())) * sx
        drawn_h = float(el.get("height", image.height())) * sy
        kx = int(min(max(np.ceil(drawn_w / image.width()), 1), limit // image.width() or 1))
        ky = int(min(max(np.ceil(drawn_h / image.height()), 1), limit // image.height() or 1))
        if kx == 1 and ky == 1:
            continue
        big = repeat_pixels(image, kx, ky)
        data = QByteArray()
        buf = QBuffer(data)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        big.save(buf, "PNG")
        buf.close()
        el.set(href_key, prefix + base64.b64encode(bytes(data.data())).decode("ascii"))
