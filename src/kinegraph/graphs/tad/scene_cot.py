"""Scene-CoT (TAD paper Sec 4.1): a captioner VLM describes each keysegment, an answerer LLM answers.

Each keysegment a question needs is captioned once with four chained turns (one `Send` per keysegment,
the sampled frames on the first turn only); then every question goes to the answering model with its
captions: a segment question its own keysegment's, a scene question all of them, as upstream.

The two steps are two model roles: `captioner` (the VLM) and `answerer` (the paper's
Qwen2.5-14B-Instruct-1M). Each defaults to the run's `--model`; `--role answerer=PROVIDER:MODEL` puts
the answering step on its own model, as in the paper. The trace names the model of each step, and the
prediction's usage is split by role (the captioning cost counted once, on the first question that reads
each caption).

`SceneCotRecipe` is what a benchmark supplies (its keysegments, prompt and extractor): TAD's is here,
STSBench's in `graphs.stsbench`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from kinegraph.agents.protocol import GenerateRequest, Message
from kinegraph.evaluators.tad_answers import (
    extract_exact_scene_cot,
    extract_letter_scene_cot,
    parse_localization,
)
from kinegraph.graphs.nodes import ask, model_of, prediction, record_group_error, usage_of
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.tad import prompts
from kinegraph.graphs.tad.builders import (
    NO_FRAMES,
    SceneState,
    finish_prediction,
    frame_record,
    load_scene_frames,
)
from kinegraph.graphs.tad.detections import Detections, detection_context, load_detections
from kinegraph.tools import tcogmap
from kinegraph.types import Prediction, Sample, Usage

CAPTIONER = "captioner"
ANSWERER = "answerer"

#: A prediction from the answerer's text: (sample, question state, raw text, fields to set on it).
Finish = Callable[[Sample, QuestionState, str, dict[str, Any]], Prediction]


@dataclass(frozen=True)
class SceneCotRecipe:
    """What a benchmark gives Scene-CoT: `segments(samples, k)`, the keysegments to caption as
    (1-based position, up to k sampled frame paths); `positions(sample, captions)`, the captions a
    question reads; `prompt(sample, blocks)`, the answerer's text; `finish`, the prediction."""

    segments: Callable[[list[Sample], int], list[tuple[int, list[str]]]]
    positions: Callable[[Sample, dict[str, dict]], list[int]]
    prompt: Callable[[Sample, list[str]], str]
    finish: Finish


def sampled_tokens(tokens: list[str], k: int) -> list[str]:
    """Upstream `sample_frames`: all when <= k, else `np.linspace(0, n - 1, k, dtype=int)`."""
    if len(tokens) <= k:
        return tokens
    return [tokens[i] for i in np.linspace(0, len(tokens) - 1, k, dtype=int)]


def fan_out_segments(
    recipe: SceneCotRecipe, frames_per_segment: int, detections: Detections | None = None
) -> Callable[[SceneState], Any]:
    """One `Send` per keysegment to caption, with its sampled frames (and, with `detections`, their
    object counts for the first step; a keyframe the counts miss fails the scene, never asks without)."""

    def route(state: SceneState) -> Any:
        if state.get("error"):
            return "record_group_error"
        by_path = state.get("image_by_path", {})
        token_of = {
            p: t
            for s in state["samples"]
            for t, p in zip(s.context.get("frame_tokens") or [], s.media.frame_paths, strict=False)
        }
        sends = []
        for position, paths in recipe.segments(state["samples"], frames_per_segment):
            payload: dict[str, Any] = {
                "position": position,
                "images": [by_path[p] for p in paths if p in by_path],
            }
            if detections is not None:
                try:
                    payload["detections"] = detection_context([token_of[p] for p in paths], detections)
                except KeyError as exc:
                    from kinegraph.errors import DataError

                    raise DataError(f"scene {state['samples'][0].group}: {exc.args[0]}") from None
            sends.append(Send("caption_segment", payload))
        return sends or "captions_done"

    return route


async def caption_segment(payload: dict[str, Any], runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """The captioner's four chained turns for one keysegment (images on the first turn only)."""
    position, images = payload["position"], payload["images"]
    messages: list[Message] = []
    outputs: list[str] = []
    responses = []
    first = prompts.cot_step1(len(images))
    if payload.get("detections"):  # TAD Table 11: context for the first step (kinegraph's wording)
        first = f"{first}\n\n{payload['detections']}"
    steps = [
        lambda: first,
        lambda: prompts.cot_step2(outputs[0]),
        lambda: prompts.cot_step3(outputs[0], outputs[1]),
        lambda: prompts.cot_step4(outputs[1], outputs[2], tcogmap.PHRASES),
    ]
    model = model_of(runtime, CAPTIONER)
    for i, step in enumerate(steps):
        text = step()
        content = prompts.interleave(text, images) if i == 0 else text
        messages.append(Message(role="user", content=content))
        request = GenerateRequest(messages=list(messages), temperature=0.0, max_tokens=prompts.MAX_NEW_TOKENS)
        response, error = await ask(runtime, request, CAPTIONER)
        if response is None:  # upstream stores an error caption and goes on
            entry = {
                "caption": f"ERROR: {error.get('error')}",
                "step1": None,
                "model": model,
                "usage": usage_of(responses),
            }
            return {"captions": {str(position): entry}}
        responses.append(response)
        outputs.append(response.text.strip())
        messages.append(Message(role="assistant", content=outputs[-1]))
    try:
        caption = prompts.cot_caption(outputs[3], position)
    except ValueError as exc:
        caption = f"ERROR: {exc}"
    entry = {
        "caption": caption,
        "step1": outputs[0],
        "steps": outputs,
        "model": model,
        "usage": usage_of(responses),
    }
    return {"captions": {str(position): entry}}


async def captions_done(state: SceneState) -> dict[str, Any]:
    """Join point after every keysegment is captioned."""
    return {}


def answer_from_captions(recipe: SceneCotRecipe, caption_style: str = "both") -> Callable[..., Any]:
    """The answerer over the captions a question reads (`recipe.positions`), each in `caption_style`."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        captions = state["measurements"].get("captions", {})
        positions = recipe.positions(sample, captions)
        blocks = [
            prompts.cot_caption_block(
                p, captions[str(p)].get("step1"), captions[str(p)]["caption"], caption_style
            )
            for p in positions
        ]
        text = recipe.prompt(sample, blocks)
        request = GenerateRequest(
            messages=[
                Message(role="system", content=prompts.LLM_SYSTEM),
                Message(role="user", content=text),
            ],
            temperature=0.0,
            max_tokens=prompts.LLM_MAX_NEW_TOKENS,
            metadata={"sample_id": sample.id},
        )
        response, error = await ask(runtime, request, ANSWERER)
        captioners = sorted({str(captions[str(p)].get("model")) for p in positions})
        trace: list[dict[str, Any]] = [
            {
                "node": "answer_from_captions",
                "prompt": text,
                "keysegments": positions,
                "captioner": captioners,
            }
        ]
        captioning = state["measurements"].get("caption_usage", {}).get(sample.id, Usage())
        if response is None:
            usage = {"usage": captioning, "usage_by_role": {CAPTIONER: captioning}}
            return {"results": [prediction(sample, trace=trace, **usage, **error)]}
        trace.append(
            {
                "node": "answer_from_captions",
                "role": ANSWERER,
                "model": model_of(runtime, ANSWERER),
                "raw": response.text,
                "cached": response.cached,
            }
        )
        fields = {
            "trace": trace,
            "usage": response.usage + captioning,
            "usage_by_role": {CAPTIONER: captioning, ANSWERER: response.usage},
            "latency_s": time.perf_counter() - start,
        }
        return {"results": [recipe.finish(sample, state, response.text, fields)]}

    return answer


def _caption_usage(
    sample: Sample, samples: list[Sample], captions: dict[str, dict], recipe: SceneCotRecipe
) -> Usage:
    """Captioning cost, counted once: on the first question of the scene that reads each caption."""
    total = Usage()
    for position in recipe.positions(sample, captions):
        owner = next(s for s in samples if position in recipe.positions(s, captions))
        if owner.id == sample.id:
            total = total + Usage.model_validate(captions[str(position)]["usage"])
    return total


def fan_out_to_answers(recipe: SceneCotRecipe) -> Callable[[SceneState], list[Send]]:
    """Questions to the answerer, each with the captions and its share of the captioning cost."""

    def route(state: SceneState) -> list[Send]:
        samples, captions = state["samples"], state.get("captions", {})
        costs = {s.id: _caption_usage(s, samples, captions, recipe) for s in samples}
        return [
            Send(
                "answer_from_captions",
                QuestionState(
                    sample=s,
                    images=[],
                    frame_record=frame_record(s) if s.media.frame_paths else None,
                    measurements={"captions": captions, "caption_usage": costs},
                ),
            )
            for s in samples
        ]

    return route


def scene_cot_graph(
    recipe: SceneCotRecipe,
    frames_per_segment: int,
    max_side: int | None,
    no_frames: str,
    caption_style: str = "both",
    detections: Detections | None = None,
) -> CompiledStateGraph:
    """Load the frames once, caption the keysegments, then answer every question from the captions."""
    graph = StateGraph(SceneState, context_schema=GraphContext)
    graph.add_node("load_scene_frames", load_scene_frames(max_side, no_frames))
    graph.add_node("caption_segment", caption_segment)
    graph.add_node("captions_done", captions_done)
    graph.add_node("answer_from_captions", answer_from_captions(recipe, caption_style))
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "load_scene_frames")
    graph.add_conditional_edges(
        "load_scene_frames",
        fan_out_segments(recipe, frames_per_segment, detections),
        ["caption_segment", "captions_done", "record_group_error"],
    )
    graph.add_edge("caption_segment", "captions_done")
    graph.add_conditional_edges("captions_done", fan_out_to_answers(recipe), ["answer_from_captions"])
    graph.add_edge("answer_from_captions", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


# --- TAD ----------------------------------------------------------------------------------------------------


def segment_position(sample: Sample) -> int | None:
    """0-based position of a segment question's keysegment in the scene (upstream `keysegments.index`)."""
    for k, segment in enumerate(sample.context.get("keyframes_token_formatted") or []):
        if segment.get("segment_key") == sample.context.get("sample_token"):
            return k
    return None


def _needed_segments(samples: list[Sample]) -> set[int]:
    """Every keysegment when the scene has a scene question; otherwise only the questions' own."""
    n = len(samples[0].context.get("keyframes_token_formatted") or [])
    if any(s.metadata["level"] == "scene" for s in samples):
        return set(range(n))
    return {k for s in samples if (k := segment_position(s)) is not None}


def tad_segments(samples: list[Sample], frames_per_segment: int) -> list[tuple[int, list[str]]]:
    """The keysegments the scene's questions need, each with its sampled keyframes (tokens -> paths)."""
    path_of = {
        t: p
        for s in samples
        for t, p in zip(s.context.get("frame_tokens") or [], s.media.frame_paths, strict=False)
    }
    segments = samples[0].context.get("keyframes_token_formatted") or []
    out = []
    for k in sorted(_needed_segments(samples)):
        tokens = sampled_tokens(list(segments[k].get("frames") or []), frames_per_segment)
        out.append((k + 1, [path_of[t] for t in tokens if t in path_of]))
    return out


def tad_positions(sample: Sample, captions: dict[str, dict]) -> list[int]:
    """A segment question reads its own keysegment's caption, a scene question every caption."""
    if sample.metadata["level"] == "segment":
        k = segment_position(sample)
        return [k + 1] if k is not None and str(k + 1) in captions else []
    return sorted(int(p) for p in captions)


def parse_scene_cot(sample: Sample, raw: str) -> str | list[str]:
    """Scene-CoT extraction: letters and exact text from `<answer>`; keysegment positions (1-based)."""
    if sample.metadata.get("answer_kind") == "localization":
        return [
            str(v) for v in parse_localization(raw, sample.context, full_frames=False, strip_answer_tags=True)
        ]
    if sample.options:
        return extract_letter_scene_cot(raw, sample.options)
    return extract_exact_scene_cot(raw)


def tad_finish(sample: Sample, state: QuestionState, raw: str, fields: dict[str, Any]) -> Prediction:
    return finish_prediction(sample, state, raw, lambda: parse_scene_cot(sample, raw), **fields)


TAD = SceneCotRecipe(
    segments=tad_segments, positions=tad_positions, prompt=prompts.cot_answer_prompt, finish=tad_finish
)


def build_scene_cot(
    frames_per_segment: int = 4,
    max_side: int | None = None,
    caption_style: Literal["both", "scene", "summary"] = "both",
    detections: str | None = None,
) -> CompiledStateGraph:
    """`tad.scene_cot`: caption each keysegment (4 chained VLM turns, 4 frames), then answer from captions;
    `caption_style` is Table 10's description style (`both`, upstream's, by default); `detections`, a
    JSON file of object counts per keyframe (`graphs.tad_detections`), is Table 11's detector context
    (non-official wording; the file is checked here, before any run)."""
    counts = None if detections is None else load_detections(detections)
    return scene_cot_graph(TAD, frames_per_segment, max_side, NO_FRAMES, caption_style, counts)
