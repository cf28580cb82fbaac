"""The package's layering contract: a lower layer never imports a higher one, Qt only in gui.

Layers, lowest first (README "Layout"):

0. ``errors``, ``_version``; 1. ``progress``, ``_sklearn_compat`` (plumbing every layer
   may use)
2. ``solvers`` (kernels, one weighted fit and its KKT check), ``executor`` (where
   independent tasks run: threads or a Dask cluster; peers)
3. ``ladder`` (weight grids, ladders, exact path, rules, tuning, non-crossing)
4. ``multiclass``, ``joint``, ``probing`` (the reductions and the joint fit; peers)
5. ``estimators`` (the scikit-learn classes)
6. ``evaluation``, ``io`` (peers)
7. ``app`` (Qt-free settings, scheme registry, data sets, the analysis the views draw)
8. ``cli``, ``gui`` (peers; ``gui`` is the only place Qt lives)
9. ``wsvmgui`` itself and ``__main__`` (the public API and the entry point)

Checked twice: statically (every import statement, also inside functions, and
``importlib.import_module`` / ``__import__`` calls with a literal name, in every module)
and dynamically (every module outside ``gui`` imported in a fresh interpreter, with no Qt
module loaded afterwards).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import wsvmgui

PKG_DIR = Path(wsvmgui.__file__).resolve().parent
LAYERS: dict[str, int] = {
    "errors": 0,
    "_version": 0,
    "progress": 1,
    "_sklearn_compat": 1,
    "executor": 2,
    "solvers": 2,
    "ladder": 3,
    "multiclass": 4,
    "joint": 4,
    "probing": 4,
    "estimators": 5,
    "evaluation": 6,
    "io": 6,
    "app": 7,
    "cli": 8,
    "gui": 8,
    "": 9,
    "__main__": 9,
}
QT = (
    "PySide6",
    "PySide2",
    "PyQt4",
    "PyQt5",
    "PyQt6",
    "pyqtgraph",
    "shiboken2",
    "shiboken6",
    "qtpy",
    "sip",
)
RESOURCES = "resources"  # data files with a tiny loader; any layer may read them


def _is_qt(module_name: str) -> bool:
    top = module_name.split(".")[0]
    return top in QT or top.startswith(("PyQt", "shiboken"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source`` of ``module``."""
    found = []
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append((node.lineno, node.module or ""))
                continue
            parent = base[: len(base) - (node.level - 1)]
            target = ".".join(parent + ([node.module] if node.module else []))
            if node.module:
                found.append((node.lineno, target))
            else:  # from . import a, b: each name may be a submodule
                found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            arg = node.args[0]
            if (
                name in ("import_module", "__import__")
                and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
            ):
                found.append((node.lineno, arg.value))
    return found


def _part(module: str) -> str:
    """The layer key of a wsvmgui module: its first component below ``wsvmgui``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _violations(module: str, imports: list[tuple[int, str]]) -> list[str]:
    here = _part(module)
    bad = []
    for line, name in imports:
        if _is_qt(name):
            if here != "gui":
                bad.append(f"{module}:{line} imports Qt ({name}) outside wsvmgui.gui")
            continue
        if name != "wsvmgui" and not name.startswith("wsvmgui."):
            continue
        there = _part(name)
        if there in (here, RESOURCES):
            continue
        if there not in LAYERS:
            bad.append(f"{module}:{line} imports {name}, which is in no layer")
        elif LAYERS[there] >= LAYERS[here]:
            bad.append(
                f"{module}:{line} (layer {LAYERS[here]}, {here or 'wsvmgui'}) imports {name} "
                f"(layer {LAYERS[there]}, {there or 'wsvmgui'})"
            )
    return bad


def _package_files() -> list[Path]:
    return sorted(p for p in PKG_DIR.rglob("*.py") if "resources" not in p.parts)


def test_every_part_of_the_package_has_a_layer():
    parts = {_part(_module_name(p)) for p in _package_files()}
    assert parts - set(LAYERS) == set(), "add the new part to LAYERS and README's Layout"


def test_detector_sees_every_kind_of_violation():
    source = textwrap.dedent(
        """
        import numpy as np
        from PySide6.QtCore import QObject
        from ..estimators.binary import WeightedSVMClassifier
        from .. import app
        from .grid import Ladder
        def later():
            import importlib
            importlib.import_module("wsvmgui.gui.main_window")
        """
    )
    found = _violations("wsvmgui.ladder.tuning", _imports(source, "wsvmgui.ladder.tuning", False))
    assert len(found) == 4, found
    assert "Qt" in found[0] and "estimators" in found[1] and "app" in found[2]
    assert "gui" in found[3]


@pytest.mark.parametrize("path", _package_files(), ids=lambda p: str(p.relative_to(PKG_DIR)))
def test_module_respects_the_layers(path: Path):
    module = _module_name(path)
    imports = _imports(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
    bad = _violations(module, imports)
    assert not bad, "\n".join(bad)


_CHILD = """
import importlib, json, sys
forbidden = set(json.loads(sys.argv[1]))
def qt_modules():
    return sorted(m for m in sys.modules
                  if m.split(".")[0] in forbidden or m.startswith(("PyQt", "shiboken")))
result = {"before": qt_modules(), "culprits": {}, "errors": {}}
for name in json.loads(sys.argv[2]):
    seen = set(qt_modules())
    try:
        importlib.import_module(name)
    except Exception as exc:
        result["errors"][name] = repr(exc)
    new = sorted(set(qt_modules()) - seen)
    if new:
        result["culprits"][name] = new
result["after"] = qt_modules()
print(json.dumps(result))
"""


def test_importing_everything_outside_gui_loads_no_qt():
    names = [
        _module_name(p)
        for p in _package_files()
        if _part(_module_name(p)) not in ("gui", "__main__")
    ]
    assert "wsvmgui.solvers.wsvm" in names and "wsvmgui.app.analysis" in names
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(QT), json.dumps(names)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(PKG_DIR.parent),
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["before"] == [], "a fresh interpreter already had Qt loaded"
    assert result["errors"] == {}, f"modules failed to import: {result['errors']}"
    assert result["culprits"] == {}, f"modules pulled in Qt: {result['culprits']}"


#: Modules allowed to name scikit-learn's private modules: the compatibility module, and
#: the fast libsvm binding (its own public fallback and self-check).
SKLEARN_PRIVATE_OK = {"wsvmgui._sklearn_compat", "wsvmgui.solvers._libsvm_direct"}


def _private_sklearn(source: str) -> list[tuple[int, str]]:
    """(line, what) of every import of a private scikit-learn module or name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [(a.name, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [(node.module, f"{node.module}.{a.name}") for a in node.names]
        else:
            continue
        for module, full in names:
            if module.split(".")[0] == "sklearn" and any(
                part.startswith("_") for part in full.split(".")[1:]
            ):
                found.append((node.lineno, full))
    return found


def test_private_sklearn_names_are_imported_in_one_place():
    """scikit-learn's private names come through ``wsvmgui._sklearn_compat`` only."""
    assert _private_sklearn("from sklearn.utils._param_validation import Interval\n")
    assert _private_sklearn("from sklearn.calibration import _SigmoidCalibration\n")
    assert not _private_sklearn("from sklearn.svm import SVC\n")
    bad = [
        f"{_module_name(path)}:{line} imports {name}"
        for path in _package_files()
        if _module_name(path) not in SKLEARN_PRIVATE_OK
        for line, name in _private_sklearn(path.read_text(encoding="utf-8"))
    ]
    assert not bad, "\n".join(bad)
