"""Non-official: `quantiphy.agent`, the official v3 question and frames with measuring tools offered.

The model sees the prompt of `quantiphy.zero_shot` (system prompt, every frame, the prior and question)
with one paragraph saying it may call the pixel-scale calculator and the tracker on the video; both run
on the frames the graph decoded. Its last reply is read as upstream reads an answer (`parse_number`).
Unlike the zero-shot graph there is no re-ask on an unparsable reply: that is a parse failure.
"""

from __future__ import annotations

import math
import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message, TextPart
from kinegraph.evaluators.quantiphy import parse_number
from kinegraph.graphs.agent import CLIP, ask_agent, check_rounds, failed, group_tools, keep_clip
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.quantiphy import prompts
from kinegraph.graphs.quantiphy.builders import request_metadata
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.tool_calls import MAX_TOOL_ROUNDS
from kinegraph.types import Sample, Status

TOOLS = ("pixel_scale_calculator", "track_objects")


def agent_text(sample: Sample, frames: int, width: int, height: int, fps: float | None) -> str:
    """The v3 prompt with the tools paragraph between the question and the answer format."""
    rate = f" at {fps:g} frames per second" if fps else ""
    tools = (
        f"\n\nThe video has {frames} frames of {width}x{height} pixels{rate}. You may call the tools "
        f"offered ({', '.join(TOOLS)}) to measure it; boxes are [x0, y0, x1, y1] in pixels in the first "
        "frame. Then give your answer."
    )
    prefix = prompts.context_prefix(sample.context.get("ground_truth_prior"), prompts.depth_for(sample))
    return f"{prefix}{sample.question}{tools}{prompts.ZERO_SHOT_SUFFIX}"


def answer_agent(max_rounds: int) -> Any:
    """One question: ask with the frames and the tools, then parse the last reply as a number."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        record, measurements = state["frame_record"], state["measurements"]
        frames = measurements[CLIP].frames
        height, width = frames.shape[1:3]
        fps = sample.context.get("fps")
        text = agent_text(sample, len(frames), width, height, float(fps) if fps else None)
        request = GenerateRequest(
            messages=[
                Message(role="system", content=prompts.SYSTEM_PROMPT),
                Message(role="user", content=[*state["images"], TextPart(text=text)]),
            ],
            temperature=0.0,
            metadata=request_metadata(sample),
        )
        tools = group_tools(TOOLS, measurements)
        reply = await ask_agent(
            runtime, request, tools, max_rounds, prompt=text, n_images=len(state["images"])
        )
        if reply.response is None:
            return {"results": [failed(sample, reply, record)]}
        raw = reply.response.text
        value = parse_number(raw)
        fields = {**reply.fields(start), "raw": raw, "frames": record}
        if math.isnan(value):
            return {"results": [prediction(sample, status=Status.parse_failure, **fields)]}
        return {"results": [prediction(sample, answer=value, **fields)]}

    return answer


def build_agent(
    max_frames: int | None = None, max_side: int | None = None, max_tool_rounds: int = MAX_TOOL_ROUNDS
) -> CompiledStateGraph:
    """`quantiphy.agent`: the v3 question with every frame (or `max_frames`), the pixel-scale calculator
    and the tracker offered as tools for up to `max_tool_rounds` rounds."""
    return question_graph(
        answer_agent(check_rounds(max_tool_rounds)),
        answer_name="answer",
        num_frames=max_frames,
        max_side=max_side,
        prelude=[("keep_frames", keep_clip())],
    )
