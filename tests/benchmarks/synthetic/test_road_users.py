"""Other road users: labels derived from trajectories, checked against cases worked out by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kinegraph.benchmarks.stsbench.scenarios import agent_scenario, describe, ego_agent_scenario
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera
from kinegraph.benchmarks.synthetic.road_users import (
    CLASS_SIZE_M,
    Road,
    RoadUser,
    cross,
    drive,
    image_box_px,
    speed_profile,
    traffic_users,
)
from kinegraph.benchmarks.tad.road_users import tad_action

KEYFRAMES_S = np.arange(6) * 0.5  # one STSBench window
NUSCENES = PinholeCamera.nuscenes_front(1600, 900)


def _straight_road() -> Road:
    """The road of an ego path along +x from the origin: arc length = x + S0, lateral offset = y."""
    xy = np.column_stack([np.linspace(0.0, 100.0, 21), np.zeros(21)])
    return Road.around_ego(xy, np.zeros(21), np.zeros(21))


S0 = float(_straight_road().locate(np.zeros((1, 2)))[0][0])  # the arc length at the world origin


def _ego(speed_mps: float, times_s: np.ndarray = KEYFRAMES_S) -> RoadUser:
    return RoadUser("car", times_s, np.column_stack([speed_mps * times_s, 0 * times_s]), 0 * times_s)


def test_the_road_frame_of_a_straight_road_is_the_world_frame():
    road = _straight_road()
    s, d = road.locate(np.array([[12.0, 4.0], [30.0, -1.5]]))
    assert s - S0 == pytest.approx([12.0, 30.0], abs=1e-6) and d == pytest.approx([4.0, -1.5], abs=1e-6)


def test_a_pedestrian_crossing_left_to_right_in_front_of_a_standing_ego():
    road = _straight_road()
    walker = cross(road, "pedestrian", 2.5, s_m=S0 + 12.0, from_m=4.0, to_m=-1.0).sample(KEYFRAMES_S)
    assert walker.xy_m[0] == pytest.approx([12.0, 4.0]) and walker.xy_m[-1] == pytest.approx([12.0, -1.0])
    assert describe(agent_scenario(walker, _ego(0.0), road), is_ego=False) == "Agent is crossing street"
    # By hand: the camera sits 1.7 m ahead of the ego origin, fx = 1266.417, cx = 816.267 (1600x900).
    # Heading -y, so the 0.6 m width lies along x (11.7..12.3 m, z 10.0..10.6 m) and the 0.5 m length
    # along y (3.75..4.25 m): the left edge is y = 4.25 at z = 10.0, the right edge y = 3.75 at z = 10.6.
    x1, _, x2, _ = image_box_px(NUSCENES, np.zeros(2), 0.0, walker.box_corners_m(0))
    assert x1 == pytest.approx(816.267 - 1266.417 * 4.25 / 10.0, abs=0.01)
    assert x2 == pytest.approx(816.267 - 1266.417 * 3.75 / 10.6, abs=0.01)
    last = image_box_px(NUSCENES, np.zeros(2), 0.0, walker.box_corners_m(5))
    assert x2 < 816.267 < 0.5 * (last[0] + last[2])  # left of the image centre, then right of it


def test_a_pedestrian_on_the_verge_stands_and_a_standing_ego_waits_for_a_crossing_one():
    road = _straight_road()
    standing = drive(road, "pedestrian", 2.5, S0 + 15.0, -5.6, np.zeros(51)).sample(KEYFRAMES_S)
    assert agent_scenario(standing, _ego(0.0), road) == "STAND"
    walker = cross(road, "pedestrian", 2.5, s_m=S0 + 9.0, from_m=-1.5, to_m=3.5).sample(KEYFRAMES_S)
    assert describe(ego_agent_scenario(_ego(0.0), walker, road), is_ego=True) == (
        "Ego is waiting for pedestrian to cross"
    )


def test_overtaking_following_and_queueing_relative_to_the_ego():
    road = _straight_road()
    ego = _ego(8.0)
    # Left lane, 5 m ahead, 14 m/s: 15 m gained on the ego in 2.5 s, ending ahead of it.
    passer = drive(road, "car", 2.5, S0 + 5.0, 3.5, np.full(51, 14.0)).sample(KEYFRAMES_S)
    assert describe(agent_scenario(passer, ego, road), is_ego=False) == "Agent is overtaking ego"
    leader = drive(road, "car", 2.5, S0 + 15.0, 0.0, np.full(51, 8.0)).sample(KEYFRAMES_S)
    assert describe(agent_scenario(leader, ego, road), is_ego=False) == "Agent is leading ego"
    assert describe(ego_agent_scenario(ego, leader, road), is_ego=True) == "Ego is following agent"
    parked = drive(road, "car", 2.5, S0 + 8.0, 0.0, np.zeros(51)).sample(KEYFRAMES_S)
    assert (
        describe(ego_agent_scenario(_ego(0.0), parked, road), is_ego=True) == "Ego is stationary behind agent"
    )


SEGMENT_S = np.arange(7) * 0.5  # one TAD keysegment window (3 s at 2 Hz)


@pytest.mark.parametrize(
    ("speed", "lane_shift", "direction", "turn", "expected"),
    [
        ("stop", 0.0, 1, None, "Stopping"),
        ("start", 0.0, 1, None, "Starting"),
        ("still", 0.0, 1, None, "Stopped"),
        ("cruise", 3.5, 1, None, "Change lane to the left"),  # moves to +y, its own left
        ("cruise", -3.5, 1, None, "Change lane to the right"),
        ("cruise", -3.5, -1, None, "Change lane to the left"),  # oncoming: -y is its own left
        ("cruise", 0.0, -1, (0.3, 2.4, -1.3), "Turn right"),
        ("cruise", 0.0, 1, (0.3, 2.4, 1.3), "Turn left"),
        ("cruise", 0.0, -1, None, "Straight, constant speed"),
    ],
)
def test_tad_actions_from_the_vehicles_own_point_of_view(speed, lane_shift, direction, turn, expected):
    road = _straight_road()
    t = np.arange(61) * 0.05
    profile = {
        "stop": speed_profile(t, 8.0, [(0.3, 1.5, 0.0)]),
        "start": speed_profile(t, 0.0, [(1.0, 1.5, 6.0)]),
        "still": np.zeros(61),
        "cruise": np.full(61, 7.0),
    }[speed]
    shifts = ((0.3, 2.4, lane_shift),) if lane_shift else ()
    car = drive(road, "car", 3.0, S0 + 40.0, 0.0, profile, direction, shifts, turn)
    assert tad_action(car.sample(SEGMENT_S), road) == expected


def test_traffic_keeps_to_the_outer_lanes_one_way_each_without_overlaps():
    road = _straight_road()
    users = traffic_users(road, 6.0, S0, (-1, 1), 8.0, 7, np.random.default_rng(3))
    assert len(users) == 7
    times = np.arange(0.0, 6.01, 0.5)
    right = [u.sample(times) for u in users if u.xy_m[0, 1] < 0]
    left = [u.sample(times) for u in users if u.xy_m[0, 1] > 0]
    assert (len(right), len(left)) == (4, 3)  # the odd one drives the ego's way
    for lane, users_there, direction in ((-3.5, right, 1.0), (3.5, left, -1.0)):
        for user in users_there:
            assert user.xy_m[:, 1] == pytest.approx(np.full(len(times), lane), abs=1e-6)  # a straight road
            assert np.all(direction * np.diff(user.xy_m[:, 0]) > 0)
        # one speed per lane, so the gaps at the start hold: bumper to bumper at least 8 m apart
        xs = sorted((u.xy_m[0, 0], CLASS_SIZE_M[u.category][0]) for u in users_there)
        for (x_a, length_a), (x_b, length_b) in itertools.pairwise(xs):
            assert 8.0 <= x_b - x_a - 0.5 * (length_a + length_b) <= 30.0
        speeds = {round(float(np.median(u.speed_mps())), 6) for u in users_there}
        assert len(speeds) == 1
    assert 4.0 <= float(np.median(right[0].speed_mps())) <= 12.0  # near the ego's 8 m/s
    assert 7.0 <= float(np.median(left[0].speed_mps())) <= 12.0
    assert traffic_users(road, 6.0, S0, (-1, 1), 8.0, 0, np.random.default_rng(3)) == []
