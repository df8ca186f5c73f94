"""The package's import graph has no cycle: every import counts, also those inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import kinegraph

PACKAGE = Path(kinegraph.__file__).parent


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the installed package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules `name` imports anywhere in its file. `from pkg import sub` counts as importing
    `pkg.sub` only (a parent package is always initialised first, which is not a dependency on it)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            targets.update(subs or [base])
            if len(subs) < len(node.names):
                targets.add(base)
    found = set()
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return path[path.index(dep) :] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_package_import_graph_has_no_cycle():
    modules = module_files()
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    assert len(graph) > 100 and graph["kinegraph.run.local"] >= {"kinegraph.run.invoke", "kinegraph.rundir"}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import x\n")
    modules = {"a": tmp_path / "a.py", "b": tmp_path / "b.py"}
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    assert graph == {"a": {"b"}, "b": {"a"}}
    assert find_cycle(graph) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
