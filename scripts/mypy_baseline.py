"""mypy over a part of the package that keeps a baseline of known errors (the GUI).

    python scripts/mypy_baseline.py wsvmgui/gui scripts/mypy-gui-baseline.txt
    python scripts/mypy_baseline.py wsvmgui/gui scripts/mypy-gui-baseline.txt --write

Runs mypy (the settings of pyproject.toml [tool.mypy]) on the given path and compares its
errors with the baseline file, one error a line with the line number left out (so that
edits elsewhere in a file do not change it).  Exits 1 when mypy finds an error that is not
in the baseline, or when an error of the baseline is gone (remove its line: the baseline
only shrinks); ``--write`` writes the current errors as the new baseline.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HEADER = (
    "# mypy errors the GUI still has (scripts/mypy_baseline.py; scripts/test.sh fails on a\n"
    "# new one and on one fixed but still listed).  The PySide6 stubs type an image\n"
    "# format as bytes; the binding takes str (b'PNG' is refused at run time).\n"
)
#: ``path:line: error: message  [code]`` (columns, if shown, follow the line number).
ERROR = re.compile(r"^(?P<path>[^:]+):\d+(?::\d+)?: error: (?P<rest>.*)$")


def errors(target: str) -> list[str]:
    """mypy's errors for ``target``, as ``path: message  [code]`` lines."""
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-pretty", "--no-error-summary", target],
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"mypy failed to run on {target} (exit {proc.returncode})")
    found = []
    for line in proc.stdout.splitlines():
        match = ERROR.match(line)
        if match:
            found.append(f"{match['path']}: {match['rest']}")
    return sorted(found)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--write"):
        print(__doc__, file=sys.stderr)
        return 2
    target, baseline = argv[0], Path(argv[1])
    now = errors(target)
    if len(argv) == 3:
        baseline.write_text(HEADER + "".join(f"{e}\n" for e in now))
        print(f"[mypy-baseline] wrote {len(now)} errors of {target} to {baseline}")
        return 0
    known = [ln for ln in baseline.read_text().splitlines() if ln and not ln.startswith("#")]
    new = Counter(now) - Counter(known)
    gone = Counter(known) - Counter(now)
    for line in sorted(new.elements()):
        print(f"[mypy-baseline] new error: {line}")
    for line in sorted(gone.elements()):
        print(f"[mypy-baseline] fixed, remove it from {baseline}: {line}")
    print(
        f"[mypy-baseline] {target}: {len(now)} errors, {len(known)} in the baseline, "
        f"{sum(new.values())} new, {sum(gone.values())} fixed"
    )
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
