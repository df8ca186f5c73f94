"""Rate limits and per-loop values."""

from __future__ import annotations

import asyncio
import time

import pytest

from kinegraph.agents.limits import LoopLocal, RateLimiter
from tests.support.event_loop import run


def test_rpm_window_delays_the_request_over_the_limit():
    limiter = RateLimiter(rpm=2, window_s=0.3)
    starts: list[float] = []

    async def call():
        async with limiter.slot():
            starts.append(time.monotonic())

    async def three():
        await asyncio.gather(call(), call(), call())

    run(three())
    starts.sort()
    assert starts[2] - starts[0] >= 0.3  # the third start waited for the window to pass the first


def test_concurrency_slots():
    limiter = RateLimiter(max_concurrency=2)
    active = peak = 0

    async def call():
        nonlocal active, peak
        async with limiter.slot():
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    async def many():
        await asyncio.gather(*(call() for _ in range(8)))

    run(many())
    run(many())  # a second event loop gets its own primitives
    assert peak == 2


def test_loop_local_values_are_per_loop_and_closed_at_shutdown():
    made: list[object] = []
    closed: list[object] = []

    def factory():
        made.append(object())
        return made[-1]

    async def close(value):
        closed.append(value)

    local = LoopLocal(factory, close)

    async def twice():
        return await local.get(), await local.get()

    a1, a2 = run(twice())
    b1, _ = run(twice())
    assert a1 is a2 and a1 is not b1
    assert closed == [a1, b1]


def test_bad_limits_are_rejected():
    with pytest.raises(ValueError, match="max_concurrency"):
        RateLimiter(max_concurrency=0)
    with pytest.raises(ValueError, match="rpm"):
        RateLimiter(rpm=0)
