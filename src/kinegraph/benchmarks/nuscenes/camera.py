"""A nuScenes camera's intrinsics and mounting (height, pitch, roll) as a clips_index `camera` object.

Read from `calibrated_sensor` through the frame's `sample_data`; the tables are loaded once per dataroot.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.benchmarks.nuscenes.loader import NuScenesTables


@lru_cache(maxsize=4)
def _tables(dataroot: str) -> NuScenesTables | None:
    versions = sorted(p.name for p in Path(dataroot).glob("v1.0-*") if p.is_dir())
    return NuScenesTables(dataroot, versions[0]) if versions else None


def nuscenes_camera_row(dataroot: str | Path, sample_data_token: str) -> dict[str, Any] | None:
    """{fx, fy, cx, cy, height_m, pitch_deg, roll_deg} of the camera that took `sample_data_token`;
    None when the dataroot has no nuScenes tables (a DataError names the table when a token is missing)."""
    from kinegraph.tools.camera_model import camera_from_nuscenes

    tables = _tables(str(dataroot))
    if tables is None:
        return None
    sample_data = tables.get("sample_data", sample_data_token)
    calib = tables.get("calibrated_sensor", sample_data["calibrated_sensor_token"])
    camera = camera_from_nuscenes(
        np.asarray(calib["camera_intrinsic"]), np.asarray(calib["translation"]), np.asarray(calib["rotation"])
    )
    return {
        "fx": camera.fx_px,
        "fy": camera.fy_px,
        "cx": camera.cx_px,
        "cy": camera.cy_px,
        "height_m": camera.height_m,
        "pitch_deg": math.degrees(camera.pitch_rad or 0.0),
        "roll_deg": math.degrees(camera.roll_rad),
    }
