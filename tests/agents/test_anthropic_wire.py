"""Offline conversion to and from the Anthropic Messages format."""

from __future__ import annotations

from kinegraph.agents import GenerateRequest, Message, TextPart, user_message
from kinegraph.agents.anthropic_wire import messages_body, parse_message
from tests.support.lazy import lazy_module

anthropic = lazy_module("anthropic")


def test_systems_join_empty_text_dropped_temperature_opt_in():
    request = GenerateRequest(
        messages=[
            Message(role="system", content="a"),
            Message(role="system", content="b"),
            Message(role="user", content=[TextPart(text=""), TextPart(text="q")]),
        ],
        temperature=0.0,
        max_tokens=9,
    )
    body = messages_body(request, "claude-haiku-4-5")
    assert body["system"] == "a\n\nb" and body["max_tokens"] == 9
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "q"}]}]
    assert "extra_body" not in body
    assert messages_body(request, "m", send_temperature=True)["extra_body"] == {"temperature": 0.0}
    assert "system" not in messages_body(GenerateRequest(messages=[user_message("q")]), "m")


def test_parse_counts_prompt_cache_tokens_as_input():
    message = anthropic.types.Message.model_validate(
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": "le"}, {"type": "text", "text": "ft"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 10,
                "output_tokens": 2,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 1000,
            },
        }
    )
    response = parse_message(message)
    assert (
        response.text == "left" and response.usage.input_tokens == 1110 and response.usage.output_tokens == 2
    )
