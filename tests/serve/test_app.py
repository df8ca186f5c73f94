"""`/v1/qa`, graphs, health and metrics, through a real uvicorn server on 127.0.0.1 called with httpx."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from tests.support.serving import AUTH, TURN, TURN_OPTIONS, jpeg_bytes, png_bytes, turning


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def test_json_frame_references_under_data_root(server, text_model):
    before = len(text_model.requests)
    r = httpx.post(
        server.url + "/v1/qa",
        headers=AUTH,
        json={
            "question": TURN,
            "options": TURN_OPTIONS,
            "frame_paths": [f"clip/frame_{i}.png" for i in range(5)],
            "fps": 2.0,
            "request_id": "req-42",
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["request_id"] == "req-42" and body["graph"] == "egodyn.vision"
    # the blind reader answers the first option; it got the five frames as images
    assert body["answer"] == "left" and body["raw"] == "left" and body["status"] == "ok"
    assert body["frames"] == {
        "indices": [0, 1, 2, 3, 4],
        "timestamps_s": [0, 0.5, 1, 1.5, 2],
        "source": "clip/frame_0.png",
        "sampling": "count",  # up to the graph's 10 frames: all five given
        "sampling_value": 10.0,
        "native_video": None,
    }
    assert body["usage"]["requests"] == 1 and body["usage"]["input_tokens"] > 0
    assert any("prompt" in step and TURN in step["prompt"] for step in body["trace"])
    assert body["latency_s"] > 0
    sent = text_model.requests[before].body["messages"][0]["content"]
    assert sum(part["type"] == "image_url" for part in sent) == 5


def test_multipart_upload_of_frames(server, text_model):
    before = len(text_model.requests)
    files = [("frames", (f"f{i}.jpg", jpeg_bytes(), "image/jpeg")) for i in range(3)]
    r = httpx.post(
        server.url + "/v1/qa",
        headers=AUTH,
        data={"question": "Is the mean speed below 5 m/s (18 km/h)?", "options": ["yes", "no"]},
        files=files,
    )
    assert r.status_code == 200, r.text
    assert r.json()["answer"] == "yes" and r.json()["frames"]["source"] == "upload"
    sent = text_model.requests[before].body["messages"][0]["content"]
    assert sum(part["type"] == "image_url" for part in sent) == 3


def test_multipart_upload_of_a_video_with_graph_options(server, data_root):
    video = (data_root / "clip.mp4").read_bytes()
    r = httpx.post(
        server.url + "/v1/qa",
        headers=AUTH,
        data={"question": TURN, "options": TURN_OPTIONS, "graph_options": json.dumps({"num_frames": 3})},
        files=[("video", ("clip.mp4", video, "video/mp4"))],
    )
    assert r.status_code == 200, r.text
    frames = r.json()["frames"]
    assert frames["indices"] == [0, 6, 11] and frames["timestamps_s"] == [0, 1.5, 2.75]


def test_video_reference_and_inline_images(server):
    body = {"question": TURN, "options": TURN_OPTIONS, "video_path": "clip.mp4"}
    r = httpx.post(server.url + "/v1/qa", headers=AUTH, json=body)  # egodyn.vision samples 10 frames
    assert r.status_code == 422 and "10 frames, over the limit of 8 per request" in r.text
    r = httpx.post(server.url + "/v1/qa", headers=AUTH, json={**body, "graph_options": {"num_frames": 8}})
    assert r.status_code == 200 and len(r.json()["frames"]["indices"]) == 8
    r = httpx.post(
        server.url + "/v1/qa",
        headers=AUTH,
        json={
            "question": TURN,
            "options": TURN_OPTIONS,
            "images": [data_url(png_bytes()), data_url(jpeg_bytes())],
        },
    )
    assert r.status_code == 200 and r.json()["frames"]["indices"] == [0, 1]


@pytest.mark.parametrize(("yaw_rate", "expected"), [(0.3, "left"), (-0.3, "right"), (0.001, "straight")])
def test_trajectory_reaches_the_model_and_decides_the_answer(server, yaw_rate, expected):
    r = httpx.post(
        server.url + "/v1/qa",
        headers=AUTH,
        json={
            "graph": "egodyn.text_only",
            "question": TURN,
            "options": TURN_OPTIONS,
            "trajectory": turning(yaw_rate),
            "graph_options": {"encoding": "timeseries"},
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"] == expected
    assert "yaw_rate(rad/s):" in body["trace"][0]["prompt"]


def test_vlm_free_graph_answers_without_a_model_call(server, text_model):
    before = len(text_model.requests)
    r = httpx.post(
        server.url + "/v1/qa",
        headers=AUTH,
        json={
            "graph": "first_option_graph:build",
            "question": "q?",
            "options": ["b", "a"],
            "video_path": "clip.mp4",
        },
    )
    assert r.status_code == 200 and r.json()["answer"] == "b" and r.json()["model"] is None
    assert len(text_model.requests) == before


def test_graphs_listing_names_options_and_needs(server):
    r = httpx.get(server.url + "/v1/graphs", headers=AUTH)
    assert r.status_code == 200
    listing = {g["name"]: g for g in r.json()["graphs"]}
    assert r.json()["default_graph"] == "egodyn.vision"
    vision = listing["egodyn.vision"]
    assert {o["name"]: o["default"] for o in vision["options"]} == {
        "num_frames": 10,
        "grouped": False,
        "max_side": None,
    }
    assert vision["needs_model"] and not vision["needs_trajectory"] and vision["available"]
    assert listing["egodyn.text_only"]["needs_trajectory"]
    assert not listing["first_option_graph:build"]["needs_model"]


def test_health_and_openapi_are_open(server):
    assert httpx.get(server.url + "/healthz").json() == {
        "status": "ok",
        "model": "vllm:loopback-vlm",
        "graphs": 5,
        "auth": True,
    }
    schema = httpx.get(server.url + "/openapi.json").json()
    body = schema["paths"]["/v1/qa"]["post"]["requestBody"]["content"]
    assert set(body) == {"application/json", "multipart/form-data"}
    assert "Trajectory" in schema["components"]["schemas"]
    assert httpx.get(server.url + "/docs").status_code == 200


def test_metrics_count_requests_and_graph_runs(server):
    httpx.post(
        server.url + "/v1/qa", headers=AUTH, json={"question": TURN, "options": TURN_OPTIONS, "images": []}
    )
    httpx.get(server.url + "/v1/graphs")  # no key: refused
    text = httpx.get(server.url + "/metrics").text
    samples = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert samples['kinegraph_requests_total{code="401",route="/v1/graphs"}'] >= 1
    assert samples['kinegraph_rejected_requests_total{reason="auth"}'] >= 1
    # a vision graph without frames is the client's error: the graph records it as input_error -> 422
    assert samples['kinegraph_requests_total{code="422",route="/v1/qa"}'] >= 1
    assert samples['kinegraph_graph_runs_total{graph="egodyn.vision",status="ok"}'] >= 1
    assert samples['kinegraph_model_tokens_total{direction="input"}'] > 0
    assert samples["kinegraph_requests_in_flight"] == 0
