"""Non-official: `autodridm.agent`, the paper's prompts and image with the image-cue tool the model may call.

The model gets `autodridm.baseline`'s request (the single- or multi-select system prompt, the image, the
paper's user text) with one line above the question naming the tool: the registry's `image_cues`
(illumination and a lit traffic-light lamp), what `autodridm.tools` writes into its prompt, here computed
only when called, once per image. The last reply is read with the suite's AutoDriDM parser.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.benchmarks.autodridm.loader import user_prompt
from kinegraph.graphs.agent import ask_agent, check_rounds, failed, group_tools, keep_clip
from kinegraph.graphs.autodridm.builders import question_request, read_answer
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.tool_calls import MAX_TOOL_ROUNDS

TOOLS = ("image_cues",)
TOOLS_LINE = "You may call the tool offered before answering (image_cues): it measures cues of this image."


def answer_agent(max_rounds: int) -> Any:
    """One question: the paper's prompts with the tools line, `image_cues` offered, the suite's parser."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        multi = bool(sample.metadata.get("multi_select"))
        text = f"{TOOLS_LINE}\n\n{user_prompt(sample)}"
        request = question_request(sample, state["images"], text)
        tools = group_tools(TOOLS, state["measurements"])
        reply = await ask_agent(
            runtime, request, tools, max_rounds, prompt=text, n_images=len(state["images"])
        )
        if reply.response is None:
            return {"results": [failed(sample, reply, state["frame_record"])]}
        raw = reply.response.text
        answer, status = read_answer(raw, multi)
        result = prediction(
            sample, raw=raw, answer=answer, status=status, frames=state["frame_record"], **reply.fields(start)
        )
        return {"results": [result]}

    return answer


def build_agent(max_side: int | None = None, max_tool_rounds: int = MAX_TOOL_ROUNDS) -> CompiledStateGraph:
    """`autodridm.agent`: the image and the paper's prompts with `image_cues` offered as a tool for up to
    `max_tool_rounds` rounds, the suite's parser."""
    return question_graph(
        answer_agent(check_rounds(max_tool_rounds)),
        answer_name="answer",
        max_side=max_side,
        prelude=[("keep_frames", keep_clip())],
    )
