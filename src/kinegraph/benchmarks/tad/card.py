"""TAD's card: paper, licence, upstream, Hub layout, context schema, ad-hoc questions.

An ad-hoc TAD question is about keyframes (frame files at nuScenes' 2 Hz; a door samples a video at that
rate first). Its frames get tokens `frame0..`; a segment question sees them all as one keysegment, a scene
question needs keysegments (given, or "derive": ten evenly spread 5 s windows, non-official).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this one on 3.11

from kinegraph.benchmarks.card import Card, HubLayout, Question, QuestionRefused, lettered
from kinegraph.benchmarks.tad.loader import (
    CONFIGS,
    KEYFRAME_RATE_HZ,
    LOCALIZATION_TASKS,
    SEGMENT_TASKS,
    TASKS,
    is_ego_question,
)

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)
#: TAD's keysegments span 5 s (10 keyframes at 2 Hz); "derive" spreads ten of them over the clip
KEYSEGMENT_S, KEYSEGMENTS = 5.0, 10
_SUFFIXES = ("", ".jsonl", ".json", ".parquet", ".arrow")


@with_config(_STRICT)
class TADContext(TypedDict, total=False):
    """TAD: the scene's keyframe tokens, keysegments and ego poses (`timestamp_us`, `translation_m`,
    `rotation_wxyz`)."""

    scene_token: str
    sample_token: str
    frame_tokens: list[str]
    keysegments: list[Any]
    keyframes_token_formatted: Any
    keyframes_index_formatted: Any
    ego_poses: dict[str, list[Any]]


def keysegments(given: Any, n_frames: int, times_s: list[float], made: dict[str, str]) -> list[list[int]]:
    """The given keysegments (checked against the frames), or ten evenly spread 5 s windows ("derive")."""
    if given != "derive":
        segments = given or []
        for k, segment in enumerate(segments):
            if max(segment) >= n_frames:
                raise QuestionRefused(f"keysegments[{k}]: frame {max(segment)} beyond the {n_frames} frames")
        return [sorted(set(s)) for s in segments]
    made["keysegments"] = "derived"
    rate = (
        (n_frames - 1) / (times_s[-1] - times_s[0])
        if len(times_s) > 1 and times_s[-1] > times_s[0]
        else KEYFRAME_RATE_HZ
    )
    width = max(2, min(n_frames, round(KEYSEGMENT_S * rate)))
    count = min(KEYSEGMENTS, n_frames - width + 1)
    starts = sorted({round(i * (n_frames - width) / max(1, count - 1)) for i in range(count)})
    return [list(range(s, s + width)) for s in starts]


def shape(question: Question, fields: dict[str, Any], made: dict[str, str]) -> None:
    """TAD's scene layout: lettered options, frame tokens, keysegments (token and index forms), level and
    answer kind."""
    media = question.media
    task, given = question.extras.get("task"), question.extras.get("keysegments")
    if task is not None and task not in TASKS:
        raise QuestionRefused(f"task: {task!r} is not a TAD task ({', '.join(TASKS)})")
    n = len(media.frame_paths) or len(question.context.get("ego_poses", {}).get("timestamp_us", []))
    if n == 0:
        raise QuestionRefused("frames: TAD graphs read keyframes: send frames, a video or a nuscenes_scene")
    scene = task not in SEGMENT_TASKS if task else given is not None
    if scene and given is None:
        raise QuestionRefused(f"keysegments: a scene-level TAD question ({task}) needs them, or 'derive'")
    segments = keysegments(given, n, media.timestamps_s or [], made) if scene else [list(range(n))]
    if not segments:
        raise QuestionRefused("keysegments: give at least one, or 'derive'")
    if question.options:  # as the dataset writes them: `A. Turn left.`
        fields["options"] = lettered(question.options, ". ")
    tokens = [f"frame{i}" for i in range(n)]
    anchors = [s[len(s) // 2] for s in segments]
    fields["context"].update(
        scene_token=fields["group"],
        sample_token=tokens[anchors[0]] if anchors and not scene else None,
        frame_tokens=tokens,
        keysegments=anchors,
        keyframes_token_formatted=[
            {"segment_key": tokens[a], "frames": [tokens[i] for i in s]}
            for a, s in zip(anchors, segments, strict=True)
        ],
        keyframes_index_formatted=[
            {"segment_index_key": str(a), "indices": s} for a, s in zip(anchors, segments, strict=True)
        ],
    )
    fields["question_id"] = task
    kind = "letter" if question.options else "exact"
    fields["metadata"] = {
        "task": task,
        "level": "scene" if scene else "segment",
        "answer_kind": "localization" if task in LOCALIZATION_TASKS else kind,
        "ego": is_ego_question(question.text),
    }


CARD = Card(
    name="tad",
    title="TAD: Temporal understanding in Autonomous Driving",
    paper='"From Segments to Scenes: Temporal Understanding for Agentic Autonomous Driving via '
    'Vision-Language Models", arXiv 2512.05277',
    licence="CC BY-NC-SA 4.0",
    upstream="github.com/vbdi/tad_bench@1c89f7e",
    hub=HubLayout(
        "vbdai/TAD",
        tuple(p for c in CONFIGS for p in (f"{c}/*", f"{c}.*")),
        (
            tuple(f"keysegments{s}" for s in _SUFFIXES),
            tuple(f"{c}{s}" for c in TASKS for s in _SUFFIXES),
        ),
        needs_nuscenes=True,
    ),
    context=TADContext,
    shape=shape,
    keyframe_rate_hz=KEYFRAME_RATE_HZ,
    data_hint="--data TAD_DIR --data-option nuscenes_root=NUSCENES",
)
