"""Drawing for the synthetic QuantiPhy world: backgrounds of the three scene kinds and flat shapes.

Backgrounds follow the benchmark's letters: X plain (one colour), S simple (smooth shading and texture),
C complex (texture, floor tiles and static clutter). Objects are flat, fronto-parallel discs and boxes
drawn with anti-aliased pixel coverage, so their projected centre and extent are known exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

_BASES = ((118, 118, 118), (96, 104, 116), (150, 140, 122), (84, 96, 88))


def _smooth_noise(
    rng: np.random.Generator, height: int, width: int, cells: int, amplitude: float
) -> np.ndarray:
    grid = rng.uniform(-amplitude, amplitude, (cells, cells * width // height + 1)).astype(np.float32)
    return cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)


def background(kind: str, height: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """(H, W, 3) uint8 background: kind X (plain), S (simple texture) or C (complex)."""
    if kind not in ("X", "S", "C"):
        raise ValueError(f"background kind must be X, S or C, got {kind!r}")
    base = np.array(_BASES[int(rng.integers(len(_BASES)))], dtype=np.float32)
    image = np.broadcast_to(base, (height, width, 3)).copy()
    if kind == "X":
        return image.astype(np.uint8)
    image += _smooth_noise(rng, height, width, 4, 22.0)[..., None]
    image += np.linspace(-12, 12, height, dtype=np.float32)[:, None, None]
    image += rng.normal(0, 3, (height, width, 1)).astype(np.float32)
    if kind == "C":
        image += _smooth_noise(rng, height, width, 24, 10.0)[..., None]
        tile = int(rng.integers(40, 80))
        image[::tile, :, :] -= 18
        image[:, ::tile, :] -= 18
        for _ in range(int(rng.integers(5, 10))):
            colour = base + rng.uniform(-30, 30, 3)
            x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
            w, h = int(rng.integers(15, 60)), int(rng.integers(15, 60))
            cv2.rectangle(image, (x, y), (x + w, y + h), colour.tolist(), -1)
    return np.clip(image, 0, 255).astype(np.uint8)


def _roi(image: np.ndarray, centre_px: Sequence[float], half_w: float, half_h: float) -> tuple[slice, slice]:
    height, width = image.shape[:2]
    x0, x1 = (
        max(int(np.floor(centre_px[0] - half_w)) - 1, 0),
        min(int(np.ceil(centre_px[0] + half_w)) + 2, width),
    )
    y0, y1 = (
        max(int(np.floor(centre_px[1] - half_h)) - 1, 0),
        min(int(np.ceil(centre_px[1] + half_h)) + 2, height),
    )
    return slice(y0, y1), slice(x0, x1)


def _blend(image: np.ndarray, rows: slice, cols: slice, alpha: np.ndarray, colour: Sequence[int]) -> None:
    patch = image[rows, cols].astype(np.float32)
    patch += alpha[..., None] * (np.asarray(colour, dtype=np.float32) - patch)
    image[rows, cols] = np.clip(patch.round(), 0, 255).astype(np.uint8)


def draw_disc(
    image: np.ndarray, centre_px: Sequence[float], diameter_px: float, colour: Sequence[int]
) -> None:
    """Filled disc, in place; pixel coverage from the signed distance to the rim (pixel centres at ints)."""
    radius = diameter_px / 2
    rows, cols = _roi(image, centre_px, radius, radius)
    ys, xs = np.mgrid[rows, cols]
    distance = np.hypot(xs - centre_px[0], ys - centre_px[1])
    _blend(image, rows, cols, np.clip(radius + 0.5 - distance, 0.0, 1.0), colour)


def draw_box(
    image: np.ndarray, centre_px: Sequence[float], extent_px: Sequence[float], colour: Sequence[int]
) -> None:
    """Filled axis-aligned box of (width, height) px, in place, with exact pixel-area coverage."""
    (cx, cy), (w, h) = centre_px, extent_px
    rows, cols = _roi(image, centre_px, w / 2, h / 2)
    xs = np.arange(cols.start, cols.stop, dtype=np.float64)
    ys = np.arange(rows.start, rows.stop, dtype=np.float64)
    cover_x = np.clip(np.minimum(xs + 0.5, cx + w / 2) - np.maximum(xs - 0.5, cx - w / 2), 0.0, 1.0)
    cover_y = np.clip(np.minimum(ys + 0.5, cy + h / 2) - np.maximum(ys - 0.5, cy - h / 2), 0.0, 1.0)
    _blend(image, rows, cols, np.outer(cover_y, cover_x), colour)
