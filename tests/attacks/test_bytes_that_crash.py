"""Bytes that crash: a lone UTF-16 surrogate in a model answer or an MCP argument, a path of `.`, a
one-frame video (class "Bytes that crash")."""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.media import write_video
from tests.support.run_data import write_egodyn_hf
from tests.support.serving import AUTH, TURN, TURN_OPTIONS, running

SURROGATE_ANSWER = "left \ud800 then \udfff"  # sent as the JSON escapes "\ud800", "\udfff"


def surrogate_every(n: int):
    """A responder whose every n-th answer holds lone surrogates; the others say "left"."""
    counter = itertools.count(1)
    return lambda body: SURROGATE_ANSWER if next(counter) % n == 0 else "left"


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["sdk", "aiohttp"])
def test_a_lone_surrogate_in_one_answer_keeps_the_run_and_every_prediction(
    tmp_path: Path, transport: str
) -> None:
    data = write_egodyn_hf(tmp_path / "data", n_clips=2)
    out = tmp_path / "run"
    with OpenAILoopback(responder=surrogate_every(5)) as model:
        result = subprocess.run(
            [
                sys.executable, "-m", "kinegraph.cli", "run", "egodyn", "--graph", "egodyn.vision",
                "--model", "vllm:m", "--base-url", model.base_url, "--data", str(data), "--out", str(out),
                "--no-progress", "--no-cache", "--model-option", f"transport={transport}",
            ],
            capture_output=True, text=True, env=dict(os.environ), timeout=300,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "lone UTF-16 surrogate(s) in the answer replaced by U+FFFD" in result.stderr
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 28 and all(r["status"] != "api_error" for r in rows)
    assert any(r["raw"] == "left \ufffd then \ufffd" for r in rows)


@pytest.fixture(scope="module")
def media_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bytes") / "data"
    write_video(root / "one_frame.mp4", np.zeros((1, 24, 32, 3), np.uint8), fps=4.0)
    write_video(root / "clip.mp4", np.zeros((8, 24, 32, 3), np.uint8), fps=4.0)
    return root


def ask(url: str, body: dict) -> httpx.Response:
    return httpx.post(
        url + "/v1/qa", json={"question": TURN, "options": TURN_OPTIONS, **body}, headers=AUTH, timeout=60
    )


def test_a_lone_surrogate_in_the_answer_is_not_a_500(media_root: Path) -> None:
    with OpenAILoopback(responder=lambda body: SURROGATE_ANSWER) as model:
        with running(
            model, data_root=media_root, graphs=("dsi.baseline",), default_graph="dsi.baseline"
        ) as server:
            response = ask(server.url, {"video_path": "clip.mp4", "graph_options": {"max_attempts": 1}})
    assert response.status_code == 200, response.text
    assert response.json()["raw"] == "left \ufffd then \ufffd"


@pytest.mark.parametrize(
    ("graph", "body"),
    [
        ("dsi.baseline", {"frame_paths": ["."]}),
        ("dsi.baseline", {"video_path": "."}),
        ("dsi.baseline", {"video_path": "./"}),
        ("tad.baseline", {"video_path": "one_frame.mp4"}),
        ("egodyn.measured", {"video_path": "one_frame.mp4"}),
    ],
)
def test_a_dot_path_and_a_one_frame_video_are_refused_not_500(
    media_root: Path, graph: str, body: dict
) -> None:
    with OpenAILoopback(responder=lambda b: "left") as model:
        with running(model, data_root=media_root, graphs=(graph,), default_graph=graph) as server:
            response = ask(server.url, {"graph": graph, **body})
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]["message"]


def test_an_ordinary_video_is_enough_for_a_tad_graph(media_root: Path) -> None:
    """A video's keyframes at TAD's 2 Hz are the frames (this was a 4xx: TAD read frame files only)."""
    with OpenAILoopback(responder=lambda b: "left") as model:
        with running(
            model, data_root=media_root, graphs=("tad.baseline",), default_graph="tad.baseline"
        ) as srv:
            response = ask(srv.url, {"graph": "tad.baseline", "video_path": "clip.mp4"})
    assert response.status_code == 200, response.text
    assert response.json()["inputs"] == {"frames": "keyframes at 2 Hz from the video"}
    assert response.json()["frames"]["timestamps_s"] == [0.0, 0.5, 1.0, 1.5]


def test_an_mcp_argument_with_a_lone_surrogate_is_answered(media_root: Path) -> None:
    """Over stdio the SDK's strict parser dropped the line unanswered; the next call must still work too."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kinegraph.cli", "mcp", "--data-root", str(media_root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(os.environ),
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None

    def send(line: str) -> None:
        process.stdin.write(line.encode() + b"\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    def answer(deadline_s: float = 60) -> dict | None:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:  # bounded: a dropped line is seen as None, not a hang
            if select.select([process.stdout], [], [], 0.5)[0]:
                return json.loads(process.stdout.readline())  # type: ignore[union-attr]
        return None

    try:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        assert answer() is not None
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        call = {"name": "image_cues", "arguments": {"image_path": "a\ud800.png"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        first = answer(20)
        call = {"name": "image_cues", "arguments": {"image_path": "missing.png"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}))
        second = answer()
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert first is not None and first["id"] == 2, "the call with a lone surrogate was never answered"
    assert first["result"]["isError"] and "no such file" in first["result"]["content"][0]["text"]
    assert second is not None and second["id"] == 3
