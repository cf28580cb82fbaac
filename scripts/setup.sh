#!/usr/bin/env bash
# Set up wsvmgui on a fresh Debian 12 machine, idempotently.
#
#   bash scripts/setup.sh          # what the app needs (scripts/run.sh calls this)
#   bash scripts/setup.sh --benchmarks  # that, plus the benchmarks' data (palmerpenguins)
#   bash scripts/setup.sh --test   # both, plus the test tools (scripts/test.sh calls this)
#
# 1. Debian packages. The app: the libraries Qt loads (also offscreen) and those of the
#    xcb platform plugin for a real window. --test adds what the tests and CI use:
#    librsvg and Chromium (the SVG export test), Xvfb (a virtual screen) and
#    desktop-file-utils (the desktop entry test). Skipped when all are installed;
#    `apt-get update` runs only when some package is missing.
# 2. A virtual environment (default: .venv in the repository; VENV=/path overrides;
#    PYTHON=/path/to/python3 chooses the interpreter, default python3).
# 3. `pip install -e .` into it; --benchmarks: `pip install -e ".[benchmarks]"` (the data
#    every benchmark reads: palmerpenguins); --test: `pip install -e ".[test,benchmarks]"`
#    (also pytest, pytest-qt, hypothesis, ruff, mypy, build, and dask for the cluster
#    tests). Skipped when pyproject.toml has not changed since the last successful
#    install of at least as much into that venv from this checkout.
# 4. The warm-up: `wsvmgui --warm-up` compiles the path engine's kernels and the joint
#    fit's solver into numba's cache once (about 50 s of CPU: the path engine's 17-22 s,
#    the joint fit's about 28 s; 1-4 minutes of wall time on a busy 2-core machine;
#    benchmarks/results/first_run.md), so
#    that the first fit does not wait for it; when they are compiled already it only
#    loads them (about a second).
#
# Environment switches: WSVMGUI_SKIP_APT=1 skips step 1 (e.g. not root and no sudo,
# packages already provided some other way); WSVMGUI_SKIP_WARMUP=1 skips step 4.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(realpath -m "${VENV:-$REPO/.venv}")"
PYTHON="${PYTHON:-python3}"
export LANG=C.UTF-8
export DEBIAN_FRONTEND=noninteractive
export PIP_DISABLE_PIP_VERSION_CHECK=1

MODE=app
for arg in "$@"; do
    case "$arg" in
        --test) MODE=test ;;
        --benchmarks) [ "$MODE" = test ] || MODE=benchmarks ;;
        -h|--help) sed -n '3,/^set -e/{/^set -e/d; s/^# \{0,1\}//; p}' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) printf '[setup] error: unknown argument %s (see --help)\n' "$arg" >&2; exit 2 ;;
    esac
done

APT_PACKAGES=(
    # what Qt (PySide6) loads, also offscreen
    libglib2.0-0 libdbus-1-3 libegl1 libgl1 libx11-6 libfontconfig1 libfreetype6
    libxkbcommon0 fonts-dejavu-core
    # a real window: the xcb platform plugin's libraries
    libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
    libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1
    libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0
)
if [ "$MODE" = test ]; then
    APT_PACKAGES+=(
        # the SVG export test renders exported plots in librsvg and a browser engine
        librsvg2-bin chromium
        # a virtual screen (xvfb-run) and the desktop entry's validator
        xvfb xauth desktop-file-utils
    )
fi

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when root, else through sudo when it is there.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -E "$@"
    else
        die "need root (or sudo) to run: $*; or set WSVMGUI_SKIP_APT=1"
    fi
}

# Print the packages among "$@" that are not installed.
missing_packages() {
    local p
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
            printf '%s\n' "$p"
        fi
    done
}

APT_UPDATED=0
apt_update_once() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        log "apt-get update"
        as_root apt-get update -qq
        APT_UPDATED=1
    fi
}
apt_install() {
    [ "$#" -gt 0 ] || return 0
    apt_update_once
    log "apt-get install: $*"
    as_root apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Use-Pty=0 -o APT::Color=0 "$@" >/dev/null
}

# --- 1. Debian packages -----------------------------------------------------------------
if [ "${WSVMGUI_SKIP_APT:-0}" = "1" ]; then
    log "skipping Debian packages (WSVMGUI_SKIP_APT=1)"
elif ! command -v dpkg-query >/dev/null 2>&1; then
    log "not a Debian-like system (no dpkg-query): skipping Debian packages"
else
    mapfile -t MISSING < <(missing_packages "${APT_PACKAGES[@]}")
    if [ "${#MISSING[@]}" -gt 0 ]; then
        apt_install "${MISSING[@]}"
    else
        log "Debian packages: all ${#APT_PACKAGES[@]} present"
    fi
fi

# --- 2. Python and the virtual environment ----------------------------------------------
command -v "$PYTHON" >/dev/null 2>&1 || die "no '$PYTHON' on PATH (set PYTHON=/path/to/python3)"
"$PYTHON" - <<'EOF' || die "wsvmgui needs Python >= 3.10 and < 3.14 (found $("$PYTHON" -V 2>&1))"
import sys
sys.exit(0 if (3, 10) <= sys.version_info[:2] < (3, 14) else 1)
EOF

venv_ok() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }

if ! venv_ok; then
    rm -rf "$VENV"
    log "creating venv $VENV with $("$PYTHON" -V 2>&1)"
    if ! "$PYTHON" -m venv "$VENV" >/dev/null 2>&1; then
        # Debian's own python3 ships venv/ensurepip separately.
        rm -rf "$VENV"
        [ "${WSVMGUI_SKIP_APT:-0}" = "1" ] && die "'$PYTHON -m venv' failed; install python3-venv"
        ver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
        pkgs=(python3-venv)
        apt_update_once
        if apt-cache show "python$ver-venv" >/dev/null 2>&1; then
            pkgs+=("python$ver-venv")
        fi
        apt_install "${pkgs[@]}"
        "$PYTHON" -m venv "$VENV" || die "'$PYTHON -m venv $VENV' failed"
    fi
    "$VENV/bin/python" -m pip install -q --progress-bar off --upgrade pip \
        || log "could not upgrade pip in the venv; going on with $("$VENV/bin/python" -m pip -V)"
fi

# --- 3. The package (and the test tools) ---------------------------------------------
STAMP="$VENV/.wsvmgui-setup"
want="$(cd "$REPO" && { echo "$REPO"; cat pyproject.toml; } | sha256sum | cut -d' ' -f1)"
have="" have_mode=""
[ -f "$STAMP" ] && read -r have have_mode <"$STAMP"
installed_here() {
    # the editable install points at this checkout
    (cd / && "$VENV/bin/python" - "$REPO" <<'EOF') >/dev/null 2>&1
import os, sys
import wsvmgui
here = os.path.realpath(os.path.dirname(wsvmgui.__file__))
sys.exit(0 if here == os.path.realpath(os.path.join(sys.argv[1], "wsvmgui")) else 1)
EOF
}
# an install with the test tools also serves the benchmarks, and theirs the app
if [ "$want" = "$have" ]; then
    case "$have_mode:$MODE" in
        test:*) MODE=test ;;
        benchmarks:app) MODE=benchmarks ;;
    esac
fi
case "$MODE" in
    test) target=".[test,benchmarks]" ;;
    benchmarks) target=".[benchmarks]" ;;
    *) target="." ;;
esac
if [ "$want" = "$have" ] && [ "$have_mode" = "$MODE" ] && installed_here; then
    log "python packages: up to date in $VENV"
else
    log "pip install -e '$target' into $VENV (first time: a few minutes)"
    (cd "$REPO" && "$VENV/bin/python" -m pip install -q --progress-bar off -e "$target")
    installed_here || die "wsvmgui is not importable from $VENV after pip install"
    printf '%s %s\n' "$want" "$MODE" >"$STAMP"
fi

# --- 4. The path engine's compiled kernels ---------------------------------------------
if [ "${WSVMGUI_SKIP_WARMUP:-0}" = "1" ]; then
    log "skipping the warm-up (WSVMGUI_SKIP_WARMUP=1)"
else
    if ! "$VENV/bin/wsvmgui" --warm-up 2>&1 | sed -u 's/^/[setup] /'; then
        die "'wsvmgui --warm-up' failed"
    fi
fi
log "ready: $VENV"
