"""The run report: one self-contained HTML file holding every section (issue 21)."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from wsvmgui.app.report import PAPERS, SECTIONS, calibration_svg, probability_summary
from wsvmgui.cli import main
from wsvmgui.evaluation.designs import simulate


class _Parse(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tags, self.srcs = set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("src", "href"):
            if key in a and not a[key].startswith("#"):
                self.srcs.append(a[key])


@pytest.fixture(scope="module")
def fitted_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    d = simulate("wuliu2011_ex1", 120, seed=3)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"])
    frame.insert(0, "id", np.arange(1, 121))
    frame["label"] = np.where(d.y > 0, "good", "bad")
    train = tmp / "train.csv"
    frame.to_csv(train, index=False)
    out, html = tmp / "p.csv", tmp / "report.html"
    argv = ["fit", str(train), "--label", "label", "--id", "id", "--out", str(out)]
    argv += ["--lambda", "0.05,0.005", "--sigma", "0.5,1", "--weights", "6", "--report", str(html)]
    assert main(argv) == 0
    return html, train


def test_fit_report_holds_every_section_and_nothing_external(fitted_report):
    html, train = fitted_report
    text = html.read_text()
    parsed = _Parse()
    parsed.feed(text)
    assert {a for a, _ in SECTIONS} <= parsed.ids
    assert parsed.srcs == [] and "script" not in parsed.tags  # self-contained
    import hashlib

    assert hashlib.sha256(train.read_bytes()).hexdigest() in text
    assert "<td>x1, x2</td>" in text  # the features, never the id
    assert re.search(r"<td>id column</td><td>id</td>", text)
    assert "<td>seed</td>" in text and "numpy" in text and "scikit-learn" in text
    assert "logistic regression" in text and "&#9733;" in text  # baselines, tuned cell
    assert text.count("<svg") == 1  # the calibration diagram (no plots from the CLI)
    assert PAPERS["wsl2008"].split(" (")[0] in text


def test_calibration_diagram_and_class_summary_are_the_data():
    rng = np.random.default_rng(0)
    p1 = rng.uniform(size=400)
    y = np.where(rng.uniform(size=400) < p1, "b", "a")
    proba = np.column_stack([1 - p1, p1])
    svg = calibration_svg(proba, y, np.array(["a", "b"]))
    # well calibrated by construction: the dots lie near the diagonal
    dots = [(float(x), float(y)) for x, y in re.findall(r'cx="([\d.]+)" cy="([\d.]+)"', svg)]
    assert 8 <= len(dots) <= 10
    for cx, cy in dots:  # the SVG maps v to 40 + 240 v across and 280 - 240 v up
        assert abs((cx - 40) / 240 - (280 - cy) / 240) < 0.2
    rows = probability_summary(proba, np.array(["a", "b"]))
    assert rows[1][0] == "b" and rows[1][1] == pytest.approx(p1.mean())
    assert rows[1][4] == pytest.approx(np.median(p1))
    assert rows[0][2] == pytest.approx((1 - p1).min())


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no Chromium on this machine")
def test_the_report_opens_in_a_real_browser(fitted_report, tmp_path):
    html, _ = fitted_report
    shot = tmp_path / "shot.png"
    cmd = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        f"--screenshot={shot}", "--window-size=1000,3000", html.as_uri(),
    ]  # fmt: skip
    subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gui = pytest.importorskip("PySide6.QtGui")
    image = gui.QImage(str(shot)).convertToFormat(gui.QImage.Format.Format_Grayscale8)
    assert (image.width(), image.height()) == (1000, 3000)
    img = np.frombuffer(image.constBits(), np.uint8).reshape(3000, image.bytesPerLine())[:, :1000]
    # the page drew text and tables down the page, not a blank or error page
    dark_rows = np.flatnonzero((img < 128).sum(axis=1) > 0)
    assert dark_rows.size > 300 and dark_rows.max() > 1500
