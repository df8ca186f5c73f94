"""The MCP server's HTTP door: request bodies read with a size and time limit before the SDK sees them.

The SDK's streamable-HTTP transport reads a POST body whole, whatever its size; a client could post
gigabytes. `BodyLimit` reads at most `max_body_bytes` (a declared `Content-Length` over it is refused
unread) within `body_timeout_s`, then hands the buffered body on: 413 and 408 otherwise.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kinegraph.serve.access import Receive, Scope, Send

MAX_BODY_BYTES = 1 << 20  # a tool call's JSON is a few hundred bytes: paths and numbers, never media
BODY_TIMEOUT_S = 30.0


class BodyLimit:
    """ASGI middleware: an HTTP request body over `max_body_bytes` is 413, one slower than the timeout 408."""

    def __init__(
        self, app: Any, max_body_bytes: int = MAX_BODY_BYTES, body_timeout_s: float = BODY_TIMEOUT_S
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", ())).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body_bytes):
            await _refuse(send, 413, self._too_large())
            return
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body_bytes:
                        await _refuse(send, 413, self._too_large())
                        return
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            await _refuse(send, 408, f"the request body did not arrive within {self.body_timeout_s:g} s")
            return
        body, sent = b"".join(chunks), False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"request body exceeds the limit of {self.max_body_bytes} bytes"


async def _refuse(send: Send, status: int, message: str) -> None:
    kind = "request_too_large" if status == 413 else "timeout"
    data = json.dumps({"error": {"message": message, "type": kind, "code": status}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
