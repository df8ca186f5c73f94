from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.synthetic.maneuvers import MANEUVERS, expected_tcogmap, script_maneuver
from kinegraph.tools.tcogmap import (
    PHRASES,
    classify_ego_motion,
    motion_phrase,
    quaternion_text,
    quaternion_yaw_rad,
    raw_pose_lines,
    scene_context,
    scene_raw_pose_context,
    segment_context,
)


def _yaw_quat(yaw_rad: np.ndarray) -> np.ndarray:
    yaw = np.asarray(yaw_rad, dtype=float)
    return np.column_stack([np.cos(yaw / 2), np.zeros_like(yaw), np.zeros_like(yaw), np.sin(yaw / 2)])


def _poses(xy_m: np.ndarray, yaw_rad: np.ndarray, dt_s: float = 0.5):
    n = len(xy_m)
    times_us = 1_530_000_000_000_000 + np.round(np.arange(n) * dt_s * 1e6).astype(np.int64)
    return times_us, np.column_stack([xy_m, np.zeros(n)]), _yaw_quat(yaw_rad)


def _from_speeds(speeds_mps: list[float], yaw_rad: np.ndarray | None = None, dt_s: float = 0.5):
    """Poses along +x whose successive 0.5 s steps have the given speeds."""
    x = np.concatenate([[0.0], np.cumsum(np.asarray(speeds_mps) * dt_s)])
    yaw = np.zeros(len(x)) if yaw_rad is None else yaw_rad
    return _poses(np.column_stack([x, np.zeros(len(x))]), yaw, dt_s)


@pytest.mark.parametrize(
    ("speeds", "yaw_deg", "want"),
    [
        ([0.0, 0.1, 0.0, 0.1, 0.0, 0.0], None, "Stopped"),
        # the forced zero first velocity votes: 3 of 5 below 0.2 m/s -> stopped
        ([0.1, 0.1, 5.0, 5.0], None, "Stopped"),
        ([0.1, 5.0, 5.0, 5.0], None, "Starting"),  # 2 of 5 below: moving; 0.1 -> 5 is a start
        ([8.0] * 6, None, "Straight, constant speed"),
        ([8.0] * 6, [0, 3, 6, 9, 11, 13, 15.0], "Turn left"),
        ([8.0] * 6, [0, -3, -6, -9, -11, -13, -15.0], "Turn right"),
        ([8.0] * 6, [0, 0, 0, 0, 0, 0, 9.9], "Straight, constant speed"),  # 9.9 deg is no turn
        ([8.0, 6.0, 4.0, 2.0, 0.9], None, "Stopping"),
        ([0.9, 2.0, 4.0, 6.0, 1.6], None, "Starting"),
        ([1.2, 2.0, 4.0, 6.0, 1.6], None, "Straight, constant speed"),  # start not below 1.0
    ],
)
def test_algorithm_1_rules(speeds: list[float], yaw_deg: list[float] | None, want: str) -> None:
    yaw = None if yaw_deg is None else np.deg2rad(yaw_deg)
    assert classify_ego_motion(*_from_speeds(speeds, yaw)) == want


def test_yaw_change_wraps_across_pi() -> None:
    yaw = np.deg2rad([179.0, 180.0, -179.0, -178.0, -177.0])  # +6 deg net, not -354
    assert classify_ego_motion(*_from_speeds([8.0] * 4, yaw)) == "Straight, constant speed"
    yaw = np.deg2rad([175.0, 180.0, -175.0, -170.0, -165.0])  # +20 deg net
    assert classify_ego_motion(*_from_speeds([8.0] * 4, yaw)) == "Turn left"


def test_lane_change_rule_fires_on_sideways_motion_in_the_ego_frame() -> None:
    # heading fixed along +y (north) while drifting west (= ego left) at 1 m/s
    n = 7
    t = np.arange(n) * 0.5
    xy = np.column_stack([-1.0 * t, 8.0 * t])
    assert classify_ego_motion(*_poses(xy, np.full(n, np.pi / 2))) == "Change lane to the left"
    xy = np.column_stack([1.0 * t, 8.0 * t])
    assert classify_ego_motion(*_poses(xy, np.full(n, np.pi / 2))) == "Change lane to the right"


def test_duplicate_timestamps_give_zero_velocity_and_short_runs_are_stopped() -> None:
    times, trans, rot = _from_speeds([8.0] * 4)
    times[2] = times[1]  # dt = 0 -> velocity forced to 0 for that step
    trans[2:] -= trans[2] - trans[1]
    assert classify_ego_motion(times, trans, rot) == "Straight, constant speed"
    assert classify_ego_motion(times[:1], trans[:1], rot[:1]) == "Stopped"
    assert segment_context(times[:1], trans[:1], rot[:1]) is None


def test_yaw_follows_pyquaternion_convention() -> None:
    # values printed by pyquaternion 0.9.9 for Quaternion([0.9, 0.1, 0.2, 0.3]).yaw_pitch_roll[0]
    # and Quaternion(axis=[0, 0, 1], angle=2.0).yaw_pitch_roll[0]
    assert quaternion_yaw_rad(np.array([[0.9, 0.1, 0.2, 0.3]]))[0] == pytest.approx(
        0.6270706625890183, abs=1e-12
    )
    assert quaternion_yaw_rad(_yaw_quat([2.0]))[0] == pytest.approx(2.0, abs=1e-12)
    with pytest.raises(ValueError, match="non-zero"):
        quaternion_yaw_rad(np.zeros((1, 4)))


def test_phrases_and_prompt_lines() -> None:
    assert len(PHRASES) == 8 and motion_phrase("Reversing") == "in an undefined state."
    straight = _from_speeds([8.0] * 6)
    assert segment_context(*straight) == (
        "Motion summary: The ego-vehicle is moving forward at a relatively constant speed."
    )
    times = np.concatenate([straight[0], straight[0][-1] + 500_000 * np.arange(1, 5)])
    trans = np.concatenate([straight[1], np.repeat(straight[1][-1:], 4, axis=0)])
    rot = np.concatenate([straight[2], np.repeat(straight[2][-1:], 4, axis=0)])
    lines = scene_context(times, trans, rot, [[0, 1, 2, 3], [4], [6, 7, 8, 9, 10]])
    assert lines == [
        "Motion summary for Frame1 to Frame4: The ego-vehicle is moving forward at a relatively constant "
        "speed.",
        "Motion summary for Frame7 to Frame11: The ego-vehicle is stopped.",
    ]
    with pytest.raises(ValueError, match="keysegment 0 spans frames 9..12, outside the scene's 11 frames"):
        scene_context(times, trans, rot, [[9, 12]])


def test_raw_pose_formats() -> None:
    times = [1531883530449377, 1531883530949214]
    trans = np.array([[411.3039349319818, 1180.8903791765097, 0.0], [412.0, 1181.5, 0.0]])
    rot = np.array([[0.7071067811865476, 0.0, 0.0, -0.7071067811865475], [1.0, 0.0, 0.0, 0.0]])
    assert quaternion_text(rot[0]) == "0.707 +0.000i +0.000j -0.707k"  # pyquaternion's str()
    assert raw_pose_lines(times, trans, rot) == [
        "The ego pose details for Frame1 are translation=[411.3039349319818, 1180.8903791765097, 0.0], "
        "rotation=0.707 +0.000i +0.000j -0.707k, timestamp=1531883530449377",
        "The ego pose details for Frame2 are translation=[412.0, 1181.5, 0.0], "
        "rotation=1.000 +0.000i +0.000j +0.000k, timestamp=1531883530949214",
    ]
    assert scene_raw_pose_context(times, trans, rot, [[0, 1], [1]]) == [
        "The ego pose details for Frame1 to Frame2 are:\n"
        "Frame1: translation=[411.3039349319818, 1180.8903791765097, 0.0], "
        "rotation=0.707 +0.000i +0.000j -0.707k, timestamp=1531883530449377\n"
        "Frame2: translation=[412.0, 1181.5, 0.0], rotation=1.000 +0.000i +0.000j +0.000k, "
        "timestamp=1531883530949214"
    ]


@pytest.mark.parametrize("name", MANEUVERS)
def test_scripted_maneuvers_come_out_as_scripted(name: str, keyframe_poses) -> None:
    hits = total = 0
    for seed in range(10):
        track = script_maneuver(name, seed)
        for offset in (0, 3):  # keyframes at two phases of the 12 Hz sweeps
            total += 1
            motion = classify_ego_motion(*keyframe_poses(track, offset))
            hits += motion_phrase(motion) == expected_tcogmap(name)
    assert hits / total >= 0.95, f"{name}: {hits}/{total}"


def test_bad_poses_are_rejected() -> None:
    times, trans, rot = _from_speeds([8.0] * 3)
    with pytest.raises(ValueError, match=r"want \(N, 3\)"):
        classify_ego_motion(times, trans[:, :2], rot)
    trans[1, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        classify_ego_motion(times, trans, rot)


def test_thresholds_are_an_option_whose_defaults_are_upstreams():
    import numpy as np

    from kinegraph.graphs.catalog import TCOGMAP_UPSTREAM
    from kinegraph.tools.tcogmap import Thresholds, classify_ego_motion

    # upstream's numbers, as Algorithm 1 prints them (TAD spec §4.2), not read from the module under test
    assert dict(TCOGMAP_UPSTREAM) == {
        "stationary_mps": 0.2,
        "stopping_mps": 1.0,
        "turn_yaw_deg": 10.0,
        "lane_change_lateral_mps": 0.4,
        "lane_change_min_forward_mps": 1.0,
    }
    assert Thresholds() == Thresholds(**dict(TCOGMAP_UPSTREAM))
    # 5 m/s forward while the heading turns left by 8 deg: under 10 deg it is straight driving
    yaw = np.deg2rad(np.linspace(0.0, 8.0, 5))
    rotation = np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], axis=1)
    times = np.arange(5) * 500_000.0
    translation = np.stack([np.arange(5) * 2.5, np.zeros(5), np.zeros(5)], axis=1)
    assert classify_ego_motion(times, translation, rotation) == "Straight, constant speed"
    assert classify_ego_motion(times, translation, rotation, Thresholds(turn_yaw_deg=5.0)) == "Turn left"
