"""A seeded road world built around an ego path: ground rasters, lane markings and roadside boxes.

The road follows the ego path with its lane changes taken out; it has one more lane on each side than
the ego visits, so lane changes show as lateral motion across dashed markings. The ground is two
textures multiplied: a world-aligned albedo raster (asphalt, verge, markings) and a periodic fine
asphalt detail tile that gives optical flow and KLT something to track. Roadside structure (buildings
with windows, poles, trees, cabinets) are boxes, so parallax and rotation are observable. Everything
is a pure function of the path and the seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.spatial import cKDTree

LANE_WIDTH_M = 3.5
SHOULDER_M = 0.6
DETAIL_TEXEL_M = 0.02
DETAIL_TILE_PX = 1024
PYRAMID_LEVELS = 5

# Albedo raster codes: 0..50 verge, 50..100 verge->asphalt, 100..255 asphalt->white paint.
ASPHALT, VERGE, PAINT = 100, 30, 235

# Box faces as corner indices (counter-clockwise seen from outside); corners are ordered
# (-,-,0) (+,-,0) (+,+,0) (-,+,0) then the same at the top, in the box's own (length, width, up) frame.
BOX_FACES = np.array(
    [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]], dtype=np.int64
)
FACE_SHADE = np.array([0.45, 1.0, 0.7, 0.85, 0.62, 0.78])  # bottom, top, -y, +x, +y, -x


@dataclass(frozen=True)
class RoadWorld:
    """Rasters and boxes of one world.

    albedo: pyramid of (Hr, Wr) uint8 rasters; texel (i, j) of level l covers ground
        x = origin_m[0] + (j + 0.5) * texel_m * 2**l, y = origin_m[1] + (i + 0.5) * texel_m * 2**l.
    detail: pyramid of periodic (N, N) uint8 tiles, 128 = unit gain, texel DETAIL_TEXEL_M at level 0.
    box_corners_m: (B, 8, 3) world corners; face_rgb: (B, 6, 3) shaded face colours.
    decals_m: (D, 4, 3) window quads; decal_box: (D,) owning box; decal_face: (D,) owning face.
    skyline_rad: (S,) elevation of the distant skyline over azimuth 0..2pi.
    """

    albedo: tuple[np.ndarray, ...]
    origin_m: tuple[float, float]
    texel_m: float
    detail: tuple[np.ndarray, ...]
    box_corners_m: np.ndarray
    face_rgb: np.ndarray
    decals_m: np.ndarray
    decal_box: np.ndarray
    decal_face: np.ndarray
    skyline_rad: np.ndarray


def build_world(
    xy_m: np.ndarray,
    yaw_rad: np.ndarray,
    seed: int,
    *,
    lane_offset_m: np.ndarray | None = None,
    max_raster_px: int = 5000,
) -> RoadWorld:
    """The world around an ego path `xy_m` (T, 2) with headings `yaw_rad` (T,), deterministic in
    (path, seed). `lane_offset_m` (T,) is the ego's lateral offset (left positive) from the road's
    reference line, e.g. `ego_lane_offset_m` of a scripted track with lane changes; zero when None."""
    xy_m = np.asarray(xy_m, dtype=np.float64)
    yaw_rad = np.asarray(yaw_rad, dtype=np.float64)
    if xy_m.ndim != 2 or xy_m.shape[1] != 2 or len(xy_m) < 2 or yaw_rad.shape != (len(xy_m),):
        raise ValueError(
            f"expected an ego path (T>=2, 2) and headings (T,), got {xy_m.shape}, {yaw_rad.shape}"
        )
    offset = np.zeros(len(xy_m)) if lane_offset_m is None else np.asarray(lane_offset_m, dtype=np.float64)
    if offset.shape != (len(xy_m),):
        raise ValueError(f"lane_offset_m must have shape ({len(xy_m)},), got {offset.shape}")
    if not (np.all(np.isfinite(xy_m)) and np.all(np.isfinite(yaw_rad)) and np.all(np.isfinite(offset))):
        raise ValueError("ego path has NaN or infinite values")
    rng = np.random.default_rng(seed)
    left = np.stack([-np.sin(yaw_rad), np.cos(yaw_rad)], axis=1)
    centre_m, normal = road_reference_line(xy_m - offset[:, None] * left, float(yaw_rad[0]))
    lanes = np.round(offset / LANE_WIDTH_M).astype(int)
    lane_range = (int(lanes.min()) - 1, int(lanes.max()) + 1)
    albedo, origin_m, texel_m = _albedo_raster(centre_m, normal, lane_range, max_raster_px)
    boxes, colours, decals, decal_box, decal_face = _roadside(centre_m, normal, lane_range, rng)
    return RoadWorld(
        albedo=tuple(_pyramid(albedo)),
        origin_m=origin_m,
        texel_m=texel_m,
        detail=asphalt_detail(),
        box_corners_m=boxes,
        face_rgb=colours,
        decals_m=decals,
        decal_box=decal_box,
        decal_face=decal_face,
        skyline_rad=_skyline(rng),
    )


def ego_lane_offset_m(
    timestamps_s: np.ndarray,
    yaw_rad: np.ndarray,
    speed_mps: np.ndarray,
    segments: tuple[tuple[str, float, float], ...],
) -> np.ndarray:
    """Lateral offset (T,) of the ego from its starting lane's centre line, accumulated over the
    `lane_change_*` segments of a scripted track (the road keeps the heading held at each lane
    change's start, so the change shows as lateral motion across the markings)."""
    offset = np.zeros(len(timestamps_s))
    for name, start_s, end_s in segments:
        if not name.startswith("lane_change"):
            continue
        inside = (timestamps_s >= start_s) & (timestamps_s <= end_s)
        idx = np.flatnonzero(inside)
        if len(idx) < 2:
            continue
        road_yaw = yaw_rad[idx[0]]
        lateral_mps = speed_mps[idx] * np.sin(yaw_rad[idx] - road_yaw)
        steps = 0.5 * (lateral_mps[1:] + lateral_mps[:-1]) * np.diff(timestamps_s[idx])
        gained = np.concatenate([[0.0], np.cumsum(steps)])
        offset[idx] += gained
        offset[idx[-1] + 1 :] += gained[-1]
    return offset


def road_reference_line(
    xy_m: np.ndarray, yaw0_rad: float, step_m: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """The road's reference line through `xy_m` (T, 2): resampled every `step_m` of arc length,
    lightly smoothed, extended 150 m at both ends. Returns points (K, 2) and unit left normals (K, 2)."""
    seg = np.linalg.norm(np.diff(xy_m, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    if s[-1] < 2 * step_m:  # the ego barely moves: a straight road along its first heading
        pts = xy_m[:1] + np.outer(np.arange(-2, 3) * step_m, [np.cos(yaw0_rad), np.sin(yaw0_rad)])
    else:
        grid = np.arange(0.0, s[-1] + step_m, step_m)
        keep = np.concatenate([[True], seg > 1e-9])
        pts = np.stack([np.interp(grid, s[keep], xy_m[keep, k]) for k in (0, 1)], axis=1)
        if len(pts) > 5:
            pts = gaussian_filter1d(pts, 1.0 / step_m, axis=0, mode="nearest")
    ext = int(150.0 / step_m)
    head = pts[1] - pts[0]
    tail = pts[-1] - pts[-2]
    head /= max(np.linalg.norm(head), 1e-9)
    tail /= max(np.linalg.norm(tail), 1e-9)
    before = pts[0] - np.outer(np.arange(ext, 0, -1) * step_m, head)
    after = pts[-1] + np.outer(np.arange(1, ext + 1) * step_m, tail)
    pts = np.concatenate([before, pts, after])
    tangent = np.gradient(pts, axis=0)
    tangent /= np.maximum(np.linalg.norm(tangent, axis=1, keepdims=True), 1e-9)
    return pts, np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)


def _road_edges_m(lane_range: tuple[int, int]) -> tuple[float, float]:
    """Lateral offsets (right, left) of the paved edges for lanes centred at j * LANE_WIDTH_M."""
    right = lane_range[0] * LANE_WIDTH_M - 0.5 * LANE_WIDTH_M - SHOULDER_M
    left = lane_range[1] * LANE_WIDTH_M + 0.5 * LANE_WIDTH_M + SHOULDER_M
    return right, left


def _albedo_raster(centre_m: np.ndarray, normal: np.ndarray, lane_range: tuple[int, int], max_px: int):
    lo = centre_m.min(axis=0) - 45.0
    hi = centre_m.max(axis=0) + 45.0
    texel_m = max(0.05, float(np.max(hi - lo)) / max_px)
    shape = tuple(int(np.ceil(v)) for v in ((hi - lo) / texel_m)[::-1])
    raster = np.full(shape, VERGE, np.uint8)
    shift = 3  # sub-texel precision for cv2 drawing

    def to_px(pts_m: np.ndarray) -> np.ndarray:
        return np.round((pts_m - lo) / texel_m * (1 << shift) - 0.5 * (1 << shift)).astype(np.int32)

    def stroke(pts_m: np.ndarray, width_m: float, value: int) -> None:
        thickness = max(1, int(round(width_m / texel_m)))
        cv2.polylines(raster, [to_px(pts_m)], False, value, thickness, cv2.LINE_AA, shift)

    right_m, left_m = _road_edges_m(lane_range)
    stroke(centre_m + 0.5 * (right_m + left_m) * normal, left_m - right_m, ASPHALT)
    arc_m = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(centre_m, axis=0), axis=1))])
    on = (arc_m % 8.0) < 3.0  # 3 m dashes, 5 m gaps
    dash_edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
    first, last = lane_range
    for j in range(first, last + 2):
        line = centre_m + (j - 0.5) * LANE_WIDTH_M * normal
        if j in (first, last + 1):
            stroke(line, 0.15, PAINT)  # solid edge lines
            continue
        for start, stop in zip(dash_edges[::2], dash_edges[1::2], strict=True):
            if stop - start >= 2:
                stroke(line[start:stop], 0.12, PAINT)
    return raster, (float(lo[0]), float(lo[1])), texel_m


def _pyramid(image: np.ndarray) -> list[np.ndarray]:
    levels = [image]
    for _ in range(PYRAMID_LEVELS - 1):
        if min(levels[-1].shape[:2]) < 16:
            break
        levels.append(cv2.pyrDown(levels[-1]))
    return levels


def _periodic_noise(rng: np.random.Generator, n: int, sigma_px: float) -> np.ndarray:
    """Gaussian-filtered white noise on a torus (seamless when tiled), unit standard deviation."""
    freq = np.fft.fftfreq(n)
    gain = np.exp(-2.0 * (np.pi * sigma_px) ** 2 * (freq[:, None] ** 2 + freq[None, :] ** 2))
    field = np.real(np.fft.ifft2(np.fft.fft2(rng.standard_normal((n, n))) * gain))
    return (field - field.mean()) / max(field.std(), 1e-12)


@lru_cache(maxsize=1)
def asphalt_detail(grain_gain: float = 1.0, seed: int = 20180724) -> tuple[np.ndarray, ...]:
    """Pyramid of the asphalt gain tile (128 = gain 1): fine grain, aggregate speckles, darker patches.
    The default tile serves every world (it is periodic and only carries trackable detail); camera rigs
    that vary texture statistics draw their own `grain_gain` (fine-grain contrast) and `seed`."""
    rng = np.random.default_rng(seed)
    n = DETAIL_TILE_PX
    grain = grain_gain * (0.10 * _periodic_noise(rng, n, 1.0) + 0.07 * _periodic_noise(rng, n, 3.0))
    speckle = rng.random((n, n))
    grain += np.where(speckle > 0.995, 0.35, 0.0) - np.where(speckle < 0.004, 0.3, 0.0)
    patches = _periodic_noise(rng, n, 40.0)
    gain = 1.0 + grain - 0.18 * (patches > 1.0) + 0.05 * _periodic_noise(rng, n, 120.0)
    tile = np.clip(128.0 * gain, 0, 255).astype(np.uint8)
    levels = tuple(_pyramid(tile))
    for level in levels:
        level.flags.writeable = False
    return levels


def _skyline(rng: np.random.Generator, n: int = 2048) -> np.ndarray:
    """Elevation (rad) of distant hills and tree lines over azimuth; periodic."""
    freq = np.fft.rfftfreq(n, 1.0 / n)
    spectrum = rng.standard_normal(len(freq)) + 1j * rng.standard_normal(len(freq))
    spectrum *= 1.0 / np.maximum(freq, 1.0) ** 1.2
    spectrum[0] = 0.0
    hills = np.fft.irfft(spectrum, n)
    hills = (hills - hills.min()) / max(np.ptp(hills), 1e-12)
    return 0.01 + 0.05 * hills + 0.006 * rng.random(n)


def _roadside(
    centre_m: np.ndarray, normal: np.ndarray, lane_range: tuple[int, int], rng: np.random.Generator
) -> tuple:
    """Boxes beyond both road edges, rejected where they would overlap the road anywhere."""
    right_m, left_m = _road_edges_m(lane_range)
    middle = centre_m + 0.5 * (right_m + left_m) * normal
    half_width_m = 0.5 * (left_m - right_m)
    tree = cKDTree(middle)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(centre_m, axis=0), axis=1))])
    specs: list[tuple] = []  # (x, y, yaw, length, width, height, z0, rgb, kind)
    for side, edge_m in ((-1.0, right_m), (1.0, left_m)):
        for kind, spacing, beyond, size in (
            ("pole", 24.0, (1.2, 1.8), ((0.3, 0.3), (0.3, 0.3), (6.0, 8.0))),
            ("tree", 11.0, (3.0, 10.0), ((0.4, 0.5), (0.4, 0.5), (2.0, 3.0))),
            ("cabinet", 37.0, (1.6, 3.0), ((1.0, 4.5), (0.8, 2.0), (1.2, 1.8))),
            ("building", 17.0, (9.0, 24.0), ((8.0, 16.0), (8.0, 14.0), (5.0, 16.0))),
        ):
            s = float(rng.uniform(0, spacing))
            while s < arc[-1]:
                i = min(int(np.searchsorted(arc, s)), len(arc) - 1)
                pos = centre_m[i] + (edge_m + side * rng.uniform(*beyond)) * normal[i]
                yaw = float(np.arctan2(-normal[i, 0], normal[i, 1]))  # along the road
                dims = [rng.uniform(*r) for r in size]
                s += spacing * rng.uniform(0.6, 1.4)
                clearance = half_width_m + 0.5 + 0.5 * float(np.hypot(dims[0], dims[1]))
                if tree.query(pos)[0] < clearance:
                    continue
                rgb = _colour(kind, rng)
                specs.append((pos[0], pos[1], yaw, *dims, 0.0, rgb, kind))
                if kind == "tree":
                    crown = rng.uniform(2.5, 4.5)
                    specs.append(
                        (pos[0], pos[1], yaw + 0.7, crown, crown, crown, dims[2], _colour("crown", rng), kind)
                    )
    if not specs:
        empty = np.zeros((0, 4, 3))
        return np.zeros((0, 8, 3)), np.zeros((0, 6, 3)), empty, np.zeros(0, np.int64), np.zeros(0, np.int64)
    corners = np.stack([_box_corners(*spec[:7]) for spec in specs])
    colours = np.stack([np.outer(FACE_SHADE, spec[7]) for spec in specs])
    decals, owners, faces = _windows([s[8] for s in specs], corners, rng)
    return corners, colours, decals, owners, faces


FACADES = ((190, 170, 140), (160, 85, 65), (200, 200, 195), (140, 140, 150), (210, 190, 120))


def _colour(kind: str, rng: np.random.Generator) -> np.ndarray:
    base = {
        "pole": (150, 150, 155),
        "tree": (90, 65, 45),
        "crown": (55, 110, 50),
        "cabinet": (120, 125, 135),
        "building": FACADES[int(rng.integers(len(FACADES)))],
    }[kind]
    return np.clip(np.asarray(base) * rng.uniform(0.88, 1.12) * rng.uniform(0.95, 1.05, 3), 0, 255)


def _box_corners(x: float, y: float, yaw: float, length: float, width: float, height: float, z0: float):
    """(8, 3) world corners of a box standing at (x, y, z0), yawed about z."""
    lx, wy = 0.5 * length, 0.5 * width
    local = np.array([[-lx, -wy], [lx, -wy], [lx, wy], [-lx, wy]])
    c, s = np.cos(yaw), np.sin(yaw)
    xy = local @ np.array([[c, s], [-s, c]]) + (x, y)
    bottom = np.column_stack([xy, np.full(4, z0)])
    return np.concatenate([bottom, bottom + (0.0, 0.0, height)])


def _windows(kinds: list[str], corners: np.ndarray, rng: np.random.Generator) -> tuple:
    """Window quads on the four walls of each building, floating 2 cm off the wall."""
    quads, owners, faces = [], [], []
    for b, kind in enumerate(kinds):
        if kind != "building":
            continue
        for f in (2, 3, 4, 5):
            a, bb, _, d = corners[b][BOX_FACES[f]]  # a->bb along the bottom edge, a->d upwards
            along, up = bb - a, d - a
            out = np.cross(along, up)
            out /= np.linalg.norm(out)
            n_cols = int(np.linalg.norm(along) // 3.0)
            n_rows = int(np.linalg.norm(up) // 3.2)
            lit = rng.random((n_rows, n_cols)) < 0.85
            for r in range(n_rows):
                for k in range(n_cols):
                    if not lit[r, k]:
                        continue
                    u0, u1 = (k + 0.3) / n_cols, (k + 0.7) / n_cols
                    v0, v1 = (r + 0.35) / n_rows, (r + 0.75) / n_rows
                    quad = [
                        a + u * along + v * up + 0.02 * out
                        for u, v in ((u0, v0), (u1, v0), (u1, v1), (u0, v1))
                    ]
                    quads.append(quad)
                    owners.append(b)
                    faces.append(f)
    if not quads:
        return np.zeros((0, 4, 3)), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.asarray(quads), np.asarray(owners, np.int64), np.asarray(faces, np.int64)
