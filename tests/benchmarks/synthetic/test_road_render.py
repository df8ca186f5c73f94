from __future__ import annotations

import cv2
import numpy as np
import pytest

from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_world import build_world


def _grey(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)


def test_nuscenes_front_intrinsics_scale_with_size() -> None:
    full = PinholeCamera.nuscenes_front()
    half = PinholeCamera.nuscenes_front(800, 450)
    assert full.fx_px == pytest.approx(1266.417)
    assert half.fx_px == pytest.approx(633.2085)
    assert half.cy_px == pytest.approx(491.507 / 2)
    with pytest.raises(ValueError, match="too small"):
        PinholeCamera.nuscenes_front(8, 8)


@pytest.mark.parametrize("turn_rad", [0.04, -0.04])
def test_turning_shifts_the_image_against_the_turn(straight_world, small_camera, turn_rad: float) -> None:
    """Yawing left moves the scene right in the image by ~fx * tan(dyaw), and vice versa."""
    renderer = RoadRenderer(straight_world, small_camera)
    before = _grey(renderer.render(60.0, 0.0, 0.0))
    after = _grey(renderer.render(60.0, 0.0, turn_rad))
    (dx, dy), _ = cv2.phaseCorrelate(before, after)
    expected = small_camera.fx_px * np.tan(turn_rad)
    assert dx == pytest.approx(expected, rel=0.25)
    assert abs(dy) < 1.0


def test_forward_motion_expands_the_ground_as_the_camera_model_predicts(straight_world, small_camera) -> None:
    """KLT tracks of ground corners after a 0.5 m step forward move as the level-camera geometry says:
    down by fy*h/(Z-d) - fy*h/Z and away from the principal point sideways."""
    renderer = RoadRenderer(straight_world, small_camera)
    step_m = 0.5
    a = cv2.cvtColor(renderer.render(60.0, 0.0, 0.0), cv2.COLOR_RGB2GRAY)
    b = cv2.cvtColor(renderer.render(60.0 + step_m, 0.0, 0.0), cv2.COLOR_RGB2GRAY)
    cam = small_camera
    mask = np.zeros_like(a)
    mask[int(cam.cy_px) + 25 : -12, 12:-12] = 255  # ground, away from the borders
    start = cv2.goodFeaturesToTrack(a, 300, 0.01, 5, mask=mask)
    end, status, _ = cv2.calcOpticalFlowPyrLK(a, b, start, None, winSize=(15, 15), maxLevel=2)
    p, q = start[status[:, 0] == 1, 0], end[status[:, 0] == 1, 0]
    depth_m = cam.mount_height_m * cam.fy_px / (p[:, 1] - cam.cy_px)
    on_road = np.abs((p[:, 0] - cam.cx_px) * depth_m / cam.fx_px) < 5.0  # off the road stand boxes
    p, q, depth_m = p[on_road], q[on_road], depth_m[on_road]
    assert len(p) >= 40
    expected_v = cam.cy_px + cam.fy_px * cam.mount_height_m / (depth_m - step_m)
    expected_u = cam.cx_px + (p[:, 0] - cam.cx_px) * depth_m / (depth_m - step_m)
    assert np.median(np.abs(q[:, 1] - expected_v)) < 0.3
    assert np.median(np.abs(q[:, 0] - expected_u)) < 0.3
    sideways = np.abs(p[:, 0] - cam.cx_px) > 30
    assert np.mean(np.sign(q[sideways, 0] - p[sideways, 0]) == np.sign(p[sideways, 0] - cam.cx_px)) > 0.9


def test_a_rolled_camera_turns_the_image_as_the_tools_geometry_says(straight_world, small_camera) -> None:
    """The same pose seen by the camera rolled 2.5 deg: road corners land where the tools' ground
    geometry (`ego_r_cam`) projects them for that roll, so a roll the data gives means one thing."""
    from dataclasses import replace

    from kinegraph.tools.camera_model import CameraModel
    from kinegraph.tools.ground_geometry import back_project, normalised_rays, project

    roll = np.radians(2.5)
    level = cv2.cvtColor(
        RoadRenderer(straight_world, small_camera).render(60.0, 0.0, 0.0), cv2.COLOR_RGB2GRAY
    )
    rolled_camera = replace(small_camera, roll_rad=roll)
    rolled = cv2.cvtColor(
        RoadRenderer(straight_world, rolled_camera).render(60.0, 0.0, 0.0), cv2.COLOR_RGB2GRAY
    )
    cam = small_camera
    model = CameraModel(cam.fx_px, cam.fy_px, cam.cx_px, cam.cy_px, cam.mount_height_m, pitch_rad=0.0)
    mask = np.zeros_like(level)
    mask[int(cam.cy_px) + 25 : -12, 20:-20] = 255
    start = cv2.goodFeaturesToTrack(level, 200, 0.01, 5, mask=mask)
    end, status, _ = cv2.calcOpticalFlowPyrLK(level, rolled, start, None, winSize=(15, 15), maxLevel=2)
    p, q = start[status[:, 0] == 1, 0], end[status[:, 0] == 1, 0]
    ground, hit = back_project(normalised_rays(p.astype(float), model), 0.0, model)
    expected = project(ground[hit], 0.0, replace(model, roll_rad=roll))
    assert hit.sum() >= 40
    assert np.median(np.hypot(*(q[hit] - expected).T)) < 0.3
    assert np.median(np.hypot(*(q[hit] - p[hit]).T)) > 1.0  # the roll moved them


def test_same_seed_same_pixels_and_another_seed_differs(small_camera) -> None:
    xy = np.column_stack([np.linspace(0.0, 100.0, 20), np.linspace(0.0, 10.0, 20)])
    yaw = np.full(20, np.arctan2(10.0, 100.0))
    one = RoadRenderer(build_world(xy, yaw, seed=1), small_camera).render(30.0, 3.0, 0.1)
    two = RoadRenderer(build_world(xy, yaw, seed=1), small_camera).render(30.0, 3.0, 0.1)
    other = RoadRenderer(build_world(xy, yaw, seed=2), small_camera).render(30.0, 3.0, 0.1)
    assert one.shape == (180, 320, 3) and one.dtype == np.uint8
    assert np.array_equal(one, two)
    assert not np.array_equal(one, other)


def test_frame_has_sky_above_and_textured_ground_below(straight_world, small_camera) -> None:
    image = RoadRenderer(straight_world, small_camera).render(10.0, 0.0, 0.0)
    sky, ground = image[:10].astype(float), image[-40:].astype(float)
    assert sky[..., 2].mean() > sky[..., 0].mean() + 30  # blue sky
    assert ground.std() > 8  # asphalt detail, not a flat colour
    corners = cv2.goodFeaturesToTrack(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), 200, 0.01, 5)
    assert corners is not None and len(corners) >= 50  # enough for KLT


def test_non_finite_pose_is_rejected(straight_world, small_camera) -> None:
    with pytest.raises(ValueError, match="non-finite"):
        RoadRenderer(straight_world, small_camera).render(float("nan"), 0.0, 0.0)
