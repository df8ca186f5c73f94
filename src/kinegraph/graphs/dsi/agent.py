"""Non-official: `dsi.agent`, the official RAWQA prompt and frames with self-motion tools the model may call.

Each variant decodes its own video as in `dsi.baseline` (official 5 fps sampling, at most `max_frames`).
The prompt is RAWQA's with one line, between the instructions and the question, naming the tools: the
registry's `camera_motion` (dense optical flow of the whole image) and `ego_trajectory` (ground-plane
visual odometry), what `dsi.tools` writes into its prompt, here computed only when called. The last reply
goes through the official `<answer>X</answer>` extraction; unlike `dsi.baseline` there is no re-ask: an
unparsable last reply is a `parse_failure` and answers "E", as upstream scores a reply that never parsed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message, TextPart
from kinegraph.errors import DataError
from kinegraph.evaluators.dsi import FAILED_ANSWER, extract_answer
from kinegraph.graphs.agent import ask_agent, bound_tools, check_rounds, clip_of, failed
from kinegraph.graphs.dsi.builders import (
    MAX_FRAMES,
    MAX_NEW_TOKENS,
    decode_variant,
    prompt_text,
    variant_graph,
)
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.tool_calls import MAX_TOOL_ROUNDS
from kinegraph.types import Status

TOOLS = ("camera_motion", "ego_trajectory")
TOOLS_LINE = (
    f"You may call the tools offered before answering ({', '.join(TOOLS)}): they measure the camera's own "
    "motion from these frames."
)


def answer_agent(max_frames: int, max_rounds: int) -> Any:
    """Decode this variant's video, ask with the tools offered, read the official `<answer>` letter."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        runtime.context.stats.decodes += 1
        try:
            frames, record, images = await asyncio.to_thread(decode_variant, sample, max_frames)
        except (DataError, OSError, ValueError) as exc:
            return {"results": [prediction(sample, status=Status.input_error, error=str(exc))]}
        clip = clip_of(frames, record, sample.media.video_path or "")
        text = prompt_text(sample, TOOLS_LINE)
        request = GenerateRequest(
            messages=[Message(role="user", content=[*images, TextPart(text=text)])],
            temperature=0.0,
            max_tokens=MAX_NEW_TOKENS,
            metadata={"sample_id": sample.id},
        )
        tools = bound_tools(TOOLS, lambda: clip)
        reply = await ask_agent(runtime, request, tools, max_rounds, prompt=text, n_images=len(images))
        if reply.response is None:
            return {"results": [failed(sample, reply, record)]}
        raw = reply.response.text
        letter = extract_answer(raw)
        result = prediction(
            sample,
            raw=raw,
            answer=letter or FAILED_ANSWER,
            status=Status.ok if letter else Status.parse_failure,
            frames=record,
            **reply.fields(start),
        )
        return {"results": [result]}

    return answer


def build_agent(max_frames: int = MAX_FRAMES, max_tool_rounds: int = MAX_TOOL_ROUNDS) -> CompiledStateGraph:
    """`dsi.agent`: the video's frames and the RAWQA prompt with camera motion and ground-plane visual
    odometry offered as tools for up to `max_tool_rounds` rounds, the official extraction."""
    if max_frames < 2:
        raise ValueError(f"need max_frames >= 2, got {max_frames}")
    return variant_graph(answer_agent(max_frames, check_rounds(max_tool_rounds)))
