"""Other vehicles of the synthetic TAD scenes: scripted per 3 s segment, labelled from their trajectories.

Each vehicle (one per TAD class in a scene, so questions name it uniquely) chains one behaviour per
segment: cruise, stop, stay stopped, start, change lane, or turn off the road (last segment only).
Its TAD action in a segment is derived from the keyframes of that segment's window (`tad_action`), and
whether it is in the segment from the ego camera (`visible_segments`): TAD keeps vehicles within 50 m.
"""

from __future__ import annotations

import numpy as np

from kinegraph.benchmarks.synthetic.road_render import PinholeCamera
from kinegraph.benchmarks.synthetic.road_users import Road, RoadUser, drive, image_box_px, speed_profile
from kinegraph.benchmarks.synthetic.road_world import LANE_WIDTH_M

TAD_CLASSES = ("car", "truck", "bus", "motorcycle")
PLURAL = {"car": "cars", "truck": "trucks", "bus": "buses", "motorcycle": "motorcycles"}
MAX_RANGE_M = 50.0  # TAD keeps vehicles within 50 m of the ego
STOPPED_MPS = 0.3
MOVING_MPS = 1.0
TURN_RAD = 0.6
LANE_CHANGE_M = 2.0
_CAMERA = PinholeCamera.nuscenes_front(1600, 900)


def tad_action(user: RoadUser, road: Road) -> str:
    """TAD's action of a user over its samples (one segment window), from its own point of view."""
    speed = user.speed_mps()
    if speed.max() < STOPPED_MPS:
        return "Stopped"
    if speed[0] < STOPPED_MPS and speed[-1] >= MOVING_MPS:
        return "Starting"
    if speed[0] >= MOVING_MPS and speed[-1] < STOPPED_MPS:
        return "Stopping"
    turn = float(user.yaw_rad[-1] - user.yaw_rad[0])
    if abs(turn) > TURN_RAD:
        return "Turn left" if turn > 0 else "Turn right"
    s, d = road.locate(user.xy_m)
    forward = 1.0 if np.cos(user.yaw_rad[0] - road.heading_rad(s[:1])[0]) >= 0 else -1.0
    shift = forward * float(d[-1] - d[0])  # left of the user's own travel is positive
    if abs(shift) > LANE_CHANGE_M:
        return "Change lane to the left" if shift > 0 else "Change lane to the right"
    return "Straight, constant speed"


def visible(user: RoadUser, ego_xy_m: np.ndarray, ego_yaw_rad: np.ndarray) -> np.ndarray:
    """(T,) whether the user shows in the ego's CAM_FRONT within TAD's 50 m, at each sample."""
    out = np.zeros(len(user.times_s), dtype=bool)
    for i in range(len(out)):
        near = np.linalg.norm(user.xy_m[i] - ego_xy_m[i]) <= MAX_RANGE_M
        out[i] = (
            near and image_box_px(_CAMERA, ego_xy_m[i], ego_yaw_rad[i], user.box_corners_m(i)) is not None
        )
    return out


def visible_segments(shown: np.ndarray, windows: list[list[int]]) -> list[int]:
    """Segments whose window shows the user in most of its keyframes."""
    return [k for k, w in enumerate(windows) if shown[w].sum() * 2 > len(w)]


def _plan(rng: np.random.Generator, n_segments: int, lane_m: float) -> list[str]:
    """One behaviour per segment; a stop is followed by staying stopped or starting; turns come last."""
    plan: list[str] = []
    moving = bool(rng.random() < 0.8)
    for k in range(n_segments):
        if not moving:
            step = str(rng.choice(["stopped", "starting"]))
        else:
            options = ["cruise", "stopping"]
            options += ["lane_left"] if lane_m < LANE_WIDTH_M - 0.1 else []
            options += ["lane_right"] if lane_m > -LANE_WIDTH_M + 0.1 else []
            options += ["turn_left", "turn_right"] if k == n_segments - 1 else []
            step = str(rng.choice(options))
        lane_m += {"lane_left": LANE_WIDTH_M, "lane_right": -LANE_WIDTH_M}.get(step, 0.0)
        moving = step not in ("stopping", "stopped")
        plan.append(step)
    return plan


def scripted_vehicle(
    road: Road, category: str, s0_m: float, rng: np.random.Generator, n_segments: int, segment_s: float
) -> RoadUser:
    """A vehicle of `category` from arc `s0_m`, in a lane drawn from the ego's and its neighbours."""
    lane_m = float(rng.choice([-LANE_WIDTH_M, 0.0, LANE_WIDTH_M]))
    plan = _plan(rng, n_segments, lane_m)
    cruise_mps = float(rng.uniform(4.0, 8.0))
    t = np.arange(int(round(n_segments * segment_s / 0.05)) + 1) * 0.05
    changes, shifts, turn = [], [], None
    for k, step in enumerate(plan):
        t0 = k * segment_s
        if step == "stopping":
            changes.append((t0 + 0.3, 1.5, 0.0))
        elif step == "starting":
            changes.append((t0 + 1.0, 1.5, cruise_mps))
        elif step in ("lane_left", "lane_right"):
            shifts.append((t0 + 0.3, segment_s - 0.6, LANE_WIDTH_M if step == "lane_left" else -LANE_WIDTH_M))
        elif step in ("turn_left", "turn_right"):
            turn = (t0 + 0.3, segment_s - 0.6, 1.3 if step == "turn_left" else -1.3)
    start_mps = cruise_mps if plan[0] not in ("stopped", "starting") else 0.0
    speed = speed_profile(t, start_mps, changes)
    return drive(road, category, float(t[-1]), s0_m, lane_m, speed, lane_shifts=tuple(shifts), turn=turn)
