"""EgoDyn loader: the official selected_clips.json and the HF layout, with clear errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kinegraph.benchmarks.egodyn.loader import load
from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK
from kinegraph.errors import DataError


def test_selected_clips_oracle_answers_are_ground_truth(golden):
    samples = load(golden / "egodyn" / "selected_clips.json")
    assert len(samples) == 14_000
    clips_per_source = Counter(s.metadata["source"] for s in samples if s.question_id == "speed_regime")
    assert clips_per_source == {"nuscenes": 500, "carla": 500}
    assert Counter(s.question_id for s in samples) == {q.question_id: 1000 for q in QUESTION_BANK}
    assert all(s.metadata["declared_source"] == s.metadata["source"] for s in samples)
    first = {s.question_id: s.answer for s in samples if s.group == "clip_19765"}
    assert first["braking_intensity"] == "moderate" and first["speed_peak_half"] == "first_half"
    assert len({s.id for s in samples}) == 14_000


@pytest.fixture
def hf_root(tmp_path):
    """A two-clip HF-layout directory written by hand."""
    for source, clip_id, extra in (
        ("nuscenes", "clip_00001", {"frame_paths": [f"samples/CAM_FRONT/f{i}.jpg" for i in range(12)]}),
        ("carla", "DEU_Test-1_1_T-1__Comfort__w0", {}),
    ):
        d = tmp_path / f"{source}_clips"
        (d / "arrays").mkdir(parents=True)
        np.savez(d / "arrays" / f"{clip_id}.npz", speed=np.ones(31))
        index = {
            "clip_id": clip_id,
            "t_start": 0.0,
            "t_end": 3.0,
            "array_ref": f"arrays/{clip_id}.npz",
            "features": {"max_speed": 1.0},
            **extra,
        }
        (d / "clips_index.jsonl").write_text(json.dumps(index) + "\n")
        rows = [
            {
                "qa_id": f"qa_{source}_{q.question_id}",
                "clip_id": clip_id,
                "question_id": q.question_id,
                "question": q.text,
                "answer": q.choices[0],
                "choices": q.choices,
            }
            for q in QUESTION_BANK
        ]
        (d / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return tmp_path


def test_hf_layout(hf_root):
    samples = load(hf_root, nuscenes_root=hf_root / "nusc")
    assert len(samples) == 28
    nus = next(s for s in samples if s.group == "clip_00001")
    assert nus.media.kind == "frames" and len(nus.media.frame_paths) == 12
    assert nus.media.frame_paths[0] == str(hf_root / "nusc" / "samples/CAM_FRONT/f0.jpg")
    assert nus.context["arrays_path"].endswith("nuscenes_clips/arrays/clip_00001.npz")
    carla = next(s for s in samples if s.metadata["source"] == "carla")
    assert carla.media.kind == "video"
    assert carla.media.video_path == str(hf_root / "carla_videos_transferred" / f"{carla.group}.mp4")
    assert carla.id == f"{carla.group}:{carla.question_id}" and carla.metadata["qa_id"].startswith(
        "qa_carla_"
    )


def test_hf_layout_errors_name_file_line_field(hf_root):
    qa = hf_root / "carla_clips" / "qa.jsonl"
    lines = qa.read_text().splitlines()
    qa.write_text("\n".join([lines[0], "{not json", *lines[2:]]))
    with pytest.raises(DataError, match=r"carla_clips/qa.jsonl:2: not valid JSON"):
        load(hf_root)
    qa.write_text(json.dumps({"clip_id": "nope", "question_id": "speed_trend", "answer": "steady"}))
    with pytest.raises(DataError, match=r"qa.jsonl:1: field 'clip_id': clip 'nope' is not in clips_index"):
        load(hf_root)
    qa.write_text(json.dumps({"clip_id": "DEU_Test-1_1_T-1__Comfort__w0", "question_id": "speed_trend"}))
    with pytest.raises(DataError, match=r"qa.jsonl:1: field 'answer'"):
        load(hf_root)
    with pytest.raises(DataError, match="no such file"):
        load(hf_root / "missing")


def test_selected_clips_errors(tmp_path):
    path = tmp_path / "sel.json"
    path.write_text(json.dumps([{"id": "clip_1", "answers": {"speed_trend": "steady"}}]))
    with pytest.raises(DataError, match=r"sel.json: field 'answers': clip #1 \(clip_1\): no answer"):
        load(path)


def test_clips_of_one_scene_without_a_camera_know_their_scene_mates(tmp_path):
    """Windows of one recording share its camera: each clip without a camera object carries the media of
    every such clip of its scene (`scene`, or nuScenes' `scene_token`); a clip with its own camera, or
    alone in its scene, carries none."""
    d = tmp_path / "carla_clips"
    d.mkdir()
    rows = [
        {"clip_id": "a__w0", "scene": "a"},
        {"clip_id": "a__w1", "scene": "a"},
        {
            "clip_id": "a__w2",
            "scene": "a",
            "camera": {"fx": 400, "fy": 400, "cx": 320, "cy": 180, "height_m": 1.5},
        },
        {"clip_id": "b__w0", "scene_token": "b"},
        {"clip_id": "c__w0"},
    ]
    (d / "clips_index.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    q = QUESTION_BANK[0]
    qa = [{"clip_id": r["clip_id"], "question_id": q.question_id, "answer": q.choices[0]} for r in rows]
    (d / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in qa) + "\n")
    by_clip = {s.group: s for s in load(tmp_path)}
    mates = by_clip["a__w0"].context["scene_media"]
    assert [Path(m["video_path"]).name for m in mates] == ["a__w0.mp4", "a__w1.mp4"]
    assert by_clip["a__w1"].context["scene_media"] == mates
    for alone in ("a__w2", "b__w0", "c__w0"):
        assert "scene_media" not in by_clip[alone].context


def test_a_long_recording_lends_from_the_windows_nearest_the_clip():
    """A clip consults at most 8 scene-mates, the windows nearest it in the index (ties: the earlier)."""
    from kinegraph.benchmarks.egodyn.scene_clips import MAX_SCENE_MATES, nearest
    from kinegraph.types import Media, Sample

    windows = [Media(kind="video", video_path=f"drive__w{k}.mp4").model_dump() for k in range(12)]
    clip = Sample(id="c", benchmark="egodyn", group="drive__w5", question="?", media=Media(**windows[5]))
    picked = [Path(m["video_path"]).stem[-2:] for m in nearest(windows, clip)]
    assert MAX_SCENE_MATES == 8
    assert picked == ["w4", "w6", "w3", "w7", "w2", "w8", "w1", "w9"]
    assert windows[5] not in nearest(windows[:3] + [windows[5]], clip)
