"""AutoDriDM graphs: the paper's prompts (Figure 13), with the paper's analyzer, or with image cues.

A graph runs on one image: it is decoded and encoded once and every question on it (up to six tasks)
is asked in its own branch, with the single- or multi-select system prompt and the paper's user text.
Answers are read with kinegraph's (non-official) AutoDriDM parser.

`autodridm.explained` answers as the baseline does, then asks a second model, the `analyzer` role, to tag
the reasoning with the paper's error modes (`graphs.autodridm_analyzer`).

`autodridm.tools` (non-official) measures the image first (`tools.image_cues`: illumination from the
sky's luma, a lit traffic-light lamp from saturated signal hues) and writes the cues above the question:
whether deterministic perception cues carry through to the Scene and Decision levels is what it probes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import ContentPart, GenerateRequest, Message, TextPart
from kinegraph.benchmarks.autodridm.loader import SYSTEM_PROMPT_MULTI, SYSTEM_PROMPT_SINGLE, user_prompt
from kinegraph.evaluators.autodridm import parse_letters
from kinegraph.graphs.autodridm.analyzer import analyze_reasoning
from kinegraph.graphs.nodes import (
    ask,
    prediction,
)
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState
from kinegraph.types import Prediction, Sample, Status

MAX_NEW_TOKENS = 1024


async def measure_image_cues(state: GroupState) -> dict[str, Any]:
    """Illumination and lit-lamp cues of the group's image, as one text block."""
    from kinegraph.tools.image_cues import image_cues

    cues = await asyncio.to_thread(image_cues, state["frames"][0])
    block = (
        "Image measurements by deterministic tools: "
        f"illumination: {cues.illumination} (mean luma of the upper image {cues.sky_luma:.2f}); "
        f"lit traffic lamp: {cues.lamp} ({cues.lamp_pixels} px)."
    )
    return {"measurements": {"image_cues": block}}


def answer_question() -> Callable[..., Any]:
    """One question: system prompt by kind, image then the paper's user text (after any cue block)."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        return {"results": [await ask_question(state, runtime)]}

    return answer


def answer_and_analyze() -> Callable[..., Any]:
    """Answer the question, then have the analyzer tag the answer's reasoning (`autodridm_analyzer`)."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        answered = await ask_question(state, runtime)
        return {"results": [await analyze_reasoning(state, answered, runtime)]}

    return answer


def read_answer(raw: str, multi: bool) -> tuple[str | list[str] | None, Status]:
    """The parser's letters (all of them for a multi-select question, else the first) and the status."""
    letters = parse_letters(raw, multi)
    if not letters:
        return None, Status.parse_failure
    return (letters if multi else letters[0]), Status.ok


def question_request(
    sample: Sample, images: Sequence[ContentPart], text: str, turns: Sequence[Message] = ()
) -> GenerateRequest:
    """The paper's request: its system prompt (single or multi-select), any earlier `turns`, then the
    image(s) and `text`."""
    multi = bool(sample.metadata.get("multi_select"))
    return GenerateRequest(
        messages=[
            Message(role="system", content=SYSTEM_PROMPT_MULTI if multi else SYSTEM_PROMPT_SINGLE),
            *turns,
            Message(role="user", content=[*images, TextPart(text=text)]),
        ],
        max_tokens=MAX_NEW_TOKENS,
        metadata={"sample_id": sample.id},
    )


async def ask_question(state: QuestionState, runtime: Runtime[GraphContext]) -> Prediction:
    """The prediction for one question asked with the paper's prompts."""
    sample, start = state["sample"], time.perf_counter()
    multi = bool(sample.metadata.get("multi_select"))
    cues = state["measurements"].get("image_cues")
    text = user_prompt(sample) if cues is None else f"{cues}\n\n{user_prompt(sample)}"
    response, error = await ask(runtime, question_request(sample, state["images"], text))
    trace = [{"node": "answer_question", "prompt": text, "system": "multi" if multi else "single"}]
    if response is None:
        return prediction(sample, trace=trace, frames=state["frame_record"], **error)
    trace.append({"node": "answer_question", "raw": response.text, "cached": response.cached})
    answer, status = read_answer(response.text, multi)
    return prediction(
        sample,
        raw=response.text,
        answer=answer,
        status=status,
        trace=trace,
        frames=state["frame_record"],
        usage=response.usage,
        latency_s=time.perf_counter() - start,
    )


def _graph(with_cues: bool, max_side: int | None) -> CompiledStateGraph:
    prelude = [("measure_image_cues", measure_image_cues)] if with_cues else []
    return question_graph(answer_question(), max_side=max_side, prelude=prelude)


def build_baseline(max_side: int | None = None) -> CompiledStateGraph:
    """`autodridm.baseline`: the image and the paper's prompts."""
    return _graph(False, max_side)


def build_tools(max_side: int | None = None) -> CompiledStateGraph:
    """`autodridm.tools`: plus measured illumination and lit-lamp cues (non-official)."""
    return _graph(True, max_side)


def build_explained(max_side: int | None = None) -> CompiledStateGraph:
    """`autodridm.explained`: the baseline, then the `analyzer` role tags the reasoning with E1-E9."""
    return question_graph(answer_and_analyze(), answer_name="answer_and_analyze", max_side=max_side)
