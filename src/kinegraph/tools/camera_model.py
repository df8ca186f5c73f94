"""The forward camera of a road vehicle: pinhole intrinsics plus where it sits over the road.

Metric ego motion from one camera needs K (px) and the mounting height over the ground (m); the pitch
of the optical axis below the horizon is optional (estimated from the ground when absent). Sources, in
order: the data (nuScenes `calibrated_sensor`, a `camera` object on a clips_index.jsonl row), graph
options (`focal_px`, `camera_height_m`, `pitch_deg`), else `carla_default` for CARLA-style video.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

#: CARLA's RGB camera defaults to a 90 deg horizontal field of view, so fx = fy = W / 2.
CARLA_DEFAULT_HFOV_DEG = 90.0
#: A roof/windscreen camera on a passenger car: CARLA's usual sensor mount (z = 1.6 m above the road
#: under a ~1.5 m car roof) and nuScenes CAM_FRONT (1.51 m) are both within 10 % of this.
DEFAULT_HEIGHT_M = 1.6
MIN_HEIGHT_M, MAX_HEIGHT_M = 0.3, 5.0
MAX_PITCH_DEG = 30.0

CameraSource = Literal["data", "options", "default"]
_ROW_KEYS = ("fx", "fy", "cx", "cy", "height_m")


@dataclass(frozen=True)
class CameraModel:
    """A pinhole camera at `height_m` over a flat road, looking forward.

    Pixel centres are at integer coordinates. `pitch_rad` is the optical axis' angle below the road's
    horizon (+ = looking down), None when it must be estimated; `roll_rad` turns the image clockwise,
    None when it must be estimated (a calibration that leaves it out). `source` says where the numbers
    came from, so reports can show it.
    """

    fx_px: float
    fy_px: float
    cx_px: float
    cy_px: float
    height_m: float
    pitch_rad: float | None = None
    roll_rad: float | None = 0.0
    source: CameraSource = "default"
    assumed: frozenset[str] = frozenset()  # of "focal", "height", "roll": nobody gave them, nor the video
    pitch_estimated: bool = False  # the pitch was measured from the road, not given
    roll_estimated: bool = False  # the roll was measured from the road, not given
    focal_sigma_px: float | None = None  # set when the focal length was estimated from the video
    height_sigma_m: float | None = None  # set when the mounting height was estimated from the video
    from_scene: frozenset[str] = frozenset()  # of "focal", "height": estimated on the scene's other clips

    def __post_init__(self) -> None:
        values = {"fx": self.fx_px, "fy": self.fy_px, "cx": self.cx_px, "cy": self.cy_px}
        for name, value in values.items():
            if not math.isfinite(value):
                raise ValueError(f"camera {name} must be finite, got {value}")
        if self.fx_px <= 0 or self.fy_px <= 0:
            raise ValueError(f"camera focal lengths must be positive, got fx={self.fx_px}, fy={self.fy_px}")
        if not (math.isfinite(self.height_m) and MIN_HEIGHT_M <= self.height_m <= MAX_HEIGHT_M):
            raise ValueError(
                f"camera height_m must be in [{MIN_HEIGHT_M}, {MAX_HEIGHT_M}] m, got {self.height_m}"
            )
        if self.pitch_rad is not None and not (
            math.isfinite(self.pitch_rad) and abs(self.pitch_rad) <= math.radians(MAX_PITCH_DEG)
        ):
            raise ValueError(f"camera pitch must be within +-{MAX_PITCH_DEG} deg, got {self.pitch_rad} rad")
        if self.roll_rad is not None and not (
            math.isfinite(self.roll_rad) and abs(self.roll_rad) <= math.radians(MAX_PITCH_DEG)
        ):
            raise ValueError(f"camera roll must be within +-{MAX_PITCH_DEG} deg, got {self.roll_rad} rad")

    def intrinsic_matrix(self) -> np.ndarray:
        """K (3, 3)."""
        return np.array([[self.fx_px, 0.0, self.cx_px], [0.0, self.fy_px, self.cy_px], [0.0, 0.0, 1.0]])

    def scaled(self, factor: float) -> CameraModel:
        """The same camera for images resized by `factor` (pixel centres stay at integers)."""
        return replace(
            self,
            focal_sigma_px=None if self.focal_sigma_px is None else self.focal_sigma_px * factor,
            fx_px=self.fx_px * factor,
            fy_px=self.fy_px * factor,
            cx_px=(self.cx_px + 0.5) * factor - 0.5,
            cy_px=(self.cy_px + 0.5) * factor - 0.5,
        )

    def describe(self) -> dict[str, Any]:
        """JSON-ready figures for traces and reports."""
        pitch = None if self.pitch_rad is None else round(math.degrees(self.pitch_rad), 3)
        roll = None if self.roll_rad is None else round(math.degrees(self.roll_rad), 3)
        return {
            "fx_px": round(self.fx_px, 2),
            "fy_px": round(self.fy_px, 2),
            "cx_px": round(self.cx_px, 2),
            "cy_px": round(self.cy_px, 2),
            "height_m": round(self.height_m, 3),
            "pitch_deg": pitch,
            "roll_deg": roll,
            "source": self.source,
            **({} if self.focal_sigma_px is None else {"focal_sigma_px": round(self.focal_sigma_px, 2)}),
            **({} if self.height_sigma_m is None else {"height_sigma_m": round(self.height_sigma_m, 3)}),
            **({"from_scene": sorted(self.from_scene)} if self.from_scene else {}),
            "values": {
                "focal": "assumed"
                if "focal" in self.assumed
                else "estimated"
                if self.focal_sigma_px is not None
                else "given",
                "height": "assumed"
                if "height" in self.assumed
                else "estimated"
                if self.height_sigma_m is not None
                else "given",
                "pitch": "estimated" if self.pitch_estimated or self.pitch_rad is None else "given",
                "roll": "assumed"
                if "roll" in self.assumed
                else "estimated"
                if self.roll_estimated or self.roll_rad is None
                else "given",
            },
        }


def carla_default(width_px: int, height_px: int) -> CameraModel:
    """The documented default for CARLA-style video: 90 deg HFOV, centred, 1.6 m high, pitch and roll
    estimated."""
    if width_px < 16 or height_px < 16:
        raise ValueError(f"image size {width_px}x{height_px} is too small for a camera model")
    f_px = width_px / (2.0 * math.tan(math.radians(CARLA_DEFAULT_HFOV_DEG) / 2.0))
    centre = ((width_px - 1) / 2.0, (height_px - 1) / 2.0)
    return CameraModel(
        f_px, f_px, *centre, DEFAULT_HEIGHT_M, roll_rad=None, assumed=frozenset({"focal", "height"})
    )


def camera_from_row(row: Mapping[str, Any], where: str = "camera") -> CameraModel:
    """A clips_index.jsonl `camera` object {fx, fy, cx, cy, height_m[, pitch_deg, roll_deg]}.

    Raises ValueError naming `where` and the field when one is missing or not a finite number.
    """
    values: dict[str, float] = {}
    for key in (*_ROW_KEYS, "pitch_deg", "roll_deg"):
        if key not in row or row[key] is None:
            if key in _ROW_KEYS:
                raise ValueError(f"{where}: field {key!r} is missing (need {', '.join(_ROW_KEYS)})")
            continue
        try:
            values[key] = float(row[key])
        except (TypeError, ValueError):
            raise ValueError(f"{where}: field {key!r} must be a number, got {row[key]!r}") from None
        if not math.isfinite(values[key]):
            raise ValueError(f"{where}: field {key!r} must be finite, got {row[key]!r}")
    try:
        return CameraModel(
            values["fx"],
            values["fy"],
            values["cx"],
            values["cy"],
            values["height_m"],
            math.radians(values["pitch_deg"]) if "pitch_deg" in values else None,
            math.radians(values["roll_deg"]) if "roll_deg" in values else None,
            source="data",
        )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def camera_from_nuscenes(
    intrinsic: np.ndarray, translation_m: np.ndarray, rotation_wxyz: np.ndarray
) -> CameraModel:
    """nuScenes `calibrated_sensor` (K, translation in the ego frame, rotation [w, x, y, z] ego<-camera).

    Height is the translation's z (the ego frame's origin lies on the ground under the rear axle);
    pitch and roll come from where the camera's optical axis and x axis point in the ego frame.
    """
    from scipy.spatial.transform import Rotation

    k = np.asarray(intrinsic, dtype=np.float64)
    if k.shape != (3, 3):
        raise ValueError(f"camera_intrinsic must be 3x3, got shape {k.shape}")
    quat = np.asarray(rotation_wxyz, dtype=np.float64)
    if quat.shape != (4,) or not np.all(np.isfinite(quat)) or np.linalg.norm(quat) < 1e-9:
        raise ValueError(f"calibrated_sensor rotation must be a finite [w, x, y, z], got {quat.tolist()}")
    ego_r_cam = Rotation.from_quat(quat[[1, 2, 3, 0]]).as_matrix()
    axis = ego_r_cam[:, 2]  # optical axis in the ego frame (x forward, y left, z up)
    pitch = math.atan2(-axis[2], math.hypot(axis[0], axis[1]))
    right = ego_r_cam[:, 0]
    roll = math.asin(float(np.clip(-right[2], -1.0, 1.0)))
    return CameraModel(
        float(k[0, 0]),
        float(k[1, 1]),
        float(k[0, 2]),
        float(k[1, 2]),
        float(translation_m[2]),
        pitch,
        roll,
        source="data",
    )


def camera_from_options(
    width_px: int,
    height_px: int,
    *,
    focal_px: float | None = None,
    camera_height_m: float | None = None,
    pitch_deg: float | None = None,
) -> CameraModel:
    """CARLA defaults overridden by graph options; `source` is "options" when any option was given."""
    base = carla_default(width_px, height_px)
    if focal_px is None and camera_height_m is None and pitch_deg is None:
        return base
    return replace(
        base,
        fx_px=base.fx_px if focal_px is None else float(focal_px),
        fy_px=base.fy_px if focal_px is None else float(focal_px),
        height_m=base.height_m if camera_height_m is None else float(camera_height_m),
        pitch_rad=None if pitch_deg is None else math.radians(float(pitch_deg)),
        source="options",
        assumed=frozenset(
            name for name, value in (("focal", focal_px), ("height", camera_height_m)) if value is None
        ),
    )
