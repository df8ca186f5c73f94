"""Non-official: the tools of `kinegraph.tool_registry` offered to a suite's agent graph (`<suite>.agent`).

An agent graph asks its suite's question with the frames and lets the model call registry tools through
`graphs.tool_calls.ask_with_tools` (bounded rounds, unknown tools and bad arguments answered as tool
errors, every call in the trace, usage summed). Media is never named by the model: a tool that reads a
video gets the sample's decoded frames, so the offered schemas leave out the media reference.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from kinegraph.agents.protocol import ToolSpec
from kinegraph.graphs.tool_calls import Tool
from kinegraph.tool_registry import Clip, Image, ToolError, ToolRegistry, default_registry
from kinegraph.tool_registry.registry import MEDIA_ARGUMENT

#: The reference a bound tool's media argument carries (the sample's own clip).
SAMPLE_CLIP = "sample"


@lru_cache(maxsize=1)
def registry() -> ToolRegistry:
    return default_registry()


class SampleClip:
    """A media source holding only the sample's frames (read on first use): every video reference reads
    them."""

    def __init__(self, load: Callable[[], Clip]) -> None:
        self._load = load
        self._clip: Clip | None = None

    def clip(self, reference: str, num_frames: int | None) -> Clip:
        if self._clip is None:
            self._clip = self._load()
        return self._clip

    def image(self, reference: str) -> Image:
        raise ToolError("this question has no image to read; the tools read the video's frames")


def bound_tools(names: Sequence[str], clip: Callable[[], Clip]) -> dict[str, Tool]:
    """Registry tools by name, offered without their media argument and run on the clip `clip()` reads
    (once, at the first call that needs it)."""
    media = SampleClip(clip)

    def runner(name: str) -> Callable[[dict[str, Any]], str]:
        tool = registry().get(name)
        reference = {MEDIA_ARGUMENT[tool.media]: SAMPLE_CLIP} if tool.media else {}

        def run(arguments: dict[str, Any]) -> str:
            try:
                return json.dumps(registry().call(name, {**arguments, **reference}, media))
            except ToolError as exc:  # its message already names the tool
                return f"Error: {exc}"

        return run

    table: dict[str, Tool] = {}
    for name in names:
        tool = registry().get(name)
        spec = ToolSpec(name=name, description=tool.description, parameters=tool.schema(with_media=False))
        table[name] = (spec, runner(name))
    return table


def function_tool(name: str, description: str, function: Callable[[], str]) -> Tool:
    """A tool of no arguments answering with `function()`'s text (what a graph derives of the sample)."""
    spec = ToolSpec(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    )
    return spec, lambda arguments: function()


def check_rounds(max_tool_rounds: int) -> int:
    """`max_tool_rounds` when it allows at least one call (ValueError otherwise)."""
    if max_tool_rounds < 1:
        raise ValueError(f"max_tool_rounds must be at least 1, got {max_tool_rounds}")
    return max_tool_rounds
