"""Backend errors. The runner turns a `BackendError` into a Prediction with its `status`; no stack traces."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

from kinegraph.types import Status


class BackendError(Exception):
    """A call that failed for good (after the last retry, or not retryable). `status` says how it ended."""

    def __init__(self, message: str, *, status: Status = Status.api_error) -> None:
        super().__init__(message)
        self.status = status


class MissingAPIKeyError(BackendError):
    """The provider needs an API key and none was given; the message names the environment variable."""


class UnknownModelError(BackendError):
    """The provider (or the server behind it) does not know this model, or the spec is malformed."""


class ResponseTooLargeError(BackendError):
    """The server's answer is larger than the backend's `max_response_bytes`; it was not read whole."""

    def __init__(self, limit_bytes: int, seen_bytes: int | None = None) -> None:
        seen = f"{seen_bytes:,} bytes" if seen_bytes is not None else "more"
        super().__init__(
            f"the response is larger than max_response_bytes={limit_bytes:,} ({seen}); "
            "raise it with --model-option max_response_bytes=N"
        )
        self.limit_bytes = limit_bytes


class RetryableError(Exception):
    """A transient failure (429, 5xx, timeout, dropped connection, a cut-off or malformed 200, a 200 that
    carries no answer) that the retry loop may try again.

    Raised by provider modules only; callers of a backend never see it (it becomes a BackendError).
    """

    def __init__(
        self, message: str, *, status: Status = Status.api_error, retry_after_s: float | None = None
    ):
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


RETRYABLE_HTTP_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def http_failure(spec: str, status: int, message: str, headers: Mapping[str, str] | None = None) -> Exception:
    """The exception for an HTTP error answer: retryable (429, 5xx, ...), unknown model (404), or final."""
    if status in RETRYABLE_HTTP_STATUS:
        return RetryableError(f"HTTP {status}: {message}", retry_after_s=parse_retry_after(headers))
    if status == 404:
        return UnknownModelError(f"{spec}: the server does not know this model (HTTP 404: {message})")
    if status in (401, 403):
        return BackendError(f"{spec}: the API key was refused (HTTP {status}: {message})")
    return BackendError(f"{spec}: HTTP {status}: {message}")


def error_message(body: Any) -> str | None:
    """The message of a provider's error body: `{"error": {"message": ...}}` (OpenAI, Anthropic), a bare
    `{"message": ...}`, or `{"error": "text"}`; None when the body carries none."""
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return error if isinstance(error, str) else None


def sdk_error_message(exc: Any) -> str:
    """What an official SDK's status error says: its decoded error body, else its own message."""
    return error_message(getattr(exc, "body", None)) or str(getattr(exc, "message", exc))
