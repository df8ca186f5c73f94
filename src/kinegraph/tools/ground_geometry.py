"""Pixels <-> points on a flat road for a camera at a known height: the metric anchor of monocular VO.

Frames: the ego frame is x forward, y left, z up, with its origin on the road under the camera; camera
axes are x right, y down, z forward. A camera pitched down by theta and rolled by phi has
`ego_R_cam = Ry(theta) @ Rx(phi) @ EGO_R_CAM`. A planar ego motion between two frames is
`(tx_m, ty_m, dyaw_rad)`: frame b's origin and heading expressed in frame a.
"""

from __future__ import annotations

import numpy as np

from kinegraph.tools.camera_model import CameraModel

EGO_R_CAM = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
#: Rays flatter than this below the horizon hit the road too far away to carry metric information.
MIN_DEPRESSION = 0.01


def ego_r_cam(pitch_rad: np.ndarray | float, roll_rad: float = 0.0) -> np.ndarray:
    """Rotation(s) camera -> ego for pitch (N,) or scalar: (N, 3, 3) or (3, 3)."""
    cr, sr = np.cos(roll_rad), np.sin(roll_rad)
    r_x = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    if np.ndim(pitch_rad) == 0:
        c, s = float(np.cos(pitch_rad)), float(np.sin(pitch_rad))
        return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]) @ r_x @ EGO_R_CAM
    theta = np.asarray(pitch_rad, dtype=np.float64)
    c, s = np.cos(theta), np.sin(theta)
    zero, one = np.zeros_like(theta), np.ones_like(theta)
    r_y = np.stack(
        [np.stack([c, zero, s], -1), np.stack([zero, one, zero], -1), np.stack([-s, zero, c], -1)], -2
    )
    return r_y @ r_x @ EGO_R_CAM


def normalised_rays(points_px: np.ndarray, camera: CameraModel) -> np.ndarray:
    """Camera-frame rays (N, 3) with z = 1 of pixels (N, 2)."""
    rays = np.ones((len(points_px), 3))
    rays[:, 0] = (points_px[:, 0] - camera.cx_px) / camera.fx_px
    rays[:, 1] = (points_px[:, 1] - camera.cy_px) / camera.fy_px
    return rays


def back_project(
    rays_cam: np.ndarray, pitch_rad: np.ndarray | float, camera: CameraModel
) -> tuple[np.ndarray, np.ndarray]:
    """Road points (N, 2) m in the ego frame hit by camera rays (N, 3), and which rays hit the road (N,).

    `pitch_rad` is scalar or per ray (N,). Rays at or above the horizon give NaN and False.
    """
    return back_project_with(rays_cam, ego_r_cam(pitch_rad, camera.roll_rad or 0.0), camera.height_m)


def back_project_with(
    rays_cam: np.ndarray, ego_r_cam_: np.ndarray, height_m: float
) -> tuple[np.ndarray, np.ndarray]:
    """`back_project` with the camera->ego rotation given: (3, 3) for all rays or (N, 3, 3) per ray."""
    if ego_r_cam_.ndim == 2:
        dirs = rays_cam @ ego_r_cam_.T
    else:
        dirs = np.einsum("nij,nj->ni", ego_r_cam_, rays_cam)
    down = -dirs[:, 2] / np.linalg.norm(dirs, axis=1)
    hit = down > MIN_DEPRESSION
    scale = np.where(hit, height_m / np.where(hit, -dirs[:, 2], 1.0), np.nan)
    return dirs[:, :2] * scale[:, None], hit


def project(points_m: np.ndarray, pitch_rad: np.ndarray | float, camera: CameraModel) -> np.ndarray:
    """Pixels (N, 2) of road points (N, 2) m in the ego frame (NaN for points behind the camera)."""
    return project_with(points_m, ego_r_cam(pitch_rad, camera.roll_rad or 0.0), camera)


def project_with(points_m: np.ndarray, ego_r_cam_: np.ndarray, camera: CameraModel) -> np.ndarray:
    """`project` with the camera->ego rotation given: (3, 3) for all points or (N, 3, 3) per point."""
    rel = np.column_stack([points_m, np.full(len(points_m), -camera.height_m)])
    if ego_r_cam_.ndim == 2:
        cam = rel @ ego_r_cam_
    else:
        cam = np.einsum("nji,nj->ni", ego_r_cam_, rel)
    z = np.where(cam[:, 2] > 1e-6, cam[:, 2], np.nan)
    return np.column_stack(
        [camera.fx_px * cam[:, 0] / z + camera.cx_px, camera.fy_px * cam[:, 1] / z + camera.cy_px]
    )


def move_points(points_m: np.ndarray, motion: np.ndarray) -> np.ndarray:
    """Road points (N, 2) of frame a expressed in frame b, for motions (N, 3) or (3,) [tx, ty, dyaw]."""
    motion = np.broadcast_to(np.asarray(motion, dtype=np.float64), (len(points_m), 3))
    c, s = np.cos(motion[:, 2]), np.sin(motion[:, 2])
    dx, dy = points_m[:, 0] - motion[:, 0], points_m[:, 1] - motion[:, 1]
    return np.column_stack([c * dx + s * dy, -s * dx + c * dy])


def horizon_row_px(camera: CameraModel, pitch_rad: float) -> float:
    """Image row of the road's horizon at the principal point's column."""
    return camera.cy_px - camera.fy_px * float(np.tan(pitch_rad))


def rigid_fit_2d(src_m: np.ndarray, dst_m: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least-squares [tx, ty, dyaw] with dst = R(-dyaw)(src - t): frame b seen from frame a."""
    w = weights / max(float(weights.sum()), 1e-12)
    mu_s, mu_d = w @ src_m, w @ dst_m
    a, b = src_m - mu_s, dst_m - mu_d
    cov = (a * w[:, None]).T @ b
    # dst = R(-psi) src + c  =>  psi maximises the weighted alignment of src rotated by -psi onto dst
    psi = float(np.arctan2(cov[1, 0] - cov[0, 1], cov[0, 0] + cov[1, 1]))
    c, s = np.cos(psi), np.sin(psi)
    rot_inv = np.array([[c, s], [-s, c]])  # R(-psi)
    t = mu_s - rot_inv.T @ mu_d
    return np.array([t[0], t[1], psi])
