"""The `google` provider: Gemini `generate_content` through the official `google-genai` SDK.

Key: GOOGLE_API_KEY or GEMINI_API_KEY. `base_url` points the SDK elsewhere (the API version path,
`v1beta` by default, is appended by the SDK). SDK retries are off: `ManagedBackend` retries. Requests go
through httpx with a response-size cap (`max_response_bytes`, 8 MiB by default; a larger answer is
refused without being read whole); a cut-off or malformed 200, and a 200 with no candidates, are retryable.
`video="native"` sends a video whole as inline data (Gemini's limit on a whole request is 20 MB); by
default a video is sampled to frames first (`kinegraph.agents.video`). `seed` is sent as
`generationConfig.seed` (and keys the response cache).
"""

from __future__ import annotations

import json
from typing import Any

import pydantic

from kinegraph.agents.body_limit import DEFAULT_MAX_RESPONSE_BYTES, capped_transport, check_max_bytes
from kinegraph.agents.errors import BackendError, ResponseTooLargeError, RetryableError, http_failure
from kinegraph.agents.google_wire import contents, generation_config, parse_generate_content
from kinegraph.agents.limits import LoopLocal
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.agents.providers import api_key_from_env, require_sdk
from kinegraph.agents.sdk_mismatch import lacks_field, sdk_mismatch
from kinegraph.agents.video import VideoInput, as_frames, video_input
from kinegraph.types import Status


class GoogleBackend:
    """One Gemini model."""

    provider = "google"
    default_concurrency = 32

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 120.0,
        api_version: str = "v1beta",
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        video: VideoInput = "frames",
        seed: int | None = None,
    ) -> None:
        self.genai = require_sdk("google.genai", "google", "google")
        self.model = model
        self.video = video_input(f"google:{model}", video, native=True)
        self.params: dict[str, Any] = {"video": "native"} if self.video == "native" else {}
        self.seed = seed
        if seed is not None:  # absent when unset, so the cache keys of unseeded runs stay as they were
            self.params["seed"] = seed
        self._timeouts, self._transport_errors = _transport_exceptions()
        options = {"api_version": api_version, "timeout": int(timeout_s * 1000)}
        if base_url:
            options["base_url"] = base_url

        check_max_bytes(max_response_bytes)

        def make() -> tuple[Any, Any]:
            import httpx

            capped = httpx.AsyncClient(transport=capped_transport(httpx, max_response_bytes))
            http_options = {**options, "httpx_async_client": capped}
            try:
                return self.genai.Client(api_key=api_key, http_options=http_options), capped
            except (TypeError, pydantic.ValidationError) as exc:  # an option this SDK release lacks
                raise sdk_mismatch(f"google:{model}", self.genai, exc) from None

        async def close(made: tuple[Any, Any]) -> None:
            await made[0].aio.aclose()
            await made[1].aclose()  # the SDK leaves a client it was given open

        self._client = LoopLocal(make, close)

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        if self.video == "frames":
            request = await as_frames(request)
        client, _ = await self._client.get()
        errors = self.genai.errors
        try:
            config = self.genai.types.GenerateContentConfig(**generation_config(request, self.seed))
            response = await client.aio.models.generate_content(
                model=self.model, contents=contents(request), config=config
            )
        except errors.APIError as exc:
            headers = getattr(getattr(exc, "response", None), "headers", None)
            raise http_failure(
                f"google:{self.model}", int(exc.code or 0), str(exc.message), headers
            ) from None
        except ResponseTooLargeError as exc:
            raise BackendError(f"google:{self.model}: {exc}") from None
        except (errors.UnknownApiResponseError, json.JSONDecodeError) as exc:  # a cut-off or malformed 200
            raise RetryableError(f"the server's answer is not JSON: {str(exc)[:200]}") from None
        except self._timeouts:
            raise RetryableError("request timed out", status=Status.timeout) from None
        except self._transport_errors as exc:
            raise RetryableError(f"connection failed: {exc!r}") from None
        except (AttributeError, TypeError, pydantic.ValidationError) as exc:  # what this SDK release lacks
            raise sdk_mismatch(f"google:{self.model}", self.genai, exc) from None
        except ValueError as exc:
            raise BackendError(f"google:{self.model}: {exc}") from None
        try:
            return parse_generate_content(response, self.model)
        except AttributeError as exc:
            if lacks_field(exc, response, self.genai):
                raise sdk_mismatch(f"google:{self.model}", self.genai, exc) from None
            raise

    async def aclose(self) -> None:
        await self._client.aclose()


def _transport_exceptions() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """Timeout and transport exception classes of whichever HTTP clients google-genai may use.

    google-genai's async calls go through aiohttp when it is installed (its timeouts are the builtin
    `TimeoutError`), else through httpx.
    """
    timeouts: list[type[BaseException]] = [TimeoutError]
    transport: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        transport.append(module.TransportError)
    try:
        import aiohttp
    except ImportError:
        pass
    else:
        transport.append(aiohttp.ClientConnectionError)
    return tuple(timeouts), tuple(transport)


def create_google(
    model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any
) -> GoogleBackend:
    """Factory for `google:MODEL`."""
    key = api_key_from_env(api_key, ("GOOGLE_API_KEY", "GEMINI_API_KEY"), f"google:{model}")
    return GoogleBackend(model, api_key=key, base_url=base_url, **options)
