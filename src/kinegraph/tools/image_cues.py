"""Simple measurements of one driving image: illumination and a lit traffic-light lamp (heuristic cues).

Illumination is the mean Rec.601 luma of the upper 40 % of the image (mostly sky): daylight above
`DAYLIGHT_MIN_LUMA`, night below. A lit lamp is a cluster of strongly saturated, bright pixels of a
signal hue (red, yellow, green) in the upper half; the hue with most such pixels wins when it has at
least `LAMP_MIN_FRACTION` of the image. Both are cues, not detections: a red tail light or a green sign
in the upper half reads as a lamp.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

DAYLIGHT_MIN_LUMA = 0.35
LAMP_MIN_SATURATION = 150  # OpenCV HSV, 0-255
LAMP_MIN_VALUE = 180
LAMP_MIN_FRACTION = 0.001
LAMP_HUES: dict[str, tuple[tuple[int, int], ...]] = {  # OpenCV hue, 0-179
    "red": ((0, 8), (170, 179)),
    "yellow": ((18, 35),),
    "green": ((45, 90),),
}


class ImageCues(NamedTuple):
    """sky_luma in 0..1; illumination: daylight | night; lamp: red | yellow | green | none."""

    sky_luma: float
    illumination: str
    lamp: str
    lamp_pixels: int


def image_cues(image: np.ndarray) -> ImageCues:
    """Cues of one RGB uint8 image (H, W, 3)."""
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"expected an RGB uint8 image (H, W, 3), got {image.shape} {image.dtype}")
    height = image.shape[0]
    upper = image[: max(1, int(0.4 * height))].astype(np.float64)
    luma = float(np.mean(0.299 * upper[..., 0] + 0.587 * upper[..., 1] + 0.114 * upper[..., 2]) / 255.0)
    hsv = cv2.cvtColor(image[: max(1, height // 2)], cv2.COLOR_RGB2HSV)
    bright = (hsv[..., 1] >= LAMP_MIN_SATURATION) & (hsv[..., 2] >= LAMP_MIN_VALUE)
    counts = {
        name: int(
            np.sum(bright & np.any([(hsv[..., 0] >= lo) & (hsv[..., 0] <= hi) for lo, hi in ranges], axis=0))
        )
        for name, ranges in LAMP_HUES.items()
    }
    best = max(counts, key=counts.__getitem__)
    lit = counts[best] >= max(1, LAMP_MIN_FRACTION * image.shape[0] * image.shape[1])
    return ImageCues(
        luma, "daylight" if luma >= DAYLIGHT_MIN_LUMA else "night", best if lit else "none", counts[best]
    )
