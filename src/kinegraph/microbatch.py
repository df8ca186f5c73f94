"""Micro-batching: concurrent async callers submit items, one worker thread runs them as batches.

Accelerators pay per call, not per item, so work from many concurrent groups (a model's generate calls,
frame pairs of many clips) is pooled: a batch closes when it holds `max_size` units of work or `wait_s`
after its first item, and runs in a thread so the event loop keeps scheduling. Items with different
`key`s never share a batch. One failing batch fails its own callers, never the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class MicroBatcher(Generic[T, R]):
    """Pools `submit`ted items into calls of `run(items) -> results` (same order, same length).

    `size(item)` is an item's units of work (default 1; e.g. frame pairs of a clip): a batch closes once
    it holds `max_size` units, so memory per call stays bounded (an item larger than `max_size` runs
    alone). `wrap_error` turns a batch's exception into the one its callers see. Bound to one event loop.
    """

    def __init__(
        self,
        run: Callable[[list[T]], Sequence[R]],
        max_size: int,
        wait_s: float,
        *,
        size: Callable[[T], int] = lambda _: 1,
        key: Callable[[T], Hashable] = lambda _: None,
        wrap_error: Callable[[Exception], Exception] = lambda exc: exc,
    ) -> None:
        if max_size < 1:
            raise ValueError(f"max_size must be >= 1, got {max_size}")
        self.run, self.max_size, self.wait_s = run, max_size, wait_s
        self.size, self.key, self.wrap_error = size, key, wrap_error
        self.pending: dict[Hashable, list[tuple[T, asyncio.Future[R]]]] = {}
        self.units: dict[Hashable, int] = {}
        self.timers: dict[Hashable, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.calls = 0  # batches run so far (a performance figure, e.g. clips per call)

    async def submit(self, item: T) -> R:
        """The item's result, computed in a batch with whatever else arrives meanwhile."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        key = self.key(item)
        self.pending.setdefault(key, []).append((item, future))
        self.units[key] = self.units.get(key, 0) + max(1, self.size(item))
        if self.units[key] >= self.max_size:
            self.flush(key)
        elif key not in self.timers:
            self.timers[key] = loop.call_later(self.wait_s, self.flush, key)
        return await future

    def flush(self, key: Hashable) -> None:
        """Start the batch pending under `key` now."""
        timer = self.timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        items = self.pending.pop(key, [])
        self.units.pop(key, None)
        if items:
            task = asyncio.get_running_loop().create_task(self._run(items))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _run(self, items: list[tuple[T, asyncio.Future[R]]]) -> None:
        self.calls += 1
        try:
            results = await asyncio.to_thread(self.run, [item for item, _ in items])
            if len(results) != len(items):
                raise RuntimeError(f"a batch of {len(items)} items returned {len(results)} results")
        except Exception as exc:  # one bad batch fails its own callers, never the run
            error = self.wrap_error(exc)
            for _, future in items:
                if not future.done():
                    future.set_exception(error)
            return
        for (_, future), result in zip(items, results, strict=True):
            if not future.done():
                future.set_result(result)
