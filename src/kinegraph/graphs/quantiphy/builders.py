"""QuantiPhy graphs: the official zero-shot prompts (v3, prior-only v1, counterfactual v2) and CoT.

A graph runs on one video: frames are decoded and encoded once, then each question is answered in its
own branch. Upstream sends every frame; `max_frames` samples evenly instead, `fps` that many frames a
second (both recorded in the prediction). A model that takes video natively (`video=native`) gets the
video file whole, asked to sample it at the rate chosen (the paper's native-video models).
As upstream, a question is asked again (up to 5 attempts) while the answer does not parse as a number.
The counterfactual graph is scored on the row's `alt_posterior` (alpha * y, paper Sec 5.2), and the CoT
graph builds the paper's sub-questions for rows that carry none (`quantiphy_cot`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, ImagePart, Message, TextPart, VideoPart
from kinegraph.errors import DataError
from kinegraph.evaluators.quantiphy import parse_number
from kinegraph.graphs.nodes import (
    ask,
    prediction,
)
from kinegraph.graphs.quantiphy import prompts
from kinegraph.graphs.quantiphy.cot import COT_COLUMNS, template_sub_questions
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.types import Prediction, Sample, Status, Usage

MAX_ATTEMPTS = 5  # upstream MAX_RETRIES = 4 re-asks after the first
#: What `quantiphy.counterfactual` reads of every row: the scaled prior and the truth it is scored on.
COUNTERFACTUAL_COLUMNS = ("alt_prior", "alt_posterior")


def request_metadata(sample: Sample) -> dict[str, Any]:
    """What the replay provider looks answers up by (never sent to the model, not in the cache key)."""
    return {"sample_id": sample.id, "question_id": sample.question_id, "clip_id": sample.group}


def _request(
    text: str, images: list[ImagePart | VideoPart], attempt: int, metadata: dict[str, Any]
) -> GenerateRequest:
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
    images: list[ImagePart | VideoPart],
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


def answer_zero_shot(with_frames: bool) -> Callable[..., Any]:
    """Zero-shot with the true `ground_truth_prior`: v3 (with frames) or v1 (no frames)."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        text = prompts.zero_shot_text(sample, sample.context.get("ground_truth_prior"))
        images = state["images"] if with_frames else []
        value, raw, usage, error = await ask_number(runtime, text, images, sample)
        trace = [{"node": "answer_zero_shot", "prompt": text, "n_images": len(images), "raw": raw}]
        return {"results": [_result(sample, value, raw, usage, error, trace, state, start)]}

    return answer


def counterfactual_inputs(sample: Sample) -> tuple[Any, float]:
    """The row's `alt_prior` and the `alt_posterior` it is scored on; a DataError names what is missing."""
    row = f"question {sample.question_id}"
    for column in COUNTERFACTUAL_COLUMNS:
        if column not in sample.context:
            raise DataError(
                f"column missing ({row}): the counterfactual needs alt_prior and alt_posterior", field=column
            )
    prior, posterior = sample.context["alt_prior"], sample.context["alt_posterior"]
    if not prompts._present(prior):
        raise DataError(f"empty ({row})", field="alt_prior")
    try:
        truth = float(posterior)
    except (TypeError, ValueError):
        truth = math.nan
    if not math.isfinite(truth):
        raise DataError(f"not a number: {posterior!r} ({row})", field="alt_posterior")
    return prior, truth


async def answer_counterfactual(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """v2: the row's scaled `alt_prior` replaces the true prior; the answer is scored on `alt_posterior`.

    Upstream's runner falls back to `ground_truth_prior` when the column is absent and its evaluator
    scores every row on `ground_truth_posterior`; the paper scores y_cf = alpha * y, as done here, and a
    row without its counterfactual prior or truth is an input error, never a silent v3 question.
    """
    sample, start = state["sample"], time.perf_counter()
    try:
        prior, truth = counterfactual_inputs(sample)
    except DataError as exc:
        return {"results": [prediction(sample, status=Status.input_error, error=str(exc))]}
    text = prompts.zero_shot_text(sample, prior)
    images = state["images"]
    value, raw, usage, error = await ask_number(runtime, text, images, sample)
    factor = sample.context.get("counterfactual_factor")
    trace = [
        {
            "node": "answer_counterfactual",
            "prompt": text,
            "n_images": len(images),
            "raw": raw,
            "prior_used": "alt_prior",
            "counterfactual_factor": factor,
        }
    ]
    result = _result(sample, value, raw, usage, error, trace, state, start)
    metadata = {**result.metadata, "prior_used": "alt_prior", "counterfactual_factor": factor}
    return {"results": [result.model_copy(update={"ground_truth": truth, "metadata": metadata})]}


def _sub_questions(sample: Sample, trace: list[dict]) -> list[tuple[str, str]]:
    """The row's cot_q1..3, or the paper's templates (recorded in `trace`) when the row has none."""
    given = [(k, str(sample.context[k])) for k in COT_COLUMNS if prompts._present(sample.context.get(k))]
    if given:
        return given
    built = template_sub_questions(str(sample.context.get("ground_truth_prior")), sample.question)
    trace.append({"node": "answer_with_cot", "step": "sub_questions", "built_from": "paper templates"})
    return list(zip(COT_COLUMNS, built, strict=True))


async def answer_with_cot(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Ask the three sub-questions in turn (only valid numeric answers carry forward), then the question.

    The sub-questions are the row's `cot_q1..3`; a row without any (the released validation CSV has no
    such columns) gets them built from the paper's templates, and its trace says so.
    """
    sample, start = state["sample"], time.perf_counter()
    images, usage, context, trace = state["images"], Usage(), "", []
    try:
        steps = _sub_questions(sample, trace)
    except DataError as exc:
        error = f"cannot build the CoT sub-questions for question {sample.question_id}: {exc}"
        return {"results": [prediction(sample, status=Status.input_error, error=error)]}
    for i, (key, question) in enumerate(steps, start=1):
        text = prompts.cot_step_text(question, context.strip())
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
    answer: Callable[..., Any],
    *,
    frames: bool,
    max_frames: int | None,
    max_side: int | None,
    fps: float | None = None,
) -> CompiledStateGraph:
    if max_frames is not None and fps is not None:
        raise ValueError("sample frames by max_frames or by fps, not both")
    return question_graph(
        answer,
        answer_name="answer",
        num_frames=max_frames,
        max_side=max_side,
        frames=frames,
        fps=fps,
        whole_video=frames,
    )


def build_zero_shot(
    max_frames: int | None = None, max_side: int | None = None, fps: float | None = None
) -> CompiledStateGraph:
    """`quantiphy.zero_shot`: the official v3 prompt with the video's frames (all of them by default)."""
    return _graph(answer_zero_shot(True), frames=True, max_frames=max_frames, max_side=max_side, fps=fps)


def build_prior_only() -> CompiledStateGraph:
    """`quantiphy.prior_only`: v1, the same prompt without frames (the paper's video ablation)."""
    return _graph(answer_zero_shot(False), frames=False, max_frames=None, max_side=None)


def build_counterfactual(
    max_frames: int | None = None, max_side: int | None = None, fps: float | None = None
) -> CompiledStateGraph:
    """`quantiphy.counterfactual`: v2, frames with the scaled `alt_prior`, scored on `alt_posterior`."""
    return _graph(answer_counterfactual, frames=True, max_frames=max_frames, max_side=max_side, fps=fps)


def build_cot(
    max_frames: int | None = None, max_side: int | None = None, fps: float | None = None
) -> CompiledStateGraph:
    """`quantiphy.cot`: the three structured sub-questions (the row's, or the paper's templates), then
    the main question."""
    return _graph(answer_with_cot, frames=True, max_frames=max_frames, max_side=max_side, fps=fps)
