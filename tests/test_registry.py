"""The one registry: lazy `module:attr` entries, decorators, and one-line errors for unknown names."""

from __future__ import annotations

import pytest

from kinegraph.registry import ImportTargetError, Registry, UnknownEntryError, import_object


def test_lazy_entries_are_imported_on_first_use_and_kept():
    registry: Registry = Registry("thing")
    registry.register("dumps", "json:dumps")
    assert "dumps" in registry and registry.names() == ["dumps"]
    first = registry.get("dumps")
    assert first({"a": 1}) == '{"a": 1}' and registry.get("dumps") is first


def test_the_decorator_registers_the_object_itself():
    registry: Registry = Registry("thing")

    @registry.register("double")
    def double(x: int) -> int:
        return 2 * x

    assert registry.get("double") is double and list(registry) == ["double"]


def test_an_unknown_name_lists_the_known_ones_in_one_line():
    registry: Registry = Registry("benchmark suite")
    registry.register("b", "json:dumps")
    registry.register("a", "json:loads")
    with pytest.raises(UnknownEntryError) as err:
        registry.get("c")
    assert str(err.value) == "unknown benchmark suite 'c'; known: a, b"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_here:build", "cannot import 'no_such_module_here:build': No module named"),
        ("json:no_such_function", "cannot import 'json:no_such_function': json has no 'no_such_function'"),
    ],
)
def test_an_object_that_cannot_be_imported_is_one_line(spec, message):
    with pytest.raises(ImportTargetError) as err:
        import_object(spec)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_dotted_paths_and_nested_attributes_import():
    assert import_object("os.path.join") is import_object("os.path:join")
    assert import_object("collections:OrderedDict.fromkeys").__self__.__name__ == "OrderedDict"
    with pytest.raises(ValueError, match="expected 'package.module:attribute'"):
        import_object("nodots")
