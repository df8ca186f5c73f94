"""Non-official: `egodyn.agent`, upstream's question and frames with the registry's ego-motion tools offered.

The model gets `egodyn.vision`'s prompt (context line, the question and its choices, the clip's frames)
with one line naming the tools; it may call the registry's `visual_odometry`, `optical_flow` and
`ego_trajectory` (ground-plane visual odometry in metres and seconds), which run on the frames the graph
decoded, once per clip and arguments. Its last reply goes through the official parser.

Unlike `egodyn.tool_calls`, which measures its probes before asking and lets a call reveal the text
`egodyn.tools` injects, the tools here are the registry's (the ones `kinegraph mcp` serves), computed only
when called, and answer in JSON.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.graphs.agent import ask_agent, check_rounds, failed, group_tools, keep_clip
from kinegraph.graphs.egodyn import prompts
from kinegraph.graphs.egodyn.builders import finish_prediction, question_request
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.tool_calls import MAX_TOOL_ROUNDS

TOOLS = ("visual_odometry", "optical_flow", "ego_trajectory")
TOOLS_LINE = (
    f"You may call the tools offered before answering ({', '.join(TOOLS)}): they measure the ego "
    "vehicle's motion from these frames."
)


def answer_agent(max_rounds: int) -> Any:
    """One question: upstream's prompt with the tools line, registry tools offered, official parser."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        n_images = len(state["images"])
        text = prompts.single_prompt(sample.question, sample.options, n_images, [TOOLS_LINE])
        tools = group_tools(TOOLS, state["measurements"])
        reply = await ask_agent(
            runtime, question_request(text, state, sample), tools, max_rounds, prompt=text, n_images=n_images
        )
        if reply.response is None:
            return {"results": [failed(sample, reply, state["frame_record"])]}
        raw = reply.response.text
        return {"results": [finish_prediction(sample, raw, state, reply.response, start, reply.trace)]}

    return answer


def build_agent(
    num_frames: int = 10, max_side: int | None = None, max_tool_rounds: int = MAX_TOOL_ROUNDS
) -> CompiledStateGraph:
    """`egodyn.agent`: frames + question with the registry's visual odometry, optical flow and ego
    trajectory offered as tools for up to `max_tool_rounds` rounds, the official parser."""
    return question_graph(
        answer_agent(check_rounds(max_tool_rounds)),
        answer_name="answer",
        num_frames=num_frames,
        max_side=max_side,
        prelude=[("keep_frames", keep_clip())],
    )
