#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the checks: ruff, mypy, then pytest, headless.
#
#   bash scripts/test.sh            # everything
#   bash scripts/test.sh -k ladder  # extra arguments go to pytest
#
# Exits non-zero when ruff, mypy or pytest fails (pytest's "no tests collected" counts as
# failure).
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(realpath -m "${VENV:-$REPO/.venv}")"; export VENV
export LANG=C.UTF-8
export QT_QPA_PLATFORM=offscreen

start=$(date +%s)
bash "$REPO/scripts/setup.sh" || { echo "[test] setup failed" >&2; exit 1; }
echo "[test] setup took $(($(date +%s) - start)) s"
cd "$REPO"

lint_paths=()
for d in wsvmgui tests benchmarks scripts; do
    [ -d "$d" ] && lint_paths+=("$d")
done
echo "[test] ruff check ${lint_paths[*]}"
"$VENV/bin/ruff" check "${lint_paths[@]}"
ruff_rc=$?
echo "[test] ruff format --check ${lint_paths[*]}"
"$VENV/bin/ruff" format --check "${lint_paths[@]}" || ruff_rc=1

echo "[test] mypy (files in pyproject.toml [tool.mypy]; wsvmgui/gui against its baseline)"
"$VENV/bin/mypy"
mypy_rc=$?
"$VENV/bin/python" scripts/mypy_baseline.py wsvmgui/gui scripts/mypy-gui-baseline.txt || mypy_rc=1

echo "[test] pytest"
"$VENV/bin/python" -m pytest "$@"
pytest_rc=$?
if [ "$pytest_rc" -eq 5 ]; then
    echo "[test] pytest collected no tests" >&2
fi

echo "[test] ruff exit $ruff_rc, mypy exit $mypy_rc, pytest exit $pytest_rc," \
    "total $(($(date +%s) - start)) s"
[ "$ruff_rc" -eq 0 ] && [ "$mypy_rc" -eq 0 ] && [ "$pytest_rc" -eq 0 ]
