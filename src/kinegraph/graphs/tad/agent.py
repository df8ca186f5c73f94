"""Non-official: `tad.agent`, upstream's baseline prompt with motion tools the model may call.

The model gets the question's keyframes, question and options as in `tad.baseline`, with one context
line saying it may call `ego_motion_map` (TCogMap on the sample's ego poses: the lines `tad.tcogmap` puts
in its prompt) and `camera_motion` (the registry's dense-flow camera motion on the question's keyframes).
The last reply goes through upstream's extractor, so answers are in TAD's official format.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message
from kinegraph.graphs.agent import ask_agent, bound_tools, check_rounds, failed, function_tool
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.tad import prompts
from kinegraph.graphs.tad.builders import _graph, finish_prediction, parse_answer, tcogmap_context
from kinegraph.graphs.tool_calls import MAX_TOOL_ROUNDS, Tool
from kinegraph.media import read_image
from kinegraph.tool_registry import Clip
from kinegraph.types import Sample

EGO_MOTION = "ego_motion_map"
TOOLS_LINE = (
    f"You may call the tools offered before answering: {EGO_MOTION} (the ego vehicle's motion from its "
    "recorded poses, per segment) and camera_motion (the camera's own motion measured from these frames)."
)
EGO_MOTION_DESCRIPTION = (
    "TCogMap's motion summary of the ego vehicle from its recorded poses: for a segment question one line, "
    "for a scene question one line per keysegment with its frame range (stopped, turning left or right, "
    "changing lane, starting, stopping, or driving straight at constant speed)."
)


def _keyframes(sample: Sample) -> Clip:
    """The question's keyframes as a clip (times from the sample, else 0.5 s apart as nuScenes keyframes)."""
    paths = sample.media.frame_paths
    if len(paths) < 2:
        raise ValueError("camera_motion needs at least 2 keyframes")
    frames = np.stack([read_image(p) for p in paths])
    times = sample.media.timestamps_s or [0.5 * i for i in range(len(paths))]
    return Clip(frames, list(times), "CAM_FRONT")


def _ego_motion(sample: Sample) -> str:
    lines = tcogmap_context(sample)
    return "\n".join(lines) if lines else "No motion summary: the poses cover no segment long enough."


def agent_tools(sample: Sample) -> dict[str, Tool]:
    """`ego_motion_map` on the sample's poses and the registry's `camera_motion` on its keyframes."""
    ego = function_tool(EGO_MOTION, EGO_MOTION_DESCRIPTION, lambda: _ego_motion(sample))
    return {EGO_MOTION: ego, **bound_tools(["camera_motion"], lambda: _keyframes(sample))}


def answer_agent(max_rounds: int, thinking: bool) -> Any:
    """One question: the baseline prompt with the tools line, tools offered, upstream's extraction."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        images = state["images"]
        text = prompts.question_prompt(sample, len(images), [TOOLS_LINE], thinking=thinking)
        request = GenerateRequest(
            messages=[Message(role="user", content=prompts.interleave(text, images))],
            max_tokens=prompts.MAX_NEW_TOKENS,
            metadata={"sample_id": sample.id},
        )
        reply = await ask_agent(
            runtime, request, agent_tools(sample), max_rounds, prompt=text, n_images=len(images)
        )
        if reply.response is None:
            return {"results": [failed(sample, reply, state.get("frame_record"))]}
        raw = reply.response.text
        parse = partial(parse_answer, sample, raw, False)
        result = finish_prediction(sample, state, raw, parse, **reply.fields(start))
        return {"results": [result]}

    return answer


def build_agent(
    thinking: bool = False, max_side: int | None = None, max_tool_rounds: int = MAX_TOOL_ROUNDS
) -> CompiledStateGraph:
    """`tad.agent`: keyframes + question with TCogMap on the ego poses and camera motion offered as tools
    for up to `max_tool_rounds` rounds, upstream's extraction."""
    return _graph(answer_agent(check_rounds(max_tool_rounds), thinking), frames=True, max_side=max_side)
