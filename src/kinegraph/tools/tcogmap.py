"""TCogMap (TAD, Algorithm 1): an ego-motion phrase from the ego poses of a segment's keyframes.

Reproduces upstream `_classify_motion_from_data_points` (identical in `tcogmap_segments.py` and
`tcogmap_scenes.py` of vbdi/tad_bench): finite-difference global velocities (the first forced to 0),
"Stopped" when most speeds are below 0.2 m/s, then in this order a turn (|net yaw change| > 10 deg),
a lane change (mean ego-frame lateral speed > 0.4 m/s while moving > 1 m/s), starting, stopping, or
straight driving. Inputs are the nuScenes `ego_pose` records of the CAM_FRONT keyframes (2 Hz).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

STATIONARY_THRESHOLD_MPS = 0.2
STOPPING_SPEED_THRESHOLD_MPS = 1.0
TURN_YAW_THRESHOLD_DEG = 10.0
LANE_CHANGE_LATERAL_VEL_THRESHOLD_MPS = 0.4
MIN_LANE_CHANGE_FORWARD_SPEED_MPS = 1.0

PHRASES: dict[str, str] = {
    "Stopped": "stopped.",
    "Turn left": "turning to the left.",
    "Turn right": "turning to the right.",
    "Change lane to the left": "changing lane to the left.",
    "Change lane to the right": "changing lane to the right.",
    "Starting": "starting from a stop.",
    "Stopping": "stopping.",
    "Straight, constant speed": "moving forward at a relatively constant speed.",
}
UNDEFINED_PHRASE = "in an undefined state."


@dataclass(frozen=True)
class Thresholds:
    """Algorithm 1's thresholds; the defaults are upstream's (a sweep may ablate them, non-officially)."""

    stationary_mps: float = STATIONARY_THRESHOLD_MPS
    stopping_mps: float = STOPPING_SPEED_THRESHOLD_MPS
    turn_yaw_deg: float = TURN_YAW_THRESHOLD_DEG
    lane_change_lateral_mps: float = LANE_CHANGE_LATERAL_VEL_THRESHOLD_MPS
    lane_change_min_forward_mps: float = MIN_LANE_CHANGE_FORWARD_SPEED_MPS


UPSTREAM = Thresholds()


def _unit_quaternions(rotation_wxyz: np.ndarray) -> np.ndarray:
    quat = np.asarray(rotation_wxyz, dtype=float)
    norm = np.linalg.norm(quat, axis=1, keepdims=True)
    if np.any(~np.isfinite(quat)) or np.any(norm < 1e-12):
        raise ValueError("rotation_wxyz must hold finite, non-zero [w, x, y, z] quaternions")
    return quat / norm


def quaternion_yaw_rad(rotation_wxyz: np.ndarray) -> np.ndarray:
    """pyquaternion's `yaw_pitch_roll[0]` of [w, x, y, z] quaternions, (N, 4) -> (N,).

    Kept exactly as pyquaternion computes it, atan2(2(wz - xy), 1 - 2(y^2 + z^2)); for a pure
    heading rotation this is the ordinary yaw.
    """
    w, x, y, z = _unit_quaternions(rotation_wxyz).T
    return np.arctan2(2 * (w * z - x * y), 1 - 2 * (y**2 + z**2))


def _rotate_into_body(rotation_wxyz: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """R_i^-1 v_i for unit quaternions (N, 4) and vectors (N, 3)."""
    w, x, y, z = _unit_quaternions(rotation_wxyz).T
    matrices = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=1,
    )  # (N, 3, 3) body -> world
    return np.einsum("nji,nj->ni", matrices, vectors)


def classify_ego_motion(
    timestamps_us: np.ndarray,
    translation_m: np.ndarray,
    rotation_wxyz: np.ndarray,
    thresholds: Thresholds = UPSTREAM,
) -> str:
    """Algorithm 1's motion class ("Stopped", "Turn left", ...) of poses (N,), (N, 3), (N, 4).

    Velocities are (t_i - t_{i-1}) / dt with dt from µs timestamps (0 when dt <= 1 µs); the forced
    zero first velocity counts in the stopped vote and in the mean ego-frame velocity.
    """
    th = thresholds
    times = np.asarray(timestamps_us, dtype=float)
    trans = np.asarray(translation_m, dtype=float)
    n = len(times)
    if trans.shape != (n, 3) or np.shape(rotation_wxyz) != (n, 4):
        raise ValueError(
            f"poses disagree: timestamps {times.shape}, translation {trans.shape} (want (N, 3)), "
            f"rotation {np.shape(rotation_wxyz)} (want (N, 4))"
        )
    if not (np.all(np.isfinite(times)) and np.all(np.isfinite(trans))):
        raise ValueError("timestamps_us and translation_m must be finite")
    if n < 2:
        return "Stopped"  # the one velocity is the forced zero
    velocity = np.zeros((n, 3))
    dt_s = np.diff(times) / 1e6
    moving = dt_s > 1e-6
    velocity[1:][moving] = np.diff(trans, axis=0)[moving] / dt_s[moving, None]
    speeds = np.linalg.norm(velocity[:, :2], axis=1)
    if np.sum(speeds < th.stationary_mps) > n / 2:
        return "Stopped"
    start_speed, end_speed = speeds[1], speeds[-1]
    yaw = quaternion_yaw_rad(rotation_wxyz)
    yaw_change_rad = (yaw[-1] - yaw[0] + np.pi) % (2 * np.pi) - np.pi
    yaw_change_deg = np.rad2deg(yaw_change_rad)
    local = _rotate_into_body(rotation_wxyz, velocity)
    avg_vx, avg_vy = np.mean(local[:, 0]), np.mean(local[:, 1])
    if abs(yaw_change_deg) > th.turn_yaw_deg:
        return "Turn left" if yaw_change_deg > 0 else "Turn right"
    if abs(avg_vy) > th.lane_change_lateral_mps and avg_vx > th.lane_change_min_forward_mps:
        return "Change lane to the left" if avg_vy > 0 else "Change lane to the right"
    if start_speed < th.stopping_mps and end_speed > th.stopping_mps * 1.5:
        return "Starting"
    if start_speed > th.stopping_mps * 1.5 and end_speed < th.stopping_mps:
        return "Stopping"
    return "Straight, constant speed"


def motion_phrase(motion_class: str) -> str:
    """The prompt phrase of a motion class; unknown classes read "in an undefined state."."""
    return PHRASES.get(motion_class, UNDEFINED_PHRASE)


def motion_summary(
    timestamps_us: np.ndarray,
    translation_m: np.ndarray,
    rotation_wxyz: np.ndarray,
    thresholds: Thresholds = UPSTREAM,
) -> str:
    """`The ego-vehicle is {phrase}` for one run of keyframe poses."""
    motion_class = classify_ego_motion(timestamps_us, translation_m, rotation_wxyz, thresholds)
    return f"The ego-vehicle is {motion_phrase(motion_class)}"


def segment_context(
    timestamps_us: np.ndarray,
    translation_m: np.ndarray,
    rotation_wxyz: np.ndarray,
    thresholds: Thresholds = UPSTREAM,
) -> str | None:
    """Segment-task line `Motion summary: The ego-vehicle is ...`; None for fewer than 2 frames (no line)."""
    if len(timestamps_us) < 2:
        return None
    return f"Motion summary: {motion_summary(timestamps_us, translation_m, rotation_wxyz, thresholds)}"


def scene_context(
    timestamps_us: np.ndarray,
    translation_m: np.ndarray,
    rotation_wxyz: np.ndarray,
    keysegments: Sequence[Sequence[int]],
    thresholds: Thresholds = UPSTREAM,
) -> list[str]:
    """Scene-task lines, one per keysegment of >= 2 frames (0-based scene frame indices).

    Each summarises the scene's keyframes from the segment's first to last index (upstream walks
    `sample.next` between them): `Motion summary for Frame{first+1} to Frame{last+1}: The ego-vehicle is ...`.
    """
    n = len(timestamps_us)
    lines = []
    for k, indices in enumerate(keysegments):
        if len(indices) < 2:
            continue
        first, last = int(indices[0]), int(indices[-1])
        if not 0 <= first <= last < n:
            raise ValueError(f"keysegment {k} spans frames {first}..{last}, outside the scene's {n} frames")
        window = slice(first, last + 1)
        summary = motion_summary(
            timestamps_us[window], translation_m[window], rotation_wxyz[window], thresholds
        )
        lines.append(f"Motion summary for Frame{first + 1} to Frame{last + 1}: {summary}")
    return lines


def quaternion_text(rotation_wxyz: Sequence[float]) -> str:
    """pyquaternion's `str()` of a (non-normalised) [w, x, y, z] quaternion: `w +xi +yj +zk` to 3 decimals."""
    w, x, y, z = (float(v) for v in rotation_wxyz)
    return f"{w:.3f} {x:+.3f}i {y:+.3f}j {z:+.3f}k"


def _translation_text(translation_m: Sequence[float]) -> str:
    """A nuScenes translation as Python prints the JSON list: `[x, y, z]` with shortest float reprs."""
    return "[" + ", ".join(repr(float(v)) for v in translation_m) + "]"


def raw_pose_lines(
    timestamps_us: Sequence[int],
    translation_m: np.ndarray,
    rotation_wxyz: np.ndarray,
    *,
    first_frame: int = 0,
) -> list[str]:
    """Segment-task "+EP" baseline lines: `The ego pose details for Frame{i+1} are translation=[...], ...`."""
    lines = []
    for i, (ts, trans, rot) in enumerate(zip(timestamps_us, translation_m, rotation_wxyz, strict=True)):
        lines.append(
            f"The ego pose details for Frame{first_frame + i + 1} are "
            f"translation={_translation_text(trans)}, "
            f"rotation={quaternion_text(rot)}, timestamp={int(ts)}"
        )
    return lines


def scene_raw_pose_context(
    timestamps_us: Sequence[int],
    translation_m: np.ndarray,
    rotation_wxyz: np.ndarray,
    keysegments: Sequence[Sequence[int]],
    thresholds: Thresholds = UPSTREAM,
) -> list[str]:
    """Scene-task "+EP" baseline blocks, one per keysegment of >= 2 frames.

    `The ego pose details for Frame{first+1} to Frame{last+1} are:` followed by one
    `Frame{k+1}: translation=[...], rotation=..., timestamp=...` line per scene keyframe in between.
    """
    blocks = []
    for indices in keysegments:
        if len(indices) < 2:
            continue
        first, last = int(indices[0]), int(indices[-1])
        lines = [
            f"Frame{k + 1}: translation={_translation_text(translation_m[k])}, "
            f"rotation={quaternion_text(rotation_wxyz[k])}, timestamp={int(timestamps_us[k])}"
            for k in range(first, last + 1)
        ]
        blocks.append(
            f"The ego pose details for Frame{first + 1} to Frame{last + 1} are:\n" + "\n".join(lines)
        )
    return blocks
