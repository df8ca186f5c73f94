"""Pure conversion between the provider-neutral request and the Gemini API (google-genai) format.

Requests are built as plain dicts, which the SDK validates into its `Content` / `GenerateContentConfig`.
A video goes inline with its video MIME type, and its sampling rate as the part's `video_metadata.fps`.
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.errors import RetryableError
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, ImagePart, ToolCall, VideoPart
from kinegraph.types import Usage


def contents(request: GenerateRequest) -> list[dict[str, Any]]:
    """Non-system messages as Gemini contents: images and videos inline, tool calls and results as
    function parts."""
    names = {c.id: c.name for m in request.messages for c in (m.tool_calls or [])}
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            continue
        parts: list[dict[str, Any]] = []
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            response = {"name": names.get(call_id, call_id), "response": {"result": message.text}}
            parts.append({"function_response": response})
        else:
            for part in message.parts:
                if isinstance(part, ImagePart):
                    parts.append({"inline_data": {"mime_type": part.mime_type, "data": part.data}})
                elif isinstance(part, VideoPart):
                    parts.append(video_part(part))
                elif part.text:
                    parts.append({"text": part.text})
            for call in message.tool_calls or []:
                parts.append({"function_call": {"name": call.name, "args": call.arguments}})
        out.append({"role": "model" if message.role == "assistant" else "user", "parts": parts})
    return out


def video_part(part: VideoPart) -> dict[str, Any]:
    """A video as an inline-data part; `fps` (when set) is the rate Gemini samples it at (default 1)."""
    out: dict[str, Any] = {"inline_data": {"mime_type": part.mime_type, "data": part.content}}
    if part.fps is not None:
        out["video_metadata"] = {"fps": part.fps}
    return out


def generation_config(request: GenerateRequest, seed: int | None = None) -> dict[str, Any]:
    """The `config` of `generate_content`: system instruction, decoding (`seed`: the sampling seed), JSON
    schema, function tools."""
    # Automatic function calling runs Python callables; tools here are declarations the caller answers.
    config: dict[str, Any] = {
        "temperature": request.temperature,
        "automatic_function_calling": {"disable": True},
    }
    if request.max_tokens is not None:
        config["max_output_tokens"] = request.max_tokens
    if seed is not None:
        config["seed"] = seed
    system = "\n\n".join(m.text for m in request.messages if m.role == "system")
    if system:
        config["system_instruction"] = system
    if request.response_schema is not None:
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = request.response_schema
    if request.tools:
        declarations = [
            {"name": t.name, "description": t.description, "parameters_json_schema": t.parameters}
            for t in request.tools
        ]
        config["tools"] = [{"function_declarations": declarations}]
    return config


def parse_generate_content(response: Any, model: str) -> GenerateResponse:
    """A `GenerateContentResponse` as a GenerateResponse; thought parts are left out of the text and
    thinking tokens count as output (they are billed as output).

    A 200 with no candidates carries no answer: a `RetryableError`, never an empty answer text.
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    candidates = response.candidates or []
    if not candidates:
        blocked = getattr(getattr(response, "prompt_feedback", None), "block_reason", None)
        reason = f" (prompt blocked: {getattr(blocked, 'value', blocked)})" if blocked else ""
        raise RetryableError(f"the server answered 200 with no candidates{reason}")
    candidate = candidates[0]
    finish = getattr(candidate.finish_reason, "value", candidate.finish_reason)
    for part in (candidate.content.parts or []) if candidate.content else []:
        if part.function_call is not None:
            call = part.function_call
            calls.append(
                ToolCall(id=call.id or call.name or "", name=call.name or "", arguments=call.args or {})
            )
        elif part.text and not part.thought:
            texts.append(part.text)
    meta = response.usage_metadata
    output = ((meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)) if meta else 0
    return GenerateResponse(
        text="".join(texts),
        model=response.model_version or model,
        usage=Usage(input_tokens=(meta.prompt_token_count or 0) if meta else 0, output_tokens=output),
        finish_reason=str(finish) if finish is not None else None,
        tool_calls=calls,
    )
