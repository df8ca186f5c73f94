"""TAD graphs: upstream's baseline (frames, blind), TCogMap, the raw ego-pose ablation (+EP) and Scene-CoT.

A graph runs on one scene: every keyframe is read and encoded once, then each question gets its own
frames (segment questions their keysegment's, scene questions the whole scene, as upstream). Segment
and scene questions use upstream's segment and scene prompt variants; answers go through upstream's
extractors (`evaluators.tad_answers`). Scene-CoT, built on the scene state and frame loading here,
lives in `tad_scene_cot`. `tad.baseline` gives a model that takes video natively (`video=native`)
each question's keyframes as one video instead, as the paper gives Gemini and Cosmos-Reason (`tad_video`).
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

from kinegraph.agents.protocol import (
    ContentPart,
    GenerateRequest,
    ImagePart,
    Message,
    TextPart,
    VideoPart,
)
from kinegraph.errors import DataError
from kinegraph.evaluators.tad_answers import (
    NOT_AVAILABLE,
    extract_letter,
    parse_localization,
    split_thinking,
)
from kinegraph.graphs.nodes import ask, prediction, record_group_error
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState, merge_dicts
from kinegraph.graphs.tad import prompts
from kinegraph.graphs.tad.video import VIDEO_FPS, capture_rate_hz, scene_videos, video_key
from kinegraph.graphs.video import takes_whole_video
from kinegraph.media import read_image
from kinegraph.tools import tcogmap
from kinegraph.types import DEFAULT_ROLE, FrameRecord, NativeVideo, Prediction, Sample, Status

ContextFn = Callable[[Sample], list[str]]


class SceneState(GroupState, total=False):
    """A TAD scene: its questions, each keyframe encoded once (by path), or for a model that takes video
    natively each question's keyframes as one video (by `video_key`) and that model; Scene-CoT captions."""

    image_by_path: dict[str, ImagePart]
    video_by_frames: dict[str, VideoPart]
    native_video: NativeVideo
    captions: Annotated[dict[str, dict[str, Any]], merge_dicts]


def _scene_paths(samples: list[Sample]) -> list[str]:
    return list(dict.fromkeys(p for s in samples for p in s.media.frame_paths))


NO_FRAMES = "no frames: load TAD with --data-option nuscenes_root=DIR (CAM_FRONT keyframes)"


def load_scene_frames(
    max_side: int | None, no_frames: str = NO_FRAMES, whole_video_ok: bool = False
) -> Callable[..., Any]:
    """Read and encode every keyframe of the scene once; questions pick theirs by path. With
    `whole_video_ok`, a model that takes video natively gets each question's keyframes as one video."""

    async def load(state: SceneState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        from kinegraph.agents import encode_image

        paths = _scene_paths(state["samples"])
        if not paths:
            return {"error": no_frames}
        runtime.context.stats.decodes += 1
        backend = runtime.context.backend_for(DEFAULT_ROLE)
        try:
            if whole_video_ok and takes_whole_video(backend):
                videos = await asyncio.to_thread(scene_videos, state["samples"], max_side)
                model = NativeVideo(model=f"{backend.provider}:{backend.model}", fps=VIDEO_FPS)
                return {"video_by_frames": videos, "native_video": model}
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


def _question_frames(
    state: SceneState, sample: Sample
) -> tuple[list[ImagePart | VideoPart], FrameRecord | None]:
    """A question's keyframes as images, or as its one video (the record naming the model that got it)."""
    videos = state.get("video_by_frames")
    if videos is not None:
        video = videos.get(video_key(sample.media.frame_paths))
        if video is None:
            return [], None
        return [video], frame_record(sample).model_copy(update={"native_video": state["native_video"]})
    by_path = state.get("image_by_path", {})
    images: list[ImagePart | VideoPart] = [by_path[p] for p in sample.media.frame_paths if p in by_path]
    return images, frame_record(sample) if by_path else None


def fan_out_questions(target: str) -> Callable[[SceneState], Any]:
    """One `Send` per question with its own frames (or to `record_group_error` when loading failed)."""

    def route(state: SceneState) -> Any:
        if state.get("error"):
            return "record_group_error"
        sends = []
        for s in state["samples"]:
            images, record = _question_frames(state, s)
            question = QuestionState(sample=s, images=images, frame_record=record, measurements={})
            sends.append(Send(target, question))
        return sends

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


def tcogmap_context(sample: Sample, thresholds: tcogmap.Thresholds = tcogmap.UPSTREAM) -> list[str]:
    """TCogMap lines: one for a segment question, one per keysegment for a scene question."""
    times, trans, rots = _poses(sample)
    if sample.metadata["level"] == "segment":
        line = tcogmap.segment_context(times, trans, rots, thresholds)
        return [line] if line else []
    return tcogmap.scene_context(times, trans, rots, _keysegment_indices(sample), thresholds)


def tcogmap_with(thresholds: tcogmap.Thresholds) -> Callable[[Sample], list[str]]:
    """`tcogmap_context` under `thresholds` (the builders' threshold options)."""
    return lambda sample: tcogmap_context(sample, thresholds)


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


def finish_prediction(
    sample: Sample, state: QuestionState, raw: str, parse: Callable[[], Any], **fields: Any
) -> Prediction:
    """The prediction for `raw`: parse_failure when nothing was extracted, input_error when the sample's
    keysegment data is unusable."""
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
        videos = [p for p in images if isinstance(p, VideoPart)]
        trace_entry: dict[str, Any] = {"node": "answer_question"}
        if videos:  # the video, then upstream's prompt without its `FrameN:` lines (see `tad_video`)
            text = prompts.question_prompt(sample, 0, lines, thinking=thinking)
            content: list[ContentPart] = [*videos, TextPart(text=text)]
            trace_entry.update(prompt=text, n_images=0, video_frames=len(sample.media.frame_paths))
            trace_entry["video_rate_hz"] = capture_rate_hz(sample.media)
        else:
            text = prompts.question_prompt(sample, len(images), lines, blind=blind, thinking=thinking)
            content = [TextPart(text=text)] if blind else prompts.interleave(text, images)
            trace_entry.update(prompt=text, n_images=len(images))
        request = GenerateRequest(
            messages=[Message(role="user", content=content)],
            max_tokens=prompts.MAX_NEW_TOKENS,
            metadata={"sample_id": sample.id},
        )
        response, error = await ask(runtime, request)
        trace = [trace_entry]
        if response is None:
            return {"results": [prediction(sample, trace=trace, frames=state.get("frame_record"), **error)]}
        trace.append({"node": "answer_question", "raw": response.text, "cached": response.cached})
        result = finish_prediction(
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


def _graph(
    answer: Callable[..., Any], *, frames: bool, max_side: int | None, whole_video_ok: bool = False
) -> CompiledStateGraph:
    graph = StateGraph(SceneState, context_schema=GraphContext)
    graph.add_node("answer_question", answer)
    graph.add_node("record_group_error", record_group_error)
    if frames:
        graph.add_node("load_scene_frames", load_scene_frames(max_side, whole_video_ok=whole_video_ok))
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
    """`tad.baseline`: keyframes + question (segment or scene prompt variant), upstream extraction; a
    model that takes video natively gets the keyframes as one video at 2 fps (the paper's video models)."""
    answer = answer_question(no_context, False, thinking)
    return _graph(answer, frames=True, max_side=max_side, whole_video_ok=True)


def build_blind(thinking: bool = False) -> CompiledStateGraph:
    """`tad.blind`: upstream's blind mode, a text stand-in for the frames (`\\boxed{}` read first)."""
    return _graph(answer_question(no_context, True, thinking), frames=False, max_side=None)


# The paper reports +EP and +TCogMap rows for its video model (Cosmos-Reason, Table 2), so a model that takes
# video natively gets the keyframe video with the context lines unchanged: they name keyframes by number, and
# a 2 fps sampling of a 2 Hz keyframe video shows exactly those keyframes, in order.


def build_ego_pose(thinking: bool = False, max_side: int | None = None) -> CompiledStateGraph:
    """`tad.ego_pose`: the baseline plus the raw ego poses as text (the paper's +EP ablation)."""
    answer = answer_question(ego_pose_context, False, thinking)
    return _graph(answer, frames=True, max_side=max_side, whole_video_ok=True)


def build_tcogmap(
    thinking: bool = False,
    max_side: int | None = None,
    stationary_mps: float = tcogmap.STATIONARY_THRESHOLD_MPS,
    stopping_mps: float = tcogmap.STOPPING_SPEED_THRESHOLD_MPS,
    turn_yaw_deg: float = tcogmap.TURN_YAW_THRESHOLD_DEG,
    lane_change_lateral_mps: float = tcogmap.LANE_CHANGE_LATERAL_VEL_THRESHOLD_MPS,
    lane_change_min_forward_mps: float = tcogmap.MIN_LANE_CHANGE_FORWARD_SPEED_MPS,
) -> CompiledStateGraph:
    """`tad.tcogmap`: keyframes plus the ego-centric temporal cognitive map (per segment / per keysegment);
    Algorithm 1's thresholds are options (upstream's by default; others are a non-official ablation)."""
    thresholds = tcogmap.Thresholds(
        stationary_mps, stopping_mps, turn_yaw_deg, lane_change_lateral_mps, lane_change_min_forward_mps
    )
    answer = answer_question(tcogmap_with(thresholds), False, thinking)
    return _graph(answer, frames=True, max_side=max_side, whole_video_ok=True)


def build_tcogmap_only(
    thinking: bool = False,
    stationary_mps: float = tcogmap.STATIONARY_THRESHOLD_MPS,
    stopping_mps: float = tcogmap.STOPPING_SPEED_THRESHOLD_MPS,
    turn_yaw_deg: float = tcogmap.TURN_YAW_THRESHOLD_DEG,
    lane_change_lateral_mps: float = tcogmap.LANE_CHANGE_LATERAL_VEL_THRESHOLD_MPS,
    lane_change_min_forward_mps: float = tcogmap.MIN_LANE_CHANGE_FORWARD_SPEED_MPS,
) -> CompiledStateGraph:
    """`tad.tcogmap_only`: blind stand-in plus the cognitive map, no frames (the paper's Figure 4 probe)."""
    thresholds = tcogmap.Thresholds(
        stationary_mps, stopping_mps, turn_yaw_deg, lane_change_lateral_mps, lane_change_min_forward_mps
    )
    return _graph(answer_question(tcogmap_with(thresholds), True, thinking), frames=False, max_side=None)
