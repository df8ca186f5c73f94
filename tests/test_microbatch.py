"""MicroBatcher: concurrent submits pooled into bounded batches, keys kept apart, failures contained."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kinegraph.microbatch import MicroBatcher


def test_concurrent_items_share_batches_bounded_by_units():
    batches: list[list[int]] = []
    threads: set[str] = set()

    def run(items: list[int]) -> list[int]:
        batches.append(list(items))
        threads.add(threading.current_thread().name)
        return [i * 10 for i in items]

    async def main() -> list[int]:
        batcher = MicroBatcher(run, max_size=9, wait_s=0.05, size=lambda item: 3)
        results = await asyncio.gather(*(batcher.submit(i) for i in range(7)))
        assert batcher.calls == len(batches)
        return list(results)

    assert asyncio.run(main()) == [i * 10 for i in range(7)]
    assert [len(b) for b in batches] == [3, 3, 1]  # 3 units each: a batch closes at 9 units
    assert sorted(i for b in batches for i in b) == list(range(7))
    assert threading.main_thread().name not in threads  # the work runs off the event loop


def test_keys_never_share_a_batch_and_a_lone_item_runs_after_wait():
    batches: list[list[str]] = []

    def run(items: list[str]) -> list[str]:
        batches.append(items)
        return [s.upper() for s in items]

    async def main() -> list[str]:
        batcher = MicroBatcher(run, max_size=100, wait_s=0.01, key=lambda s: s[0])
        return list(await asyncio.gather(*(batcher.submit(s) for s in ["a1", "b1", "a2", "b2", "c"])))

    assert asyncio.run(main()) == ["A1", "B1", "A2", "B2", "C"]
    assert sorted(batches) == [["a1", "a2"], ["b1", "b2"], ["c"]]


def test_a_failing_batch_fails_its_callers_only():
    def run(items: list[int]) -> list[int]:
        if 13 in items:
            raise RuntimeError("bad frame")
        return items

    async def main() -> tuple[object, object]:
        batcher = MicroBatcher(run, max_size=2, wait_s=0.01, wrap_error=lambda e: ValueError(f"wrapped: {e}"))
        bad = asyncio.gather(batcher.submit(13), batcher.submit(1), return_exceptions=True)
        good = asyncio.gather(batcher.submit(2), batcher.submit(3), return_exceptions=True)
        return await bad, await good

    bad, good = asyncio.run(main())
    assert all(isinstance(r, ValueError) and "wrapped: bad frame" in str(r) for r in bad)
    assert good == [2, 3]


def test_a_batch_returning_the_wrong_count_is_an_error_not_a_silent_shift():
    async def main() -> list[object]:
        batcher = MicroBatcher(lambda items: items[:-1], max_size=2, wait_s=0.01)
        return await asyncio.gather(batcher.submit(1), batcher.submit(2), return_exceptions=True)

    results = asyncio.run(main())
    assert all(isinstance(r, RuntimeError) and "returned 1 results" in str(r) for r in results)


def test_max_size_must_be_positive():
    with pytest.raises(ValueError, match="max_size"):
        MicroBatcher(lambda items: items, max_size=0, wait_s=0.01)
