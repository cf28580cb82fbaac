#!/usr/bin/env bash
# Set up (scripts/setup.sh) and start wsvmgui.
#
#   bash scripts/run.sh             # the desktop app when there is a display, else the demo
#   bash scripts/run.sh demo        # any arguments are passed to the `wsvmgui` command
#
# Without arguments: `wsvmgui` (the desktop app) when $DISPLAY or $WAYLAND_DISPLAY is set;
# otherwise there is no screen to show a window on, so `wsvmgui demo` runs instead
# (a command-line run of the estimators on a built-in example).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(realpath -m "${VENV:-$REPO/.venv}")"; export VENV
export LANG=C.UTF-8

bash "$REPO/scripts/setup.sh" >&2

if [ "$#" -gt 0 ]; then
    exec "$VENV/bin/wsvmgui" "$@"
elif [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
    exec "$VENV/bin/wsvmgui"
else
    echo "[run] no display (\$DISPLAY and \$WAYLAND_DISPLAY unset): running 'wsvmgui demo'" >&2
    echo "[run] for the window on a headless machine: apt-get install xvfb xauth, then" \
        "xvfb-run -a $VENV/bin/wsvmgui" >&2
    exec "$VENV/bin/wsvmgui" demo
fi
