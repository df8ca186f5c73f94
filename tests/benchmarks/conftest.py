"""Tiny nuScenes tables and TAD configs written for the loader tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def write_nuscenes(root: Path, scene_token: str, n_samples: int, version: str = "v1.0-trainval") -> list[str]:
    """One scene of `n_samples` keyframes 0.5 s apart on CAM_FRONT (plus a LIDAR_TOP keyframe each)."""
    tokens = [f"{scene_token}-sample{i}" for i in range(n_samples)]
    samples, sample_data, poses = [], [], []
    for i, tok in enumerate(tokens):
        ts = 1_000_000 + i * 500_000
        samples.append(
            {
                "token": tok,
                "timestamp": ts,
                "scene_token": scene_token,
                "prev": tokens[i - 1] if i else "",
                "next": tokens[i + 1] if i + 1 < n_samples else "",
            }
        )
        for channel, cs in (("CAM_FRONT", "cs-cam"), ("LIDAR_TOP", "cs-lidar")):
            sd = f"{tok}-{channel}"
            poses.append(
                {"token": sd, "translation": [float(i), 0.0, 0.0], "rotation": [1, 0, 0, 0], "timestamp": ts}
            )
            sample_data.append(
                {
                    "token": sd,
                    "sample_token": tok,
                    "ego_pose_token": sd,
                    "calibrated_sensor_token": cs,
                    "timestamp": ts,
                    "is_key_frame": True,
                    "filename": f"samples/{channel}/{sd}.jpg",
                    "prev": "",
                    "next": "",
                }
            )
    tables = {
        "scene": [
            {
                "token": scene_token,
                "name": "scene-0001",
                "log_token": "log",
                "nbr_samples": n_samples,
                "first_sample_token": tokens[0],
                "last_sample_token": tokens[-1],
            }
        ],
        "log": [{"token": "log"}],
        "sample": samples,
        "sample_data": sample_data,
        "ego_pose": poses,
        "sensor": [
            {"token": "cam", "channel": "CAM_FRONT", "modality": "camera"},
            {"token": "lidar", "channel": "LIDAR_TOP", "modality": "lidar"},
        ],
        "calibrated_sensor": [
            {
                "token": cs,
                "sensor_token": sensor,
                "translation": [0, 0, 0],
                "rotation": [1, 0, 0, 0],
                "camera_intrinsic": [],
            }
            for cs, sensor in (("cs-cam", "cam"), ("cs-lidar", "lidar"))
        ],
    }
    (root / version).mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        (root / version / f"{name}.json").write_text(json.dumps(rows))
    return tokens


@pytest.fixture
def nuscenes_scene(tmp_path: Path) -> tuple[Path, list[str]]:
    """A nuScenes dataroot with one 12-keyframe scene `scene-a`, and its sample tokens."""
    root = tmp_path / "nuscenes"
    return root, write_nuscenes(root, "scene-a", 12)
