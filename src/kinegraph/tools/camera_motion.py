"""The camera's own motion in a clip, from dense optical flow of the whole image (no scale, no 3D).

Per frame pair, Farneback flow (EgoDyn's parameters, `tools.flow`) gives the median horizontal and
vertical image shift and the median radial and tangential flow about the image centre. Over a clip the
per-pair medians are averaged. With a moving object smaller than half the frame the medians follow the
background, i.e. the camera: content shifting left means the camera moves (or pans) right, content
expanding means it moves forward. Values are pixels per frame at the processing width (<= 320 px).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kinegraph.tools.flow import MAX_WIDTH_PX, farneback_flow, preprocess_gray
from kinegraph.tools.motion_signals import as_clip

SHIFT_THRESHOLD_PX = 0.5  # per frame: below this the camera is not translating sideways
EXPANSION_THRESHOLD_PX = 0.2  # per frame: below this it is not moving along its axis


class CameraMotion(NamedTuple):
    """Mean over frame pairs of the per-pair medians, px/frame at `width_px`.

    shift_x_px: + = content moves right (camera moves left); shift_y_px: + = content moves down;
    expansion_px: + = content moves outward (camera moves forward); rotation_px: + = content turns
    clockwise on screen (camera rolls counter-clockwise).
    """

    shift_x_px: float
    shift_y_px: float
    expansion_px: float
    rotation_px: float
    n_pairs: int
    width_px: int


def pair_motion(flow: np.ndarray) -> tuple[float, float, float, float]:
    """(shift_x, shift_y, expansion, rotation) medians of one dense flow field (H, W, 2) in px."""
    height, width = flow.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    dx, dy = xs - width / 2.0, ys - height / 2.0
    radius = np.maximum(np.sqrt(dx**2 + dy**2), 1.0)
    fx, fy = flow[..., 0], flow[..., 1]
    return (
        float(np.median(fx)),
        float(np.median(fy)),
        float(np.median((fx * dx + fy * dy) / radius)),
        float(np.median((fy * dx - fx * dy) / radius)),
    )


def camera_motion(frames: np.ndarray, max_width_px: int = MAX_WIDTH_PX) -> CameraMotion:
    """Camera motion of a clip (T, H, W, 3) RGB uint8, T >= 2."""
    clip = as_clip(frames)
    grays = [preprocess_gray(frame, max_width_px) for frame in clip]
    per_pair = np.array(
        [pair_motion(farneback_flow(a, b)) for a, b in zip(grays[:-1], grays[1:], strict=True)]
    )
    shift_x, shift_y, expansion, rotation = per_pair.mean(axis=0)
    return CameraMotion(
        float(shift_x), float(shift_y), float(expansion), float(rotation), len(per_pair), grays[0].shape[1]
    )


def camera_direction(motion: CameraMotion) -> str:
    """left | right | forward | backward | static: the dominant translation the flow implies."""
    sideways = abs(motion.shift_x_px) / SHIFT_THRESHOLD_PX
    along = abs(motion.expansion_px) / EXPANSION_THRESHOLD_PX
    if max(sideways, along) < 1.0:
        return "static"
    if sideways >= along:
        return "right" if motion.shift_x_px < 0 else "left"
    return "forward" if motion.expansion_px > 0 else "backward"
