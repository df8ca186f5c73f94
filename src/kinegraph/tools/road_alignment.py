"""Direct (photometric) road alignment: a frame pair's planar motion from every road pixel, not corners.

Corners die first under sensor noise, block compression and a dark, low-contrast road: at JPEG quality
10 the asphalt's grain is quantised away and what is left (lane markings, the coarse structure of the
road, block means that step as the road moves) gives Shi-Tomasi few corners and LK no texture to lock
onto. Aligning the whole road region through the road-plane homography integrates that weak signal over
thousands of pixels. Frames are prepared first (`prepare`): blurred in proportion to their noise and
normalised locally (each pixel by its neighbourhood's mean and spread), which also undoes row-wise or
regional exposure changes such as a rolling shutter's flicker bands.

The fit is Gauss-Newton on (tx, ty, dyaw, dpitch) with robust (Huber) weights, coarse to fine; its
covariance, inflated for the blur's correlation of neighbouring residuals, gives each motion a 1-sigma.
"""

from __future__ import annotations

import math
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

ALIGN_WIDTH_PX = 200  # the finest level of the alignment (the road's structure, not its grain)
LOCAL_SIGMA_PX = 4.0  # neighbourhood of the local normalisation, at ALIGN_WIDTH_PX
STEP_SCALES = np.array([0.02, 0.01, 0.0005, 0.0005])  # finite-difference steps (m, m, rad, rad)
HUBER = 1.0  # in normalised grey units
MAX_ITERATIONS = 12
FAR_FIELD_HALF_WIDTH = 0.35  # of the frame's width, each side of the principal column
MIN_OVERLAP = 0.4  # share of a pair's road pixels a step must keep in view to be scored
BONNET_EDGE_STATIC = 0.5  # share of the central width static in a bonnet's edge rows
BONNET_EDGE_COHERENCE = 0.9  # |mean| / mean |.| of the median image's vertical step along an edge row
BONNET_MAX_SHARE = 0.35  # how much of the frame's height a bonnet may cover
BONNET_MARGIN_ROWS = 5  # rows above the edge's first that go too (the blurred edge, the nearest road)
STRONG_SPREAD_PERCENTILE = 90.0  # `prepare(strong_only=True)`: dusk and row flicker tuning clips scored
# 0.834 at this floor, 0.829 at the 75th percentile, 0.816 at twice the 90th, 0.805 at half the median
MIN_STRUCTURE = 1e-3  # mean squared prepared value below which a road region carries no signal


class DirectFit(NamedTuple):
    """A pair's motion [tx_m, ty_m, dyaw_rad], pitch change (rad), 1-sigma of [tx, ty, dyaw], RMS of the
    normalised residual, the road pixels used, and the residual's share of standing still's (~1 when
    the frames show no motion the road's structure could reveal)."""

    motion: np.ndarray
    dpitch_rad: float
    sigma: np.ndarray
    rms: float
    n_px: int
    still_ratio: float = 0.0


def prepare(
    gray: np.ndarray, blur_px: float = 1.0, sigma_px: float = LOCAL_SIGMA_PX, strong_only: bool = False
) -> np.ndarray:
    """float32 frame blurred by `blur_px` (against noise and compression blocks), then each pixel as
    (value - local mean) / local spread: gain and offset that vary across the frame (flicker bands,
    vignetting, auto-exposure) cancel. The spread is floored at half the frame's median, so flat,
    noisy regions stay near zero instead of being amplified. `strong_only` floors it at the frame's
    `STRONG_SPREAD_PERCENTILE` instead: under row flicker the weak structure is mostly compression blocks
    changing level as the bands pass, and only the strongest (lane paint, edges) keeps its full weight."""
    image = gray.astype(np.float32)
    if blur_px > 0.3:
        image = cv2.GaussianBlur(image, (0, 0), blur_px)
    box = (2 * round(1.25 * sigma_px) + 1,) * 2  # a box as wide as the Gaussian's core: O(1) a pixel
    mean = cv2.boxFilter(image, -1, box)
    detail = image - mean
    spread = np.sqrt(np.maximum(cv2.boxFilter(detail * detail, -1, box), 0.0))
    floor = (
        float(np.percentile(spread, STRONG_SPREAD_PERCENTILE))
        if strong_only
        else 0.5 * float(np.median(spread))
    )
    floor = max(0.5, floor)
    return detail / np.maximum(spread, floor)


def static_structure(prepared: list[np.ndarray], threshold: float = 0.45) -> np.ndarray:
    """bool (H, W): pixels whose prepared value stays what it is over the clip while carrying structure:
    a bonnet's edge, a car ahead keeping its distance, burned-in text, a compression grid. The share of
    a pixel's energy its temporal median explains: ~1 for static structure, ~0 for moving road texture
    and for flat noise (which neither moves nor has structure to mislead a tracker)."""
    stack = np.stack(prepared)
    median = np.median(stack, axis=0)
    energy = np.mean(stack * stack, axis=0)
    return (median * median) > threshold * np.maximum(energy, 0.05)


def bonnet_top_row(grays: np.ndarray, static: np.ndarray) -> int | None:
    """The first image row of a bonnet (or dashboard) over the bottom of frames `grays` (T, H, W), or None.

    Its edge is a static band (`static`, bool (H, W), from `static_structure`) low in the frame that is
    one horizontal edge across the central width: the clip's median image steps the same way (dark below,
    or bright below) in every column. Lane lines are static on a straight road too, but slant, and a slow
    car's road is static without such a step. Under the edge the bonnet carries no motion, only noise
    and compression blocks that blur every cost curve, so the whole region goes.
    """
    height, width = static.shape
    centre = slice(int(0.2 * width), int(0.8 * width))
    median = cv2.GaussianBlur(np.median(grays, axis=0).astype(np.float32), (0, 0), 1.0)
    step = cv2.Sobel(median, cv2.CV_32F, 0, 1, ksize=3)[:, centre]
    coherence = np.abs(step.mean(axis=1)) / np.maximum(np.abs(step).mean(axis=1), 1e-6)
    edge = (coherence >= BONNET_EDGE_COHERENCE) & (static[:, centre].mean(axis=1) >= BONNET_EDGE_STATIC)
    low = int((1.0 - BONNET_MAX_SHARE) * height)
    rows = np.nonzero(edge[low:] & edge[low - 1 : -1])[0]  # two rows at least: an edge, not a speck
    return None if len(rows) == 0 else low + int(rows[0]) - BONNET_MARGIN_ROWS


class RoadQuad(NamedTuple):
    """Four pixels spanning the road of a frame (4, 2) and the road points (4, 2) m they see: what every
    road homography of a pair is built from, found once per frame size, camera and pitch."""

    pixels: np.ndarray
    ground_m: np.ndarray


def road_quad(shape: tuple[int, int], camera: CameraModel, pitch_rad: float) -> RoadQuad | None:
    """The road quad of frames `shape` (H, W) seen at `pitch_rad`; None when a corner misses the road."""
    height_px, width_px = shape
    top = min(height_px - 2.0, max(horizon_row_px(camera, pitch_rad) + 0.08 * height_px, 0.0))
    pixels = np.array(
        [
            [0.1 * width_px, top],
            [0.9 * width_px, top],
            [0.0, height_px - 1.0],
            [width_px - 1.0, height_px - 1.0],
        ]
    )
    ground, hit = back_project(normalised_rays(pixels, camera), pitch_rad, camera)
    return RoadQuad(pixels, ground) if hit.all() else None


def quad_homography(
    quad: RoadQuad, camera: CameraModel, pitch_rad: float, motion: np.ndarray, dpitch_rad: float = 0.0
) -> np.ndarray | None:
    """H (3, 3) taking road pixels of frame a (its `quad`, at `pitch_rad`) to frame b (at `pitch_rad +
    dpitch_rad`) after the car's `motion` [tx_m, ty_m, dyaw_rad]."""
    dst = project(move_points(quad.ground_m, motion), pitch_rad + dpitch_rad, camera)
    if not np.all(np.isfinite(dst)):
        return None
    h = cv2.getPerspectiveTransform(quad.pixels.astype(np.float32), dst.astype(np.float32))
    return h.astype(np.float64)


def far_field_turns(prepared: np.ndarray, camera: CameraModel, pitch_rad: float) -> np.ndarray:
    """Heading change (rad) of each consecutive pair from the horizontal shift of the band just above the
    horizon (buildings, trees, the skyline: far enough that the car's own travel barely moves them, so
    their shift is the turn, f * tan(dyaw)), by phase correlation of prepared frames (T, H, W); NaN
    where the band shows nothing to correlate (a blank sky, a lorry filling the view)."""
    top_row = horizon_row_px(camera, pitch_rad)
    height = prepared.shape[1]
    lo, hi = int(np.clip(top_row - 0.25 * height, 0, height - 2)), int(np.clip(top_row + 2, 2, height))
    if hi - lo < 6:
        return np.full(len(prepared) - 1, np.nan)
    # a band centred on the principal column: the far field's own expansion (the car's travel) moves
    # its two sides apart and cancels in the mean shift only where they are equally wide
    half = int(
        min(camera.cx_px, prepared.shape[2] - 1 - camera.cx_px, FAR_FIELD_HALF_WIDTH * prepared.shape[2])
    )
    left = int(round(camera.cx_px)) - half
    band = np.ascontiguousarray(prepared[:, lo:hi, left : left + 2 * half]).astype(np.float64)
    window = cv2.createHanningWindow((band.shape[2], band.shape[1]), cv2.CV_64F)
    turns = np.zeros(len(prepared) - 1)
    for k in range(len(prepared) - 1):
        (dx, _), response = cv2.phaseCorrelate(band[k], band[k + 1], window)
        # the scene moving right in the image (dx > 0) means the car turned left (+yaw)
        turns[k] = float(np.arctan(dx / camera.fx_px)) if response > 0.05 else np.nan
    return turns


def step_costs(
    a: np.ndarray,
    b: np.ndarray,
    camera: CameraModel,
    pitch_rad: float,
    steps_m: np.ndarray,
    mask: np.ndarray,
    dyaw_rad: float = 0.0,
    row_offsets: bool = False,
    lever_m: float = 0.0,
) -> np.ndarray:
    """Normalised squared difference (len(steps_m),) between prepared frame a and frame b warped back by
    each forward step (turning by `dyaw_rad`), over the road: the cost curve a pair's step is chosen from
    (1 for unrelated images, 0 for identical ones). With `lever_m`, each step is the chord of a turn about
    a point that far behind the camera (the rear axle), and the camera swings sideways with it."""
    rows, cols = np.nonzero(mask)
    stride = max(1, int(np.sqrt(len(rows) / 3000)))
    keep = (rows % stride == 0) & (cols % stride == 0)
    rows, cols = rows[keep], cols[keep]
    points = np.column_stack([cols, rows]).astype(np.float64).reshape(-1, 1, 2)
    values = a[rows, cols]
    costs = np.full(len(steps_m), np.inf)
    quad = road_quad(a.shape, camera, pitch_rad)
    if quad is None:
        return costs
    # every step's quad corners at once: one projection for the whole curve
    if lever_m:
        swing = np.array([lever_m * (math.cos(dyaw_rad) - 1.0), lever_m * math.sin(dyaw_rad)])
        chord = np.column_stack([np.cos(0.5 * dyaw_rad) * steps_m, np.sin(0.5 * dyaw_rad) * steps_m]) + swing
    else:
        chord = np.column_stack([steps_m, np.zeros(len(steps_m))])
    motions = np.column_stack([chord, np.full(len(steps_m), dyaw_rad)])
    moved_quad = move_points(np.tile(quad.ground_m, (len(steps_m), 1)), np.repeat(motions, 4, axis=0))
    corners = project(moved_quad, pitch_rad, camera).reshape(len(steps_m), 4, 2)
    pixels = quad.pixels.astype(np.float32)
    for i in range(len(steps_m)):
        if not np.all(np.isfinite(corners[i])):
            continue
        h = cv2.getPerspectiveTransform(pixels, corners[i].astype(np.float32)).astype(np.float64)
        moved = cv2.perspectiveTransform(points, h).reshape(-1, 2).astype(np.float32)
        inside = (moved[:, 0] >= 0) & (moved[:, 0] <= a.shape[1] - 1) & (moved[:, 1] <= a.shape[0] - 1)
        if inside.sum() >= max(100, MIN_OVERLAP * len(values)):  # a few far pixels cannot decide
            sampled = cv2.remap(b, moved[:, :1], moved[:, 1:], cv2.INTER_LINEAR).ravel()[inside]
            difference = sampled - values[inside]
            if row_offsets:
                difference = without_row_means(difference, rows[inside])
            # normalised by the energy of the pixels compared: each step keeps another part of the road in
            # view, and an unnormalised cost would favour the part with the least texture or noise
            energy = float(np.mean(sampled**2) + np.mean(values[inside] ** 2))
            costs[i] = float(np.mean(difference**2)) / max(energy, 1e-9)
    return costs


def without_row_means(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`values` (N, ...) less the mean of their image row (`rows` (N,) int): a residual blind to an offset
    per row, which is what a rolling shutter's flicker bands leave after local normalisation."""
    index = np.unique(rows, return_inverse=True)[1]
    counts = np.bincount(index).astype(np.float64)
    flat = values.reshape(len(values), -1)
    means = np.stack([np.bincount(index, weights=c) for c in flat.T], axis=1) / counts[:, None]
    return (flat - means[index]).reshape(values.shape)


def cost_contrast(costs: np.ndarray) -> np.ndarray:
    """Per cost curve (P, V): its median over its minimum (finite values). A pair whose road moves has a
    distinct minimum (clip medians 1.16-1.39 on dark, compressed tuning clips); noise alone leaves the
    curve flat (clip medians 1.07-1.09)."""
    finite = np.where(np.isfinite(costs), costs, np.nan)
    scored = np.isfinite(finite).any(axis=1)
    contrast = np.zeros(len(costs))
    contrast[scored] = np.nanmedian(finite[scored], axis=1) / np.maximum(
        np.nanmin(finite[scored], axis=1), 1e-12
    )
    return contrast


def smooth_speed_path(
    costs: np.ndarray, speeds_mps: np.ndarray, dt_s: np.ndarray, max_accel_mps2: float
) -> np.ndarray:
    """The speed per pair (P,) through the cost curves (P, V) over the evenly spaced `speeds_mps` (V,)
    that is cheapest in all (dynamic programming), changing between pairs by at most `max_accel_mps2` x
    the time between them. One pair's curve can have its minimum at a wrong step (a dash matching the
    next dash, noise on a slow, dark road); a car's speed cannot jump, so the clip's curves together
    pick the profile.

    The curves are interpolated onto a grid fine enough that the shortest gap's largest change spans a
    cell: at 15 fps and more a car braking at 8 m/s^2 changes by less than one of the 0.75 m/s cells a
    pair, and on the coarse grid every profile came out constant (a braking clip read steady)."""
    relative = costs / np.maximum(
        np.nanmin(np.where(np.isfinite(costs), costs, np.nan), axis=1, keepdims=True), 1e-9
    )
    relative = np.where(np.isfinite(relative), relative, 1e3)
    reaches = max_accel_mps2 * 0.5 * (dt_s[1:] + dt_s[:-1])
    if len(reaches) and len(speeds_mps) > 1:
        cell = float(speeds_mps[1] - speeds_mps[0])
        finer = max(1, math.ceil(cell / max(float(np.min(reaches)), 1e-6) - 1e-9))
        fine = np.linspace(speeds_mps[0], speeds_mps[-1], (len(speeds_mps) - 1) * finer + 1)
        relative = np.stack([np.interp(fine, speeds_mps, curve) for curve in relative])
        speeds_mps = fine
    jump = np.abs(speeds_mps[:, None] - speeds_mps[None, :])  # (to, from)
    total = relative[0].copy()
    back = np.zeros(relative.shape, int)
    for k in range(1, len(relative)):
        reach = float(reaches[k - 1])
        step_cost = np.where(jump <= reach + 1e-9, 0.05 * (jump / max(reach, 1e-6)) ** 2, np.inf)
        candidates = total[None, :] + step_cost
        back[k] = np.argmin(candidates, axis=1)
        total = candidates[np.arange(len(speeds_mps)), back[k]] + relative[k]
    path = np.zeros(len(relative), int)
    path[-1] = int(np.argmin(total))
    for k in range(len(relative) - 1, 0, -1):
        path[k - 1] = back[k, path[k]]
    return speeds_mps[path]


def dip_share(costs: np.ndarray, speeds_mps: np.ndarray, path_mps: np.ndarray) -> float:
    """The share of the cost curves' dips (P, V) (each curve's median less its minimum) that a speed
    profile `path_mps` (P,) through them takes: ~1 when the minima line up along a speed a car can drive,
    ~0 for noise, whose minima fall anywhere. It tells motion from noise where every dip is shallow
    (flicker and block compression raise every cost alike), and does not depend on how shallow."""
    finite = np.where(np.isfinite(costs), costs, np.nan)
    nearest = np.argmin(np.abs(np.asarray(path_mps)[:, None] - speeds_mps[None, :]), axis=1)
    on_path = costs[np.arange(len(costs)), nearest]
    median, minimum = np.nanmedian(finite, axis=1), np.nanmin(finite, axis=1)
    used = np.isfinite(on_path)
    dips = float(np.sum((median - minimum)[used]))
    return float(np.sum((median - on_path)[used])) / dips if dips > 0 else 0.0


class _Level(NamedTuple):
    a: np.ndarray
    b_stack: np.ndarray  # (h, w, 3): b and its x, y gradients
    camera: CameraModel
    points: np.ndarray  # (N, 2) road pixels of a sampled
    values_a: np.ndarray  # (N,)
    quad: RoadQuad | None


def _levels(
    a: np.ndarray, b: np.ndarray, camera: CameraModel, pitch_rad: float, mask: np.ndarray
) -> list[_Level]:
    levels = []
    for factor in (0.5, 1.0):
        if factor < 1.0:
            size = (max(16, round(a.shape[1] * factor)), max(16, round(a.shape[0] * factor)))
            la, lb = (cv2.resize(x, size, interpolation=cv2.INTER_AREA) for x in (a, b))
            lm = cv2.resize(mask.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
            cam = camera.scaled(size[0] / a.shape[1])
        else:
            la, lb, lm, cam = a, b, mask, camera
        gx = cv2.Sobel(lb, cv2.CV_32F, 1, 0, ksize=3) / 8.0
        gy = cv2.Sobel(lb, cv2.CV_32F, 0, 1, ksize=3) / 8.0
        rows, cols = np.nonzero(lm)
        stride = max(1, int(np.sqrt(len(rows) / 12000)))
        keep = (rows % stride == 0) & (cols % stride == 0)
        points = np.column_stack([cols[keep], rows[keep]]).astype(np.float64)
        quad = road_quad(la.shape, cam, pitch_rad)
        levels.append(_Level(la, np.dstack([lb, gx, gy]), cam, points, la[rows[keep], cols[keep]], quad))
    return levels


def _positions(level: _Level, pitch_rad: float, params: np.ndarray) -> np.ndarray | None:
    if level.quad is None:
        return None
    h = quad_homography(level.quad, level.camera, pitch_rad, params[:3], float(params[3]))
    if h is None:
        return None
    return cv2.perspectiveTransform(level.points.reshape(-1, 1, 2), h).reshape(-1, 2)


def align_pair(
    a: np.ndarray,
    b: np.ndarray,
    camera: CameraModel,
    pitch_rad: float,
    guess: np.ndarray,
    mask: np.ndarray,
    row_offsets: bool = False,
) -> DirectFit | None:
    """The motion taking prepared frame `a` to `b` (both from `prepare`, at `camera`'s resolution), from
    `guess` [tx, ty, dyaw]; `mask` bool (H, W) marks the road pixels of a to use. None when the road
    region is too small or carries no structure."""
    params = np.concatenate([np.asarray(guess, np.float64), [0.0]])
    fit = None
    for level in _levels(a, b, camera, pitch_rad, mask):
        if len(level.points) < 200 or float(np.mean(level.values_a**2)) < MIN_STRUCTURE:
            return None  # too little road, or a road with no structure (blank, or standing in the dark)
        fit = _gauss_newton(level, pitch_rad, params, row_offsets)
        if fit is None:
            return None
        params = np.concatenate([fit.motion, [fit.dpitch_rad]])
    return fit


def _gauss_newton(
    level: _Level, pitch_rad: float, params: np.ndarray, row_offsets: bool = False
) -> DirectFit | None:
    h_px, w_px = level.a.shape
    for _ in range(MAX_ITERATIONS):
        moved = _positions(level, pitch_rad, params)
        if moved is None:
            return None
        sampled = cv2.remap(
            level.b_stack, moved[:, :1].astype(np.float32), moved[:, 1:].astype(np.float32), cv2.INTER_LINEAR
        ).reshape(-1, 3)
        inside = (
            (moved[:, 0] >= 1) & (moved[:, 0] <= w_px - 2) & (moved[:, 1] >= 1) & (moved[:, 1] <= h_px - 2)
        )
        if inside.sum() < 200:
            return None
        residual = sampled[inside, 0] - level.values_a[inside]
        grad = sampled[inside, 1:]
        jac = np.empty((int(inside.sum()), 4))
        for k in range(4):
            shifted = params.copy()
            shifted[k] += STEP_SCALES[k]
            moved_k = _positions(level, pitch_rad, shifted)
            if moved_k is None:
                return None
            jac[:, k] = np.sum(grad * (moved_k[inside] - moved[inside]), axis=1) / STEP_SCALES[k]
        if row_offsets:  # an offset per row is a nuisance parameter: project it out of both
            rows = level.points[inside, 1].astype(int)
            residual, jac = without_row_means(residual, rows), without_row_means(jac, rows)
        weights = np.minimum(1.0, HUBER / np.maximum(np.abs(residual), 1e-9))
        jw = jac * weights[:, None]
        hessian = jw.T @ jac + np.diag([1e-3, 1e-3, 1e-1, 1e-1])  # light damping
        try:
            delta = np.linalg.solve(hessian, -jw.T @ residual)
        except np.linalg.LinAlgError:
            return None
        params = params + delta
        if np.all(np.abs(delta) < STEP_SCALES * 0.05):
            break
    rms = float(np.sqrt(np.mean(residual**2)))
    scale = max(1.0, (w_px / ALIGN_WIDTH_PX) * 3.0)  # neighbouring residuals are correlated by the blur
    try:
        covariance = np.linalg.inv(hessian) * rms**2 * scale**2
    except np.linalg.LinAlgError:
        return None
    sigma = np.sqrt(np.maximum(np.diag(covariance)[:3], 0.0))
    return DirectFit(params[:3], float(params[3]), sigma, rms, int(inside.sum()))
