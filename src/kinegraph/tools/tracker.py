"""Pixel tracks and extents of moving objects seen by a static camera (background model + components).

The background is the per-pixel median over frames (objects must move by more than their own size over
the clip); foreground = channel-wise difference above a threshold, cleaned by a morphological opening,
split into connected components. Each component is refined to sub-pixel precision with a soft mask
(1 inside, difference / object contrast on the rim): the centre is the soft-mask centroid, the width
(height) the mean of the three longest soft row (column) sums. Objects are followed from seed boxes
by nearest predicted centre.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import cv2
import numpy as np

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels


class ObjectTrack(NamedTuple):
    """Per frame: centre (T, 2) as (x, y) px and extent (T, 2) as (width, height) px; NaN where unseen."""

    centre_px: np.ndarray
    extent_px: np.ndarray


class Blob(NamedTuple):
    """One foreground component in one frame."""

    centre_px: tuple[float, float]
    extent_px: tuple[float, float]
    box: Box
    area_px: int


def _check_frames(frames: np.ndarray) -> np.ndarray:
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be uint8 (T, H, W, 3), got {frames.dtype} {frames.shape}")
    if len(frames) < 2:
        raise ValueError(f"too few frames: a background model needs at least 2, got {len(frames)}")
    return frames


def _masked_median(values: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """Median over axis 0 of (K, N, C) values ignoring masked (K, N) entries; all-masked columns give NaN."""
    values = np.where(masked[..., None], np.inf, values.astype(np.float32))
    ordered = np.sort(values, axis=0)
    n_valid = (~masked).sum(axis=0)[:, None].repeat(values.shape[2], axis=1)
    lo = np.take_along_axis(ordered, np.maximum(n_valid - 1, 0)[None] // 2, axis=0)[0]
    hi = np.take_along_axis(ordered, (n_valid // 2)[None], axis=0)[0]
    return np.where(n_valid > 0, (lo + hi) / 2, np.nan)


def median_background(
    frames: np.ndarray,
    max_frames: int = 15,
    exclude: Sequence[Sequence[Box]] | None = None,
    base: np.ndarray | None = None,
) -> np.ndarray:
    """Per-pixel median of up to `max_frames` evenly spaced frames: (H, W, 3) uint8.

    `exclude` (one list of boxes per frame) leaves those boxes out of the median wherever they cover a
    pixel in at least a fifth of the sampled frames, so a slow object does not burn into the background;
    `base` is a plain median already computed, kept outside those pixels.
    """
    frames = _check_frames(frames)
    pick = np.unique(np.linspace(0, len(frames) - 1, min(len(frames), max_frames)).round().astype(int))
    background = np.median(frames[pick], axis=0) if base is None else base.astype(np.float32)
    if exclude is not None:
        height, width = frames.shape[1:3]
        covered = np.zeros((len(pick), height, width), bool)
        for row, frame in enumerate(pick):
            for x0, y0, x1, y1 in exclude[frame]:
                rows = slice(max(int(y0), 0), max(int(np.ceil(y1)), 0))
                covered[row, rows, max(int(x0), 0) : max(int(np.ceil(x1)), 0)] = True
        count = covered.sum(axis=0)
        region = (count >= 0.2 * len(pick)) & (count < len(pick))
        if region.any():
            background[region] = _masked_median(frames[pick][:, region], covered[:, region])
    return background.astype(np.uint8)


def difference(frame: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Largest per-channel absolute difference, (H, W) float32."""
    r, g, b = cv2.split(cv2.absdiff(frame, background))
    return cv2.max(cv2.max(r, g), b).astype(np.float32)


def find_blobs(
    diff: np.ndarray, threshold: float = 40.0, min_area_px: int = 20, open_px: int = 3
) -> list[Blob]:
    """Foreground components of one difference image, refined with a soft mask."""
    mask = (diff > threshold).astype(np.uint8)
    if open_px > 1:
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((open_px, open_px), np.uint8))
    bx, by, bw, bh = cv2.boundingRect(mask)
    if bw == 0:
        return []
    # Label only the box around the foreground: the labelling dominates the cost on full frames.
    n, crop_labels, stats, _ = cv2.connectedComponentsWithStats(
        mask[by : by + bh, bx : bx + bw], connectivity=8
    )
    labels = np.zeros(mask.shape, np.int32)
    labels[by : by + bh, bx : bx + bw] = crop_labels
    stats[:, 0] += bx
    stats[:, 1] += by
    height, width = diff.shape
    blobs = []
    for k in range(1, n):
        x, y, w, h, area = (int(v) for v in stats[k])
        if area < min_area_px:
            continue
        x0, y0 = max(x - 2, 0), max(y - 2, 0)
        x1, y1 = min(x + w + 2, width), min(y + h + 2, height)
        own = labels[y0:y1, x0:x1]
        patch = diff[y0:y1, x0:x1]
        interior = cv2.erode((own == k).astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
        core = patch[interior] if interior.any() else patch[own == k]
        alpha = np.clip(patch / max(float(np.median(core)), 1e-6), 0.0, 1.0)
        alpha[interior] = 1.0  # only the rim is partial: texture under the object must not thin it
        alpha[(own != k) & (own != 0)] = 0.0  # leave neighbouring components out
        total = alpha.sum()
        ys, xs = np.mgrid[y0:y1, x0:x1]
        cx, cy = float((alpha * xs).sum() / total), float((alpha * ys).sum() / total)
        rows, cols = np.sort(alpha.sum(axis=1))[-3:], np.sort(alpha.sum(axis=0))[-3:]
        blobs.append(Blob((cx, cy), (float(rows.mean()), float(cols.mean())), (x, y, x + w, y + h), area))
    return blobs


def _box_contains(box: Box, point: tuple[float, float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _follow(
    per_frame: list[list[Blob]],
    start: int,
    first: Blob,
    order: range,
    max_jump_px: float,
    taken: list[set[int]],
) -> dict[int, Blob]:
    """Greedy nearest-prediction association from `start` along `order` (forward or backward)."""
    found = {start: first}
    prev, velocity = np.array(first.centre_px), np.zeros(2)
    for frame in order:
        predicted = prev + velocity
        best, best_d = None, np.inf
        for j, blob in enumerate(per_frame[frame]):
            d = float(np.hypot(*(np.array(blob.centre_px) - predicted)))
            gate = max(max_jump_px, 0.5 * max(blob.extent_px))
            if j not in taken[frame] and d < gate and d < best_d:
                best, best_d = j, d
        if best is None:
            break  # lost: the object stays unseen from here on in this direction
        taken[frame].add(best)
        blob = per_frame[frame][best]
        centre = np.array(blob.centre_px)
        velocity, prev = centre - prev, centre
        found[frame] = blob
    return found


def track_objects(
    frames: np.ndarray,
    seeds: Sequence[Box] | None = None,
    *,
    seed_frame: int = 0,
    threshold: float = 40.0,
    min_area_px: int = 20,
    max_jump_px: float = 40.0,
    background: np.ndarray | None = None,
) -> list[ObjectTrack]:
    """Track moving objects in (T, H, W, 3) uint8 frames; one ObjectTrack per seed box.

    Seeds are boxes around each object at `seed_frame` (e.g. from a detector); without seeds every
    component of that frame becomes one. An object is followed forward and backward from the seed frame
    and left unseen (NaN) from the frame where no component lies within `max_jump_px` of its prediction.
    Without a given background, a second pass re-estimates it with the first pass's objects left out.
    """
    frames = _check_frames(frames)
    if not 0 <= seed_frame < len(frames):
        raise ValueError(f"seed_frame {seed_frame} is outside 0..{len(frames) - 1}")
    if background is not None:
        return _track(frames, background, seeds, seed_frame, threshold, min_area_px, max_jump_px)
    plain = median_background(frames)
    first = _track(frames, plain, seeds, seed_frame, threshold, min_area_px, max_jump_px)
    # Second pass: a background without the objects found in the first one.
    exclude: list[list[Box]] = [[] for _ in frames]
    for track in first:
        for i in np.flatnonzero(np.all(np.isfinite(track.centre_px), axis=1)):
            (x, y), (w, h) = track.centre_px[i], track.extent_px[i]
            pad_x, pad_y = 0.75 * w + 4, 0.75 * h + 4
            exclude[i].append((x - pad_x, y - pad_y, x + pad_x, y + pad_y))
    bg = median_background(frames, exclude=exclude, base=plain)
    return _track(frames, bg, seeds, seed_frame, threshold, min_area_px, max_jump_px)


def _track(
    frames: np.ndarray,
    bg: np.ndarray,
    seeds: Sequence[Box] | None,
    seed_frame: int,
    threshold: float,
    min_area_px: int,
    max_jump_px: float,
) -> list[ObjectTrack]:
    per_frame = [find_blobs(difference(f, bg), threshold, min_area_px) for f in frames]
    start_blobs = per_frame[seed_frame]
    if seeds is None:
        seeds = [b.box for b in start_blobs]
    taken: list[set[int]] = [set() for _ in frames]
    tracks = []
    for box in seeds:
        if len(box) != 4 or not (box[2] > box[0] and box[3] > box[1]):
            raise ValueError(f"a seed box must be (x0, y0, x1, y1) with x1 > x0 and y1 > y0, got {box}")
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        candidates = [
            (np.hypot(b.centre_px[0] - centre[0], b.centre_px[1] - centre[1]), j)
            for j, b in enumerate(start_blobs)
            if j not in taken[seed_frame] and _box_contains(box, b.centre_px)
        ]
        centre_px = np.full((len(frames), 2), np.nan)
        extent_px = np.full((len(frames), 2), np.nan)
        if candidates:
            j = min(candidates)[1]
            taken[seed_frame].add(j)
            first = start_blobs[j]
            found = _follow(
                per_frame, seed_frame, first, range(seed_frame + 1, len(frames)), max_jump_px, taken
            )
            found |= _follow(per_frame, seed_frame, first, range(seed_frame - 1, -1, -1), max_jump_px, taken)
            for frame, blob in found.items():
                centre_px[frame], extent_px[frame] = blob.centre_px, blob.extent_px
        tracks.append(ObjectTrack(centre_px, extent_px))
    return tracks
