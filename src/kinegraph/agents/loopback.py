"""Loopback HTTP servers that speak the OpenAI, Anthropic and Google wire formats, for tests, perf and demos.

Each server is a real HTTP/1.1 server (stdlib asyncio, keep-alive) on 127.0.0.1 at a free port. It waits
`latency_s` with `asyncio.sleep` (so concurrent requests overlap), can inject faults into its first
requests, or wherever `fault_plan(n)` says for the n-th request (see `Fault`), asks
`responder(request_json)` for the answer text, and records every
request it received (`record=False` keeps only counts, so a long load test holds no request bodies). Use
it as a context manager from sync code (it then runs in a background thread) or from async code
(`async with`, in the running loop)::

    with OpenAILoopback(responder=lambda body: "left", latency_s=0.2) as server:
        backend = get_backend("vllm:any", base_url=server.base_url, cache=False)
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kinegraph.agents.loopback_wire import AnthropicWire, GoogleWire, OpenAIWire, Reply, Wire

Fault = int | Literal["hang", "drop", "reset", "truncated", "empty", "null_message", "huge"]
"""What a server may do instead of answering: an HTTP status (429, 503, ...) with the wire's error body;
`hang` (never answer: a client timeout); `drop` (close without answering); `reset` (send the 200 head and
half the body, then reset the connection); `truncated` (a complete 200 whose body is cut-off JSON); `empty`
(a 200 with no answer in it: no choices, no content, no candidates); `null_message` (OpenAI: a choice
whose message is null; others as `empty`); `huge` (a 200 whose answer text is `huge_bytes` long)."""
FaultPlan = Callable[[int], "Fault | None"]
Responder = Callable[[dict[str, Any]], "str | Reply"]

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 408: "Request Timeout", 429: "Too Many Requests"}


@dataclass
class RecordedRequest:
    """One request as the server saw it. `fault` is what was injected (None: answered normally)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_s: float
    fault: Fault | None = None


@dataclass
class _State:
    requests: list[RecordedRequest] = field(default_factory=list)
    received: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    faults_used: int = 0


class LoopbackServer:
    """A loopback server for one wire format; see the module docstring."""

    wire: Wire = OpenAIWire()

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        faults: Sequence[Fault] = (),
        fault_plan: FaultPlan | None = None,
        retry_after_s: float | None = None,
        huge_bytes: int = 64 * 2**20,
        usage: tuple[int, int] | None = None,
        model: str = "loopback-model",
        record: bool = True,
    ) -> None:
        self.responder: Responder = responder or (lambda body: "ok")
        self.latency_s = latency_s
        self.faults = list(faults)
        self.fault_plan = fault_plan
        self.retry_after_s = retry_after_s
        self.huge_bytes = huge_bytes
        self.usage = usage
        self.model = model
        self.record = record
        self.port = 0
        self._state = _State()
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    @property
    def base_url(self) -> str:
        """The base URL to give the provider's SDK."""
        return self.wire.base_url(f"http://127.0.0.1:{self.port}")

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (faulted ones included), oldest first."""
        return list(self._state.requests)

    @property
    def received(self) -> int:
        """How many requests arrived (recorded or not)."""
        return self._state.received

    @property
    def max_in_flight(self) -> int:
        """The largest number of requests the server was handling at once."""
        return self._state.max_in_flight

    # ----------------------------------------------------------------- lifecycle (async)
    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, limit=2**26, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> LoopbackServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ----------------------------------------------------------------- lifecycle (sync, background thread)
    def __enter__(self) -> LoopbackServer:
        ready = threading.Event()
        errors: list[BaseException] = []

        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                await self.start()
            except BaseException as exc:  # reported to the caller of __enter__
                errors.append(exc)
                ready.set()
                return
            ready.set()
            await self._stop.wait()
            await self.stop()

        self._thread = threading.Thread(target=asyncio.run, args=(serve(),), name="loopback", daemon=True)
        self._thread.start()
        ready.wait()
        if errors:
            raise errors[0]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._thread = self._loop = self._stop = None

    # ----------------------------------------------------------------- HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, path, headers, raw = request
                keep_open = await self._respond(writer, method, path, headers, raw)
                if not keep_open or headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            if task is not None:
                self._handlers.discard(task)
            writer.close()

    async def _respond(
        self, writer: asyncio.StreamWriter, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> bool:
        """Answer one request; False when the connection must close."""
        if method == "GET":
            status, payload = self.wire.get(path, self.model)
            await _write(writer, status, payload, {})
            return True
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            await _write(writer, 400, self.wire.error(400, "body is not JSON"), {})
            return True
        state = self._state
        fault: Fault | None = None
        if state.faults_used < len(self.faults):
            fault = self.faults[state.faults_used]
            state.faults_used += 1
        elif self.fault_plan is not None:
            fault = self.fault_plan(state.received)
        state.received += 1
        if self.record:
            state.requests.append(RecordedRequest(method, path, headers, body, time.monotonic(), fault))
        state.in_flight += 1
        state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            if fault == "hang":
                await asyncio.sleep(3600)
            if fault == "drop":
                return False
            if self.latency_s > 0:
                await asyncio.sleep(self.latency_s)
            if isinstance(fault, int):
                extra = {"retry-after": f"{self.retry_after_s:g}"} if self.retry_after_s is not None else {}
                await _write(writer, fault, self.wire.error(fault, "injected failure"), extra)
                return True
            if not self.wire.accepts(path):
                await _write(writer, 404, self.wire.error(404, f"no route {path}"), {})
                return True
            if fault in ("empty", "null_message"):
                usage = self.usage or (max(1, len(raw) // 4), 0)
                payload = self.wire.hollow(body, path, usage, self.model, null=fault == "null_message")
                await _write(writer, 200, payload, {})
                return True
            reply = Reply(text="x" * self.huge_bytes) if fault == "huge" else self.responder(body)
            reply = reply if isinstance(reply, Reply) else Reply(text=reply)
            usage = self.usage or (max(1, len(raw) // 4), max(1, len(reply.text.split())))
            payload = self.wire.response(body, path, reply, usage, self.model)
            if fault == "reset":
                await _write_then_reset(writer, payload)
                return False
            if fault == "truncated":
                data = json.dumps(payload).encode()
                await _write_bytes(writer, 200, data[: len(data) // 2])
                return True
            await _write(writer, 200, payload, {})
            return True
        finally:
            state.in_flight -= 1


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, path, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            chunks.append(await reader.readexactly(size + 2))
            if size == 0:
                break
        raw = b"".join(c[:-2] for c in chunks)
    else:
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, path, headers, raw


async def _write(
    writer: asyncio.StreamWriter, status: int, payload: dict[str, Any], extra: dict[str, str]
) -> None:
    await _write_bytes(writer, status, json.dumps(payload).encode(), extra)


async def _write_bytes(
    writer: asyncio.StreamWriter, status: int, data: bytes, extra: dict[str, str] | None = None
) -> None:
    extra = extra or {}
    reason = _REASONS.get(status, "Error" if status >= 400 else "OK")
    head = [f"HTTP/1.1 {status} {reason}", "content-type: application/json", f"content-length: {len(data)}"]
    head += [f"{k}: {v}" for k, v in extra.items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
    await writer.drain()


async def _write_then_reset(writer: asyncio.StreamWriter, payload: dict[str, Any]) -> None:
    """The head of a 200 and half its body, then a TCP reset (the connection dies mid-body)."""
    data = json.dumps(payload).encode()
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
    writer.write(head.encode() + data[: len(data) // 2])
    await writer.drain()
    writer.transport.abort()


class OpenAILoopback(LoopbackServer):
    """`POST /v1/chat/completions` and `GET /v1/models`, OpenAI Chat Completions format with `usage`."""

    wire = OpenAIWire()


class AnthropicLoopback(LoopbackServer):
    """`POST /v1/messages`, Anthropic Messages format."""

    wire = AnthropicWire()


class GoogleLoopback(LoopbackServer):
    """`POST /v1beta/models/{model}:generateContent`, Gemini API format."""

    wire = GoogleWire()
