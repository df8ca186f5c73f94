"""A TCogMap-style ego-motion class from visual-odometry signals (non-official; frames only, no poses).

TCogMap (`kinegraph.tools.tcogmap`, TAD Algorithm 1) reads metric ego poses. From frames alone EgoDyn's
VO proxy gives, per consecutive frame pair, a yaw in degrees (+ = left) and a median feature-track
length in pixels, with no metric scale. This module applies Algorithm 1's decision order to those:

- exact: the turn rule. The net yaw change is the sum of the per-pair VO yaws, wrapped to [-180, 180)
  as upstream wraps its net change; |net| > 10 deg is a turn, left when positive. VO yaw and the
  nuScenes pose yaw are both degrees with + = left, so the threshold carries over unchanged.
- proxy: every speed rule. Each pair's median track length (px per pair) stands in for a speed (m/s);
  the stand-in thresholds are VO's own pixel thresholds (paper Eqs. 14-19): 0.5 px for "stationary"
  (TCogMap: 0.2 m/s) and 2.0 px for "moving" (TCogMap's 1.0 m/s stopping speed). Like the paper's VO
  thresholds they depend on image size and frame spacing (10 frames over 3 s at native resolution).
  Each pair votes once in the stopped rule (upstream's forced-zero first velocity has no pixel analogue);
  start and end speeds are the first and last pairs, as upstream's are its first and last velocities.
- absent: the lane-change rule. It needs the ego-frame lateral velocity, which VO's yaw and track length
  do not carry, so this summary never reports a lane change. Upstream's rule also stays silent on lane
  changes whose heading follows the path (docs/tools-egodyn.md), so both read them as straight driving.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kinegraph.tools.tcogmap import TURN_YAW_THRESHOLD_DEG, motion_phrase

STATIONARY_DISP_PX = 0.5  # non-official stand-in for STATIONARY_THRESHOLD_MPS (= VOThresholds.stopped_px)
STOPPING_DISP_PX = 2.0  # non-official stand-in for STOPPING_SPEED_THRESHOLD_MPS (= VOThresholds.moving_px)
MOVING_FACTOR = 1.5  # upstream's "clearly moving" factor on the stopping speed, kept


class VOMotionSummary(NamedTuple):
    """The class, its TCogMap phrase, and the VO figures the rules read."""

    motion_class: str
    phrase: str
    net_yaw_deg: float
    start_disp_px: float
    end_disp_px: float
    stationary_pairs: int
    n_pairs: int


def _checked(yaw_deg: np.ndarray, disp_px: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    yaw, disp = np.asarray(yaw_deg, dtype=float), np.asarray(disp_px, dtype=float)
    if yaw.ndim != 1 or yaw.shape != disp.shape or yaw.size == 0:
        raise ValueError(
            f"need per-pair yaw_deg (P,) and disp_px (P,) with P >= 1, got {yaw.shape}, {disp.shape}"
        )
    if not (np.all(np.isfinite(yaw)) and np.all(np.isfinite(disp))) or np.any(disp < 0):
        raise ValueError("yaw_deg must be finite and disp_px finite and non-negative")
    return yaw, disp


def vo_motion_summary(yaw_deg: np.ndarray, disp_px: np.ndarray) -> VOMotionSummary:
    """Algorithm 1's class ("Stopped", "Turn left", ...) from VO yaw (P,) in deg and track length (P,) px."""
    yaw, disp = _checked(yaw_deg, disp_px)
    n_pairs = yaw.size
    net_yaw_deg = float((np.sum(yaw) + 180.0) % 360.0 - 180.0)
    start_px, end_px = float(disp[0]), float(disp[-1])
    stationary = int(np.sum(disp < STATIONARY_DISP_PX))
    if stationary > n_pairs / 2:
        motion_class = "Stopped"
    elif abs(net_yaw_deg) > TURN_YAW_THRESHOLD_DEG:
        motion_class = "Turn left" if net_yaw_deg > 0 else "Turn right"
    elif start_px < STOPPING_DISP_PX and end_px > STOPPING_DISP_PX * MOVING_FACTOR:
        motion_class = "Starting"
    elif start_px > STOPPING_DISP_PX * MOVING_FACTOR and end_px < STOPPING_DISP_PX:
        motion_class = "Stopping"
    else:
        motion_class = "Straight, constant speed"
    return VOMotionSummary(
        motion_class, motion_phrase(motion_class), net_yaw_deg, start_px, end_px, stationary, n_pairs
    )


def turn_label(motion_class: str) -> str:
    """The EgoDyn turn-direction answer a class implies: left, right, or straight for every other class."""
    return {"Turn left": "left", "Turn right": "right"}.get(motion_class, "straight")
