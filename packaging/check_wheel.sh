#!/usr/bin/env bash
# Build wsvmgui's sdist and wheel, install the wheel (not editable) into a fresh virtual
# environment and run it from a temporary directory, away from the source tree.
#
#   bash packaging/check_wheel.sh      # after scripts/setup.sh --test (it uses `build`)
#
# Checks, in order (any failure stops with a message and a non-zero status):
#  1. `python -m build`: the sdist, then the wheel built from the sdist; both hold the
#     resources (icon, desktop entry, demo table); the wheel holds no tests, no caches.
#  2. A fresh venv (PYTHON, default python3) with the wheel and its dependencies; the
#     `wsvmgui` it imports is the installed one, not this checkout.
#  3. `wsvmgui --version` is the built version.
#  4. `wsvmgui demo` on a fresh install says "compiling the path engine" before the wait;
#     `wsvmgui --warm-up` then finds the kernels cached; a second `wsvmgui demo` is
#     quiet. CPU seconds of each are printed.
#  5. The offscreen app smoke test (packaging/smoke_app.py): `wsvmgui gui FILE` with a
#     numba cache of its own, empty (the app must say it compiles), then again with it
#     filled (it must not).
#  6. `wsvmgui --install-desktop` into a temporary XDG data folder: entry and icons
#     written, the entry runs this venv's wsvmgui, and desktop-file-validate accepts it
#     (when installed).
#
# Environment: VENV (where `build` is; default .venv), PYTHON, KEEP=1 keeps the work
# folder (printed) for a look afterwards.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(realpath -m "${VENV:-$REPO/.venv}")"
PYTHON="${PYTHON:-python3}"
export LANG=C.UTF-8
export PIP_DISABLE_PIP_VERSION_CHECK=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

exec 3>&1  # the log, whatever a command's output is redirected to
log() { printf '[wheel] %s\n' "$*" >&3; }
die() { printf '[wheel] FAILED: %s\n' "$*" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/wsvmgui-wheel.XXXXXX")"
if [ "${KEEP:-0}" = "1" ]; then
    log "work folder (kept): $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi
start=$(date +%s)

# Run "$@", print its CPU seconds (user + system of the finished children of this shell)
# after the label $1, and return its status.
cpu_of() {
    local label="$1" t0 t1 rc=0
    shift
    t0="$(awk '{print $16 + $17}' "/proc/$$/stat")"
    "$@" || rc=$?
    t1="$(awk '{print $16 + $17}' "/proc/$$/stat")"
    log "$label: $(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" \
        'BEGIN {printf "%.1f", (b - a) / hz}') s CPU (exit $rc)"
    return "$rc"
}

# --- 1. build ----------------------------------------------------------------------------
[ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import build" 2>/dev/null \
    || die "no 'build' in $VENV: run bash scripts/setup.sh --test first"
log "python -m build (sdist, then the wheel from it)"
"$VENV/bin/python" -m build --outdir "$WORK/dist" "$REPO" >"$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log" >&2; die "python -m build"; }
WHEEL="$(ls "$WORK"/dist/*.whl)"
SDIST="$(ls "$WORK"/dist/*.tar.gz)"
log "built $(basename "$SDIST") and $(basename "$WHEEL")"
"$VENV/bin/python" - "$WHEEL" "$SDIST" <<'EOF' || die "package contents"
import sys, tarfile, zipfile

wheel = set(zipfile.ZipFile(sys.argv[1]).namelist())
sdist = {n.split("/", 1)[1] for n in tarfile.open(sys.argv[2]).getnames() if "/" in n}
needed = [f"wsvmgui/resources/{f}" for f in
          ("wsvmgui.desktop", "wsvmgui.png", "wsvmgui.svg", "demo/two_moons_like.csv")]
problems = [f"wheel lacks {n}" for n in needed if n not in wheel]
problems += [f"sdist lacks {n}" for n in [*needed, "pyproject.toml", "README.md"]
             if n not in sdist]
problems += [f"wheel holds {n}" for n in wheel
             if n.startswith("tests/") or "__pycache__" in n or n.endswith((".nbi", ".nbc"))]
print("\n".join(problems), file=sys.stderr)
sys.exit(1 if problems else 0)
EOF

# --- 2. a fresh venv with the wheel --------------------------------------------------------
log "fresh venv with $("$PYTHON" -V 2>&1) and the wheel (dependencies from the index)"
"$PYTHON" -m venv "$WORK/venv"
cpu_of "pip install" "$WORK/venv/bin/python" -m pip install -q --progress-bar off "$WHEEL" \
    >"$WORK/pip.log" 2>&1 || { tail -40 "$WORK/pip.log" >&2; die "pip install of the wheel"; }
mkdir -p "$WORK/run" "$WORK/home"
cd "$WORK/run"
unset PYTHONPATH
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" \
    XDG_CACHE_HOME="$WORK/home/.cache" XDG_DATA_HOME="$WORK/home/.local/share"
APP="$WORK/venv/bin/wsvmgui"
PY="$WORK/venv/bin/python"
where="$("$PY" -c 'import os, wsvmgui; print(os.path.dirname(wsvmgui.__file__))')"
case "$where" in
    "$WORK/venv/"*) log "imports wsvmgui from $where" ;;
    *) die "wsvmgui imported from $where, not from the fresh venv" ;;
esac

# --- 3. the version ------------------------------------------------------------------------
version="$(basename "$WHEEL" | cut -d- -f2)"
[ "$("$APP" --version)" = "wsvmgui $version" ] || die "wsvmgui --version: $("$APP" --version)"
log "wsvmgui --version: wsvmgui $version"

# --- 4. the command line, cold and warm --------------------------------------------------
cpu_of "wsvmgui demo, fresh install" "$APP" demo >demo1.out 2>demo1.err \
    || { cat demo1.out demo1.err >&2; die "wsvmgui demo"; }
grep -q "compiling the path engine (once, about" demo1.err \
    || { cat demo1.err >&2; die "no compile notice from the first wsvmgui demo"; }
grep -E "^(scheme|  L1)" demo1.out | sed 's/^/[wheel]   /'
# The demo compiled the path's kernels; the first warm-up compiles only the ones the demo
# did not use (the non-crossing repair's, the joint fit's), the second loads every one.
"$APP" --warm-up >warm1.out 2>&1 || { cat warm1.out >&2; die "wsvmgui --warm-up"; }
sed 's/^/[wheel]   /' warm1.out
"$APP" --warm-up >warm.out 2>&1 || { cat warm.out >&2; die "second wsvmgui --warm-up"; }
grep -q "path engine and joint fit's solver ready" warm.out || { cat warm.out >&2; die "warm-up after a compile"; }
grep -q "joint [0-9]" warm.out || { cat warm.out >&2; die "the warm-up did not count the joint fit's kernels"; }
sed 's/^/[wheel]   /' warm.out
cpu_of "wsvmgui demo, warm" "$APP" demo >demo2.out 2>demo2.err \
    || { cat demo2.out demo2.err >&2; die "second wsvmgui demo"; }
grep -q "compiling" demo2.err && { cat demo2.err >&2; die "the second demo compiled again"; }

# --- 5. the app, offscreen -----------------------------------------------------------------
cp "$REPO/packaging/smoke_app.py" "$WORK/run/smoke_app.py"
"$PY" -c 'import shutil, wsvmgui.resources as r; shutil.copy(r.demo_csv_path(), "moons.csv")'
export QT_QPA_PLATFORM=offscreen
cpu_of "app smoke test, empty numba cache" env NUMBA_CACHE_DIR="$WORK/numba-cache" \
    "$PY" smoke_app.py moons.csv --expect-compile yes 2>smoke1.err \
    || { cat smoke1.err >&2; die "app smoke test (cold)"; }
cpu_of "app smoke test, warm" env NUMBA_CACHE_DIR="$WORK/numba-cache" \
    "$PY" smoke_app.py moons.csv --expect-compile no 2>smoke2.err \
    || { cat smoke2.err >&2; die "app smoke test (warm)"; }

# --- 6. the desktop entry ------------------------------------------------------------------
"$APP" --install-desktop >desktop.out || { cat desktop.out >&2; die "--install-desktop"; }
entry="$XDG_DATA_HOME/applications/wsvmgui.desktop"
for f in "$entry" "$XDG_DATA_HOME/icons/hicolor/256x256/apps/wsvmgui.png" \
    "$XDG_DATA_HOME/icons/hicolor/scalable/apps/wsvmgui.svg"; do
    [ -s "$f" ] || die "--install-desktop did not write $f"
done
grep -qx "Exec=$APP gui %f" "$entry" || { cat "$entry" >&2; die "Exec of the desktop entry"; }
if command -v desktop-file-validate >/dev/null 2>&1; then
    desktop-file-validate "$entry" || die "desktop-file-validate $entry"
    log "desktop entry valid (desktop-file-validate)"
else
    log "desktop-file-validate not installed: entry not validated"
fi
log "desktop entry: $(grep '^Exec=' "$entry")"

log "all checks passed in $(($(date +%s) - start)) s"
