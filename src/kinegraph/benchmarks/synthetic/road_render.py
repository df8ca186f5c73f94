"""A fast pinhole renderer of a RoadWorld from the ego's front camera (numpy + OpenCV, CPU).

The ground is drawn per band of image rows with one perspective warp of each texture (the image-to-ground
map of a level camera is a homography), using a coarser pyramid level where a pixel covers more ground,
so far asphalt does not shimmer. The sky carries a distant skyline that moves only with yaw; roadside
boxes are clipped at the near plane and painted far to near. Frames are RGB uint8 (H, W, 3).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from kinegraph.benchmarks.synthetic.road_world import (
    ASPHALT,
    BOX_FACES,
    DETAIL_TEXEL_M,
    PAINT,
    VERGE,
    RoadWorld,
)

# Camera axes (x right, y down, z forward) expressed in the ego frame (x forward, y left, z up).
EGO_R_CAM = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
NEAR_M = 0.3
MAX_GROUND_M = 400.0
MAX_BOX_M = 220.0
SKY_TOP_RGB = np.array([95.0, 140.0, 205.0])
HAZE_RGB = np.array([190.0, 200.0, 210.0])
SKYLINE_RGB = np.array([105.0, 125.0, 118.0])
WINDOW_RGB = np.array([48.0, 58.0, 74.0])
_SUBPIXEL_BITS = 4
MAX_BODY_PITCH_RAD = np.radians(3.0)


@dataclass(frozen=True)
class PinholeCamera:
    """A level camera mounted on the ego (nuScenes CAM_FRONT-like by default); pixel centres at integers."""

    width_px: int
    height_px: int
    fx_px: float
    fy_px: float
    cx_px: float
    cy_px: float
    mount_forward_m: float = 1.70
    mount_left_m: float = 0.0
    mount_height_m: float = 1.51
    pitch_rad: float = 0.0  # optical axis below the horizon (+ = looking down)
    # about the optical axis, as `tools.ground_geometry.ego_r_cam` has it; calibrations in the CARLA
    # style leave it out of the `camera` object (`as_row`), so the estimator must measure it
    roll_rad: float = 0.0

    @classmethod
    def nuscenes_front(cls, width_px: int = 1600, height_px: int = 900) -> PinholeCamera:
        """nuScenes CAM_FRONT intrinsics (fx = fy ~ 1266 px at 1600x900), scaled to the requested size."""
        if width_px < 16 or height_px < 16:
            raise ValueError(f"image size {width_px}x{height_px} is too small (need at least 16x16)")
        sx, sy = width_px / 1600.0, height_px / 900.0
        return cls(width_px, height_px, 1266.417 * sx, 1266.417 * sy, 816.267 * sx, 491.507 * sy)

    def intrinsic_matrix(self) -> np.ndarray:
        """K (3, 3)."""
        return np.array([[self.fx_px, 0.0, self.cx_px], [0.0, self.fy_px, self.cy_px], [0.0, 0.0, 1.0]])

    def as_row(self) -> dict[str, float]:
        """The clips_index.jsonl `camera` object {fx, fy, cx, cy, height_m, pitch_deg}."""
        return {
            "fx": self.fx_px,
            "fy": self.fy_px,
            "cx": self.cx_px,
            "cy": self.cy_px,
            "height_m": self.mount_height_m,
            "pitch_deg": float(np.degrees(self.pitch_rad)),
        }

    def world_pose(self, x_m: float, y_m: float, yaw_rad: float) -> tuple[np.ndarray, np.ndarray]:
        """(world_R_cam (3, 3), camera centre in the world (3,)) for an ego pose on the ground."""
        c, s = np.cos(yaw_rad), np.sin(yaw_rad)
        world_r_ego = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        mount = np.array([self.mount_forward_m, self.mount_left_m, self.mount_height_m])
        return world_r_ego @ EGO_R_CAM, np.array([x_m, y_m, 0.0]) + world_r_ego @ mount


def _colour_lut() -> np.ndarray:
    """Albedo code -> RGB: verge green-brown, blending to asphalt grey, then to white paint."""
    verge, asphalt, paint = np.array([104, 112, 72.0]), np.array([96, 96, 99.0]), np.array([228, 228, 222.0])
    code = np.arange(256, dtype=np.float64)[:, None]
    to_asphalt = np.clip((code - 50) / (ASPHALT - 50), 0, 1)
    to_paint = np.clip((code - ASPHALT) / (PAINT - ASPHALT), 0, 1)
    rgb = verge + to_asphalt * (asphalt - verge) + to_paint * (paint - asphalt)
    return np.clip(rgb, 0, 255).astype(np.uint8)


_LUT_RGB = _colour_lut()


def _texel_matrix(origin_m: tuple[float, float], texel_m: float) -> np.ndarray:
    """Ground (x, y, 1) -> texel (col, row, 1) of a raster whose texel centres sit at origin + (j+0.5)t."""
    inv = 1.0 / texel_m
    return np.array([[inv, 0.0, -origin_m[0] * inv - 0.5], [0.0, inv, -origin_m[1] * inv - 0.5], [0, 0, 1.0]])


class RoadRenderer:
    """Renders one world through one camera; per-camera work (row bands, sky) is done once.

    A pitched or rolled camera (mounting pitch and roll, plus a per-frame body pitch in `render`) is
    rendered level on a larger canvas and then rotated into place by the homography K R K_canvas^-1,
    which is exact for a rotation about the optical centre.
    """

    def __init__(self, world: RoadWorld, camera: PinholeCamera) -> None:
        self.world = world
        self.output_camera = camera
        rolled = int(np.ceil(abs(np.sin(camera.roll_rad)) * (camera.width_px + camera.height_px)))
        margin_y = (
            int(np.ceil(camera.fy_px * np.tan(abs(camera.pitch_rad) + MAX_BODY_PITCH_RAD))) + 2 + rolled
        )
        margin_x = int(np.ceil(0.06 * camera.width_px)) + rolled
        camera = replace(
            camera,
            width_px=camera.width_px + 2 * margin_x,
            height_px=camera.height_px + 2 * margin_y,
            cx_px=camera.cx_px + margin_x,
            cy_px=camera.cy_px + margin_y,
            pitch_rad=0.0,
            roll_rad=0.0,
        )
        self.camera = camera
        self._k = camera.intrinsic_matrix()
        cam = camera
        h, fx, fy = cam.mount_height_m, cam.fx_px, cam.fy_px
        rows = np.arange(cam.height_px, dtype=np.float64)
        self._ground_row0 = int(min(cam.height_px, max(0, np.ceil(cam.cy_px + h * fy / MAX_GROUND_M))))
        depth_m = np.full(cam.height_px, np.inf)
        below = rows > cam.cy_px
        depth_m[below] = h * fy / (rows[below] - cam.cy_px)
        footprint_m = np.sqrt(depth_m**2 / (fy * h) * depth_m / fx)
        self._bands = self._row_bands(footprint_m)
        haze = np.clip(1.0 - np.exp(-np.maximum(depth_m - 40.0, 0.0) / 260.0), 0.0, 0.92)
        self._haze_rows = np.flatnonzero((haze > 0.005) & (rows >= self._ground_row0))
        self._haze = haze[self._haze_rows].astype(np.float32)[:, None, None]
        self._sky = self._sky_gradient()
        u = np.arange(cam.width_px, dtype=np.float64)
        self._col_angle_rad = np.arctan((cam.cx_px - u) / fx)  # left of the axis is positive azimuth
        self._col_stretch = np.sqrt(1.0 + ((u - cam.cx_px) / fx) ** 2)
        self._box_centre = world.box_corners_m.mean(axis=1)
        self._face_centre = world.box_corners_m[:, BOX_FACES].mean(axis=2)  # (B, 6, 3)
        order = np.lexsort((world.decal_face, world.decal_box))
        self._decals = world.decals_m[order]
        keys = world.decal_box[order] * 6 + world.decal_face[order]
        starts = np.flatnonzero(np.diff(np.concatenate([[-1], keys])))
        ends = np.append(starts[1:], len(keys))
        self._decal_slices = {int(keys[a]): (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}

    def _row_bands(self, footprint_m: np.ndarray) -> list[tuple[int, int, int, int]]:
        """Consecutive ground rows sharing (albedo level, detail level): (row0, row1, la, ld)."""

        def level(texel_m: float, n: int) -> np.ndarray:
            ratio = np.maximum(footprint_m / texel_m, 1.0)
            return np.clip(np.floor(np.log2(ratio)), 0, n - 1).astype(int)

        la = level(self.world.texel_m, len(self.world.albedo))
        ld = level(DETAIL_TEXEL_M, len(self.world.detail))
        bands: list[tuple[int, int, int, int]] = []
        for r in range(self._ground_row0, self.camera.height_px):
            if bands and bands[-1][2:] == (la[r], ld[r]) and bands[-1][1] == r:
                bands[-1] = (bands[-1][0], r + 1, la[r], ld[r])
            else:
                bands.append((r, r + 1, int(la[r]), int(ld[r])))
        return bands

    def _sky_gradient(self) -> np.ndarray:
        cam = self.camera
        n = self._ground_row0
        elevation = np.arctan((cam.cy_px - np.arange(n) - 0.5) / cam.fy_px)
        t = np.clip(elevation / 0.6, 0.0, 1.0)[:, None] ** 0.7
        column = (HAZE_RGB + t * (SKY_TOP_RGB - HAZE_RGB)).astype(np.uint8)
        return np.ascontiguousarray(np.broadcast_to(column[:, None, :], (n, cam.width_px, 3)))

    def render(
        self,
        x_m: float,
        y_m: float,
        yaw_rad: float,
        body_pitch_rad: float = 0.0,
        movers: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The camera image (H, W, 3) RGB uint8 for the ego at (x_m, y_m) heading yaw_rad, its body
        pitched by `body_pitch_rad` (+ = nose down, at most 3 deg) on top of the camera's mounting pitch.
        `movers` = (corners (M, 8, 3), face colours (M, 6, 3)): boxes of this instant (other road users),
        drawn with the world's boxes, far to near."""
        if not all(np.isfinite(v) for v in (x_m, y_m, yaw_rad, body_pitch_rad)):
            raise ValueError(f"non-finite ego pose ({x_m}, {y_m}, {yaw_rad}, {body_pitch_rad})")
        if abs(body_pitch_rad) > MAX_BODY_PITCH_RAD:
            raise ValueError(f"body pitch {body_pitch_rad} rad exceeds {MAX_BODY_PITCH_RAD:.4f} rad")
        canvas = self._render_level(x_m, y_m, yaw_rad, movers)
        out = self.output_camera
        theta = out.pitch_rad + body_pitch_rad
        c, s = np.cos(theta), np.sin(theta)
        pitched_r_level = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        cr, sr = np.cos(out.roll_rad), np.sin(out.roll_rad)
        rolled_r_pitched = np.array([[cr, sr, 0.0], [-sr, cr, 0.0], [0.0, 0.0, 1.0]])
        warp = out.intrinsic_matrix() @ rolled_r_pitched @ pitched_r_level @ np.linalg.inv(self._k)
        return cv2.warpPerspective(canvas, warp, (out.width_px, out.height_px), flags=cv2.INTER_LINEAR)

    def _render_level(
        self, x_m: float, y_m: float, yaw_rad: float, movers: tuple[np.ndarray, np.ndarray] | None
    ) -> np.ndarray:
        world_r_cam, centre_m = self.camera.world_pose(x_m, y_m, yaw_rad)
        image = np.empty((self.camera.height_px, self.camera.width_px, 3), np.uint8)
        image[: self._ground_row0] = self._sky
        self._draw_skyline(image, yaw_rad)
        self._draw_ground(image, world_r_cam, centre_m)
        self._draw_boxes(image, world_r_cam, centre_m, movers)
        return image

    def _draw_skyline(self, image: np.ndarray, yaw_rad: float) -> None:
        sky = self.world.skyline_rad
        azimuth = (yaw_rad + self._col_angle_rad) % (2 * np.pi)
        pos = azimuth / (2 * np.pi) * len(sky)
        i0 = np.floor(pos).astype(int) % len(sky)
        frac = pos - np.floor(pos)
        elev = sky[i0] * (1 - frac) + sky[(i0 + 1) % len(sky)] * frac
        top = self.camera.cy_px - self.camera.fy_px * np.tan(elev) * self._col_stretch
        r0 = int(max(0, np.floor(top.min())))
        r1 = self._ground_row0
        if r0 >= r1:
            return
        rows = np.arange(r0, r1, dtype=np.float64)[:, None]
        cover = np.clip(rows + 0.5 - top[None, :], 0.0, 1.0)[..., None]  # anti-aliased silhouette
        band = image[r0:r1].astype(np.float32)
        image[r0:r1] = (band + cover * (SKYLINE_RGB - band)).astype(np.uint8)

    def _draw_ground(self, image: np.ndarray, world_r_cam: np.ndarray, centre_m: np.ndarray) -> None:
        g0 = self._ground_row0
        if g0 >= self.camera.height_px:
            return
        cam_r_world = world_r_cam.T
        img_h_ground = self._k @ np.column_stack(
            [cam_r_world[:, 0], cam_r_world[:, 1], -cam_r_world @ centre_m]
        )
        ground_h_img = np.linalg.inv(img_h_ground)
        w, n_rows = self.camera.width_px, self.camera.height_px - g0
        albedo = np.empty((n_rows, w), np.uint8)
        detail = np.empty((n_rows, w), np.uint8)
        world = self.world
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        for r0, r1, la, ld in self._bands:
            shift = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, r0], [0.0, 0.0, 1.0]])
            band_h = ground_h_img @ shift
            scale_a = _texel_matrix(world.origin_m, world.texel_m * 2**la)
            scale_d = _texel_matrix((0.0, 0.0), DETAIL_TEXEL_M * 2**ld)
            albedo[r0 - g0 : r1 - g0] = cv2.warpPerspective(
                world.albedo[la], scale_a @ band_h, (w, r1 - r0), flags=flags,
                borderMode=cv2.BORDER_CONSTANT, borderValue=VERGE,
            )  # fmt: skip
            detail[r0 - g0 : r1 - g0] = cv2.warpPerspective(
                world.detail[ld], scale_d @ band_h, (w, r1 - r0), flags=flags, borderMode=cv2.BORDER_WRAP
            )
        ground = cv2.multiply(_LUT_RGB[albedo], cv2.merge([detail, detail, detail]), scale=1.0 / 128.0)
        if len(self._haze_rows):
            rows = self._haze_rows - g0
            hazy = ground[rows].astype(np.float32)
            ground[rows] = (hazy + self._haze * (HAZE_RGB.astype(np.float32) - hazy)).astype(np.uint8)
        image[g0:] = ground

    def _draw_boxes(
        self,
        image: np.ndarray,
        world_r_cam: np.ndarray,
        centre_m: np.ndarray,
        movers: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        world = self.world
        corners, face_rgb = world.box_corners_m, world.face_rgb
        box_centre, face_centre = self._box_centre, self._face_centre
        n_static = len(corners)
        if movers is not None and len(movers[0]):
            mover_corners = np.asarray(movers[0], dtype=np.float64)
            corners = np.concatenate([corners, mover_corners])
            face_rgb = np.concatenate([face_rgb, np.asarray(movers[1], dtype=np.float64)])
            box_centre = np.concatenate([box_centre, mover_corners.mean(axis=1)])
            face_centre = np.concatenate([face_centre, mover_corners[:, BOX_FACES].mean(axis=2)])
        if not len(corners):
            return
        face_normal = face_centre - box_centre[:, None, :]  # outward, unnormalised
        dist = np.linalg.norm(box_centre - centre_m, axis=1)
        cam_pts = (corners - centre_m) @ world_r_cam  # (B, 8, 3) camera coordinates
        keep = (dist < MAX_BOX_M) & (cam_pts[..., 2].max(axis=1) > NEAR_M)
        keep &= ~self._outside_view(cam_pts)
        facing = np.einsum("bfk,bfk->bf", face_normal, centre_m - face_centre) > 0
        fog = np.clip(1.0 - np.exp(-np.maximum(dist - 40.0, 0.0) / 260.0), 0.0, 0.92)[:, None, None]
        colours = (face_rgb + fog * (HAZE_RGB - face_rgb)).tolist()
        in_front = cam_pts[..., 2] >= NEAR_M
        corners_px = self._fixed_point(cam_pts)
        decals_px, decal_ok = self._project_decals(world_r_cam, centre_m)
        for b in np.flatnonzero(keep)[np.argsort(-dist[keep])]:
            window = tuple((WINDOW_RGB + fog[b, 0] * (HAZE_RGB - WINDOW_RGB)).tolist())
            for f in np.flatnonzero(facing[b]):
                face = BOX_FACES[f]
                if in_front[b, face].all():
                    cv2.fillConvexPoly(image, corners_px[b, face], colours[b][f], cv2.LINE_AA, _SUBPIXEL_BITS)
                else:
                    self._fill_clipped(image, cam_pts[b, face], colours[b][f])
                span = self._decal_slices.get(int(b) * 6 + int(f)) if b < n_static else None
                if span is None:
                    continue
                for d in np.flatnonzero(decal_ok[span[0] : span[1]]) + span[0]:
                    cv2.fillConvexPoly(image, decals_px[d], window, cv2.LINE_AA, _SUBPIXEL_BITS)

    def _fixed_point(self, cam_pts: np.ndarray) -> np.ndarray:
        """Pixel coordinates (..., 2) in cv2 fixed point of camera points (..., 3) with z >= NEAR_M."""
        z = np.maximum(cam_pts[..., 2:3], NEAR_M)
        uv = cam_pts[..., :2] / z * (self.camera.fx_px, self.camera.fy_px) + (
            self.camera.cx_px,
            self.camera.cy_px,
        )
        limit = 4.0e5  # px; keeps cv2 fixed point (x16) inside int32
        return np.round(np.clip(uv, -limit, limit) * (1 << _SUBPIXEL_BITS)).astype(np.int32)

    def _project_decals(self, world_r_cam: np.ndarray, centre_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fixed-point quads (D, 4, 2) and which are worth drawing (in front, on screen, >= 1.5 px)."""
        if not len(self._decals):
            return np.zeros((0, 4, 2), np.int32), np.zeros(0, bool)
        cam_pts = (self._decals - centre_m) @ world_r_cam
        quads = self._fixed_point(cam_pts)
        lo, hi = quads.min(axis=1) / (1 << _SUBPIXEL_BITS), quads.max(axis=1) / (1 << _SUBPIXEL_BITS)
        ok = (cam_pts[..., 2] >= NEAR_M).all(axis=1) & ((hi - lo).max(axis=1) >= 1.5)
        ok &= (
            (hi[:, 0] >= 0)
            & (lo[:, 0] < self.camera.width_px)
            & (hi[:, 1] >= 0)
            & (lo[:, 1] < self.camera.height_px)
        )
        return quads, ok

    def _outside_view(self, cam_pts: np.ndarray) -> np.ndarray:
        """(B,) True for boxes wholly in front of the camera and wholly off one image side."""
        z = cam_pts[..., 2]
        in_front = (z > NEAR_M).all(axis=1)
        zs = np.where(z > NEAR_M, z, 1.0)
        u = self.camera.fx_px * cam_pts[..., 0] / zs + self.camera.cx_px
        v = self.camera.fy_px * cam_pts[..., 1] / zs + self.camera.cy_px
        w, h = self.camera.width_px, self.camera.height_px
        off = (u < 0).all(1) | (u > w).all(1) | (v < 0).all(1) | (v > h).all(1)
        return in_front & off

    def _fill_clipped(self, image: np.ndarray, poly_cam: np.ndarray, colour: list[float]) -> None:
        poly = _clip_near(poly_cam)
        if len(poly) >= 3:
            cv2.fillConvexPoly(image, self._fixed_point(poly), colour, cv2.LINE_AA, _SUBPIXEL_BITS)


def _clip_near(poly: np.ndarray) -> np.ndarray:
    """Clip a convex polygon (N, 3) in camera coordinates to z >= NEAR_M (Sutherland-Hodgman, one plane)."""
    z = poly[:, 2]
    if (z >= NEAR_M).all():
        return poly
    out = []
    for i in range(len(poly)):
        a, b = poly[i], poly[(i + 1) % len(poly)]
        if a[2] >= NEAR_M:
            out.append(a)
        if (a[2] >= NEAR_M) != (b[2] >= NEAR_M):
            t = (NEAR_M - a[2]) / (b[2] - a[2])
            out.append(a + t * (b - a))
    return np.asarray(out) if out else np.zeros((0, 3))
