"""What every backend returned by `get_backend` is wrapped in: cache, limits, retries, usage and cost.

Provider modules only translate one request to one API call; they raise `RetryableError` for transient
failures. Here those are retried with capped exponential backoff and jitter (a server's Retry-After is a
floor on the wait, never a replacement), within a count and a time budget; whatever still fails becomes
a `BackendError` whose `status` the runner records in the Prediction.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

from kinegraph.agents.cache import ResponseCache, request_key
from kinegraph.agents.deferred_images import has_deferred, with_images
from kinegraph.agents.errors import BackendError, RetryableError
from kinegraph.agents.estimate import worst_case_cost_usd
from kinegraph.agents.limits import RateLimiter
from kinegraph.agents.model_defaults import default_max_tokens
from kinegraph.agents.pricing import PriceTable
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.agents.spending import SpendingLimit
from kinegraph.agents.usage_meter import count_call
from kinegraph.types import Usage


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with equal jitter: attempt k waits in [d/2, d], d = min(max, base * 2**k).

    A server's Retry-After (up to `max_retry_after_s`) is a floor on the computed wait: `Retry-After: 0`
    must not turn six attempts into six requests within milliseconds. Retries end after `max_retries`,
    or when the next wait would end more than `budget_s` after the first attempt, whichever comes first;
    the defaults ride out an outage of a minute or more.
    """

    max_retries: int = 10
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_retry_after_s: float = 300.0
    budget_s: float = 120.0

    def delay_s(self, attempt: int, retry_after_s: float | None = None) -> float:
        ceiling = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        computed = ceiling / 2 + random.uniform(0, ceiling / 2)
        if retry_after_s is None:
            return computed
        return max(computed, min(retry_after_s, self.max_retry_after_s))


#: More tokens than any model reads or writes in one call: a count past it is a broken or hostile server.
MAX_TOKENS_PER_CALL = 100_000_000


def implausible_usage(usage: Usage) -> str | None:
    """Why a server's token counts cannot be billed (negative, or past MAX_TOKENS_PER_CALL); None if fine."""
    for name in ("input_tokens", "output_tokens"):
        n = getattr(usage, name)
        if not 0 <= n <= MAX_TOKENS_PER_CALL:
            return f"{name}={n}, outside 0..{MAX_TOKENS_PER_CALL:,}"
    return None


class ManagedBackend:
    """A provider backend behind the response cache, rate limits, retries and cost accounting.

    `usage` is the running total over every call made through this object (cached hits included as
    `cached_requests`); the runner reports it in run.json.
    """

    def __init__(
        self,
        inner: Any,
        *,
        cache: ResponseCache | None = None,
        limiter: RateLimiter | None = None,
        retry: RetryPolicy | None = None,
        prices: PriceTable | None = None,
        budget_usd: float | None = None,
    ) -> None:
        self.inner = inner
        self.provider: str = inner.provider
        self.model: str = inner.model
        #: "native" when the provider gets a video whole (graphs then send one), else "frames"
        self.video: str = getattr(inner, "video", "frames")
        self.cache = cache
        self.limiter = limiter or RateLimiter()
        self.retry = retry or RetryPolicy()
        self.prices = prices or PriceTable.load()
        self.budget_usd = budget_usd
        self.spending = SpendingLimit(budget_usd) if budget_usd is not None else None
        self.usage = Usage()

    def __repr__(self) -> str:
        where = self.cache.path if self.cache else "off"
        return f"<backend {self.provider}:{self.model} cache={where}>"

    def cached(self, request: GenerateRequest) -> GenerateResponse | None:
        """The stored answer to `request`, counted as a cached request, or None (no cache, or a miss).

        Needs no image bytes when the images have a `source`: a cached rerun decodes nothing.
        """
        if self.cache is None:
            return None
        start = time.perf_counter()
        return self._hit(self._key(self._with_max_tokens(request)), start)

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        start = time.perf_counter()
        request = self._with_max_tokens(request)
        key = None
        if self.cache is not None:
            key = self._key(request)
            hit = self._counted(await self.cache.aget(key), start)  # a lock is waited on off the loop
            if hit is not None:
                return hit
        if has_deferred(request):  # a miss: now the frames are needed
            request = await with_images(request)
        bound = 0.0
        if self.spending is not None:
            bound = worst_case_cost_usd(self.prices, self.provider, self.model, request)
            self.spending.reserve(bound, f"{self.provider}:{self.model}")
        cost = 0.0
        try:
            response = await self._call_with_retries(request)
            bad = implausible_usage(response.usage)
            if bad is not None:  # charged as its reservation: a negative count is never a credit
                cost = bound
                raise BackendError(f"{self.provider}:{self.model}: the answer's usage is refused ({bad})")
            cost = self.prices.cost_usd(
                self.provider, self.model, response.usage.input_tokens, response.usage.output_tokens
            )
        finally:
            if self.spending is not None:
                self.spending.settle(bound, cost)
        usage = response.usage.model_copy(update={"requests": 1, "cached_requests": 0, "cost_usd": cost})
        self.usage = self.usage + usage
        count_call(self, usage)
        response = response.model_copy(
            update={"usage": usage, "cached": False, "latency_s": time.perf_counter() - start}
        )
        if key is not None and self.cache is not None and (response.text or response.tool_calls):
            await self.cache.aput(key, self.provider, self.model, response)
        return response

    def _with_max_tokens(self, request: GenerateRequest) -> GenerateRequest:
        if request.max_tokens is None:
            return request.model_copy(update={"max_tokens": default_max_tokens(self.model)})
        return request

    def _key(self, request: GenerateRequest) -> str:
        return request_key(self.provider, self.model, getattr(self.inner, "params", {}), request)

    def _hit(self, key: str, start: float) -> GenerateResponse | None:
        return self._counted(self.cache.get(key) if self.cache is not None else None, start)

    def _counted(self, hit: GenerateResponse | None, start: float) -> GenerateResponse | None:
        """A stored answer counted as a cached request, with its latency; None for a miss."""
        if hit is None:
            return None
        usage = Usage(cached_requests=1)
        self.usage = self.usage + usage
        count_call(self, usage)
        latency = time.perf_counter() - start
        return hit.model_copy(update={"cached": True, "usage": usage, "latency_s": latency})

    async def _call_with_retries(self, request: GenerateRequest) -> GenerateResponse:
        attempt, first = 0, time.monotonic()
        while True:
            try:
                async with self.limiter.slot():
                    return await self.inner.generate(request)
            except RetryableError as exc:
                delay = self.retry.delay_s(attempt, exc.retry_after_s)
                elapsed = time.monotonic() - first
                if attempt >= self.retry.max_retries or elapsed + delay > self.retry.budget_s:
                    raise BackendError(
                        f"{self.provider}:{self.model}: {exc} (gave up after {attempt + 1} attempts "
                        f"in {elapsed:.1f} s; retry budget {self.retry.max_retries} retries, "
                        f"{self.retry.budget_s:g} s)",
                        status=exc.status,
                    ) from None
                await asyncio.sleep(delay)
                attempt += 1

    async def aclose(self) -> None:
        """Close the provider's HTTP clients of the running loop (also done when asyncio.run ends)."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
