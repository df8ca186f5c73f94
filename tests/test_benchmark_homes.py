"""No benchmark is named in dispatch outside its home: every door reads the benchmark's card.

The rule: a string literal that is a benchmark's name (a registered suite, or a data source with a card
such as nuscenes) may not be compared (`==`, `!=`, `in`, `not in`), matched (`case "tad":`), used as a
dict key (`{"tad": ...}`, `dict(tad=...)`) or as a subscript (`table["tad"]`) anywhere in
`src/kinegraph` except the benchmark's homes, which are per-benchmark by design: `benchmarks/<name>/`,
`evaluators/<name>.py` and `evaluators/<name>_*.py` (its scorer and suite), and `graphs/<name>/` (its
family's graphs). Naming a benchmark elsewhere is fine (a registration, a message, a default value);
branching on it is not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kinegraph
from kinegraph.data.hub_layouts import data_cards

SRC = Path(kinegraph.__file__).parent


def benchmark_names() -> frozenset[str]:
    """Every benchmark name: the registered suites and the data sources with a card."""
    return frozenset(data_cards())


def in_a_home(relative: str, names: frozenset[str]) -> bool:
    """Whether `relative` (a path under src/kinegraph) is one benchmark's home (see the module docstring)."""
    parts = relative.split("/")
    if len(parts) > 2 and parts[0] in ("benchmarks", "graphs") and parts[1] in names:
        return True
    if len(parts) == 2 and parts[0] == "evaluators":
        stem = parts[1].removesuffix(".py")
        return any(stem == name or stem.startswith(f"{name}_") for name in names)
    return False


def _literals(node: ast.AST, names: frozenset[str]) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in names]


def name_dispatch(source: str, names: frozenset[str]) -> list[tuple[int, str]]:
    """(line, name) of every benchmark-name literal compared, matched, used as a dict key or subscript."""
    hits: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        found: list[str] = []
        if isinstance(node, ast.Compare):
            found = _literals(node, names)
        elif isinstance(node, ast.Dict):
            found = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in names]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            found = [k.arg for k in node.keywords if k.arg in names]
        elif isinstance(node, ast.Subscript):
            found = _literals(node.slice, names)
        elif isinstance(node, ast.match_case):
            found = _literals(node.pattern, names)
        line = node.pattern.lineno if isinstance(node, ast.match_case) else getattr(node, "lineno", 0)
        hits += [(line, name) for name in found]
    return hits


def test_no_benchmark_name_is_dispatched_on_outside_its_home() -> None:
    names = benchmark_names()
    assert {"egodyn", "quantiphy", "tad", "stsbench", "dsi", "autodridm", "nuscenes"} <= names
    found = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if in_a_home(relative, names):
            continue
        found += [f"{relative}:{line}: {name!r}" for line, name in name_dispatch(path.read_text(), names)]
    assert found == []


def test_the_scan_finds_each_kind_of_dispatch() -> None:
    names = frozenset({"tad", "egodyn"})
    source = """
if family == "tad": pass
if benchmark in ("egodyn", "other"): pass
FIELDS = {"tad": 1, "x": 2}
OTHER = dict(egodyn=3)
value = table["tad"]
match family:
    case "egodyn":
        pass
print("tad")  # a mention is not dispatch
register("tad", "module:attr")
"""
    assert sorted(name_dispatch(source, names)) == [
        (2, "tad"),
        (3, "egodyn"),
        (4, "tad"),
        (5, "egodyn"),
        (6, "tad"),
        (8, "egodyn"),
    ]


def test_the_homes_are_the_benchmark_folders_and_scorer_modules() -> None:
    names = frozenset({"tad", "dsi"})
    assert in_a_home("benchmarks/tad/card.py", names)
    assert in_a_home("graphs/dsi/builders.py", names)
    assert in_a_home("evaluators/tad.py", names) and in_a_home("evaluators/tad_suite.py", names)
    assert not in_a_home("evaluators/tadpole.py", names)
    assert not in_a_home("serve/samples.py", names)
    assert not in_a_home("benchmarks/card.py", names)
    assert not in_a_home("graphs/catalog.py", names)
