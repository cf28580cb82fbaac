"""The shipped resources: icon, desktop entry, demo data, and their generator scripts."""

from __future__ import annotations

import configparser
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wsvmgui import resources

REPO = Path(__file__).resolve().parent.parent


def test_icon_png_is_256_square_rgba():
    data = resources.icon_path().read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert (width, height) == (256, 256)
    assert (depth, colour) == (8, 6)  # 8-bit RGBA: transparent corners


def test_icon_svg_is_square_svg():
    root = ET.parse(resources.icon_path(svg=True)).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 256 256"


def test_desktop_entry_launches_the_command():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(resources.resource_path(resources.DESKTOP_ENTRY), encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] == "wsvmgui"
    assert entry["Icon"] == "wsvmgui"
    assert entry["Terminal"] == "false"


def test_missing_resource_is_an_error():
    with pytest.raises(FileNotFoundError, match="no_such_file"):
        resources.resource_path("no_such_file.txt")


def test_demo_csv_is_two_balanced_overlapping_classes():
    data = pd.read_csv(resources.demo_csv_path())
    assert list(data.columns) == ["x1", "x2", "label"]
    assert len(data) == 200
    assert not data.isna().any().any()
    assert data["label"].value_counts().to_dict() == {-1: 100, 1: 100}
    # the moons overlap: some point's nearest neighbour has the other label
    X = data[["x1", "x2"]].to_numpy()
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    nearest = d.argmin(axis=1)
    mismatch = (data["label"].to_numpy() != data["label"].to_numpy()[nearest]).mean()
    assert 0.02 < mismatch < 0.3


def test_demo_csv_regenerates_identically(tmp_path):
    out = tmp_path / "demo.csv"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_demo_data.py"), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert out.read_bytes() == resources.demo_csv_path().read_bytes()
