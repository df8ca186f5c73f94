"""An OpenAI-compatible facade: `model` names a graph, the last user message is the question.

Images come as `image_url` parts with data URLs (the server fetches nothing). Answer choices come as
`options` in the body (the SDK's `extra_body`) or as a trailing `[a / b / c]` in the question, the form
EgoDyn prompts use. The reply's content is the parsed answer (the raw model text when it did not
parse); `kinegraph` in the reply carries the full QA response (raw text, trace, frames, status).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kinegraph.serve.errors import ServeError
from kinegraph.serve.schemas import GraphOptionValue, OptionText, QARequest, QAResponse, Trajectory

_TRAILING_OPTIONS = re.compile(r"^(?P<question>.*?)\s*\[(?P<options>[^\[\]]+/[^\[\]]+)\]\s*$", re.S)


class ImageURL(BaseModel):
    url: str
    detail: str | None = None


class ChatTextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatImagePart(BaseModel):
    type: Literal["image_url"]
    image_url: ImageURL


ChatPart = Annotated[ChatTextPart | ChatImagePart, Field(discriminator="type")]


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ChatPart] | None = None


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """Chat Completions request; sampling fields are accepted and ignored (graphs fix their own)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    model: str = Field(max_length=200, description="The graph to answer with (see GET /v1/models).")
    messages: list[ChatMessage] = Field(min_length=1, max_length=256)
    stream: bool = False
    stream_options: StreamOptions | None = None
    options: list[OptionText] | None = Field(None, max_length=64, description="kinegraph: answer choices.")
    trajectory: Trajectory | None = Field(None, description="kinegraph: ego poses of the clip.")
    graph_options: dict[str, GraphOptionValue] = Field(default_factory=dict)
    fps: float | None = Field(None, gt=0, le=1000)


class ChatReply(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatReply
    finish_reason: str = "stop"


class ChatUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: ChatUsage
    kinegraph: QAResponse


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "kinegraph"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


def to_qa_request(chat: ChatCompletionRequest) -> QARequest:
    """The QA request a chat request asks: last user message -> question and images."""
    user = next((m for m in reversed(chat.messages) if m.role == "user"), None)
    if user is None or user.content is None:
        raise ServeError(422, "messages: need a user message with the question")
    parts = [ChatTextPart(type="text", text=user.content)] if isinstance(user.content, str) else user.content
    texts, images = [], []
    for i, part in enumerate(parts):
        if isinstance(part, ChatTextPart):
            texts.append(part.text)
        elif part.image_url.url.startswith("data:"):
            images.append(part.image_url.url)
        else:
            raise ServeError(
                422, f"content[{i}].image_url: only data: URLs are accepted (nothing is fetched)"
            )
    question, options = "\n".join(texts).strip(), chat.options
    match = _TRAILING_OPTIONS.match(question) if options is None else None
    if match:
        question = match.group("question").strip()
        options = [o.strip() for o in match.group("options").split("/") if o.strip()]
    if not question:
        raise ServeError(422, "messages: the last user message has no question text")
    try:
        return QARequest(
            question=question,
            options=options,
            graph=chat.model,
            images=images,
            trajectory=chat.trajectory,
            graph_options=chat.graph_options,
            fps=chat.fps,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ServeError(422, f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def completion(chat: ChatCompletionRequest, qa: QAResponse) -> ChatCompletion:
    content = qa.raw if qa.answer is None else _text(qa.answer)
    usage = ChatUsage(
        prompt_tokens=qa.usage.input_tokens,
        completion_tokens=qa.usage.output_tokens,
        total_tokens=qa.usage.input_tokens + qa.usage.output_tokens,
    )
    return ChatCompletion(
        id=f"chatcmpl-{qa.request_id}",
        created=int(time.time()),
        model=chat.model,
        choices=[ChatChoice(message=ChatReply(content=content))],
        usage=usage,
        kinegraph=qa,
    )


def _text(answer: str | float | list[str]) -> str:
    if isinstance(answer, list):
        return ", ".join(answer)
    return answer if isinstance(answer, str) else f"{answer:g}"


async def stream_events(chat: ChatCompletionRequest, reply: ChatCompletion) -> AsyncIterator[str]:
    """The finished reply as Chat Completions server-sent events (role, content, stop, [usage], DONE)."""
    head = {"id": reply.id, "object": "chat.completion.chunk", "created": reply.created, "model": reply.model}

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        chunk = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""})
    yield event({"content": reply.choices[0].message.content or ""})
    yield event({}, "stop", kinegraph=reply.kinegraph.model_dump(mode="json"))
    if chat.stream_options is not None and chat.stream_options.include_usage:
        yield f"data: {json.dumps({**head, 'choices': [], 'usage': reply.usage.model_dump()})}\n\n"
    yield "data: [DONE]\n\n"
