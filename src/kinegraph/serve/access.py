"""Who may call a key-less server: loopback `Host` and `Origin` only, shared by `serve` and `mcp`.

A key-less server trusts loopback clients, but a web page the user opens can make the browser post to
`http://127.0.0.1:PORT` (a cross-site form needs no CORS preflight) or reach it through a rebound DNS
name. The browser then sends the page's `Origin` and the rebound name as `Host`; refusing both unless
they are loopback (or a host named with `--allow-host`, e.g. a reverse proxy's) closes that door.
Requests without `Origin` (curl, SDKs) are not browsers' cross-site requests and pass.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from kinegraph.serve.settings import is_loopback

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def host_name(value: str) -> str:
    """The name of a `Host` header value without its port: `[::1]:8000` -> `::1`, `a.b:80` -> `a.b`."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def refused_origin(headers: Iterable[tuple[bytes, bytes]], allowed: frozenset[str]) -> str | None:
    """Why a key-less server refuses a request with these headers (foreign Host or Origin), or None."""
    found = {
        key.lower(): value.decode("latin-1") for key, value in headers if key.lower() in (b"host", b"origin")
    }
    host = found.get(b"host")
    if host is not None and not _allowed(host_name(host), allowed):
        return "Host header is not a loopback name"
    origin = found.get(b"origin")
    if origin is not None:
        try:
            name = urlsplit(origin.strip()).hostname
        except ValueError:
            name = None
        if name is None or not _allowed(name, allowed):
            return "Origin is not a loopback page"
    return None


def _allowed(name: str, allowed: frozenset[str]) -> bool:
    return is_loopback(name) or name in allowed


def refusal_message(why: str) -> str:
    """The one line a refused caller reads."""
    return (
        f"this server has no API keys and answers loopback callers only: {why} "
        "(a proxy's host name may be allowed with --allow-host)"
    )


class LoopbackOrigins:
    """ASGI middleware: HTTP requests with a foreign `Host` or `Origin` get 403 (for key-less servers)."""

    def __init__(self, app: Any, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(h.lower() for h in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        why = refused_origin(scope.get("headers", ()), self.allowed) if scope["type"] == "http" else None
        if why is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": {"message": refusal_message(why), "type": "forbidden", "code": 403}})
        data = body.encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": data})
