"""EgoDyn-Bench's trajectory text encodings: summary | timeseries | coordinates | full.

Character-for-character the format of upstream `evaluation/evaluator_common.py`, quirks kept:
the summary reads the stored `features` (missing ones print as 0), so its `max_yaw_rate` is unsigned
for clips_index features but signed for selected_clips.json features; coordinates are shifted to
the first sample but stay in the map axes (not rotated into the ego frame), and heading is the
absolute unwrapped yaw; the timeseries `t(s):` label is padded with four spaces, the coordinates one
with one; timeseries and coordinates fall back to the summary when no arrays are given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from kinegraph.tools.kinematics import ClipKinematics

TrajectoryMode = Literal["none", "summary", "timeseries", "coordinates", "full"]
TRAJECTORY_MODES: tuple[str, ...] = ("none", "summary", "timeseries", "coordinates", "full")

_CHANNELS = (
    ("speed(m/s)", "speed", ".1f"),
    ("accel(m/s²)", "accel", ".2f"),
    ("yaw_rate(rad/s)", "yaw_rate", ".3f"),
    ("jerk(m/s³)", "jerk", ".2f"),
)


def select_indices(n_total: int, n_select: int) -> list[int]:
    """`n_select` evenly spaced indices of `n_total` samples: round(i*(n-1)/(k-1)); 31 -> 0,3,7,10,...,30."""
    if n_total == 0:
        return []
    if n_select >= n_total:
        return list(range(n_total))
    if n_select == 1:
        return [n_total // 2]
    return [round(i * (n_total - 1) / (n_select - 1)) for i in range(n_select)]


def summary_text(features: Mapping[str, float]) -> str:
    """The 8-scalar summary line (no final period)."""
    ms = features.get("max_speed", 0.0)
    return (
        "Vehicle dynamics:"
        f" max_speed={ms:.1f}m/s ({ms * 3.6:.0f}km/h),"
        f" mean_speed={features.get('mean_speed', 0.0):.1f}m/s,"
        f" min_accel={features.get('min_accel', 0.0):.2f}m/s²,"
        f" max_yaw_rate={features.get('max_abs_yaw_rate', 0.0):.3f}rad/s,"
        f" max_jerk={features.get('max_abs_jerk', 0.0):.2f}m/s³,"
        f" mean_jerk={features.get('mean_abs_jerk', 0.0):.2f}m/s³,"
        f" max_lat_accel={features.get('max_lateral_accel', 0.0):.2f}m/s²,"
        f" heading_change={features.get('total_heading_change', 0.0):.3f}rad"
    )


def _join(values: np.ndarray, fmt: str) -> str:
    return ", ".join(f"{v:{fmt}}" for v in values)


def timeseries_text(arrays: Mapping[str, np.ndarray], num_points: int = 10) -> str:
    """speed/accel/yaw_rate/jerk rows at `num_points` evenly spaced samples ("" without timestamps)."""
    n = len(arrays.get("timestamps", []))
    if n == 0:
        return ""
    idx = select_indices(n, num_points)
    ts = np.asarray(arrays["timestamps"])
    lines = [
        f"Vehicle dynamics ({len(idx)} time-steps over {ts[-1] - ts[0]:.1f}s):",
        "t(s):    " + _join(ts[idx], ".2f"),
    ]
    for label, key, fmt in _CHANNELS:
        if key in arrays:
            lines.append(f"{label}: " + _join(np.asarray(arrays[key])[idx], fmt))
    return "\n".join(lines)


def coordinates_text(arrays: Mapping[str, np.ndarray], num_points: int = 10) -> str:
    """x/y (relative to the first sample, map axes) and heading rows ("" without timestamps or position)."""
    n = len(arrays.get("timestamps", []))
    if n == 0 or "position" not in arrays:
        return ""
    idx = select_indices(n, num_points)
    ts, pos = np.asarray(arrays["timestamps"]), np.asarray(arrays["position"])
    rel = pos[idx] - pos[0]
    lines = [
        f"Vehicle trajectory ({len(idx)} waypoints over {ts[-1] - ts[0]:.1f}s, metres):",
        "t(s): " + _join(ts[idx], ".2f"),
        "x(m): " + _join(rel[:, 0], ".1f"),
        "y(m): " + _join(rel[:, 1], ".1f"),
    ]
    if "yaw" in arrays:
        lines.append("heading(rad): " + _join(np.asarray(arrays["yaw"])[idx], ".3f"))
    return "\n".join(lines)


def encode_trajectory(
    mode: str,
    features: Mapping[str, float] | ClipKinematics,
    arrays: Mapping[str, np.ndarray] | None = None,
    num_points: int = 10,
) -> str | None:
    """The trajectory block a prompt carries in `mode`, or None for "none".

    `features` may be a ClipKinematics (its features and arrays are used). As upstream, an unknown
    mode falls back to the summary, and so do array modes without arrays.
    """
    if isinstance(features, ClipKinematics):
        arrays = features.arrays() if arrays is None else arrays
        features = features.features
    if mode == "none":
        return None
    if mode in ("timeseries", "coordinates", "full") and arrays is not None:
        if mode == "timeseries":
            return timeseries_text(arrays, num_points)
        if mode == "coordinates":
            return coordinates_text(arrays, num_points)
        parts = [p for p in (timeseries_text(arrays, num_points), coordinates_text(arrays, num_points)) if p]
        if parts:
            return "\n".join(parts)
    return summary_text(features)
