from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.synthetic.maneuvers import script_maneuver
from kinegraph.tools.kinematics import (
    ARRAY_KEYS,
    FEATURE_KEYS,
    clip_kinematics,
    clip_kinematics_from_poses,
    smooth,
    window_frame_indices,
    yaw_from_quaternion_wxyz,
)

GRID_S = np.round(np.arange(31) * 0.1, 10)  # frames exactly on EgoDyn's 10 Hz grid: no interpolation error


def _line(speed_mps: float, heading_rad: float, t_s: np.ndarray) -> np.ndarray:
    return np.column_stack([np.cos(heading_rad), np.sin(heading_rad)]) * (speed_mps * t_s)[:, None]


def test_constant_velocity_gives_flat_profiles() -> None:
    kin = clip_kinematics(GRID_S, _line(10.0, 0.5, GRID_S) + [300.0, -40.0], np.full(31, 0.5))
    assert set(kin.arrays()) == set(ARRAY_KEYS) and set(kin.features) == set(FEATURE_KEYS)
    np.testing.assert_allclose(kin.timestamps, GRID_S, atol=1e-12)
    np.testing.assert_allclose(kin.speed, 10.0, atol=1e-9)
    np.testing.assert_allclose(kin.accel, 0.0, atol=1e-8)
    np.testing.assert_allclose(kin.yaw_rate, 0.0, atol=1e-12)
    np.testing.assert_allclose(kin.jerk, 0.0, atol=1e-7)
    assert kin.features["mean_speed"] == pytest.approx(10.0)
    assert kin.features["total_heading_change"] == pytest.approx(0.0, abs=1e-12)


def test_constant_acceleration_is_recovered_away_from_the_edges() -> None:
    x_m = 5.0 * GRID_S + 0.5 * 2.0 * GRID_S**2
    kin = clip_kinematics(GRID_S, np.column_stack([x_m, np.zeros(31)]), np.zeros(31))
    # central differences and an order-2 SG filter are exact on a parabola once the window
    # no longer touches the one-sided end differences
    np.testing.assert_allclose(kin.speed[3:-3], 5.0 + 2.0 * GRID_S[3:-3], atol=1e-9)
    np.testing.assert_allclose(kin.accel[6:-6], 2.0, atol=1e-8)
    np.testing.assert_allclose(kin.jerk[9:-9], 0.0, atol=1e-6)
    assert kin.speed[0] == pytest.approx(5.0 + 0.1, abs=0.05)  # forward difference at the start


def test_yaw_is_unwrapped_and_differentiated() -> None:
    yaw = np.angle(np.exp(1j * (3.0 + 0.5 * GRID_S)))  # wraps through +pi mid-clip
    kin = clip_kinematics(GRID_S, _line(8.0, 0.0, GRID_S), yaw)
    np.testing.assert_allclose(kin.yaw_rate, 0.5, atol=1e-9)
    assert kin.yaw[-1] == pytest.approx(4.5)
    assert kin.features["total_heading_change"] == pytest.approx(1.5)
    assert kin.features["signed_max_yaw_rate"] == pytest.approx(0.5)
    assert kin.features["max_lateral_accel"] == pytest.approx(4.0, abs=1e-6)  # v * |omega|


def test_right_turn_features_keep_the_sign_only_in_signed_max() -> None:
    kin = clip_kinematics(GRID_S, _line(6.0, 0.0, GRID_S), -0.3 * GRID_S)
    assert kin.features["max_abs_yaw_rate"] == pytest.approx(0.3)
    assert kin.features["signed_max_yaw_rate"] == pytest.approx(-0.3)


def test_grid_starts_at_first_frame_and_extrapolates_past_the_last() -> None:
    # 12 Hz sweeps inside a [100.0, 103.0] window: the first lands at 100.05, the last at 102.967
    times = 100.05 + np.arange(36) / 12
    kin = clip_kinematics(times, _line(4.0, 0.0, times - 100.05), np.zeros(36))
    assert len(kin.timestamps) == 31 and kin.timestamps[-1] == pytest.approx(3.0)
    assert times[-1] - times[0] < 3.0
    assert kin.position[-1, 0] == pytest.approx(12.0)  # extrapolated beyond the last frame's 11.67 m


def test_savitzky_golay_settings_and_short_signals() -> None:
    impulse = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    # window 5, order 2: coefficients (-3, 12, 17, 12, -3)/35; 'mirror' folds -3 twice at the ends
    np.testing.assert_allclose(smooth(impulse), np.array([-6, 12, 17, 12, -6]) / 35, atol=1e-12)
    short = np.array([1.0, 5.0, 2.0, 7.0])  # window shrinks to 3 < order + 2: left as is
    np.testing.assert_array_equal(smooth(short), short)


def test_quaternion_yaw_and_pose_entry_point() -> None:
    yaws = np.array([0.0, 2.5, -3.0, 1.0])
    quat = np.column_stack([np.cos(yaws / 2), np.zeros(4), np.zeros(4), np.sin(yaws / 2)])
    np.testing.assert_allclose(yaw_from_quaternion_wxyz(quat), yaws, atol=1e-12)

    track = script_maneuver("left_turn", 7)
    direct = clip_kinematics(track.timestamps_s, track.xy_m, track.yaw_rad)
    times_us = np.round((1.5e9 + track.timestamps_s) * 1e6)
    translation = np.column_stack([track.xy_m, np.full(len(track.xy_m), 1.2)])
    via_poses = clip_kinematics_from_poses(times_us, translation, track.rotation_wxyz())
    np.testing.assert_allclose(via_poses.yaw_rate, direct.yaw_rate, atol=1e-4)
    np.testing.assert_allclose(via_poses.speed, direct.speed, atol=1e-3)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t, xy, yaw: (t[:19], xy[:19], yaw[:19]), "19 frames; EgoDyn needs at least 20"),
        (lambda t, xy, yaw: (t * 0.85, xy, yaw), "spans 2.550 s; EgoDyn needs at least 2.70 s"),
        (lambda t, xy, yaw: (t, np.where(np.arange(31)[:, None] == 7, np.nan, xy), yaw), "xy_m .* frame 7"),
        (lambda t, xy, yaw: (t, xy, np.where(np.arange(31) == 4, np.inf, yaw)), "yaw_rad .* frame 4"),
        (
            lambda t, xy, yaw: (np.where(np.arange(31) == 12, t[11], t), xy, yaw),
            "frame 12 .* is not after frame 11",
        ),
        (lambda t, xy, yaw: (t[::-1], xy, yaw), "must increase strictly"),
        (lambda t, xy, yaw: (t, xy[:, :1], yaw), r"want \(N, 2\)"),
    ],
)
def test_bad_clips_get_clear_errors(mutate, message: str) -> None:
    t, xy, yaw = mutate(GRID_S.copy(), _line(5.0, 0.0, GRID_S), np.zeros(31))
    with pytest.raises(ValueError, match=message):
        clip_kinematics(t, xy, yaw)


def test_bad_quaternions_are_rejected() -> None:
    with pytest.raises(ValueError, match="row 1 is not a finite non-zero quaternion"):
        yaw_from_quaternion_wxyz(np.array([[1.0, 0, 0, 0], [0.0, 0, 0, 0]]))
    with pytest.raises(ValueError, match=r"shape \(N, 4\)"):
        yaw_from_quaternion_wxyz(np.zeros((3, 3)))


def test_backward_window_includes_both_ends() -> None:
    sweeps_s = 1_531_883_530.0 + np.arange(60) * 0.1
    idx = window_frame_indices(sweeps_s, keyframe_time_s=float(sweeps_s[40]))
    assert idx[0] == 10 and idx[-1] == 40  # 3.0 s back, the frame exactly at the start included
    assert len(window_frame_indices(sweeps_s, float(sweeps_s[5]))) == 6  # scene start: a short window
