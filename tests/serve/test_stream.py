"""`/v1/qa?stream=true` through a real server: node updates as server-sent events, then the answer or
the error the plain endpoint would give; requests that cannot run are plain 4xx responses."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.egodyn.world import write_carla_clips
from kinegraph.media import video_info
from kinegraph.serve import BackgroundServer
from tests.support.serving import AUTH, RAISING_GRAPH, TURN, running, sse_events
from tests.support.text_reader_model import text_reader


@pytest.fixture(scope="module")
def clip_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root holding one rendered driving clip (textured road: the probes can measure it)."""
    root = tmp_path_factory.mktemp("stream")
    write_carla_clips(root, 1, seed=21, width_px=320, height_px=180)
    (root / "raising_graph.py").write_text(RAISING_GRAPH)
    return root


@pytest.fixture(scope="module")
def clip_request(clip_root: Path) -> dict:
    video = next(clip_root.rglob("*.mp4"))
    _, fps = video_info(video)
    return {"question": TURN, "video_path": str(video.relative_to(clip_root)), "fps": fps}


@pytest.fixture(scope="module")
def stream_server(text_model: OpenAILoopback, clip_root: Path) -> Iterator[BackgroundServer]:
    import sys

    sys.path.insert(0, str(clip_root))
    try:
        graphs = ("egodyn.tools", "egodyn.vo", "raising_graph:build")
        with running(text_model, data_root=clip_root, graphs=graphs, default_graph="egodyn.tools") as srv:
            yield srv
    finally:
        sys.path.remove(str(clip_root))


def stream_qa(server: BackgroundServer, body: dict) -> list[tuple[str, dict]]:
    with httpx.stream(
        "POST", server.url + "/v1/qa?stream=true", headers=AUTH, json=body, timeout=60
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return sse_events(response.iter_lines())


def test_a_tool_graph_streams_its_measurements_before_the_answer(stream_server, clip_request):
    body = {**clip_request, "graph": "egodyn.tools", "request_id": "stream-1"}
    events = stream_qa(stream_server, body)
    assert [name for name, _ in events] == ["update"] * (len(events) - 1) + ["answer"]
    updates = {data["node"]: data["update"] for _, data in events[:-1]}
    assert list(updates) == ["decode_frames", "encode_frames", "measure_ego_motion", "answer_question"]
    # what the probes measured, in full, before the VLM's answer
    tools = updates["measure_ego_motion"]["measurements"]["tools"]
    assert set(tools) == {"vo", "flow", "tcogmap"}
    assert tools["vo"].startswith("Visual odometry (KLT tracks + essential matrix)")
    probes = updates["measure_ego_motion"]["measurements"]["probes"]
    assert probes["vo"]["answers"]["yaw_rate_turn_direction"] in ("left", "right", "straight")
    # pixels and encoded images are described, never sent
    assert updates["decode_frames"]["frames"] == "array 10x180x320x3 uint8"
    assert updates["decode_frames"]["frame_record"]["source"] == clip_request["video_path"]
    assert len(updates["encode_frames"]["images"]) == 10
    assert all(i.startswith("image image/jpeg, ") for i in updates["encode_frames"]["images"])
    # the answer event is the plain endpoint's body (all but the wall time)
    plain = httpx.post(stream_server.url + "/v1/qa", headers=AUTH, json=body, timeout=60)
    assert plain.status_code == 200
    answer = events[-1][1]
    assert answer["latency_s"] > 0 and answer["status"] == "ok"
    assert {**answer, "latency_s": None} == {**plain.json(), "latency_s": None}
    assert updates["answer_question"]["results"] == [
        {
            "sample_id": "stream-1",
            "raw": answer["raw"],
            "answer": answer["answer"],
            "status": "ok",
            "error": None,
        }
    ]


def test_a_vlm_free_graph_streams_its_probe_reading_then_that_answer(stream_server, clip_request):
    events = stream_qa(stream_server, {**clip_request, "graph": "egodyn.vo"})
    updates = {data["node"]: data["update"] for name, data in events if name == "update"}
    assert list(updates) == ["decode_frames", "measure_vo", "answer"]
    name, answer = events[-1]
    assert name == "answer"
    assert (
        answer["answer"] == updates["measure_vo"]["measurements"]["vo"]["answers"]["yaw_rate_turn_direction"]
    )


def test_a_graph_error_mid_stream_is_an_error_event_with_the_plain_body(stream_server, clip_request):
    body = {**clip_request, "graph": "raising_graph:build", "request_id": "boom-2"}
    plain = httpx.post(stream_server.url + "/v1/qa", headers=AUTH, json=body)
    assert plain.status_code == 500
    with httpx.stream("POST", stream_server.url + "/v1/qa?stream=true", headers=AUTH, json=body) as r:
        assert r.status_code == 200
        text = r.read().decode()
    assert sse_events(text.split("\n")) == [("error", plain.json())]
    assert plain.json()["error"] == {
        "message": "the graph failed on this request (request_id boom-2)",
        "type": "server_error",
        "code": 500,
    }
    assert "secret internal detail" not in text


def test_an_input_the_graph_cannot_use_is_an_error_event_with_its_422(stream_server, clip_request):
    body = {**clip_request, "graph": "egodyn.vo", "question": "What colour is the sky?"}
    plain = httpx.post(stream_server.url + "/v1/qa", headers=AUTH, json=body)
    assert plain.status_code == 422
    assert stream_qa(stream_server, body)[-1] == ("error", plain.json())


@pytest.mark.parametrize(
    ("query", "body", "status", "message"),
    [
        ("stream=true", {"graph": "egodyn.nope", "question": "q"}, 404, "unknown graph 'egodyn.nope'"),
        ("stream=true", {"question": ""}, 422, "question: String should have at least 1 character"),
        ("stream=true", {"question": "q", "video_path": "missing.mp4"}, 404, "video_path: no such file"),
        ("stream=maybe", {"question": "q"}, 422, "query.stream: Input should be a valid boolean"),
    ],
)
def test_a_request_that_cannot_run_is_a_plain_error_before_any_event(
    stream_server, query, body, status, message
):
    r = httpx.post(f"{stream_server.url}/v1/qa?{query}", headers=AUTH, json=body)
    assert r.status_code == status and r.headers["content-type"] == "application/json"
    assert message in r.json()["error"]["message"]


@pytest.mark.slow
def test_a_stream_holds_its_clients_slot_until_its_last_event(clip_root, clip_request):
    release = threading.Event()

    def blocked_reader(body: dict) -> str:
        release.wait(30)
        return text_reader(body)

    with OpenAILoopback(responder=blocked_reader) as model:
        with running(
            model,
            data_root=clip_root,
            graphs=("egodyn.tools",),
            default_graph="egodyn.tools",
            max_per_client=1,
        ) as server:
            with httpx.stream(
                "POST", server.url + "/v1/qa?stream=true", headers=AUTH, json=clip_request, timeout=60
            ) as streaming:
                lines = streaming.iter_lines()
                assert next(lines) == "event: update"  # the graph runs; its model call waits
                refused = httpx.post(server.url + "/v1/qa", headers=AUTH, json=clip_request)
                assert refused.status_code == 429
                assert refused.json()["error"]["message"].startswith("this client already has 1 requests")
                release.set()
                events = sse_events(["event: update", *lines])
            assert events[-1][0] == "answer" and events[-1][1]["status"] == "ok"
            assert (
                httpx.post(server.url + "/v1/qa", headers=AUTH, json=clip_request, timeout=60).status_code
                == 200
            )


def test_the_request_timeout_mid_stream_is_an_error_event_with_its_504(clip_root, clip_request):
    with OpenAILoopback(responder=text_reader, latency_s=5.0) as slow:
        with running(
            slow,
            data_root=clip_root,
            graphs=("egodyn.tools",),
            default_graph="egodyn.tools",
            request_timeout_s=2.0,
        ) as server:
            events = stream_qa(server, clip_request)
    assert events[-1] == (
        "error",
        {"error": {"message": "no answer within 2 s (request timeout)", "type": "timeout", "code": 504}},
    )
