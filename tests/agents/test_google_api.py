"""google provider through the official google-genai SDK against a loopback Gemini API server."""

from __future__ import annotations

import base64

import pytest
from pydantic import BaseModel

from kinegraph.agents import (
    BackendError,
    GenerateRequest,
    Message,
    MissingAPIKeyError,
    ToolSpec,
    UnknownModelError,
    encode_image,
    get_backend,
    user_message,
)
from kinegraph.agents.loopback import GoogleLoopback, Reply
from kinegraph.types import Status
from tests.support.event_loop import run

FAST = {"retry_base_s": 0.01, "retry_max_s": 0.05, "timeout_s": 2.0, "cache": False, "api_key": "g-test"}
MODEL = "google:gemini-2.0-flash"


def _request(frames) -> GenerateRequest:
    return GenerateRequest(
        messages=[
            Message(role="system", content="Answer in one word."),
            user_message("Turning?", frames[:2]),
        ],
        max_tokens=64,
    )


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_request_body_carries_inline_images_and_system(frames):
    images = [encode_image(f) for f in frames[:2]]
    with GoogleLoopback(responder=lambda body: "left", usage=(700, 2)) as server:
        response = run(get_backend(MODEL, base_url=server.base_url, **FAST).generate(_request(frames)))
    recorded = server.requests[0]
    body = recorded.body
    assert recorded.headers["x-goog-api-key"] == "g-test"
    assert recorded.path == "/v1beta/models/gemini-2.0-flash:generateContent"
    assert body["systemInstruction"]["parts"] == [{"text": "Answer in one word."}]
    assert (
        body["generationConfig"]["temperature"] == 0.0 and body["generationConfig"]["maxOutputTokens"] == 64
    )
    parts = body["contents"][0]["parts"]
    assert body["contents"][0]["role"] == "user"
    # the SDK writes `mime_type` (older releases `mimeType`); the API reads both spellings
    mime_types = [p["inlineData"].get("mime_type", p["inlineData"].get("mimeType")) for p in parts[:2]]
    assert mime_types == ["image/jpeg", "image/jpeg"]
    assert [_b64(p["inlineData"]["data"]) for p in parts[:2]] == [i.data for i in images]
    assert parts[2] == {"text": "Turning?"}
    assert response.text == "left" and response.finish_reason == "STOP"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (700, 2)
    # gemini-2.0-flash* lists at $0.10 / $0.40 per million tokens
    assert response.usage.cost_usd == pytest.approx(700 * 0.1e-6 + 2 * 0.4e-6)


def test_json_schema_and_function_calls():
    class Motion(BaseModel):
        direction: str

    reply = Reply(text="", tool_calls=[("measure_yaw", {"window_s": 3})])
    with GoogleLoopback(responder=lambda body: reply) as server:
        request = GenerateRequest(
            messages=[user_message("go")],
            response_schema=Motion,
            tools=[ToolSpec(name="measure_yaw", description="yaw over a window")],
        )
        response = run(get_backend(MODEL, base_url=server.base_url, **FAST).generate(request))
    config = server.requests[0].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["required"] == ["direction"]
    assert server.requests[0].body["tools"][0]["functionDeclarations"][0]["name"] == "measure_yaw"
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("measure_yaw", {"window_s": 3})]


def test_retries_429_503_drop_and_timeout(frames):
    faults = [429, 503, "drop", "hang"]
    with GoogleLoopback(responder=lambda b: "right", faults=faults, retry_after_s=0.2) as server:
        backend = get_backend(MODEL, base_url=server.base_url, **{**FAST, "timeout_s": 1.0})
        response = run(backend.generate(_request(frames)))
    assert response.text == "right"
    assert [r.fault for r in server.requests] == [*faults, None]
    assert server.requests[1].received_s - server.requests[0].received_s >= 0.2


def test_final_failures(frames):
    with GoogleLoopback(faults=["hang", 404]) as server:
        backend = get_backend(MODEL, base_url=server.base_url, max_retries=0, **{**FAST, "timeout_s": 1.0})
        with pytest.raises(BackendError) as info:
            run(backend.generate(_request(frames)))
        assert info.value.status == Status.timeout
        with pytest.raises(UnknownModelError):
            run(backend.generate(_request(frames)))


def test_missing_key_names_the_environment_variables(monkeypatch):
    with pytest.raises(MissingAPIKeyError, match="set GOOGLE_API_KEY or GEMINI_API_KEY"):
        get_backend(MODEL)
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    assert get_backend(MODEL, cache=False).model == "gemini-2.0-flash"
