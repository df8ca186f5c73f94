"""No import cycle among the graph modules, counting the imports made inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import kinegraph.graphs

PACKAGE = "kinegraph.graphs"


def graph_imports(folder: Path) -> dict[str, set[str]]:
    """Module -> the graph modules it imports anywhere in its body (module level or in a function)."""
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    edges: dict[str, set[str]] = {}
    for stem in modules:
        imported = set()
        for node in ast.walk(ast.parse((folder / f"{stem}.py").read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if name.startswith(f"{PACKAGE}.") and parts[2] in modules and parts[2] != stem:
                    imported.add(parts[2])
        edges[stem] = imported
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as the path around it, or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for target in sorted(edges[module]):
            if state.get(target) == "open":
                return path[path.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[module] = "done"
        path.pop()
        return None

    for module in sorted(edges):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_walk_finds_a_cycle_through_a_function_level_import(tmp_path):
    (tmp_path / "a.py").write_text(f"from {PACKAGE}.b import x\n")
    (tmp_path / "b.py").write_text(f"def f():\n    from {PACKAGE} import c\n")
    (tmp_path / "c.py").write_text(f"import {PACKAGE}.a\n")
    assert find_cycle(graph_imports(tmp_path)) == ["a", "b", "c", "a"]


def test_no_import_cycle_among_the_graph_modules():
    edges = graph_imports(Path(kinegraph.graphs.__file__).parent)
    assert {"egodyn", "egodyn_calls", "egodyn_tools", "egodyn_measured"} <= set(edges)
    assert find_cycle(edges) is None
