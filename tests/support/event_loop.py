"""Helpers shared by the backend tests."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on a fresh event loop (tests are sync; backends must survive several loops)."""
    return asyncio.run(coro)
