"""Capture conditions of real dashcam video, applied on top of a drawn camera rig: dusk, sensor noise,
block compression, motion blur, row-wise exposure flicker, a bonnet, any frame rate, uneven frame times,
a camera nobody wrote down.

A `Conditions` overrides what it names and leaves the rest of the drawn rig (`camera_variation`) as
drawn, so the same seeds give the same scenes under every condition. `CONDITIONS` holds the named
factors of the degradation matrix (perf/degradation_matrix.py): each factor alone, and combined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kinegraph.benchmarks.synthetic.camera_variation import CameraRig
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera

MAX_TRAFFIC = 40  # other vehicles a condition may put on the road


@dataclass(frozen=True)
class Conditions:
    """How a clip is captured beyond its drawn rig; None keeps the rig's own value.

    `fps`: frames a second over the clip's 3 s; `frame_jitter`: each inner frame's time moves by up to
    this share of the frame gap (uneven frame times, written to the clip's row as `frame_times_s`).
    `exposure`: scene brightness (dusk ~0.3); `contrast`, `noise_std` (grey levels), `jpeg_quality`,
    `motion_blur_s` (exposure time), `row_flicker` (+- share of a row-wise, rolling-shutter gain),
    `bonnet_rows`: as on the rig. `resolution`, `hfov_deg`, `height_m`, `pitch_deg`: a fixed camera
    instead of the drawn one. `roll_deg`: the camera turned about its optical axis (a windscreen mount
    rarely sits level); like a CARLA calibration, the row's `camera` object leaves it out.
    `camera_given`: False writes rows without their `camera` object. `traffic`: other vehicles on the
    road beside the ego's lanes (`traffic_users`): half of them drive its way, half come towards it.
    """

    fps: float = 10.0
    frame_jitter: float = 0.0
    exposure: float | None = None
    contrast: float | None = None
    noise_std: float | None = None
    jpeg_quality: int | None = None
    motion_blur_s: float | None = None
    row_flicker: float | None = None
    bonnet_rows: float | None = None
    resolution: tuple[int, int] | None = None
    hfov_deg: float | None = None
    height_m: float | None = None
    pitch_deg: float | None = None
    roll_deg: float | None = None
    camera_given: bool = True
    traffic: int = 0

    def __post_init__(self) -> None:
        if not (1.0 <= self.fps <= 60.0):
            raise ValueError(f"fps must be within 1..60, got {self.fps}")
        if not (0.0 <= self.frame_jitter < 0.5):
            raise ValueError(f"frame_jitter must be within [0, 0.5), got {self.frame_jitter}")
        if not (0 <= self.traffic <= MAX_TRAFFIC):
            raise ValueError(f"traffic must be within 0..{MAX_TRAFFIC} vehicles, got {self.traffic}")

    def applied_to(self, rig: CameraRig) -> CameraRig:
        """The drawn rig with this condition's overrides."""
        image = {
            "exposure": self.exposure,
            "contrast": self.contrast,
            "noise_std": self.noise_std,
            "jpeg_quality": self.jpeg_quality,
            "motion_blur_s": self.motion_blur_s,
            "row_flicker": self.row_flicker,
            "bonnet_rows": self.bonnet_rows,
        }
        rig = replace(rig, **{k: v for k, v in image.items() if v is not None})
        if (
            self.resolution is None
            and self.hfov_deg is None
            and self.height_m is None
            and self.pitch_deg is None
            and self.roll_deg is None
        ):
            return rig
        return replace(rig, camera=self._camera(rig.camera))

    def _camera(self, drawn: PinholeCamera) -> PinholeCamera:
        width, height = self.resolution or (drawn.width_px, drawn.height_px)
        sx, sy = width / drawn.width_px, height / drawn.height_px
        hfov = self.hfov_deg
        fx = width / (2 * math.tan(math.radians(hfov) / 2)) if hfov is not None else drawn.fx_px * sx
        fy = fx * drawn.fy_px / drawn.fx_px
        return replace(
            drawn,
            width_px=width,
            height_px=height,
            fx_px=fx,
            fy_px=fy,
            cx_px=(drawn.cx_px + 0.5) * sx - 0.5,
            cy_px=(drawn.cy_px + 0.5) * sy - 0.5,
            mount_height_m=self.height_m if self.height_m is not None else drawn.mount_height_m,
            pitch_rad=math.radians(self.pitch_deg) if self.pitch_deg is not None else drawn.pitch_rad,
            roll_rad=math.radians(self.roll_deg) if self.roll_deg is not None else drawn.roll_rad,
        )

    def frame_times_s(self, duration_s: float, rng: np.random.Generator) -> np.ndarray:
        """Capture times over [0, duration_s]: every 1/fps, the inner ones moved by the jitter. None lies
        past the window (at 12.5 fps a rounded frame count put the last frame at 3.04 s of a 3 s window,
        where the last window of a drive has no track left and the frame froze: a false hard stop)."""
        n = int(math.floor(duration_s * self.fps + 1e-9)) + 1
        times = np.arange(n) / self.fps
        if self.frame_jitter > 0 and n > 2:
            times[1:-1] += rng.uniform(-self.frame_jitter, self.frame_jitter, n - 2) / self.fps
        return times

    def describe(self) -> dict[str, Any]:
        """The overrides set, JSON-ready."""
        defaults = Conditions()
        return {k: v for k, v in self.__dict__.items() if v != getattr(defaults, k)}


#: What makes dusk hard: a dark, low-contrast image, strong sensor noise, heavy JPEG before the video
#: codec, a 40 ms exposure blurring the road, a bonnet over the bottom 15 %.
DUSK = Conditions(
    exposure=0.3, contrast=0.6, noise_std=6.0, jpeg_quality=10, motion_blur_s=0.04, bonnet_rows=0.15
)

#: The named conditions of the degradation matrix: every factor alone, then combinations.
CONDITIONS: dict[str, Conditions] = {
    "clean": Conditions(exposure=1.0, contrast=1.0, noise_std=0.0, jpeg_quality=95, motion_blur_s=0.0),
    "drawn": Conditions(),  # the drawn rig's own mild degradations (camera_variation.draw_camera)
    "noise": Conditions(noise_std=8.0),
    "jpeg10": Conditions(jpeg_quality=10),
    "motion_blur": Conditions(motion_blur_s=0.04),
    "dark": Conditions(exposure=0.3, contrast=0.6),
    "row_flicker": Conditions(row_flicker=0.15),
    "bonnet": Conditions(bonnet_rows=0.15),
    "roll": Conditions(roll_deg=2.5),
    "traffic": Conditions(traffic=8),
    "fps5": Conditions(fps=5.0),
    "fps15": Conditions(fps=15.0),
    "fps25": Conditions(fps=25.0),
    "fps30": Conditions(fps=30.0),
    "fps12.5": Conditions(fps=12.5),  # nuScenes' front camera runs at about 12 Hz
    "wide_lens": Conditions(hfov_deg=120.0),  # a dashcam's wide lens (as a pinhole)
    "narrow_lens": Conditions(hfov_deg=45.0),
    "uneven_times": Conditions(frame_jitter=0.3),
    "camera_unknown": Conditions(camera_given=False),
    "noise+jpeg10": Conditions(noise_std=8.0, jpeg_quality=10),
    "dusk": DUSK,
    "dusk_highway": replace(DUSK, resolution=(960, 540), height_m=2.0, pitch_deg=5.0),
    "flicker15": Conditions(fps=15.0, row_flicker=0.15),
    "dusk+flicker15": replace(DUSK, fps=15.0, row_flicker=0.15),
    # the same under the ordinary compression of a dashcam, where the bands reach dim frames diluted
    "dusk+flicker15+jpeg95": replace(DUSK, fps=15.0, row_flicker=0.15, jpeg_quality=95),
    "dusk+fps5": replace(DUSK, fps=5.0),
    "dusk+fps15": replace(DUSK, fps=15.0),
    "dusk+fps30": replace(DUSK, fps=30.0),
    "dusk+uneven_times": replace(DUSK, frame_jitter=0.3),
    "dusk+traffic": replace(DUSK, traffic=8),
    "dusk_darker": replace(DUSK, exposure=0.15),  # half the light of dusk: the road's detail near black
    "dusk/camera_unknown": replace(DUSK, camera_given=False),
    "flicker15/camera_unknown": Conditions(fps=15.0, row_flicker=0.15, camera_given=False),
}


CAMERA_UNKNOWN_SUFFIX = "/camera_unknown"


def condition(name: str) -> Conditions:
    """The named condition; any name + "/camera_unknown" is that condition with the camera left out of
    the data (the estimator must measure or assume it). KeyError names the known ones."""
    if name in CONDITIONS:
        return CONDITIONS[name]
    base = name.removesuffix(CAMERA_UNKNOWN_SUFFIX)
    if base != name and base in CONDITIONS:
        return replace(CONDITIONS[base], camera_given=False)
    raise KeyError(
        f"unknown condition {name!r}; known: {', '.join(CONDITIONS)} (each also + '/camera_unknown')"
    )
