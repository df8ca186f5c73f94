"""Usage counted where a call is made, so a run's totals do not depend on what a graph writes down.

Graphs record each prediction's usage themselves; one that forgets a call (a user's builder asking the
model twice per question and keeping one response) would under-report a run's requests and cost. Every
`ManagedBackend` call is also counted on the meter of the task that made it (a context variable set per
graph invocation, `run/invoke.py`), and the invocation adds what its predictions left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from kinegraph.types import Usage

_METER: ContextVar[UsageMeter | None] = ContextVar("kinegraph_usage_meter", default=None)


class UsageMeter:
    """Usage of every call made under it, summed per backend object (keyed by its id)."""

    def __init__(self) -> None:
        self.by_backend: dict[int, Usage] = {}

    def add(self, backend: object, usage: Usage) -> None:
        key = id(backend)
        self.by_backend[key] = self.by_backend.get(key, Usage()) + usage


def count_call(backend: object, usage: Usage) -> None:
    """Count one call's usage on the current task's meter (nothing when no meter is set)."""
    meter = _METER.get()
    if meter is not None:
        meter.add(backend, usage)


@contextmanager
def metering() -> Iterator[UsageMeter]:
    """A fresh meter for the calls made inside the block (tasks started inside it share it)."""
    meter = UsageMeter()
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)
