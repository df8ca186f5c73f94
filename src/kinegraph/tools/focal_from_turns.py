"""The focal length of an uncalibrated road camera, from the clip's turns.

Driving straight cannot reveal it: a forward step over a flat road moves its pixels by a planar homology
that depends on the step over the focal length times the height, so a wrong focal length only rescales
the speed. Turning can: a yaw rotation shifts a pixel x columns from the principal point by
`dyaw * (f + x^2 / f)`, a pattern no planar translation makes. Back-projected with a wrong focal length,
the road's points stretch along the car's axis against across it, and a turn no longer moves them
rigidly. The focal length is the one under which the tracked road points of the turning pairs move
most rigidly; its uncertainty comes from the curvature of that misfit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from kinegraph.tools.camera_model import CameraModel
from kinegraph.tools.ground_geometry import back_project, move_points, normalised_rays, project, rigid_fit_2d
from kinegraph.tools.ground_motion import PairFit

SCALES = np.geomspace(0.45, 2.4, 41)  # focal lengths tried, as multiples of the assumed one
PITCH_STEPS_RAD = np.radians(np.arange(-3.0, 3.01, 0.5))  # pitch offsets tried around the current one
MIN_TURN_RAD = np.radians(0.8)  # pairs turning less than this carry no information on the focal length
MIN_TURNING_PAIRS = 4
PIXEL_SIGMA_PX = 0.7  # tracking noise assumed per coordinate (at 640 px)
MAX_RELATIVE_SIGMA = 0.12  # a focal length known worse than this (1 sigma) is not used: assumed instead
MIN_RELATIVE_SIGMA = 0.05  # on tuning clips the estimate erred by 5-8 %: never claimed better than this


class FocalEstimate(NamedTuple):
    """Focal length (px, fx; fy keeps the camera's aspect), its 1-sigma (px), and the turning pairs and
    road points it rests on."""

    focal_px: float
    sigma_px: float
    pairs: int
    points: int


def _misfit(fits: Sequence[PairFit], camera: CameraModel, pitch_rad: float) -> float:
    """Sum of squared transfer errors (px^2) of the best rigid road motion of each pair under `camera`."""
    total = 0.0
    for fit in fits:
        a_m, hit_a = back_project(normalised_rays(fit.inliers.a_px, camera), pitch_rad, camera)
        b_m, hit_b = back_project(normalised_rays(fit.inliers.b_px, camera), pitch_rad, camera)
        ok = hit_a & hit_b
        if ok.sum() < 6:
            return np.inf
        depth = np.hypot(a_m[ok, 0], a_m[ok, 1])
        motion = rigid_fit_2d(a_m[ok], b_m[ok], 1.0 / (1.0 + (depth / 10.0) ** 2))
        predicted = project(move_points(a_m[ok], motion), pitch_rad, camera)
        error = np.sum((predicted - fit.inliers.b_px[ok]) ** 2, axis=1)
        total += float(np.sum(np.minimum(error, 25.0)))  # a robust cap: one bad track cannot decide
    return total


def focal_from_turns(
    fits: Sequence[PairFit | None], camera: CameraModel, pitch_rad: float
) -> FocalEstimate | None:
    """The focal length under which the turning pairs' road points move most rigidly, or None when the
    clip turns too little (or too few road points are tracked) to tell it within `MAX_RELATIVE_SIGMA`."""
    turning = [f for f in fits if f is not None and abs(f.motion[2]) > MIN_TURN_RAD]
    if len(turning) < MIN_TURNING_PAIRS:
        return None
    base = camera.fx_px

    def misfit(scale: float, pitch: float) -> float:
        return _misfit(turning, replace(camera, fx_px=base * scale, fy_px=camera.fy_px * scale), pitch)

    # the pitch found under a wrong focal length is wrong with it: search the two in turn
    pitch = pitch_rad
    for _ in range(3):
        misfits = np.array([misfit(s, pitch) for s in SCALES])
        if not np.isfinite(misfits).any():
            return None
        scale = float(SCALES[int(np.nanargmin(np.where(np.isfinite(misfits), misfits, np.nan)))])
        pitches = pitch + PITCH_STEPS_RAD
        pitch = float(pitches[int(np.argmin([misfit(scale, p) for p in pitches]))])
    misfits = np.array([misfit(s, pitch) for s in SCALES])
    best = int(np.nanargmin(np.where(np.isfinite(misfits), misfits, np.nan)))
    if best in (0, len(SCALES) - 1):
        return None  # the minimum is at the edge of what was tried: no estimate
    # chi^2 in units of the tracking noise; a parabola in log-scale through the minimum's neighbours
    sigma_px = PIXEL_SIGMA_PX * max(1.0, camera.cx_px * 2 / 640.0)
    chi = misfits[best - 1 : best + 2] / sigma_px**2
    x = np.log(SCALES[best - 1 : best + 2])
    curvature = 2.0 * ((chi[2] - chi[1]) / (x[2] - x[1]) - (chi[1] - chi[0]) / (x[1] - x[0])) / (x[2] - x[0])
    if not np.isfinite(curvature) or curvature <= 0:
        return None
    offset = 0.5 * (x[0] + x[1]) - ((chi[1] - chi[0]) / (x[1] - x[0])) / curvature  # vertex of the parabola
    log_scale = float(np.clip(offset, x[0], x[2]))
    n_points = sum(len(f.inliers.a_px) for f in turning)
    # the residuals' own scatter, not the assumed noise, sets the uncertainty (tracks are correlated)
    dof = max(1, 2 * n_points - 3 * len(turning))
    scatter = max(1.0, float(chi[1]) / dof)
    relative_sigma = max(MIN_RELATIVE_SIGMA, float(np.sqrt(2.0 * scatter / curvature)))
    if relative_sigma > MAX_RELATIVE_SIGMA:
        return None
    focal = base * float(np.exp(log_scale))
    return FocalEstimate(focal, focal * relative_sigma, len(turning), n_points)
