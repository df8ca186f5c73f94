"""A builder's literal option defaults read from its source, without importing its module.

Reports label a run non-official from its graph's defaults; importing the builder's module for that
would pull langgraph, cv2 and the tools into `kinegraph compare` (tests/test_startup_imports.py). A default
that names a module-level constant (`tcogmap.TURN_YAW_THRESHOLD_DEG`) is followed to its literal value.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any


def literal_defaults(target: str) -> dict[str, Any] | None:
    """The literal defaults of `package.module:function`'s parameters, or None when its source cannot be
    read this way (module imported already, no source file, no such function); others are left out."""
    module_name, _, function = target.partition(":")
    if not function or "." in function or module_name in sys.modules:
        return None
    tree = _tree(module_name)
    for node in tree.body if tree else ():
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return _defaults(node.args, module_name, tree)
    return None


#: What `source_options` gives an option without a default.
REQUIRED = object()


def source_options(target: str) -> list[tuple[str, Any]] | None:
    """`package.module:function`'s named parameters in order with their defaults read from its source
    (`REQUIRED` without one; the source text, e.g. `tcogmap.TURN_YAW`, for one that is no literal), or None
    as `literal_defaults` gives it (then read the builder's signature instead)."""
    module_name, _, function = target.partition(":")
    if not function or "." in function or module_name in sys.modules:
        return None
    tree = _tree(module_name)
    for node in tree.body if tree else ():
        if isinstance(node, ast.FunctionDef) and node.name == function:
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            nodes = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
            params = [
                *zip(positional, nodes, strict=True),
                *zip(args.kwonlyargs, args.kw_defaults, strict=True),
            ]
            return [(arg.arg, _shown(default, module_name, tree)) for arg, default in params]
    return None


def _shown(node: ast.expr | None, module_name: str, tree: ast.Module) -> Any:
    if node is None:
        return REQUIRED
    try:
        return _value(node, module_name, tree)
    except (ValueError, LookupError):
        return ast.unparse(node)


def _tree(module_name: str) -> ast.Module | None:
    """The parsed source of `module_name`, found without importing it (None without a .py file)."""
    top, *parts = module_name.split(".")
    try:
        spec = importlib.util.find_spec(top)
        for part in parts:  # each package's folder in turn: find_spec(dotted) would import the parents
            if spec is None or spec.submodule_search_locations is None:
                return None
            spec = PathFinder.find_spec(part, list(spec.submodule_search_locations))
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def _defaults(args: ast.arguments, module_name: str, tree: ast.Module) -> dict[str, Any]:
    """Parameter name -> literal default, positional and keyword-only alike."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
    found = {}
    for arg, node in pairs:
        try:
            found[arg.arg] = _value(node, module_name, tree)
        except (ValueError, LookupError):
            continue
    return found


def _value(node: ast.expr, module_name: str, tree: ast.Module) -> Any:
    """A literal, a module-level constant of this module or imported from another, or `alias.CONSTANT`."""
    if isinstance(node, ast.Name):
        try:
            return _constant(tree, node.id)
        except LookupError:  # `from pkg.mod import NAME`: the constant where it is defined
            other = _tree(_imported_as(tree, node.id, module_name).rpartition(".")[0])
            if other is None:
                raise
            return _constant(other, node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        other = _tree(_imported_as(tree, node.value.id, module_name))
        if other is None:
            raise LookupError(node.value.id)
        return _constant(other, node.attr)
    return ast.literal_eval(node)


def _constant(tree: ast.Module, name: str) -> Any:
    """The literal a module-level `NAME = literal` assigns."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.literal_eval(node.value)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            if node.value is not None:
                return ast.literal_eval(node.value)
    raise LookupError(name)


def _imported_as(tree: ast.Module, alias: str, module_name: str) -> str:
    """The module a module-level import binds to `alias` (`from pkg import mod`, `import pkg.mod as m`)."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in node.names:
                if (name.asname or name.name) == alias:
                    return f"{node.module}.{name.name}"
        if isinstance(node, ast.Import):
            for name in node.names:
                if name.asname == alias:
                    return name.name
    raise LookupError(f"{alias} in {module_name}")
