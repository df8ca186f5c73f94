"""EgoDyn VO proxy: yaw and displacement on rendered drives with known motion, fallbacks, answer mapping."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.tools.vo import (
    VOSignals,
    VOThresholds,
    default_intrinsics,
    ols_slope,
    roi_mask,
    visual_odometry,
    vo_answers,
)
from tests.support.vision_scenes import drive, intrinsics, render_clip


@pytest.fixture(scope="module")
def left_turn() -> np.ndarray:
    """Forward 1 m per frame while turning left 1 degree per frame."""
    return render_clip(drive(8, 1.0, np.radians(1.0)))


def test_default_intrinsics_and_roi_are_upstreams() -> None:
    np.testing.assert_allclose(default_intrinsics(1600, 900), [[1440, 0, 800], [0, 1440, 450], [0, 0, 1]])
    mask = roi_mask(100, 50)
    assert mask.sum() == 255 * 60 * 30
    assert mask[10, 20] == 255 and mask[9, 20] == 0 and mask[10, 19] == 0 and mask[39, 79] == 255


def test_left_turn_recovers_the_yaw_per_pair(left_turn: np.ndarray) -> None:
    result = visual_odometry(left_turn)
    assert set(result.signals.method) == {"essential"}
    np.testing.assert_allclose(result.signals.yaw_deg, 1.0, atol=0.25)
    assert result.answers["yaw_rate_turn_direction"] == "left"
    assert result.answers["significant_heading_change"] == "yes"  # 7 x ~1 deg > 1.5 deg
    assert result.answers["high_lateral_accel"] == "yes"  # peak ~1 deg > 0.8 deg


def test_mirrored_drive_gives_the_opposite_yaw(left_turn: np.ndarray) -> None:
    result = visual_odometry(left_turn[:, :, ::-1])
    np.testing.assert_allclose(result.signals.yaw_deg, -1.0, atol=0.25)
    assert result.answers["yaw_rate_turn_direction"] == "right"


def test_straight_drive_has_near_zero_yaw_and_steady_displacement() -> None:
    result = visual_odometry(render_clip(drive(10, 1.2)))
    assert np.max(np.abs(result.signals.yaw_deg)) < 0.2
    assert np.ptp(result.signals.disp_px) < 0.5
    assert result.answers["yaw_rate_turn_direction"] == "straight"
    assert result.answers["speed_trend"] == "steady"
    assert result.answers["stop_and_go"] == "no"


def test_accelerating_drive_grows_the_displacement() -> None:
    clip = render_clip(drive(10, np.linspace(0.3, 2.0, 9)))
    result = visual_odometry(clip)
    assert np.all(np.diff(result.signals.disp_px) > 0)
    assert result.answers["speed_trend"] == "accelerating"
    assert visual_odometry(clip[::-1]).answers["speed_trend"] == "decelerating"


def test_stop_then_go_is_detected_and_still_pairs_are_static() -> None:
    result = visual_odometry(render_clip(drive(10, [1, 1, 0, 0, 0, 1, 1, 1, 1])))
    assert result.signals.method[2:5] == ("static", "static", "static")
    np.testing.assert_array_equal(result.signals.yaw_deg[2:5], 0.0)
    assert result.answers["stop_and_go"] == "yes"


def test_brake_then_turn_is_detected() -> None:
    steps = [1.5, 1.5, 1.5, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]
    turns = np.radians([0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5])
    result = visual_odometry(render_clip(drive(10, steps, turns)))
    assert result.answers["brake_then_turn"] == "yes"
    assert result.answers["yaw_rate_turn_direction"] == "left"


def test_intrinsics_argument_is_used() -> None:
    width, height = 480, 270
    clip = render_clip(drive(5, 1.0, np.radians(1.0)), width, height, focal_scale=0.6)
    with_true_k = visual_odometry(clip, intrinsics(width, height, 0.6)).signals.yaw_deg
    with_default_k = visual_odometry(clip).signals.yaw_deg
    np.testing.assert_allclose(with_true_k, 1.0, atol=0.25)
    assert np.all(with_default_k < 0.85)  # the wrong focal length underestimates the rotation


def test_blank_frames_fall_back_to_zero_motion() -> None:
    result = visual_odometry(np.full((4, 120, 200, 3), 90, np.uint8))
    assert result.signals.method == ("no_features",) * 3
    np.testing.assert_array_equal(result.signals.yaw_deg, 0.0)
    np.testing.assert_array_equal(result.signals.disp_px, 0.0)
    assert result.answers["yaw_rate_turn_direction"] == "straight"


def test_few_tracks_fall_back_to_horizontal_displacement() -> None:
    frame = np.zeros((270, 480, 3), np.uint8)
    for x, y in [(180, 100), (240, 150), (290, 120)]:  # 3 squares = 12 corners, too few for 15 inliers
        frame[y : y + 12, x : x + 12] = 255
    clip = np.stack([frame, np.roll(frame, 5, axis=1), np.roll(frame, 10, axis=1)])
    signals = visual_odometry(clip).signals
    assert set(signals.method) <= {"few_inliers", "no_essential"}
    np.testing.assert_allclose(signals.disp_px, 5.0, atol=0.05)
    np.testing.assert_allclose(
        signals.yaw_deg, 5.0 * 0.06, atol=0.005
    )  # 0.06 deg per px, + = scene moved right


def _signals(yaw: list[float], disp: list[float]) -> VOSignals:
    return VOSignals(np.array(yaw), np.array(disp), ("essential",) * len(yaw))


def test_answers_follow_the_papers_thresholds() -> None:
    answers = vo_answers(_signals([0.0, 0.1, -0.9, 0.0, 0.6], [3.0, 0.4, 2.5, 1.0, 3.2]))
    assert answers == {
        "yaw_rate_turn_direction": "right",  # mean -0.04 < -0.03 and peak 0.9 > 0.15
        "speed_trend": "steady",  # OLS slope 0.1 px per pair inside +-0.3
        "significant_heading_change": "yes",  # sum |yaw| 1.6 > 1.5
        "high_lateral_accel": "yes",  # peak 0.9 > 0.8
        "stop_and_go": "yes",  # 0.4 < 0.5 then 2.5 > 2.0
        "brake_then_turn": "yes",  # 0.4 < 3.0 - 0.4 * 2.02 at pair 1, |yaw| > 0.03 at pair 2
    }


def test_turn_needs_both_mean_and_peak() -> None:
    assert (
        vo_answers(_signals([0.1, 0.1, 0.1], [1.0] * 3))["yaw_rate_turn_direction"] == "straight"
    )  # peak 0.1
    assert vo_answers(_signals([0.2, 0.0, -0.1], [1.0] * 3))["yaw_rate_turn_direction"] == "left"
    assert (
        vo_answers(_signals([0.2, 0.0, -0.2], [1.0] * 3))["yaw_rate_turn_direction"] == "straight"
    )  # mean 0


def test_trend_is_the_ols_slope_of_displacement() -> None:
    assert ols_slope(np.array([1.0, 1.5, 2.0, 2.5])) == pytest.approx(0.5)
    assert vo_answers(_signals([0.0] * 4, [1.0, 1.5, 2.0, 2.5]))["speed_trend"] == "accelerating"
    assert (
        vo_answers(_signals([0.0] * 4, [1.0, 1.3, 1.6, 1.9]))["speed_trend"] == "steady"
    )  # slope 0.3, strict
    assert vo_answers(_signals([0.0] * 4, [2.5, 2.0, 1.5, 1.0]))["speed_trend"] == "decelerating"


def test_short_clips_use_upstreams_defaults() -> None:
    answers = vo_answers(_signals([0.0, 0.5], [0.2, 5.0]))
    assert answers["speed_trend"] == "steady"
    assert answers["stop_and_go"] == "no"
    assert answers["brake_then_turn"] == "no"


def test_braking_needs_a_mean_displacement_above_half_a_pixel() -> None:
    slow = _signals([0.0, 0.0, 0.5], [0.9, 0.1, 0.2])  # mean 0.4 px: upstream never flags braking here
    assert vo_answers(slow)["brake_then_turn"] == "no"
    custom = VOThresholds(brake_drop_fraction=2.0)
    assert vo_answers(_signals([0.0, 0.0, 0.5], [3.0, 0.4, 2.6]), custom)["brake_then_turn"] == "no"


@pytest.mark.parametrize(
    "intrinsics_value",
    [np.eye(2), np.array([[0.0, 0, 1], [0, 0.0, 1], [0, 0, 1]]), np.full((3, 3), np.nan)],
)
def test_bad_intrinsics_raise(intrinsics_value: np.ndarray) -> None:
    with pytest.raises(ValueError, match="intrinsics"):
        visual_odometry(np.zeros((2, 60, 80, 3), np.uint8), intrinsics_value)


def test_bad_clips_raise() -> None:
    with pytest.raises(ValueError, match="at least 2 frames"):
        visual_odometry(np.zeros((1, 60, 80, 3), np.uint8))
    with pytest.raises(ValueError, match="one shape"):
        visual_odometry([np.zeros((60, 80, 3), np.uint8), np.zeros((60, 81, 3), np.uint8)])
