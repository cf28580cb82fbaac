"""The shape of the app and GUI packages: the app's modules import one another without a
cycle (the run on top, the cost estimate below it, the run's inputs below both; names used
only in annotations, under ``if TYPE_CHECKING:``, do not count), and no
module or function of app/ and gui/ grows past the sizes a reader can hold (the main
window under 500 lines).  Read from the source, without importing Qt."""

from __future__ import annotations

import ast
from pathlib import Path

import wsvmgui

PKG = Path(wsvmgui.__file__).resolve().parent
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100
MAX_MAIN_WINDOW_LINES = 500


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def _app_imports(path: Path) -> set[str]:
    """Modules of wsvmgui.app that ``path`` imports when it runs (inside functions too)."""
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .x import y
                found.add(node.module.split(".")[0])
            elif node.level == 1:  # from . import x
                found.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("wsvmgui.app."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("wsvmgui.app."):
                    found.add(alias.name.split(".")[2])
    return found


def _graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in (PKG / "app").glob("*.py") if p.stem != "__init__"}
    return {name: _app_imports(path) & set(modules) - {name} for name, path in modules.items()}


def test_the_app_modules_import_one_another_without_a_cycle():
    graph = _graph()
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == "done":
            return
        assert state.get(name) != "open", "import cycle: " + " -> ".join([*trail, name])
        state[name] = "open"
        for dep in sorted(graph[name]):
            visit(dep, [*trail, name])
        state[name] = "done"
        order.append(name)

    for name in sorted(graph):
        visit(name, [])
    assert len(order) == len(graph)


def test_the_cost_estimate_sits_between_the_run_inputs_and_the_run():
    graph = _graph()
    assert "analysis" not in graph["cost"]  # the one cycle of old
    assert {"run_inputs", "phases"} <= graph["cost"]
    assert "cost" in graph["analysis"]
    for low in ("phases", "plane", "view_data", "run_inputs"):
        assert not graph[low] & {"analysis", "cost", "boundaries", "baselines"}, low


def _sizes(folder: Path):
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text()
        functions = [
            (node.name, node.end_lineno - node.lineno + 1)
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        yield path.relative_to(PKG.parent), text.count("\n"), functions


def test_modules_and_functions_of_app_and_gui_stay_small():
    too_long = []
    for folder in (PKG / "app", PKG / "gui"):
        for path, lines, functions in _sizes(folder):
            if lines > MAX_MODULE_LINES:
                too_long.append(f"{path}: {lines} lines")
            too_long += [
                f"{path}: {name}() {n} lines" for name, n in functions if n > MAX_FUNCTION_LINES
            ]
    assert not too_long, too_long
    main_window = (PKG / "gui" / "main_window.py").read_text().count("\n")
    assert main_window < MAX_MAIN_WINDOW_LINES, main_window


def test_the_gui_probes_no_view_and_reads_no_private_state_of_another_object():
    """Views are asked through their protocol (no ``hasattr(view, ...)``), and no module
    of gui/ reaches into another object's underscore attributes."""
    offences = []
    for path in sorted((PKG / "gui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "hasattr"
                and isinstance(node.args[0], ast.Name)
                and "view" in node.args[0].id
            ):
                offences.append(f"{path.name}:{node.lineno} hasattr({node.args[0].id}, ...)")
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and not (isinstance(node.value, ast.Call) and _is_super(node.value))
            ):
                offences.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert not offences, offences


def _is_super(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "super"
