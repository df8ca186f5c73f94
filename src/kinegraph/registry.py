"""One small registry used for backends, tools, graphs, benchmarks and scorers.

Entries are registered as factories (or `module:attribute` strings imported on first use), so that
`kinegraph --help` stays instant and optional SDKs are only imported when their entry is used.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from kinegraph.extras import missing_extra

T = TypeVar("T")


class UnknownEntryError(KeyError):
    """A name that is not registered; the message lists what is."""

    def __str__(self) -> str:
        return str(self.args[0])


class ImportTargetError(ValueError):
    """A `package.module:attribute` that cannot be imported; the message says why, in one line."""


def import_object(spec: str, feature: str | None = None) -> object:
    """Import `package.module:attribute` (or `package.module.attribute`); one line when it is not there,
    and a MissingExtraError naming the extra when an optional dependency of `feature` (default: the
    module) is not installed."""
    if ":" in spec:
        module_name, attr = spec.split(":", 1)
    else:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise ValueError(f"expected 'package.module:attribute', got {spec!r}")
    try:
        obj: object = importlib.import_module(module_name)
    except ImportError as exc:
        missing = missing_extra(exc, feature or module_name)
        if missing is not None:
            raise missing from None
        raise ImportTargetError(f"cannot import {spec!r}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ImportTargetError(f"cannot import {spec!r}: {module_name} has no {attr!r}")
        obj = getattr(obj, part)
    return obj


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """The registered names closest to a misspelt `name`, quoted and joined by 'or' ('' when none is close).

    Dotted names (`egodyn.vp`) must also be close after their family, so `egodyn.nope` is not offered
    `egodyn.vo` for its shared prefix alone."""
    tail = name.rpartition(".")[2]
    close = [
        k
        for k in difflib.get_close_matches(name, list(known), n=3, cutoff=0.75)
        if "." not in name or difflib.SequenceMatcher(None, tail, k.rpartition(".")[2]).ratio() >= 0.5
    ]
    return " or ".join(repr(k) for k in close)


class Registry(Generic[T]):
    """Name -> entry, with lazy `module:attr` entries and a helpful error for unknown names."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}

    def register(self, name: str, entry: T | str | None = None) -> Callable[[T], T] | None:
        """Register `entry` under `name`; without an entry, return a decorator."""
        if entry is not None:
            self._entries[name] = entry
            return None

        def decorator(obj: T) -> T:
            self._entries[name] = obj
            return obj

        return decorator

    def get(self, name: str) -> T:
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none"
            close = did_you_mean(name, self._entries)
            hint = f" (did you mean {close}?)" if close else ""
            raise UnknownEntryError(f"unknown {self.kind} {name!r}{hint}; known: {known}")
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = import_object(entry, f"{self.kind} {name!r}")  # type: ignore[assignment]
            self._entries[name] = entry
        return entry  # type: ignore[return-value]

    def names(self) -> list[str]:
        return sorted(self._entries)

    def in_order(self) -> list[str]:
        """The names in the order they were registered."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
