"""Camera models from data rows, nuScenes calibrations, options and defaults; bad values refused."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from kinegraph.benchmarks.nuscenes.world import camera_rotation_wxyz
from kinegraph.tools.camera_model import (
    CameraModel,
    camera_from_nuscenes,
    camera_from_options,
    camera_from_row,
    carla_default,
)
from kinegraph.tools.ground_geometry import back_project, normalised_rays, project


def test_carla_default_is_a_90_degree_camera_at_1_6_m() -> None:
    camera = carla_default(1280, 720)
    np.testing.assert_allclose(
        [camera.fx_px, camera.fy_px, camera.cx_px, camera.cy_px], [640, 640, 639.5, 359.5]
    )
    assert camera.height_m == 1.6 and camera.pitch_rad is None and camera.source == "default"


def test_options_override_the_defaults_and_say_so() -> None:
    camera = camera_from_options(1280, 720, focal_px=900, camera_height_m=2.0, pitch_deg=3.0)
    assert (camera.fx_px, camera.height_m, camera.source) == (900.0, 2.0, "options")
    assert camera.pitch_rad == pytest.approx(math.radians(3.0))
    assert camera_from_options(1280, 720).source == "default"


def test_row_with_every_field() -> None:
    row = {"fx": 1000, "fy": 1001, "cx": 640, "cy": 360, "height_m": 1.4, "pitch_deg": 2.5, "roll_deg": -1}
    camera = camera_from_row(row)
    assert camera.fy_px == 1001 and camera.source == "data"
    assert math.degrees(camera.pitch_rad) == pytest.approx(2.5) and math.degrees(
        camera.roll_rad
    ) == pytest.approx(-1)


def test_a_roll_left_out_is_to_be_measured_and_one_given_is_kept() -> None:
    """CARLA-style calibrations leave the roll out: the estimator must measure it, and says which it
    did; a row or calibration that gives it is taken as given."""
    row = {"fx": 1000, "fy": 1000, "cx": 640, "cy": 360, "height_m": 1.4, "pitch_deg": 2.5}
    left_out = camera_from_row(row)
    assert left_out.roll_rad is None and left_out.describe()["values"]["roll"] == "estimated"
    assert left_out.describe()["roll_deg"] is None
    given = camera_from_row({**row, "roll_deg": 1.5})
    assert given.describe()["values"]["roll"] == "given" and given.describe()["roll_deg"] == 1.5
    assert carla_default(1280, 720).roll_rad is None
    level = replace(left_out, roll_rad=0.0, assumed=frozenset({"roll"}))
    assert level.describe()["values"]["roll"] == "assumed"
    with pytest.raises(ValueError, match="roll must be within"):
        camera_from_row({**row, "roll_deg": 40})


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"fx": 1000, "fy": 1000, "cx": 640, "cy": 360}, "'height_m' is missing"),
        ({"fx": "wide", "fy": 1000, "cx": 640, "cy": 360, "height_m": 1.5}, "'fx' must be a number"),
        (
            {"fx": 1000, "fy": 1000, "cx": 640, "cy": 360, "height_m": float("nan")},
            "'height_m' must be finite",
        ),
        ({"fx": 0, "fy": 1000, "cx": 640, "cy": 360, "height_m": 1.5}, "focal lengths must be positive"),
        ({"fx": 1000, "fy": 1000, "cx": 640, "cy": 360, "height_m": 0.0}, "height_m must be in"),
        (
            {"fx": 1000, "fy": 1000, "cx": 640, "cy": 360, "height_m": 1.5, "pitch_deg": 45},
            "pitch must be within",
        ),
    ],
)
def test_bad_rows_name_the_field(row: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        camera_from_row(row, where="clips_index.jsonl:3 camera")
    assert str(info.value).startswith("clips_index.jsonl:3 camera")


def test_nuscenes_calibration_gives_height_pitch_and_roll() -> None:
    k = np.array([[1266.4, 0.0, 816.3], [0.0, 1266.4, 491.5], [0.0, 0.0, 1.0]])
    level = camera_from_nuscenes(k, np.array([1.70, 0.016, 1.51]), np.array(camera_rotation_wxyz()))
    assert level.height_m == 1.51 and level.fx_px == 1266.4 and level.cy_px == 491.5
    assert level.pitch_rad == pytest.approx(0.0, abs=1e-9) and level.roll_rad == pytest.approx(0.0, abs=1e-9)
    # the same camera tilted 3 deg down about the ego's left axis
    from scipy.spatial.transform import Rotation

    ego_r_cam = Rotation.from_euler("y", 3.0, degrees=True) * Rotation.from_quat(
        np.array(camera_rotation_wxyz())[[1, 2, 3, 0]]
    )
    x, y, z, w = ego_r_cam.as_quat()
    tilted = camera_from_nuscenes(k, np.array([1.7, 0.0, 1.51]), np.array([w, x, y, z]))
    assert math.degrees(tilted.pitch_rad) == pytest.approx(3.0, abs=1e-6)


def test_projection_round_trip_and_horizon() -> None:
    camera = CameraModel(800.0, 800.0, 640.0, 360.0, 1.5, math.radians(2.0))
    pixels = np.array([[640.0, 500.0], [100.0, 700.0], [1200.0, 420.0], [640.0, 300.0]])
    ground, hit = back_project(normalised_rays(pixels, camera), camera.pitch_rad, camera)
    assert hit.tolist() == [True, True, True, False]  # the last pixel is above the horizon
    np.testing.assert_allclose(project(ground[:3], camera.pitch_rad, camera), pixels[:3], atol=1e-9)
    # a point straight ahead at distance d: row offset = f * (tan(atan(h/d) - pitch)) below the axis
    d = 10.0
    row = project(np.array([[d, 0.0]]), camera.pitch_rad, camera)[0, 1]
    assert row == pytest.approx(360.0 + 800.0 * math.tan(math.atan(1.5 / d) - math.radians(2.0)))
