"""`langgraph dev` as a user runs it: the real server process lists every graph and runs two on a clip.

The server lives in its own environment (`make studio`: its pins cannot share the test environment, see
pyproject's `studio` extra); set KINEGRAPH_STUDIO_VENV to use another one.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.graphs import graphs
from kinegraph.media import write_video
from kinegraph.tools.kinematics import clip_kinematics

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("KINEGRAPH_STUDIO_VENV", ROOT / ".venv-studio"))
START_LIMIT_S = 180

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_clip(root: Path) -> None:
    """A 12-frame video of a drifting texture, and the kinematics of a steady 8 m/s left turn (+0.3 rad/s)."""
    texture = np.random.default_rng(0).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    write_video(root / "clip.mp4", [np.roll(texture, 2 * i, axis=1) for i in range(12)], fps=10.0)
    t_s = np.arange(32) * 0.1
    yaw_rad = 0.3 * t_s
    xy_m = np.column_stack([8.0 / 0.3 * np.sin(yaw_rad), 8.0 / 0.3 * (1 - np.cos(yaw_rad))])
    kinematics = clip_kinematics(t_s, xy_m, yaw_rad)
    np.savez(root / "clip.npz", **kinematics.arrays())
    (root / "features.json").write_text(json.dumps(kinematics.features))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`langgraph dev` on a free port, media confined to a folder holding the clip."""
    langgraph = VENV / "bin" / "langgraph"
    if not langgraph.exists():
        pytest.skip(f"no `langgraph dev` in {VENV}: run `make studio` (installs the `studio` extra there)")
    media = tmp_path_factory.mktemp("media")
    write_clip(media)
    work = tmp_path_factory.mktemp("studio")
    port = free_port()
    env = {
        **os.environ,
        "KINEGRAPH_MEDIA_ROOT": str(media),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
    }
    env.pop("KINEGRAPH_MODEL", None)
    command = [
        str(langgraph),
        "dev",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
    ]
    log = (work / "server.log").open("wb")
    process = subprocess.Popen(
        [*command, "--config", str(ROOT / "langgraph.json")], cwd=work, env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"langgraph dev exited {process.returncode}: {(work / 'server.log').read_text()[-3000:]}"
                )
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"langgraph dev not up in {START_LIMIT_S} s: {(work / 'server.log').read_text()[-3000:]}"
                )
            time.sleep(0.5)
        yield url, media
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def run(url: str, graph_id: str, value: dict, configurable: dict | None = None) -> dict:
    body = {"assistant_id": graph_id, "input": value, "config": {"configurable": configurable or {}}}
    response = httpx.post(f"{url}/runs/wait", json=body, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def test_every_catalog_graph_is_served_with_an_input_schema(server: tuple[str, Path]) -> None:
    url, _ = server
    assistants = httpx.post(f"{url}/assistants/search", json={"limit": 1000}, timeout=30).json()
    by_graph = {a["graph_id"]: a["assistant_id"] for a in assistants}
    assert sorted(by_graph) == sorted(name.replace(".", "_") for name in graphs.names())
    for graph_id, assistant_id in by_graph.items():
        schemas = httpx.get(f"{url}/assistants/{assistant_id}/schemas", timeout=30).json()
        assert "samples" in (schemas["input_schema"] or {}).get("properties", {}), graph_id
        assert "predictions" in (schemas["output_schema"] or {}).get("properties", {}), graph_id


def test_the_oracle_answers_from_the_clips_kinematics(server: tuple[str, Path]) -> None:
    url, media = server
    context = {
        "arrays_path": "clip.npz",
        "features": json.loads((media / "features.json").read_text()),
    }
    questions = [("turn", "yaw_rate_turn_direction"), ("slow", "mean_speed_low")]
    value = {
        "samples": [{"id": i, "question": i, "question_id": q, "context": context} for i, q in questions],
        "media": {"video_path": "clip.mp4"},
    }
    predictions = {p["sample_id"]: p for p in run(url, "egodyn_oracle", value)["predictions"]}
    assert {k: (p["status"], p["answer"]) for k, p in predictions.items()} == {
        "turn": ("ok", "left"),  # +0.3 rad/s yaw rate
        "slow": ("ok", "no"),  # 8 m/s is not below 5 m/s
    }


def test_a_model_graph_sees_the_clips_frames_and_answers_with_the_model(server: tuple[str, Path]) -> None:
    url, _ = server
    value = {
        "samples": [
            {
                "id": "turn",
                "question": "Is the vehicle turning left, right, or going straight?",
                "question_id": "yaw_rate_turn_direction",
                "options": ["left", "right", "straight"],
            }
        ],
        "media": {"video_path": "clip.mp4"},
    }
    with OpenAILoopback(responder=lambda body: "right") as model:
        configurable = {"model": "vllm:loopback-vlm", "base_url": model.base_url}
        [prediction] = run(url, "egodyn_vision", value, configurable)["predictions"]
        [fewer] = run(url, "egodyn_vision", value, {**configurable, "options": {"num_frames": 4}})[
            "predictions"
        ]
        request, four = model.requests
    assert (prediction["status"], prediction["raw"], prediction["model"]) == (
        "ok",
        "right",
        "vllm:loopback-vlm",
    )
    parts = [p for m in request.body["messages"] for p in m["content"] if isinstance(m["content"], list)]
    assert sum(p["type"] == "image_url" for p in parts) == 10  # upstream's 10 evenly spaced frames of 12
    assert prediction["frames"]["indices"] == [0, 1, 2, 4, 5, 6, 7, 9, 10, 11]
    parts = [p for m in four.body["messages"] for p in m["content"] if isinstance(m["content"], list)]
    assert sum(p["type"] == "image_url" for p in parts) == 4  # the run's options: num_frames 4
    assert fewer["frames"]["indices"] == [0, 4, 7, 11]


def test_a_model_graph_without_a_model_and_a_bad_input_fail_with_one_clear_line(
    server: tuple[str, Path],
) -> None:
    url, _ = server
    failed = run(url, "egodyn_vision", {"samples": [{"question": "Which way?"}]})
    assert failed["__error__"]["error"] == "StudioConfigError"
    assert "set the configurable `model` or $KINEGRAPH_MODEL" in failed["__error__"]["message"]
    bad_option = run(url, "egodyn_oracle", {"samples": [{"question": "q"}]}, {"options": {"num_frames": 4}})
    assert bad_option["__error__"] == {
        "error": "StudioConfigError",
        "message": "graph egodyn.oracle has no option 'num_frames' (options: none)",
    }
    refused = run(url, "egodyn_oracle", {"samples": [{"question": "q"}], "media": {"video_path": "../x.mp4"}})
    assert refused["__error__"] == {
        "error": "StudioInputError",
        "message": "media.video_path: path escapes $KINEGRAPH_MEDIA_ROOT",  # the shared confinement's words
    }
