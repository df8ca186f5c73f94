"""The `openai` and `vllm` providers: Chat Completions over HTTP.

`openai` goes through the official `openai` SDK. `vllm` is any OpenAI-compatible server (vLLM, SGLang,
Ollama, LM Studio) at `base_url`; it needs no key (`VLLM_API_KEY` is sent when set) and posts through the
lean aiohttp client (`json_http`), which costs a quarter of the SDK's client CPU per request. Either
provider takes `transport="sdk"` or `"aiohttp"`. Neither retries itself: `ManagedBackend` retries. Both
treat a cut-off or malformed 200, and a 200 with no choices, as retryable, and refuse an answer larger
than `max_response_bytes` (8 MiB by default) without reading it whole. `vllm` with `video="native"` sends a
video whole as a `video_url` part (vLLM serving a video model, e.g. Qwen2.5-VL); otherwise, and always for
`openai`, a video is sampled to frames first (`kinegraph.agents.video`). `seed` is sent as the request's
sampling seed (and keys the response cache).
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Literal
from urllib.parse import urlparse

from kinegraph.agents.body_limit import (
    DEFAULT_MAX_RESPONSE_BYTES,
    capped_transport,
    check_max_bytes,
    http_module_of,
    too_large_cause,
)
from kinegraph.agents.errors import BackendError, RetryableError, http_failure, sdk_error_message
from kinegraph.agents.json_http import JsonPoster
from kinegraph.agents.limits import LoopLocal
from kinegraph.agents.openai_wire import accepts_temperature, chat_body, parse_chat_json
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.agents.providers import api_key_from_env, require_sdk
from kinegraph.agents.sdk_mismatch import sdk_mismatch
from kinegraph.agents.video import VideoInput, as_frames, video_input
from kinegraph.types import Status

Transport = Literal["sdk", "aiohttp"]


class SdkPoster:
    """POST through the official SDK; `clients` clients are used in turn.

    Each SDK client has its own connection pool, and the pool's per-request bookkeeping grows with its
    size, so a few small pools beat one large one at high concurrency.
    """

    def __init__(
        self,
        base_url: str | None,
        *,
        api_key: str,
        timeout_s: float,
        spec: str,
        clients: int,
        max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.sdk = require_sdk("openai", "openai", spec.partition(":")[0])
        self.spec = spec
        self.max_bytes = max_bytes
        self._counter = itertools.count()
        check_max_bytes(max_bytes)
        http = http_module_of(self.sdk.DefaultAsyncHttpxClient)

        def make() -> list[Any]:
            return [
                self.sdk.AsyncOpenAI(
                    api_key=api_key,
                    base_url=base_url,
                    timeout=timeout_s,
                    max_retries=0,
                    http_client=self.sdk.DefaultAsyncHttpxClient(transport=capped_transport(http, max_bytes)),
                )
                for _ in range(max(1, clients))
            ]

        async def close(made: list[Any]) -> None:
            for client in made:
                await client.close()

        self._clients = LoopLocal(make, close)

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        clients = await self._clients.get()
        client = clients[next(self._counter) % len(clients)]
        sdk = self.sdk
        try:
            # The SDK's documented `client.post` sends exactly this body (`chat.completions.create` would
            # first walk it against its TypedDicts); `cast_to=object` hands back the decoded JSON.
            return await client.post(
                path, body=body, cast_to=object, options={"security": {"bearer_auth": True}}
            )
        except sdk.APITimeoutError:
            raise RetryableError("request timed out", status=Status.timeout) from None
        except sdk.APIConnectionError as exc:
            too_large = too_large_cause(exc)
            if too_large is not None:
                raise BackendError(f"{self.spec}: {too_large}") from None
            raise RetryableError(f"connection failed: {exc}") from None
        except sdk.APIStatusError as exc:
            raise http_failure(
                self.spec, exc.status_code, sdk_error_message(exc), exc.response.headers
            ) from None
        except sdk.APIError as exc:
            raise BackendError(f"{self.spec}: {exc}") from None
        except ValueError as exc:  # a 200 whose body is not JSON (cut off or malformed)
            raise RetryableError(f"the server's answer is not JSON: {exc}") from None
        except (AttributeError, TypeError) as exc:  # a parameter or method this SDK release lacks
            raise sdk_mismatch(self.spec, sdk, exc) from None

    async def aclose(self) -> None:
        await self._clients.aclose()


class OpenAIChatBackend:
    """One model behind a Chat Completions endpoint, reached through `transport`."""

    default_concurrency = 64

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        api_key: str,
        base_url: str | None,
        transport: Transport = "sdk",
        timeout_s: float = 120.0,
        max_tokens_field: str = "max_completion_tokens",
        send_temperature: bool = True,
        image_detail: str | None = None,
        clients: int = 8,
        extra_body: dict[str, Any] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        video: VideoInput = "frames",
        seed: int | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.video = video_input(f"{provider}:{model}", video, native=provider == "vllm")
        self.base_url = base_url
        self.max_tokens_field = max_tokens_field
        self.send_temperature = send_temperature
        self.image_detail = image_detail
        self.extra_body = extra_body
        self.params: dict[str, Any] = {"image_detail": image_detail, "extra_body": extra_body}
        if self.video == "native":
            self.params["video"] = "native"
        self.seed = seed
        if seed is not None:  # absent when unset, so the cache keys of unseeded runs stay as they were
            self.params["seed"] = seed
        spec = f"{provider}:{model}"
        if transport == "aiohttp":
            url = base_url or "https://api.openai.com/v1"
            auth = {"authorization": f"Bearer {api_key}"}
            self._poster: Any = JsonPoster(
                url, headers=auth, timeout_s=timeout_s, spec=spec, max_bytes=max_response_bytes
            )
        elif transport == "sdk":
            self._poster = SdkPoster(
                base_url,
                api_key=api_key,
                timeout_s=timeout_s,
                spec=spec,
                clients=clients,
                max_bytes=max_response_bytes,
            )
        else:
            raise BackendError(f"{spec}: transport must be 'sdk' or 'aiohttp', got {transport!r}")

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        if self.video == "frames":
            request = await as_frames(request)
        try:
            body = chat_body(
                request,
                self.model,
                max_tokens_field=self.max_tokens_field,
                send_temperature=self.send_temperature,
                image_detail=self.image_detail,
                seed=self.seed,
            )
        except ValueError as exc:  # an unreadable video file, videos asking different rates
            raise BackendError(f"{self.provider}:{self.model}: {exc}", status=Status.input_error) from None
        if self.extra_body:
            body.update(self.extra_body)
        payload = await self._poster.post("/chat/completions", body)
        if not isinstance(payload, dict):
            raise RetryableError(f"the server's answer is not a JSON object: {str(payload)[:200]!r}")
        try:
            return parse_chat_json(payload)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise RetryableError(f"malformed Chat Completions answer ({exc!r})") from None

    async def aclose(self) -> None:
        await self._poster.aclose()


def create_openai(
    model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any
) -> OpenAIChatBackend:
    """Factory for `openai:MODEL` (key: OPENAI_API_KEY; base URL: `base_url` or OPENAI_BASE_URL)."""
    key = api_key_from_env(api_key, ("OPENAI_API_KEY",), f"openai:{model}")
    options.setdefault("send_temperature", accepts_temperature(model))
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    return OpenAIChatBackend("openai", model, api_key=key, base_url=base_url, **options)


def create_vllm(
    model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any
) -> OpenAIChatBackend:
    """Factory for `vllm:MODEL` at `base_url` (or VLLM_BASE_URL); a bare `http://host:port` gets `/v1`."""
    url = base_url or os.environ.get("VLLM_BASE_URL")
    if not url:
        raise BackendError(
            f"vllm:{model} needs a server: pass --base-url http://HOST:PORT/v1 or set VLLM_BASE_URL"
        )
    if urlparse(url).path in ("", "/"):
        url = url.rstrip("/") + "/v1"
    key = api_key or os.environ.get("VLLM_API_KEY") or "EMPTY"
    options.setdefault("max_tokens_field", "max_tokens")
    options.setdefault("transport", "aiohttp")
    return OpenAIChatBackend("vllm", model, api_key=key, base_url=url, **options)
