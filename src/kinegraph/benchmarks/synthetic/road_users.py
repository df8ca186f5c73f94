"""Other road users of the synthetic driving worlds: cars and pedestrians moving on the ego's road.

A road user is scripted in the road's own frame: arc length `s` along the reference line that
`road_world.build_world` paves (the ego path with its lane changes taken out) and lateral offset `d`
from the ego's starting lane (left positive, lanes every `LANE_WIDTH_M`). Scripts give a speed profile
and a lateral profile over time; a turn leaves the road frame for a circular arc. The result is a plain
world-frame trajectory (positions, headings): every label the benchmarks ask about is derived from it
(`road_user_labels`), never taken from the script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kinegraph.benchmarks.synthetic.road_render import NEAR_M, PinholeCamera
from kinegraph.benchmarks.synthetic.road_world import FACE_SHADE, LANE_WIDTH_M, road_reference_line

FINE_DT_S = 0.05
# (length, width, height) in metres and body colour of each class; TAD's vehicle classes plus pedestrians.
CLASS_SIZE_M: dict[str, tuple[float, float, float]] = {
    "car": (4.5, 1.9, 1.6),
    "truck": (7.5, 2.5, 3.2),
    "bus": (11.0, 2.6, 3.2),
    "motorcycle": (2.1, 0.8, 1.4),
    "pedestrian": (0.5, 0.6, 1.75),
}
CLASS_RGB: dict[str, tuple[float, float, float]] = {
    "car": (200.0, 40.0, 40.0),
    "truck": (230.0, 150.0, 30.0),
    "bus": (40.0, 120.0, 200.0),
    "motorcycle": (40.0, 40.0, 40.0),
    "pedestrian": (240.0, 200.0, 60.0),
}


@dataclass(frozen=True)
class Road:
    """The road's reference line: points `points_m` (K, 2), unit left normals (K, 2), arc `arc_m` (K,)."""

    points_m: np.ndarray
    normals: np.ndarray
    arc_m: np.ndarray

    @classmethod
    def around_ego(cls, xy_m: np.ndarray, yaw_rad: np.ndarray, lane_offset_m: np.ndarray) -> Road:
        """The line `build_world` paves for this ego path (same inputs, same line)."""
        left = np.stack([-np.sin(yaw_rad), np.cos(yaw_rad)], axis=1)
        points, normals = road_reference_line(xy_m - lane_offset_m[:, None] * left, float(yaw_rad[0]))
        arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=1))])
        return cls(points, normals, arc)

    def point(self, s_m: np.ndarray, d_m: np.ndarray) -> np.ndarray:
        """World positions (N, 2) at arc lengths `s_m` (N,) and lateral offsets `d_m` (N,)."""
        centre = np.stack([np.interp(s_m, self.arc_m, self.points_m[:, k]) for k in (0, 1)], axis=1)
        return centre + np.asarray(d_m)[:, None] * self._normal(s_m)

    def heading_rad(self, s_m: np.ndarray) -> np.ndarray:
        """Direction of travel (N,) of the road at `s_m` (increasing arc length)."""
        normal = self._normal(s_m)
        return np.arctan2(-normal[:, 0], normal[:, 1])

    def locate(self, xy_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(s_m (N,), d_m (N,)) of world positions (N, 2): the nearest reference point and the offset."""
        xy_m = np.asarray(xy_m, dtype=np.float64)
        nearest = np.argmin(np.linalg.norm(self.points_m[None] - xy_m[:, None], axis=2), axis=1)
        delta = xy_m - self.points_m[nearest]
        tangent = np.stack([self.normals[nearest, 1], -self.normals[nearest, 0]], axis=1)
        s = self.arc_m[nearest] + np.einsum("nk,nk->n", delta, tangent)
        return s, np.einsum("nk,nk->n", delta, self.normals[nearest])

    def _normal(self, s_m: np.ndarray) -> np.ndarray:
        normal = np.stack([np.interp(s_m, self.arc_m, self.normals[:, k]) for k in (0, 1)], axis=1)
        return normal / np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-9)


@dataclass(frozen=True, eq=False)
class RoadUser:
    """A road user's world trajectory: `times_s` (T,), `xy_m` (T, 2), `yaw_rad` (T,) unwrapped."""

    category: str
    times_s: np.ndarray
    xy_m: np.ndarray
    yaw_rad: np.ndarray

    def sample(self, times_s: np.ndarray) -> RoadUser:
        """The trajectory at other instants (linear in position and unwrapped heading)."""
        xy = np.stack([np.interp(times_s, self.times_s, self.xy_m[:, k]) for k in (0, 1)], axis=1)
        return RoadUser(
            self.category, np.asarray(times_s), xy, np.interp(times_s, self.times_s, self.yaw_rad)
        )

    def speed_mps(self) -> np.ndarray:
        """Speeds (T,) from finite differences of position (central inside, one-sided at the ends)."""
        return np.linalg.norm(np.gradient(self.xy_m, self.times_s, axis=0), axis=1)

    def box_corners_m(self, i: int) -> np.ndarray:
        """(8, 3) world corners of the body at sample `i` (the `road_world` box corner order)."""
        length, width, height = CLASS_SIZE_M[self.category]
        local = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * (length, width)
        c, s = np.cos(self.yaw_rad[i]), np.sin(self.yaw_rad[i])
        xy = local @ np.array([[c, s], [-s, c]]) + self.xy_m[i]
        bottom = np.column_stack([xy, np.zeros(4)])
        return np.concatenate([bottom, bottom + (0.0, 0.0, height)])

    def face_rgb(self) -> np.ndarray:
        """(6, 3) shaded face colours, as the world's boxes are shaded."""
        return np.outer(FACE_SHADE, CLASS_RGB[self.category])


def movers_at(users: list[RoadUser], i: int) -> tuple[np.ndarray, np.ndarray]:
    """(corners (M, 8, 3), face colours (M, 6, 3)) of every user at sample `i`: the renderer's `movers`."""
    if not users:
        return np.zeros((0, 8, 3)), np.zeros((0, 6, 3))
    return np.stack([u.box_corners_m(i) for u in users]), np.stack([u.face_rgb() for u in users])


def movers_when(users: Sequence[RoadUser], time_s: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The renderer's `movers` with every user where it is at `time_s` (its own clock); None for none."""
    return movers_at([user.sample(np.array([time_s])) for user in users], 0) if users else None


def _ramp(t: np.ndarray, start_s: float, duration_s: float) -> np.ndarray:
    u = np.clip((t - start_s) / duration_s, 0.0, 1.0)
    return 0.5 - 0.5 * np.cos(np.pi * u)


def speed_profile(t: np.ndarray, v0_mps: float, changes: list[tuple[float, float, float]]) -> np.ndarray:
    """Speed (F,) from `v0_mps`; each change (start_s, duration_s, new_mps) ramps smoothly to new_mps."""
    speed = np.full_like(t, v0_mps, dtype=np.float64)
    for start_s, duration_s, new_mps in changes:
        level = speed[np.searchsorted(t, start_s)] if start_s <= t[-1] else speed[-1]
        speed = np.where(t < start_s, speed, level + (new_mps - level) * _ramp(t, start_s, duration_s))
    return speed


def drive(
    road: Road,
    category: str,
    duration_s: float,
    s0_m: float,
    lane_m: float,
    speed_mps: np.ndarray,
    direction: int = 1,
    lane_shifts: tuple[tuple[float, float, float], ...] = (),
    turn: tuple[float, float, float] | None = None,
) -> RoadUser:
    """A user that follows the road from (s0_m, lane_m), `direction` +1 with the road's arc, -1 against it,
    at `speed_mps` (F,) on the fine grid. `lane_shifts` (start_s, duration_s, shift_m) move it across
    lanes (shift left positive in the road frame); `turn` (start_s, duration_s, heading_change_rad) leaves
    the road on a circular arc (positive = to the user's left)."""
    t = np.arange(int(round(duration_s / FINE_DT_S)) + 1) * FINE_DT_S
    travelled = np.concatenate([[0.0], np.cumsum(0.5 * (speed_mps[1:] + speed_mps[:-1]) * FINE_DT_S)])
    d = np.full_like(t, lane_m)
    for start_s, shift_duration_s, shift_m in lane_shifts:
        d = d + shift_m * _ramp(t, start_s, shift_duration_s)
    s = s0_m + direction * travelled
    xy = road.point(s, d)
    heading = road.heading_rad(s) + (0.0 if direction > 0 else np.pi)
    slope = np.gradient(d) / np.maximum(np.gradient(travelled), 1e-6)
    yaw = np.unwrap(heading + np.arctan(direction * slope * (np.gradient(travelled) > 1e-6)))
    if turn is not None:
        start_s, turn_s, change_rad = turn
        k = int(np.searchsorted(t, start_s))
        yaw_after = yaw[k] + change_rad * np.clip((t[k:] - t[k]) / turn_s, 0.0, 1.0)  # constant yaw rate
        step = 0.5 * (speed_mps[k:][1:] + speed_mps[k:][:-1]) * FINE_DT_S
        mid_yaw = 0.5 * (yaw_after[1:] + yaw_after[:-1])
        moves = np.stack([step * np.cos(mid_yaw), step * np.sin(mid_yaw)], axis=1)
        xy = np.concatenate([xy[:k], xy[k] + np.concatenate([np.zeros((1, 2)), np.cumsum(moves, axis=0)])])
        yaw = np.concatenate([yaw[:k], yaw_after])
    return RoadUser(category, t, xy, yaw)


def cross(
    road: Road, category: str, duration_s: float, s_m: float, from_m: float, to_m: float, start_s: float = 0.0
) -> RoadUser:
    """A user that walks straight across the road at arc length `s_m`, from lateral `from_m` to `to_m`,
    at constant speed from `start_s` to the end (standing at `from_m` before)."""
    t = np.arange(int(round(duration_s / FINE_DT_S)) + 1) * FINE_DT_S
    progress = np.clip((t - start_s) / max(duration_s - start_s, FINE_DT_S), 0.0, 1.0)
    d = from_m + (to_m - from_m) * progress
    xy = road.point(np.full_like(t, s_m), d)
    normal_yaw = float(road.heading_rad(np.array([s_m]))[0]) + np.pi / 2
    yaw = np.full_like(t, normal_yaw if to_m > from_m else normal_yaw - np.pi)
    return RoadUser(category, t, xy, yaw)


def image_box_px(
    camera: PinholeCamera, ego_xy_m: np.ndarray, ego_yaw_rad: float, corners_m: np.ndarray
) -> list[float] | None:
    """[x1, y1, x2, y2] of a box's corners (8, 3) in the ego camera's image, clipped to it; None when
    no corner is in front of the camera or the box lies wholly off the image."""
    world_r_cam, centre_m = camera.world_pose(float(ego_xy_m[0]), float(ego_xy_m[1]), float(ego_yaw_rad))
    cam = (corners_m - centre_m) @ world_r_cam
    front = cam[cam[:, 2] > NEAR_M]
    if not len(front):
        return None
    u = camera.fx_px * front[:, 0] / front[:, 2] + camera.cx_px
    v = camera.fy_px * front[:, 1] / front[:, 2] + camera.cy_px
    x1, x2 = max(float(u.min()), 0.0), min(float(u.max()), camera.width_px - 1.0)
    y1, y2 = max(float(v.min()), 0.0), min(float(v.max()), camera.height_px - 1.0)
    if x1 >= x2 or y1 >= y2:
        return None
    return [x1, y1, x2, y2]


TRAFFIC_CLASSES = ("car", "car", "car", "truck", "bus", "motorcycle")  # drawn with these odds


def traffic_users(
    road: Road,
    duration_s: float,
    s_ego_m: float,
    lanes: tuple[int, int],
    ego_speed_mps: float,
    n: int,
    rng: np.random.Generator,
) -> list[RoadUser]:
    """`n` vehicles in the outer lanes `lanes` (right, left; lane j centred j x `LANE_WIDTH_M` left of the
    reference line), none in the ego's: the right lane's drive the ego's way at one speed near
    `ego_speed_mps`, the left lane's come towards it and pass it during the `duration_s`. Each lane's
    vehicles keep one speed and gaps of 8-30 m, so no two overlap."""
    users = []
    with_ego, towards = (n + 1) // 2, n // 2
    lane_speeds = (max(0.0, ego_speed_mps + rng.uniform(-4.0, 4.0)), rng.uniform(7.0, 12.0))
    starts = (s_ego_m + rng.uniform(-20.0, 10.0), s_ego_m + rng.uniform(30.0, 60.0))
    t = np.arange(int(round(duration_s / FINE_DT_S)) + 1) * FINE_DT_S
    for count, lane, speed, start, direction in zip(
        (with_ego, towards), lanes, lane_speeds, starts, (1, -1), strict=True
    ):
        kinds = [TRAFFIC_CLASSES[int(rng.integers(len(TRAFFIC_CLASSES)))] for _ in range(count)]
        lengths = np.array([CLASS_SIZE_M[kind][0] for kind in kinds])
        gaps = rng.uniform(8.0, 30.0, max(0, count - 1))  # bumper to bumper
        centres = (
            start + np.concatenate([[0.0], np.cumsum(0.5 * (lengths[1:] + lengths[:-1]) + gaps)])[:count]
        )
        users += [
            drive(road, kind, duration_s, float(s), lane * LANE_WIDTH_M, np.full_like(t, speed), direction)
            for kind, s in zip(kinds, centres, strict=True)
        ]
    return users
