"""The `google` provider: Gemini `generate_content` through the official `google-genai` SDK.

Key: GOOGLE_API_KEY or GEMINI_API_KEY. `base_url` points the SDK elsewhere (the API version path,
`v1beta` by default, is appended by the SDK). SDK retries are off: `ManagedBackend` retries.
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.errors import BackendError, RetryableError, http_failure
from kinegraph.agents.google_wire import contents, generation_config, parse_generate_content
from kinegraph.agents.limits import LoopLocal
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.agents.providers import api_key_from_env, require_sdk
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
    ) -> None:
        self.genai = require_sdk("google.genai", "google-genai", "google")
        self.model = model
        self.params: dict[str, Any] = {}
        self._timeouts, self._transport_errors = _transport_exceptions()
        options = {"api_version": api_version, "timeout": int(timeout_s * 1000)}
        if base_url:
            options["base_url"] = base_url

        def make() -> Any:
            return self.genai.Client(api_key=api_key, http_options=options)

        async def close(client: Any) -> None:
            await client.aio.aclose()

        self._client = LoopLocal(make, close)

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        client = await self._client.get()
        errors = self.genai.errors
        try:
            config = self.genai.types.GenerateContentConfig(**generation_config(request))
            response = await client.aio.models.generate_content(
                model=self.model, contents=contents(request), config=config
            )
        except errors.APIError as exc:
            headers = getattr(getattr(exc, "response", None), "headers", None)
            raise http_failure(
                f"google:{self.model}", int(exc.code or 0), str(exc.message), headers
            ) from None
        except self._timeouts:
            raise RetryableError("request timed out", status=Status.timeout) from None
        except self._transport_errors as exc:
            raise RetryableError(f"connection failed: {exc!r}") from None
        except (ValueError, TypeError) as exc:
            raise BackendError(f"google:{self.model}: {exc}") from None
        return parse_generate_content(response, self.model)

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
