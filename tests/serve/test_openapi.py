"""schemathesis against the live server's OpenAPI schema: whatever it sends, no answer is a 5xx, and no
streamed answer (`stream=true`) ends in a 5xx error event either. Beside the generated cases, explicit
examples send every family's request fields to graphs that read them, plain and streamed."""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, example, given, settings
from schemathesis import GenerationMode

from tests.support.serving import AUTH, TURN, TURN_OPTIONS, running, sse_events, turning

EXAMPLES_PER_OPERATION = 15
FRAMES = [f"clip/frame_{i}.png" for i in range(5)]
POSES = {
    "timestamps_s": [0.5 * i for i in range(5)],
    "translation_m": [[2.0 * i, 0.1 * i, 0.0] for i in range(5)],
    "rotation_wxyz": [[1.0, 0.0, 0.0, 0.0]] * 5,
}
TAD = {"question": "What does the ego vehicle do?", "options": ["A. Turn left.", "B. Go straight."]}
#: one request per family field, each to a graph that reads it (the data root is conftest's)
FIELD_EXAMPLES = [
    {"graph": "egodyn.text_only", "question": TURN, "options": TURN_OPTIONS, "trajectory": turning(0.3)},
    {
        "graph": "egodyn.vision",
        "question": TURN,
        "frame_paths": FRAMES,
        "question_id": "yaw_rate_turn_direction",
    },
    {**TAD, "graph": "tad.ego_pose", "frame_paths": FRAMES, "ego_poses": POSES, "task": "mc_action"},
    {
        **TAD,
        "graph": "tad.baseline",
        "frame_paths": FRAMES,
        "task": "temp_ordering",
        "keysegments": [[0, 1], [2, 4]],
    },
    {**TAD, "graph": "tad.baseline", "frame_paths": FRAMES, "fps": 2.0, "keysegments": "derive"},
    {**TAD, "graph": "tad.tcogmap", "nuscenes_scene": "scene-0001"},
    {
        "graph": "quantiphy.prior_only",
        "question": "What is the ball's speed in m/s?",
        "frame_paths": FRAMES,
        "fps": 2.0,
        "prior": {"quantity": "the ball's diameter", "value": 0.22, "unit": "m", "depths": "ball: 5 m"},
    },
    {
        "graph": "autodridm.baseline",
        "question": "Which?",
        "options": ["a", "b"],
        "frame_paths": FRAMES[:1],
        "task": "Scene-1",
    },
]
MULTIPART_EXAMPLE = {
    **{k: v for k, v in FIELD_EXAMPLES[2].items() if k not in ("ego_poses", "options")},
    "options": TAD["options"],
    "ego_poses": json.dumps(POSES),
    "keysegments": json.dumps([[0, 4]]),
}


@pytest.fixture(scope="module")
def fuzzed_server(text_model, data_root):
    with running(text_model, data_root=data_root, max_body_bytes=2**20, max_frames=8) as srv:
        yield srv


def field_examples(operation) -> list:
    """POST /v1/qa's explicit cases: each field example as JSON, plain and streamed; one multipart."""
    cases = [
        operation.Case(body=body, media_type="application/json", query={"stream": stream})
        for body in FIELD_EXAMPLES
        for stream in ("false", "true")
    ]
    return [
        *cases,
        operation.Case(body=MULTIPART_EXAMPLE, media_type="multipart/form-data", query={"stream": "true"}),
    ]


def is_stream(response) -> bool:
    """Whether schemathesis' response (headers as lists) is a server-sent event stream."""
    return (response.headers.get("content-type") or [""])[0].startswith("text/event-stream")


def server_errors(response) -> list[str]:
    """5xx answers, a streamed one's error events included; a stream must end in `answer` or `error`."""
    if response.status_code >= 500:
        return [f"{response.status_code}: {response.text[:300]}"]
    if not is_stream(response):
        return []
    events = sse_events(response.text.split("\n"))
    assert events and events[-1][0] in ("answer", "error"), response.text[-300:]
    return [
        json.dumps(data)[:300] for name, data in events if name == "error" and data["error"]["code"] >= 500
    ]


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_schemathesis_finds_no_server_error(fuzzed_server, mode):
    schema = schemathesis.openapi.from_url(fuzzed_server.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /v1/qa",
        "POST /v1/chat/completions",
    }
    if mode is GenerationMode.NEGATIVE:  # only a body can be made invalid; the GETs take no input
        operations = [op for op in operations if op.method.upper() == "POST"]
    seen: list[int] = []
    streamed: list[str] = []
    for operation in operations:

        def check(case) -> None:
            response = case.call(base_url=fuzzed_server.url, headers=AUTH, timeout=30)
            seen.append(response.status_code)
            assert server_errors(response) == [], f"{case.method} {case.path} {case.query}"
            if is_stream(response):
                streamed.append(sse_events(response.text.split("\n"))[-1][0])

        if mode is GenerationMode.POSITIVE and operation.path == "/v1/qa":
            for case in field_examples(operation):
                check = example(case=case)(check)
        settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )(given(case=operation.as_strategy(generation_mode=mode))(check))()
    assert len(seen) >= len(operations)
    if mode is GenerationMode.POSITIVE:  # the field examples were answered, streamed too
        assert "answer" in streamed


def test_the_schema_declares_the_streaming_mode_and_the_family_fields(fuzzed_server):
    schema = schemathesis.openapi.from_url(fuzzed_server.url + "/openapi.json").raw_schema
    qa = schema["paths"]["/v1/qa"]["post"]
    (stream,) = [p for p in qa["parameters"] if p["name"] == "stream"]
    assert stream["in"] == "query" and stream["schema"]["type"] == "boolean"
    assert set(qa["responses"]["200"]["content"]) == {"application/json", "text/event-stream"}
    fields = set(schema["components"]["schemas"]["QARequest"]["properties"])
    multipart = set(schema["components"]["schemas"]["QAMultipart"]["properties"])
    family = {"ego_poses", "nuscenes_scene", "keysegments", "task", "question_id", "prior"}
    assert family <= fields and family <= multipart
