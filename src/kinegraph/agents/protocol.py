"""The one protocol every VLM backend implements: `async generate(request) -> response`.

Messages carry text, already-encoded images (encoded once per frame, reused by every request that
shows it) and whole videos (sent natively where a backend takes video, sampled to frames elsewhere);
wire-format conversion lives beside each provider as pure functions.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from kinegraph.errors import DataError
from kinegraph.types import Usage
from kinegraph.unicode_text import scrub, scrub_json

log = logging.getLogger(__name__)


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An encoded image (JPEG by default). `data` is the exact bytes sent, so it is part of the cache key.

    `source`, when set, names the bytes exactly without them (a file's content digest, the frame taken and
    the encoding settings) and keys the cache instead; a part made on first need (`agents/deferred_images`)
    has a `source` and no bytes until a request that needs them is sent.
    """

    model_config = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    type: Literal["image"] = "image"
    data: bytes
    mime_type: str = "image/jpeg"
    width: int | None = None
    height: int | None = None
    source: str | None = None
    _deferred: Any = PrivateAttr(default=None)  # (DeferredImages, position) while the bytes are not made

    @cached_property
    def sha256(self) -> str:
        """Hex digest of the bytes, computed once (cache keys use it)."""
        return hashlib.sha256(self.data).hexdigest()

    @cached_property
    def base64(self) -> str:
        """The bytes as base64 text, computed once and reused by every request that sends this image."""
        return base64.b64encode(self.data).decode("ascii")

    @cached_property
    def data_url(self) -> str:
        """The image as a data URL, built once (every question about the clip sends it)."""
        return f"data:{self.mime_type};base64,{self.base64}"


class VideoPart(BaseModel):
    """A whole video: its bytes, or a file read when first needed, and how the model should sample it.

    `fps` is the rate the model should look at it (Gemini's `video_metadata.fps`, vLLM's
    `media_io_kwargs`); a backend that takes no video samples it to frames at `fps`, else to
    `num_frames` evenly spaced frames, else every frame (`kinegraph.agents.video`).
    """

    model_config = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    type: Literal["video"] = "video"
    data: bytes | None = None
    path: str | None = None
    mime_type: str = "video/mp4"
    fps: float | None = Field(default=None, gt=0)
    num_frames: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_source(self) -> VideoPart:
        if (self.data is None) == (self.path is None):
            raise ValueError("a VideoPart needs exactly one of data= or path=")
        return self

    @cached_property
    def content(self) -> bytes:
        """The video's bytes: `data`, or the file at `path` read once."""
        if self.data is not None:
            return self.data
        try:
            return Path(self.path or "").read_bytes()
        except OSError:
            raise DataError("missing or unreadable video", path=self.path) from None

    @cached_property
    def sha256(self) -> str:
        """Hex digest of the bytes, computed once (cache keys use it)."""
        return hashlib.sha256(self.content).hexdigest()

    @cached_property
    def base64(self) -> str:
        """The bytes as base64 text, computed once."""
        return base64.b64encode(self.content).decode("ascii")

    @cached_property
    def data_url(self) -> str:
        """The video as a data URL (what OpenAI-compatible servers read from `video_url`)."""
        return f"data:{self.mime_type};base64,{self.base64}"


ContentPart = TextPart | ImagePart | VideoPart


class ToolSpec(BaseModel):
    """A function the model may call: a name, a description and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """One chat turn. An assistant turn that called tools lists them in `tool_calls`; a `tool` turn
    answers the call named by `tool_call_id`."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[ContentPart]
    tool_call_id: str | None = None
    tool_calls: list[ToolCall] | None = None

    @property
    def parts(self) -> list[ContentPart]:
        """The content as a list of parts (a plain string is one text part)."""
        return [TextPart(text=self.content)] if isinstance(self.content, str) else list(self.content)

    @property
    def text(self) -> str:
        """The text parts joined by newlines (images and videos left out)."""
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))


class GenerateRequest(BaseModel):
    """A provider-neutral request. temperature 0 unless asked otherwise.

    `max_tokens=None` means the model family's default (`kinegraph.agents.default_max_tokens`).
    `response_schema` is a JSON schema or a pydantic model class (converted to its JSON schema).
    `metadata` is not sent to the model and not part of the cache key; the replay provider reads
    `sample_id` (and `clip_id`, `question_id`) from it. `attempt` numbers repeated asks of the same request
    (a validity retry): it is part of the cache key, so a re-ask is not answered by the first ask's entry.
    """

    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int | None = None
    response_schema: dict[str, Any] | None = None
    tools: list[ToolSpec] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    attempt: int = 0

    @field_validator("response_schema", mode="before")
    @classmethod
    def _schema_from_model(cls, value: Any) -> Any:
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value.model_json_schema()
        return value


class GenerateResponse(BaseModel):
    """A model's answer. Lone UTF-16 surrogates in its text or tool arguments (which no UTF-8 file or
    response can hold) are replaced by U+FFFD here, with one warning, so one bad answer never aborts a run."""

    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    cached: bool = False
    latency_s: float = 0.0

    @model_validator(mode="after")
    def _scrub_surrogates(self) -> GenerateResponse:
        self.text, n = scrub(self.text)
        for call in self.tool_calls:
            call.arguments, k = scrub_json(call.arguments)
            n += k
        if n:
            log.warning("%s: %d lone UTF-16 surrogate(s) in the answer replaced by U+FFFD", self.model, n)
        return self


@runtime_checkable
class Backend(Protocol):
    """A VLM backend. `provider` and `model` name it (`openai:gpt-4o`)."""

    provider: str
    model: str

    async def generate(self, request: GenerateRequest) -> GenerateResponse: ...
