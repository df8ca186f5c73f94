from __future__ import annotations

import json
from pathlib import Path

import pytest

from kinegraph.benchmarks.egodyn.extract import extract_nuscenes_clips, selected_entry
from kinegraph.benchmarks.nuscenes.loader import NuScenesTables
from kinegraph.benchmarks.nuscenes.world import plan_scenes, write_nuscenes


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> NuScenesTables:
    """One 6 s scene, tables only (13 keyframes at 2 Hz)."""
    root = tmp_path_factory.mktemp("poses")
    return NuScenesTables(write_nuscenes(root, plan_scenes(1, 9, 2), 9, render=False))


def test_clips_end_at_every_keyframe_with_three_seconds_of_history(
    tables: NuScenesTables, tmp_path: Path
) -> None:
    records = extract_nuscenes_clips(tables, tmp_path)
    samples = tables.samples(tables.scenes[0]["token"])
    # keyframes at 0, 0.5, ..., 2.5 s have < 2.7 s of history; 3.0 s .. 6.0 s make 7 clips
    assert [r["sample_token"] for r in records] == [s["token"] for s in samples[6:]]
    assert [r["clip_id"] for r in records] == [f"clip_{i:05d}" for i in range(7)]
    index = [json.loads(line) for line in (tmp_path / "clips_index.jsonl").read_text().splitlines()]
    assert index == json.loads(json.dumps(records))
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["num_clips"] == 7 and meta["camera"] == "CAM_FRONT" and meta["min_frames"] == 20


def test_max_clips_and_min_frames_as_upstream(tables: NuScenesTables, tmp_path: Path) -> None:
    assert len(extract_nuscenes_clips(tables, tmp_path / "a", max_clips=3)) == 3
    assert extract_nuscenes_clips(tables, tmp_path / "b", min_frames=40) == []  # a 3 s window holds <= 37


def test_selected_entry_keeps_the_signed_abs_max_yaw_rate() -> None:
    features = {
        "signed_max_yaw_rate": -0.3, "max_abs_yaw_rate": 0.3, "min_accel": -1.0, "mean_abs_jerk": 0.5,
        "mean_speed": 7.0, "total_heading_change": 0.4, "max_lateral_accel": 2.1,
    }  # fmt: skip
    entry = selected_entry({"clip_id": "clip_00001", "features": features}, "nuscenes", {"stop_and_go": "no"})
    assert entry == {
        "id": "clip_00001",
        "source": "nuscenes",
        "answers": {"stop_and_go": "no"},
        "features": {
            "max_abs_yaw_rate": -0.3, "min_accel": -1.0, "mean_abs_jerk": 0.5, "mean_speed": 7.0,
            "total_heading_change": 0.4, "max_lateral_accel": 2.1,
        },
    }  # fmt: skip
