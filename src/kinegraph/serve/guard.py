"""Checks every `/v1/` request passes before the app sees it, cheapest first.

1. Auth: a bearer token among the configured keys (constant-time compare); without keys, only
   loopback clients are served, and only when `Host` and `Origin` are loopback too (`serve.access`).
2. Body size: a declared Content-Length over the limit is refused at once; a chunked body is counted
   while it is read.
3. Concurrency: one client (its API key; its address when there are no keys) may have `max_per_client`
   POSTs running or queued; `max_concurrency` POSTs run at once and `max_waiting` more may queue; beyond
   either the answer is 429 with Retry-After. A slot is taken before the body is read, so memory stays
   bounded, and a body that has not arrived within `body_timeout_s` is answered 408, which frees the
   slot: slow-body clients cannot hold the queue. A client that disconnects while its request runs has
   the request cancelled (its slot and its model call released at once; nobody is left to answer).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kinegraph.serve.access import refusal_message, refused_origin
from kinegraph.serve.errors import error_body
from kinegraph.serve.metrics import Scope, ServeMetrics
from kinegraph.serve.settings import ServeSettings, is_loopback

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
log = logging.getLogger(__name__)


class _Refused(Exception):
    def __init__(
        self, status: int, message: str, kind: str, reason: str, headers: dict[str, str] | None = None
    ):
        super().__init__(message)
        self.status, self.message, self.kind, self.reason = status, message, kind, reason
        self.headers = headers or {}


class _ClientGone(Exception):
    """The client disconnected before its body arrived: nobody is left to answer."""


class RequestGuard:
    """ASGI middleware: auth, body limit and concurrency limit for `/v1/` routes (see module docstring)."""

    def __init__(self, app: Any, settings: ServeSettings, metrics: ServeMetrics) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        self.keys = [k.encode() for k in settings.api_keys]
        self.allowed_hosts = frozenset(h.lower() for h in settings.allowed_hosts)
        self.active = 0
        self.waiting = 0
        self.per_client: dict[str, int] = {}
        self._slots: asyncio.Semaphore | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        try:
            client = self._check_auth(scope)
            if scope["method"] != "POST":
                await self.app(scope, receive, send)
                return
            self._check_declared_size(scope)
            await self._run_in_slot(scope, receive, send, client)
        except _Refused as refused:
            self.metrics.rejected.labels(refused.reason).inc()
            await _respond(send, refused)
        except _ClientGone:
            self.metrics.rejected.labels("client_gone").inc()

    def _check_auth(self, scope: Scope) -> str:
        """Who the client is, for the per-client limit: `key:N` (the Nth key) or `addr:HOST` without keys."""
        if not self.keys:
            client = scope.get("client")
            if client is not None and not is_loopback(client[0]):
                raise _Refused(
                    403, "this server has no API keys and serves loopback only", "forbidden", "auth"
                )
            why = refused_origin(scope["headers"], self.allowed_hosts)
            if why is not None:
                raise _Refused(403, refusal_message(why), "forbidden", "origin")
            return f"addr:{client[0] if client else '?'}"
        header = _header(scope, b"authorization")
        scheme, _, token = (header or "").partition(" ")
        if header is None or scheme.lower() != "bearer" or not token.strip():
            raise _Refused(
                401,
                "missing bearer token (Authorization: Bearer KEY)",
                "authentication_error",
                "auth",
                {"www-authenticate": "Bearer"},
            )
        given = token.strip().encode()
        matches = [hmac.compare_digest(given, key) for key in self.keys]  # every key compared: constant time
        if not any(matches):
            raise _Refused(
                401, "invalid API key", "authentication_error", "auth", {"www-authenticate": "Bearer"}
            )
        return f"key:{matches.index(True)}"

    def _check_declared_size(self, scope: Scope) -> None:
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit():
                raise _Refused(400, "invalid Content-Length", "invalid_request_error", "bad_request")
            if int(declared) > self.settings.max_body_bytes:
                raise self._too_large()

    def _too_large(self) -> _Refused:
        limit = self.settings.max_body_bytes
        return _Refused(
            413, f"request body exceeds the limit of {limit} bytes", "request_too_large", "body_size"
        )

    async def _run_in_slot(self, scope: Scope, receive: Receive, send: Send, client: str) -> None:
        settings = self.settings
        if self._slots is None:
            self._slots = asyncio.Semaphore(settings.max_concurrency)
        retry = {"retry-after": str(settings.retry_after_s)}
        held = self.per_client.get(client, 0)
        if held >= settings.max_per_client:
            message = f"this client already has {held} requests running or queued (its limit); retry later"
            raise _Refused(429, message, "rate_limit_error", "client_limit", retry)
        if self.active + self.waiting >= settings.max_concurrency + settings.max_waiting:
            message = "the server is at its concurrency limit; retry later"
            raise _Refused(429, message, "rate_limit_error", "saturated", retry)
        self.per_client[client] = held + 1
        try:
            await self._queue_and_run(scope, receive, send, self._slots)
        finally:
            self.per_client[client] -= 1
            if not self.per_client[client]:
                del self.per_client[client]

    async def _queue_and_run(
        self, scope: Scope, receive: Receive, send: Send, slots: asyncio.Semaphore
    ) -> None:
        self.waiting += 1
        self.metrics.waiting.inc()
        try:
            await slots.acquire()
        finally:
            self.waiting -= 1
            self.metrics.waiting.dec()
        self.active += 1
        self.metrics.in_flight.inc()
        try:
            body = await self._read_body(receive)
            replay, gone = _watched(body, receive)
            await _until_client_gone(self.app(scope, replay, send), gone)
        finally:
            self.active -= 1
            self.metrics.in_flight.dec()
            slots.release()

    async def _read_body(self, receive: Receive) -> bytes:
        chunks, size = [], 0
        try:
            async with asyncio.timeout(self.settings.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise _ClientGone
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.settings.max_body_bytes:
                        raise self._too_large()
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            limit = self.settings.body_timeout_s
            raise _Refused(
                408, f"the request body did not arrive within {limit:g} s", "timeout", "body_timeout"
            ) from None
        return b"".join(chunks)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


class _Gone:
    """Set when the client disconnects; `watch` is the one reader of the real `receive` after the body."""

    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.event = asyncio.Event()

    async def watch(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass
        self.event.set()


def _watched(body: bytes, receive: Receive) -> tuple[Receive, _Gone]:
    """A receive that yields the buffered body once, then a disconnect when the client has gone; and the
    watcher that learns it."""
    sent, gone = False, _Gone(receive)

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.event.wait()
        return {"type": "http.disconnect"}

    return replay, gone


async def _until_client_gone(request: Awaitable[None], gone: _Gone) -> None:
    """Run the app's request; when its client disconnects first, cancel it, so that a plain (non-streamed)
    request releases its slot and its model call at once instead of running on for nobody."""
    task = asyncio.ensure_future(request)
    watcher = asyncio.ensure_future(gone.watch())
    try:
        try:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the server itself is stopping
            task.cancel()
            raise
        if not task.done():
            task.cancel()
            log.info("client disconnected; its request was cancelled")
        try:
            await task
        except asyncio.CancelledError:
            if not gone.event.is_set():
                raise
    finally:
        watcher.cancel()


async def _respond(send: Send, refused: _Refused) -> None:
    data = json.dumps(error_body(refused.status, refused.message, refused.kind)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in refused.headers.items()]
    if refused.status in (408, 413):  # the rest of the body is never read: the connection cannot be reused
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
