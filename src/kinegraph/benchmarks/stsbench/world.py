"""Synthetic STSBench: scripted scenarios over 6 keyframes (2.5 s at 2 Hz), written as STSnu.json with frames.

Ego records are one scripted ego maneuver; their scenario is the maneuver's type and the negatives the
other ego types. With `agents` >= 1 the records also cover other road users, drawn into the CAM_FRONT
frames as boxes: agent records (a car overtaking or leading the ego, turning, stopping; a pedestrian
crossing or standing), ego-agent records (the ego following, overtaking or queueing behind a car,
waiting for a crossing pedestrian) and, with `agents` >= 2, agent-agent records (a car following or
overtaking another, two pedestrians walking together). Their scenario types are derived from the
trajectories (`stsbench_scenarios`), with upstream's names and negatives. The actor blocks follow
`vqa_extractor/hf.py`; the synthetic rig has one camera, so `camera.cam` is CAM_FRONT and `camera.bb2d`
(1600x900 pixels, as nuScenes) is null in a frame that does not show the agent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.nuscenes.world import token
from kinegraph.benchmarks.stsbench.loader import KEYFRAME_RATE_HZ
from kinegraph.benchmarks.stsbench.scenarios import (
    agent_agent_scenario,
    agent_scenario,
    describe,
    ego_agent_scenario,
    negatives,
)
from kinegraph.benchmarks.synthetic.maneuvers import EgoTrack, script_maneuver
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_users import (
    CLASS_SIZE_M,
    FINE_DT_S,
    Road,
    RoadUser,
    cross,
    drive,
    image_box_px,
    movers_at,
    speed_profile,
)
from kinegraph.benchmarks.synthetic.road_world import LANE_WIDTH_M, build_world
from kinegraph.media import write_image

WINDOW_S = 2.5  # 6 keyframes at 2 Hz
STS_EGO = {
    "accelerate": "Ego is accelerating",
    "stop_and_go": "Ego is accelerating",
    "brake": "Ego is decelerating",
    "emergency_stop": "Ego is stopping",
    "left_turn": "Ego is turning left",
    "right_turn": "Ego is turning right",
    "lane_change_left": "Ego is changing lanes",
    "lane_change_right": "Ego is changing lanes",
}
STS_EGO_TYPES = (
    "Ego is accelerating",
    "Ego is decelerating",
    "Ego is changing lanes",
    "Ego is turning left",
    "Ego is turning right",
    "Ego is performing u-turn",
    "Ego is reversing",
    "Ego is stopping",
)
_NUSCENES_CAMERA = PinholeCamera.nuscenes_front(1600, 900)  # bb2d is in nuScenes image pixels


def _t() -> np.ndarray:
    return np.arange(int(round(WINDOW_S / FINE_DT_S)) + 1) * FINE_DT_S


def _const(v_mps: float) -> np.ndarray:
    return np.full(len(_t()), v_mps)


def _stopping(v0_mps: float) -> np.ndarray:
    return speed_profile(_t(), v0_mps, [(0.2, 1.6, 0.0)])


def _turn(rng: np.random.Generator, side: float) -> tuple[float, float, float]:
    """(start_s, duration_s, heading change): about 70 degrees to the left (+1) or right (-1)."""
    return 0.3, 2.0, side * rng.uniform(1.1, 1.3)


# Each script: (ego maneuver, group, builder(road, s_ego_m, v_ego_mps, rng) -> road users, actor first).
Script = tuple[str, str, Callable[[Road, float, float, np.random.Generator], list[RoadUser]]]
_LANE = LANE_WIDTH_M
_SCRIPTS: dict[str, Script] = {
    "car overtakes ego": ("cruise", "agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + g.uniform(5, 7), _LANE, _const(v + g.uniform(5, 7)))]),
    "car leads ego": ("cruise", "agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + g.uniform(12, 18), 0.0, _const(v))]),
    "car stops": ("standing", "agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + g.uniform(10, 14), _LANE, _stopping(g.uniform(7, 9)))]),
    "car turns left": ("standing", "agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + g.uniform(14, 18), 0.0, _const(6.0), turn=_turn(g, 1.0))]),
    "car turns right": ("standing", "agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + g.uniform(14, 18), 0.0, _const(6.0), turn=_turn(g, -1.0))]),
    "pedestrian crosses": ("standing", "agent", lambda r, s, v, g: [
        cross(r, "pedestrian", WINDOW_S, s + g.uniform(10, 13), *g.permutation([4.0, -1.0]))]),
    "pedestrian stands": ("standing", "agent", lambda r, s, v, g: [
        drive(r, "pedestrian", WINDOW_S, s + g.uniform(14, 18), -1.6 * _LANE, _const(0.0))]),
    "ego follows car": ("cruise", "ego_agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + g.uniform(12, 18), 0.0, _const(v))]),
    "ego overtakes car": ("cruise", "ego_agent", lambda r, s, v, g: [
        drive(r, "truck", WINDOW_S, s + 0.5 * (v - 1.5) * WINDOW_S + 4.0, _LANE, _const(1.5))]),
    "ego queues behind car": ("standing", "ego_agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + g.uniform(7, 10), 0.0, _const(0.0))]),
    "ego waits for pedestrian": ("standing", "ego_agent", lambda r, s, v, g: [
        cross(r, "pedestrian", WINDOW_S, s + g.uniform(8, 11), -1.5, 3.5)]),
    "car follows car": ("standing", "agent_agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + 10.0, _LANE, _const(7.0)),
        drive(r, "bus", WINDOW_S, s + 10.0 + g.uniform(12, 15), _LANE, _const(7.0))]),
    "car overtakes car": ("standing", "agent_agent", lambda r, s, v, g: [
        drive(r, "car", WINDOW_S, s + 10.0, 0.0, _const(9.0)),
        drive(r, "truck", WINDOW_S, s + 16.0, _LANE, _const(3.0))]),
    "pedestrians walk together": ("standing", "agent_agent", lambda r, s, v, g: [
        drive(r, "pedestrian", WINDOW_S, s + 15.0, -1.6 * _LANE, _const(1.3)),
        drive(r, "pedestrian", WINDOW_S, s + 15.0, -1.6 * _LANE - 0.9, _const(1.3))]),
}  # fmt: skip
SCRIPTS_FOR_AGENTS = {
    1: tuple(k for k, (_, group, _) in _SCRIPTS.items() if group != "agent_agent"),
    2: tuple(_SCRIPTS),
}


def _ego_user(track: EgoTrack) -> RoadUser:
    return RoadUser("car", track.timestamps_s, track.xy_m, track.yaw_rad)


def _actor_block(user: RoadUser, ego: EgoTrack, tokens: list[str]) -> dict:
    """An `agent` / `other_agent` block as hf.py writes it (ego-frame `lidar` coordinates)."""
    boxes = [
        image_box_px(_NUSCENES_CAMERA, ego.xy_m[i], ego.yaw_rad[i], user.box_corners_m(i))
        for i in range(len(ego.timestamps_s))
    ]
    length, width, height = CLASS_SIZE_M[user.category]
    c, s = np.cos(ego.yaw_rad), np.sin(ego.yaw_rad)
    rel = user.xy_m - ego.xy_m
    local = np.stack([c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1]], axis=1)
    speed = user.speed_mps()
    return {
        "global": {"xyz": [[float(x), float(y), 0.0] for x, y in user.xy_m], "yaw": user.yaw_rad.tolist()},
        "lidar": {
            "xyz": [[float(x), float(y), 0.0] for x, y in local],
            "wlh": [[width, length, height]] * len(local),
            "yaw": (user.yaw_rad - ego.yaw_rad).tolist(),
            "velocity": speed.tolist(),
        },
        "camera": {"bb2d": boxes, "cam": ["CAM_FRONT"] * len(boxes)},
        "agent_token": tokens,
    }


def _scenario(group: str, users: list[RoadUser], ego: RoadUser, road: Road) -> str:
    """The record's scenario type derived from the trajectories (ValueError when none applies)."""
    if group == "agent":
        found = agent_scenario(users[0], ego, road)
    elif group == "ego_agent":
        found = ego_agent_scenario(ego, users[0], road)
    else:
        found = agent_agent_scenario(users[0], users[1], road)
    if found is None:
        raise ValueError(f"no {group} scenario type fits the trajectories")
    return found


def _frames(
    root: Path, names: list[str], track: EgoTrack, users: list[RoadUser], seed: int, size: tuple[int, int]
):
    world_seed = int(token(seed, "sts-world", names[0])[:8], 16)
    world = build_world(track.xy_m, track.yaw_rad, world_seed, max_raster_px=1500)  # small frames
    renderer = RoadRenderer(world, PinholeCamera.nuscenes_front(*size))
    for i, name in enumerate(names):
        pose = (float(track.xy_m[i, 0]), float(track.xy_m[i, 1]), float(track.yaw_rad[i]))
        write_image(root / name, renderer.render(*pose, movers=movers_at(users, i)))


def _ego_block(track: EgoTrack, seed: int, i: int) -> dict:
    return {
        "xyz": [[float(x), float(y), 0.0] for x, y in track.xy_m],
        "yaw": [float(v) for v in track.yaw_rad],
        "velocity": [float(v) for v in track.speed_mps],
        "ego_pose_token": [token(seed, "sts", i, j) for j in range(len(track.timestamps_s))],
    }


def _agent_record(root: Path, i: int, script: str, seed: int, size: tuple[int, int]) -> dict:
    maneuver, group, build = _SCRIPTS[script]
    rng = np.random.default_rng([seed, i, 1])
    track = script_maneuver(maneuver, seed + i, duration_s=WINDOW_S, rate_hz=KEYFRAME_RATE_HZ)
    road = Road.around_ego(track.xy_m, track.yaw_rad, np.zeros(len(track.xy_m)))
    s_ego = float(road.locate(track.xy_m[:1])[0][0])
    users = [u.sample(track.timestamps_s) for u in build(road, s_ego, float(track.speed_mps[0]), rng)]
    try:
        scenario = _scenario(group, users, _ego_user(track), road)
    except ValueError as exc:
        raise ValueError(f"record {i} ({script}): {exc}") from None
    is_ego = group == "ego_agent"
    names = [f"samples/CAM_FRONT/sts_{i:03d}_{j}.jpg" for j in range(len(track.timestamps_s))]
    _frames(root, names, track, users, seed, size)
    record: dict = {
        "scenario": describe(scenario, is_ego),
        "negative_scenarios": ",".join(negatives(scenario, is_ego)),
        "sensors": {"CAM_FRONT": names},
    }
    if is_ego:
        record["ego"] = _ego_block(track, seed, i)
    blocks = ("other_agent",) if is_ego else ("agent", "other_agent")
    for key, user in zip(blocks, users, strict=False):
        record[key] = _actor_block(
            user, track, [token(seed, "sts-agent", i, key, j) for j in range(len(names))]
        )
    if record.get("agent", record.get("other_agent"))["camera"]["bb2d"][0] is None:
        raise ValueError(f"record {i} ({script}): the agent is not in view in Frame-1")
    return record


def _ego_record(root: Path, i: int, name: str, seed: int, size: tuple[int, int]) -> dict:
    track = script_maneuver(name, seed + i, duration_s=WINDOW_S, rate_hz=KEYFRAME_RATE_HZ)
    positive = STS_EGO[name]
    names = [f"samples/CAM_FRONT/sts_{i:03d}_{j}.jpg" for j in range(len(track.timestamps_s))]
    _frames(root, names, track, [], seed, size)
    return {
        "scenario": positive,
        "negative_scenarios": ",".join(t for t in STS_EGO_TYPES if t != positive),
        "sensors": {"CAM_FRONT": names},
        "ego": _ego_block(track, seed, i),
    }


def write_stsbench_world(
    root: Path, n_records: int = 24, seed: int = 0, agents: int = 0, size: tuple[int, int] = (160, 90)
) -> Path:
    """STSnu.json with `n_records` scenarios (6 rendered keyframes each, `size` pixels): the ego
    maneuvers, then (with `agents` 1 or 2, the most road users a record has) the scenarios of other
    road users, in turn."""
    if agents not in (0, 1, 2):
        raise ValueError(f"agents must be 0, 1 or 2 (road users in one record), got {agents}")
    kinds = [("ego", m) for m in sorted(STS_EGO)]
    kinds += [("agent", s) for s in SCRIPTS_FOR_AGENTS.get(agents, ())]
    records = []
    for i in range(n_records):
        kind, name = kinds[i % len(kinds)]
        if kind == "ego":
            records.append(_ego_record(root, i, name, seed, size))
        else:
            records.append(_agent_record(root, i, name, seed, size))
    path = root / "STSnu.json"
    path.write_text(json.dumps(records))
    return path


def generate(out_dir: Path, n: int = 24, seed: int = 0, agents: int = 2) -> Path:
    """Write `n` scenarios (ego ones, and with `agents` >= 1 other road users'); returns STSnu.json."""
    if n < 1:
        raise ValueError(f"need at least one record, got n={n}")
    return write_stsbench_world(Path(out_dir), n_records=n, seed=seed, agents=agents, size=(320, 180))
