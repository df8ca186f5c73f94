"""Limits measured after decoding: a gzip-encoded model answer is capped at its inflated size, on every
client path (the SDKs' httpx transport and the aiohttp one) (class "Limits measured on the wrong
thing")."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kinegraph.agents import BackendError, GenerateRequest, get_backend, user_message
from tests.support.event_loop import run as run_coroutine

INFLATED_BYTES = 24 * 2**20  # a 24 MiB answer ...
CAP_BYTES = 2**20  # ... against a 1 MiB cap


def completion(text: str) -> bytes:
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return json.dumps(body).encode()


@pytest.fixture(scope="module")
def gzip_model() -> Iterator[tuple[str, list[str]]]:
    """An OpenAI-compatible server whose answers are gzip-encoded: path /bomb inflates to 24 MiB, /small to
    a short answer, /br claims an encoding nobody asked for. Yields its base URL and the Accept-Encoding
    headers it saw."""
    bomb = gzip.compress(completion("a" * INFLATED_BYTES), 9)
    small = gzip.compress(completion("left"))
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            self.rfile.read(int(self.headers.get("content-length", 0)))
            seen.append(self.headers.get("accept-encoding", ""))
            body, encoding = (bomb, "gzip") if self.path.startswith("/bomb") else (small, "gzip")
            if self.path.startswith("/br"):
                encoding = "br"
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-encoding", encoding)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def ask(base_url: str, transport: str) -> str:
    backend = get_backend(
        "openai:gpt-4o",
        base_url=base_url,
        api_key="k",
        cache=False,
        transport=transport,
        max_retries=0,
        max_response_bytes=CAP_BYTES,
    )
    request = GenerateRequest(messages=[user_message("Which way?")])
    return run_coroutine(backend.generate(request)).text


@pytest.mark.parametrize("transport", ["sdk", "aiohttp"])
def test_a_gzip_answer_is_capped_at_its_inflated_size(gzip_model, transport: str) -> None:
    url, seen = gzip_model
    assert len(gzip.compress(completion("a" * INFLATED_BYTES), 9)) < CAP_BYTES  # small on the wire
    with pytest.raises(BackendError, match=r"larger than max_response_bytes=1,048,576"):
        ask(url + "/bomb/v1", transport)
    assert ask(url + "/small/v1", transport) == "left"  # a gzip answer under the cap is read as before
    assert seen[-1] == "gzip, deflate"


@pytest.mark.parametrize("transport", ["sdk", "aiohttp"])
def test_an_encoding_not_asked_for_is_refused(gzip_model, transport: str) -> None:
    url, _ = gzip_model
    with pytest.raises(BackendError, match="content-encoding|not valid|br"):
        ask(url + "/br/v1", transport)
