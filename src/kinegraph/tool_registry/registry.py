"""A typed registry of the deterministic tools a model may call, each with the JSON schema of its arguments.

A tool is a plain function: its first parameter may be a `Clip` or an `Image` (media it reads), the rest
are JSON arguments with units in their names; it returns a small JSON object (numbers with units, never
pixel arrays). The registry derives each schema from the signature and docstring, states which media each
tool needs, and offers the tools three ways: as JSON schemas (MCP), as OpenAI function tools, and as the
tool table `graphs.tool_calls.ask_with_tools` takes.
"""

from __future__ import annotations

import inspect
import json
import math
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kinegraph.errors import DataError
from kinegraph.tool_registry.media import Clip, Image, MediaSource, ToolError
from kinegraph.tool_registry.schema import argument_errors, docstring_parts, function_schema

MediaKind = Literal["video", "image"]
#: the argument a media reference arrives in, per media kind
MEDIA_ARGUMENT: dict[str, str] = {"video": "video_path", "image": "image_path"}
_MEDIA_TYPES: dict[type, MediaKind] = {Clip: "video", Image: "image"}
_NUM_FRAMES = {
    "type": "integer",
    "description": "Frames to decode, evenly spaced over the video (default: the server's frame limit).",
}


@dataclass(frozen=True)
class RegisteredTool:
    """One tool: its name, description, the media it reads (None: only arguments) and its JSON schema."""

    name: str
    description: str
    media: MediaKind | None
    parameters: dict[str, Any]
    function: Callable[..., dict[str, Any]]

    def schema(self, with_media: bool = True) -> dict[str, Any]:
        """The arguments' JSON schema; `with_media` adds the media reference (a path the caller resolves)."""
        if self.media is None or not with_media:
            return self.parameters
        reference = {
            "type": "string",
            "description": f"Path of the {'video' if self.media == 'video' else 'image'} file, "
            "relative to the data root.",
        }
        extra = {MEDIA_ARGUMENT[self.media]: reference}
        if self.media == "video":
            extra["num_frames"] = _NUM_FRAMES
        return {
            **self.parameters,
            "properties": {**extra, **self.parameters["properties"]},
            "required": [MEDIA_ARGUMENT[self.media], *self.parameters["required"]],
        }


def register(function: Callable[..., dict[str, Any]], name: str | None = None) -> RegisteredTool:
    """A registry entry from a typed, documented function (ValueError when it cannot be described)."""
    parameters = list(inspect.signature(function).parameters)
    hints = typing.get_type_hints(function)
    media = _MEDIA_TYPES.get(hints.get(parameters[0])) if parameters else None
    description, _ = docstring_parts(function)
    if not description:
        raise ValueError(f"{function.__name__}: a tool needs a docstring saying what it measures")
    skip = frozenset(parameters[:1]) if media else frozenset()
    return RegisteredTool(
        name or function.__name__, description, media, function_schema(function, skip), function
    )


def _finite(value: Any) -> Any:
    """The result with NaN and infinities as None, so it is valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class ToolRegistry:
    """Tools by name; `call` checks the arguments against the schema, resolves media and runs the tool."""

    def __init__(self, tools: Iterable[RegisteredTool]) -> None:
        self.tools: dict[str, RegisteredTool] = {}
        for tool in tools:
            if tool.name in self.tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self.tools[tool.name] = tool

    def names(self) -> list[str]:
        return sorted(self.tools)

    def get(self, name: str) -> RegisteredTool:
        if name not in self.tools:
            raise ToolError(f"unknown tool {name!r}; available tools: {', '.join(self.names())}")
        return self.tools[name]

    def openai_tools(self, with_media: bool = True) -> list[dict[str, Any]]:
        """The tools in the OpenAI Chat Completions `tools` format."""
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.schema(with_media),
                },
            }
            for t in self.tools.values()
        ]

    def call(self, name: str, arguments: Mapping[str, Any], media: MediaSource) -> dict[str, Any]:
        """Run one tool on JSON arguments; ToolError says what was wrong with the call or its media."""
        tool = self.get(name)
        errors = argument_errors(tool.schema(), dict(arguments))
        if errors:
            raise ToolError(f"bad arguments for {name}: " + "; ".join(errors))
        kwargs = {k: v for k, v in arguments.items() if k in tool.parameters["properties"]}
        inputs: list[Clip | Image] = []
        if tool.media == "video":
            inputs.append(media.clip(arguments["video_path"], arguments.get("num_frames")))
        elif tool.media == "image":
            inputs.append(media.image(arguments["image_path"]))
        try:
            result = tool.function(*inputs, **kwargs)
        except ToolError:
            raise
        except DataError as exc:
            raise ToolError(f"{name} could not run: {exc.message}") from None
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise ToolError(f"{name} could not run: {exc}") from None
        if inputs and isinstance(inputs[0], Clip):
            result = {**result, "frames_used": inputs[0].summary()}
        return _finite(result)

    def tool_table(self, media: MediaSource) -> dict[str, tuple[Any, Callable[[dict[str, Any]], str]]]:
        """The tools as `graphs.tool_calls` offers them: (ToolSpec, arguments -> JSON text) by name."""
        from kinegraph.agents.protocol import ToolSpec

        def runner(name: str) -> Callable[[dict[str, Any]], str]:
            return lambda arguments: json.dumps(self.call(name, arguments, media))

        return {
            t.name: (ToolSpec(name=t.name, description=t.description, parameters=t.schema()), runner(t.name))
            for t in self.tools.values()
        }
