"""TAD graphs: upstream's baseline (frames, blind), TCogMap, the raw ego-pose ablation (+EP) and Scene-CoT.

A graph runs on one scene: every keyframe is read and encoded once, then each question gets its own
frames (segment questions their keysegment's, scene questions the whole scene, as upstream). Segment
and scene questions use upstream's segment and scene prompt variants; answers go through upstream's
extractors (`evaluators.tad_answers`). Scene-CoT captions each keysegment with four chained VLM turns
(one `Send` per keysegment), then answers every question from the captions alone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Annotated, Any

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from kinegraph.agents.protocol import GenerateRequest, ImagePart, Message, TextPart
from kinegraph.errors import DataError
from kinegraph.evaluators.tad_answers import (
    NOT_AVAILABLE,
    extract_exact_scene_cot,
    extract_letter,
    extract_letter_scene_cot,
    parse_localization,
    split_thinking,
)
from kinegraph.graphs import tad_prompts as prompts
from kinegraph.graphs.nodes import ask, prediction, record_group_error, usage_of
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState, merge_dicts
from kinegraph.media import read_image
from kinegraph.tools import tcogmap
from kinegraph.types import FrameRecord, Prediction, Sample, Status, Usage

ContextFn = Callable[[Sample], list[str]]


class SceneState(GroupState, total=False):
    """A TAD scene: its questions, each keyframe encoded once (by path), Scene-CoT captions by segment."""

    image_by_path: dict[str, ImagePart]
    captions: Annotated[dict[str, dict[str, Any]], merge_dicts]


def _scene_paths(samples: list[Sample]) -> list[str]:
    return list(dict.fromkeys(p for s in samples for p in s.media.frame_paths))


def load_scene_frames(max_side: int | None) -> Callable[..., Any]:
    """Read and encode every keyframe of the scene once; questions pick theirs by path."""

    async def load(state: SceneState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        from kinegraph.agents import encode_image

        paths = _scene_paths(state["samples"])
        if not paths:
            return {"error": "no frames: load TAD with --data-option nuscenes_root=DIR (CAM_FRONT keyframes)"}
        runtime.context.stats.decodes += 1
        try:
            images = await asyncio.to_thread(
                lambda: [encode_image(read_image(p), max_side=max_side) for p in paths]
            )
        except (DataError, OSError, ValueError) as exc:
            return {"error": str(exc)}
        return {"image_by_path": dict(zip(paths, images, strict=True))}

    return load


def frame_record(sample: Sample) -> FrameRecord:
    n = len(sample.media.frame_paths)
    return FrameRecord(
        indices=list(range(n)), timestamps_s=sample.media.timestamps_s or [], source="CAM_FRONT"
    )


def fan_out_questions(target: str) -> Callable[[SceneState], Any]:
    """One `Send` per question with its own frames (or to `record_group_error` when loading failed)."""

    def route(state: SceneState) -> Any:
        if state.get("error"):
            return "record_group_error"
        by_path = state.get("image_by_path", {})
        return [
            Send(
                target,
                QuestionState(
                    sample=s,
                    images=[by_path[p] for p in s.media.frame_paths if p in by_path],
                    frame_record=frame_record(s) if by_path else None,
                    measurements={},
                ),
            )
            for s in state["samples"]
        ]

    return route


def _poses(sample: Sample) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    poses = sample.context.get("ego_poses")
    if not poses:
        raise ValueError("no ego poses: load TAD with --data-option nuscenes_root=DIR")
    return (
        np.asarray(poses["timestamp_us"], dtype=np.int64),
        np.asarray(poses["translation_m"], dtype=float),
        np.asarray(poses["rotation_wxyz"], dtype=float),
    )


def _keysegment_indices(sample: Sample) -> list[list[int]]:
    """Scene frame indices of each keysegment (upstream skips segments of < 2 tokens or no indices)."""
    tokens = sample.context.get("keyframes_token_formatted") or []
    indices = sample.context.get("keyframes_index_formatted") or []
    return [
        list(i.get("indices") or [])
        for t, i in zip(tokens, indices, strict=False)
        if len(t.get("frames") or []) >= 2 and i.get("indices")
    ]


def no_context(sample: Sample) -> list[str]:
    return []


def tcogmap_context(sample: Sample) -> list[str]:
    """TCogMap lines: one for a segment question, one per keysegment for a scene question."""
    times, trans, rots = _poses(sample)
    if sample.metadata["level"] == "segment":
        line = tcogmap.segment_context(times, trans, rots)
        return [line] if line else []
    return tcogmap.scene_context(times, trans, rots, _keysegment_indices(sample))


def ego_pose_context(sample: Sample) -> list[str]:
    """+EP: the same poses as raw text (upstream `--raw-for-baseline`)."""
    times, trans, rots = _poses(sample)
    if sample.metadata["level"] == "segment":
        return ["\n".join(tcogmap.raw_pose_lines(times.tolist(), trans, rots))]
    return tcogmap.scene_raw_pose_context(times.tolist(), trans, rots, _keysegment_indices(sample))


def parse_answer(sample: Sample, raw: str, blind: bool) -> str | list[str]:
    """Upstream baseline/TCogMap extraction: `<answer>` content, then letter, exact text or keysegments."""
    _, text = split_thinking(raw)
    if sample.metadata.get("answer_kind") == "localization":
        return [str(v) for v in parse_localization(text, sample.context, full_frames=True)]
    if sample.options:
        return extract_letter(text, sample.options, blind=blind)
    return text.strip()


def parse_scene_cot(sample: Sample, raw: str) -> str | list[str]:
    """Scene-CoT extraction: letters and exact text from `<answer>`; keysegment positions (1-based)."""
    if sample.metadata.get("answer_kind") == "localization":
        return [
            str(v) for v in parse_localization(raw, sample.context, full_frames=False, strip_answer_tags=True)
        ]
    if sample.options:
        return extract_letter_scene_cot(raw, sample.options)
    return extract_exact_scene_cot(raw)


def _finish(
    sample: Sample, state: QuestionState, raw: str, parse: Callable[[], Any], **fields: Any
) -> Prediction:
    try:
        answer = parse()
    except DataError as exc:  # upstream's inference loop writes pred "ERROR" here
        return prediction(sample, raw=raw, status=Status.input_error, error=str(exc), **fields)
    unparsed = answer in ([], NOT_AVAILABLE, "")
    status = Status.parse_failure if unparsed else Status.ok
    return prediction(
        sample, raw=raw, answer=answer, status=status, frames=state.get("frame_record"), **fields
    )


def answer_question(context: ContextFn, blind: bool, thinking: bool) -> Callable[..., Any]:
    """Ask one question with its frames and context lines, upstream's prompt and extractor."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        try:
            lines = context(sample)
        except ValueError as exc:
            return {"results": [prediction(sample, status=Status.input_error, error=str(exc))]}
        images = [] if blind else state["images"]
        text = prompts.question_prompt(sample, len(images), lines, blind=blind, thinking=thinking)
        content = [TextPart(text=text)] if blind else prompts.interleave(text, images)
        request = GenerateRequest(
            messages=[Message(role="user", content=content)],
            max_tokens=prompts.MAX_NEW_TOKENS,
            metadata={"sample_id": sample.id},
        )
        response, error = await ask(runtime, request)
        trace = [{"node": "answer_question", "prompt": text, "n_images": len(images)}]
        if response is None:
            return {"results": [prediction(sample, trace=trace, frames=state.get("frame_record"), **error)]}
        trace.append({"node": "answer_question", "raw": response.text, "cached": response.cached})
        result = _finish(
            sample,
            state,
            response.text,
            lambda: parse_answer(sample, response.text, blind),
            trace=trace,
            usage=response.usage,
            latency_s=time.perf_counter() - start,
        )
        return {"results": [result]}

    return answer


def _graph(answer: Callable[..., Any], *, frames: bool, max_side: int | None) -> CompiledStateGraph:
    graph = StateGraph(SceneState, context_schema=GraphContext)
    graph.add_node("answer_question", answer)
    graph.add_node("record_group_error", record_group_error)
    if frames:
        graph.add_node("load_scene_frames", load_scene_frames(max_side))
        graph.add_edge(START, "load_scene_frames")
        source = "load_scene_frames"
    else:
        source = START
    graph.add_conditional_edges(
        source, fan_out_questions("answer_question"), ["answer_question", "record_group_error"]
    )
    graph.add_edge("answer_question", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


def build_baseline(thinking: bool = False, max_side: int | None = None) -> CompiledStateGraph:
    """`tad.baseline`: keyframes + question (segment or scene prompt variant), upstream extraction."""
    return _graph(answer_question(no_context, False, thinking), frames=True, max_side=max_side)


def build_blind(thinking: bool = False) -> CompiledStateGraph:
    """`tad.blind`: upstream's blind mode, a text stand-in for the frames (`\\boxed{}` read first)."""
    return _graph(answer_question(no_context, True, thinking), frames=False, max_side=None)


def build_ego_pose(thinking: bool = False, max_side: int | None = None) -> CompiledStateGraph:
    """`tad.ego_pose`: the baseline plus the raw ego poses as text (the paper's +EP ablation)."""
    return _graph(answer_question(ego_pose_context, False, thinking), frames=True, max_side=max_side)


def build_tcogmap(thinking: bool = False, max_side: int | None = None) -> CompiledStateGraph:
    """`tad.tcogmap`: keyframes plus the ego-centric temporal cognitive map (per segment / per keysegment)."""
    return _graph(answer_question(tcogmap_context, False, thinking), frames=True, max_side=max_side)


def build_tcogmap_only(thinking: bool = False) -> CompiledStateGraph:
    """`tad.tcogmap_only`: blind stand-in plus the cognitive map, no frames (the paper's Figure 4 probe)."""
    return _graph(answer_question(tcogmap_context, True, thinking), frames=False, max_side=None)


# --- Scene-CoT ---------------------------------------------------------------------------------------------


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


def sampled_tokens(tokens: list[str], k: int) -> list[str]:
    """Upstream `sample_frames`: all when <= k, else `np.linspace(0, n - 1, k, dtype=int)`."""
    if len(tokens) <= k:
        return tokens
    return [tokens[i] for i in np.linspace(0, len(tokens) - 1, k, dtype=int)]


def fan_out_segments(frames_per_segment: int) -> Callable[[SceneState], Any]:
    """One `Send` per keysegment to caption, with its sampled frames."""

    def route(state: SceneState) -> Any:
        if state.get("error"):
            return "record_group_error"
        samples, by_path = state["samples"], state.get("image_by_path", {})
        path_of = {
            t: p
            for s in samples
            for t, p in zip(s.context.get("frame_tokens") or [], s.media.frame_paths, strict=False)
        }
        segments = samples[0].context.get("keyframes_token_formatted") or []
        sends = []
        for k in sorted(_needed_segments(samples)):
            tokens = sampled_tokens(list(segments[k].get("frames") or []), frames_per_segment)
            images = [by_path[path_of[t]] for t in tokens if t in path_of and path_of[t] in by_path]
            sends.append(Send("caption_segment", {"position": k + 1, "images": images}))
        return sends or "captions_done"

    return route


async def caption_segment(payload: dict[str, Any], runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """The four chained captioning turns for one keysegment (images on the first turn only)."""
    position, images = payload["position"], payload["images"]
    messages: list[Message] = []
    outputs: list[str] = []
    responses = []
    steps = [
        lambda: prompts.cot_step1(len(images)),
        lambda: prompts.cot_step2(outputs[0]),
        lambda: prompts.cot_step3(outputs[0], outputs[1]),
        lambda: prompts.cot_step4(outputs[1], outputs[2], tcogmap.PHRASES),
    ]
    for i, step in enumerate(steps):
        text = step()
        content = prompts.interleave(text, images) if i == 0 else text
        messages.append(Message(role="user", content=content))
        request = GenerateRequest(messages=list(messages), temperature=0.0, max_tokens=prompts.MAX_NEW_TOKENS)
        response, error = await ask(runtime, request)
        if response is None:  # upstream stores an error caption and goes on
            entry = {"caption": f"ERROR: {error.get('error')}", "step1": None, "usage": usage_of(responses)}
            return {"captions": {str(position): entry}}
        responses.append(response)
        outputs.append(response.text.strip())
        messages.append(Message(role="assistant", content=outputs[-1]))
    try:
        caption = prompts.cot_caption(outputs[3], position)
    except ValueError as exc:
        caption = f"ERROR: {exc}"
    entry = {"caption": caption, "step1": outputs[0], "steps": outputs, "usage": usage_of(responses)}
    return {"captions": {str(position): entry}}


async def captions_done(state: SceneState) -> dict[str, Any]:
    """Join point after every keysegment is captioned."""
    return {}


def _caption_usage(
    sample: Sample, samples: list[Sample], captions: dict[str, dict], used: list[int]
) -> Usage:
    """Captioning cost, counted once: on the first question of the scene that uses each caption."""
    total = Usage()
    for position in used:
        owner = next(s for s in samples if position in _positions(s, captions))
        if owner.id == sample.id:
            total = total + Usage.model_validate(captions[str(position)]["usage"])
    return total


def _positions(sample: Sample, captions: dict[str, dict]) -> list[int]:
    if sample.metadata["level"] == "segment":
        k = segment_position(sample)
        return [k + 1] if k is not None and str(k + 1) in captions else []
    return sorted(int(p) for p in captions)


async def answer_from_captions(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """The answering LLM over the captions: a segment question gets its own, a scene question all of them."""
    sample, start = state["sample"], time.perf_counter()
    captions = state["measurements"].get("captions", {})
    positions = _positions(sample, captions)
    blocks = [
        prompts.cot_caption_block(p, captions[str(p)].get("step1"), captions[str(p)]["caption"])
        for p in positions
    ]
    text = prompts.cot_answer_prompt(sample, blocks)
    request = GenerateRequest(
        messages=[Message(role="system", content=prompts.LLM_SYSTEM), Message(role="user", content=text)],
        temperature=0.0,
        max_tokens=prompts.LLM_MAX_NEW_TOKENS,
        metadata={"sample_id": sample.id},
    )
    response, error = await ask(runtime, request)
    trace = [{"node": "answer_from_captions", "prompt": text, "keysegments": positions}]
    if response is None:
        return {"results": [prediction(sample, trace=trace, **error)]}
    trace.append({"node": "answer_from_captions", "raw": response.text, "cached": response.cached})
    usage = response.usage + state["measurements"].get("caption_usage", {}).get(sample.id, Usage())
    result = _finish(
        sample,
        state,
        response.text,
        lambda: parse_scene_cot(sample, response.text),
        trace=trace,
        usage=usage,
        latency_s=time.perf_counter() - start,
    )
    return {"results": [result]}


def fan_out_to_answers(state: SceneState) -> list[Send]:
    """Questions to the answering LLM, each with the captions and its share of the captioning cost."""
    samples, captions = state["samples"], state.get("captions", {})
    costs = {s.id: _caption_usage(s, samples, captions, _positions(s, captions)) for s in samples}
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


def build_scene_cot(frames_per_segment: int = 4, max_side: int | None = None) -> CompiledStateGraph:
    """`tad.scene_cot`: caption each keysegment (4 chained VLM turns, 4 frames), then answer from captions."""
    graph = StateGraph(SceneState, context_schema=GraphContext)
    graph.add_node("load_scene_frames", load_scene_frames(max_side))
    graph.add_node("caption_segment", caption_segment)
    graph.add_node("captions_done", captions_done)
    graph.add_node("answer_from_captions", answer_from_captions)
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "load_scene_frames")
    graph.add_conditional_edges(
        "load_scene_frames",
        fan_out_segments(frames_per_segment),
        ["caption_segment", "captions_done", "record_group_error"],
    )
    graph.add_edge("caption_segment", "captions_done")
    graph.add_conditional_edges("captions_done", fan_out_to_answers, ["answer_from_captions"])
    graph.add_edge("answer_from_captions", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()
