from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from kinegraph.benchmarks.nuscenes.loader import NuScenesTables
from kinegraph.benchmarks.nuscenes.world import (
    URBAN_START_MPS,
    generate,
    next_maneuver,
    plan_scenes,
    plan_track,
)
from kinegraph.benchmarks.synthetic import generators
from kinegraph.media import read_image


def _tables(root: Path) -> dict[str, list[dict]]:
    return {p.stem: json.loads(p.read_text()) for p in (root / "v1.0-mini").glob("*.json")}


def test_registered_as_synth_nuscenes() -> None:
    assert generators.get("nuscenes") is generate


def test_writes_the_nuscenes_table_set(tiny_nuscenes: Path) -> None:
    tables = _tables(tiny_nuscenes)
    expected = {"scene", "sample", "sample_data", "ego_pose", "calibrated_sensor", "sensor", "log"}
    expected |= {"category", "attribute", "visibility", "instance", "sample_annotation", "map"}
    assert set(tables) == expected
    assert len(tables["scene"]) == 2
    assert tables["sensor"] == [
        {"token": tables["sensor"][0]["token"], "channel": "CAM_FRONT", "modality": "camera"}
    ]
    calib = tables["calibrated_sensor"][0]
    assert np.allclose(calib["camera_intrinsic"], [[126.6417, 0, 81.6267], [0, 126.6417, 49.1507], [0, 0, 1]])
    # camera -> ego: optical axis (camera +z) along ego +x, camera +x (right) along ego -y
    w, x, y, z = calib["rotation"]
    assert np.allclose([w, x, y, z], [0.5, -0.5, 0.5, -0.5]) or np.allclose(
        [w, x, y, z], [-0.5, 0.5, -0.5, 0.5]
    )


def test_tokens_link_and_chains_are_consistent(tiny_nuscenes: Path) -> None:
    t = _tables(tiny_nuscenes)
    by = {name: {r["token"]: r for r in rows} for name, rows in t.items() if rows and "token" in rows[0]}
    for scene in t["scene"]:
        assert scene["log_token"] in by["log"]
        chain, token = [], scene["first_sample_token"]
        while token:
            chain.append(by["sample"][token])
            token = by["sample"][token]["next"]
        assert chain[-1]["token"] == scene["last_sample_token"]
        assert len(chain) == scene["nbr_samples"] == 19  # 9 s at 2 Hz
        assert all(s["scene_token"] == scene["token"] for s in chain)
    for sd in t["sample_data"]:
        assert sd["ego_pose_token"] in by["ego_pose"]
        assert sd["calibrated_sensor_token"] in by["calibrated_sensor"]
        assert sd["sample_token"] in by["sample"]
        assert by["ego_pose"][sd["ego_pose_token"]]["timestamp"] == sd["timestamp"]
        if sd["next"]:
            assert by["sample_data"][sd["next"]]["prev"] == sd["token"]
            assert by["sample_data"][sd["next"]]["timestamp"] > sd["timestamp"]
        if sd["prev"]:
            assert by["sample_data"][sd["prev"]]["next"] == sd["token"]


def test_keyframes_at_2hz_sweeps_at_12hz_and_sweeps_belong_to_the_next_sample(tiny_nuscenes: Path) -> None:
    t = _tables(tiny_nuscenes)
    samples = {s["token"]: s for s in t["sample"]}
    for scene in t["scene"]:
        frames = sorted(
            (sd for sd in t["sample_data"] if samples[sd["sample_token"]]["scene_token"] == scene["token"]),
            key=lambda sd: sd["timestamp"],
        )
        assert len(frames) == 6 * 18 + 1
        dt_s = np.diff([sd["timestamp"] for sd in frames]) / 1e6
        assert np.all((dt_s > 0.070) & (dt_s < 0.097))
        assert abs(np.mean(dt_s) - 1 / 12) < 0.002
        keys = [sd for sd in frames if sd["is_key_frame"]]
        assert [sd["timestamp"] for sd in keys] == sorted(
            s["timestamp"] for s in t["sample"] if s["scene_token"] == scene["token"]
        )
        assert np.all(np.abs(np.diff([sd["timestamp"] for sd in keys]) / 1e6 - 0.5) < 0.01)
        for sd in frames:
            owner = samples[sd["sample_token"]]
            assert owner["timestamp"] >= sd["timestamp"]
            if sd["is_key_frame"]:
                assert owner["timestamp"] == sd["timestamp"]
                assert sd["filename"].startswith("samples/CAM_FRONT/")
            else:
                assert owner["timestamp"] - sd["timestamp"] < 500_000
                assert sd["filename"].startswith("sweeps/CAM_FRONT/")
            assert sd["filename"].endswith(f"__CAM_FRONT__{sd['timestamp']}.jpg")


def test_frames_are_jpegs_of_the_configured_size(tiny_nuscenes: Path) -> None:
    t = _tables(tiny_nuscenes)
    for sd in t["sample_data"][::25]:
        image = read_image(tiny_nuscenes / sd["filename"])
        assert image.shape == (90, 160, 3) == (sd["height"], sd["width"], 3)


def test_reader_recovers_the_scripted_poses(tiny_nuscenes: Path) -> None:
    nusc = NuScenesTables(tiny_nuscenes)
    specs = plan_scenes(2, 5, 3)  # as the tiny_nuscenes fixture
    truth = json.loads((tiny_nuscenes / "synthetic_truth.json").read_text())["scenes"]
    for scene, spec, scene_truth in zip(nusc.scenes, specs, truth, strict=True):
        frames = nusc.camera_frames(scene["token"])
        track = spec.track
        assert len(frames) == len(track.timestamps_s)
        xy = np.array([f.ego_pose.translation_m[:2] for f in frames])
        yaw = np.array([f.ego_pose.yaw_rad for f in frames])
        t_s = np.array([f.timestamp_us for f in frames]) - frames[0].timestamp_us
        assert np.allclose(xy, track.xy_m, atol=1e-9)
        assert np.allclose(np.unwrap(yaw), track.yaw_rad - (track.yaw_rad[0] - yaw[0]), atol=1e-9)
        assert np.allclose(np.cos(yaw[0]), np.cos(track.yaw_rad[0]))
        assert np.allclose(t_s / 1e6, track.timestamps_s, atol=1e-6)
        assert [s["maneuver"] for s in scene_truth["segments"]] == [m for m, _, _ in track.segments]
        assert scene["description"].endswith(", ".join(m for m, _, _ in track.segments))


def test_planned_scenes_chain_stops_before_starts_and_keep_urban_start_speeds() -> None:
    for k in range(12):
        track = plan_track([k], 6)
        names = [m for m, _, _ in track.segments]
        assert len(names) == 6
        for i, (prev, cur) in enumerate(zip(names, names[1:], strict=False)):
            start_speed = float(np.interp((i + 1) * 3.0, track.timestamps_s, track.speed_mps))
            if cur in ("standing", "stop_and_go"):
                assert prev in ("standing", "emergency_stop")
            else:
                assert prev not in ("standing", "emergency_stop")
                lo, hi = URBAN_START_MPS[cur]
                fits = lo <= start_speed <= hi
                assert fits or (cur, start_speed < 5.0) in (("accelerate", True), ("brake", False)), (
                    cur,
                    start_speed,
                )


def test_next_maneuver_speeds_up_or_slows_down_outside_every_window() -> None:
    rng = np.random.default_rng(0)
    assert next_maneuver(rng, "cruise", 2.0) == "accelerate"
    assert next_maneuver(rng, "cruise", 16.0) == "brake"
    assert next_maneuver(rng, "emergency_stop", 0.0) in ("standing", "stop_and_go")
    fitting = {"cruise", "emergency_stop", "left_turn", "right_turn", "lane_change_left", "lane_change_right"}
    assert {next_maneuver(rng, "cruise", 8.5) for _ in range(200)} == fitting  # not accelerate (5-8 m/s)


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    kwargs = {"width_px": 64, "height_px": 36, "segments_per_scene": 1}
    one = _digest(generate(tmp_path / "a", 1, 11, **kwargs))
    two = _digest(generate(tmp_path / "b", 1, 11, **kwargs))
    other = _digest(generate(tmp_path / "c", 1, 12, **kwargs))
    assert one == two
    assert len(one) == 37 + 13 + 1  # frames, tables, truth
    assert one["v1.0-mini/ego_pose.json"] != other["v1.0-mini/ego_pose.json"]


def test_bad_arguments_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one scene"):
        generate(tmp_path, 0, 1)
    with pytest.raises(ValueError, match="at least one segment"):
        plan_track([1], 0)
