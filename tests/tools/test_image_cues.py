"""Illumination and lit-lamp cues on drawn images whose content is known."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kinegraph.tools.image_cues import image_cues


def _scene(sky: tuple[int, int, int], lamp: tuple[int, int, int] | None) -> np.ndarray:
    image = np.zeros((108, 192, 3), np.uint8)
    image[:54] = sky
    image[54:] = (100, 100, 100)
    cv2.rectangle(image, (10, 20), (40, 54), (150, 120, 100), -1)  # a building: dull, not a lamp
    if lamp is not None:
        cv2.rectangle(image, (150, 10), (162, 40), (20, 20, 20), -1)
        cv2.circle(image, (156, 20), 4, lamp, -1)
    image[80:90, 20:40] = (235, 30, 30)  # a red car in the lower half is not a lamp
    return image


@pytest.mark.parametrize(
    ("lamp", "rgb"),
    [("red", (235, 30, 30)), ("yellow", (240, 200, 30)), ("green", (40, 220, 60)), ("none", None)],
)
def test_lit_lamp_colour(lamp, rgb):
    cues = image_cues(_scene((130, 180, 235), rgb))
    assert cues.lamp == lamp and cues.illumination == "daylight"
    assert (cues.lamp_pixels > 40) == (rgb is not None)


def test_night_sky_is_night():
    cues = image_cues(_scene((20, 24, 50), (40, 220, 60)))
    assert cues.illumination == "night" and cues.sky_luma < 0.2 and cues.lamp == "green"


def test_bad_input():
    with pytest.raises(ValueError, match="RGB uint8"):
        image_cues(np.zeros((10, 10), np.uint8))
