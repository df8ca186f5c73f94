"""What another renderer or a real camera would vary: optics, mounting, body pitch, image quality, and
what sits in front of the road: a bonnet, a car ahead keeping its distance, a burned-in clock.

`draw_camera` samples one camera rig and image pipeline per scenario; `degrade` applies its overlays,
blur, contrast loss, sensor noise and JPEG compression to a rendered frame. Used to test the motion
tools on settings and seeds they were not tuned on (perf/ego_trajectory_accuracy.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from kinegraph.benchmarks.synthetic.road_render import MAX_BODY_PITCH_RAD, PinholeCamera

RESOLUTIONS_PX: tuple[tuple[int, int], ...] = ((640, 360), (800, 450), (960, 540), (1280, 720))


@dataclass(frozen=True)
class CameraRig:
    """One drawn camera and image pipeline.

    `body_pitch_rad_per_mps2`: nose-down pitch per m/s^2 of deceleration (suspension), `blur_px`:
    Gaussian sigma, `contrast`: gain towards mid-grey (1 = none), `noise_std`: grey levels,
    `jpeg_quality`: 0-100 before the video codec. `bonnet_rows`: share of the image height a static
    bonnet covers (0 = none); `lead_car`: a car ahead at constant distance (static in the image);
    `clock`: a burned-in timestamp. `asphalt_grain`/`asphalt_seed`: the road texture's fine-grain
    contrast (1 = the default tile; below 1 smoother, newer asphalt) and its pattern.
    `exposure_jitter`: each frame's gain varies by up to this share (auto-exposure, flicker).
    `exposure`: the scene's brightness (1 = day, ~0.3 = dusk); `row_flicker`: a rolling shutter under
    flickering lights, each row's gain varying by up to this share in bands that move between frames;
    `motion_blur_s`: the exposure time (the renderer averages the scene over it).
    """

    camera: PinholeCamera
    body_pitch_rad_per_mps2: float
    blur_px: float
    contrast: float
    noise_std: float
    jpeg_quality: int
    bonnet_rows: float = 0.0
    lead_car: bool = False
    clock: bool = False
    asphalt_grain: float = 1.0
    asphalt_seed: int = 20180724
    exposure_jitter: float = 0.0
    exposure: float = 1.0
    row_flicker: float = 0.0
    motion_blur_s: float = 0.0

    def describe(self) -> dict[str, float]:
        """JSON-ready figures for a report."""
        cam = self.camera
        return {
            "width_px": cam.width_px,
            "height_px": cam.height_px,
            "hfov_deg": round(math.degrees(2 * math.atan(cam.width_px / (2 * cam.fx_px))), 1),
            "height_m": round(cam.mount_height_m, 2),
            "pitch_deg": round(math.degrees(cam.pitch_rad), 2),
            "body_pitch_deg_per_mps2": round(math.degrees(self.body_pitch_rad_per_mps2), 3),
            "blur_px": round(self.blur_px, 2),
            "contrast": round(self.contrast, 2),
            "noise_std": round(self.noise_std, 2),
            "jpeg_quality": self.jpeg_quality,
            "bonnet_rows": round(self.bonnet_rows, 3),
            "lead_car": self.lead_car,
            "clock": self.clock,
            "asphalt_grain": round(self.asphalt_grain, 2),
            "exposure_jitter": round(self.exposure_jitter, 3),
            "exposure": round(self.exposure, 3),
            "row_flicker": round(self.row_flicker, 3),
            "motion_blur_ms": round(1e3 * self.motion_blur_s, 1),
        }


def draw_camera(rng: np.random.Generator) -> CameraRig:
    """A camera rig from wide ranges: 55-105 deg HFOV, 1.2-2.4 m high, pitch -2..+6 deg, four resolutions,
    off-centre principal point, suspension pitch, blur, contrast loss, noise, JPEG quality 40-95, a bonnet,
    a lead car or a clock (30 % each), the road texture's grain contrast (0.35-1.4), and in half the rigs
    a per-frame exposure gain jitter of up to 15 %."""
    width, height = RESOLUTIONS_PX[int(rng.integers(len(RESOLUTIONS_PX)))]
    hfov = math.radians(rng.uniform(55.0, 105.0))
    f_px = width / (2 * math.tan(hfov / 2))
    camera = PinholeCamera(
        width_px=width,
        height_px=height,
        fx_px=f_px,
        fy_px=f_px * rng.uniform(0.995, 1.005),
        cx_px=(width - 1) / 2 + rng.uniform(-0.03, 0.03) * width,
        cy_px=(height - 1) / 2 + rng.uniform(-0.03, 0.03) * height,
        mount_forward_m=rng.uniform(0.5, 2.0),
        mount_height_m=rng.uniform(1.2, 2.4),
        pitch_rad=math.radians(rng.uniform(-2.0, 6.0)),
    )
    return CameraRig(
        camera=camera,
        body_pitch_rad_per_mps2=math.radians(rng.uniform(0.0, 0.35)),
        blur_px=rng.uniform(0.0, 1.2),
        contrast=rng.uniform(0.6, 1.0),
        noise_std=rng.uniform(0.0, 3.0),
        jpeg_quality=int(rng.integers(40, 96)),
        bonnet_rows=float(rng.uniform(0.05, 0.15)) if rng.random() < 0.3 else 0.0,
        lead_car=bool(rng.random() < 0.3),
        clock=bool(rng.random() < 0.3),
        asphalt_grain=float(rng.uniform(0.35, 1.4)),
        asphalt_seed=int(rng.integers(2**31)),
        exposure_jitter=float(rng.uniform(0.0, 0.15)) if rng.random() < 0.5 else 0.0,
    )


def body_pitch_rad(rig: CameraRig, accel_mps2: np.ndarray) -> np.ndarray:
    """Suspension pitch (T,) for longitudinal accelerations (T,): nose down when braking, capped."""
    return np.clip(
        -rig.body_pitch_rad_per_mps2 * np.asarray(accel_mps2), -MAX_BODY_PITCH_RAD, MAX_BODY_PITCH_RAD
    )


def overlay(frame: np.ndarray, rig: CameraRig, time_s: float) -> np.ndarray:
    """The rig's static foreground drawn on a copy of the frame: bonnet, lead car, clock."""
    out = frame.copy()
    height, width = out.shape[:2]
    if rig.lead_car:
        cx, top = width // 2, int(rig.camera.cy_px + 0.06 * height)
        w, h = int(0.16 * width), int(0.12 * height)
        cv2.rectangle(out, (cx - w // 2, top), (cx + w // 2, top + h), (150, 30, 35), -1)
        cv2.rectangle(out, (cx - w // 3, top + h // 6), (cx + w // 3, top + h // 2), (40, 50, 60), -1)
        for side in (-1, 1):
            lamp = (cx + side * (w // 2 - w // 8), top + int(0.7 * h))
            cv2.circle(out, lamp, max(2, w // 16), (230, 40, 30), -1)
    if rig.bonnet_rows > 0:
        rows = int(rig.bonnet_rows * height)
        xs = np.arange(width)
        edge = height - rows + (((xs - width / 2) / (width / 2)) ** 2 * rows * 0.5).astype(int)
        poly = np.concatenate([np.column_stack([xs, edge]), [[width - 1, height - 1], [0, height - 1]]])
        cv2.fillPoly(out, [poly.astype(np.int32)], (38, 40, 46))
    if rig.clock:
        text = f"2026-11-24 10:{int(time_s) // 60:02d}:{time_s % 60:06.3f}"
        cv2.putText(out, text, (8, height - 10), cv2.FONT_HERSHEY_SIMPLEX, height / 900, (255, 255, 0), 1)
    return out


def row_gain(height_px: int, amplitude: float, rng: np.random.Generator) -> np.ndarray:
    """Per-row gain (H,) of a rolling shutter under lights flickering at mains frequency: 2-4 bright
    and dark bands over the frame, at a phase of their own in every frame (the frame rate is not locked
    to the mains)."""
    cycles = float(rng.uniform(2.0, 4.0))
    phase = float(rng.uniform(0.0, 2 * math.pi))
    rows = np.arange(height_px, dtype=np.float32) / height_px
    return (1.0 + amplitude * np.sin(2 * math.pi * cycles * rows + phase)).astype(np.float32)


def degrade(frame: np.ndarray, rig: CameraRig, rng: np.random.Generator, time_s: float = 0.0) -> np.ndarray:
    """The frame (H, W, 3) RGB uint8 after the rig's overlays, exposure (dusk, jitter, row flicker),
    blur, contrast loss, noise and JPEG."""
    out = overlay(frame, rig, time_s).astype(np.float32)
    if rig.exposure != 1.0:
        out *= rig.exposure
    if rig.exposure_jitter > 0:
        out *= 1.0 + rig.exposure_jitter * float(rng.uniform(-1.0, 1.0))
    if rig.row_flicker > 0:
        out *= row_gain(out.shape[0], rig.row_flicker, rng)[:, None, None]
    if rig.blur_px > 0.05:
        out = cv2.GaussianBlur(out, (0, 0), rig.blur_px)
    pivot = 128.0 * rig.exposure  # contrast falls towards the scene's own mid-grey
    out = pivot + rig.contrast * (out - pivot)
    if rig.noise_std > 0:
        out += rng.normal(0.0, rig.noise_std, out.shape).astype(np.float32)
    clipped = np.clip(out, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", clipped, [cv2.IMWRITE_JPEG_QUALITY, rig.jpeg_quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
