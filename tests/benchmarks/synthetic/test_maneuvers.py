from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.egodyn.questions import default_question_bank
from kinegraph.benchmarks.synthetic.maneuvers import (
    MANEUVERS,
    expected_labels,
    expected_tcogmap,
    script_maneuver,
    script_scene,
)

TCOGMAP_PHRASES = {
    "stopped.",
    "turning to the left.",
    "turning to the right.",
    "changing lane to the left.",
    "changing lane to the right.",
    "starting from a stop.",
    "stopping.",
    "moving forward at a relatively constant speed.",
}


def _path_speed_mps(track) -> np.ndarray:
    step_m = np.linalg.norm(np.diff(track.xy_m, axis=0), axis=1)
    return step_m / np.diff(track.timestamps_s)


@pytest.mark.parametrize("name", MANEUVERS)
def test_track_is_sampled_like_nuscenes_sweeps(name: str) -> None:
    track = script_maneuver(name, seed=3)
    dt = np.diff(track.timestamps_s)
    assert track.timestamps_s[0] == 0.0 and track.timestamps_s[-1] <= 3.0
    assert len(track.timestamps_s) == 37  # 3 s at 12 Hz, both ends included
    assert np.all(dt > 1 / 12 - 0.009) and np.all(dt < 1 / 12 + 0.009)
    assert np.std(dt) > 0  # jittered, not a perfect grid
    assert track.xy_m.shape == (37, 2) and track.maneuver == name and track.seed == 3


@pytest.mark.parametrize("name", MANEUVERS)
def test_track_is_physically_consistent(name: str) -> None:
    track = script_maneuver(name, seed=11)
    # the stored speed matches the path's own chord speed (to within the chord/midpoint error)
    mid_speed = 0.5 * (track.speed_mps[1:] + track.speed_mps[:-1])
    assert np.max(np.abs(_path_speed_mps(track) - mid_speed)) < 0.15
    # heading follows the path (no side slip) wherever the car moves
    step = np.diff(track.xy_m, axis=0)
    moving = np.linalg.norm(step, axis=1) > 0.05
    if not moving.any():
        return
    chord_yaw = np.arctan2(step[moving, 1], step[moving, 0])
    mid_yaw = 0.5 * (track.yaw_rad[1:] + track.yaw_rad[:-1])[moving]
    assert np.max(np.abs(np.angle(np.exp(1j * (chord_yaw - mid_yaw))))) < 0.01
    accel = np.diff(track.speed_mps) / np.diff(track.timestamps_s)
    assert np.all(np.abs(accel) < 8.5)  # within tyre limits
    assert np.all(track.speed_mps >= 0)


def test_same_seed_same_track_and_seeds_differ() -> None:
    a, b, c = (script_maneuver("left_turn", s) for s in (5, 5, 6))
    np.testing.assert_array_equal(a.xy_m, b.xy_m)
    np.testing.assert_array_equal(a.timestamps_s, b.timestamps_s)
    assert not np.allclose(a.yaw_rad[-1], c.yaw_rad[-1])


def test_turns_and_lane_changes_go_the_scripted_way() -> None:
    left, right = script_maneuver("left_turn", 1), script_maneuver("right_turn", 1)
    assert left.yaw_rad[-1] > 0.5 and right.yaw_rad[-1] < -0.5  # CCW positive
    for side, sign in (("left", 1), ("right", -1)):
        lc = script_maneuver(f"lane_change_{side}", 2)
        assert 2.9 < sign * lc.xy_m[-1, 1] < 3.8  # one lane over
        assert abs(lc.yaw_rad[-1]) < 0.02  # and straight again


def test_stops_and_starts() -> None:
    stop = script_maneuver("emergency_stop", 4)
    assert stop.speed_mps[0] >= 7 and stop.speed_mps[-1] == 0.0
    go = script_maneuver("stop_and_go", 4)
    assert go.speed_mps[0] == 0.0 and go.speed_mps[-1] > 2.0
    still = script_maneuver("standing", 4)
    assert np.all(still.xy_m == 0.0)


def test_start_pose_and_speed_override() -> None:
    track = script_maneuver("cruise", 1, start_speed_mps=4.0, start_xy_m=(100.0, -5.0), start_yaw_rad=1.0)
    assert track.speed_mps[0] == pytest.approx(4.0)
    np.testing.assert_allclose(track.xy_m[0], [100.0, -5.0])
    assert track.yaw_rad[0] == pytest.approx(1.0)
    rot = track.rotation_wxyz()
    np.testing.assert_allclose(2 * np.arctan2(rot[:, 3], rot[:, 0]), track.yaw_rad, atol=1e-12)


def test_scene_joins_segments_continuously() -> None:
    names = ["cruise", "brake", "emergency_stop", "standing", "stop_and_go", "left_turn", "lane_change_right"]
    scene = script_scene(names, seed=8, segment_s=3.0)
    assert scene.maneuver == "+".join(names)
    assert [s[0] for s in scene.segments] == names and scene.segments[-1][2] == 21.0
    assert len(scene.timestamps_s) == 21 * 12 + 1
    assert np.max(np.abs(np.diff(scene.speed_mps))) < 0.75  # no speed jumps at joins
    assert np.max(np.abs(np.diff(scene.yaw_rad))) < 0.1
    assert np.max(np.linalg.norm(np.diff(scene.xy_m, axis=0), axis=1)) < 1.5
    standing = (scene.timestamps_s > 9.05) & (scene.timestamps_s < 11.95)
    assert np.all(scene.speed_mps[standing] == 0.0)


def test_long_scenes_stay_plausible() -> None:
    scene = script_scene(["accelerate"] * 6 + ["emergency_stop", "standing"], seed=2)
    assert scene.speed_mps.max() < 24.0  # chained accelerations level off near 20 m/s
    stop = (scene.timestamps_s > 18.0) & (scene.timestamps_s <= 21.0)
    assert scene.speed_mps[stop][-1] == 0.0  # and the emergency stop still stops in its segment
    accel = np.diff(scene.speed_mps) / np.diff(scene.timestamps_s)
    assert accel.min() > -9.6


def test_scene_rejects_impossible_joins_and_unknown_names() -> None:
    with pytest.raises(ValueError, match="'standing' cannot follow 'cruise'"):
        script_scene(["cruise", "standing"], 0)
    with pytest.raises(ValueError, match="'cruise' cannot follow 'emergency_stop'"):
        script_scene(["emergency_stop", "cruise"], 0)
    with pytest.raises(ValueError, match="unknown maneuver 'drift'"):
        script_maneuver("drift", 0)
    with pytest.raises(ValueError, match="duration_s"):
        script_maneuver("cruise", 0, duration_s=0.0)
    with pytest.raises(ValueError, match="cannot stop from 30.0 m/s within 3.0 s"):
        script_maneuver("emergency_stop", 0, start_speed_mps=30.0)
    with pytest.raises(ValueError, match="at least one"):
        script_scene([], 0)


@pytest.mark.parametrize("name", MANEUVERS)
def test_expected_labels_are_valid_choices(name: str) -> None:
    bank = default_question_bank()
    labels = expected_labels(name)
    assert len(labels) >= 8
    for qid, label in labels.items():
        assert label in bank[qid].choices
    assert expected_tcogmap(name) in TCOGMAP_PHRASES
