"""The one error a request can end with: an HTTP status, a short kind and a message for the client.

Bodies follow the OpenAI error shape (`{"error": {"message", "type", "code"}}`) so OpenAI clients
raise their usual exceptions; internal details (stack traces, exception text) never reach the client.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from kinegraph.media_limits import InputRefused

#: A request the server will not or cannot answer; `status` is the HTTP status code. The media checks
#: every door shares (`kinegraph.media_limits`) raise this same type.
ServeError = InputRefused


class ErrorDetail(BaseModel):
    message: str
    type: str
    code: int


class ErrorBody(BaseModel):
    """What every error response carries."""

    error: ErrorDetail


def error_body(status: int, message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": status}}
