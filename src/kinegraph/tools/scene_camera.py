"""One camera for the clips of one recording: what a clip cannot show of it, taken from its scene-mates.

A clip that drives straight shows neither its lens (only a turn does, `focal_from_turns`) nor, without
lane markings, how high the camera sits; another window of the same recording often does. The values
measured on the scene's clips are pooled by a weighted median (robust to one clip's misreading) and
fill only what the clip itself had to assume, recorded as estimated and `from_scene`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from kinegraph.tools.camera_model import CameraModel

#: the camera values a scene can lend a clip
SHARED_VALUES = frozenset({"focal", "height"})


class ScenePool(NamedTuple):
    """The scene's measured values, each (value, 1-sigma) or None when no clip measured it."""

    focal_share: tuple[float, float] | None  # focal length over image width
    height_m: tuple[float, float] | None
    n_focal: int
    n_height: int


def weighted_median(values: Sequence[float], sigmas: Sequence[float]) -> tuple[float, float]:
    """(median of `values` weighted by 1/sigma^2, its 1-sigma): the pooled standard error, or the
    readings' own weighted spread over sqrt(n) when they disagree by more than their sigmas say."""
    v = np.asarray(values, dtype=np.float64)
    w = 1.0 / np.maximum(np.asarray(sigmas, dtype=np.float64), 1e-12) ** 2
    order = np.argsort(v)
    v, w = v[order], w[order]
    cumulative = np.cumsum(w)
    k = int(np.searchsorted(cumulative, 0.5 * cumulative[-1]))
    exact = k + 1 < len(v) and math.isclose(cumulative[k], 0.5 * cumulative[-1])
    median = float(0.5 * (v[k] + v[k + 1])) if exact else float(v[k])  # a tie splits the two middle ones
    spread = math.sqrt(float(np.sum(w * (v - median) ** 2) / np.sum(w)) / len(v))
    return median, max(1.0 / math.sqrt(float(np.sum(w))), spread)


def scene_pool(cameras: Sequence[tuple[CameraModel, int]]) -> ScenePool:
    """Pool the focal lengths and heights measured (not given, not assumed, not themselves borrowed)
    on the scene's clips, each camera with its frames' width in pixels."""
    focal = [
        (cam.fx_px / width, cam.focal_sigma_px / width)
        for cam, width in cameras
        if "focal" not in cam.assumed and cam.focal_sigma_px is not None and "focal" not in cam.from_scene
    ]
    height = [
        (cam.height_m, cam.height_sigma_m)
        for cam, _ in cameras
        if "height" not in cam.assumed and cam.height_sigma_m is not None and "height" not in cam.from_scene
    ]
    return ScenePool(
        weighted_median(*zip(*focal, strict=True)) if focal else None,
        weighted_median(*zip(*height, strict=True)) if height else None,
        len(focal),
        len(height),
    )


def with_scene_values(
    camera: CameraModel, pool: ScenePool, width_px: int, wanted: frozenset[str]
) -> CameraModel | None:
    """`camera` with those of its `wanted` values the scene measured taken from `pool`, or None when
    the scene measured none of them."""
    changes: dict[str, float] = {}
    names: set[str] = set()
    if "focal" in wanted and pool.focal_share is not None:
        share, sigma = pool.focal_share
        focal = share * width_px
        aspect = camera.fy_px / camera.fx_px
        changes.update(fx_px=focal, fy_px=focal * aspect, focal_sigma_px=sigma * width_px)
        names.add("focal")
    if "height" in wanted and pool.height_m is not None:
        changes.update(height_m=pool.height_m[0], height_sigma_m=pool.height_m[1])
        names.add("height")
    if not names:
        return None
    return replace(camera, **changes, assumed=camera.assumed - names, from_scene=frozenset(names))


def own_measurements(camera: CameraModel, measured: CameraModel) -> CameraModel:
    """The clip's starting `camera` with the focal length and height its own frames `measured` (as
    estimated): measured again through a scene-mate's values, a clip keeps what it read itself."""
    changes: dict[str, object] = {}
    if "focal" in camera.assumed and "focal" not in measured.assumed:
        changes.update(fx_px=measured.fx_px, fy_px=measured.fy_px, focal_sigma_px=measured.focal_sigma_px)
    if "height" in camera.assumed and "height" not in measured.assumed:
        changes.update(height_m=measured.height_m, height_sigma_m=measured.height_sigma_m)
    kept = {"focal"} if "fx_px" in changes else set()
    kept |= {"height"} if "height_m" in changes else set()
    return replace(camera, **changes, assumed=camera.assumed - kept) if kept else camera
