"""QuantiPhy graphs: the official zero-shot prompts (v3, prior-only v1, counterfactual v2) and CoT.

A graph runs on one video: frames are decoded and encoded once, then each question is answered in its
own branch. Upstream sends every frame; `max_frames` samples evenly instead (recorded in the prediction).
As upstream, a question is asked again (up to 5 attempts) while the answer does not parse as a number.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, ImagePart, Message, TextPart
from kinegraph.evaluators.quantiphy import parse_number
from kinegraph.graphs import quantiphy_prompts as prompts
from kinegraph.graphs.nodes import (
    ask,
    prediction,
)
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.types import Prediction, Sample, Status, Usage

MAX_ATTEMPTS = 5  # upstream MAX_RETRIES = 4 re-asks after the first


def request_metadata(sample: Sample) -> dict[str, Any]:
    """What the replay provider looks answers up by (never sent to the model, not in the cache key)."""
    return {"sample_id": sample.id, "question_id": sample.question_id, "clip_id": sample.group}


def _request(text: str, images: list[ImagePart], attempt: int, metadata: dict[str, Any]) -> GenerateRequest:
    # Upstream order: every frame first, then the text. Re-asks sample (temperature 1, the providers'
    # default upstream relied on) so that a repeated question can come back different.
    content = [*images, TextPart(text=text)]
    return GenerateRequest(
        messages=[
            Message(role="system", content=prompts.SYSTEM_PROMPT),
            Message(role="user", content=content),
        ],
        temperature=0.0 if attempt == 0 else 1.0,
        attempt=attempt,
        metadata=metadata,
    )


async def ask_number(
    runtime: Runtime[GraphContext],
    text: str,
    images: list[ImagePart],
    sample: Sample,
    attempts: int = MAX_ATTEMPTS,
) -> tuple[float, str | None, Usage, dict[str, Any] | None]:
    """Ask until the reply parses as a number: (value or NaN, last raw text, usage, error fields)."""
    usage, raw = Usage(), None
    for attempt in range(attempts):
        response, error = await ask(runtime, _request(text, images, attempt, request_metadata(sample)))
        if response is None:
            return math.nan, raw, usage, error
        usage, raw = usage + response.usage, response.text
        value = parse_number(response.text)
        if not math.isnan(value):
            return value, raw, usage, None
    return math.nan, raw, usage, None


def _result(
    sample: Sample,
    value: float,
    raw: str | None,
    usage: Usage,
    error: dict | None,
    trace: list[dict],
    state: QuestionState,
    start: float,
) -> Prediction:
    fields: dict[str, Any] = {
        "raw": raw,
        "usage": usage,
        "trace": trace,
        "frames": state.get("frame_record"),
        "latency_s": time.perf_counter() - start,
    }
    if error:
        return prediction(sample, **{**fields, **error})
    if math.isnan(value):
        return prediction(sample, status=Status.parse_failure, **fields)
    return prediction(sample, answer=value, **fields)


def answer_zero_shot(prior_field: str, with_frames: bool) -> Callable[..., Any]:
    """Zero-shot: v3 (`ground_truth_prior` + frames), v1 (no frames), v2 (`alt_prior`)."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        prior = sample.context.get(prior_field)
        if prior_field == "alt_prior" and not prompts._present(prior):
            prior = sample.context.get("ground_truth_prior")  # upstream falls back the same way
        text = prompts.zero_shot_text(sample, prior)
        images = state["images"] if with_frames else []
        value, raw, usage, error = await ask_number(runtime, text, images, sample)
        trace = [{"node": "answer_zero_shot", "prompt": text, "n_images": len(images), "raw": raw}]
        return {"results": [_result(sample, value, raw, usage, error, trace, state, start)]}

    return answer


async def answer_with_cot(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Ask cot_q1..3 in turn (only valid numeric answers carry forward), then the main question."""
    sample, start = state["sample"], time.perf_counter()
    images, usage, context, trace = state["images"], Usage(), "", []
    for i, key in enumerate(("cot_q1", "cot_q2", "cot_q3"), start=1):
        question = sample.context.get(key)
        if not prompts._present(question):
            continue
        text = prompts.cot_step_text(str(question), context.strip())
        value, raw, step_usage, error = await ask_number(runtime, text, images, sample)
        usage = usage + step_usage
        trace.append({"node": "answer_with_cot", "step": key, "prompt": text, "raw": raw, "value": value})
        if error:
            return {"results": [_result(sample, math.nan, raw, usage, error, trace, state, start)]}
        if not math.isnan(value):
            context += f"Question {i}: {question}\nAnswer {i}: {value}\n\n"
    text = prompts.cot_final_text(sample, context)
    value, raw, final_usage, error = await ask_number(runtime, text, images, sample)
    trace.append({"node": "answer_with_cot", "step": "final", "prompt": text, "raw": raw})
    return {"results": [_result(sample, value, raw, usage + final_usage, error, trace, state, start)]}


def _graph(
    answer: Callable[..., Any], *, frames: bool, max_frames: int | None, max_side: int | None
) -> CompiledStateGraph:
    return question_graph(
        answer, answer_name="answer", num_frames=max_frames, max_side=max_side, frames=frames
    )


def build_zero_shot(max_frames: int | None = None, max_side: int | None = None) -> CompiledStateGraph:
    """`quantiphy.zero_shot`: the official v3 prompt with the video's frames (all of them by default)."""
    return _graph(
        answer_zero_shot("ground_truth_prior", True), frames=True, max_frames=max_frames, max_side=max_side
    )


def build_prior_only() -> CompiledStateGraph:
    """`quantiphy.prior_only`: v1, the same prompt without frames (the paper's video ablation)."""
    return _graph(answer_zero_shot("ground_truth_prior", False), frames=False, max_frames=None, max_side=None)


def build_counterfactual(max_frames: int | None = None, max_side: int | None = None) -> CompiledStateGraph:
    """`quantiphy.counterfactual`: v2, frames with the scaled `alt_prior` instead of the true prior."""
    return _graph(answer_zero_shot("alt_prior", True), frames=True, max_frames=max_frames, max_side=max_side)


def build_cot(max_frames: int | None = None, max_side: int | None = None) -> CompiledStateGraph:
    """`quantiphy.cot`: the three structured sub-questions, then the main question."""
    return _graph(answer_with_cot, frames=True, max_frames=max_frames, max_side=max_side)
