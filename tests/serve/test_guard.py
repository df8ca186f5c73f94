"""Bad input and hostile clients against a real server: each gets a clear 4xx and the server keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from kinegraph.agents import get_backend
from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.media import write_image
from kinegraph.serve import BackgroundServer, ServeSettings, create_app
from tests.serve.forged_video import jpeg, mjpeg_avi
from tests.support.serving import AUTH, KEY, TURN, bomb_png, png_bytes, running

GOOD = {"question": TURN, "options": ["left", "right", "straight"], "frame_paths": ["clip/frame_0.png"]}


def post_qa(server, body=None, headers=AUTH, **kwargs) -> httpx.Response:
    return httpx.post(server.url + "/v1/qa", headers=headers, json=body, timeout=30, **kwargs)


def assert_error(response: httpx.Response, status: int, *fragments: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status
    for fragment in fragments:
        assert fragment in error["message"]
    assert "Traceback" not in response.text and 'File "' not in response.text
    assert "kinegraph-serve-" not in response.text, "no server temp paths"


def multipart(*files):
    return {"data": {"question": TURN, "options": ["left", "right"]}, "files": list(files)}


BAD_REQUESTS = {
    "missing auth": (lambda s: post_qa(s, GOOD, headers={}), 401, "missing bearer token"),
    "wrong auth": (
        lambda s: post_qa(s, GOOD, headers={"authorization": "Bearer nope"}),
        401,
        "invalid API key",
    ),
    "not a bearer scheme": (
        lambda s: post_qa(s, GOOD, headers={"authorization": f"Basic {KEY}"}),
        401,
        "bearer",
    ),
    "oversize body": (
        lambda s: post_qa(s, {**GOOD, "question": "x" * (2**20 + 10)}),
        413,
        "exceeds the limit",
    ),
    "oversize chunked body": (
        lambda s: httpx.post(
            s.url + "/v1/qa", headers=AUTH, content=iter([b"{" + b" " * 2**19] * 3), timeout=30
        ),
        413,
        "exceeds the limit",
    ),
    "decompression bomb upload": (
        lambda s: httpx.post(
            s.url + "/v1/qa", headers=AUTH, **multipart(("frames", ("bomb.png", bomb_png(), "image/png")))
        ),
        422,
        "frames[0]: image dimensions exceed the limit of 307200 pixels",
    ),
    "too many pixels by reference": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": ["big.png"]}),
        422,
        "frame_paths[0]: 800x600 image exceeds",
    ),
    "non-image upload": (
        lambda s: httpx.post(
            s.url + "/v1/qa", headers=AUTH, **multipart(("frames", ("a.png", b"MZ\x90\x00" * 64)))
        ),
        415,
        "frames[0]: not a JPEG, PNG or WebP image",
    ),
    "truncated image upload": (
        lambda s: httpx.post(
            s.url + "/v1/qa", headers=AUTH, **multipart(("frames", ("a.png", png_bytes()[:60])))
        ),
        422,
        "upload:frame_0000.png: missing or unreadable image",
    ),
    "non-image reference": (lambda s: post_qa(s, {**GOOD, "frame_paths": ["notes.txt"]}), 415, "not a JPEG"),
    "file name longer than NAME_MAX": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": ["clip/" + "a" * 300 + ".png"]}),
        422,
        "frame_paths[0]: a path component is 304 bytes long; the limit is 255",
    ),
    "video name longer than NAME_MAX": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": [], "video_path": "v" * 300}),
        422,
        "video_path: a path component is 300 bytes long",
    ),
    "deeply nested JSON in a multipart field": (
        lambda s: httpx.post(
            s.url + "/v1/qa",
            headers=AUTH,
            data={"question": TURN, "graph_options": "[" * 50_000 + "]" * 50_000},
        ),
        422,
        "graph_options: must be JSON text (recursion limit exceeded",
    ),
    "video whose header understates its frames": (
        lambda s: httpx.post(
            s.url + "/v1/qa",
            headers=AUTH,
            **multipart(
                ("video", ("v.avi", mjpeg_avi([jpeg(64, 64), jpeg(1000, 1200)], 64, 64), "video/avi"))
            ),
        ),
        422,
        "video: frame 1 is 1200x1000, over the limit of 307200 pixels",
    ),
    "non-video upload": (
        lambda s: httpx.post(
            s.url + "/v1/qa", headers=AUTH, **multipart(("video", ("v.mp4", b"\x00" * 500)))
        ),
        415,
        "video: not a readable video",
    ),
    "bad base64 image": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": [], "images": ["%%%"]}),
        422,
        "images[0]",
    ),
    "traversal": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": ["../secret.png"]}),
        403,
        "escapes the data root",
    ),
    "deep traversal": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": ["clip/../../../../etc/passwd"]}),
        403,
        "escapes the data root",
    ),
    "symlink escape": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": ["escape.png"]}),
        403,
        "escapes the data root",
    ),
    "absolute path": (
        lambda s: post_qa(s, {**GOOD, "video_path": "/etc/passwd", "frame_paths": []}),
        403,
        "relative",
    ),
    "missing file": (lambda s: post_qa(s, {**GOOD, "frame_paths": ["clip/nope.png"]}), 404, "no such file"),
    "unknown graph": (
        lambda s: post_qa(s, {**GOOD, "graph": "egodyn.nope"}),
        404,
        "unknown graph 'egodyn.nope'",
    ),
    "user graph not served": (lambda s: post_qa(s, {**GOOD, "graph": "os:system"}), 404, "unknown graph"),
    "too many frames": (
        lambda s: post_qa(s, {**GOOD, "frame_paths": ["clip/frame_0.png"] * 9}),
        422,
        "9 frames",
    ),
    "frames asked of the graph over the limit": (
        lambda s: post_qa(s, {**GOOD, "graph_options": {"num_frames": 100}}),
        422,
        "num_frames: must be between 1 and 8",
    ),
    "unknown graph option": (
        lambda s: post_qa(s, {**GOOD, "graph_options": {"depth": 3}}),
        422,
        "no option 'depth'",
    ),
    "mistyped graph option": (
        lambda s: post_qa(s, {**GOOD, "graph_options": {"grouped": "yes"}}),
        422,
        "grouped: expected bool",
    ),
    "two frame sources": (lambda s: post_qa(s, {**GOOD, "video_path": "clip.mp4"}), 422, "one way only"),
    "trajectory graph without trajectory, frames without times": (  # measured when it can be
        lambda s: post_qa(s, {**GOOD, "graph": "egodyn.text_only"}),
        422,
        "cannot measure the ego trajectory from these frames: clip/frame_0.png: frames have no timestamps",
    ),
    "trajectory too short": (
        lambda s: post_qa(
            s,
            {**GOOD, "trajectory": {"timestamps_s": [0, 1], "x_m": [0, 1], "y_m": [0, 0], "yaw_rad": [0, 0]}},
        ),
        422,
        "trajectory:",
    ),
    "trajectory of unequal lengths": (
        lambda s: post_qa(
            s, {**GOOD, "trajectory": {"timestamps_s": [0, 1], "x_m": [0], "y_m": [0], "yaw_rad": []}}
        ),
        422,
        "x_m has 1 values",
    ),
    "not JSON": (
        lambda s: httpx.post(
            s.url + "/v1/qa", headers={**AUTH, "content-type": "application/json"}, content=b"{nope"
        ),
        422,
        "JSON",
    ),
    "unknown field": (lambda s: post_qa(s, {**GOOD, "shell": "rm -rf /"}), 422, "shell: Extra inputs"),
    "wrong content type": (
        lambda s: httpx.post(s.url + "/v1/qa", headers={**AUTH, "content-type": "text/plain"}, content=b"hi"),
        415,
        "application/json or multipart",
    ),
    "unknown multipart field": (
        lambda s: httpx.post(s.url + "/v1/qa", headers=AUTH, data={"question": "q", "evil": "1"}),
        422,
        "unknown multipart field 'evil'",
    ),
}


@pytest.fixture(scope="module")
def big_image(data_root):
    write_image(data_root / "big.png", np.zeros((600, 800, 3), np.uint8))


@pytest.mark.parametrize("case", BAD_REQUESTS)
def test_bad_input_gets_a_clear_4xx_and_the_server_keeps_serving(server, big_image, case):
    send, status, fragment = BAD_REQUESTS[case]
    assert_error(send(server), status, fragment)
    ok = post_qa(server, GOOD)
    assert ok.status_code == 200 and ok.json()["answer"] == "left"


def test_a_crashing_graph_is_a_500_without_internals(server):
    r = post_qa(server, {**GOOD, "graph": "raising_graph:build", "request_id": "boom-1"})
    assert_error(r, 500, "the graph failed on this request (request_id boom-1)")
    assert "secret internal detail" not in r.text and "RuntimeError" not in r.text
    assert post_qa(server, GOOD).status_code == 200


def test_per_request_timeout_is_a_504(data_root):
    with OpenAILoopback(responder=lambda body: "left", latency_s=5.0) as slow:
        with running(slow, data_root=data_root, request_timeout_s=0.3) as server:
            assert_error(post_qa(server, GOOD), 504, "no answer within 0.3 s")
            assert httpx.get(server.url + "/healthz").status_code == 200


def test_saturated_server_answers_429_with_retry_after(data_root):
    release = threading.Event()

    def responder(body):
        release.wait(10)
        return "left"

    with OpenAILoopback(responder=responder) as model:
        with running(model, data_root=data_root, max_concurrency=1, max_waiting=1, retry_after_s=7) as server:
            results: list[httpx.Response] = []
            workers = [
                threading.Thread(target=lambda: results.append(post_qa(server, GOOD))) for _ in range(2)
            ]
            for w in workers:
                w.start()
            _wait_for_metric(server, "kinegraph_requests_waiting 1.0")  # one running, one queued
            refused = post_qa(server, GOOD)
            assert_error(refused, 429, "concurrency limit")
            assert refused.headers["retry-after"] == "7"
            release.set()
            for w in workers:
                w.join(10)
            assert [r.status_code for r in results] == [200, 200]
            assert post_qa(server, GOOD).status_code == 200


def _wait_for_metric(server, line: str) -> None:
    for _ in range(500):
        if line in httpx.get(server.url + "/metrics").text.splitlines():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"metric never reached {line!r}")


def test_without_keys_only_loopback_clients_are_served(text_model):
    """The ASGI app itself, called as if from another host: refused even if bound beyond loopback."""
    app = create_app(ServeSettings(model="vllm:m", base_url=text_model.base_url))

    async def call(client: tuple[str, int]) -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.get("/v1/graphs")

    assert_error(asyncio.run(call(("203.0.113.9", 5555))), 403, "serves loopback only")
    assert asyncio.run(call(("127.0.0.1", 5555))).status_code == 200


def test_the_guard_counts_refusals_by_reason(server):
    post_qa(server, GOOD, headers={})
    post_qa(server, {**GOOD, "question": "x" * (2**20 + 10)})
    lines = httpx.get(server.url + "/metrics").text.splitlines()
    counts = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in lines
        if line.startswith("kinegraph_rejected")
    }
    assert counts['kinegraph_rejected_requests_total{reason="auth"}'] >= 1
    assert counts['kinegraph_rejected_requests_total{reason="body_size"}'] >= 1
    assert json.loads(httpx.get(server.url + "/healthz").text)["status"] == "ok"


def test_a_failing_model_is_a_502_and_the_next_request_is_answered(data_root):
    with OpenAILoopback(responder=lambda body: "left", faults=[400]) as flaky:
        with running(flaky, data_root=data_root) as server:
            assert_error(post_qa(server, GOOD), 502)
            assert post_qa(server, GOOD).json()["answer"] == "left"


def test_a_502_names_no_backend_address_and_the_server_log_has_it(data_root, caplog):
    with socket.socket() as probe:  # a port nothing listens on: the backend's connection is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = ServeSettings(api_keys=frozenset({KEY}), data_root=data_root, model="vllm:m")
    backend = get_backend("vllm:m", base_url=f"http://127.0.0.1:{port}/v1", cache=False, max_retries=0)
    with caplog.at_level(logging.ERROR, logger="kinegraph.serve"):
        with BackgroundServer(settings, app=create_app(settings, backend=backend)) as server:
            r = post_qa(server, {**GOOD, "request_id": "down-1"})
    assert_error(r, 502, "the model backend failed on this request (request_id down-1)")
    assert str(port) not in r.text and "127.0.0.1" not in r.text
    assert any(str(port) in record.getMessage() for record in caplog.records), "logged server-side"


SLOW_KEY = "slow-key"


@contextlib.contextmanager
def slow_bodies(server: BackgroundServer, key: str) -> Iterator[list[socket.socket]]:
    """Raw clients that declare a 100 kB JSON body and send it one byte every 50 ms, until the block ends.

    Open one with `open_one()`: the list holds every socket opened so far.
    """
    sockets: list[socket.socket] = []
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(0.05):
            for sock in list(sockets):
                with contextlib.suppress(OSError):  # a refused client's connection is closed
                    sock.send(b" ")

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        yield sockets
    finally:
        stop.set()
        thread.join(5)
        for sock in sockets:
            sock.close()


def open_slow(server: BackgroundServer, key: str, sockets: list[socket.socket]) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=30)
    head = (
        f"POST /v1/qa HTTP/1.1\r\nHost: {server.host}\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
    )
    sock.sendall(head.encode())
    sockets.append(sock)
    return sock


def response_of(sock: socket.socket) -> tuple[int, dict]:
    """The status and JSON body of the one response on a raw connection (the server closes it after)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            ),
            None,
        )
        if length is not None and len(body) >= length:
            return int(head.split(b" ")[1]), json.loads(body[:length])
    raise AssertionError(f"connection closed before a whole response: {data[:200]!r}")


def test_slow_body_clients_hold_only_their_own_share_and_others_are_served(text_model, data_root):
    keys = frozenset({KEY, SLOW_KEY})
    limits = {"max_concurrency": 4, "max_waiting": 4, "max_per_client": 2, "body_timeout_s": 60}
    with running(text_model, data_root=data_root, api_keys=keys, **limits) as server:
        with slow_bodies(server, SLOW_KEY) as sockets:
            open_slow(server, SLOW_KEY, sockets)
            open_slow(server, SLOW_KEY, sockets)
            _wait_for_metric(server, "kinegraph_requests_in_flight 2.0")  # both hold a slot, reading
            for _ in range(10):  # a slowloris's further connections are refused at once
                status, body = response_of(open_slow(server, SLOW_KEY, sockets))
                assert status == 429
                assert body["error"]["message"].startswith("this client already has 2 requests running")
            ok = post_qa(server, GOOD)
            assert ok.status_code == 200 and ok.json()["answer"] == "left"
            assert "kinegraph_requests_in_flight 2.0" in httpx.get(server.url + "/metrics").text
        metrics = httpx.get(server.url + "/metrics").text
        assert 'kinegraph_rejected_requests_total{reason="client_limit"} 10.0' in metrics


def test_a_body_that_does_not_arrive_in_time_is_408_and_frees_its_slot(text_model, data_root):
    limits = {"max_concurrency": 1, "max_waiting": 0, "body_timeout_s": 0.5}
    with running(text_model, data_root=data_root, **limits) as server:
        with slow_bodies(server, KEY) as sockets:
            status, body = response_of(open_slow(server, KEY, sockets))  # still sending when refused
            assert status == 408
            assert body["error"]["message"] == "the request body did not arrive within 0.5 s"
            ok = post_qa(server, GOOD)  # the one slot is free again
            assert ok.status_code == 200 and ok.json()["answer"] == "left"
        assert (
            'kinegraph_rejected_requests_total{reason="body_timeout"} 1.0'
            in httpx.get(server.url + "/metrics").text
        )
