"""Loaders hold the vocabulary and import nothing from scorers or graphs, not even inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import kinegraph

PACKAGE = Path(kinegraph.__file__).parent
FORBIDDEN = {
    "benchmarks": ("kinegraph.evaluators", "kinegraph.graphs"),
    "tools": ("kinegraph.benchmarks", "kinegraph.evaluators", "kinegraph.graphs"),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, at any depth (functions, branches, classes)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = node.module if node.level == 0 else f"<relative>.{node.module}"
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return out


def violations(layer: str) -> list[str]:
    return [
        f"{path.relative_to(PACKAGE)}:{line}: {module}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for line, module in imported_modules(path)
        if module.startswith("<relative>") or any(module.startswith(f) for f in FORBIDDEN[layer])
    ]


def test_benchmarks_import_nothing_from_evaluators_or_graphs():
    assert violations("benchmarks") == []


def test_tools_import_nothing_from_benchmarks_evaluators_or_graphs():
    assert violations("tools") == []


def test_the_walk_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    if True:\n        from kinegraph.evaluators import egodyn\n")
    assert (3, "kinegraph.evaluators") in imported_modules(module)
