from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kinegraph.benchmarks.nuscenes.loader import NuScenesTables, quaternion_yaw_rad
from kinegraph.benchmarks.nuscenes.world import generate
from kinegraph.errors import DataError


@pytest.fixture(scope="module")
def dataroot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One 6 s synthetic scene (13 keyframes, 73 CAM_FRONT frames) at 64x36."""
    return generate(tmp_path_factory.mktemp("ns"), 1, 3, width_px=64, height_px=36, segments_per_scene=2)


def _copy(dataroot: Path, tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(dataroot / "v1.0-mini", root / "v1.0-mini")
    return root


def _edit(root: Path, table: str, fn) -> None:
    path = root / "v1.0-mini" / f"{table}.json"
    path.write_text(json.dumps(fn(json.loads(path.read_text()))))


def test_scene_samples_and_camera_chain(dataroot: Path) -> None:
    nusc = NuScenesTables(dataroot)
    (scene,) = nusc.scenes
    samples = nusc.samples(scene["token"])
    assert len(samples) == scene["nbr_samples"] == 13
    frames = nusc.camera_frames(scene["token"])
    assert len(frames) == 73
    assert [f.is_key_frame for f in frames].count(True) == 13
    assert all(f.channel == "CAM_FRONT" for f in frames)
    assert np.all(np.diff([f.timestamp_us for f in frames]) > 0)
    assert frames[0].token == nusc.keyframe_token(samples[0]["token"])
    assert all((dataroot / f.filename).is_file() for f in frames)
    k = nusc.camera_intrinsic(nusc.get("sample_data", frames[0].token)["calibrated_sensor_token"])
    assert k.shape == (3, 3) and k[0, 0] == pytest.approx(1266.417 * 64 / 1600)


def test_window_walks_back_from_a_keyframe_like_egodyn(dataroot: Path) -> None:
    nusc = NuScenesTables(dataroot)
    last = nusc.samples(nusc.scenes[0]["token"])[-1]
    t_end = last["timestamp"] / 1e6
    window = nusc.frames_in_window(nusc.keyframe_token(last["token"]), t_end - 3.0, t_end)
    assert window[-1].timestamp_us == last["timestamp"]
    assert all(t_end - 3.0 <= f.timestamp_s <= t_end for f in window)
    assert 35 <= len(window) <= 37  # ~12 Hz over 3 s
    everything = nusc.camera_frames(nusc.scenes[0]["token"])
    inside = [f for f in everything if t_end - 3.0 <= f.timestamp_s <= t_end]
    assert [f.token for f in window] == [f.token for f in inside]


def test_quaternion_yaw_matches_heading_about_z() -> None:
    for yaw in (-3.0, -0.7, 0.0, 0.4, 2.9):
        assert quaternion_yaw_rad([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]) == pytest.approx(yaw)


def test_channels_are_kept_apart_as_in_real_nuscenes(dataroot: Path, tmp_path: Path) -> None:
    """Real dataroots interleave many sensors; a LIDAR_TOP chain must not leak into CAM_FRONT."""
    root = _copy(dataroot, tmp_path)
    tables = {p.stem: json.loads(p.read_text()) for p in (root / "v1.0-mini").glob("*.json")}
    lidar_sensor = {"token": "lidar-sensor", "channel": "LIDAR_TOP", "modality": "lidar"}
    lidar_calib = {
        "token": "lidar-calib",
        "sensor_token": "lidar-sensor",
        "translation": [0.9, 0.0, 1.8],
        "rotation": [1.0, 0.0, 0.0, 0.0],
        "camera_intrinsic": [],
    }
    samples = tables["sample"]
    lidar_sd = []
    for i, s in enumerate(samples):
        lidar_sd.append(
            {
                "token": f"lidar-{i}",
                "sample_token": s["token"],
                "ego_pose_token": f"lidar-pose-{i}",
                "calibrated_sensor_token": "lidar-calib",
                "timestamp": s["timestamp"] + 1000,
                "fileformat": "pcd",
                "is_key_frame": True,
                "height": 0,
                "width": 0,
                "filename": f"samples/LIDAR_TOP/x__LIDAR_TOP__{s['timestamp'] + 1000}.pcd.bin",
                "prev": f"lidar-{i - 1}" if i else "",
                "next": f"lidar-{i + 1}" if i + 1 < len(samples) else "",
            }
        )
    poses = [
        {
            "token": f"lidar-pose-{i}",
            "timestamp": s["timestamp"] + 1000,
            "rotation": [1, 0, 0, 0],
            "translation": [0, 0, 0],
        }
        for i, s in enumerate(samples)
    ]
    _edit(root, "sensor", lambda rows: rows + [lidar_sensor])
    _edit(root, "calibrated_sensor", lambda rows: rows + [lidar_calib])
    _edit(root, "sample_data", lambda rows: lidar_sd + rows)
    _edit(root, "ego_pose", lambda rows: poses + rows)
    nusc = NuScenesTables(root)
    scene = nusc.scenes[0]["token"]
    assert len(nusc.camera_frames(scene)) == 73
    lidar = nusc.camera_frames(scene, channel="LIDAR_TOP")
    assert [f.token for f in lidar] == [f"lidar-{i}" for i in range(len(samples))]
    assert nusc.keyframe_token(samples[0]["token"], "LIDAR_TOP") == "lidar-0"
    with pytest.raises(DataError, match="camera_intrinsic"):
        nusc.camera_intrinsic("lidar-calib")


def test_missing_table_names_the_file(dataroot: Path, tmp_path: Path) -> None:
    root = _copy(dataroot, tmp_path)
    (root / "v1.0-mini" / "ego_pose.json").unlink()
    with pytest.raises(DataError, match=r"ego_pose\.json.*missing nuScenes table 'ego_pose'"):
        NuScenesTables(root)
    with pytest.raises(DataError, match="v1.0-trainval"):
        NuScenesTables(root, version="v1.0-trainval")


def test_missing_field_names_table_record_and_field(dataroot: Path, tmp_path: Path) -> None:
    root = _copy(dataroot, tmp_path)

    def drop(rows: list[dict]) -> list[dict]:
        del rows[4]["timestamp"]
        return rows

    _edit(root, "sample_data", drop)
    with pytest.raises(DataError, match=r"sample_data\.json: field 'timestamp': record #4"):
        NuScenesTables(root)


def test_dangling_token_and_bad_pose_are_data_errors(dataroot: Path, tmp_path: Path) -> None:
    root = _copy(dataroot, tmp_path)

    def break_pose(rows: list[dict]) -> list[dict]:
        rows[0]["rotation"] = [0.0, 0.0, 0.0, 0.0]
        rows[1]["translation"] = [float("nan"), 0.0, 0.0]
        return rows

    _edit(root, "ego_pose", break_pose)
    nusc = NuScenesTables(root)
    with pytest.raises(DataError, match="no sample record with token 'nope'"):
        nusc.get("sample", "nope")
    poses = nusc.table("ego_pose")
    with pytest.raises(DataError, match="field 'rotation'"):
        nusc.ego_pose(poses[0]["token"])
    with pytest.raises(DataError, match="finite"):
        nusc.ego_pose(poses[1]["token"])
    with pytest.raises(DataError, match="unreadable JSON"):
        (root / "v1.0-mini" / "log.json").write_text("[{")
        NuScenesTables(root)
