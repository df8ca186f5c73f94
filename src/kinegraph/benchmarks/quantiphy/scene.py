"""Scenes of the synthetic QuantiPhy world: rigid bodies on straight lines under known physics.

Camera frame: x right, y down, z forward (metres). A 2D scene is orthographic (every body in one depth
layer, `gamma` metres per pixel); a 3D scene is a pinhole camera (`focal_px`) with bodies at different
depths. Every body moves along a straight line with constant velocity, constant acceleration (speeding
up or slowing down, never reversing) or free fall, so speed, acceleration and distances are analytic.
World values are rounded to two significant digits so the text of priors is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

WIDTH_PX, HEIGHT_PX = 640, 480
PRINCIPAL_POINT_PX = ((WIDTH_PX - 1) / 2, (HEIGHT_PX - 1) / 2)
_MARGIN_PX = 4.0
_COLOURS = {
    "red": (220, 40, 40),
    "blue": (40, 80, 230),
    "green": (40, 190, 70),
    "yellow": (240, 215, 40),
    "orange": (250, 130, 20),
    "purple": (150, 50, 200),
    "white": (245, 245, 245),
    "cyan": (30, 210, 220),
}
_NOUNS = {"disc": ("ball", "puck", "disc"), "box": ("box", "cart", "block")}
GRAVITY_MPS2 = (9.8, 9.8, 1.62, 3.71)  # Earth, Moon, Mars: the prior states which


def nice(x: float, digits: int = 2) -> float:
    """`x` rounded to `digits` significant digits (0 stays 0)."""
    if x == 0:
        return 0.0
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


@dataclass(frozen=True)
class Body:
    """A flat fronto-parallel disc or box moving on a straight line: p(t) = p0 + u (v0 t + a t^2 / 2)."""

    name: str
    shape: str
    colour: tuple[int, int, int]
    size_m: tuple[float, float]  # width, height
    start_m: tuple[float, float, float]
    direction: tuple[float, float, float]
    v0_mps: float
    a_mps2: float
    motion: str  # constant_velocity | constant_acceleration | free_fall

    def travelled_m(self, t_s: float | np.ndarray) -> float | np.ndarray:
        return self.v0_mps * t_s + 0.5 * self.a_mps2 * np.square(t_s)

    def position_m(self, t_s: float | np.ndarray) -> np.ndarray:
        """(3,) or (T, 3) camera-frame position."""
        s = np.asarray(self.travelled_m(t_s), dtype=float)
        return np.asarray(self.start_m) + s[..., None] * np.asarray(self.direction)

    def speed_mps(self, t_s: float) -> float:
        return self.v0_mps + self.a_mps2 * t_s


@dataclass(frozen=True)
class Camera:
    """Orthographic (`gamma_m_per_px`, 2D scenes) or pinhole (`focal_px`, 3D scenes) camera."""

    gamma_m_per_px: float | None = None
    focal_px: float | None = None

    @property
    def dim(self) -> int:
        return 2 if self.focal_px is None else 3

    def project(self, points_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel centres (T, 2) and pixels per metre (T,) of camera-frame points (T, 3)."""
        cx, cy = PRINCIPAL_POINT_PX
        if self.focal_px is None:
            px_per_m = np.full(len(points_m), 1.0 / self.gamma_m_per_px)
        else:
            px_per_m = self.focal_px / points_m[:, 2]
        uv = points_m[:, :2] * px_per_m[:, None] + np.array([cx, cy])
        return uv, px_per_m


@dataclass(frozen=True)
class Scene:
    """One video: camera, bodies (the first is the prior's object), frame rate, frame count, background."""

    camera: Camera
    bodies: tuple[Body, ...]
    fps: int
    n_frames: int
    background: str

    @property
    def times_s(self) -> np.ndarray:
        return np.arange(self.n_frames) / self.fps

    def pixels(self, body: Body) -> tuple[np.ndarray, np.ndarray]:
        """Exact projected centre (T, 2) and extent (T, 2) of a body in every frame."""
        uv, px_per_m = self.camera.project(body.position_m(self.times_s))
        return uv, np.asarray(body.size_m)[None, :] * px_per_m[:, None]


def _fits(scene_bodies: list[tuple[np.ndarray, np.ndarray]], uv: np.ndarray, ext: np.ndarray) -> bool:
    lo, hi = uv - ext / 2, uv + ext / 2
    if (
        lo.min() < _MARGIN_PX
        or hi[:, 0].max() > WIDTH_PX - _MARGIN_PX
        or hi[:, 1].max() > HEIGHT_PX - _MARGIN_PX
    ):
        return False
    if ext.min() < 18 or ext.max() > 110:
        return False
    path = np.linalg.norm(np.diff(uv, axis=0), axis=1).sum()
    if path < 1.6 * ext.max():  # the median background needs the body to uncover what it hides
        return False
    for other_uv, other_ext in scene_bodies:
        gap = np.abs(uv - other_uv) - (ext + other_ext) / 2
        if np.any(np.max(gap, axis=1) < 6):
            return False
    return True


def _sample_body(
    rng: np.random.Generator,
    camera: Camera,
    motion: str,
    name: str,
    shape: str,
    z_m: float,
    duration_s: float,
    gravity_mps2: float,
) -> Body:
    """A body whose pixel motion is in a trackable range, with world values rounded to nice numbers."""
    m_per_px = camera.gamma_m_per_px if camera.focal_px is None else z_m / camera.focal_px
    size_px = rng.uniform(26, 60)
    aspect = 1.0 if shape == "disc" else rng.choice([0.5, 0.6, 1.5, 1.8])
    size_m = (nice(size_px * m_per_px), nice(float(size_px * aspect * m_per_px)))
    if motion == "free_fall":
        direction = np.array([0.0, 1.0, 0.0])
        a = gravity_mps2
        v0 = nice(rng.uniform(0, 60) * m_per_px) if rng.random() < 0.5 else 0.0
    else:
        angle = math.radians(rng.uniform(-25, 25))
        direction = np.array([math.cos(angle) * rng.choice([-1, 1]), math.sin(angle), 0.0])
        if camera.focal_px is not None and motion == "constant_velocity":
            direction[2] = rng.uniform(-0.6, 0.6)
            direction /= np.linalg.norm(direction)
        if motion == "constant_velocity":
            v0, a = nice(rng.uniform(70, 220) * m_per_px), 0.0
        elif rng.random() < 0.7:  # speeding up
            v0, a = nice(rng.uniform(0, 110) * m_per_px), nice(rng.uniform(60, 220) * m_per_px)
        else:  # slowing down without stopping
            a_px = rng.uniform(50, 140)
            v0, a = nice((a_px * duration_s + rng.uniform(50, 120)) * m_per_px), -nice(a_px * m_per_px)
    start = np.array([rng.uniform(-0.4, 0.4) * WIDTH_PX, rng.uniform(-0.4, 0.4) * HEIGHT_PX, 0.0]) * m_per_px
    start[2] = z_m
    return Body(
        name,
        shape,
        _COLOURS[name.split()[0]],
        size_m,
        tuple(start),
        tuple(direction),
        float(v0),
        float(a),
        motion,
    )


def sample_scene(
    rng: np.random.Generator, dim: int, motion: str, n_bodies: int, background: str, scale: str
) -> Scene:
    """Rejection-sample a scene whose bodies stay in frame, apart, and trackable for the whole clip.

    `scale` is "tabletop" (centimetre objects, ~1-2 m away) or "street" (metre objects, 5-25 m away).
    """
    for _ in range(500):
        fps = int(rng.choice([24, 25, 30]))
        duration_s = float(rng.choice([1.2, 1.6]) if motion == "free_fall" else rng.choice([1.6, 2.0, 2.4]))
        n_frames = round(duration_s * fps) + 1
        gravity = float(rng.choice(GRAVITY_MPS2))
        fall_px = (150, 2 * 380 / duration_s**2)  # pixel accelerations a tracker follows and the frame holds
        if dim == 2:
            m_per_px = rng.uniform(0.0008, 0.003) if scale == "tabletop" else rng.uniform(0.01, 0.05)
            if motion == "free_fall":  # gravity fixes the scale: pixel acceleration in a trackable range
                m_per_px = gravity / rng.uniform(*fall_px)
            camera = Camera(gamma_m_per_px=m_per_px)
        else:
            camera = Camera(focal_px=float(rng.uniform(480, 720)))
        colours = rng.permutation(list(_COLOURS))[:n_bodies]
        layer_m = float(rng.uniform(0.6, 2.0) if scale == "tabletop" else rng.uniform(5, 25))
        placed: list[tuple[np.ndarray, np.ndarray]] = []
        bodies: list[Body] = []
        for k in range(n_bodies):
            shape = str(rng.choice(["disc", "box"]))
            name = f"{colours[k]} {rng.choice(_NOUNS[shape])}"
            for _ in range(200):
                if dim == 3 and motion == "free_fall":
                    z = gravity * camera.focal_px / rng.uniform(*fall_px)
                elif dim == 3:
                    z = float(rng.uniform(0.6, 2.0) if scale == "tabletop" else rng.uniform(5, 25))
                else:
                    z = layer_m  # a 2D scene is one depth layer
                body = _sample_body(rng, camera, motion, name, shape, z, duration_s, gravity)
                if dim == 3 and any(abs(body.start_m[2] - b.start_m[2]) < 0.1 * z for b in bodies):
                    continue  # distinct depth layers
                uv, px_per_m = camera.project(body.position_m(np.arange(n_frames) / fps))
                ext = np.asarray(body.size_m)[None, :] * px_per_m[:, None]
                if _fits(placed, uv, ext) and body.position_m(duration_s)[2] > 0.3:
                    placed.append((uv, ext))
                    bodies.append(body)
                    break
            else:
                break
        if len(bodies) == n_bodies:
            return Scene(camera, tuple(bodies), fps, n_frames, background)
    raise RuntimeError("could not place the bodies of a synthetic scene; this is a bug in the sampler ranges")
