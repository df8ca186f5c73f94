"""Offline conversion to and from the Chat Completions format."""

from __future__ import annotations

from kinegraph.agents import GenerateRequest, Message, ToolCall, encode_image, user_message
from kinegraph.agents.openai_wire import accepts_temperature, chat_body, parse_chat_json


def test_tool_turns_and_image_detail(frames):
    request = GenerateRequest(
        messages=[
            user_message("q", [encode_image(frames[0])]),
            Message(
                role="assistant", content="", tool_calls=[ToolCall(id="c1", name="f", arguments={"a": 1})]
            ),
            Message(role="tool", content="2.0", tool_call_id="c1"),
        ],
        max_tokens=5,
    )
    body = chat_body(request, "gpt-4o", image_detail="low")
    assert body["messages"][0]["content"][0]["image_url"]["detail"] == "low"
    assert body["messages"][1]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "2.0"}


def test_parse_handles_missing_usage_and_bad_arguments():
    response = parse_chat_json(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
                        ],
                    },
                }
            ],
        }
    )
    assert response.text == "" and response.usage.input_tokens == 0
    assert response.tool_calls[0].arguments == {"_unparsed": "{oops"}


def test_fixed_temperature_models():
    assert not accepts_temperature("o3-mini") and not accepts_temperature("gpt-5.1")
    assert accepts_temperature("gpt-4o") and accepts_temperature("gpt-5-chat-latest")
