"""Pure conversion between the provider-neutral request and the Anthropic Messages wire format.

Messages take no video: the backend samples a video to frames before converting (`agents.video`).
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.errors import RetryableError
from kinegraph.agents.protocol import (
    GenerateRequest,
    GenerateResponse,
    ImagePart,
    Message,
    ToolCall,
    VideoPart,
)
from kinegraph.types import Usage


def content_blocks(message: Message) -> list[dict[str, Any]]:
    """A message's parts as Messages content blocks (images as base64 sources; empty texts dropped)."""
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.text}]
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ImagePart):
            source = {"type": "base64", "media_type": part.mime_type, "data": part.base64}
            blocks.append({"type": "image", "source": source})
        elif isinstance(part, VideoPart):
            raise ValueError("the Messages API takes no video: sample it to frames first (agents.video)")
        elif part.text:
            blocks.append({"type": "text", "text": part.text})
    for call in message.tool_calls or []:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks


def messages_body(request: GenerateRequest, model: str, *, send_temperature: bool = False) -> dict[str, Any]:
    """The keyword arguments of `messages.create`: system prompts joined into `system`, tool results as
    user turns, a response schema as `output_config.format` (native structured output)."""
    system = "\n\n".join(m.text for m in request.messages if m.role == "system")
    turns = [
        {"role": "assistant" if m.role == "assistant" else "user", "content": content_blocks(m)}
        for m in request.messages
        if m.role != "system"
    ]
    body: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens or 1024, "messages": turns}
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    if request.response_schema is not None:
        body["output_config"] = {"format": {"type": "json_schema", "schema": request.response_schema}}
    if send_temperature:
        body["extra_body"] = {"temperature": request.temperature}
    return body


def parse_message(message: Any) -> GenerateResponse:
    """A Messages response (the SDK's `Message`) as a GenerateResponse: text blocks joined, tool_use kept.

    A 200 with no content blocks carries no answer: a `RetryableError`, never an empty answer text.
    """
    if not message.content:
        raise RetryableError("the server answered 200 with no content")
    texts, calls = [], []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(id=block.id, name=block.name, arguments=dict(block.input or {})))
    usage = message.usage
    # Prompt-cache reads and writes are input tokens too (billed at other rates, counted here as input).
    input_tokens = (
        usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
    )
    return GenerateResponse(
        text="".join(texts),
        model=message.model,
        usage=Usage(input_tokens=input_tokens, output_tokens=usage.output_tokens),
        finish_reason=message.stop_reason,
        tool_calls=calls,
    )
