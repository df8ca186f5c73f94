"""EgoDyn-Bench clip kinematics: ego poses -> 31 samples at 10 Hz with derivatives and clip features.

Mirrors upstream `DynamicsProcessor` (EgoDyn-Bench `dataset/generation/dynamics_features.py`):
positions and unwrapped yaw are linearly interpolated (extrapolation allowed) onto a uniform grid
that starts at the FIRST FRAME and spans the clip window (3.0 s), so it runs up to one frame period
past the last frame; each derivative is a central difference (one-sided at the ends) followed by a
Savitzky-Golay filter (window 5, order 2, mode 'mirror'). Clips with < 20 frames or spanning
< 0.9 x the window are rejected, as upstream's extractor does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import interp1d
from scipy.signal import savgol_filter
from scipy.spatial.transform import Rotation

SAMPLING_HZ = 10.0
CLIP_S = 3.0
MIN_FRAMES = 20
MIN_SPAN_RATIO = 0.9
SG_WINDOW = 5
SG_POLYORDER = 2

FEATURE_KEYS: tuple[str, ...] = (
    "max_speed",
    "mean_speed",
    "min_accel",
    "max_accel",
    "mean_accel",
    "max_abs_yaw_rate",
    "signed_max_yaw_rate",
    "max_abs_jerk",
    "p95_abs_jerk",
    "mean_abs_jerk",
    "max_lateral_accel",
    "total_heading_change",
)
ARRAY_KEYS: tuple[str, ...] = ("timestamps", "position", "yaw", "speed", "accel", "yaw_rate", "jerk")


@dataclass(frozen=True, eq=False)
class ClipKinematics:
    """One clip's kinematics in the `arrays/<clip_id>.npz` layout plus the `clips_index.jsonl` features.

    Arrays (T = 31 for a 3 s clip): `timestamps` (T,) s from the first frame, `position` (T, 2) m,
    `yaw` (T,) rad unwrapped, `speed` (T,) m/s, `accel` (T,) m/s^2 (d speed / dt, i.e. longitudinal),
    `yaw_rate` (T,) rad/s (+ = left), `jerk` (T,) m/s^3. Field names are the upstream npz keys.
    """

    timestamps: np.ndarray
    position: np.ndarray
    yaw: np.ndarray
    speed: np.ndarray
    accel: np.ndarray
    yaw_rate: np.ndarray
    jerk: np.ndarray
    features: dict[str, float]

    def arrays(self) -> dict[str, np.ndarray]:
        """The npz arrays keyed as upstream writes them."""
        return {key: getattr(self, key) for key in ARRAY_KEYS}


def yaw_from_quaternion_wxyz(rotation_wxyz: np.ndarray) -> np.ndarray:
    """Yaw (rad) of nuScenes [w, x, y, z] quaternions, (N, 4) -> (N,), as upstream: scipy 'xyz' Euler z."""
    quat = np.asarray(rotation_wxyz, dtype=float)
    if quat.ndim != 2 or quat.shape[1] != 4:
        raise ValueError(f"rotation_wxyz must have shape (N, 4), got {quat.shape}")
    bad = ~np.all(np.isfinite(quat), axis=1) | (np.linalg.norm(quat, axis=1) < 1e-12)
    if bad.any():
        raise ValueError(f"rotation_wxyz row {int(np.argmax(bad))} is not a finite non-zero quaternion")
    return Rotation.from_quat(quat[:, [1, 2, 3, 0]]).as_euler("xyz")[:, 2]


def smooth(signal: np.ndarray) -> np.ndarray:
    """Upstream's Savitzky-Golay step: window 5 (shrunk to the largest odd <= length), order 2, mirror."""
    if len(signal) < SG_POLYORDER + 2:
        return signal
    window = min(SG_WINDOW, len(signal))
    if window % 2 == 0:
        window -= 1
    if window < SG_POLYORDER + 2:
        return signal
    return savgol_filter(signal, window, SG_POLYORDER, mode="mirror")


def differentiate(t_s: np.ndarray, values: np.ndarray) -> np.ndarray:
    """d(values)/dt: central differences inside, forward/backward at the ends; (T,) -> (T,)."""
    out = np.zeros(len(t_s))
    if len(t_s) < 2:
        return out
    out[1:-1] = (values[2:] - values[:-2]) / (t_s[2:] - t_s[:-2])
    out[0] = (values[1] - values[0]) / (t_s[1] - t_s[0])
    out[-1] = (values[-1] - values[-2]) / (t_s[-1] - t_s[-2])
    return out


def speed_from_positions(t_s: np.ndarray, position_m: np.ndarray) -> np.ndarray:
    """|d position / dt| with upstream's differencing; (T,), (T, 2) -> (T,) m/s."""
    out = np.zeros(len(t_s))
    if len(t_s) < 2:
        return out
    d = position_m[2:] - position_m[:-2]
    out[1:-1] = np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2) / (t_s[2:] - t_s[:-2])
    for i, (a, b) in ((0, (0, 1)), (-1, (-2, -1))):
        step = position_m[b] - position_m[a]
        out[i] = np.sqrt(step[0] ** 2 + step[1] ** 2) / (t_s[b] - t_s[a])
    return out


def summary_features(
    speed: np.ndarray, accel: np.ndarray, yaw_rate: np.ndarray, jerk: np.ndarray, yaw: np.ndarray
) -> dict[str, float]:
    """The 12 `clips_index.jsonl` features of (T,) arrays.

    `max_abs_yaw_rate` is unsigned here as in clips_index; `signed_max_yaw_rate` keeps the sign of the
    abs-max sample (selected_clips.json stores that signed value under the name `max_abs_yaw_rate`).
    `total_heading_change` is the summed |d yaw|, not the net change.
    """
    if len(speed) == 0:
        return dict.fromkeys(FEATURE_KEYS, 0.0)
    abs_yaw_rate, abs_jerk = np.abs(yaw_rate), np.abs(jerk)
    return {
        "max_speed": float(np.max(speed)),
        "mean_speed": float(np.mean(speed)),
        "min_accel": float(np.min(accel)),
        "max_accel": float(np.max(accel)),
        "mean_accel": float(np.mean(accel)),
        "max_abs_yaw_rate": float(np.max(abs_yaw_rate)),
        "signed_max_yaw_rate": float(yaw_rate[np.argmax(abs_yaw_rate)]),
        "max_abs_jerk": float(np.max(abs_jerk)),
        "p95_abs_jerk": float(np.percentile(abs_jerk, 95)),
        "mean_abs_jerk": float(np.mean(abs_jerk)),
        "max_lateral_accel": float(np.max(speed * abs_yaw_rate)),
        "total_heading_change": float(np.sum(np.abs(np.diff(yaw)))) if len(yaw) > 1 else 0.0,
    }


def _validate(t_s: np.ndarray, xy_m: np.ndarray, yaw_rad: np.ndarray, clip_s: float, min_frames: int) -> None:
    n = len(t_s)
    if t_s.ndim != 1 or xy_m.shape != (n, 2) or yaw_rad.shape != (n,):
        raise ValueError(
            f"poses disagree: timestamps_s {t_s.shape}, xy_m {xy_m.shape} (want (N, 2)), "
            f"yaw_rad {yaw_rad.shape}"
        )
    for name, arr in (("timestamps_s", t_s), ("xy_m", xy_m), ("yaw_rad", yaw_rad)):
        if not np.all(np.isfinite(arr)):
            row = int(np.argmax(~np.isfinite(arr.reshape(n, -1)).any(axis=1)))
            raise ValueError(f"{name} has a NaN/Inf value at frame {row}")
    if n < min_frames:
        raise ValueError(f"clip has {n} frames; EgoDyn needs at least {min_frames}")
    steps = np.diff(t_s)
    if np.any(steps <= 0):
        i = int(np.argmax(steps <= 0))
        raise ValueError(
            f"timestamps_s must increase strictly: frame {i + 1} ({t_s[i + 1]!r} s) "
            f"is not after frame {i} ({t_s[i]!r} s)"
        )
    span = t_s[-1] - t_s[0]
    if span < MIN_SPAN_RATIO * clip_s:
        raise ValueError(f"clip spans {span:.3f} s; EgoDyn needs at least {MIN_SPAN_RATIO * clip_s:.2f} s")


def window_frame_indices(
    frame_times_s: np.ndarray, keyframe_time_s: float, clip_s: float = CLIP_S
) -> np.ndarray:
    """Indices of the camera frames in EgoDyn's backward window [t_key - clip_s, t_key], ends included.

    `frame_times_s (N,)` are the camera's sweep times (seconds, increasing). Upstream then keeps the
    clip only if it has >= 20 such frames spanning >= 0.9 x clip_s, which `clip_kinematics` checks.
    """
    times = np.asarray(frame_times_s, dtype=float)
    start_s = keyframe_time_s - clip_s
    return np.flatnonzero((times >= start_s) & (times <= keyframe_time_s))


def clip_kinematics(
    timestamps_s: np.ndarray,
    xy_m: np.ndarray,
    yaw_rad: np.ndarray,
    *,
    clip_s: float = CLIP_S,
    sampling_hz: float = SAMPLING_HZ,
    min_frames: int = MIN_FRAMES,
) -> ClipKinematics:
    """Clip kinematics from the ego poses of every camera frame in a clip window.

    `timestamps_s (N,)` absolute or relative seconds, strictly increasing; `xy_m (N, 2)`; `yaw_rad (N,)`
    (wrapped or not). The grid is `ceil(clip_s * sampling_hz) + 1` samples from the first frame over
    `clip_s` seconds (31 for EgoDyn). Raises ValueError for NaN poses, non-increasing timestamps,
    fewer than `min_frames` frames or a span below 0.9 x `clip_s`.
    """
    t = np.asarray(timestamps_s, dtype=float)
    xy = np.asarray(xy_m, dtype=float)
    yaw = np.asarray(yaw_rad, dtype=float)
    _validate(t, xy, yaw, clip_s, min_frames)
    if not (clip_s > 0 and sampling_hz > 0):
        raise ValueError(f"clip_s and sampling_hz must be positive, got {clip_s}, {sampling_hz}")

    n_samples = int(np.ceil(clip_s * sampling_hz)) + 1
    grid = np.linspace(t[0], t[0] + clip_s, n_samples)
    position = np.column_stack(
        [interp1d(t, xy[:, k], kind="linear", fill_value="extrapolate")(grid) for k in (0, 1)]
    )
    yaw_grid = interp1d(t, np.unwrap(yaw), kind="linear", fill_value="extrapolate")(grid)

    speed = smooth(speed_from_positions(grid, position))
    accel = smooth(differentiate(grid, speed))
    yaw_rate = smooth(differentiate(grid, yaw_grid))
    jerk = smooth(differentiate(grid, accel))
    return ClipKinematics(
        timestamps=grid - t[0],
        position=position,
        yaw=yaw_grid,
        speed=speed,
        accel=accel,
        yaw_rate=yaw_rate,
        jerk=jerk,
        features=summary_features(speed, accel, yaw_rate, jerk, yaw_grid),
    )


def clip_kinematics_from_poses(
    timestamps_us: np.ndarray, translation_m: np.ndarray, rotation_wxyz: np.ndarray, *, clip_s: float = CLIP_S
) -> ClipKinematics:
    """Clip kinematics from nuScenes `ego_pose` records.

    `timestamps_us (N,)` µs, `translation_m (N, 3)`, `rotation_wxyz (N, 4)` [w, x, y, z] quaternions.
    """
    translation = np.asarray(translation_m, dtype=float)
    if translation.ndim != 2 or translation.shape[1] not in (2, 3):
        raise ValueError(f"translation_m must have shape (N, 3), got {translation.shape}")
    times_s = np.asarray(timestamps_us, dtype=float) / 1e6
    return clip_kinematics(
        times_s, translation[:, :2], yaw_from_quaternion_wxyz(rotation_wxyz), clip_s=clip_s
    )
