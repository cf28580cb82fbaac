"""wsvmgui.core must stay free of Qt: it is the library that the CLI, the GUI and scripts share.

Checked twice: statically (every import statement, and importlib/__import__ calls with a
literal name, in every .py file under wsvmgui/core) and dynamically (importing every core
module in a fresh interpreter and looking at sys.modules).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import wsvmgui.core

CORE_DIR = Path(wsvmgui.core.__file__).resolve().parent
FORBIDDEN = ("PySide6", "PySide2", "PyQt4", "PyQt5", "PyQt6", "pyqtgraph", "shiboken2", "shiboken6",
             "qtpy", "sip")


def _is_forbidden(module_name: str) -> bool:
    top = module_name.split(".")[0]
    return top in FORBIDDEN or top.startswith("PyQt") or top.startswith("shiboken")


def _imported_names(source: str) -> list[tuple[int, str]]:
    """(line, module name) for every absolute import in ``source``.

    Covers ``import a.b``, ``from a.b import c``, and ``importlib.import_module("a")`` /
    ``__import__("a")`` with a literal string.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                found.append((node.lineno, node.module))
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


def _core_files() -> list[Path]:
    return sorted(CORE_DIR.rglob("*.py"))


def _core_module_names() -> list[str]:
    names = []
    for path in _core_files():
        parts = path.relative_to(CORE_DIR.parent.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def test_detector_sees_qt_imports():
    source = textwrap.dedent(
        """
        import numpy as np
        from PySide6.QtCore import QObject
        import pyqtgraph as pg
        import importlib
        importlib.import_module("PyQt5.QtWidgets")
        from . import ladder
        """
    )
    hits = [name for _, name in _imported_names(source) if _is_forbidden(name)]
    assert hits == ["PySide6.QtCore", "pyqtgraph", "PyQt5.QtWidgets"]


def test_core_has_modules_to_check():
    names = _core_module_names()
    assert "wsvmgui.core" in names
    assert len(names) >= 5, names


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: p.name)
def test_core_source_has_no_qt_import(path: Path):
    bad = [
        f"{path.name}:{line}: {name}"
        for line, name in _imported_names(path.read_text(encoding="utf-8"))
        if _is_forbidden(name)
    ]
    assert not bad, "Qt imported in wsvmgui.core: " + ", ".join(bad)


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


def test_importing_core_loads_no_qt():
    names = _core_module_names()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(FORBIDDEN), json.dumps(names)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(CORE_DIR.parent.parent),
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["before"] == [], "a fresh interpreter already had Qt loaded"
    assert result["errors"] == {}, f"core modules failed to import: {result['errors']}"
    assert result["culprits"] == {}, f"core modules pulled in Qt: {result['culprits']}"
    assert result["after"] == []
