"""The gallery script (wsvmgui/gui/screenshots.py): ``main`` creates its folder, and a PNG
that Qt cannot write is an error naming the path, not a "wrote" line."""

from __future__ import annotations

import re
import tempfile

import pytest


def test_shoot_writes_each_view_and_raises_naming_a_png_it_cannot_write(
    qapp, window, tmp_path, capsys
):
    from PySide6.QtGui import QImage

    from wsvmgui.gui import screenshots

    screenshots._shoot(qapp, window, tmp_path, "t", sizes=((640, 480),), views=(0, 4))
    printed = capsys.readouterr().out
    for view in ("boundaries", "results"):
        path = tmp_path / f"t-{view}-640x480.png"
        assert not QImage(str(path)).isNull(), path
        assert f"wrote {path}" in printed
    missing = tmp_path / "no" / "folder"
    expected = missing / "t-boundaries-640x480.png"
    with pytest.raises(OSError, match=re.escape(str(expected))):
        screenshots._shoot(qapp, window, missing, "t", sizes=((640, 480),), views=(0,))
    assert not missing.exists()
    assert "wrote" not in capsys.readouterr().out


def test_main_creates_the_folder_it_writes_to(qapp, settings_folder, tmp_path, monkeypatch):
    from wsvmgui.gui import screenshots

    runs = []

    def no_run(*args, **changes):  # every run "skipped": no fits, no shots
        runs.append(args[2])
        return False

    monkeypatch.setattr(screenshots, "_run", no_run)
    monkeypatch.setattr(tempfile, "mkdtemp", lambda prefix="": str(settings_folder))
    out = tmp_path / "shots" / "nested"
    assert screenshots.main(["--both-sizes", str(out)]) == 0
    assert out.is_dir() and not (tmp_path / "--both-sizes").exists()
    assert len(runs) == len(screenshots.DATASETS) + 3  # the data sets and the 3 extra runs
