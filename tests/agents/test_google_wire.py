"""Offline conversion to and from the Gemini generate_content format."""

from __future__ import annotations

from kinegraph.agents import GenerateRequest, Message, ToolCall, encode_image, user_message
from kinegraph.agents.google_wire import contents, generation_config, parse_generate_content
from tests.support.lazy import lazy_module

genai = lazy_module("google.genai")


def test_roles_images_and_function_turns(frames):
    image = encode_image(frames[0])
    request = GenerateRequest(
        messages=[
            Message(role="system", content="sys"),
            user_message("q", [image]),
            Message(
                role="assistant", content="", tool_calls=[ToolCall(id="c1", name="yaw", arguments={"k": 1})]
            ),
            Message(role="tool", content="0.2", tool_call_id="c1"),
        ]
    )
    out = contents(request)
    assert [c["role"] for c in out] == ["user", "model", "user"]
    assert out[0]["parts"][0] == {"inline_data": {"mime_type": "image/jpeg", "data": image.data}}
    assert out[1]["parts"] == [{"function_call": {"name": "yaw", "args": {"k": 1}}}]
    assert out[2]["parts"] == [{"function_response": {"name": "yaw", "response": {"result": "0.2"}}}]
    config = generation_config(request)
    assert config["system_instruction"] == "sys" and config["temperature"] == 0.0
    genai.types.GenerateContentConfig(**config)  # the SDK accepts it


def test_parse_skips_thoughts_and_bills_thinking_as_output():
    response = genai.types.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"text": "hmm", "thought": True}, {"text": "left"}],
                    },
                    "finish_reason": "STOP",
                }
            ],
            "usage_metadata": {
                "prompt_token_count": 10,
                "candidates_token_count": 1,
                "thoughts_token_count": 30,
            },
        }
    )
    parsed = parse_generate_content(response, "gemini-2.5-flash")
    assert parsed.text == "left" and parsed.model == "gemini-2.5-flash"
    assert (parsed.usage.input_tokens, parsed.usage.output_tokens, parsed.finish_reason) == (10, 31, "STOP")
