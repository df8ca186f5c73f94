"""EgoDyn flow heuristic: Farneback signals on known warps and rendered drives, answer mapping, bad input."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kinegraph.tools.flow import (
    FlowSignals,
    FlowThresholds,
    farneback_flow,
    flow_answers,
    flow_heuristic,
    flow_signals,
    preprocess_gray,
)
from tests.support.vision_scenes import drive, render_clip, render_frame, textured_image, true_flow


def _warp_about_centre(image: np.ndarray, angle_deg: float = 0.0, scale: float = 1.0) -> np.ndarray:
    """Rotate (+ = counter-clockwise on screen) and scale an image about its centre."""
    h, w = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle_deg, scale)
    return cv2.warpAffine(image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def _median_radius_in_band(h: int, w: int) -> float:
    """Median distance to the image centre over rows [0.2 h, 0.85 h)."""
    ys, xs = np.mgrid[int(0.2 * h) : int(0.85 * h), 0:w]
    return float(np.median(np.hypot(xs - w / 2.0, ys - h / 2.0)))


def test_farneback_recovers_a_known_translation() -> None:
    image = textured_image(180, 320)
    shifted = cv2.warpAffine(
        image, np.float32([[1, 0, 2.5], [0, 1, -1.0]]), (320, 180), borderMode=cv2.BORDER_REFLECT
    )
    flow = farneback_flow(preprocess_gray(image), preprocess_gray(shifted))
    inner = flow[30:150, 40:280]
    assert np.median(inner[..., 0]) == pytest.approx(2.5, abs=0.1)
    assert np.median(inner[..., 1]) == pytest.approx(-1.0, abs=0.1)


def test_farneback_matches_the_exact_flow_of_a_rendered_drive() -> None:
    pose_a, pose_b = (0.0, 0.0, 0.0), (0.0, 0.5, float(np.radians(0.5)))
    first, second = render_frame(*pose_a, 320, 180), render_frame(*pose_b, 320, 180)
    exact = true_flow(pose_a, pose_b, 320, 180)[36:153]
    field = farneback_flow(preprocess_gray(first), preprocess_gray(second))[36:153]
    assert np.median(np.hypot(*(field - exact).transpose(2, 0, 1))) < 0.3


def test_signals_are_measured_at_320_px_width() -> None:
    image = textured_image(360, 640)
    shifted = cv2.warpAffine(
        image, np.float32([[1, 0, 6.0], [0, 1, 0]]), (640, 360), borderMode=cv2.BORDER_REFLECT
    )
    signals = flow_signals(np.stack([image, shifted]))
    assert preprocess_gray(image).shape == (180, 320)
    assert signals.magnitude_px[0] == pytest.approx(3.0, abs=0.15)  # 6 px at 640 wide is 3 px at 320


@pytest.mark.parametrize("angle_deg", [1.0, -1.0])
def test_rotation_about_the_centre_gives_the_tangential_turn_score(angle_deg: float) -> None:
    image = textured_image(180, 320)
    signals = flow_signals(np.stack([image, _warp_about_centre(image, angle_deg=angle_deg)]))
    expected_px = np.radians(angle_deg) * _median_radius_in_band(180, 320)  # |flow| = r * theta everywhere
    assert signals.turn_px[0] == pytest.approx(expected_px, rel=0.15)
    assert abs(signals.expansion_px[0]) < 0.1 * abs(expected_px)


@pytest.mark.parametrize("scale", [1.02, 0.98])
def test_zoom_gives_the_radial_expansion_score(scale: float) -> None:
    image = textured_image(180, 320)
    signals = flow_signals(np.stack([image, _warp_about_centre(image, scale=scale)]))
    expected_px = (scale - 1.0) * _median_radius_in_band(180, 320)
    assert signals.expansion_px[0] == pytest.approx(expected_px, rel=0.15)
    assert abs(signals.turn_px[0]) < 0.1 * abs(expected_px)


def test_rgb_frames_give_upstreams_grey_from_bgr() -> None:
    rgb = textured_image(360, 640, seed=3)
    bgr_path = cv2.GaussianBlur(
        cv2.resize(
            cv2.cvtColor(rgb[..., ::-1], cv2.COLOR_BGR2GRAY), (320, 180), interpolation=cv2.INTER_AREA
        ),
        (3, 3),
        0.8,
    )
    np.testing.assert_array_equal(preprocess_gray(rgb), bgr_path)


@pytest.mark.parametrize(("yaw_deg", "answer"), [(1.0, "left"), (-1.0, "right")])
def test_camera_yaw_gives_the_turn_direction(yaw_deg: float, answer: str) -> None:
    result = flow_heuristic(render_clip(drive(10, 0.0, np.radians(yaw_deg))))
    assert np.sign(np.mean(result.signals.turn_px)) == np.sign(yaw_deg)
    assert result.answers["yaw_rate_turn_direction"] == answer


def test_forward_motion_expands_and_backward_motion_contracts() -> None:
    clip = render_clip(drive(6, 1.0))
    forward, backward = flow_heuristic(clip), flow_heuristic(clip[::-1])
    assert np.all(forward.signals.expansion_px > 1.0)
    assert np.all(backward.signals.expansion_px < -1.0)
    # upstream reads the mean expansion (a speed proxy) as the speed trend: driving forward is "accelerating"
    assert forward.answers["speed_trend"] == "accelerating"
    assert backward.answers["speed_trend"] == "decelerating"


def _signals(turn: list[float], expansion: list[float], magnitude: list[float]) -> FlowSignals:
    return FlowSignals(np.array(turn), np.array(expansion), np.array(magnitude))


def test_answers_follow_the_papers_thresholds() -> None:
    signals = _signals([0.0, 0.2, 1.6, 1.4], [-0.3, 0.0, 0.0, 0.0], [2.0, 0.1, 1.6, 2.0])
    assert flow_answers(signals) == {
        "yaw_rate_turn_direction": "left",  # mean 0.8 > 0.05
        "speed_trend": "steady",  # mean -0.075 inside +-0.2
        "significant_heading_change": "yes",  # sum 3.2 > 3.0
        "high_lateral_accel": "yes",  # max 1.6 > 1.5
        "stop_and_go": "yes",  # 0.1 < 0.3 then 1.6 > 1.5
        "brake_then_turn": "yes",  # expansion -0.3 < -0.2 at pair 0, |turn| > 0.05 later
    }


def test_thresholds_are_strict_and_event_rules_need_three_pairs() -> None:
    at_edges = _signals([0.05, 0.05], [-0.3, 0.2], [0.1, 2.0])
    answers = flow_answers(at_edges)
    assert answers["yaw_rate_turn_direction"] == "straight"
    assert answers["speed_trend"] == "steady"
    assert answers["stop_and_go"] == "no"  # the pattern is there, but upstream needs >= 3 pairs
    assert answers["brake_then_turn"] == "no"
    right = flow_answers(_signals([-0.2, -0.2, -0.2], [-0.5, -0.5, -0.5], [1.0, 1.0, 1.0]))
    assert right["yaw_rate_turn_direction"] == "right"
    assert right["speed_trend"] == "decelerating"
    # a turn only before the braking is not brake-then-turn
    assert flow_answers(_signals([0.3, 0.0, 0.0], [0.0, -0.5, 0.0], [1.0] * 3))["brake_then_turn"] == "no"


def test_custom_thresholds_change_the_answers() -> None:
    signals = _signals([0.1, 0.1, 0.1], [0.0] * 3, [1.0] * 3)
    assert flow_answers(signals)["yaw_rate_turn_direction"] == "left"
    assert flow_answers(signals, FlowThresholds(turn_px=0.2))["yaw_rate_turn_direction"] == "straight"


def test_blank_frames_give_zero_signals_and_the_still_answers() -> None:
    result = flow_heuristic(np.full((4, 90, 160, 3), 120, np.uint8))
    assert not np.any(result.signals.turn_px) and not np.any(result.signals.magnitude_px)
    assert result.answers["yaw_rate_turn_direction"] == "straight"
    assert result.answers["speed_trend"] == "steady"


@pytest.mark.parametrize(
    ("frames", "message"),
    [
        (np.zeros((1, 90, 160, 3), np.uint8), "at least 2 frames"),
        ([np.zeros((90, 160, 3), np.uint8), np.zeros((91, 160, 3), np.uint8)], "one shape"),
        (np.zeros((3, 90, 160), np.uint8), r"\(T, H, W, 3\)"),
        (np.zeros((3, 90, 160, 3), np.float32), "uint8"),
    ],
)
def test_bad_clips_raise_clear_errors(frames: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        flow_heuristic(frames)  # type: ignore[arg-type]


def test_answers_need_at_least_one_pair() -> None:
    with pytest.raises(ValueError, match="at least one pair"):
        flow_answers(_signals([], [], []))
