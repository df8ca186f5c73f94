"""Camera values pooled over a scene's clips (`tools.scene_camera`): the arithmetic, by hand."""

from __future__ import annotations

import math

import pytest

from kinegraph.tools.camera_model import CameraModel, carla_default
from kinegraph.tools.scene_camera import (
    ScenePool,
    own_measurements,
    scene_pool,
    weighted_median,
    with_scene_values,
)


def measured(
    fx: float, sigma: float | None, height: float = 1.6, height_sigma: float | None = None
) -> CameraModel:
    """A camera as a clip's measurement ends: the focal length estimated when `sigma` is set."""
    assumed = set()
    if sigma is None:
        assumed.add("focal")
    if height_sigma is None:
        assumed.add("height")
    return CameraModel(
        fx,
        fx,
        319.5,
        179.5,
        height,
        0.0,
        focal_sigma_px=sigma,
        height_sigma_m=height_sigma,
        assumed=frozenset(assumed),
    )


def test_the_weighted_median_follows_the_surer_readings_and_ignores_a_stray_one() -> None:
    # equal weights: the middle of 1, 2, 10 is 2, not the mean (4.33)
    assert weighted_median([10.0, 1.0, 2.0], [1.0, 1.0, 1.0])[0] == 2.0
    # the reading at 5 carries 4x the weight of each other one (sigma halved): half the total weight
    assert weighted_median([1.0, 5.0, 9.0], [1.0, 0.5, 1.0])[0] == 5.0
    # two readings that agree: the pooled standard error, 1 / sqrt(1/0.1^2 + 1/0.1^2)
    value, sigma = weighted_median([2.0, 2.0], [0.1, 0.1])
    assert value == 2.0 and sigma == pytest.approx(0.1 / math.sqrt(2))
    # two that disagree by far more than their sigmas: the spread, not the sigmas, says how sure
    value, sigma = weighted_median([3.0, 1.0], [0.01, 0.01])
    assert value == 2.0 and sigma == pytest.approx(math.sqrt(((1 + 1) / 2) / 2))


def test_only_values_a_clip_measured_itself_are_pooled() -> None:
    cams = [
        (measured(480.0, 20.0), 640),  # focal measured: 0.75 of the width
        (measured(320.0, None), 640),  # focal assumed: no reading
        (measured(960.0, 40.0), 1280),  # the same lens at twice the resolution: 0.75 again
        (measured(600.0, 20.0, 2.1, 0.1), 640),  # measured focal 0.9375 and height
    ]
    pool = scene_pool(cams)
    assert pool.n_focal == 3 and pool.n_height == 1
    assert pool.focal_share is not None and pool.focal_share[0] == pytest.approx(0.75)
    assert pool.height_m == (2.1, 0.1)
    borrowed = CameraModel(
        500.0, 500.0, 319.5, 179.5, 1.6, focal_sigma_px=5.0, from_scene=frozenset({"focal"})
    )
    given = CameraModel(700.0, 700.0, 319.5, 179.5, 1.5)
    assert scene_pool([(borrowed, 640), (given, 640)]) == ScenePool(None, None, 0, 0)


def test_a_scene_fills_only_what_the_clip_had_to_assume() -> None:
    guess = carla_default(640, 360)  # focal and height assumed, pitch and roll to estimate
    pool = ScenePool((0.75, 0.02), (2.0, 0.1), 2, 1)
    lent = with_scene_values(guess, pool, 640, frozenset({"focal"}))
    assert lent is not None
    assert (lent.fx_px, lent.fy_px, lent.focal_sigma_px) == (480.0, 480.0, pytest.approx(12.8))
    assert lent.height_m == guess.height_m and lent.assumed == {"height"}
    described = lent.describe()
    assert described["values"]["focal"] == "estimated" and described["values"]["height"] == "assumed"
    assert described["from_scene"] == ["focal"]
    assert lent.pitch_rad is None and lent.roll_rad is None  # still the clip's own to measure
    both = with_scene_values(guess, pool, 640, frozenset({"focal", "height"}))
    assert both is not None and both.height_m == 2.0 and both.assumed == frozenset()
    assert with_scene_values(guess, ScenePool(None, None, 0, 0), 640, frozenset({"focal", "height"})) is None
    assert with_scene_values(guess, pool, 640, frozenset()) is None


def test_a_clip_measured_again_keeps_what_it_read_itself() -> None:
    """Measured again through a scene-mate's lens, a clip keeps the height its own lane markings gave
    (before: it read them again through the new lens, and one dusk clip lost its 1.25 m for 1.6)."""
    start = carla_default(640, 360)
    own = CameraModel(
        320.0, 320.0, 319.5, 179.5, 1.25, 0.05, height_sigma_m=0.09, assumed=frozenset({"focal"})
    )
    kept = own_measurements(start, own)
    assert kept.height_m == 1.25 and kept.height_sigma_m == 0.09
    assert kept.assumed == {"focal"} and kept.pitch_rad is None  # the pitch is measured again
    lent = with_scene_values(kept, ScenePool((0.75, 0.1), (2.0, 0.1), 1, 1), 640, frozenset({"focal"}))
    assert lent is not None and (lent.fx_px, lent.height_m) == (480.0, 1.25) and lent.from_scene == {"focal"}
    assert own_measurements(start, start) is start
