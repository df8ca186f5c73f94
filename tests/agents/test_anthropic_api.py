"""anthropic provider through the official anthropic SDK against a loopback Messages server."""

from __future__ import annotations

import base64

import pytest
from pydantic import BaseModel

from kinegraph.agents import (
    BackendError,
    GenerateRequest,
    Message,
    MissingAPIKeyError,
    ToolCall,
    ToolSpec,
    UnknownModelError,
    encode_image,
    get_backend,
    user_message,
)
from kinegraph.agents.loopback import AnthropicLoopback, Reply
from kinegraph.types import Status
from tests.support.event_loop import run

FAST = {"retry_base_s": 0.01, "retry_max_s": 0.05, "timeout_s": 2.0, "cache": False, "api_key": "sk-ant-test"}
MODEL = "anthropic:claude-sonnet-4-6"


def _request(frames) -> GenerateRequest:
    return GenerateRequest(
        messages=[
            Message(role="system", content="Answer in one word."),
            user_message("Turning?", frames[:2]),
        ],
        max_tokens=64,
    )


def test_request_body_carries_images_and_system(frames):
    images = [encode_image(f) for f in frames[:2]]
    with AnthropicLoopback(responder=lambda body: "left", usage=(2000, 4)) as server:
        response = run(get_backend(MODEL, base_url=server.base_url, **FAST).generate(_request(frames)))
    recorded = server.requests[0]
    body = recorded.body
    assert "sk-ant-test" in (
        recorded.headers.get("x-api-key", "") + recorded.headers.get("authorization", "")
    )
    assert recorded.path == "/v1/messages"
    assert body["model"] == "claude-sonnet-4-6" and body["max_tokens"] == 64
    assert body["system"] == "Answer in one word."
    assert [m["role"] for m in body["messages"]] == ["user"]
    blocks = body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["image", "image", "text"]
    assert [b["source"]["media_type"] for b in blocks[:2]] == ["image/jpeg", "image/jpeg"]
    assert [base64.b64decode(b["source"]["data"]) for b in blocks[:2]] == [i.data for i in images]
    assert response.text == "left" and response.finish_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (2000, 4)
    # claude-sonnet-4* lists at $3 / $15 per million tokens
    assert response.usage.cost_usd == pytest.approx(2000 * 3e-6 + 4 * 15e-6)


def test_structured_output_tools_and_tool_results():
    class Motion(BaseModel):
        direction: str

    reply = Reply(text="measuring", tool_calls=[("measure_yaw", {"window_s": 3})])
    with AnthropicLoopback(responder=lambda body: reply) as server:
        request = GenerateRequest(
            messages=[
                user_message("go"),
                Message(role="assistant", content="", tool_calls=[ToolCall(id="t1", name="measure_yaw")]),
                Message(role="tool", content="0.3 rad", tool_call_id="t1"),
            ],
            response_schema=Motion,
            tools=[ToolSpec(name="measure_yaw", description="yaw over a window")],
        )
        response = run(get_backend(MODEL, base_url=server.base_url, **FAST).generate(request))
    body = server.requests[0].body
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["output_config"]["format"]["schema"]["required"] == ["direction"]
    assert body["tools"][0]["input_schema"] == {"type": "object", "properties": {}}
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "measure_yaw", "input": {}}
    ]
    assert body["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "0.3 rad"}],
    }
    assert response.text == "measuring" and response.finish_reason == "tool_use"
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("measure_yaw", {"window_s": 3})]


def test_retries_429_overloaded_and_timeout(frames):
    with AnthropicLoopback(
        responder=lambda b: "right", faults=[429, 529, "hang"], retry_after_s=0.2
    ) as server:
        backend = get_backend(MODEL, base_url=server.base_url, **{**FAST, "timeout_s": 0.3})
        response = run(backend.generate(_request(frames)))
    assert response.text == "right"
    assert [r.fault for r in server.requests] == [429, 529, "hang", None]
    assert server.requests[1].received_s - server.requests[0].received_s >= 0.2


def test_final_failures(frames):
    with AnthropicLoopback(faults=[500, 500, 404]) as server:
        backend = get_backend(MODEL, base_url=server.base_url, max_retries=1, **FAST)
        with pytest.raises(BackendError, match="gave up after 2 attempts") as info:
            run(backend.generate(_request(frames)))
        assert info.value.status == Status.api_error
        with pytest.raises(UnknownModelError):
            run(backend.generate(_request(frames)))


def test_missing_key_names_the_environment_variable():
    with pytest.raises(MissingAPIKeyError, match="set ANTHROPIC_API_KEY"):
        get_backend(MODEL)
