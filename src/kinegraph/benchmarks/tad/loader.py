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
from kinegraph.benchmarks.nuscenes.loader import CameraFrame, NuScenesTables
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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_answer(row: Mapping[str, Any], task: str, where: Path, lineno: int) -> None:
    """Localisation answers are lists of keysegment ints; the others text, a letter among the options."""
    answer, options = row["answer"], row.get("options")
    if options is not None and (
        not isinstance(options, list) or not all(isinstance(o, str) and o.strip() for o in options)
    ):
        raise DataError(
            f"expected a list of option strings, got {options!r}", path=where, line=lineno, field="options"
        )
    if task in LOCALIZATION_TASKS:
        if not isinstance(answer, list) or not all(_is_int(v) for v in answer):
            raise DataError(
                f"expected a list of keysegment numbers, got {answer!r}",
                path=where,
                line=lineno,
                field="answer",
            )
        return
    if not isinstance(answer, str) or not answer.strip():
        raise DataError(f"expected answer text, got {answer!r}", path=where, line=lineno, field="answer")
    letters = [o[0] for o in options or [] if len(o) > 1 and o[0].isalpha() and o[1] == "."]
    if letters and answer.strip() not in letters:
        raise DataError(
            f"{answer!r} is not one of the option letters {letters}", path=where, line=lineno, field="answer"
        )


def _check_row(
    row: Mapping[str, Any], task: str, root: Path, lineno: int, scenes: Mapping[str, Any], seen: set[Any]
) -> None:
    where = config_files(root, task)[0]
    for field in _REQUIRED:
        if field not in row or row[field] is None:
            raise DataError("missing", path=where, line=lineno, field=field)
    if not (_is_int(row["idx"]) or isinstance(row["idx"], str)):
        raise DataError(f"expected an integer id, got {row['idx']!r}", path=where, line=lineno, field="idx")
    if row["idx"] in seen:  # the scorer keys the ground truth by idx: a repeat would replace the first
        raise DataError(f"idx {row['idx']!r} appears twice", path=where, line=lineno, field="idx")
    seen.add(row["idx"])
    if not isinstance(row["question"], str) or not row["question"].strip():
        raise DataError("empty", path=where, line=lineno, field="question")
    if not isinstance(row["scene_token"], str) or row["scene_token"] not in scenes:
        raise DataError(
            f"scene {row['scene_token']!r} is not in keysegments",
            path=where,
            line=lineno,
            field="scene_token",
        )
    if task in SEGMENT_TASKS and not row.get("sample_token"):
        raise DataError(
            "missing (segment questions name their keysegment)", path=where, line=lineno, field="sample_token"
        )
    _check_answer(row, task, where, lineno)


def _check_scene(row: Any, where: Path, lineno: int, scenes: Mapping[str, Any]) -> None:
    """A keysegments row: its scene token once, keysegment frames and 0-based integer indices."""
    if not isinstance(row, Mapping) or not isinstance(row.get("scene_token"), str):
        raise DataError("missing", path=where, line=lineno, field="scene_token")
    if row["scene_token"] in scenes:
        raise DataError(
            f"scene {row['scene_token']!r} appears twice", path=where, line=lineno, field="scene_token"
        )
    for field, key, ok in (
        ("keyframes_token_formatted", "frames", lambda v: isinstance(v, str)),
        ("keyframes_index_formatted", "indices", _is_int),
    ):
        groups = row.get(field) or []
        if not isinstance(groups, list) or not all(
            isinstance(g, Mapping)
            and isinstance(g.get(key) or [], list)
            and all(ok(v) for v in g.get(key) or [])
            for g in groups
        ):
            raise DataError(
                f"expected a list of {{{key!r}: [...]}} objects", path=where, line=lineno, field=field
            )
    for group in row.get("keyframes_index_formatted") or []:
        try:
            int(group.get("segment_index_key"))
        except (TypeError, ValueError):
            raise DataError(
                f"segment_index_key {group.get('segment_index_key')!r} is not an integer",
                path=where,
                line=lineno,
                field="keyframes_index_formatted",
            ) from None


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
    scenes: dict[str, Mapping[str, Any]] = {}
    for lineno, scene in enumerate(keysegment_rows, start=1):
        _check_scene(scene, config_files(root, "keysegments")[0], lineno, scenes)
        scenes[scene["scene_token"]] = scene
    tables = NuScenesTables(nuscenes_root, nuscenes_version) if nuscenes_root is not None else None
    samples = []
    for task, rows in load_ground_truth(root, tasks).items():
        if not rows:
            raise DataError("no questions (empty config)", path=config_files(root, task)[0])
        seen: set[Any] = set()
        for lineno, row in enumerate(rows, start=1):
            _check_row(row, task, root, lineno, scenes, seen)
            samples.append(build_sample(task, row, scenes[row["scene_token"]], tables))
    return samples
