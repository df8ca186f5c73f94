"""TAD: Temporal understanding in Autonomous Driving (loader).

Paper: "From Segments to Scenes: Temporal Understanding for Agentic Autonomous Driving via
Vision-Language Models" (arXiv 2512.05277). Code: github.com/vbdi/tad_bench@1c89f7e (CC BY-NC-SA 4.0).
Data: HF `vbdai/TAD`, nine configs (7 tasks + `keysegments` + `raw_labels`), split `train`; nuScenes val
CAM_FRONT keyframes at 2 Hz, 150 scenes, 5,861 questions.

Images follow upstream: a segment question sees its keysegment's frames (`keyframes_token_formatted`
entry whose `segment_key` is the question's `sample_token`); a scene question sees every sample of the
scene (upstream forces `--full-frames`). Without nuScenes tables the scene's frames are rebuilt from the
keysegment windows (tokens at their 0-based indices) and media stays empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kinegraph.benchmarks.hf_tables import config_files, read_config
from kinegraph.benchmarks.nuscenes import CameraFrame, NuScenesTables
from kinegraph.errors import DataError
from kinegraph.types import Media, Sample

BENCHMARK = "tad"
TASKS: tuple[str, ...] = (
    "exact_answer_action",
    "mc_action",
    "action_duration",
    "temp_ordering",
    "temp_action_localize",
    "relative_action_localize",
    "temp_object_localize",
)
SEGMENT_TASKS: tuple[str, ...] = ("exact_answer_action", "mc_action")
LOCALIZATION_TASKS: tuple[str, ...] = ("temp_action_localize", "temp_object_localize")
MIXED_TASKS = frozenset({"exact_answer_action", "mc_action", "temp_ordering", "temp_action_localize"})
EGO_ONLY_TASKS = frozenset({"action_duration", "relative_action_localize"})
NON_EGO_ONLY_TASKS = frozenset({"temp_object_localize"})
EGO_KEYWORD = "the ego vehicle"
CONFIGS: tuple[str, ...] = (*TASKS, "keysegments", "raw_labels")
KEYFRAME_RATE_HZ = 2.0

_REQUIRED = ("idx", "scene_token", "question", "answer")


def is_ego_question(question: str | None) -> bool:
    """Upstream's ego test: the question text contains "the ego vehicle" (lower-cased)."""
    return EGO_KEYWORD in (question or "").lower()


def load_ground_truth(root: str | Path, tasks: Iterable[str] = TASKS) -> dict[str, list[dict[str, Any]]]:
    """Task -> raw rows for every task config present under `root` (what the scorer compares with)."""
    out = {}
    for task in tasks:
        rows = read_config(root, task)
        if rows is not None:
            out[task] = rows
    if not out:
        raise DataError(f"no TAD task config found (expected some of {', '.join(TASKS)})", path=root)
    return out


def scene_index(keysegment_rows: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """scene_token -> its `keysegments` row."""
    return {row["scene_token"]: row for row in keysegment_rows}


def segment_frames(scene: Mapping[str, Any], segment_key: str) -> list[str]:
    """Sample tokens of the keysegment anchored at `segment_key` ([] when the scene has none)."""
    for segment in scene.get("keyframes_token_formatted") or []:
        if segment.get("segment_key") == segment_key:
            return list(segment.get("frames") or [])
    return []


def scene_frames_from_segments(scene: Mapping[str, Any]) -> list[str]:
    """The scene's sample tokens covered by its keysegments, ordered by their 0-based frame index."""
    by_index: dict[int, str] = {}
    tokens = scene.get("keyframes_token_formatted") or []
    indices = scene.get("keyframes_index_formatted") or []
    for tok_group, idx_group in zip(tokens, indices, strict=False):
        for token, index in zip(tok_group.get("frames") or [], idx_group.get("indices") or [], strict=False):
            by_index[int(index)] = token
    return [by_index[i] for i in sorted(by_index)]


def _check_row(row: Mapping[str, Any], task: str, root: Path, lineno: int) -> None:
    where = config_files(root, task)[0]
    for field in _REQUIRED:
        if field not in row or row[field] is None:
            raise DataError("missing", path=where, line=lineno, field=field)
    if task in SEGMENT_TASKS and not row.get("sample_token"):
        raise DataError(
            "missing (segment questions name their keysegment)", path=where, line=lineno, field="sample_token"
        )


def _answer_field(answer: Any) -> str | list[str]:
    return [str(a) for a in answer] if isinstance(answer, list) else str(answer)


def _keyframes(tokens: Sequence[str], tables: NuScenesTables | None) -> list[CameraFrame]:
    """CAM_FRONT keyframes of the sample tokens (upstream: `sample['data']['CAM_FRONT']`)."""
    if tables is None:
        return []
    return [tables.camera_frame(tables.keyframe_token(t, "CAM_FRONT")) for t in tokens]


def _ego_poses(keyframes: Sequence[CameraFrame]) -> dict[str, list] | None:
    """The keyframes' CAM_FRONT ego poses, the input of TCogMap and of the +EP prompts."""
    if not keyframes:
        return None
    return {
        "timestamp_us": [k.ego_pose.timestamp_us for k in keyframes],
        "translation_m": [list(k.ego_pose.translation_m) for k in keyframes],
        "rotation_wxyz": [list(k.ego_pose.rotation_wxyz) for k in keyframes],
    }


def _media(keyframes: Sequence[CameraFrame], tables: NuScenesTables | None) -> Media:
    if tables is None or not keyframes:
        return Media()
    t0 = keyframes[0].timestamp_us
    return Media(
        kind="frames",
        frame_paths=[str(tables.dataroot / k.filename) for k in keyframes],
        timestamps_s=[(k.timestamp_us - t0) / 1e6 for k in keyframes],
        fps=KEYFRAME_RATE_HZ,
    )


def build_sample(
    task: str, row: Mapping[str, Any], scene: Mapping[str, Any] | None, tables: NuScenesTables | None
) -> Sample:
    """One TAD question as a Sample; `metadata["answer_value"]` keeps the stored answer (list of ints)."""
    scene = scene or {}
    scene_token = row["scene_token"]
    if task in SEGMENT_TASKS:
        tokens = segment_frames(scene, row["sample_token"])
    elif tables is not None:
        tokens = [sample["token"] for sample in tables.samples(scene_token)]
    else:
        tokens = scene_frames_from_segments(scene)
    options = row.get("options")
    keyframes = _keyframes(tokens, tables)
    return Sample(
        id=f"{BENCHMARK}/{task}/{row['idx']}",
        benchmark=BENCHMARK,
        group=scene_token,
        question_id=task,
        question=row["question"],
        options=list(options) if options else None,
        answer=_answer_field(row["answer"]),
        media=_media(keyframes, tables),
        context={
            "scene_token": scene_token,
            "sample_token": row.get("sample_token"),
            "frame_tokens": tokens,
            "keysegments": scene.get("keysegments"),
            "keyframes_token_formatted": scene.get("keyframes_token_formatted"),
            "keyframes_index_formatted": scene.get("keyframes_index_formatted"),
            "ego_poses": _ego_poses(keyframes),
        },
        metadata={
            "task": task,
            "level": "segment" if task in SEGMENT_TASKS else "scene",
            "answer_kind": "localization"
            if task in LOCALIZATION_TASKS
            else ("exact" if not options else "letter"),
            "ego": is_ego_question(row["question"]),
            "idx": row["idx"],
            "answer_value": row["answer"],
        },
    )


def load(
    path: str | Path,
    tasks: Iterable[str] = TASKS,
    nuscenes_root: str | Path | None = None,
    nuscenes_version: str = "v1.0-trainval",
) -> list[Sample]:
    """Every question of the TAD task configs under `path`, in config then row order.

    `nuscenes_root` (default: `<path>/nuscenes` when present) resolves frames to CAM_FRONT keyframe files;
    without one media is empty and the sample tokens are in `context["frame_tokens"]`.
    """
    root = Path(path)
    if not root.is_dir():
        raise DataError("not a TAD directory", path=root)
    if nuscenes_root is None and (root / "nuscenes").is_dir():
        nuscenes_root = root / "nuscenes"
    keysegment_rows = read_config(root, "keysegments")
    if keysegment_rows is None:
        raise DataError("no 'keysegments' config (needed for frames and localisation)", path=root)
    scenes = scene_index(keysegment_rows)
    tables = NuScenesTables(nuscenes_root, nuscenes_version) if nuscenes_root is not None else None
    samples = []
    for task, rows in load_ground_truth(root, tasks).items():
        for lineno, row in enumerate(rows, start=1):
            _check_row(row, task, root, lineno)
            samples.append(build_sample(task, row, scenes.get(row["scene_token"]), tables))
    return samples
