"""The Sample a request asks, shaped as each benchmark family's loader shapes it.

A graph reads its family's sample layout (EgoDyn's question id and answer type, TAD's keysegments and
level, QuantiPhy's prior, DSI's and AutoDriDM's option text), so a request becomes the sample that family's
loader would have written for the same question. Graphs outside the families get the plain sample.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kinegraph.serve.inputs import invalid
from kinegraph.serve.schemas import QARequest
from kinegraph.types import Media, Sample

_LETTERED = re.compile(r"^\s*([A-Z])\s*[.:]\s*(.+?)\s*$", re.S)
#: TAD's keysegments span 5 s (10 keyframes at 2 Hz); "derive" spreads ten of them over the clip
KEYSEGMENT_S, KEYSEGMENTS = 5.0, 10


def lettered(options: list[str], separator: str) -> list[str]:
    """Options as `A<separator>text` (already-lettered options keep their letters)."""
    out = []
    for i, option in enumerate(options):
        match = _LETTERED.match(option)
        letter, text = (match.group(1), match.group(2)) if match else (chr(ord("A") + i), option.strip())
        out.append(f"{letter}{separator}{text}")
    return out


def _base(request: QARequest, request_id: str, media: Media, context: dict, family: str) -> dict[str, Any]:
    return {
        "id": request_id,
        "benchmark": family,
        "group": request_id,
        "question_id": request.question_id,
        "question": request.question,
        "options": request.options,
        "media": media,
        "context": context,
        "metadata": {"answer_type": "multiclass" if request.options else "numeric"},
    }


def egodyn_fields(request: QARequest, fields: dict[str, Any], made: dict[str, str]) -> None:
    """The bank question (by `question_id`, else by the question's text) with its answer type and choices."""
    from kinegraph.benchmarks.egodyn.questions import default_question_bank

    bank = default_question_bank()
    if request.question_id is not None and request.question_id not in bank:
        raise invalid(f"question_id: {request.question_id!r} is not an EgoDyn question ({', '.join(bank)})")
    wanted = " ".join(request.question.lower().split())
    question = bank.get(request.question_id or "") or next(
        (q for q in bank.values() if " ".join(q.text.lower().split()) == wanted), None
    )
    if question is None:
        return
    if request.question_id is None:
        made["question_id"] = "matched"
    fields["question_id"] = question.question_id
    fields["options"] = request.options or question.choices
    fields["metadata"] = {"answer_type": question.answer_type, "category": question.category}


def quantiphy_fields(request: QARequest, fields: dict[str, Any], made: dict[str, str]) -> None:
    """QuantiPhy's prior column, depths and codes ([prior kind][dim][objects][background])."""
    from kinegraph.benchmarks.quantiphy.loader import codes
    from kinegraph.tools.quantiphy_text import parse_prior
    from kinegraph.tools.units import parse_unit

    if request.prior is None:
        return
    try:
        parse_unit(request.prior.unit)
    except ValueError as exc:
        raise invalid(f"prior.unit: {exc}") from None
    text = request.prior.text()
    try:
        unit = parse_prior(text).unit
    except ValueError as exc:
        raise invalid(f"prior: {exc}") from None
    kind = {"length": "S", "speed": "V", "acceleration": "A"}[unit.dimension] if unit else "S"
    video_type = f"{kind}{'3' if request.prior.depths else '2'}SC"
    fields["context"].update(
        ground_truth_prior=text, depth_info=request.prior.depths or "", fps=fields["media"].fps
    )
    fields["metadata"] = {
        **codes(video_type, f"{kind}D"),
        "video_type": video_type,
        "inference_type": f"{kind}D",
    }


def keysegments(
    request: QARequest, n_frames: int, times_s: list[float], made: dict[str, str]
) -> list[list[int]]:
    """The request's keysegments (checked against the frames), or ten evenly spread 5 s windows."""
    if request.keysegments != "derive":
        segments = request.keysegments or []
        for k, segment in enumerate(segments):
            if max(segment) >= n_frames:
                raise invalid(f"keysegments[{k}]: frame {max(segment)} beyond the {n_frames} frames")
        return [sorted(set(s)) for s in segments]
    made["keysegments"] = "derived"
    rate = (
        (n_frames - 1) / (times_s[-1] - times_s[0]) if len(times_s) > 1 and times_s[-1] > times_s[0] else 2.0
    )
    width = max(2, min(n_frames, round(KEYSEGMENT_S * rate)))
    count = min(KEYSEGMENTS, n_frames - width + 1)
    starts = sorted({round(i * (n_frames - width) / max(1, count - 1)) for i in range(count)})
    return [list(range(s, s + width)) for s in starts]


def tad_fields(request: QARequest, fields: dict[str, Any], made: dict[str, str]) -> None:
    """TAD's scene layout: frame tokens, keysegments (token and index forms), level and answer kind."""
    from kinegraph.benchmarks.tad.loader import LOCALIZATION_TASKS, SEGMENT_TASKS, TASKS, is_ego_question

    media: Media = fields["media"]
    if request.task is not None and request.task not in TASKS:
        raise invalid(f"task: {request.task!r} is not a TAD task ({', '.join(TASKS)})")
    n = len(media.frame_paths) or len(fields["context"].get("ego_poses", {}).get("timestamp_us", []))
    if n == 0:
        raise invalid("TAD graphs read frames by token: send frame_paths, images or uploaded frames")
    scene = request.task not in SEGMENT_TASKS if request.task else request.keysegments is not None
    if scene and request.keysegments is None:
        raise invalid(f"keysegments: a scene-level TAD question ({request.task}) needs them, or 'derive'")
    segments = keysegments(request, n, media.timestamps_s or [], made) if scene else [list(range(n))]
    tokens = [f"frame{i}" for i in range(n)]
    anchors = [s[len(s) // 2] for s in segments]
    kind = "letter" if request.options else "exact"
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
    fields["question_id"] = request.task
    fields["metadata"] = {
        "task": request.task,
        "level": "scene" if scene else "segment",
        "answer_kind": "localization" if request.task in LOCALIZATION_TASKS else kind,
        "ego": is_ego_question(request.question),
    }


def stsbench_fields(request: QARequest, fields: dict[str, Any], made: dict[str, str]) -> None:
    """STSBench's record layout: lettered options and the ego poses as `ego` (xyz, yaw)."""
    import numpy as np

    fields["options"] = lettered(request.options or [], ". ")
    poses = fields["context"].get("ego_poses")
    if poses:
        rotation = np.asarray(poses["rotation_wxyz"], dtype=float)
        yaw = np.arctan2(
            2 * (rotation[:, 0] * rotation[:, 3] + rotation[:, 1] * rotation[:, 2]),
            1 - 2 * (rotation[:, 2] ** 2 + rotation[:, 3] ** 2),
        )
        fields["context"]["ego"] = {"xyz": poses["translation_m"], "yaw": yaw.tolist()}


def dsi_fields(request: QARequest, fields: dict[str, Any], made: dict[str, str]) -> None:
    """DSI's layout: a video sampled at 5 fps, `A: text` options and their joined text."""
    from kinegraph.benchmarks.dsi.loader import VIDEO_SAMPLING_FPS

    if fields["media"].kind != "video":
        raise invalid("video: DSI graphs sample a video (send video_path or an uploaded video)")
    options = lettered(request.options or [], ": ")
    fields["options"] = options or None
    fields["context"].update(options_text="; ".join(options), sampling_fps=VIDEO_SAMPLING_FPS)


def autodridm_fields(request: QARequest, fields: dict[str, Any], made: dict[str, str]) -> None:
    """AutoDriDM's layout: one image, `A. text` options, `A.text; B.text` option text, the task."""
    from kinegraph.benchmarks.autodridm.loader import MULTI_SELECT_TASKS, TASKS

    media: Media = fields["media"]
    if media.kind != "frames" or len(media.frame_paths) != 1:
        raise invalid("images: AutoDriDM graphs read exactly one image")
    if request.task is not None and request.task not in TASKS:
        raise invalid(f"task: {request.task!r} is not an AutoDriDM task ({', '.join(TASKS)})")
    options = lettered(request.options or [], ". ")
    fields["options"] = options
    fields["context"].update(
        options_text="; ".join(o.replace(". ", ".", 1) for o in options),
        image_name=Path(media.frame_paths[0]).name,
    )
    task = request.task or TASKS[0]
    fields["question_id"] = task
    fields["metadata"] = {
        "task": task,
        "level": task.split("-")[0],
        "multi_select": task in MULTI_SELECT_TASKS,
    }


FAMILY_FIELDS: dict[str, Callable[[QARequest, dict[str, Any], dict[str, str]], None]] = {
    "egodyn": egodyn_fields,
    "quantiphy": quantiphy_fields,
    "tad": tad_fields,
    "stsbench": stsbench_fields,
    "dsi": dsi_fields,
    "autodridm": autodridm_fields,
}


def request_sample(
    request: QARequest, family: str | None, request_id: str, media: Media, context: dict[str, Any]
) -> tuple[Sample, dict[str, str]]:
    """The sample `request` asks of a graph of `family`, and the inputs made on the way (`inputs`)."""
    made: dict[str, str] = {}
    fields = _base(request, request_id, media, context, family or "serve")
    if family in FAMILY_FIELDS:
        FAMILY_FIELDS[family](request, fields, made)
    return Sample(**fields), made
