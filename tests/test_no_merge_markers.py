"""No text file of the repository keeps a merge conflict's markers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Line starts git writes around a conflict (built here so that this file has none).
MARKERS = ("<" * 7 + " ", ">" * 7 + " ")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".sh", ".txt", ".cfg", ".yml", ".yaml", ".desktop"}


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / f for f in out.splitlines() if Path(f).suffix in TEXT_SUFFIXES]


def test_no_tracked_text_file_has_conflict_markers():
    files = _tracked_text_files()
    assert files, "git ls-files listed no text files"
    hits = []
    for path in files:
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if line.startswith(MARKERS):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line[:40]}")
    assert not hits, "merge conflict markers left in:\n" + "\n".join(hits)
