"""A lean JSON-over-HTTP client (aiohttp, orjson, keep-alive) for OpenAI-compatible servers under load.

A chat request through the `openai` SDK costs about 1.2 ms of client CPU (request options, httpx, response
models); this path costs about 0.3 ms, which decides throughput when a local vLLM/SGLang server answers
thousands of short questions (vLLM's own serving benchmark posts with aiohttp for the same reason).
Failures map onto the agents' error types exactly as the SDK path does: timeouts, dropped connections
(before or during the body), 429 and 5xx, and a 200 whose body is not a JSON object are retryable
(Retry-After honoured); 404 is an unknown model; other statuses are final. A body over `max_bytes` is
refused from its `content-length`, or after `max_bytes` of it, never read whole.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import orjson

from kinegraph.agents.body_limit import (
    ACCEPTED_ENCODINGS,
    DEFAULT_MAX_RESPONSE_BYTES,
    DecodedCap,
    check_declared_length,
    check_max_bytes,
)
from kinegraph.agents.errors import (
    BackendError,
    ResponseTooLargeError,
    RetryableError,
    error_message,
    http_failure,
)
from kinegraph.agents.limits import LoopLocal
from kinegraph.agents.providers import require_sdk
from kinegraph.types import Status


class JsonPoster:
    """POST a JSON body under `base_url`, return the decoded JSON answer. One session per event loop."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: dict[str, str],
        timeout_s: float,
        spec: str,
        max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        check_max_bytes(max_bytes)
        self.aiohttp = require_sdk("aiohttp", None, spec.partition(":")[0])
        self.max_bytes = max_bytes
        self.base_url = base_url.rstrip("/")
        self.spec = spec
        self.timeout = self.aiohttp.ClientTimeout(total=timeout_s)
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "accept-encoding": ACCEPTED_ENCODINGS,
            **headers,
        }

        def make() -> Any:
            # limit=0: the run-wide limiter and the backend's RateLimiter bound the requests in flight
            connector = self.aiohttp.TCPConnector(limit=0, keepalive_timeout=30)
            # auto_decompress off: `_read_capped` inflates under the cap (aiohttp would inflate unbounded)
            return self.aiohttp.ClientSession(
                connector=connector, headers=headers, timeout=self.timeout, auto_decompress=False
            )

        async def close(session: Any) -> None:
            await session.close()

        self._sessions = LoopLocal(make, close)

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        session = await self._sessions.get()
        aiohttp = self.aiohttp
        # aiohttp's request and response objects refer to each other, so a sent body lives until the next
        # garbage collection, which a fast run makes rare: at 700 KB a body (ten frames) that was 180 MB
        # at concurrency 64. The body is a bytearray emptied once the answer is in.
        data = bytearray(_encode(body))
        try:
            async with session.post(self.base_url + path, data=data) as response:
                raw = await self._read_capped(response)
                status, headers = response.status, response.headers
        except ResponseTooLargeError as exc:  # an encoding not asked for included
            raise BackendError(f"{self.spec}: {exc}") from None
        except zlib.error as exc:
            raise RetryableError(f"the answer is not valid gzip/deflate ({exc})") from None
        except TimeoutError:
            raise RetryableError("request timed out", status=Status.timeout) from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise RetryableError(f"connection failed: {exc or type(exc).__name__}") from None
        except aiohttp.ClientError as exc:
            raise BackendError(f"{self.spec}: {type(exc).__name__}: {exc}") from None
        finally:
            del data[:]
        payload = _decode(raw)
        if status >= 400:
            raise http_failure(
                self.spec,
                status,
                error_message(payload) or raw[:200].decode("utf-8", "replace") or "no body",
                headers,
            )
        if not isinstance(payload, dict):
            raise RetryableError(f"the server's answer is not a JSON object: {raw[:200]!r}")
        return payload

    async def _read_capped(self, response: Any) -> bytes:
        """The decoded body, refused once it passes `max_bytes` (the content-length is checked first)."""
        check_declared_length(response.headers, self.max_bytes)
        cap = DecodedCap(response.headers.get("content-encoding"), self.max_bytes)
        if response.content_length is not None and cap.identity:
            return await response.read()  # declared and within the cap: aiohttp reads exactly that much
        chunks = []
        async for chunk in response.content.iter_chunked(2**16):
            chunks.append(cap.feed(chunk))
        return b"".join(chunks)

    async def aclose(self) -> None:
        await self._sessions.aclose()


def _decode(raw: bytes) -> Any:
    try:
        return orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        pass
    try:  # orjson refuses lone surrogate escapes ("\\ud800") that JSON allows; GenerateResponse scrubs them
        return json.loads(raw)
    except ValueError:
        return None


def _encode(body: dict[str, Any]) -> bytes:
    """The request body; a lone surrogate in it (orjson refuses those) is sent as its JSON escape."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, separators=(",", ":")).encode("ascii")
