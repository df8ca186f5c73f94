"""Response and error bodies of the OpenAI, Anthropic and Google APIs, as the loopback servers send them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reply:
    """What a loopback responder answers: text, and optionally tool calls as (name, arguments) pairs."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class Wire:
    """One provider's wire format: where its SDK points, what it routes, how it answers and fails."""

    def base_url(self, root: str) -> str:
        return root

    def accepts(self, path: str) -> bool:
        raise NotImplementedError

    def get(self, path: str, model: str) -> tuple[int, dict[str, Any]]:
        return 404, self.error(404, f"no route {path}")

    def error(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def response(
        self, body: dict[str, Any], path: str, reply: Reply, usage: tuple[int, int], model: str
    ) -> dict[str, Any]:
        raise NotImplementedError

    def hollow(
        self, body: dict[str, Any], path: str, usage: tuple[int, int], model: str, *, null: bool = False
    ) -> dict[str, Any]:
        """A well-formed 200 that carries no answer (`null`: the answer's message itself is null)."""
        raise NotImplementedError


class OpenAIWire(Wire):
    """Chat Completions: `POST /v1/chat/completions`, `GET /v1/models`."""

    def base_url(self, root: str) -> str:
        return root + "/v1"

    def accepts(self, path: str) -> bool:
        return path.split("?")[0] == "/v1/chat/completions"

    def get(self, path: str, model: str) -> tuple[int, dict[str, Any]]:
        if path.split("?")[0] != "/v1/models":
            return 404, self.error(404, f"no route {path}")
        return 200, {
            "object": "list",
            "data": [{"id": model, "object": "model", "created": 0, "owned_by": "me"}],
        }

    def error(self, status: int, message: str) -> dict[str, Any]:
        code = {404: "model_not_found", 429: "rate_limit_exceeded"}.get(status)
        return {"error": {"message": message, "type": "loopback_error", "param": None, "code": code}}

    def response(
        self, body: dict[str, Any], path: str, reply: Reply, usage: tuple[int, int], model: str
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in enumerate(reply.tool_calls)
            ]
        return {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        }

    def hollow(
        self, body: dict[str, Any], path: str, usage: tuple[int, int], model: str, *, null: bool = False
    ) -> dict[str, Any]:
        payload = self.response(body, path, Reply(), usage, model)
        if null:
            payload["choices"][0]["message"] = None
        else:
            payload["choices"] = []
        return payload


class AnthropicWire(Wire):
    """Messages: `POST /v1/messages`."""

    _ERROR_TYPES = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}

    def accepts(self, path: str) -> bool:
        return path.split("?")[0] == "/v1/messages"

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = self._ERROR_TYPES.get(status, "overloaded_error" if status == 529 else "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def response(
        self, body: dict[str, Any], path: str, reply: Reply, usage: tuple[int, int], model: str
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        content += [
            {"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
        return {
            "id": "msg_loopback",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", model),
            "content": content,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }

    def hollow(
        self, body: dict[str, Any], path: str, usage: tuple[int, int], model: str, *, null: bool = False
    ) -> dict[str, Any]:
        return self.response(body, path, Reply(), usage, model)  # `content: []`


class GoogleWire(Wire):
    """Gemini API: `POST /v1beta/models/{model}:generateContent`."""

    _STATUS = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}

    def accepts(self, path: str) -> bool:
        return path.split("?")[0].endswith(":generateContent")

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": self._STATUS.get(status, "INTERNAL")}}

    def response(
        self, body: dict[str, Any], path: str, reply: Reply, usage: tuple[int, int], model: str
    ) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
        parts += [{"functionCall": {"name": n, "args": a}} for n, a in reply.tool_calls]
        path_model = path.split("?")[0].rsplit("/", 1)[-1].split(":")[0]
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": usage[0],
                "candidatesTokenCount": usage[1],
                "totalTokenCount": sum(usage),
            },
            "modelVersion": path_model or model,
        }

    def hollow(
        self, body: dict[str, Any], path: str, usage: tuple[int, int], model: str, *, null: bool = False
    ) -> dict[str, Any]:
        payload = self.response(body, path, Reply(), usage, model)
        payload["candidates"] = []
        return payload
