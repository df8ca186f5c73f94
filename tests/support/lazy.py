"""Modules imported on first use, so that collecting the tests does not load torch or an SDK."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

import pytest


class _Deferred(ModuleType):
    """Stands for the module `name` and imports it when a public attribute is first read.

    Private names are answered only once the module is loaded: pytest probes every global of a test
    module for fixture markers (`_pytestfixturefunction`, `_mock_name`) while collecting, and those
    probes must not import it."""

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("_") and self.__name__ not in sys.modules:
            raise AttributeError(attr)
        return getattr(importlib.import_module(self.__name__), attr)


def lazy_module(name: str) -> ModuleType:
    """The module `name`, imported when first used."""
    return _Deferred(name)


def lazy_or_skip(name: str, reason: str) -> ModuleType:
    """`pytest.importorskip` that imports on first use: the tests of a missing extra skip."""
    if importlib.util.find_spec(name) is None:
        pytest.skip(reason, allow_module_level=True)
    return lazy_module(name)
