"""EgoDyn-Bench's dataset layout from ego poses: clip extraction, npz arrays, clip index and QA rows.

Follows upstream `dataset/scripts/extract_nuscenes_clips.py`, `extract_carla_clips.py` and
`dataset/generation/qa_generator.py` (TUM-AVS/EgoDyn-Bench @a0c9c01) field for field, so it works on
real nuScenes as well as on `kinegraph synth nuscenes`: a clip ends at every keyframe sample and looks
back `clip_s` seconds over every CAM_FRONT sample_data; clips with < 20 frames or spanning < 0.9 x
`clip_s` are skipped; ids are `clip_%05d` in extraction order.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.benchmarks.egodyn.questions import EgoDynQuestion, load_question_bank
from kinegraph.benchmarks.nuscenes.loader import NuScenesTables
from kinegraph.tools.kinematics import MIN_FRAMES, MIN_SPAN_RATIO, ClipKinematics, clip_kinematics
from kinegraph.tools.oracle import explain_clip

logger = logging.getLogger(__name__)

# selected_clips.json keeps six features; its `max_abs_yaw_rate` is the signed abs-max yaw rate.
SELECTED_FEATURES = (
    ("max_abs_yaw_rate", "signed_max_yaw_rate"),
    ("min_accel", "min_accel"),
    ("mean_abs_jerk", "mean_abs_jerk"),
    ("mean_speed", "mean_speed"),
    ("total_heading_change", "total_heading_change"),
    ("max_lateral_accel", "max_lateral_accel"),
)


def save_clip_arrays(clips_dir: Path, clip_id: str, kinematics: ClipKinematics) -> str:
    """Write `arrays/<clip_id>.npz` (compressed, upstream keys); returns the relative `array_ref`."""
    (clips_dir / "arrays").mkdir(parents=True, exist_ok=True)
    np.savez_compressed(clips_dir / "arrays" / f"{clip_id}.npz", **kinematics.arrays())
    return f"arrays/{clip_id}.npz"


def extract_nuscenes_clips(
    nusc: NuScenesTables,
    clips_dir: str | Path,
    *,
    clip_s: float = 3.0,
    min_frames: int = MIN_FRAMES,
    camera: str = "CAM_FRONT",
    max_clips: int | None = None,
) -> list[dict[str, Any]]:
    """Extract clips from every scene into `clips_dir` (clips_index.jsonl, arrays/, metadata.json).

    Returns the clip records as written (upstream `create_clip_record`); `frame_paths` are relative to
    the nuScenes dataroot. Stops after `max_clips` clips, like upstream `--num_clips`.
    """
    out = Path(clips_dir)
    out.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    clip_number = 0
    for scene in nusc.scenes:
        for sample in nusc.samples(scene["token"]):
            if max_clips is not None and clip_number >= max_clips:
                break
            t_end = sample["timestamp"] / 1e6
            t_start = t_end - clip_s
            frames = nusc.frames_in_window(nusc.keyframe_token(sample["token"], camera), t_start, t_end)
            if (
                len(frames) < min_frames
                or frames[-1].timestamp_s - frames[0].timestamp_s < MIN_SPAN_RATIO * clip_s
            ):
                continue
            clip_id = f"clip_{clip_number:05d}"
            clip_number += 1
            try:
                kinematics = clip_kinematics(
                    np.array([f.timestamp_s for f in frames]),
                    np.array([f.ego_pose.translation_m[:2] for f in frames]),
                    np.array([f.ego_pose.yaw_rad for f in frames]),
                    clip_s=t_end - t_start,
                    min_frames=min_frames,
                )
            except ValueError as exc:  # upstream logs, skips the clip and keeps its id used
                logger.warning("skipping %s (sample %s): %s", clip_id, sample["token"], exc)
                continue
            records.append(
                {
                    "clip_id": clip_id,
                    "scene_token": sample["scene_token"],
                    "sample_token": sample["token"],
                    "t_start": t_start,
                    "t_end": t_end,
                    "camera": camera,
                    "frame_tokens": [f.token for f in frames],
                    "frame_paths": [f.filename for f in frames],
                    "num_frames": len(frames),
                    "array_ref": save_clip_arrays(out, clip_id, kinematics),
                    "split": "unsplit",
                    "features": kinematics.features,
                }
            )
    write_jsonl(out / "clips_index.jsonl", records)
    metadata = {
        "nuscenes_version": nusc.version,
        "clip_seconds": clip_s,
        "sampling_hz": 10.0,
        "min_frames": min_frames,
        "camera": camera,
        "num_clips": len(records),
    }
    (out / "metadata.json").write_text(json.dumps(metadata, indent=2))
    return records


def carla_clip_record(
    clip_id: str, scene: str, behavior: str, window_idx: int, array_ref: str, features: Mapping[str, float]
) -> dict[str, Any]:
    """A CARLA clip record as upstream `create_carla_clip_record` (no frame paths: the video is
    `<carla_video_dir>/<clip_id>.mp4`; `t_end` is the window length)."""
    return {
        "clip_id": clip_id,
        "scene": scene,
        "behavior": behavior,
        "window_idx": window_idx,
        "t_end": 3.0,
        "array_ref": array_ref,
        "split": "unsplit",
        "source": "carla",
        "features": dict(features),
    }


def qa_rows(
    records: Iterable[Mapping[str, Any]],
    clips_dir: str | Path,
    bank: Mapping[str, EgoDynQuestion] | None = None,
) -> list[dict[str, Any]]:
    """One QA row per (clip, question), as upstream `_generate_single_qa`: the oracle applied to the
    clip's stored npz arrays and clips_index features; `qa_id` counts from `qa_00000000`."""
    questions = load_question_bank() if bank is None else bank
    rows: list[dict[str, Any]] = []
    for record in records:
        with np.load(Path(clips_dir) / record["array_ref"]) as npz:
            arrays = {key: npz[key] for key in npz.files}
        outcomes = explain_clip(arrays, questions, features=record["features"])
        for qid, question in questions.items():
            outcome = outcomes[qid]
            rows.append(
                {
                    "qa_id": f"qa_{len(rows):08d}",
                    "clip_id": record["clip_id"],
                    "question_id": qid,
                    "category": question.category,
                    "question": question.text,
                    "answer": outcome.label,
                    "answer_type": question.answer_type,
                    "choices": question.choices,
                    "units": None,
                    "label_source": "sensor_rule",
                    "rule_name": question.rule,
                    "split": record.get("split", "unsplit"),
                    "t_end": record["t_end"],
                    "evidence": _plain(outcome.evidence),
                    "metadata": {"temporal": question.temporal},
                }
            )
    return rows


def write_qa(
    records: list[dict[str, Any]], clips_dir: str | Path, bank: Mapping[str, EgoDynQuestion] | None = None
) -> list[dict[str, Any]]:
    """Write `qa.jsonl` next to the clip index; returns the rows."""
    rows = qa_rows(records, clips_dir, bank)
    write_jsonl(Path(clips_dir) / "qa.jsonl", rows)
    return rows


def selected_entry(record: Mapping[str, Any], source: str, answers: Mapping[str, Any]) -> dict[str, Any]:
    """A `selected_clips.json` item: id, source, the 14 answers and the six stored features."""
    features = record["features"]
    return {
        "id": record["clip_id"],
        "source": source,
        "answers": dict(answers),
        "features": {name: features[key] for name, key in SELECTED_FEATURES},
    }


def _plain(value: Any) -> Any:
    """numpy scalars/arrays inside evidence -> JSON-native values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """One JSON object per line, as upstream writes its .jsonl files."""
    with path.open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
