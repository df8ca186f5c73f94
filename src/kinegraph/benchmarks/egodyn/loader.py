"""EgoDyn-Bench loader: the official layouts -> one Sample per (clip, question).

Card: EgoDyn-Bench (Schäfer et al., ECCV 2026, arXiv 2604.22851). Code Apache-2.0, data CC BY-NC-SA 4.0.
Official repo TUM-AVS/EgoDyn-Bench @ a0c9c01a424cbeb5aa5471a6156354f21111436d; data HF fnc1901/EgoDyn-Bench.
1000 clips (500 nuScenes, 500 CARLA) x 14 questions; 10 evenly spaced frames per clip by default.

Layouts read:
- `selected_clips.json`: the benchmark spec with oracle answers and summary features (no frames).
- HF layout: `{nuscenes,carla}_clips/{clips_index.jsonl, arrays/<clip_id>.npz, qa.jsonl}`; nuScenes frames via
  `frame_paths` under a nuScenes root, CARLA clips via `<carla_video_dir>/<clip_id>.mp4`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kinegraph.benchmarks.egodyn.questions import EgoDynQuestion, load_question_bank
from kinegraph.errors import DataError
from kinegraph.jsonfiles import read_json, read_jsonl
from kinegraph.types import Media, Sample

if TYPE_CHECKING:
    import numpy as np

DEFAULT_NUM_FRAMES = 10  # frames shown per clip, upstream `--num_frames 10`
SOURCES = ("nuscenes", "carla")
# No kinematic summary of a 3 s driving clip (speeds, accelerations, jerks, yaw rates, headings in SI units)
# comes near 1e6; a larger value is a corrupt file, and the oracle would label it (e.g. "highway") as data.
MAX_FEATURE_MAGNITUDE = 1e6


def source_of(clip_id: str) -> str:
    """nuScenes clips are named `clip_NNNNN`; every other id is a CARLA (CommonRoad) scenario."""
    return "nuscenes" if clip_id.startswith("clip_") else "carla"


def _require(obj: Mapping[str, Any], field: str, path: Path, line: int | None) -> Any:
    if obj.get(field) is None:
        raise DataError("missing", path=path, line=line, field=field)
    return obj[field]


def _features(value: Any, path: Path, line: int | None, where: str) -> dict[str, float]:
    """A clip's `features`: an object of finite numbers of plausible magnitude ({} when absent)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(
            f"{where}: expected an object, got {type(value).__name__}", path=path, line=line, field="features"
        )
    for name, number in value.items():
        ok = isinstance(number, int | float) and not isinstance(number, bool)
        if not ok or not math.isfinite(number) or abs(number) > MAX_FEATURE_MAGNITUDE:
            raise DataError(
                f"{where}: {name!r} is {number!r}, expected a finite number below {MAX_FEATURE_MAGNITUDE:g}",
                path=path,
                line=line,
                field="features",
            )
    return value


def _checked_answer(
    answer: Any, question: EgoDynQuestion, choices: list[str] | None, path: Path, line: int | None, where: str
) -> str:
    """The stored oracle label as text; it must be one of the question's choices (or a number)."""
    if isinstance(answer, bool) or not isinstance(answer, str | int | float):
        raise DataError(f"{where}: expected a label, got {answer!r}", path=path, line=line, field="answer")
    text = str(answer)
    if question.answer_type == "numeric":
        try:
            finite = math.isfinite(float(text))
        except ValueError:
            finite = False
        if not finite:
            raise DataError(f"{where}: {text!r} is not a finite number", path=path, line=line, field="answer")
        return text
    allowed = choices or question.choices or []
    if text.lower() not in allowed:
        raise DataError(
            f"{where}: {text!r} is not one of the choices {allowed}", path=path, line=line, field="answer"
        )
    return text


def _choices(value: Any, path: Path, line: int) -> list[str] | None:
    """A qa row's `choices`: a list of non-empty strings, lower-cased (None when absent or empty)."""
    if value is None or value == []:
        return None
    if not isinstance(value, list) or not all(isinstance(c, str) and c.strip() for c in value):
        raise DataError(
            f"expected a list of non-empty strings, got {value!r}", path=path, line=line, field="choices"
        )
    return [c.lower() for c in value]


def _sample(
    *,
    sample_id: str,
    clip_id: str,
    question: EgoDynQuestion,
    answer: str | None,
    text: str | None = None,
    choices: list[str] | None = None,
    media: Media | None = None,
    context: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Sample:
    source = source_of(clip_id)
    return Sample(
        id=sample_id,
        benchmark="egodyn",
        group=clip_id,
        question_id=question.question_id,
        question=text or question.text,
        options=choices or question.choices,
        answer=answer,
        media=media or Media(),
        context=context or {},
        metadata={
            "category": question.category,
            "source": source,
            "temporal": question.temporal,
            "answer_type": question.answer_type,
            "clip_id": clip_id,
            **(extra or {}),
        },
    )


def load_selected_clips(path: str | Path, bank: Mapping[str, EgoDynQuestion] | None = None) -> list[Sample]:
    """`selected_clips.json` -> 14 samples per clip whose answers are the oracle labels."""
    path = Path(path)
    bank = bank or load_question_bank()
    clips = read_json(path)
    if not isinstance(clips, list):
        raise DataError("expected a list of clips", path=path)
    samples: list[Sample] = []
    seen: set[str] = set()
    for i, clip in enumerate(clips):
        where = f"clip #{i + 1}"
        if not isinstance(clip, dict):
            raise DataError(f"{where}: expected an object", path=path)
        for field in ("id", "answers"):
            if field not in clip:
                raise DataError(f"{where}: missing", path=path, field=field)
        clip_id, answers = str(clip["id"]), clip["answers"]
        if not isinstance(answers, dict):
            raise DataError(f"{where} ({clip_id}): expected an object", path=path, field="answers")
        if clip_id in seen:
            raise DataError(f"{where}: clip {clip_id!r} appears twice", path=path, field="id")
        seen.add(clip_id)
        features = _features(clip.get("features"), path, None, f"{where} ({clip_id})")
        for qid, question in bank.items():
            if qid not in answers:
                raise DataError(f"{where} ({clip_id}): no answer for {qid!r}", path=path, field="answers")
            answer = _checked_answer(answers[qid], question, None, path, None, f"{where} ({clip_id}) {qid}")
            samples.append(
                _sample(
                    sample_id=f"{clip_id}:{qid}",
                    clip_id=clip_id,
                    question=question,
                    answer=answer,
                    context={"features": features},
                    extra={"declared_source": clip.get("source")},
                )
            )
    return samples


def _clip_media(clip: Mapping[str, Any], nuscenes_root: Path | None, carla_video_dir: Path | None) -> Media:
    """All of a clip's frames; graphs pick which to show (10 evenly spaced by default, as upstream)."""
    from kinegraph.media import capture_times_s  # here: media imports OpenCV, which scoring never needs

    frame_paths = clip.get("frame_paths")
    if frame_paths:
        root = nuscenes_root or Path(".")
        return Media(
            kind="frames",
            frame_paths=[str(root / p) for p in frame_paths],
            timestamps_s=capture_times_s([str(p) for p in frame_paths]),
        )
    if carla_video_dir is not None:
        # `frame_times_s` (optional, not upstream's): each frame's capture time when the video's are uneven
        times = clip.get("frame_times_s")
        return Media(
            kind="video",
            video_path=str(carla_video_dir / f"{clip['clip_id']}.mp4"),
            timestamps_s=[float(t) for t in times] if times is not None else None,
        )
    return Media()


def _scene_media(
    clips: Mapping[str, Mapping[str, Any]], nuscenes_root: Path | None, carla_video_dir: Path | None
) -> dict[str, list[dict[str, Any]]]:
    """Per clip without a camera object, the media (as JSON) of every such clip of its scene (`scene`, or
    nuScenes' `scene_token`): windows of one recording, one camera, so a value one clip shows (the lens,
    in a turn) serves the others. Clips alone in their scene are left out."""
    scenes: dict[str, list[str]] = {}
    for clip_id, clip in clips.items():
        scene = clip.get("scene") or clip.get("scene_token")
        if isinstance(scene, str) and scene and not isinstance(clip.get("camera"), Mapping):
            scenes.setdefault(scene, []).append(clip_id)
    out: dict[str, list[dict[str, Any]]] = {}
    for members in scenes.values():
        if len(members) < 2:
            continue
        media = [_clip_media(clips[m], nuscenes_root, carla_video_dir).model_dump() for m in members]
        out.update((m, media) for m in members)
    return out


def _frame_times(clip: Mapping[str, Any], index_path: Path, lineno: int) -> None:
    """Refuse a row's optional `frame_times_s` unless it is a list of finite, strictly increasing seconds."""
    times = clip.get("frame_times_s")
    if times is None:
        return
    ok = isinstance(times, list) and len(times) >= 2
    ok = ok and all(
        isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) for t in times
    )
    if not ok or any(b <= a for a, b in zip(times, times[1:], strict=False)):
        raise DataError(
            "expected a list of finite, strictly increasing frame times (s)",
            path=index_path,
            line=lineno,
            field="frame_times_s",
        )


def _clip_camera(
    clip: Mapping[str, Any], index_path: Path, nuscenes_root: Path | None, source: str
) -> dict[str, Any] | None:
    """The clip's camera object: the row's optional `camera` {fx, fy, cx, cy, height_m[, pitch_deg]}, or for
    nuScenes clips the CAM_FRONT `calibrated_sensor` of its first frame. None when the data has neither."""
    from kinegraph.benchmarks.nuscenes.camera import nuscenes_camera_row
    from kinegraph.tools.camera_model import camera_from_row

    camera = clip.get("camera")
    if isinstance(camera, Mapping):
        camera_from_row(
            camera, where=f"{index_path}: clip {clip.get('clip_id')!r} field 'camera'"
        )  # refuse early
        return dict(camera)
    if camera is not None and not isinstance(camera, str):  # a string names the channel (CAM_FRONT)
        raise DataError(
            f"clip {clip.get('clip_id')!r}: expected a camera object or channel name, got {camera!r}",
            path=index_path,
            field="camera",
        )
    tokens = clip.get("frame_tokens")
    if source == "nuscenes" and nuscenes_root is not None and tokens:
        return nuscenes_camera_row(nuscenes_root, str(tokens[0]))
    return None


def _carla_dir(root: Path, domain: str) -> Path:
    """`carla_videos_<domain>`, or the other domain when only that one was downloaded."""
    wanted = root / f"carla_videos_{domain}"
    other = root / f"carla_videos_{'simulation' if domain == 'transferred' else 'transferred'}"
    return other if not wanted.is_dir() and other.is_dir() else wanted


def load_hf(
    root: str | Path,
    *,
    nuscenes_root: str | Path | None = None,
    carla_video_dir: str | Path | None = None,
    carla_domain: Literal["simulation", "transferred"] = "transferred",
    bank: Mapping[str, EgoDynQuestion] | None = None,
) -> list[Sample]:
    """The HF layout under `root` -> one sample per qa.jsonl row.

    nuScenes frames resolve under `nuscenes_root` (default `<root>/nuscenes` when present); CARLA videos
    under `carla_video_dir` (default `<root>/carla_videos_<domain>`; the paper's headline uses the
    Cosmos-transferred domain).
    """
    root = Path(root)
    bank = bank or load_question_bank()
    nuscenes_root = (
        Path(nuscenes_root)
        if nuscenes_root
        else (root / "nuscenes" if (root / "nuscenes").is_dir() else None)
    )
    carla_dir = Path(carla_video_dir) if carla_video_dir else _carla_dir(root, carla_domain)
    samples: list[Sample] = []
    found = False
    for source in SOURCES:
        clip_dir = root / f"{source}_clips"
        index_path, qa_path = clip_dir / "clips_index.jsonl", clip_dir / "qa.jsonl"
        if not index_path.exists() and not qa_path.exists():
            continue
        found = True
        clips: dict[str, dict[str, Any]] = {}
        features: dict[str, dict[str, float]] = {}
        for lineno, clip in read_jsonl(index_path):
            clip_id = str(_require(clip, "clip_id", index_path, lineno))
            if clip_id in clips:
                raise DataError(
                    f"clip {clip_id!r} appears twice", path=index_path, line=lineno, field="clip_id"
                )
            clips[clip_id] = clip
            _frame_times(clip, index_path, lineno)
            features[clip_id] = _features(clip.get("features"), index_path, lineno, f"clip {clip_id!r}")
        scene_media = _scene_media(clips, nuscenes_root, carla_dir if source == "carla" else None)
        per_clip: dict[str, tuple[Media, str]] = {}  # built once, shared by the clip's 14 questions
        cameras: dict[str, dict[str, Any] | None] = {}
        asked: set[tuple[str, str]] = set()
        n_rows = 0
        for lineno, row in read_jsonl(qa_path):
            n_rows += 1
            clip_id = str(_require(row, "clip_id", qa_path, lineno))
            qid = str(_require(row, "question_id", qa_path, lineno))
            if qid not in bank:
                raise DataError(f"unknown question {qid!r}", path=qa_path, line=lineno, field="question_id")
            if (clip_id, qid) in asked:
                raise DataError(
                    f"clip {clip_id!r} asks {qid!r} twice", path=qa_path, line=lineno, field="question_id"
                )
            asked.add((clip_id, qid))
            text = row.get("question")
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise DataError(
                    f"expected question text, got {text!r}", path=qa_path, line=lineno, field="question"
                )
            choices = _choices(row.get("choices"), qa_path, lineno)
            answer = _checked_answer(
                _require(row, "answer", qa_path, lineno), bank[qid], choices, qa_path, lineno, f"{qid}"
            )
            clip = clips.get(clip_id)
            if clip is None:
                raise DataError(
                    f"clip {clip_id!r} is not in {index_path.name}",
                    path=qa_path,
                    line=lineno,
                    field="clip_id",
                )
            if clip_id not in per_clip:
                array_ref = clip.get("array_ref") or f"arrays/{clip_id}.npz"
                media = _clip_media(clip, nuscenes_root, carla_dir if source == "carla" else None)
                per_clip[clip_id] = (media, str(clip_dir / array_ref))
                cameras[clip_id] = _clip_camera(clip, index_path, nuscenes_root, source)
            media, arrays_path = per_clip[clip_id]
            samples.append(
                _sample(
                    sample_id=f"{clip_id}:{qid}",  # qa_ids repeat across the two sources
                    clip_id=clip_id,
                    question=bank[qid],
                    answer=answer,
                    text=text,
                    choices=choices,
                    media=media,
                    context={
                        "arrays_path": arrays_path,
                        "features": features[clip_id],
                        "t_start": clip.get("t_start"),
                        "t_end": clip.get("t_end"),
                        **({"camera": cameras[clip_id]} if cameras[clip_id] else {}),
                        **(
                            {"scene_media": scene_media[clip_id]}
                            if not cameras[clip_id] and clip_id in scene_media
                            else {}
                        ),
                    },
                    extra={"qa_id": row.get("qa_id")},
                )
            )
        if n_rows == 0:
            raise DataError("no questions (empty file)", path=qa_path)
    if not found:
        raise DataError(
            "no EgoDyn layout here: expected selected_clips.json or {nuscenes,carla}_clips/", path=root
        )
    return samples


def load(path: str | Path, **options: Any) -> list[Sample]:
    """A `selected_clips.json` file, or a directory in the HF layout."""
    path = Path(path)
    if path.is_file():
        return load_selected_clips(path, bank=options.get("bank"))
    if not path.exists():
        raise DataError("no such file or directory", path=path)
    return load_hf(path, **options)


def load_arrays(sample: Sample) -> dict[str, np.ndarray] | None:
    """The clip's 31-sample kinematics arrays (`arrays/<clip_id>.npz`), when the layout has them."""
    import numpy as np  # here: scoring stored predictions reads the loader's vocabulary, never its arrays

    path = sample.context.get("arrays_path")
    if not path:
        return None
    with np.load(path) as npz:
        return {key: npz[key] for key in npz.files}
