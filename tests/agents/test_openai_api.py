"""openai and vllm providers, through the official openai SDK and the lean aiohttp transport, against a
loopback Chat Completions server."""

from __future__ import annotations

import base64

import pytest

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
from kinegraph.agents.loopback import OpenAILoopback, Reply
from kinegraph.types import Status
from tests.support.event_loop import run

FAST = {"retry_base_s": 0.01, "retry_max_s": 0.05, "timeout_s": 2.0, "cache": False}
TRANSPORTS = pytest.mark.parametrize("transport", ["sdk", "aiohttp"])


def _request(frames) -> GenerateRequest:
    return GenerateRequest(
        messages=[
            Message(role="system", content="Answer in one word."),
            user_message("Turning?", frames[:2]),
        ],
        max_tokens=32,
    )


@TRANSPORTS
def test_request_body_carries_images_system_and_decoding(frames, transport):
    images = [encode_image(f) for f in frames[:2]]
    with OpenAILoopback(responder=lambda body: "left", usage=(1234, 5)) as server:
        backend = get_backend(
            "openai:gpt-4o", base_url=server.base_url, transport=transport, api_key="sk-test", **FAST
        )
        response = run(backend.generate(_request(frames)))
    body = server.requests[0].body
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    assert body["model"] == "gpt-4o" and body["temperature"] == 0.0 and body["max_completion_tokens"] == 32
    assert body["messages"][0] == {"role": "system", "content": "Answer in one word."}
    parts = body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]
    prefix = "data:image/jpeg;base64,"
    sent = [base64.b64decode(p["image_url"]["url"].removeprefix(prefix)) for p in parts[:2]]
    assert all(p["image_url"]["url"].startswith(prefix) for p in parts[:2])
    assert sent == [i.data for i in images]  # the exact encoded bytes, in frame order
    assert parts[2] == {"type": "text", "text": "Turning?"}
    assert response.text == "left" and response.model == "gpt-4o" and response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (
        1234,
        5,
        1,
    )
    # gpt-4o lists at $2.50 / $10 per million tokens in the packaged table
    assert response.usage.cost_usd == pytest.approx(1234 * 2.5e-6 + 5 * 10e-6)


def test_reasoning_models_get_no_temperature_and_a_larger_budget(frames):
    with OpenAILoopback() as server:
        backend = get_backend("openai:o4-mini", base_url=server.base_url, api_key="k", **FAST)
        run(backend.generate(GenerateRequest(messages=[user_message("hi")])))
    body = server.requests[0].body
    assert "temperature" not in body and body["max_completion_tokens"] == 16384


@TRANSPORTS
def test_structured_output_and_tool_calls(transport):
    from pydantic import BaseModel

    class Motion(BaseModel):
        direction: str

    reply = Reply(text="", tool_calls=[("measure_yaw", {"window_s": 3.0})])
    with OpenAILoopback(responder=lambda body: reply) as server:
        backend = get_backend(
            "openai:gpt-4o", base_url=server.base_url, transport=transport, api_key="k", **FAST
        )
        request = GenerateRequest(
            messages=[user_message("go")],
            response_schema=Motion,
            tools=[ToolSpec(name="measure_yaw", description="yaw over a window")],
        )
        response = run(backend.generate(request))
    body = server.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["direction"]["type"] == "string"
    assert body["tools"][0]["function"]["name"] == "measure_yaw"
    assert response.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("measure_yaw", {"window_s": 3.0})]


@TRANSPORTS
def test_retries_429_with_retry_after_then_500_then_succeeds(frames, transport):
    with OpenAILoopback(responder=lambda body: "right", faults=[429, 500], retry_after_s=0.3) as server:
        backend = get_backend(
            "openai:gpt-4o", base_url=server.base_url, transport=transport, api_key="k", **FAST
        )
        response = run(backend.generate(_request(frames)))
    assert response.text == "right"
    assert [r.fault for r in server.requests] == [429, 500, None]
    # Retry-After (0.3 s) is honoured; the computed backoff here is at most 0.05 s
    assert server.requests[1].received_s - server.requests[0].received_s >= 0.3
    assert backend.usage.requests == 1


@TRANSPORTS
def test_timeout_and_dropped_connection_are_retried(frames, transport):
    with OpenAILoopback(faults=["hang", "drop"]) as server:
        backend = get_backend(
            "openai:gpt-4o",
            base_url=server.base_url,
            transport=transport,
            api_key="k",
            **{**FAST, "timeout_s": 0.3},
        )
        response = run(backend.generate(_request(frames)))
    assert response.text == "ok"
    assert [r.fault for r in server.requests] == ["hang", "drop", None]


@TRANSPORTS
def test_failure_after_last_retry_is_a_backend_error_with_status(frames, transport):
    with OpenAILoopback(faults=[503] * 3) as server:
        backend = get_backend(
            "openai:gpt-4o", base_url=server.base_url, transport=transport, api_key="k", max_retries=2, **FAST
        )
        with pytest.raises(BackendError, match="gave up after 3 attempts") as info:
            run(backend.generate(_request(frames)))
    assert info.value.status == Status.api_error and len(server.requests) == 3
    with OpenAILoopback(faults=["hang"] * 2) as server:
        backend = get_backend(
            "openai:gpt-4o",
            base_url=server.base_url,
            transport=transport,
            api_key="k",
            max_retries=1,
            **{**FAST, "timeout_s": 0.2},
        )
        with pytest.raises(BackendError) as info:
            run(backend.generate(_request(frames)))
    assert info.value.status == Status.timeout


@TRANSPORTS
def test_client_errors_are_not_retried_and_404_is_unknown_model(frames, transport):
    with OpenAILoopback(faults=[400, 404]) as server:
        backend = get_backend(
            "openai:gpt-4o", base_url=server.base_url, transport=transport, api_key="k", **FAST
        )
        with pytest.raises(BackendError, match="HTTP 400"):
            run(backend.generate(_request(frames)))
        with pytest.raises(UnknownModelError, match="does not know this model"):
            run(backend.generate(_request(frames)))
    assert len(server.requests) == 2


def test_missing_key_names_the_environment_variable():
    with pytest.raises(MissingAPIKeyError, match="set OPENAI_API_KEY"):
        get_backend("openai:gpt-4o")


def test_key_from_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    with OpenAILoopback() as server:
        run(
            get_backend("openai:gpt-4o", base_url=server.base_url, **FAST).generate(
                GenerateRequest(messages=[user_message("x")])
            )
        )
    assert server.requests[0].headers["authorization"] == "Bearer sk-env"


def test_vllm_needs_a_server_but_no_key_and_uses_max_tokens(frames):
    with pytest.raises(BackendError, match="--base-url"):
        get_backend("vllm:Qwen/Qwen2.5-VL-7B-Instruct")
    with OpenAILoopback(responder=lambda body: "straight") as server:
        root = server.base_url.removesuffix("/v1")  # a bare host:port gets /v1
        backend = get_backend("vllm:Qwen/Qwen2.5-VL-7B-Instruct", base_url=root, **FAST)
        response = run(backend.generate(_request(frames)))
    body = server.requests[0].body
    assert response.text == "straight" and body["max_tokens"] == 32 and body["temperature"] == 0.0
    assert server.requests[0].headers["authorization"] == "Bearer EMPTY"
    assert response.usage.cost_usd == 0.0


def test_unknown_transport_and_non_json_answers_are_clear_errors():
    with pytest.raises(BackendError, match="transport must be 'sdk' or 'aiohttp'"):
        get_backend("vllm:m", base_url="http://127.0.0.1:9/v1", transport="grpc", cache=False)
    with OpenAILoopback(responder=lambda body: "x") as server:
        backend = get_backend("vllm:m", base_url=server.base_url + "/models", max_retries=0, **FAST)
        with pytest.raises(UnknownModelError, match="HTTP 404"):
            run(backend.generate(GenerateRequest(messages=[user_message("x")])))


def test_concurrency_limit_caps_requests_in_flight():
    import asyncio

    with OpenAILoopback(latency_s=0.05) as server:
        backend = get_backend("vllm:m", base_url=server.base_url, max_concurrency=3, **FAST)

        async def many():
            request = GenerateRequest(messages=[user_message("x")])
            await asyncio.gather(*(backend.generate(request) for _ in range(12)))

        run(many())
    assert server.max_in_flight == 3 and len(server.requests) == 12
