"""The package's import graph has no cycle, module by module and folded to first-level packages, and its
arrows run downward only (DESIGN.md): every import counts, also those inside functions."""

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


def first_level(module: str, root: str = "kinegraph") -> str:
    """`kinegraph.graphs.tad.builders` -> `kinegraph.graphs`; a top-level module is its own package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == root else module


def package_graph(graph: dict[str, set[str]], root: str = "kinegraph") -> dict[str, set[str]]:
    """The module graph folded to first-level packages (an import inside a package is no edge)."""
    out: dict[str, set[str]] = {}
    for name, deps in graph.items():
        package = first_level(name, root)
        out.setdefault(package, set()).update(d for d in (first_level(d, root) for d in deps) if d != package)
        for dep in deps:
            out.setdefault(first_level(dep, root), set())
    return out


def test_the_first_level_packages_import_each_other_without_a_cycle():
    modules = module_files()
    packages = package_graph({name: imported_modules(name, path, modules) for name, path in modules.items()})
    assert {"kinegraph.graphs", "kinegraph.tool_registry", "kinegraph.types"} <= set(packages)
    assert "kinegraph.tools" in packages["kinegraph.graphs"]  # the folded graph is read
    cycle = find_cycle(packages)
    assert cycle is None, "package import cycle: " + " -> ".join(cycle or [])


def test_folding_finds_a_package_cycle_the_module_graph_does_not_have(tmp_path):
    files = {
        "pkg.a.x": "import pkg.b.y\n",
        "pkg.b.y": "X = 1\n",
        "pkg.b.z": "def f():\n    from pkg.a.w import g\n",
        "pkg.a.w": "def g():\n    return 1\n",
    }
    modules = {}
    for name, text in files.items():
        modules[name] = tmp_path / f"{name}.py"
        modules[name].write_text(text)
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    assert find_cycle(graph) is None  # module by module: a.x -> b.y, b.z -> a.w
    packages = package_graph(graph, root="pkg")
    assert packages == {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    assert find_cycle(packages) == ["pkg.a", "pkg.b", "pkg.a"]


#: DESIGN.md's floors, lowest first: a package imports only from its own floor or below.
FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset("kinegraph" if name == "kinegraph" else f"kinegraph.{name}" for name in floor.split())
    for floor in (
        "types registry errors media rundir atomic bounded_read paths media_limits jsonfiles microbatch "
        "roles subsets unicode_text yaml_files fixtures extras click_errors",
        "agents tools",
        "benchmarks",
        "suites",
        "evaluators tool_registry data",
        "graphs",
        "run report listing",
        "kinegraph api demo cli serve studio mcp view reproduce",
    )
)


def upward_imports(packages: dict[str, set[str]], floors: tuple[frozenset[str], ...]) -> list[str]:
    """Every `a -> b` where `b` lives on a higher floor than `a`; a package on no floor is reported too."""
    floor_of = {name: level for level, floor in enumerate(floors) for name in floor}
    out = [f"{name} is on no floor" for name in sorted(packages) if name not in floor_of]
    for name, deps in sorted(packages.items()):
        level = floor_of.get(name, len(floors))
        out += [f"{name} -> {d}" for d in sorted(deps) if floor_of.get(d, -1) > level]
    return out


def test_imports_run_downward_only():
    modules = module_files()
    packages = package_graph({name: imported_modules(name, path, modules) for name, path in modules.items()})
    assert upward_imports(packages, FLOORS) == []


def test_an_upward_import_is_named():
    floors = (frozenset({"k.tools"}), frozenset({"k.graphs"}))
    packages = {"k.tools": {"k.graphs"}, "k.graphs": {"k.tools"}}
    assert upward_imports(packages, floors) == ["k.tools -> k.graphs"]
    assert upward_imports({"k.new": set()}, floors) == ["k.new is on no floor"]
