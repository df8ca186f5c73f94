"""What every backend returned by `get_backend` is wrapped in: cache, limits, retries, usage and cost.

Provider modules only translate one request to one API call; they raise `RetryableError` for transient
failures. Here those are retried with exponential backoff and jitter (honouring Retry-After); whatever
still fails becomes a `BackendError` whose `status` the runner records in the Prediction.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

from kinegraph.agents.cache import ResponseCache, request_key
from kinegraph.agents.errors import BackendError, RetryableError
from kinegraph.agents.limits import RateLimiter
from kinegraph.agents.model_defaults import default_max_tokens
from kinegraph.agents.pricing import PriceTable
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.types import Status, Usage


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with equal jitter: attempt k waits in [d/2, d], d = min(max, base * 2**k).

    A server's Retry-After (up to `max_retry_after_s`) replaces the computed wait.
    """

    max_retries: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_retry_after_s: float = 300.0

    def delay_s(self, attempt: int, retry_after_s: float | None = None) -> float:
        if retry_after_s is not None:
            return min(retry_after_s, self.max_retry_after_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


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
        self.cache = cache
        self.limiter = limiter or RateLimiter()
        self.retry = retry or RetryPolicy()
        self.prices = prices or PriceTable.load()
        self.budget_usd = budget_usd
        self.usage = Usage()

    def __repr__(self) -> str:
        where = self.cache.path if self.cache else "off"
        return f"<backend {self.provider}:{self.model} cache={where}>"

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        start = time.perf_counter()
        if request.max_tokens is None:
            request = request.model_copy(update={"max_tokens": default_max_tokens(self.model)})
        key = None
        if self.cache is not None:
            key = request_key(self.provider, self.model, getattr(self.inner, "params", {}), request)
            hit = self.cache.get(key)
            if hit is not None:
                usage = Usage(cached_requests=1)
                self.usage = self.usage + usage
                latency = time.perf_counter() - start
                return hit.model_copy(update={"cached": True, "usage": usage, "latency_s": latency})
        if self.budget_usd is not None and self.usage.cost_usd >= self.budget_usd:
            raise BackendError(
                f"{self.provider}:{self.model}: budget of ${self.budget_usd:g} spent "
                f"(${self.usage.cost_usd:.4f}); no further requests",
                status=Status.budget_exceeded,
            )
        response = await self._call_with_retries(request)
        usage = response.usage.model_copy(
            update={
                "requests": 1,
                "cached_requests": 0,
                "cost_usd": self.prices.cost_usd(
                    self.provider, self.model, response.usage.input_tokens, response.usage.output_tokens
                ),
            }
        )
        self.usage = self.usage + usage
        response = response.model_copy(
            update={"usage": usage, "cached": False, "latency_s": time.perf_counter() - start}
        )
        if key is not None and self.cache is not None and (response.text or response.tool_calls):
            self.cache.put(key, self.provider, self.model, response)
        return response

    async def _call_with_retries(self, request: GenerateRequest) -> GenerateResponse:
        attempt = 0
        while True:
            try:
                async with self.limiter.slot():
                    return await self.inner.generate(request)
            except RetryableError as exc:
                if attempt >= self.retry.max_retries:
                    raise BackendError(
                        f"{self.provider}:{self.model}: {exc} (gave up after {attempt + 1} attempts)",
                        status=exc.status,
                    ) from None
                await asyncio.sleep(self.retry.delay_s(attempt, exc.retry_after_s))
                attempt += 1

    async def aclose(self) -> None:
        """Close the provider's HTTP clients of the running loop (also done when asyncio.run ends)."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
