"""EgoDyn's Farneback flow heuristic (upstream `baselines/flow_heuristic.py`, paper App. B.2).

Per frame pair, dense Farneback flow inside a central horizontal band gives three pixel-domain proxies:
turn (median tangential flow about the image centre, + = counter-clockwise = left), expansion (median
radial flow, + = outward) and magnitude (median flow length). Temporal aggregates with fixed deadzones
answer the six geometrically answerable questions. The proxies are not metric quantities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np

from kinegraph.tools.motion_signals import (
    MIN_PAIRS_FOR_EVENTS,
    as_clip,
    event_then_event,
    stop_go_cycles,
    three_way,
    yes_no,
)

MAX_WIDTH_PX = 320  # frames wider than this are downsampled (INTER_AREA) before the flow
ROI_TOP, ROI_BOTTOM = 0.20, 0.85  # signal band: drop the top 20 % (sky) and bottom 15 % (hood)


@dataclass(frozen=True)
class FlowThresholds:
    """The paper's deadzones for the flow proxies (pixels at the processing resolution)."""

    turn_px: float = 0.05
    expansion_px: float = 0.2
    lateral_px: float = 1.5
    heading_px: float = 3.0
    stopped_px: float = 0.3
    moving_px: float = 1.5


class FlowSignals(NamedTuple):
    """Per-pair proxies, each (P,) for P = T - 1 frame pairs, in pixels at the processing resolution."""

    turn_px: np.ndarray
    expansion_px: np.ndarray
    magnitude_px: np.ndarray


class FlowResult(NamedTuple):
    """Signals and the answers they map to ({question_id: answer} for the six probe questions)."""

    signals: FlowSignals
    answers: dict[str, str]


def preprocess_gray(frame_rgb: np.ndarray, max_width_px: int = MAX_WIDTH_PX) -> np.ndarray:
    """RGB (H, W, 3) -> grey, downsampled to at most `max_width_px` wide (INTER_AREA), blurred (3x3, 0.8)."""
    gray = cv2.cvtColor(frame_rgb, cv2.COLOR_RGB2GRAY)
    width = gray.shape[1]
    if width > max_width_px:
        scale = max_width_px / width
        gray = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(gray, (3, 3), 0.8)


def farneback_flow(prev_gray: np.ndarray, next_gray: np.ndarray) -> np.ndarray:
    """Dense flow (H, W, 2) [dx, dy] in px from `prev_gray` to `next_gray` with upstream's parameters."""
    return cv2.calcOpticalFlowFarneback(
        prev_gray,
        next_gray,
        None,
        pyr_scale=0.5,
        levels=3,
        winsize=15,
        iterations=3,
        poly_n=5,
        poly_sigma=1.2,
        flags=0,
    )


def roi_geometry(height_px: int, width_px: int) -> tuple[slice, np.ndarray, np.ndarray, np.ndarray]:
    """Row band of the ROI and, inside it, offsets from the image centre dx, dy and radius r, each (h, W).

    r below 1e-6 is set to 1 (the centre pixel) as upstream does.
    """
    top, bottom = int(height_px * ROI_TOP), int(height_px * ROI_BOTTOM)
    ys, xs = np.mgrid[top:bottom, 0:width_px].astype(np.float32)
    dx = xs - width_px / 2.0
    dy = ys - height_px / 2.0
    radius = np.sqrt(dx**2 + dy**2)
    radius[radius < 1e-6] = 1.0
    return slice(top, bottom), dx, dy, radius


def signals_from_flow(flow: np.ndarray) -> tuple[float, float, float]:
    """(turn, expansion, magnitude) in px from one dense flow field (H, W, 2), as the paper's Eqs. 5-7.

    The paper prints the expansion as (fx dx - fy dy)/r; upstream code computes the true radial
    component (fx dx + fy dy)/r, which is what the published numbers come from and what is kept here.
    """
    band, dx, dy, radius = roi_geometry(flow.shape[0], flow.shape[1])
    fx, fy = flow[band, :, 0], flow[band, :, 1]
    turn = float(np.median((fx * dy - fy * dx) / radius))
    expansion = float(np.median((fx * dx + fy * dy) / radius))
    magnitude = float(np.median(np.sqrt(fx**2 + fy**2)))
    return turn, expansion, magnitude


def flow_signals(frames: np.ndarray, max_width_px: int = MAX_WIDTH_PX) -> FlowSignals:
    """Farneback proxies for consecutive pairs of a clip (T, H, W, 3) RGB uint8, T >= 2.

    A textureless pair yields zero flow and so zero signals (upstream behaviour: "straight", "steady").
    """
    clip = as_clip(frames)
    grays = [preprocess_gray(frame, max_width_px) for frame in clip]
    per_pair = [signals_from_flow(farneback_flow(a, b)) for a, b in zip(grays[:-1], grays[1:], strict=True)]
    turn, expansion, magnitude = (
        np.array(column, dtype=np.float64) for column in zip(*per_pair, strict=True)
    )
    return FlowSignals(turn, expansion, magnitude)


def flow_answers(signals: FlowSignals, thresholds: FlowThresholds | None = None) -> dict[str, str]:
    """Map flow proxies to the six answers (paper Eqs. 8-13, upstream tie-breaking and guards)."""
    th = thresholds or FlowThresholds()
    turn, expansion, magnitude = signals
    if turn.size == 0:
        raise ValueError("no frame pairs: need signals for at least one pair")
    enough = turn.size >= MIN_PAIRS_FOR_EVENTS
    return {
        "yaw_rate_turn_direction": three_way(float(np.mean(turn)), th.turn_px, "left", "right", "straight"),
        "speed_trend": three_way(
            float(np.mean(expansion)), th.expansion_px, "accelerating", "decelerating", "steady"
        ),
        "significant_heading_change": yes_no(float(np.sum(np.abs(turn))) > th.heading_px),
        "high_lateral_accel": yes_no(float(np.max(np.abs(turn))) > th.lateral_px),
        "stop_and_go": yes_no(enough and stop_go_cycles(magnitude, th.stopped_px, th.moving_px) >= 1),
        "brake_then_turn": yes_no(
            enough and event_then_event(expansion < -th.expansion_px, np.abs(turn) > th.turn_px)
        ),
    }


def flow_heuristic(
    frames: np.ndarray, thresholds: FlowThresholds | None = None, max_width_px: int = MAX_WIDTH_PX
) -> FlowResult:
    """EgoDyn's flow heuristic on a clip (T, H, W, 3) RGB uint8 (upstream feeds 10 evenly spaced frames)."""
    signals = flow_signals(frames, max_width_px)
    return FlowResult(signals, flow_answers(signals, thresholds))
