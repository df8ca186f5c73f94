"""Road-feature correspondences between consecutive frames: corners below the horizon, tracked by
pyramidal Lucas-Kanade from a motion-predicted start and kept only when the backward track returns.

Predicting each corner's position from the previous pair's ego motion lets LK follow the fast near
road at highway speed or low frame rates; the forward-backward check drops occlusions, moving objects'
edges and textureless drift.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from kinegraph.tools.camera_model import CameraModel
from kinegraph.tools.ground_geometry import (
    back_project,
    horizon_row_px,
    move_points,
    normalised_rays,
    project,
)

MAX_CORNERS = 250
FB_TOLERANCE_PX = 0.8  # at 640 px width; scaled with the image
_LK_CRITERIA = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)


class PairMatches(NamedTuple):
    """Corners (N, 2) px in frame a and where they were tracked to in frame b."""

    a_px: np.ndarray
    b_px: np.ndarray


def road_mask(shape: tuple[int, int], camera: CameraModel, pitch_rad: float) -> np.ndarray:
    """uint8 mask (H, W): 255 from a little below the horizon down to the image's bottom margin."""
    height_px, width_px = shape
    margin = max(4, int(0.03 * height_px))
    top = int(np.clip(horizon_row_px(camera, pitch_rad) + margin, 0, height_px - 1))
    mask = np.zeros(shape, np.uint8)
    mask[top : height_px - margin, margin : width_px - margin] = 255
    return mask


def predict_px(a_px: np.ndarray, camera: CameraModel, pitch_rad: float, motion: np.ndarray) -> np.ndarray:
    """Where road pixels (N, 2) of frame a land in frame b under `motion`; off-road pixels stay put."""
    ground, hit = back_project(normalised_rays(a_px, camera), pitch_rad, camera)
    guess = a_px.copy()
    if hit.any():
        moved = project(move_points(ground[hit], motion), pitch_rad, camera)
        ok = np.all(np.isfinite(moved), axis=1)
        guess[np.flatnonzero(hit)[ok]] = moved[ok]
    return guess


def match_pair(
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    camera: CameraModel,
    pitch_rad: float,
    motion_guess: np.ndarray,
    win_px: int,
    levels: int,
) -> PairMatches:
    """Track road corners of grey frame a into grey frame b, starting each from its predicted place."""
    height_px, width_px = gray_a.shape
    min_distance = max(5, round(width_px / 90))
    corners = cv2.goodFeaturesToTrack(
        gray_a, MAX_CORNERS, 0.005, min_distance, mask=road_mask(gray_a.shape, camera, pitch_rad), blockSize=7
    )
    if corners is None or len(corners) < 6:
        empty = np.zeros((0, 2), np.float32)
        return PairMatches(empty, empty)
    a_px = corners.reshape(-1, 2).astype(np.float32)
    guess = predict_px(a_px.astype(np.float64), camera, pitch_rad, motion_guess)
    guess = np.clip(guess, 0, [width_px - 1, height_px - 1]).astype(np.float32)
    params = {"winSize": (win_px, win_px), "maxLevel": levels, "criteria": _LK_CRITERIA}
    flags = cv2.OPTFLOW_USE_INITIAL_FLOW
    b_px, ok_f, _ = cv2.calcOpticalFlowPyrLK(gray_a, gray_b, a_px, guess.copy(), flags=flags, **params)
    back, ok_b, _ = cv2.calcOpticalFlowPyrLK(gray_b, gray_a, b_px, a_px.copy(), flags=flags, **params)
    tolerance = FB_TOLERANCE_PX * max(1.0, width_px / 640.0)
    inside = np.all((b_px >= 0) & (b_px <= [width_px - 1, height_px - 1]), axis=1)
    keep = ok_f.ravel().astype(bool) & ok_b.ravel().astype(bool) & inside
    keep &= np.linalg.norm(back - a_px, axis=1) < tolerance
    return PairMatches(a_px[keep].astype(np.float64), b_px[keep].astype(np.float64))
