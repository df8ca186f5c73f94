"""The mounting height of an uncalibrated road camera, from the spacing of the lane markings.

A road point's lateral offset divided by the camera's height is `(x - cx) / (y - y_horizon)` for a level
camera: it needs the horizon and the principal column, not the focal length. The markings of a lane
therefore sit at lateral offsets whose spacing, in units of the height, is the lane's width over the
height; with lanes of a standard width (`LANE_WIDTH_M`, 3.5 m: the usual width of urban and highway
lanes, which range 3.0-3.75 m) that spacing gives the height. Marking pixels (bright, thin, on the road)
are back-projected from several frames and their lateral offsets histogrammed; the spacing of the two
strongest neighbouring peaks around the car is the lane's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import cv2
import numpy as np

from kinegraph.tools.camera_model import MAX_HEIGHT_M, MIN_HEIGHT_M, CameraModel
from kinegraph.tools.ground_geometry import back_project, horizon_row_px, normalised_rays

LANE_WIDTH_M = 3.5
LANE_WIDTH_SIGMA = 0.07  # relative spread of real lane widths (3.0-3.75 m) around LANE_WIDTH_M
BIN = 0.02  # histogram bin, in units of the camera's height
MIN_MARKING_PIXELS = 300
MIN_ELONGATION = 4.0  # a marking blob is at least this many times longer than thick
MIN_RISE = 0.2  # a marking blob's height over its width (lane lines up to ~5 heights aside rise more)
CAR_CLEARANCE = 0.25  # a lane line within this share of the lane width of the car is one it drives on
EMPTY_TOOTH = 0.15  # a comb tooth's toll above the background, in shares of the strongest marking's density
LINE_HALF_WIDTH = 0.08  # a marking pixel this close to a comb's line (in heights) lies on it


class HeightEstimate(NamedTuple):
    """Mounting height (m), its 1-sigma (m), the lane spacing it came from (in heights), and the share of
    the marking pixels around the comb's lines that lie on them (`on_lines`)."""

    height_m: float
    sigma_m: float
    spacing: float
    on_lines: float


class Comb(NamedTuple):
    """The lane lines' period and the offsets of the lines the markings show (both in heights)."""

    period: float
    lines: np.ndarray


def marking_pixels(gray: np.ndarray) -> np.ndarray:
    """bool (H, W): paint: pixels well above their neighbourhood's median, in long, thin blobs that rise
    towards the horizon (a lane line or dash; bright grain, blobs and text are not)."""
    background = cv2.medianBlur(gray, 15)
    excess = gray.astype(np.int16) - background.astype(np.int16)
    spread = 1.4826 * float(np.median(np.abs(excess))) + 1.0
    bright = (excess > max(12.0, 5.0 * spread)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(bright, connectivity=8)
    length = np.hypot(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT])
    thickness = stats[:, cv2.CC_STAT_AREA] / np.maximum(length, 1.0)
    keep = (stats[:, cv2.CC_STAT_AREA] >= 12) & (length >= MIN_ELONGATION * thickness)
    # along the road, a line points at the vanishing point; foreshortened grain lies flat across it
    keep &= stats[:, cv2.CC_STAT_HEIGHT] >= MIN_RISE * stats[:, cv2.CC_STAT_WIDTH]
    keep[0] = False  # the background label
    return keep[labels]


def lateral_offsets(grays: Sequence[np.ndarray], camera: CameraModel, pitch_rad: float) -> np.ndarray:
    """Lateral offsets (in heights, + = left) of the marking pixels of the near road in `grays`."""
    unit = replace(camera, height_m=1.0)
    height_px, width_px = grays[0].shape
    top = int(np.clip(horizon_row_px(camera, pitch_rad) + 0.12 * height_px, 0, height_px - 1))
    bottom = int(0.85 * height_px)
    offsets = []
    for gray in grays:
        rows, cols = np.nonzero(marking_pixels(gray)[top:bottom])
        if len(rows) == 0:
            continue
        pixels = np.column_stack([cols, rows + top]).astype(np.float64)
        ground, hit = back_project(normalised_rays(pixels, unit), pitch_rad, unit)
        near = hit & (ground[:, 0] < 12.0)  # within 12 heights: the lines are still apart
        offsets.append(ground[near, 1])
    return np.concatenate(offsets) if offsets else np.zeros(0)


def lane_spacing(offsets: np.ndarray) -> Comb | None:
    """The period (in heights) of the markings' lateral offsets: lane lines repeat one lane width apart
    (edge lines, dashed dividers and further lanes too), so the comb of that period, at the best phase,
    lands on the most marking pixels per tooth. None without two strong teeth."""
    counts, edges = np.histogram(offsets, bins=np.arange(-4.0, 4.0 + BIN, BIN))
    density = cv2.GaussianBlur(counts.astype(np.float64).reshape(1, -1), (0, 0), 1.5).ravel()
    density /= max(float(density.max()), 1e-9)
    centres = 0.5 * (edges[:-1] + edges[1:])
    toll = float(np.median(density)) + EMPTY_TOOTH  # above the spread of non-marking pixels (grain)
    best, best_score = None, 0.0
    for period in np.arange(1.0, 3.6, 0.01):
        phases = np.arange(0.0, period, BIN)
        teeth = phases[:, None] + period * np.arange(-4, 5)[None, :] - period * 4  # (phases, 9)
        teeth = teeth + period * np.floor((4.0 - teeth[:, -1:]) / period)  # shift to cover -4 .. 4
        inside = np.abs(teeth) < 3.0
        values = np.interp(teeth, centres, density) * inside
        strong = (values > toll + 0.15) & inside
        # each tooth scores its density less a toll: a comb of half the period pays for its empty teeth,
        # one of twice the period misses every other line
        score = np.where(np.sum(strong, axis=1) >= 2, np.sum((values - toll) * inside, axis=1), 0.0)
        # an empty tooth under the car would have it drive on a line nobody sees: where only the two
        # edge lines show (dim dashes between lanes), this is what tells three lanes from two wide ones
        on_unseen_line = np.any((np.abs(teeth) < CAR_CLEARANCE * period) & (values <= toll), axis=1)
        score = np.where(on_unseen_line, 0.0, score)
        k = int(np.argmax(score))
        if score[k] > best_score:
            best, best_score = Comb(float(period), teeth[k][strong[k]]), float(score[k])
    return best


def height_from_lanes(
    grays: Sequence[np.ndarray], camera: CameraModel, pitch_rad: float
) -> HeightEstimate | None:
    """The camera's height from the lane markings' spacing, or None when no two markings repeat at a
    spacing that gives a plausible height."""
    return height_from_offsets(lateral_offsets(grays, camera, pitch_rad))


def height_from_offsets(offsets: np.ndarray) -> HeightEstimate | None:
    """The height from the marking pixels' lateral `offsets` (in heights), as `height_from_lanes`."""
    offsets = offsets[np.abs(offsets) < 4.0]
    if len(offsets) < MIN_MARKING_PIXELS:
        return None
    comb = lane_spacing(offsets)
    if comb is None:
        return None
    height = LANE_WIDTH_M / comb.period
    if not (MIN_HEIGHT_M <= height <= MAX_HEIGHT_M):
        return None
    return HeightEstimate(height, height * LANE_WIDTH_SIGMA, comb.period, on_lines(offsets, comb))


def on_lines(offsets: np.ndarray, comb: Comb) -> float:
    """The share of the marking pixels within half a period of the comb's lines that lie on them
    (within `LINE_HALF_WIDTH`): near 1 for lines along the road, low for markings smeared across the
    lane, which is what lines bending under a turning car become once back-projected and pooled."""
    distance = np.min(np.abs(offsets[:, None] - comb.lines[None, :]), axis=1)
    around = float(np.sum(distance < comb.period / 2))
    return float(np.sum(distance < LINE_HALF_WIDTH)) / max(around, 1.0)


def horizon_row(grays: Sequence[np.ndarray]) -> float | None:
    """Image row (px) of the road's horizon: where the lane markings, straight lines along the road,
    converge (the median crossing of left- and right-leaning marking segments). None without at least
    one of each. With the focal length it gives the camera's pitch, from any frame a marking shows in."""
    height_px, width_px = grays[0].shape
    crossings = []
    for gray in grays:
        mask = marking_pixels(gray).astype(np.uint8) * 255
        mask[: height_px // 3] = 0  # markings lie below the horizon
        segments = cv2.HoughLinesP(
            mask, 1, np.pi / 180, threshold=20, minLineLength=height_px // 12, maxLineGap=8
        )
        if segments is None:
            continue
        lines = []
        for x1, y1, x2, y2 in segments.reshape(-1, 4).astype(np.float64):
            if abs(y2 - y1) < 0.2 * abs(x2 - x1) or abs(y2 - y1) < 1e-6:
                continue  # flat: not a marking along the road
            lines.append((x1, y1, x2, y2))
        for i, (a1, b1, a2, b2) in enumerate(lines):
            for c1, d1, c2, d2 in lines[i + 1 :]:
                slope_1, slope_2 = (a2 - a1) / (b2 - b1), (c2 - c1) / (d2 - d1)  # dx/dy
                if slope_1 * slope_2 >= 0 or abs(slope_1 - slope_2) < 0.2:
                    continue  # the two sides of a lane lean opposite ways
                row = (c1 - a1 + slope_1 * b1 - slope_2 * d1) / (slope_1 - slope_2)
                if -0.5 * height_px < row < height_px:
                    crossings.append(row)
    return float(np.median(crossings)) if len(crossings) >= 3 else None
