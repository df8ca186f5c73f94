"""The `anthropic` provider: the Messages API through the official `anthropic` SDK (key: ANTHROPIC_API_KEY).

The installed SDK's `messages.create` has no temperature parameter, so none is sent by default and the
API's default decoding applies; `send_temperature=True` sends it (for models that still take it).
A cut-off or malformed 200, and a 200 with no content, are retryable; an answer larger than
`max_response_bytes` (8 MiB by default) is refused without being read whole. Claude takes no video: a video
is sampled to frames before the call (`kinegraph.agents.video`), and `video="native"` is refused.
The Messages API takes no sampling seed: a run's seed is recorded as not sent (`kinegraph.run.seeding`).
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.anthropic_wire import messages_body, parse_message
from kinegraph.agents.body_limit import (
    DEFAULT_MAX_RESPONSE_BYTES,
    capped_transport,
    check_max_bytes,
    http_module_of,
    too_large_cause,
)
from kinegraph.agents.errors import BackendError, RetryableError, http_failure, sdk_error_message
from kinegraph.agents.limits import LoopLocal
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.agents.providers import api_key_from_env, require_sdk
from kinegraph.agents.sdk_mismatch import lacks_field, sdk_mismatch
from kinegraph.agents.video import as_frames, video_input
from kinegraph.types import Status


class AnthropicBackend:
    """One Claude model. SDK retries are off: `ManagedBackend` retries."""

    provider = "anthropic"
    default_concurrency = 32

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 120.0,
        send_temperature: bool = False,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        video: str = "frames",
    ) -> None:
        video_input(f"anthropic:{model}", video, native=False)
        self.sdk = require_sdk("anthropic", "anthropic", "anthropic")
        check_max_bytes(max_response_bytes)
        http = http_module_of(self.sdk.DefaultAsyncHttpxClient)
        self.model = model
        self.send_temperature = send_temperature
        self.params: dict[str, Any] = {"send_temperature": send_temperature}

        def make() -> Any:
            transport = capped_transport(http, max_response_bytes)
            return self.sdk.AsyncAnthropic(
                api_key=api_key,
                base_url=base_url,
                timeout=timeout_s,
                max_retries=0,
                http_client=self.sdk.DefaultAsyncHttpxClient(transport=transport),
            )

        async def close(client: Any) -> None:
            await client.close()

        self._client = LoopLocal(make, close)

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        request = await as_frames(request)
        client = await self._client.get()
        body = messages_body(request, self.model, send_temperature=self.send_temperature)
        sdk = self.sdk
        try:
            message = await client.messages.create(**body)
        except sdk.APITimeoutError:
            raise RetryableError("request timed out", status=Status.timeout) from None
        except sdk.APIConnectionError as exc:
            too_large = too_large_cause(exc)
            if too_large is not None:
                raise BackendError(f"anthropic:{self.model}: {too_large}") from None
            raise RetryableError(f"connection failed: {exc}") from None
        except sdk.APIStatusError as exc:
            raise http_failure(
                f"anthropic:{self.model}", exc.status_code, sdk_error_message(exc), exc.response.headers
            ) from None
        except sdk.APIError as exc:
            raise BackendError(f"anthropic:{self.model}: {exc}") from None
        except ValueError as exc:  # a 200 whose body is not JSON (cut off or malformed)
            raise RetryableError(f"the server's answer is not JSON: {exc}") from None
        except (AttributeError, TypeError) as exc:  # a parameter or method this SDK release lacks
            raise sdk_mismatch(f"anthropic:{self.model}", sdk, exc) from None
        try:
            return parse_message(message)
        except (AttributeError, KeyError, TypeError) as exc:
            if lacks_field(exc, message, sdk):
                raise sdk_mismatch(f"anthropic:{self.model}", sdk, exc) from None
            raise RetryableError(f"malformed Messages answer ({exc!r})") from None

    async def aclose(self) -> None:
        await self._client.aclose()


def create_anthropic(
    model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any
) -> AnthropicBackend:
    """Factory for `anthropic:MODEL`."""
    key = api_key_from_env(api_key, ("ANTHROPIC_API_KEY",), f"anthropic:{model}")
    return AnthropicBackend(model, api_key=key, base_url=base_url, **options)
