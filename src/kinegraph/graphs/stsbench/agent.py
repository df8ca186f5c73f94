"""Non-official: `stsbench.agent`, upstream's multiple-choice prompt with motion tools the model may call.

The model gets `stsbench.baseline`'s frames and prompt with one context line naming the tools:
`ego_motion_map` (TCogMap on the record's ego poses: the line `stsbench.tcogmap` puts in its prompt; an
agent-only record has none and says so) and the registry's `camera_motion` (dense-flow camera motion on
the scenario's keyframes, 0.5 s apart). The answer is the last reply's first character, as the official
scorer reads it. The turn that calls tools may need more than the letter's 16 tokens, so the agent asks
for up to `MAX_TOKENS`.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message
from kinegraph.graphs.agent import ask_agent, check_rounds, failed, function_tool, group_tools, keep_clip
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.stsbench.builders import ego_motion_context, first_character, prompt
from kinegraph.graphs.tad.agent import EGO_MOTION
from kinegraph.graphs.tad.prompts import interleave
from kinegraph.graphs.tool_calls import MAX_TOOL_ROUNDS, Tool
from kinegraph.types import Sample

MAX_TOKENS = 256
KEYFRAME_PERIOD_S = 0.5  # STSnu frames are 2 Hz keyframes
TOOLS_LINE = (
    f"You may call the tools offered before answering: {EGO_MOTION} (the ego vehicle's motion from its "
    "recorded poses) and camera_motion (the camera's own motion measured from these frames)."
)
EGO_MOTION_DESCRIPTION = (
    "TCogMap's one-line motion summary of the ego vehicle over the scenario, from its recorded poses "
    "(stopped, turning left or right, changing lane, starting, stopping, or driving straight at constant "
    "speed)."
)


def _ego_motion(sample: Sample) -> str:
    lines = ego_motion_context(sample)
    return lines[0] if lines else "No motion summary: this record has no ego poses (an agent scenario)."


def agent_tools(sample: Sample, measurements: dict[str, Any]) -> dict[str, Tool]:
    """`ego_motion_map` on the record's poses and the registry's `camera_motion` on its keyframes."""
    ego = function_tool(EGO_MOTION, EGO_MOTION_DESCRIPTION, lambda: _ego_motion(sample))
    return {EGO_MOTION: ego, **group_tools(["camera_motion"], measurements)}


def answer_agent(max_rounds: int) -> Any:
    """One question: upstream's prompt with the tools line, tools offered, the first character read."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        images = state["images"]
        text = prompt(sample, len(images), [TOOLS_LINE])
        request = GenerateRequest(
            messages=[Message(role="user", content=interleave(text, images))],
            max_tokens=MAX_TOKENS,
            metadata={"sample_id": sample.id},
        )
        tools = agent_tools(sample, state["measurements"])
        reply = await ask_agent(runtime, request, tools, max_rounds, prompt=text, n_images=len(images))
        if reply.response is None:
            return {"results": [failed(sample, reply, state["frame_record"])]}
        raw = reply.response.text
        answer, status = first_character(raw, sample)
        result = prediction(
            sample, raw=raw, answer=answer, status=status, frames=state["frame_record"], **reply.fields(start)
        )
        return {"results": [result]}

    return answer


def build_agent(max_side: int | None = None, max_tool_rounds: int = MAX_TOOL_ROUNDS) -> CompiledStateGraph:
    """`stsbench.agent`: the scenario's frames and upstream's prompt with TCogMap on the ego poses and
    camera motion offered as tools for up to `max_tool_rounds` rounds, the first character read."""
    return question_graph(
        answer_agent(check_rounds(max_tool_rounds)),
        answer_name="answer",
        max_side=max_side,
        prelude=[("keep_frames", keep_clip(KEYFRAME_PERIOD_S))],
    )
