"""Per-backend concurrency and requests-per-minute limits, and values kept per running event loop.

asyncio primitives and HTTP connection pools belong to one event loop; `LoopLocal` keeps one value per
loop and closes it when `asyncio.run` shuts that loop down, so a backend can serve several loops in turn.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class LoopLocal(Generic[T]):
    """One value per running event loop, made by `factory` on first use, closed by `close` at shutdown."""

    def __init__(self, factory: Callable[[], T], close: Callable[[T], Awaitable[Any]] | None = None) -> None:
        self._factory = factory
        self._close = close
        self._values: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[T, Any]] = (
            weakref.WeakKeyDictionary()
        )
        # the last loop's value, without a weak-dict lookup (several per request at high rates)
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], T] | None = None

    async def get(self) -> T:
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        entry = self._values.get(loop)
        if entry is not None:
            self._last = (weakref.ref(loop), entry[0])
            return entry[0]
        value = self._factory()
        finalizer = None
        if self._close is not None:
            # An async generator left suspended is closed by the loop's shutdown_asyncgens (asyncio.run
            # calls it), which runs its `finally` on the loop the value belongs to.
            finalizer = self._finalize(value)
            await finalizer.__anext__()
        self._values[loop] = (value, finalizer)
        self._last = (weakref.ref(loop), value)
        return value

    async def aclose(self) -> None:
        """Close the value of the running loop now (if any)."""
        self._last = None
        entry = self._values.pop(asyncio.get_running_loop(), None)
        if entry is not None and entry[1] is not None:
            await entry[1].aclose()

    async def _finalize(self, value: T) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if self._close is not None:
                await self._close(value)


class RateLimiter:
    """At most `max_concurrency` calls in flight and at most `rpm` call starts in any `window_s` window."""

    def __init__(
        self, max_concurrency: int | None = None, rpm: float | None = None, *, window_s: float = 60.0
    ):
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if rpm is not None and rpm <= 0:
            raise ValueError(f"rpm must be positive, got {rpm}")
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self.window_s = window_s
        self._starts: deque[float] = deque()
        self._primitives: LoopLocal[tuple[asyncio.Semaphore | None, asyncio.Lock]] = LoopLocal(
            lambda: (asyncio.Semaphore(max_concurrency) if max_concurrency else None, asyncio.Lock())
        )

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one call's slot: waits for a free concurrency slot, then for the rpm window."""
        semaphore, lock = await self._primitives.get()
        if semaphore is None:
            await self._wait_rpm(lock)
            yield
            return
        async with semaphore:
            await self._wait_rpm(lock)
            yield

    async def _wait_rpm(self, lock: asyncio.Lock) -> None:
        if self.rpm is None:
            return
        async with lock:
            while True:
                now = time.monotonic()
                while self._starts and now - self._starts[0] >= self.window_s:
                    self._starts.popleft()
                if len(self._starts) < self.rpm:
                    self._starts.append(now)
                    return
                await asyncio.sleep(self._starts[0] + self.window_s - now)
