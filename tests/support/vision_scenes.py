"""Tiny ray-cast scene for the vision-probe tests: a pinhole camera 1.5 m above a textured ground, between
two textured side walls and facing a far wall, so that yaw, forward motion and stops are known exactly.

World axes: x right, y down, z forward (metres). Camera yaw + = turned left (counter-clockwise from above).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from scipy.ndimage import gaussian_filter

CAMERA_HEIGHT_M = 1.5
WALL_X_M = 8.0
FAR_WALL_Z_M = 60.0
TEXELS_PER_M = 24.0
FOG_M = 45.0


def _texture(seed: int, size: int = 512) -> np.ndarray:
    """Band-limited RGB texture (size, size, 3) float32: blurred noise at three scales, wraps cleanly."""
    rng = np.random.default_rng(seed)
    tex = np.zeros((size, size, 3), np.float32)
    for sigma, weight in ((2.0, 0.5), (6.0, 0.3), (16.0, 0.2)):
        noise = rng.standard_normal((size, size, 3)).astype(np.float32)
        blurred = gaussian_filter(noise, (sigma, sigma, 0), mode="wrap")
        tex += weight * blurred / blurred.std()
    return np.clip(128 + 45 * tex, 0, 255).astype(np.float32)


_TEXTURES: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _textures(seed: int) -> tuple[np.ndarray, np.ndarray]:
    if seed not in _TEXTURES:
        _TEXTURES[seed] = (_texture(seed), _texture(seed + 1000))
    return _TEXTURES[seed]


def intrinsics(width_px: int, height_px: int, focal_scale: float = 0.9) -> np.ndarray:
    """Pinhole K, f = focal_scale * width (0.9 is the probes' default), principal point at the centre."""
    f_px = focal_scale * width_px
    return np.array([[f_px, 0, width_px / 2.0], [0, f_px, height_px / 2.0], [0, 0, 1.0]])


def _ray_hits(
    x_m: float, z_m: float, yaw_rad: float, width_px: int, height_px: int, focal_scale: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pixel: the surface hit (0 ground, 1 side wall, 2 far wall), its distance and world x, y, z."""
    K = intrinsics(width_px, height_px, focal_scale)
    us, vs = np.meshgrid(np.arange(width_px, dtype=np.float64), np.arange(height_px, dtype=np.float64))
    dx_c = (us - K[0, 2]) / K[0, 0]
    dy_c = (vs - K[1, 2]) / K[1, 1]
    cos_y, sin_y = np.cos(yaw_rad), np.sin(yaw_rad)
    # world_R_camera = rotation about y by -yaw: the forward axis turns towards -x for a left turn
    dx_w = cos_y * dx_c - sin_y
    dz_w = sin_y * dx_c + cos_y
    dy_w = dy_c
    inf = np.full(dx_w.shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ground = np.where(dy_w > 1e-9, CAMERA_HEIGHT_M / dy_w, inf)
        t_side = np.where(
            dx_w > 1e-9, (WALL_X_M - x_m) / dx_w, np.where(dx_w < -1e-9, (-WALL_X_M - x_m) / dx_w, inf)
        )
        t_far = np.where(dz_w > 1e-9, (FAR_WALL_Z_M - z_m) / dz_w, inf)
    t = np.stack([t_ground, t_side, t_far])
    surface = np.argmin(t, axis=0)
    dist = np.min(t, axis=0)
    return surface, dist, np.stack([x_m + dist * dx_w, dist * dy_w, z_m + dist * dz_w]), K


def render_frame(
    x_m: float,
    z_m: float,
    yaw_rad: float,
    width_px: int = 480,
    height_px: int = 270,
    seed: int = 0,
    focal_scale: float = 0.9,
) -> np.ndarray:
    """RGB uint8 (H, W, 3) seen from (x_m, z_m) with heading yaw_rad (+ = left)."""
    ground_tex, wall_tex = _textures(seed)
    surface, dist, (hit_x, hit_y, hit_z), _ = _ray_hits(x_m, z_m, yaw_rad, width_px, height_px, focal_scale)
    # texture coordinates: ground uses (x, z), side walls (z, y), the far wall (x, y)
    u_tex = np.choose(surface, [hit_x, hit_z, hit_x]) * TEXELS_PER_M
    v_tex = np.choose(surface, [hit_z, hit_y + 7.0, hit_y]) * TEXELS_PER_M
    maps = (u_tex.astype(np.float32), v_tex.astype(np.float32))
    ground = cv2.remap(ground_tex, *maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    walls = cv2.remap(wall_tex, *maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    color = np.where((surface == 0)[..., None], ground, walls)
    fog = np.exp(-dist / FOG_M)[..., None]
    sky = np.float32([170, 190, 215])
    return np.clip(fog * color + (1 - fog) * sky, 0, 255).astype(np.uint8)


def true_flow(
    pose_a: tuple[float, float, float],
    pose_b: tuple[float, float, float],
    width_px: int = 480,
    height_px: int = 270,
    focal_scale: float = 0.9,
) -> np.ndarray:
    """Exact flow (H, W, 2) [dx, dy] in px of each pixel of the view from pose_a into the view from pose_b."""
    _, _, (hit_x, hit_y, hit_z), K = _ray_hits(*pose_a, width_px, height_px, focal_scale)
    x_b, z_b, yaw_b = pose_b
    rel_x, rel_z = hit_x - x_b, hit_z - z_b
    cam_x = np.cos(yaw_b) * rel_x + np.sin(yaw_b) * rel_z  # camera_R_world = rotation about y by +yaw
    cam_z = -np.sin(yaw_b) * rel_x + np.cos(yaw_b) * rel_z
    u_b = K[0, 0] * cam_x / cam_z + K[0, 2]
    v_b = K[1, 1] * hit_y / cam_z + K[1, 2]
    us, vs = np.meshgrid(np.arange(width_px, dtype=np.float64), np.arange(height_px, dtype=np.float64))
    return np.stack([u_b - us, v_b - vs], axis=-1)


def render_clip(
    poses: Sequence[tuple[float, float, float]],
    width_px: int = 480,
    height_px: int = 270,
    seed: int = 0,
    focal_scale: float = 0.9,
) -> np.ndarray:
    """Frames (T, H, W, 3) for poses [(x_m, z_m, yaw_rad), ...]."""
    return np.stack([render_frame(x, z, yaw, width_px, height_px, seed, focal_scale) for x, z, yaw in poses])


def drive(
    n_frames: int, step_m: Sequence[float] | float, yaw_step_rad: Sequence[float] | float = 0.0
) -> list[tuple[float, float, float]]:
    """Poses of a car moving `step_m` per frame along its heading while turning `yaw_step_rad` per frame
    (scalars apply to every one of the n_frames - 1 steps)."""
    steps = np.broadcast_to(np.asarray(step_m, np.float64), (n_frames - 1,))
    turns = np.broadcast_to(np.asarray(yaw_step_rad, np.float64), (n_frames - 1,))
    x, z, yaw = 0.0, 0.0, 0.0
    poses = [(x, z, yaw)]
    for step, turn in zip(steps, turns, strict=True):
        yaw += turn
        x, z = x - step * np.sin(yaw), z + step * np.cos(yaw)
        poses.append((x, z, yaw))
    return poses


def textured_image(height_px: int = 180, width_px: int = 320, seed: int = 0) -> np.ndarray:
    """A band-limited RGB uint8 texture (H, W, 3) to warp with a known homography."""
    tex = _texture(seed, size=max(height_px, width_px) + 64)
    return tex[:height_px, :width_px].astype(np.uint8)
