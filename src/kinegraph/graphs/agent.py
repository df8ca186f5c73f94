"""Non-official: the shape every `<suite>.agent` graph shares, and the registry tools it offers.

An agent graph asks its suite's question with the frames and lets the model call tools through
`graphs.tool_calls.ask_with_tools` (bounded rounds, unknown tools and bad arguments answered as tool
errors, every call in the trace, usage summed); its last reply goes through the suite's own extraction.
Media is never named by the model: a registry tool that reads a video gets the sample's decoded frames,
one that reads an image the sample's image, so the offered schemas leave out the media reference.
A group's questions share one memo of tool results, so a tool runs once per clip and arguments.

LangGraph's prebuilt `ToolNode` / `ToolMessage` are not used: `ToolNode` is a graph node over a
`messages` channel of LangChain messages and LangChain tools, while the backends speak kinegraph's own
`GenerateRequest` / `Message` / `ToolCall` (one `generate` method, wire formats converted beside it), and a
question's whole loop runs inside one node (`nodes.answer_each`, which keeps per-branch bookkeeping off the
hot path). Using them would convert every message both ways on every round and gain no behaviour.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, MutableMapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, ToolSpec
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.state import GraphContext, GroupState
from kinegraph.graphs.tool_calls import Tool, ask_with_tools
from kinegraph.tool_registry import Clip, Image, ToolError, ToolRegistry, default_registry
from kinegraph.tool_registry.registry import MEDIA_ARGUMENT
from kinegraph.types import FrameRecord, Prediction, Sample, Usage

#: The reference a bound tool's media argument carries (the sample's own clip or image).
SAMPLE_MEDIA = "sample"
#: The node name every agent graph's answer and calls are traced under.
NODE = "answer_with_tools"
#: `measurements` keys the `keep_clip` prelude writes.
CLIP, TOOL_RESULTS = "clip", "tool_results"


@lru_cache(maxsize=1)
def registry() -> ToolRegistry:
    return default_registry()


class SampleMedia:
    """A media source holding only the sample's frames (read on first use): every video reference reads
    them; an image reference reads the sample's single image."""

    def __init__(self, load: Callable[[], Clip]) -> None:
        self._load = load
        self._clip: Clip | None = None

    def _frames(self) -> Clip:
        if self._clip is None:
            self._clip = self._load()
        return self._clip

    def clip(self, reference: str, num_frames: int | None) -> Clip:
        clip = self._frames()
        if len(clip.frames) < 2:
            raise ToolError("this question has a single image; the video tools need at least 2 frames")
        return clip

    def image(self, reference: str) -> Image:
        clip = self._frames()
        if len(clip.frames) != 1:
            raise ToolError("this question has no single image to read; the tools read the video's frames")
        return Image(clip.frames[0], clip.source)


def bound_tools(
    names: Sequence[str], clip: Callable[[], Clip], results: MutableMapping[str, str] | None = None
) -> dict[str, Tool]:
    """Registry tools by name, offered without their media argument and run on the media `clip()` reads
    (once, at the first call that needs it); `results` memoises outputs by tool and arguments."""
    media = SampleMedia(clip)
    memo: MutableMapping[str, str] = {} if results is None else results

    def runner(name: str) -> Callable[[dict[str, Any]], str]:
        tool = registry().get(name)
        reference = {MEDIA_ARGUMENT[tool.media]: SAMPLE_MEDIA} if tool.media else {}

        def run(arguments: dict[str, Any]) -> str:
            key = f"{name}:{json.dumps(arguments, sort_keys=True)}"
            if key not in memo:  # two questions calling at once may both compute it: same output
                try:
                    memo[key] = json.dumps(registry().call(name, {**arguments, **reference}, media))
                except ToolError as exc:  # its message already names the tool
                    memo[key] = f"Error: {exc}"
            return memo[key]

        return run

    table: dict[str, Tool] = {}
    for name in names:
        tool = registry().get(name)
        spec = ToolSpec(name=name, description=tool.description, parameters=tool.schema(with_media=False))
        table[name] = (spec, runner(name))
    return table


def group_tools(names: Sequence[str], measurements: dict[str, Any]) -> dict[str, Tool]:
    """Registry tools on the clip and memo that `keep_clip` put in the group's measurements."""
    clip = measurements[CLIP]
    return bound_tools(names, lambda: clip, measurements[TOOL_RESULTS])


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


def clip_of(frames: Any, record: FrameRecord | None, source: str, period_s: float | None = None) -> Clip:
    """Decoded frames as a tool's clip: the record's times, else `period_s` apart when given."""
    times = list(record.timestamps_s) if record else []
    if len(times) != len(frames) and period_s is not None:
        times = [period_s * i for i in range(len(frames))]
    return Clip(frames, times, source)


def keep_clip(period_s: float | None = None) -> Callable[..., Any]:
    """Prelude node: the group's decoded frames as the clip the tools read (times from the frame record,
    else `period_s` apart) and an empty memo of tool results the group's questions share."""

    async def keep(state: GroupState) -> dict[str, Any]:
        record = state.get("frame_record")
        sample = state["samples"][0]
        source = (record.source if record else None) or sample.media.video_path or sample.group or ""
        clip = clip_of(state["frames"], record, source, period_s)
        return {"measurements": {CLIP: clip, TOOL_RESULTS: {}}}

    return keep


class AgentReply(NamedTuple):
    """The loop's outcome: the last response (usage summed) or None with the fields of an error
    prediction, and the trace (prompt, every call, the raw reply)."""

    response: GenerateResponse | None
    error: dict[str, Any]
    trace: list[dict[str, Any]]
    usage: Usage

    def fields(self, start: float) -> dict[str, Any]:
        """Trace, usage and latency of an answered prediction (its raw text is `response.text`)."""
        return {"trace": self.trace, "usage": self.usage, "latency_s": time.perf_counter() - start}


async def ask_agent(
    runtime: Runtime[GraphContext],
    request: GenerateRequest,
    tools: dict[str, Tool],
    max_rounds: int,
    *,
    prompt: str,
    n_images: int,
) -> AgentReply:
    """Ask with `tools` offered (up to `max_rounds` rounds of calls), tracing the prompt and the reply."""
    loop = await ask_with_tools(runtime, request, tools, max_rounds, node=NODE)
    trace = [{"node": NODE, "prompt": prompt, "n_images": n_images}, *loop.trace]
    if loop.response is not None:
        trace.append({"node": NODE, "raw": loop.response.text, "cached": loop.response.cached})
    return AgentReply(loop.response, loop.error, trace, loop.usage)


def failed(sample: Sample, reply: AgentReply, frames: FrameRecord | None) -> Prediction:
    """The prediction of a sample whose model call failed (status, error and usage so far)."""
    return prediction(sample, trace=reply.trace, frames=frames, **reply.error)
