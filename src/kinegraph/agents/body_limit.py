"""A response-size cap for the httpx-based SDKs (openai, anthropic, google-genai).

The cap is checked against `content-length` before any of the body is read, and again while the body
streams in, so a runaway answer costs at most `max_bytes` of memory (plus one chunk), never its full size.
The cap counts decoded bytes: a gzip or deflate body is inflated here, at most `max_bytes + 1` bytes at a
time, and other encodings are neither asked for nor accepted (a 60 KB gzip body can inflate to 100 MB).
The SDKs ship on `httpx` or on its drop-in fork `httpx2`, whose transports do not mix; the transport is
built from whichever module the SDK's client class comes from.
"""

from __future__ import annotations

import functools
import importlib
import zlib
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from kinegraph.agents.errors import BackendError, ResponseTooLargeError

DEFAULT_MAX_RESPONSE_BYTES = 8 * 2**20
#: What the capped clients ask for: the encodings `DecodedCap` inflates under the cap.
ACCEPTED_ENCODINGS = "gzip, deflate"
_ZLIB_ENCODINGS = ("gzip", "x-gzip", "deflate")
# The SDKs' own pool sizes (openai and anthropic DEFAULT_CONNECTION_LIMITS), kept when the transport is ours.
_MAX_CONNECTIONS, _MAX_KEEPALIVE = 1000, 100


def check_max_bytes(max_bytes: int) -> int:
    """`max_bytes` if it is a usable cap (ValueError otherwise, when the backend is made)."""
    if not isinstance(max_bytes, int) or max_bytes < 1:
        raise ValueError(f"max_response_bytes must be a positive integer, got {max_bytes!r}")
    return max_bytes


def check_declared_length(headers: Any, max_bytes: int) -> None:
    """Refuse an answer whose declared `content-length` is over the cap, before reading its body."""
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise ResponseTooLargeError(max_bytes, int(declared))


class UnsupportedEncodingError(ResponseTooLargeError):
    """A body in a content-encoding the capped clients did not ask for: its decoded size cannot be capped."""

    def __init__(self, encoding: str, limit_bytes: int) -> None:
        BackendError.__init__(
            self, f"the answer's content-encoding {encoding!r} was not asked for ({ACCEPTED_ENCODINGS})"
        )
        self.limit_bytes = limit_bytes


class DecodedCap:
    """Decodes a body's content-encoding chunk by chunk, counting decoded bytes against `max_bytes`."""

    def __init__(self, encoding: str | None, max_bytes: int) -> None:
        name = (encoding or "").strip().lower()
        if name in ("", "identity"):
            self._inflate = None
        elif name in _ZLIB_ENCODINGS:
            self._inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
        else:
            raise UnsupportedEncodingError(name, max_bytes)
        self.max_bytes = max_bytes
        self.seen = 0

    @property
    def identity(self) -> bool:
        """True when the body is not encoded (its bytes are counted as they come)."""
        return self._inflate is None

    def feed(self, chunk: bytes) -> bytes:
        """The decoded bytes of `chunk`; ResponseTooLargeError once the body passes the cap (zlib.error
        for a body that is not what its encoding says)."""
        if self._inflate is None:
            self._count(len(chunk))
            return chunk
        parts, data = [], chunk
        while data:
            out = self._inflate.decompress(data, self.max_bytes - self.seen + 1)
            self._count(len(out))
            parts.append(out)
            data = self._inflate.unconsumed_tail
        return b"".join(parts)

    def _count(self, n: int) -> None:
        self.seen += n
        if self.seen > self.max_bytes:
            raise ResponseTooLargeError(self.max_bytes)


def http_module_of(client_class: type) -> ModuleType:
    """The httpx-like package (`httpx` or `httpx2`) an SDK's async client class is built on."""
    for cls in client_class.__mro__:
        if cls.__name__ == "AsyncClient":
            return importlib.import_module(cls.__module__.partition(".")[0])
    return importlib.import_module("httpx")


def capped_transport(http: ModuleType, max_bytes: int) -> Any:
    """An async transport of `http` whose responses raise `ResponseTooLargeError` past `max_bytes`."""
    transport_class = _capped_transport_class(http)
    limits = http.Limits(max_connections=_MAX_CONNECTIONS, max_keepalive_connections=_MAX_KEEPALIVE)
    return transport_class(http.AsyncHTTPTransport(limits=limits), check_max_bytes(max_bytes))


@functools.cache
def _capped_transport_class(http: ModuleType) -> type:
    class CappedStream(http.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, cap: DecodedCap) -> None:
            self.inner = inner
            self.cap = cap

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                try:
                    decoded = self.cap.feed(chunk)
                except zlib.error as exc:
                    raise http.DecodingError(f"the answer is not valid gzip/deflate ({exc})") from None
                if decoded:
                    yield decoded

        async def aclose(self) -> None:
            await self.inner.aclose()

    class CappedTransport(http.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, max_bytes: int) -> None:
            self.inner = inner
            self.max_bytes = max_bytes

        async def handle_async_request(self, request: Any) -> Any:
            request.headers["accept-encoding"] = ACCEPTED_ENCODINGS
            response = await self.inner.handle_async_request(request)
            try:
                check_declared_length(response.headers, self.max_bytes)
                cap = DecodedCap(response.headers.get("content-encoding"), self.max_bytes)
            except ResponseTooLargeError:  # or an encoding not asked for
                await response.aclose()
                raise
            # decoded here, under the cap: the client must not decode it again
            for name in ("content-encoding", "content-length"):
                if name in response.headers:
                    del response.headers[name]
            response.stream = CappedStream(response.stream, cap)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return CappedTransport


def too_large_cause(exc: BaseException) -> ResponseTooLargeError | None:
    """The `ResponseTooLargeError` an SDK wrapped (as the cause of its connection error), if any."""
    seen: BaseException | None = exc
    for _ in range(8):  # SDKs wrap once or twice; a bound keeps a pathological chain from looping
        if seen is None or isinstance(seen, ResponseTooLargeError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
