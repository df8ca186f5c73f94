"""The one protocol every VLM backend implements: `async generate(request) -> response`.

Messages carry text and already-encoded images (encoded once per frame, reused by every request that
shows it); wire-format conversion lives beside each provider as pure functions.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from kinegraph.types import Usage


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An encoded image (JPEG by default). `data` is the exact bytes sent, so it is part of the cache key."""

    model_config = ConfigDict(frozen=True)

    type: Literal["image"] = "image"
    data: bytes
    mime_type: str = "image/jpeg"
    width: int | None = None
    height: int | None = None


ContentPart = TextPart | ImagePart


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[ContentPart]
    tool_call_id: str | None = None


class ToolSpec(BaseModel):
    """A function the model may call: a name, a description and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class GenerateRequest(BaseModel):
    """A provider-neutral request. temperature 0 unless asked otherwise."""

    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int | None = None
    response_schema: dict[str, Any] | None = None
    tools: list[ToolSpec] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class GenerateResponse(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    cached: bool = False
    latency_s: float = 0.0


@runtime_checkable
class Backend(Protocol):
    """A VLM backend. `provider` and `model` name it (`openai:gpt-4o`)."""

    provider: str
    model: str

    async def generate(self, request: GenerateRequest) -> GenerateResponse: ...
