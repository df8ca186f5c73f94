"""Every third-party module the package imports (at module level, inside functions, or by name through
`require`/`import_module`) comes from a distribution pyproject.toml declares, the optional ones in the
extra `kinegraph.extras` names; and no private module of another package is imported."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from kinegraph.extras import EXTRA_OF_MODULE

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kinegraph"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: Calls that import the module named by their first argument.
IMPORTING_CALLS = {"require", "require_sdk", "need", "import_module", "__import__", "find_spec", "files"}


def normalized(requirement: str) -> str:
    """The distribution name of a requirement, normalized (PEP 503)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return re.sub(r"[-_.]+", "-", name[0]).lower()


def extra_requirements(extra: str) -> set[str]:
    """The distributions of `extra`, its `kinegraph[...]` references expanded."""
    out: set[str] = set()
    for requirement in PROJECT["optional-dependencies"][extra]:
        nested = re.fullmatch(r"kinegraph\[(.+)\]", requirement)
        if nested:
            out |= set().union(*map(extra_requirements, nested[1].split(",")))
        else:
            out.add(normalized(requirement))
    return out


CORE = {normalized(r) for r in PROJECT["dependencies"]}
EXTRAS = {e: extra_requirements(e) for e in PROJECT["optional-dependencies"] if e != "dev"}
DECLARED = CORE.union(*EXTRAS.values())


def imports(path: Path) -> Iterator[tuple[str, int]]:
    """(dotted module, line) of every absolute import in `path`, function-level and by-name ones included."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno
            private = [a.name for a in node.names if a.name.startswith("_")]
            yield from ((f"{node.module}.{name}", node.lineno) for name in private)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in IMPORTING_CALLS and isinstance(node.args[0].value, str):
                yield node.args[0].value, node.lineno


def third_party() -> dict[str, list[str]]:
    """Top-level third-party module -> where it is imported (`file:line`)."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for module, line in imports(path):
            top = module.partition(".")[0]
            if top in sys.stdlib_module_names or top in ("kinegraph", "__future__") or not top.isidentifier():
                continue
            found.setdefault(top, []).append(f"{path.relative_to(ROOT)}:{line}")
    return found


def test_the_walk_sees_function_level_and_by_name_imports():
    found = third_party()
    assert "torch" in found and "ray" in found and "anthropic" in found  # in function bodies, by name
    assert "swagger_ui" in found  # importlib.resources.files("swagger_ui")


def test_every_imported_module_comes_from_a_declared_distribution():
    provided = importlib.metadata.packages_distributions()
    undeclared = {
        top: where
        for top, where in third_party().items()
        if not {normalized(d) for d in provided.get(top, [top])} & DECLARED
    }
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def test_optional_modules_are_in_the_extra_that_names_them_and_not_in_the_core():
    for module, (distribution, extra) in EXTRA_OF_MODULE.items():
        assert normalized(distribution) in EXTRAS[extra], f"{module}: {distribution} not in [{extra}]"
        assert normalized(distribution) not in CORE, f"{module}: {distribution} is in the core install"
    provided = importlib.metadata.packages_distributions()
    for top, where in third_party().items():
        distributions = {normalized(d) for d in provided.get(top, [top])}
        if not distributions & CORE:
            assert top in EXTRA_OF_MODULE, f"{top} ({where[0]}) is optional but kinegraph.extras has no hint"


def test_no_private_module_of_another_package_is_imported():
    private = [
        f"{where}: {module}"
        for path in sorted(SRC.rglob("*.py"))
        for module, line in imports(path)
        if not module.startswith("kinegraph")
        and any(part.startswith("_") and part != "__future__" for part in module.split(".")[1:])
        for where in [f"{path.relative_to(ROOT)}:{line}"]
    ]
    assert not private, private
