"""Installing wsvmgui: the path engine's warm-up and compile notice, the desktop entry,
the app opening a file from the command line, and the setup script's switches.

The wheel itself (built, installed into a fresh venv and run from elsewhere) is checked
by ``packaging/check_wheel.sh``, a step of ``.ci/run``.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from wsvmgui import __version__, cli, resources
from wsvmgui.io import desktop
from wsvmgui.ladder import warmup

REPO = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------- warm-up
_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from wsvmgui.ladder.warmup import compile_notice
said = []
with compile_notice(said.append):
    import tinykernels
assert tinykernels.double(2.0) == 4.0 and tinykernels.square(3.0) == 9.0
print(len(said), said[0] if said else "")
"""


def test_compile_notice_speaks_once_before_a_compile_and_never_for_a_cache_load(tmp_path):
    """Two cached kernels compiled in a fresh process give one notice; the next process
    loads them from numba's cache and gives none."""
    (tmp_path / "tinykernels.py").write_text(
        textwrap.dedent(
            """
            from numba import njit

            @njit("float64(float64)", cache=True)
            def double(x):
                return 2.0 * x

            @njit("float64(float64)", cache=True)
            def square(x):
                return x * x
            """
        )
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    runs = [
        subprocess.run(
            [sys.executable, "-c", _CHILD, str(tmp_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        ).stdout.strip()
        for _ in range(2)
    ]
    assert runs == [f"1 {warmup.compile_message('tinykernels')}", "0"]
    assert any((tmp_path / "cache").rglob("tinykernels.double-*.nbi"))


def test_compile_notice_hears_a_compile_on_another_thread_and_only_inside_the_block():
    from numba import njit

    said: list[str] = []
    with warmup.compile_notice(said.append):
        worker = threading.Thread(target=lambda: njit("int64(int64)")(lambda x: x + 1))
        worker.start()
        worker.join()
    assert said == ["compiling numba kernels (once)"]
    njit("int64(int64)")(lambda x: x + 2)  # after the block: not announced
    assert said == ["compiling numba kernels (once)"]


def _kernel_of(module: str):
    """A fresh function (always a compile) that numba reads as defined in ``module``."""

    def kernel(x):
        return x + 1

    kernel.__module__ = module
    return kernel


def test_compile_notice_names_what_compiles_once_per_group():
    """The joint fit's kernels compiling is not "the path engine": each group is named by
    the package of the kernel numba compiles, once however many of its kernels compile."""
    from numba import njit

    said: list[str] = []
    with warmup.compile_notice(said.append):
        for module in ("wsvmgui.joint._as_face", "wsvmgui.joint._as_steps"):
            njit("int64(int64)")(_kernel_of(module))
        for module in ("wsvmgui.ladder._path_kernel", "wsvmgui.ladder._path_start"):
            njit("int64(int64)")(_kernel_of(module))
    assert said == [
        "compiling the joint fit's solver (once, about 25-60 s)",
        "compiling the path engine (once, about 15-50 s)",
    ]
    assert said[1] == warmup.COMPILE_MESSAGE  # the first fit's, which the wheel check greps


def test_warm_up_accounts_for_every_compiled_kernel():
    """Every compiled kernel of the ladder and joint packages (found by walking their
    modules, not from the warm-up's own lists) was either compiled or loaded by the
    warm-up of ``wsvmgui --warm-up`` and the app, in its group, and the caches named
    exist (this venv's setup warmed them up)."""
    import importlib
    import pkgutil

    from numba.core.dispatcher import Dispatcher

    import wsvmgui.joint
    import wsvmgui.ladder
    from wsvmgui.joint.kernels import ENGINE_KERNELS

    result = warmup.warm_up(groups=ENGINE_KERNELS)
    by_group = {g.name: g for g in result.groups}
    assert list(by_group) == ["ladder", "joint"]
    for package in (wsvmgui.ladder, wsvmgui.joint):
        n_kernels = 0
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            n_kernels += sum(
                isinstance(obj, Dispatcher) and obj.__module__ == module.__name__
                for obj in vars(module).values()
            )
        group = by_group[package.__name__.split(".")[-1]]
        assert n_kernels >= 10
        assert group.compiled + group.loaded == n_kernels, group
        assert group.cache_dir is not None and Path(group.cache_dir).is_dir()
        assert group.cache_dir in result.describe()
    assert result.compiled + result.loaded == sum(g.compiled + g.loaded for g in result.groups)


class _Stats:
    """A numba dispatcher's ``stats`` (cache hits and misses by signature)."""

    def __init__(self, hits: int, misses: int, path: str):
        self.cache_hits = {"sig": hits} if hits else {}
        self.cache_misses = {"sig": misses} if misses else {}
        self.cache_path = path


class _Kernel:
    def __init__(self, module: str, hits: int, misses: int, path: str):
        self.__module__ = module
        self.stats = _Stats(hits, misses, path)


def _stub_group(name: str, kernels: list[tuple[int, int]], imported=()):
    """A loader of one stub module holding kernels ``(hits, misses)``, and ``imported``
    kernels defined in another module (which must not count here)."""
    import types

    module = types.ModuleType(f"stub.{name}")
    for i, (hits, misses) in enumerate(kernels):
        setattr(module, f"k{i}", _Kernel(module.__name__, hits, misses, f"/cache/{name}"))
    for i, kernel in enumerate(imported):
        setattr(module, f"imported{i}", kernel)
    module.helper = len  # not a kernel
    return lambda: [module]


def test_warm_up_counts_every_group_and_is_ready_only_when_none_compiled():
    """On a stub registry (no compiling): counts by group and in all, a kernel imported
    from another module counted once, and "<what it covers> ready" only when no group
    compiled (the wheel check greps for it after a second warm-up)."""
    foreign = _Kernel("stub.elsewhere", 1, 0, "/cache/elsewhere")
    warm = {
        "ladder": _stub_group("ladder", [(1, 0), (1, 0)]),
        "joint": _stub_group("joint", [(1, 0), (1, 0), (1, 0)], imported=[foreign]),
    }
    result = warmup.warm_up(groups=warm)
    assert [(g.name, g.compiled, g.loaded) for g in result.groups] == [
        ("ladder", 0, 2),
        ("joint", 0, 3),
    ]
    assert (result.compiled, result.loaded) == (0, 5)
    text = result.describe()
    assert text.startswith(
        "path engine and joint fit's solver ready: 5 compiled kernels (ladder 2, joint 3) loaded"
    )
    assert "/cache/ladder and /cache/joint" in text
    # the ladder's kernels cached, the joint fit's compiled: not ready
    cold = {**warm, "joint": _stub_group("joint", [(0, 1), (0, 1), (1, 0)])}
    result = warmup.warm_up(groups=cold)
    assert (result.compiled, result.loaded) == (2, 3)
    text = result.describe()
    assert "ready" not in text
    assert text.startswith("path engine and joint fit's solver compiled in")
    assert "(2 kernels: joint 2; 3 loaded)" in text
    # the default is the ladder's group alone (this layer cannot know the joint fit's)
    assert list(warmup.LADDER_KERNELS) == ["ladder"]


def test_the_warm_up_line_names_the_groups_it_covers():
    """A warm-up of the ladder's group alone is the path engine's; another group is named
    by its name; without a writable cache the line says every process compiles again."""
    ladder = warmup.warm_up(groups={"ladder": _stub_group("ladder", [(1, 0)])})
    assert ladder.describe().startswith("path engine ready: 1 compiled kernels loaded")
    other = warmup.warm_up(groups={"ladder": _stub_group("ladder", [(1, 0)]),
                                   "gpu": _stub_group("gpu", [(0, 1)])})  # fmt: skip
    assert other.covers == "path engine and gpu"
    assert other.describe().startswith("path engine and gpu compiled in")
    uncached = warmup.WarmUp(3, 0, 1.0, None, ladder.groups)
    assert uncached.describe().startswith("path engine compiled in 1.0 s, in memory only")


def test_warm_up_command(capsys):
    assert cli.main(["--warm-up"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    covers = "path engine and joint fit's solver"  # both groups: ladder and joint
    assert out[-1].startswith((f"{covers} ready", f"{covers} compiled"))
    assert cli.main(["--warm-up", "schemes"]) == 2
    assert "take no command" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["demo"], 1),
        (["fit", "--quiet", "x.csv", "--label", "y", "--out", "o.csv"], 0),
        (["schemes"], 0),
    ],
)
def test_fit_commands_announce_a_compile_on_stderr(monkeypatch, capsys, argv, expected):
    """A compile during fit, predict or demo is announced on stderr (unless --quiet);
    the command that fits nothing does not listen."""
    from numba import njit

    def compiles(args):
        njit("int64(int64)")(_kernel_of("wsvmgui.ladder._path_kernel"))  # always a compile
        return 0

    monkeypatch.setitem(cli.COMMANDS, argv[0], compiles)
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert err.count(warmup.COMPILE_MESSAGE) == expected, err


# --------------------------------------------------------------------- desktop entry
def _exec_argv(value: str) -> list[str]:
    """An Exec value read as the Desktop Entry specification says: the string escapes
    first, then the quoting (inside double quotes a backslash escapes ``"`$\\``), then
    ``%%`` is a percent sign."""
    escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    text = re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(0)), value)
    args: list[str] = []
    arg: list[str] | None = None
    quoted = False
    i = 0
    while i < len(text):
        c = text[i]
        if quoted and c == "\\" and text[i + 1 : i + 2] in ('"', "`", "$", "\\"):
            arg = (arg or []) + [text[i + 1]]
            i += 1
        elif c == '"':
            quoted = not quoted
            arg = arg or []
        elif c == " " and not quoted:
            if arg is not None:
                args.append("".join(arg))
            arg = None
        else:
            arg = (arg or []) + [c]
        i += 1
    if arg is not None:
        args.append("".join(arg))
    return [a.replace("%%", "%") for a in args]


def _entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


@pytest.mark.parametrize(
    "command",
    [
        ["/opt/wsvmgui/bin/wsvmgui"],
        ['/home/a b/my "venv"/bin/wsvmgui'],
        ["/usr/bin/python3", "-m", "wsvmgui"],
        ["/tmp/100%/$HOME/back\\slash/wsvmgui"],
    ],
)
def test_install_desktop_writes_entry_and_icons(tmp_path, command):
    written = desktop.install_desktop(tmp_path / "share", command=command, refresh=False)
    entry_path, png, svg = written
    assert entry_path == tmp_path / "share" / "applications" / "wsvmgui.desktop"
    assert png.read_bytes() == resources.icon_path().read_bytes()
    assert svg.read_bytes() == resources.icon_path(svg=True).read_bytes()
    assert png.parent == tmp_path / "share" / "icons" / "hicolor" / "256x256" / "apps"
    assert svg.parent == tmp_path / "share" / "icons" / "hicolor" / "scalable" / "apps"
    entry = _entry(entry_path)
    assert _exec_argv(entry["Exec"]) == [*command, "gui", "%f"]
    assert entry["TryExec"].replace("\\\\", "\\") == command[0]
    assert entry["Icon"] == "wsvmgui"
    assert "text/csv" in entry["MimeType"].split(";")
    # nothing else changed from the shipped entry
    shipped = _entry(resources.resource_path(resources.DESKTOP_ENTRY))
    assert {k: v for k, v in entry.items() if k not in ("Exec", "TryExec")} == {
        k: v for k, v in shipped.items() if k != "Exec"
    }
    validator = shutil.which("desktop-file-validate")
    if validator:
        check = subprocess.run([validator, str(entry_path)], capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout


def test_desktop_entry_runs_this_installation():
    """The default command is this installation's wsvmgui (absolute, runnable)."""
    command = desktop.app_command()
    assert Path(command[0]).is_absolute()
    out = subprocess.run(
        [*command, "--version"], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == f"wsvmgui {__version__}"


def test_data_home_follows_xdg():
    home = Path.home() / ".local" / "share"
    assert desktop.data_home({"XDG_DATA_HOME": "/srv/data"}) == Path("/srv/data")
    assert desktop.data_home({}) == home
    assert desktop.data_home({"XDG_DATA_HOME": ""}) == home
    assert desktop.data_home({"XDG_DATA_HOME": "relative/dir"}) == home  # the spec: ignored


def test_install_desktop_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert cli.main(["--install-desktop"]) == 0
    out = capsys.readouterr().out
    entry = tmp_path / "applications" / "wsvmgui.desktop"
    assert f"wrote {entry}" in out and entry.is_file()
    assert _exec_argv(_entry(entry)["Exec"]) == [*desktop.app_command(), "gui", "%f"]


def test_gui_command_hands_the_file_to_the_app():
    opened: list[str | None] = []

    def open_app(path):
        opened.append(path)
        return 0

    assert cli.main(["gui", "data/my table.csv"], open_app=open_app) == 0
    assert cli.main(["gui"], open_app=open_app) == 0
    assert cli.main([], open_app=open_app) == 0
    assert opened == ["data/my table.csv", None, None]


def test_app_opens_a_file_and_runs_offscreen(tmp_path):
    """packaging/smoke_app.py against this installation: ``wsvmgui gui FILE`` opens the
    window with FILE, warms the path engine up and fits FILE with it."""
    pytest.importorskip("PySide6.QtWidgets")
    data = tmp_path / "my table.csv"
    shutil.copy(resources.demo_csv_path(), data)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    run = subprocess.run(
        [sys.executable, str(REPO / "packaging" / "smoke_app.py"), str(data)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"window opened with {data.name} (200 rows)" in run.stdout
    assert "run finished, probabilities for 200 rows" in run.stdout


# ---------------------------------------------------------------------------- scripts
def test_setup_script_switches():
    help_text = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup.sh"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "--test" in help_text and "--warm-up" in help_text and "--benchmarks" in help_text
    bad = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup.sh"), "--tset"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown argument --tset" in bad.stderr


def test_the_benchmarks_extra_holds_their_data_and_the_wheel_does_not_need_it():
    """palmerpenguins (the benchmark of record's penguins rows) is the ``benchmarks``
    extra, which setup.sh installs with --benchmarks and --test; the package itself (the
    wheel's requirements) does not depend on it."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["benchmarks"]
    assert any(r.startswith("palmerpenguins") for r in extra)
    assert not any("palmerpenguins" in r for r in project["dependencies"])
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert 'test) target=".[test,benchmarks]"' in setup
    assert 'benchmarks) target=".[benchmarks]"' in setup
