"""benchmarks/README.md lists every benchmark script: one table row per ``benchmarks/*.py``
(the modules named with a leading underscore are helpers the scripts import, not
scripts), and no row of a script that is gone."""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _table_scripts(text: str) -> list[str]:
    """The script of every row of the README's table (its first cell, in backticks)."""
    return re.findall(r"^\| `([\w.]+\.py)` \|", text, flags=re.MULTILINE)


def test_every_benchmark_script_has_one_row():
    rows = _table_scripts((BENCHMARKS / "README.md").read_text(encoding="utf-8"))
    scripts = sorted(p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
    assert scripts, "no benchmark scripts found"
    assert sorted(set(rows)) == scripts
    assert len(rows) == len(set(rows)), "a script with two rows"


def test_every_row_has_its_results_and_run_cells():
    """Each row: script, measures, results, run (the command names the script), issue."""
    text = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        match = re.match(r"^\| `([\w.]+\.py)` \|", line)
        if not match:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 5, line
        assert all(cells), line
        assert f"benchmarks/{match.group(1)}" in cells[3], line
