"""Pure conversion between the provider-neutral request and the OpenAI Chat Completions wire format.

Shared by `openai` and `vllm` (any OpenAI-compatible server: vLLM, SGLang, Ollama, LM Studio). A video
becomes vLLM's `video_url` part (a data URL) and its sampling rate `media_io_kwargs.video.fps`; only a
backend with `video="native"` sends one (others sample it to frames first).
"""

from __future__ import annotations

import json
import re
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

# o-series and gpt-5 reasoning models accept only the default temperature.
_FIXED_TEMPERATURE = re.compile(r"^(o\d|gpt-5(?!-chat))", re.IGNORECASE)


def accepts_temperature(model: str) -> bool:
    """False for OpenAI models that reject any temperature but the default (o1/o3/o4, gpt-5)."""
    return not _FIXED_TEMPERATURE.match(model)


def chat_message(message: Message, image_detail: str | None = None) -> dict[str, Any]:
    """One message as a Chat Completions message; images become base64 data-URL `image_url` parts and
    videos `video_url` parts."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.text}
    if isinstance(message.content, str) or message.role in ("system", "assistant"):
        out: dict[str, Any] = {"role": message.role, "content": message.text}
    else:
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, ImagePart):
                image: dict[str, Any] = {"url": part.data_url}
                if image_detail:
                    image["detail"] = image_detail
                parts.append({"type": "image_url", "image_url": image})
            elif isinstance(part, VideoPart):
                parts.append({"type": "video_url", "video_url": {"url": part.data_url}})
            else:
                parts.append({"type": "text", "text": part.text})
        out = {"role": message.role, "content": parts}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
    return out


def chat_body(
    request: GenerateRequest,
    model: str,
    *,
    max_tokens_field: str = "max_completion_tokens",
    send_temperature: bool = True,
    image_detail: str | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` for this request (`seed`: its sampling seed)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [chat_message(m, image_detail) for m in request.messages],
    }
    if request.max_tokens is not None:
        body[max_tokens_field] = request.max_tokens
    if send_temperature:
        body["temperature"] = request.temperature
    if seed is not None:
        body["seed"] = seed
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in request.tools
        ]
    video_fps = {p.fps for m in request.messages for p in m.parts if isinstance(p, VideoPart)}
    if len(video_fps) > 1:
        rates = ", ".join(sorted(map(str, video_fps)))
        raise ValueError(f"the videos of one request must share one sampling rate, got {rates}")
    if video_fps and None not in video_fps:
        body["media_io_kwargs"] = {"video": {"fps": video_fps.pop()}}
    if request.response_schema is not None:
        name = re.sub(r"[^A-Za-z0-9_-]", "_", str(request.response_schema.get("title", "response")))[:64]
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": request.response_schema, "strict": False},
        }
    return body


def parse_chat_json(payload: dict[str, Any]) -> GenerateResponse:
    """A decoded Chat Completions answer as a GenerateResponse (missing usage counts 0 tokens).

    A 200 without choices, or whose first choice has no message, carries no answer: it is a
    `RetryableError` (an API failure), never an empty answer text to be parsed.
    """
    choices = payload.get("choices")
    if not choices:
        raise RetryableError("the server answered 200 with no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise RetryableError("the server answered 200 with a null message")
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        raw = function.get("arguments") or "{}"
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            arguments = {"_unparsed": raw}
        calls.append(ToolCall(id=call.get("id") or "", name=function.get("name") or "", arguments=arguments))
    usage = payload.get("usage") or {}
    return GenerateResponse(
        text=message.get("content") or "",
        model=payload.get("model") or "",
        usage=Usage(
            input_tokens=usage.get("prompt_tokens") or 0, output_tokens=usage.get("completion_tokens") or 0
        ),
        finish_reason=choice.get("finish_reason"),
        tool_calls=calls,
    )
