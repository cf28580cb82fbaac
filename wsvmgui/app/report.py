"""A run report: one self-contained HTML file for a paper's supplement (no Qt).

The report holds the data (name, SHA-256, n, features, missing-value handling), every
setting and seed, the package versions, the tuning surfaces, the measures against the
baselines, a calibration diagram (inline SVG drawn here), the plots a front end passes
(inline SVG), the per-class summary of the probabilities, and the papers behind the
scheme.  Both front ends build it: the app (File > Export report, with its views as SVG)
and ``wsvmgui fit --report`` (no views).
"""

from __future__ import annotations

import os
import platform
import re
import time
from dataclasses import dataclass, field
from html import escape
from importlib import metadata
from typing import Any

import numpy as np

from .calibration import reliability
from .tuning_view import TuningSurface

#: The papers behind each scheme, cited in the report.
PAPERS = {
    "wsl2008": "Wang, J., Shen, X. and Liu, Y. (2008). Probability estimation for "
    "large-margin classifiers. Biometrika 95(1), 149-167.",
    "wl2011": "Wu, Y. and Liu, Y. (2011). Non-crossing large-margin probability estimation "
    "and its application to robust SVM via preconditioning. Statistical Methodology 8(1), "
    "56-67. doi:10.1016/j.stamet.2009.05.004",
    "wzl2010": "Wu, Y., Zhang, H. H. and Liu, Y. (2010). Robust model-free multiclass "
    "probability estimation. Journal of the American Statistical Association 105(489), "
    "424-436.",
    "wzw2019": "Wang, X., Zhang, H. H. and Wu, Y. (2019). Multiclass probability estimation "
    "with support vector machines. Journal of Computational and Graphical Statistics "
    "28(3), 586-595.",
    "zz": "Zeng, L. and Zhang, H. H. Linear algorithms for robust and scalable "
    "nonparametric multiclass probability estimation.",
    "lz2005": "Langford, J. and Zadrozny, B. (2005). Estimating class membership "
    "probabilities using classifier learners. Proceedings of AISTATS 2005.",
}
#: Scheme -> keys of :data:`PAPERS` (the multiclass divide-and-conquer schemes otherwise).
SCHEME_PAPERS = {
    "binary": ("wsl2008",),
    "noncrossing": ("wsl2008", "wl2011"),
    "preconditioned": ("wsl2008", "wl2011"),
    "probing": ("lz2005",),
    "joint-direct": ("wzl2010",),
    "joint-indirect": ("wzl2010",),
}
MULTICLASS_PAPERS = ("wsl2008", "wzw2019", "zz")
#: Packages whose versions the report records: distribution name -> module name.
PACKAGES = {
    "wsvmgui": "wsvmgui",
    "numpy": "numpy",
    "scipy": "scipy",
    "scikit-learn": "sklearn",
    "numba": "numba",
    "PySide6": "PySide6",
    "pyqtgraph": "pyqtgraph",
}
#: Sections, in order: (anchor, heading).
SECTIONS = (
    ("data", "Data"),
    ("settings", "Settings"),
    ("software", "Software"),
    ("tuning", "Tuning"),
    ("measures", "Measures"),
    ("calibration", "Calibration"),
    ("plots", "Plots"),
    ("probabilities", "Probabilities per class"),
    ("references", "References"),
)


@dataclass
class ReportInput:
    """What a report shows.

    Attributes
    ----------
    data : dict
        ``name``, ``sha256``, ``n``, ``features`` (list), ``label``, ``id`` (or None),
        ``missing``, ``rows_dropped``, ``classes`` (list).
    settings : dict
        Every setting (``RunSettings.to_dict()``).
    scheme : str
    measures : dict of str to dict of str to float
        Column (``"train"``, ``"test"``, a baseline) -> measure -> value.
    proba : ndarray, shape (n, K)
        The probabilities of the rows the calibration is measured on.
    observed : ndarray, shape (n,)
        Their labels (None: no calibration diagram).
    classes : ndarray, shape (K,)
        Sorted, in the columns' order.
    surfaces : list of TuningSurface
    figures : list of (str, str)
        (title, SVG text) of plots drawn by the front end.
    notes : list of str
        Sentences about the run (engine, tuning edges, ...).
    made_by : str
    """

    data: dict[str, Any]
    settings: dict[str, Any]
    scheme: str
    measures: dict[str, dict[str, float]]
    proba: np.ndarray
    observed: np.ndarray | None
    classes: np.ndarray
    surfaces: list[TuningSurface] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    made_by: str = "wsvmgui"


def package_versions() -> dict[str, str]:
    """Python's and each package's version ("not installed" when absent)."""
    import importlib
    import importlib.util
    import sys

    out = {"Python": platform.python_version()}
    for name, module in PACKAGES.items():
        try:
            out[name] = metadata.version(name)
            continue
        except metadata.PackageNotFoundError:
            pass  # installed by the system's packages, without metadata, or absent
        if module in sys.modules or importlib.util.find_spec(module) is not None:
            version = getattr(importlib.import_module(module), "__version__", "unknown")
            out[name] = str(version)
        else:
            out[name] = "not installed"
    return out


def scheme_papers(scheme: str) -> list[str]:
    """The references of ``scheme``'s method."""
    return [PAPERS[k] for k in SCHEME_PAPERS.get(scheme, MULTICLASS_PAPERS)]


def _num(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return "NaN" if not np.isfinite(value) else f"{float(value):.4g}"
    return escape(str(value))


def _table(head: list[str] | None, rows: list[list[Any]], cls: str = "") -> str:
    """An HTML table of ``rows`` (numbers to 4 significant digits), ``head`` its header."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head) if head else ""
    thead = f"<thead><tr>{th}</tr></thead>" if head else ""
    body = "".join("<tr>" + "".join(f"<td>{_num(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}">{thead}<tbody>{body}</tbody></table>'


def _surface_table(s: TuningSurface) -> str:
    """A tuning surface as a table, the chosen cell marked."""
    one = s.ys.size == 1 and not np.isfinite(s.ys[0])
    head = [f"{s.x_name} \\ {s.y_name}"] + ([s.score_name] if one else [_num(v) for v in s.ys])
    rows = []
    for i, x in enumerate(s.xs):
        cells = [_num(x)]
        for j in range(s.score.shape[1]):
            text = _num(s.score[i, j])
            cells.append(f"<b>{text} &#9733;</b>" if (i, j) == tuple(s.best) else text)
        rows.append(cells)
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return (
        f"<h3>{escape(s.name or 'The ladder')}: {escape(s.score_name)} of each candidate "
        "(lower is better; &#9733; chosen)</h3>"
        f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"
    )


def calibration_svg(proba: np.ndarray, observed: np.ndarray, classes: np.ndarray) -> str:
    """A reliability diagram (:func:`wsvmgui.app.calibration.reliability`) as inline SVG:
    mean predicted against observed share per bin, dots sized by the bin's count."""
    rel = reliability(proba, observed, classes)
    w = h = 320
    m = 40

    def sx(v: float) -> float:
        return m + v * (w - 2 * m)

    def sy(v: float) -> float:
        return h - m - v * (h - 2 * m)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="calibration diagram">',
        f'<rect x="{m}" y="{m}" width="{w - 2 * m}" height="{h - 2 * m}" fill="white" '
        'stroke="#444"/>',
        f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(1)}" y2="{sy(1)}" stroke="#999" '
        'stroke-dasharray="4 3"/>',
    ]
    full = rel.counts > 0
    pts = [
        (sx(p), sy(o)) for p, o in zip(rel.mean_predicted[full], rel.observed[full], strict=True)
    ]
    if pts:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        parts.append(f'<polyline points="{path}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    biggest = max(int(rel.counts.max()), 1)
    for (x, y), c in zip(pts, rel.counts[full], strict=True):
        r = 2.5 + 5.5 * np.sqrt(c / biggest)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="#1f77b4"/>')
    for v in (0, 0.5, 1):
        parts.append(f'<text x="{sx(v)}" y="{h - m + 16}" text-anchor="middle" '
                     f'font-size="11">{v:g}</text>')  # fmt: skip
        parts.append(f'<text x="{m - 6}" y="{sy(v) + 4}" text-anchor="end" '
                     f'font-size="11">{v:g}</text>')  # fmt: skip
    parts.append(
        f'<text x="{w / 2}" y="{h - 6}" text-anchor="middle" font-size="12">mean '
        f"{escape(rel.label)} in the bin</text>"
    )
    parts.append(
        f'<text x="12" y="{h / 2}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 12 {h / 2})">observed share</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts) + f"\n<p>Expected calibration error {rel.ece:.4f} ({rel.kind}).</p>"


def probability_summary(proba: np.ndarray, classes: np.ndarray) -> list[list[Any]]:
    """Per class: mean, minimum, quartiles and maximum of its probability; rows (K,)."""
    rows = []
    for k, c in enumerate(classes):
        p = proba[:, k]
        q = np.percentile(p, [0, 25, 50, 75, 100]) if p.size else [np.nan] * 5
        rows.append([str(c), float(np.mean(p)) if p.size else np.nan, *map(float, q)])
    return rows


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG document as an element of an HTML page: no XML declaration or doctype, and
    its ids (clip paths, ...) prefixed, since ids are shared by every SVG of a page and
    one figure's ``url(#clip1)`` would take another's clip."""
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    return re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)


STYLE = """
body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #bbb;padding:2px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}
figure{margin:1em 0} figure svg{max-width:100%;height:auto}
code{background:#f3f3f3} table.kv td{text-align:left}
"""


def render_report(inp: ReportInput, when: str | None = None) -> str:
    """The report as one HTML document (no external files, scripts or fonts)."""
    when = when or time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    d = inp.data
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>wsvmgui run report: {escape(str(d.get('name', '')))}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Class probabilities of {escape(str(d.get('name', '')))}</h1>",
        f"<p>Made by {escape(inp.made_by)} on {escape(when)}; scheme "
        f"<code>{escape(inp.scheme)}</code>.</p>",
        "<nav><p>"
        + " &middot; ".join(f'<a href="#{a}">{t}</a>' for a, t in SECTIONS)
        + "</p></nav>",
    ]
    sec = dict(SECTIONS)

    def h2(anchor: str) -> None:
        out.append(f'<h2 id="{anchor}">{sec[anchor]}</h2>')

    h2("data")
    rows = [
        ["name", d.get("name", "")],
        ["SHA-256", d.get("sha256", "")],
        ["rows used (n)", d.get("n", "")],
        ["rows left out for missing values", d.get("rows_dropped", 0)],
        ["missing values", d.get("missing", "")],
        ["label column", d.get("label", "")],
        ["id column", d.get("id") or "none (rows numbered from 1)"],
        ["classes", ", ".join(map(str, d.get("classes", [])))],
        [f"features ({len(d.get('features', []))})", ", ".join(map(str, d.get("features", [])))],
    ]
    out.append(_table(None, rows, "kv"))
    h2("settings")
    out.append("<p>Every setting of the run; <code>seed</code> fixes every random choice.</p>")
    out.append(_table(["setting", "value"], [[k, v] for k, v in sorted(inp.settings.items())]))
    h2("software")
    versions = package_versions()
    versions["platform"] = platform.platform()
    out.append(_table(["package", "version"], [[k, v] for k, v in versions.items()]))
    h2("tuning")
    if inp.surfaces:
        out.extend(_surface_table(s) for s in inp.surfaces)
    else:
        out.append("<p>No tuning: one penalty and one width were given.</p>")
    h2("measures")
    cols = list(inp.measures)
    names = sorted({m for c in cols for m in inp.measures[c]})
    out.append(
        _table(
            ["measure", *cols],
            [[m, *[inp.measures[c].get(m, np.nan) for c in cols]] for m in names],
        )  # fmt: skip
    )
    out.append(
        "<p>log_likelihood: higher is better; the others lower. Baselines were fitted on the "
        "same split.</p>"
    )
    out.extend(f"<p>{escape(n)}</p>" for n in inp.notes)
    h2("calibration")
    if inp.observed is not None and len(inp.observed):
        out.append(f"<figure>{calibration_svg(inp.proba, inp.observed, inp.classes)}</figure>")
    else:
        out.append("<p>No labels for these rows: no calibration diagram.</p>")
    h2("plots")
    if inp.figures:
        for i, (title, svg) in enumerate(inp.figures):
            out.append(
                f"<figure><figcaption><b>{escape(title)}</b></figcaption>"
                f"{inline_svg(svg, f'fig{i}')}</figure>"
            )
    else:
        out.append("<p>The command line draws no plots: export the report from the app.</p>")
    h2("probabilities")
    out.append(
        _table(
            ["class", "mean", "min", "25%", "median", "75%", "max"],
            probability_summary(inp.proba, inp.classes),
        )
    )
    h2("references")
    out.append(
        "<ol>" + "".join(f"<li>{escape(p)}</li>" for p in scheme_papers(inp.scheme)) + "</ol>"
    )
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report(path: str | os.PathLike, inp: ReportInput) -> None:
    """Write the report atomically."""
    from ..io.atomic import atomic_write_text

    atomic_write_text(path, render_report(inp))


__all__ = [
    "PAPERS",
    "SECTIONS",
    "ReportInput",
    "calibration_svg",
    "package_versions",
    "render_report",
    "scheme_papers",
    "write_report",
]
