"""Road-feature correspondences between consecutive frames: corners below the horizon, tracked by
pyramidal Lucas-Kanade on a frame pre-warped by the predicted road homography, and kept only when the
backward track returns.

Under forward motion the road's texture grows between frames (by 30 % and more for near road at low
frame rates or highway speed), which breaks plain LK. Warping frame b by the road homography of the
predicted ego motion undoes most of that growth and displacement, so LK only refines a small residual;
the forward-backward check drops occlusions, moving objects' edges and textureless drift. The first
pair's prediction comes from a coarse photometric search over forward steps.
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
STATIC_GREY_LEVELS = 4  # at quarter resolution: a pixel varying less than this over the clip is static
MAX_STATIC_SHARE = 0.6  # above this share of the road the ego stands, not a bonnet
FB_TOLERANCE_PX = 0.8  # at 640 px width; scaled with the image
_LK_CRITERIA = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)


class PairMatches(NamedTuple):
    """Corners (N, 2) px in frame a and where they were tracked to in frame b."""

    a_px: np.ndarray
    b_px: np.ndarray


def road_mask(
    shape: tuple[int, int], camera: CameraModel, pitch_rad: float, static: np.ndarray | None = None
) -> np.ndarray:
    """uint8 mask (H, W): 255 from a little below the horizon down to the image's bottom margin, less
    the `static` pixels (bool (H, W)) that never change over the clip."""
    height_px, width_px = shape
    margin = max(4, int(0.03 * height_px))
    top = int(np.clip(horizon_row_px(camera, pitch_rad) + margin, 0, height_px - 1))
    mask = np.zeros(shape, np.uint8)
    mask[top : height_px - margin, margin : width_px - margin] = 255
    if static is not None:
        mask[static] = 0
    return mask


def static_pixels(
    grays: list[np.ndarray], camera: CameraModel, pitch_rad: float, margin_px: int = 0
) -> np.ndarray | None:
    """bool (H, W): pixels that stay the same in every frame while the road below the horizon changes: a
    bonnet, a dashboard, burned-in text, a car ahead keeping its distance. None when the road itself is
    still (the ego stands) or nothing is static."""
    small = [cv2.resize(g, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA) for g in grays]
    stack = np.stack(small).astype(np.int16)
    still = (stack.max(axis=0) - stack.min(axis=0)) <= STATIC_GREY_LEVELS
    road = road_mask(small[0].shape, camera.scaled(0.25), pitch_rad) > 0
    share = float(still[road].mean()) if road.any() else 1.0
    if share == 0.0 or share > MAX_STATIC_SHARE:
        return None
    grow = 1 + int(np.ceil(margin_px / 4))  # at quarter resolution
    still = cv2.dilate(still.astype(np.uint8), np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)).astype(bool)
    size = (grays[0].shape[1], grays[0].shape[0])
    return cv2.resize(still.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST).astype(bool)


def road_homography(
    shape: tuple[int, int], camera: CameraModel, pitch_rad: float, motion: np.ndarray
) -> np.ndarray:
    """H (3, 3) taking road pixels of frame a to frame b under `motion` (identity if it cannot be formed)."""
    height_px, width_px = shape
    top = min(height_px - 2.0, max(horizon_row_px(camera, pitch_rad) + 0.1 * height_px, 0.0))
    src = np.array(
        [
            [0.2 * width_px, top],
            [0.8 * width_px, top],
            [0.05 * width_px, height_px - 1.0],
            [0.95 * width_px, height_px - 1.0],
        ]
    )
    ground, hit = back_project(normalised_rays(src, camera), pitch_rad, camera)
    if not hit.all():
        return np.eye(3)
    dst = project(move_points(ground, motion), pitch_rad, camera)
    if not np.all(np.isfinite(dst)):
        return np.eye(3)
    return cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32)).astype(np.float64)


def warp_to_a(gray_b: np.ndarray, homography: np.ndarray) -> np.ndarray:
    """Frame b resampled onto frame a's pixels through the road homography a -> b."""
    size = (gray_b.shape[1], gray_b.shape[0])
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    return cv2.warpPerspective(gray_b, homography, size, flags=flags, borderMode=cv2.BORDER_REPLICATE)


def coarse_step_m(
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    camera: CameraModel,
    pitch_rad: float,
    max_step_m: float,
    static: np.ndarray | None = None,
) -> float:
    """The forward step (m) whose road homography best aligns frame b with frame a (median absolute grey
    difference on the road at quarter resolution); a start for the first pair's tracking."""
    small_a = cv2.resize(gray_a, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    small_b = cv2.resize(gray_b, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    small_cam = camera.scaled(0.25)
    small_static = None if static is None else static[::4, ::4][: small_a.shape[0], : small_a.shape[1]]
    mask = road_mask(small_a.shape, small_cam, pitch_rad, small_static) > 0
    best, best_cost = 0.0, np.inf
    for step in np.concatenate([[0.0], np.geomspace(0.1, max_step_m, 14)]):
        h = road_homography(small_a.shape, small_cam, pitch_rad, np.array([step, 0.0, 0.0]))
        warped = warp_to_a(small_b, h)
        inside = cv2.warpPerspective(
            np.full_like(small_b, 255), h, small_b.shape[::-1], flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP
        )
        valid = mask & (inside > 0)
        if valid.sum() < 50:
            continue
        cost = float(np.median(np.abs(warped[valid].astype(np.int16) - small_a[valid])))
        if cost < best_cost:
            best, best_cost = float(step), cost
    return best


def road_corners(
    gray_a: np.ndarray, camera: CameraModel, pitch_rad: float, static: np.ndarray | None = None
) -> np.ndarray | None:
    """Shi-Tomasi corners (N, 2) float32 on the road below the horizon, None when fewer than 6."""
    min_distance = max(5, round(gray_a.shape[1] / 90))
    mask = road_mask(gray_a.shape, camera, pitch_rad, static)
    corners = cv2.goodFeaturesToTrack(gray_a, MAX_CORNERS, 0.005, min_distance, mask=mask, blockSize=7)
    if corners is None or len(corners) < 6:
        return None
    return corners.reshape(-1, 2).astype(np.float32)


def match_with_flow(
    gray_a: np.ndarray,
    flow_px: np.ndarray,
    camera: CameraModel,
    pitch_rad: float,
    static: np.ndarray | None = None,
) -> PairMatches:
    """Road corners of grey frame a and where a dense flow field moves them in frame b.

    `flow_px` (h, w, 2) [dx, dy] is in pixels of its own resolution (e.g. RAFT's working width); it is
    resized to frame a's. The road model's RANSAC, not a forward-backward check, rejects bad vectors.
    """
    height_px, width_px = gray_a.shape
    a_px = road_corners(gray_a, camera, pitch_rad, static)
    if a_px is None:
        empty = np.zeros((0, 2))
        return PairMatches(empty, empty)
    sx, sy = width_px / flow_px.shape[1], height_px / flow_px.shape[0]
    full = cv2.resize(flow_px.astype(np.float32), (width_px, height_px), interpolation=cv2.INTER_LINEAR)
    full *= np.array([sx, sy], np.float32)
    xs, ys = a_px[:, :1], a_px[:, 1:]
    moved = cv2.remap(full, xs, ys, cv2.INTER_LINEAR).reshape(-1, 2)
    b_px = a_px.astype(np.float64) + moved
    inside = np.all((b_px >= 0) & (b_px <= [width_px - 1, height_px - 1]), axis=1)
    return PairMatches(a_px[inside].astype(np.float64), b_px[inside])


def match_pair(
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    camera: CameraModel,
    pitch_rad: float,
    motion_guess: np.ndarray,
    win_px: int,
    levels: int,
    static: np.ndarray | None = None,
) -> PairMatches:
    """Track road corners of grey frame a into grey frame b through the road homography of
    `motion_guess` (LK refines the residual on the pre-warped frame b)."""
    height_px, width_px = gray_a.shape
    a_px = road_corners(gray_a, camera, pitch_rad, static)
    if a_px is None:
        empty = np.zeros((0, 2), np.float32)
        return PairMatches(empty, empty)
    homography = road_homography(gray_a.shape, camera, pitch_rad, motion_guess)
    warped = warp_to_a(gray_b, homography)  # the residual is small: few pyramid levels suffice
    params = {"winSize": (win_px, win_px), "maxLevel": levels, "criteria": _LK_CRITERIA}
    r_px, ok_f, _ = cv2.calcOpticalFlowPyrLK(gray_a, warped, a_px, None, **params)
    back, ok_b, _ = cv2.calcOpticalFlowPyrLK(
        warped, gray_a, r_px, a_px.copy(), flags=cv2.OPTFLOW_USE_INITIAL_FLOW, **params
    )
    b_px = cv2.perspectiveTransform(r_px.reshape(-1, 1, 2).astype(np.float64), homography).reshape(-1, 2)
    tolerance = FB_TOLERANCE_PX * max(1.0, width_px / 640.0)
    inside = np.all((b_px >= 0) & (b_px <= [width_px - 1, height_px - 1]), axis=1)
    inside &= np.all((r_px >= 0) & (r_px <= [width_px - 1, height_px - 1]), axis=1)
    keep = ok_f.ravel().astype(bool) & ok_b.ravel().astype(bool) & inside
    keep &= np.linalg.norm(back - a_px, axis=1) < tolerance
    return PairMatches(a_px[keep].astype(np.float64), b_px[keep])
