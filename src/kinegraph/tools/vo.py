"""EgoDyn's KLT + essential-matrix visual odometry proxy (upstream `baselines/vo_proxy_baseline.py`).

Per frame pair: Shi-Tomasi corners in the central 60 % of the previous frame, pyramidal Lucas-Kanade
tracks, the median track length as a speed proxy (px), and the yaw (deg, + = left) of the rotation
recovered from the essential matrix, with upstream's fallbacks when the geometry is unreliable.
No metric scale is recovered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

import cv2
import numpy as np

from kinegraph.tools.motion_signals import (
    MIN_PAIRS_FOR_EVENTS,
    as_clip,
    event_then_event,
    stop_go_cycles,
    yes_no,
)

#: How a pair's yaw was obtained. "essential": from the essential matrix; "no_features": < 8 corners,
#: yaw = disp = 0; "static": median track < 0.3 px, yaw = 0; "few_tracks" / "no_essential" /
#: "few_inliers": yaw from the median horizontal track displacement x 0.06 deg/px.
PairMethod = Literal["essential", "no_features", "static", "few_tracks", "no_essential", "few_inliers"]

ROI_FRACTION = 0.6
MIN_CORNERS = 8
MAX_TRACK_PX = 50.0  # longer tracks are dropped (upstream keeps `< 50`)
STATIC_BELOW_PX = 0.3  # below this median track the essential matrix is degenerate
MIN_INLIERS = 15
FALLBACK_DEG_PER_PX = 0.06  # upstream's "~1 px = 0.06 deg for a typical driving camera"

_CORNER_PARAMS = {"maxCorners": 800, "qualityLevel": 0.01, "minDistance": 7, "blockSize": 7}
_LK_PARAMS = {
    "winSize": (21, 21),
    "maxLevel": 3,
    "criteria": (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01),
}


@dataclass(frozen=True)
class VOThresholds:
    """The paper's VO thresholds (Eqs. 14-19): yaw in degrees per pair, displacement in px per pair."""

    yaw_deadzone_deg: float = 0.03
    yaw_peak_deg: float = 0.15
    stopped_px: float = 0.5
    moving_px: float = 2.0
    trend_px_per_pair: float = 0.3
    heading_deg: float = 1.5
    lateral_deg: float = 0.8
    brake_drop_fraction: float = 0.4


class VOSignals(NamedTuple):
    """Per-pair yaw (P,) in degrees (+ = left), median track length (P,) in px, and how each yaw was found."""

    yaw_deg: np.ndarray
    disp_px: np.ndarray
    method: tuple[PairMethod, ...]


class VOResult(NamedTuple):
    """Signals and the answers they map to ({question_id: answer} for the six probe questions)."""

    signals: VOSignals
    answers: dict[str, str]


def default_intrinsics(width_px: int, height_px: int) -> np.ndarray:
    """Upstream's default pinhole K (3, 3): fx = fy = 0.9 * width, principal point at the image centre."""
    f_px = 0.9 * width_px
    return np.array([[f_px, 0.0, width_px / 2.0], [0.0, f_px, height_px / 2.0], [0.0, 0.0, 1.0]])


def roi_mask(width_px: int, height_px: int, fraction: float = ROI_FRACTION) -> np.ndarray:
    """uint8 mask (H, W), 255 on the central `fraction` of both width and height."""
    mask = np.zeros((height_px, width_px), dtype=np.uint8)
    roi_w, roi_h = int(width_px * fraction), int(height_px * fraction)
    x0, y0 = (width_px - roi_w) // 2, (height_px - roi_h) // 2
    mask[y0 : y0 + roi_h, x0 : x0 + roi_w] = 255
    return mask


def yaw_from_rotation_deg(rotation: np.ndarray) -> float:
    """Yaw about the camera's y axis (y down, z forward) of R (3, 3), degrees, + = camera turned left."""
    return math.degrees(math.atan2(rotation[0, 2], rotation[2, 2]))


def _fallback_yaw_deg(pts1: np.ndarray, pts2: np.ndarray) -> float:
    """Coarse yaw from the median horizontal track displacement (scene moving right = ego turning left)."""
    if len(pts1) < 2:
        return 0.0
    return float(np.median(pts2[:, 0] - pts1[:, 0])) * FALLBACK_DEG_PER_PX


def pair_motion(
    prev_gray: np.ndarray, next_gray: np.ndarray, intrinsics: np.ndarray, mask: np.ndarray
) -> tuple[float, float, PairMethod]:
    """(yaw_deg, disp_px, method) for one grey frame pair, with upstream's gates and fallbacks."""
    corners = cv2.goodFeaturesToTrack(prev_gray, mask=mask, **_CORNER_PARAMS)
    if corners is None or len(corners) < MIN_CORNERS:
        return 0.0, 0.0, "no_features"
    tracked, status, _ = cv2.calcOpticalFlowPyrLK(prev_gray, next_gray, corners, None, **_LK_PARAMS)
    ok = status.ravel().astype(bool)
    pts1, pts2 = corners.reshape(-1, 2)[ok], tracked.reshape(-1, 2)[ok]
    lengths = np.linalg.norm(pts2 - pts1, axis=1)
    short = lengths < MAX_TRACK_PX
    pts1, pts2, lengths = pts1[short], pts2[short], lengths[short]
    disp_px = float(np.median(lengths)) if lengths.size else 0.0
    if disp_px < STATIC_BELOW_PX:
        return 0.0, disp_px, "static"
    if len(pts1) < MIN_CORNERS:
        return _fallback_yaw_deg(pts1, pts2), disp_px, "few_tracks"
    essential, inliers = cv2.findEssentialMat(
        pts1, pts2, intrinsics, method=cv2.RANSAC, prob=0.999, threshold=1.0
    )
    if essential is None or inliers is None or essential.shape != (3, 3):
        return _fallback_yaw_deg(pts1, pts2), disp_px, "no_essential"
    if int(np.sum(inliers)) < MIN_INLIERS:
        return _fallback_yaw_deg(pts1, pts2), disp_px, "few_inliers"
    _, rotation, _, _ = cv2.recoverPose(essential, pts1, pts2, intrinsics, mask=inliers)
    return yaw_from_rotation_deg(rotation), disp_px, "essential"


def vo_signals(frames: np.ndarray, intrinsics: np.ndarray | None = None) -> VOSignals:
    """KLT + essential-matrix signals for consecutive pairs of a clip (T, H, W, 3) RGB uint8, T >= 2.

    `intrinsics` is K (3, 3) in px at the frames' resolution; None uses `default_intrinsics`.
    """
    clip = as_clip(frames)
    height_px, width_px = clip.shape[1:3]
    K = default_intrinsics(width_px, height_px) if intrinsics is None else np.asarray(intrinsics, np.float64)
    if K.shape != (3, 3) or not np.all(np.isfinite(K)) or K[0, 0] <= 0 or K[1, 1] <= 0:
        raise ValueError(f"intrinsics must be a finite 3x3 K with positive focal lengths, got {K.tolist()}")
    mask = roi_mask(width_px, height_px)
    grays = [cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) for frame in clip]
    per_pair = [pair_motion(a, b, K, mask) for a, b in zip(grays[:-1], grays[1:], strict=True)]
    yaw, disp, method = zip(*per_pair, strict=True)
    return VOSignals(np.array(yaw, np.float64), np.array(disp, np.float64), tuple(method))


def ols_slope(values: np.ndarray) -> float:
    """Least-squares slope of values (P,) against the pair index 0..P-1."""
    index = np.arange(values.size, dtype=np.float64)
    centred = index - index.mean()
    return float(np.sum(centred * (values - values.mean())) / max(float(np.sum(centred**2)), 1e-12))


def _braking_pairs(disp_px: np.ndarray, drop_fraction: float) -> np.ndarray:
    """(P,) bool: pair k >= 1 whose displacement fell by more than drop_fraction x mean below pair k-1.

    Upstream only looks for braking when the mean displacement exceeds 0.5 px (hard-coded gate).
    """
    mean_px = float(np.mean(disp_px))
    drop_px = mean_px * drop_fraction if mean_px > 0.5 else 0.0
    braking = np.zeros(disp_px.size, dtype=bool)
    if drop_px > 0:
        braking[1:] = disp_px[1:] < disp_px[:-1] - drop_px
    return braking


def vo_answers(signals: VOSignals, thresholds: VOThresholds | None = None) -> dict[str, str]:
    """Map VO signals to the six answers (paper Eqs. 14-19, upstream guards for short clips)."""
    th = thresholds or VOThresholds()
    yaw, disp = signals.yaw_deg, signals.disp_px
    if yaw.size == 0:
        raise ValueError("no frame pairs: need signals for at least one pair")
    enough = yaw.size >= MIN_PAIRS_FOR_EVENTS
    mean_yaw, peak_yaw = float(np.mean(yaw)), float(np.max(np.abs(yaw)))
    turning = abs(mean_yaw) > th.yaw_deadzone_deg and peak_yaw > th.yaw_peak_deg
    slope = ols_slope(disp) if enough else 0.0
    if slope > th.trend_px_per_pair:
        trend = "accelerating"
    elif slope < -th.trend_px_per_pair:
        trend = "decelerating"
    else:
        trend = "steady"
    return {
        "yaw_rate_turn_direction": ("left" if mean_yaw > 0 else "right") if turning else "straight",
        "speed_trend": trend,
        "significant_heading_change": yes_no(float(np.sum(np.abs(yaw))) > th.heading_deg),
        "high_lateral_accel": yes_no(peak_yaw > th.lateral_deg),
        "stop_and_go": yes_no(enough and stop_go_cycles(disp, th.stopped_px, th.moving_px) >= 1),
        "brake_then_turn": yes_no(
            enough
            and event_then_event(
                _braking_pairs(disp, th.brake_drop_fraction), np.abs(yaw) > th.yaw_deadzone_deg
            )
        ),
    }


def visual_odometry(
    frames: np.ndarray, intrinsics: np.ndarray | None = None, thresholds: VOThresholds | None = None
) -> VOResult:
    """Run EgoDyn's VO proxy on a clip (T, H, W, 3) RGB uint8 (upstream feeds 10 evenly spaced frames)."""
    signals = vo_signals(frames, intrinsics)
    return VOResult(signals, vo_answers(signals, thresholds))
