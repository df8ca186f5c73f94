from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from kinegraph.benchmarks.egodyn.questions import load_question_bank
from kinegraph.benchmarks.egodyn.world import generate, nuscenes_segments_for, write_carla_clips
from kinegraph.benchmarks.nuscenes.loader import NuScenesTables
from kinegraph.benchmarks.synthetic.conditions import Conditions
from kinegraph.benchmarks.synthetic.maneuvers import expected_labels
from kinegraph.media import read_video, video_info
from kinegraph.suites import suites
from kinegraph.tools.oracle import label_clip

SIZES = {"width_px": 96, "height_px": 54, "carla_width_px": 96, "carla_height_px": 54}
INDEX_KEYS = [
    "clip_id", "scene_token", "sample_token", "t_start", "t_end", "camera", "frame_tokens", "frame_paths",
    "num_frames", "array_ref", "split", "features",
]  # fmt: skip
QA_KEYS = [
    "qa_id", "clip_id", "question_id", "category", "question", "answer", "answer_type", "choices", "units",
    "label_source", "rule_name", "split", "t_end", "evidence", "metadata",
]  # fmt: skip


@pytest.fixture(scope="module")
def egodyn_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """7 nuScenes clips (one 6 s scene) and 7 CARLA-style clips (two scenarios)."""
    return generate(tmp_path_factory.mktemp("egodyn"), 7, 4, **SIZES)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files}


def test_registered_as_synth_egodyn() -> None:
    assert suites.get("egodyn").generate.resolve() is generate


def test_nuscenes_clip_index_follows_upstream_records(egodyn_root: Path) -> None:
    records = _jsonl(egodyn_root / "nuscenes_clips" / "clips_index.jsonl")
    assert [r["clip_id"] for r in records] == [f"clip_{i:05d}" for i in range(7)]
    nusc = NuScenesTables(egodyn_root / "nuscenes")
    for r in records:
        assert list(r) == INDEX_KEYS
        assert r["camera"] == "CAM_FRONT" and r["split"] == "unsplit"
        assert r["t_end"] - r["t_start"] == pytest.approx(3.0)
        assert r["t_end"] == nusc.get("sample", r["sample_token"])["timestamp"] / 1e6
        assert r["num_frames"] == len(r["frame_tokens"]) == len(r["frame_paths"]) >= 20
        times = [nusc.get("sample_data", t)["timestamp"] / 1e6 for t in r["frame_tokens"]]
        assert all(r["t_start"] <= t <= r["t_end"] for t in times) and times[-1] == r["t_end"]
        assert all((egodyn_root / "nuscenes" / p).is_file() for p in r["frame_paths"])
        assert r["frame_paths"][-1].startswith("samples/CAM_FRONT/")
        assert r["array_ref"] == f"arrays/{r['clip_id']}.npz"
        arrays = _npz(egodyn_root / "nuscenes_clips" / r["array_ref"])
        assert sorted(arrays) == sorted(
            ["timestamps", "position", "yaw", "speed", "accel", "yaw_rate", "jerk"]
        )
        assert arrays["position"].shape == (31, 2) and arrays["jerk"].shape == (31,)
        assert arrays["timestamps"][0] == 0.0 and arrays["timestamps"][-1] == pytest.approx(3.0)
        assert r["features"]["max_speed"] == pytest.approx(float(arrays["speed"].max()))


def test_qa_rows_are_the_oracle_on_the_stored_arrays(egodyn_root: Path) -> None:
    for part in ("nuscenes_clips", "carla_clips"):
        records = {r["clip_id"]: r for r in _jsonl(egodyn_root / part / "clips_index.jsonl")}
        rows = _jsonl(egodyn_root / part / "qa.jsonl")
        assert len(rows) == 14 * len(records)
        assert [r["qa_id"] for r in rows] == [f"qa_{i:08d}" for i in range(len(rows))]
        for clip_id, record in records.items():
            arrays = _npz(egodyn_root / part / record["array_ref"])
            oracle = label_clip(arrays, load_question_bank(), features=record["features"])
            mine = {r["question_id"]: r for r in rows if r["clip_id"] == clip_id}
            assert {q: r["answer"] for q, r in mine.items()} == oracle
            for r in mine.values():
                assert list(r) == QA_KEYS
                assert r["answer"] in r["choices"]
                assert r["t_end"] == record["t_end"]
                assert r["metadata"]["temporal"] == (
                    r["question_id"]
                    in ("speed_trend", "brake_then_turn", "speed_peak_half", "contrastive_sequence")
                )


def test_clips_aligned_with_a_scripted_segment_come_out_as_scripted(egodyn_root: Path) -> None:
    """World -> JPEG dataroot tables -> reader -> kinematics -> oracle recovers the script."""
    truth = json.loads((egodyn_root / "nuscenes" / "synthetic_truth.json").read_text())["scenes"]
    segments = {s["end_us"]: s["maneuver"] for scene in truth for s in scene["segments"]}
    qa = _jsonl(egodyn_root / "nuscenes_clips" / "qa.jsonl")
    checked = 0
    for r in _jsonl(egodyn_root / "nuscenes_clips" / "clips_index.jsonl"):
        end_us = round(r["t_end"] * 1e6)
        maneuver = next((m for t, m in segments.items() if abs(t - end_us) < 10_000), None)
        if maneuver is None:
            continue
        answers = {q["question_id"]: q["answer"] for q in qa if q["clip_id"] == r["clip_id"]}
        expected = expected_labels(maneuver)
        assert {q: answers[q] for q in expected} == expected, maneuver
        checked += 1
    assert checked >= 1


def test_carla_part_has_videos_and_no_frame_paths(egodyn_root: Path) -> None:
    records = _jsonl(egodyn_root / "carla_clips" / "clips_index.jsonl")
    assert len(records) == 7
    for r in records:
        assert not r["clip_id"].startswith("clip_")
        assert "frame_paths" not in r and r["source"] == "carla" and r["t_end"] == 3.0
        scene, behavior, window = r["clip_id"].split("__")
        assert (scene, behavior, window) == (r["scene"], r["behavior"], f"w{r['window_idx']}")
        video = egodyn_root / "carla_videos_simulation" / f"{r['clip_id']}.mp4"
        n_frames, fps = video_info(video)
        assert (n_frames, fps) == (31, 10.0)
        frames, _ = read_video(video, [0, 30])
        assert frames.shape == (2, 54, 96, 3)
        arrays = _npz(egodyn_root / "carla_clips" / r["array_ref"])
        assert np.allclose(arrays["timestamps"], np.arange(31) / 10.0)


def test_selected_clips_lists_every_clip_with_answers_and_six_features(egodyn_root: Path) -> None:
    selected = json.loads((egodyn_root / "selected_clips.json").read_text())
    assert [s["source"] for s in selected] == ["nuscenes"] * 7 + ["carla"] * 7
    index = {
        r["clip_id"]: r
        for part in ("nuscenes_clips", "carla_clips")
        for r in _jsonl(egodyn_root / part / "clips_index.jsonl")
    }
    qa = [
        row for part in ("nuscenes_clips", "carla_clips") for row in _jsonl(egodyn_root / part / "qa.jsonl")
    ]
    for item in selected:
        assert list(item) == ["id", "source", "answers", "features"]
        feats = index[item["id"]]["features"]
        assert item["features"] == {
            "max_abs_yaw_rate": feats["signed_max_yaw_rate"],
            "min_accel": feats["min_accel"],
            "mean_abs_jerk": feats["mean_abs_jerk"],
            "mean_speed": feats["mean_speed"],
            "total_heading_change": feats["total_heading_change"],
            "max_lateral_accel": feats["max_lateral_accel"],
        }
        assert item["answers"] == {r["question_id"]: r["answer"] for r in qa if r["clip_id"] == item["id"]}


def test_same_seed_same_bytes(egodyn_root: Path, tmp_path: Path) -> None:
    again = generate(tmp_path / "again", 7, 4, **SIZES)

    def digest(root: Path) -> dict[str, str]:
        return {
            str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*")
            if p.is_file()
        }

    assert digest(again) == digest(egodyn_root)


def test_scene_length_follows_the_clip_count() -> None:
    assert nuscenes_segments_for(1) == 2
    assert nuscenes_segments_for(7) == 2
    assert nuscenes_segments_for(8) == 3
    assert nuscenes_segments_for(500) == 6
    with pytest.raises(ValueError, match="at least one clip"):
        generate(Path("unused"), 0, 0)


def test_traffic_changes_the_video_and_never_the_egos_motion(tmp_path: Path) -> None:
    def clips(traffic: int) -> Path:
        out = tmp_path / f"traffic-{traffic}"
        plain = Conditions(resolution=(160, 90), jpeg_quality=95, noise_std=0.0, traffic=traffic)
        write_carla_clips(out, 2, 4000, conditions=plain)
        return out

    quiet, busy = clips(0), clips(8)
    names = sorted(p.stem for p in (quiet / "carla_clips" / "arrays").glob("*.npz"))
    assert len(names) == 2
    for name in names:
        truth, again = (_npz(root / "carla_clips" / "arrays" / f"{name}.npz") for root in (quiet, busy))
        assert all(np.array_equal(value, again[key]) for key, value in truth.items())
        videos = (root / "carla_videos_simulation" / f"{name}.mp4" for root in (quiet, busy))
        still, moving = (read_video(video)[0] for video in videos)
        changed = np.abs(moving.astype(int) - still.astype(int)).max(axis=-1) > 40
        assert changed.mean() > 0.002  # vehicles in view ...
        assert changed[:, 60:].any()  # ... standing on the road below the horizon
