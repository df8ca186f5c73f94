"""Planar ego motion from road correspondences: a RANSAC start per frame pair, then one joint fit.

The joint fit solves every pair's (tx, ty, dyaw), the clip's mount pitch and every frame's nod around
it together by robust least squares on the pixel transfer error of road points (back-project in frame a
at its pitch, move, project in frame b at its pitch). The nod absorbs the body's pitching under braking;
priors keep it small and tied to its neighbours, and tie the mount pitch to the calibrated one (when
known), so the pitch stays defined when the car stands and cannot drift into the speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from scipy.optimize import least_squares
from scipy.sparse import lil_matrix

from kinegraph.tools.camera_model import MAX_PITCH_DEG, CameraModel
from kinegraph.tools.ground_geometry import (
    back_project,
    back_project_with,
    ego_r_cam,
    move_points,
    normalised_rays,
    project_with,
    rigid_fit_2d,
)
from kinegraph.tools.ground_tracks import PairMatches

RANSAC_ITERATIONS = 96
INLIER_PX = 1.5  # transfer error at 640 px width, scaled with the image
PIXEL_SIGMA_PX = 0.5  # per-coordinate tracking noise the fit's weights assume (at 640 px)
PITCH_STEP_SIGMA_RAD = np.radians(0.25)  # how far the body may nod between two frames
BODY_PITCH_SIGMA_RAD = np.radians(0.1)  # how far a frame's pitch strays from the clip's mount pitch
# A calibrated mount pitch is held: freed, the clip's mean pitch trades off against the speed and drifts
# with it (a fake acceleration of ~0.1 m/s^2 over a clip at constant speed, on tuning seeds 5 and 6).
KNOWN_PITCH_SIGMA_RAD = np.radians(0.01)
UNKNOWN_PITCH_SIGMA_RAD = np.radians(8.0)
MIN_INLIERS = 12
PRIOR_SIGMA_FLOOR = np.array([0.01, 0.01, np.radians(0.05)])  # a prior motion is never trusted beyond this
ROLL_SEARCH_DEG = 6.0  # the roll search spans +- this (a windscreen mount tilted further is not level)
ROLL_MIN_PAIRS = 8  # moving pairs with road inliers needed to read a roll
ROLL_STEP_DEG = 0.5
ROLL_PAIRS = 12  # the pairs with the most road inliers score each roll


class PairFit(NamedTuple):
    """A frame pair's motion [tx_m, ty_m, dyaw_rad], the road correspondences that support it and how
    many correspondences were tracked in all (the share explained tells a road from another scene)."""

    motion: np.ndarray
    inliers: PairMatches
    n_tracked: int


class ClipMotion(NamedTuple):
    """The joint solution: motions (P, 3), pitch per frame (T,), 1-sigma of each motion (P, 3),
    inlier count (P,) and RMS transfer error (P,) px of each pair."""

    motions: np.ndarray
    pitch_rad: np.ndarray
    motion_sigma: np.ndarray
    n_inliers: np.ndarray
    rms_px: np.ndarray


def ransac_pair(
    matches: PairMatches, camera: CameraModel, pitch_rad: float, rng: np.random.Generator
) -> PairFit | None:
    """Best 2-point rigid motion on the road (most transfer inliers), refitted on its inliers."""
    a_m, hit_a = back_project(normalised_rays(matches.a_px, camera), pitch_rad, camera)
    b_m, hit_b = back_project(normalised_rays(matches.b_px, camera), pitch_rad, camera)
    usable = np.flatnonzero(hit_a & hit_b)
    if len(usable) < MIN_INLIERS:
        return None
    a_m, b_m, b_px = a_m[usable], b_m[usable], matches.b_px[usable]
    threshold = INLIER_PX * max(1.0, camera.cx_px * 2 / 640.0)
    picks = rng.integers(0, len(usable), size=(RANSAC_ITERATIONS, 2))
    picks = picks[picks[:, 0] != picks[:, 1]]
    hypotheses = _two_point_motions(a_m[picks[:, 0]], a_m[picks[:, 1]], b_m[picks[:, 0]], b_m[picks[:, 1]])
    errors = _transfer_errors(a_m, b_px, camera, pitch_rad, hypotheses)  # (H, N)
    best = hypotheses[int(np.argmax(np.sum(errors < threshold, axis=1)))]
    weights = _scale_weights(a_m)
    for _ in range(2):
        inlier = _transfer_errors(a_m, b_px, camera, pitch_rad, best[None])[0] < threshold
        if inlier.sum() < MIN_INLIERS:
            return None
        best = rigid_fit_2d(a_m[inlier], b_m[inlier], weights[inlier])
    keep = usable[_transfer_errors(a_m, b_px, camera, pitch_rad, best[None])[0] < threshold]
    if len(keep) < MIN_INLIERS:
        return None
    return PairFit(best, PairMatches(matches.a_px[keep], matches.b_px[keep]), len(matches.a_px))


def estimate_pitch(
    matches: Sequence[PairMatches],
    fits: Sequence[PairFit | None],
    camera: CameraModel,
    rng: np.random.Generator,
    max_pairs: int = 8,
    start_rad: float = 0.0,
) -> float:
    """The camera pitch (rad) under which the road's motion is most consistent: a coarse-to-fine search
    over `start_rad` +-10 deg (within +-`MAX_PITCH_DEG`) maximising RANSAC inliers on the pairs that moved
    most (`start_rad` when the car stands still)."""
    moving = _moving(fits)
    if not moving:
        return start_rad
    chosen = sorted(moving, key=lambda k: -len(matches[k].a_px))[:max_pairs]

    def score(pitch: float) -> float:
        total = 0.0
        for k in chosen:
            fit = ransac_pair(matches[k], camera, pitch, rng)
            if fit is not None:
                total += len(fit.inliers.a_px)
        return total

    best = start_rad
    for step in (np.radians(1.0), np.radians(0.25)):
        span = np.radians(10.0) if step > np.radians(0.5) else np.radians(1.0)
        grid = best + np.arange(-span, span + step / 2, step)
        grid = grid[np.abs(grid) <= np.radians(MAX_PITCH_DEG)]  # no camera looks further up or down
        best = float(grid[int(np.argmax([score(p) for p in grid]))])
    return best


def estimate_roll(fits: Sequence[PairFit | None], camera: CameraModel, pitch_rad: float) -> float | None:
    """The camera roll (rad) under which the road inliers of the pairs that moved most fit one planar
    motion each best, or None when the road does not show it.

    A rolled camera tilts the road in the image: back-projected level, one side of the road lies nearer
    than it is, and a straight drive reads as turning. The score is each pair's truncated squared
    transfer error with its motion refitted at the candidate roll, on a `ROLL_STEP_DEG` grid over
    +-`ROLL_SEARCH_DEG`, refined by a parabola through the best three. None too when fewer than
    `ROLL_MIN_PAIRS` pairs moved with road inliers, or the best roll lies on the span's edge. The inliers
    come from fits at `camera.roll_rad`: refit them at the result and call again to converge.
    """
    moving = [fits[k] for k in _moving(fits)]
    if len(moving) < ROLL_MIN_PAIRS:
        return None
    chosen = sorted(moving, key=lambda f: -len(f.inliers.a_px))[:ROLL_PAIRS]
    threshold = INLIER_PX * max(1.0, camera.cx_px * 2 / 640.0)

    def cost(roll: float) -> float:
        at = replace(camera, roll_rad=roll)
        total = 0.0
        for fit in chosen:
            a_m, hit_a = back_project(normalised_rays(fit.inliers.a_px, at), pitch_rad, at)
            b_m, hit_b = back_project(normalised_rays(fit.inliers.b_px, at), pitch_rad, at)
            hit = hit_a & hit_b
            total += float(np.count_nonzero(~hit)) * threshold**2
            if hit.sum() < MIN_INLIERS:
                total += float(hit.sum()) * threshold**2
                continue
            motion = rigid_fit_2d(a_m[hit], b_m[hit], _scale_weights(a_m[hit]))
            errors = _transfer_errors(a_m[hit], fit.inliers.b_px[hit], at, pitch_rad, motion[None])[0]
            total += float(np.sum(np.minimum(errors, threshold) ** 2))
        return total

    step = np.radians(ROLL_STEP_DEG)
    grid = np.radians(np.arange(-ROLL_SEARCH_DEG, ROLL_SEARCH_DEG + ROLL_STEP_DEG / 2, ROLL_STEP_DEG))
    costs = np.array([cost(float(r)) for r in grid])
    best = int(np.argmin(costs))
    if best in (0, len(grid) - 1):
        return None  # no minimum inside the span: not a roll the road shows
    left, mid, right = costs[best - 1 : best + 2]
    curvature = left - 2.0 * mid + right
    offset = 0.5 * (left - right) / curvature if curvature > 0 else 0.0
    return float(grid[best] + np.clip(offset, -0.5, 0.5) * step)


def _moving(fits: Sequence[PairFit | None]) -> list[int]:
    """Indices of the pairs fitted with a step over 5 cm: a car that moved between the two frames."""
    return [k for k, f in enumerate(fits) if f is not None and np.hypot(*f.motion[:2]) > 0.05]


def _scale_weights(ground_m: np.ndarray) -> np.ndarray:
    """Weights (N,) of road points (N, 2) m in a rigid fit: near road points pin the metric scale."""
    return 1.0 / (1.0 + (np.hypot(ground_m[:, 0], ground_m[:, 1]) / 10.0) ** 4)


def _two_point_motions(p1: np.ndarray, p2: np.ndarray, q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Exact rigid motions (H, 3) taking point pairs (p1, p2) of frame a to (q1, q2) of frame b."""
    dp, dq = p2 - p1, q2 - q1
    psi = np.arctan2(dp[:, 1], dp[:, 0]) - np.arctan2(dq[:, 1], dq[:, 0])
    c, s = np.cos(psi), np.sin(psi)
    mid_p, mid_q = 0.5 * (p1 + p2), 0.5 * (q1 + q2)
    t = mid_p - np.column_stack([c * mid_q[:, 0] - s * mid_q[:, 1], s * mid_q[:, 0] + c * mid_q[:, 1]])
    return np.column_stack([t, psi])


def _transfer_errors(
    a_m: np.ndarray, b_px: np.ndarray, camera: CameraModel, pitch_rad: float, motions: np.ndarray
) -> np.ndarray:
    """Pixel distance (H, N) between frame b's observations and road points of frame a moved by each
    of the motions (H, 3) and projected at one pitch (inf behind the camera)."""
    c, s = np.cos(motions[:, 2])[:, None], np.sin(motions[:, 2])[:, None]
    dx, dy = a_m[None, :, 0] - motions[:, :1], a_m[None, :, 1] - motions[:, 1:2]
    x, y = c * dx + s * dy, -s * dx + c * dy
    rot = ego_r_cam(pitch_rad, camera.roll_rad or 0.0)  # camera = rot.T @ ego
    z_ego = -camera.height_m
    cam = [rot[0, i] * x + rot[1, i] * y + rot[2, i] * z_ego for i in range(3)]
    depth = np.where(cam[2] > 1e-6, cam[2], np.nan)
    u = camera.fx_px * cam[0] / depth + camera.cx_px
    v = camera.fy_px * cam[1] / depth + camera.cy_px
    error = np.hypot(u - b_px[None, :, 0], v - b_px[None, :, 1])
    return np.where(np.isfinite(error), error, np.inf)


def refine_clip(
    fits: Sequence[PairFit | None],
    camera: CameraModel,
    pitch0_rad: float,
    *,
    pitch_known: bool,
    priors: Sequence[tuple[np.ndarray, np.ndarray] | None] | None = None,
) -> ClipMotion:
    """Joint robust fit of every pair's motion and every frame's pitch. A pair without tracked road
    takes its `priors` entry (motion (3,), 1-sigma (3,), e.g. the direct road alignment's) as a
    measurement; without either it gets a zero-information motion interpolated from its neighbours and
    an infinite sigma."""
    n_pairs = len(fits)
    n_frames = n_pairs + 1
    priors = priors or [None] * n_pairs
    prior_of = [p if f is None else None for f, p in zip(fits, priors, strict=True)]
    start = np.array(
        [
            f.motion if f is not None else p[0] if p is not None else np.zeros(3)
            for f, p in zip(fits, prior_of, strict=True)
        ]
    )
    with_prior = np.array([p is not None for p in prior_of])
    prior_pairs = np.flatnonzero(with_prior)
    prior_mean = np.array([prior_of[k][0] for k in prior_pairs]).reshape(-1, 3)
    prior_sigma = np.array([np.maximum(prior_of[k][1], PRIOR_SIGMA_FLOOR) for k in prior_pairs]).reshape(
        -1, 3
    )
    have = np.array([f is not None for f in fits]) | with_prior
    if have.any() and not have.all():
        for k in range(3):
            start[~have, k] = np.interp(np.flatnonzero(~have), np.flatnonzero(have), start[have, k])
    a_px = np.concatenate([f.inliers.a_px for f in fits if f is not None] or [np.zeros((0, 2))])
    b_px = np.concatenate([f.inliers.b_px for f in fits if f is not None] or [np.zeros((0, 2))])
    pair_of = np.concatenate(
        [np.full(len(f.inliers.a_px), k) for k, f in enumerate(fits) if f is not None] or [np.zeros(0, int)]
    ).astype(int)
    rays = normalised_rays(a_px, camera)
    sigma_px = PIXEL_SIGMA_PX * max(1.0, camera.cx_px * 2 / 640.0)
    mount_sigma = KNOWN_PITCH_SIGMA_RAD if pitch_known else UNKNOWN_PITCH_SIGMA_RAD
    n_motion = 3 * n_pairs
    mount = n_frames + n_motion  # the last parameter: the mount pitch; frames nod around it

    def residuals(x: np.ndarray) -> np.ndarray:
        nod, motions = x[:n_frames], x[n_frames:mount].reshape(n_pairs, 3)
        # one rotation per frame, gathered per observation
        rot = ego_r_cam(x[mount] + nod, camera.roll_rad or 0.0)
        ground, _ = back_project_with(rays, rot[pair_of], camera.height_m)
        predicted = project_with(move_points(ground, motions[pair_of]), rot[pair_of + 1], camera)
        obs = np.nan_to_num((predicted - b_px) / sigma_px, nan=50.0).ravel()
        return np.concatenate(
            [
                obs,
                nod / BODY_PITCH_SIGMA_RAD,
                np.diff(nod) / PITCH_STEP_SIGMA_RAD,
                [(x[mount] - pitch0_rad) / mount_sigma],
                ((motions[prior_pairs] - prior_mean) / prior_sigma).ravel(),
            ]
        )

    n_obs = len(a_px)
    n_prior_rows = 3 * len(prior_pairs)
    sparsity = lil_matrix((2 * n_obs + n_frames + n_pairs + 1 + n_prior_rows, mount + 1), dtype=np.int8)
    rows = np.arange(2 * n_obs)
    obs_pair = np.repeat(pair_of, 2)
    sparsity[rows, obs_pair] = 1
    sparsity[rows, obs_pair + 1] = 1
    sparsity[rows, mount] = 1
    for k in range(3):
        sparsity[rows, n_frames + 3 * obs_pair + k] = 1
    prior_rows = 2 * n_obs + np.arange(n_frames)
    sparsity[prior_rows, np.arange(n_frames)] = 1
    step_rows = 2 * n_obs + n_frames + np.arange(n_pairs)
    sparsity[step_rows, np.arange(n_pairs)] = 1
    sparsity[step_rows, np.arange(n_pairs) + 1] = 1
    sparsity[2 * n_obs + n_frames + n_pairs, mount] = 1
    motion_prior_rows = 2 * n_obs + n_frames + n_pairs + 1 + np.arange(n_prior_rows)
    sparsity[
        motion_prior_rows, n_frames + np.repeat(3 * prior_pairs, 3) + np.tile(np.arange(3), len(prior_pairs))
    ] = 1
    x0 = np.concatenate([np.zeros(n_frames), start.ravel(), [pitch0_rad]])
    solution = least_squares(
        residuals, x0, jac_sparsity=sparsity, loss="soft_l1", f_scale=2.0, method="trf", x_scale="jac",
        max_nfev=60,
    )  # fmt: skip
    x = solution.x
    jac = solution.jac.toarray() if hasattr(solution.jac, "toarray") else np.asarray(solution.jac)
    information = jac.T @ jac
    motion_sigma = _motion_sigma(information, n_frames, n_pairs, have)
    final = residuals(x)[: 2 * n_obs].reshape(-1, 2) * sigma_px
    err2 = np.sum(final**2, axis=1)
    counts = np.bincount(pair_of, minlength=n_pairs)
    rms = np.sqrt(np.bincount(pair_of, weights=err2, minlength=n_pairs) / np.maximum(counts, 1))
    return ClipMotion(
        x[n_frames:mount].reshape(n_pairs, 3),
        x[mount] + x[:n_frames],
        motion_sigma,
        counts,
        np.where(counts > 0, rms, np.nan),
    )


def _motion_sigma(information: np.ndarray, n_frames: int, n_pairs: int, have: np.ndarray) -> np.ndarray:
    """1-sigma (P, 3) of each pair's motion from the Gauss-Newton information matrix."""
    try:
        covariance = np.linalg.pinv(information, hermitian=True)
    except np.linalg.LinAlgError:
        return np.full((n_pairs, 3), np.inf)
    diag = np.sqrt(np.maximum(np.diag(covariance)[n_frames : n_frames + 3 * n_pairs], 0.0)).reshape(
        n_pairs, 3
    )
    diag[~have] = np.inf
    return diag
