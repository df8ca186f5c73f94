"""`kinegraph synth nuscenes`: a nuScenes-format dataroot rendered from scripted ego maneuvers.

Writes `<out>/v1.0-mini/*.json` with the real table schema (scene, sample, sample_data, ego_pose,
calibrated_sensor, sensor, log, plus the annotation and map tables as empty lists so the official
devkit opens it too), CAM_FRONT keyframes at 2 Hz in `samples/CAM_FRONT/` and the sweeps between them
(~12 Hz) in `sweeps/CAM_FRONT/`, and `synthetic_truth.json` with each scene's scripted segments.
Every scene is a chain of 3 s maneuver segments drawn from the seed; same seed, same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from kinegraph.benchmarks.synthetic.maneuvers import MANEUVERS, EgoTrack, script_scene
from kinegraph.benchmarks.synthetic.road_render import EGO_R_CAM, PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_world import build_world, ego_lane_offset_m
from kinegraph.media import write_image

VERSION = "v1.0-mini"
CHANNEL = "CAM_FRONT"
KEYFRAME_EVERY = 6  # 12 Hz sweeps, 2 Hz keyframes
SEGMENT_S = 3.0
RATE_HZ = 12.0
_LOG_START_US = 1_532_402_900_000_000  # 2018-07-24, the era of the real logs
_SCENE_GAP_US = 60_000_000
EMPTY_TABLES = ("category", "attribute", "visibility", "instance", "sample_annotation", "map")

_ENDS_STOPPED = ("standing", "emergency_stop")
_FROM_STOP = ("standing", "stop_and_go")
_MOVING = tuple(m for m in MANEUVERS if m not in _FROM_STOP)
# Start-speed windows (m/s) the scripted maneuvers are drawn from when scripted alone.
URBAN_START_MPS: dict[str, tuple[float, float]] = {
    "cruise": (6.0, 12.0),
    "accelerate": (5.0, 8.0),
    "brake": (9.0, 13.0),
    "emergency_stop": (7.0, 11.0),
    "left_turn": (6.0, 9.0),
    "right_turn": (6.0, 9.0),
    "lane_change_left": (8.0, 13.0),
    "lane_change_right": (8.0, 13.0),
}


@dataclass(frozen=True)
class SceneSpec:
    """One scene to write: its scripted track and name."""

    name: str
    track: EgoTrack


def token(*parts: object) -> str:
    """A deterministic 32-hex token, like nuScenes' own."""
    return hashlib.md5("/".join(str(p) for p in parts).encode()).hexdigest()


def next_maneuver(rng: np.random.Generator, previous: str, speed_mps: float) -> str:
    """A maneuver that can follow `previous` and whose usual start speed (URBAN_START_MPS) fits the
    current speed; below every window the ego accelerates, above them it brakes."""
    if previous in _ENDS_STOPPED:
        return str(rng.choice(_FROM_STOP))
    fitting = [m for m in _MOVING if URBAN_START_MPS[m][0] <= speed_mps <= URBAN_START_MPS[m][1]]
    if fitting:
        return str(rng.choice(fitting))
    return "accelerate" if speed_mps < min(lo for lo, _ in URBAN_START_MPS.values()) else "brake"


def plan_track(seed_parts: Sequence[int], n_segments: int, rate_hz: float = RATE_HZ) -> EgoTrack:
    """A scripted track of `n_segments` maneuvers chosen one after another so that each starts at a
    speed it is usually driven from (urban traffic: labels stay as scripted), from somewhere on a 4 km
    map with its own heading. A draw the maneuvers cannot realise is redrawn, deterministically."""
    if n_segments < 1:
        raise ValueError(f"need at least one segment per scene, got {n_segments}")
    for attempt in range(100):
        rng = np.random.default_rng([*seed_parts, attempt])
        start_xy = (float(rng.uniform(-2000, 2000)), float(rng.uniform(-2000, 2000)))
        start_yaw = float(rng.uniform(-np.pi, np.pi))
        track_seed = int(rng.integers(2**31))
        names = [str(rng.choice(MANEUVERS))]
        try:
            while True:
                track = script_scene(
                    names, track_seed, segment_s=SEGMENT_S, rate_hz=rate_hz, start_xy_m=start_xy,
                    start_yaw_rad=start_yaw,
                )  # fmt: skip
                if len(names) == n_segments:
                    return track
                names.append(next_maneuver(rng, names[-1], float(track.speed_mps[-1])))
        except ValueError:
            continue
    raise RuntimeError(f"no realisable maneuver plan for seed {list(seed_parts)} in 100 draws")


def plan_scenes(n_scenes: int, seed: int, segments_per_scene: int = 6) -> list[SceneSpec]:
    """`n_scenes` scripted scenes of `segments_per_scene` maneuvers of 3 s each."""
    if n_scenes < 1:
        raise ValueError(f"need at least one scene, got n={n_scenes}")
    if segments_per_scene < 1:
        raise ValueError(f"need at least one segment per scene, got {segments_per_scene}")
    return [
        SceneSpec(name=f"scene-{k + 1:04d}", track=plan_track([seed, k, 7], segments_per_scene))
        for k in range(n_scenes)
    ]


def camera_rotation_wxyz() -> list[float]:
    """The CAM_FRONT mounting rotation (camera -> ego) as a nuScenes quaternion [w, x, y, z]."""
    x, y, z, w = Rotation.from_matrix(EGO_R_CAM).as_quat()
    return [float(w), float(x), float(y), float(z)]


def write_nuscenes(
    out_dir: str | Path,
    scenes: Sequence[SceneSpec],
    seed: int,
    *,
    width_px: int = 800,
    height_px: int = 450,
    jpeg_quality: int = 90,
    render: bool = True,
) -> Path:
    """Render and write `scenes` as a nuScenes dataroot at `out_dir`; returns `out_dir`.
    `render=False` writes the tables only (pose studies; the JPEGs they name are then absent)."""
    root = Path(out_dir)
    camera = PinholeCamera.nuscenes_front(width_px, height_px)
    logfile = f"n000-2018-07-24-00-00-{seed % 60:02d}+0000"
    log_token, sensor_token = token(seed, "log"), token(seed, "sensor", CHANNEL)
    tables: dict[str, list[dict]] = {
        "log": [
            {
                "token": log_token,
                "logfile": logfile,
                "vehicle": "kinegraph-sim",
                "date_captured": "2018-07-24",
                "location": "synthetic-town",
            }
        ],
        "sensor": [{"token": sensor_token, "channel": CHANNEL, "modality": "camera"}],
        "calibrated_sensor": [],
        "scene": [],
        "sample": [],
        "sample_data": [],
        "ego_pose": [],
    }
    truth = []
    for k, spec in enumerate(scenes):
        start_us = _LOG_START_US + k * _SCENE_GAP_US
        rows = _scene_rows(spec, k, seed, start_us, log_token, sensor_token, camera, logfile)
        for table, records in rows.items():
            tables[table].extend(records)
        truth.append(
            {
                "scene_token": rows["scene"][0]["token"],
                "name": spec.name,
                "seed": spec.track.seed,
                "segments": [
                    {
                        "maneuver": name,
                        "start_us": start_us + int(round(a * 1e6)),
                        "end_us": start_us + int(round(b * 1e6)),
                    }
                    for name, a, b in spec.track.segments
                ],
            }
        )
        if render:
            _render_scene(root, spec, k, seed, camera, rows["sample_data"], jpeg_quality)
    table_dir = root / VERSION
    table_dir.mkdir(parents=True, exist_ok=True)
    for name in EMPTY_TABLES:
        tables[name] = []
    for name, records in tables.items():
        (table_dir / f"{name}.json").write_text(json.dumps(records, indent=0))
    (root / "synthetic_truth.json").write_text(json.dumps({"version": VERSION, "scenes": truth}, indent=1))
    return root


def _scene_rows(
    spec: SceneSpec,
    k: int,
    seed: int,
    start_us: int,
    log_token: str,
    sensor_token: str,
    camera: PinholeCamera,
    logfile: str,
) -> dict[str, list[dict]]:
    """The table rows of one scene: one calibrated sensor, keyframe samples, CAM_FRONT sample_data."""
    track = spec.track
    n = len(track.timestamps_s)
    n_samples = (n - 1) // KEYFRAME_EVERY + 1
    n_frames = (n_samples - 1) * KEYFRAME_EVERY + 1  # the camera chain ends on the last keyframe
    times_us = start_us + np.round(track.timestamps_s[:n_frames] * 1e6).astype(np.int64)
    scene_token = token(seed, "scene", k)
    calib_token = token(seed, "calibrated_sensor", k)
    sample_tokens = [token(seed, "sample", k, i) for i in range(n_samples)]
    sd_tokens = [token(seed, "sample_data", k, i) for i in range(n_frames)]
    quats = track.rotation_wxyz()
    calib = {
        "token": calib_token,
        "sensor_token": sensor_token,
        "translation": [camera.mount_forward_m, camera.mount_left_m, camera.mount_height_m],
        "rotation": camera_rotation_wxyz(),
        "camera_intrinsic": camera.intrinsic_matrix().tolist(),
    }
    samples = [
        {
            "token": sample_tokens[i],
            "timestamp": int(times_us[i * KEYFRAME_EVERY]),
            "prev": sample_tokens[i - 1] if i > 0 else "",
            "next": sample_tokens[i + 1] if i + 1 < n_samples else "",
            "scene_token": scene_token,
        }
        for i in range(n_samples)
    ]
    sample_data, ego_poses = [], []
    for i in range(n_frames):
        key = i % KEYFRAME_EVERY == 0
        folder = "samples" if key else "sweeps"
        # A sweep belongs to the next keyframe in time, as in nuScenes.
        owner = sample_tokens[-(-i // KEYFRAME_EVERY)]
        ego_token = sd_tokens[i]  # nuScenes reuses the sample_data token for its ego_pose
        sample_data.append(
            {
                "token": sd_tokens[i],
                "sample_token": owner,
                "ego_pose_token": ego_token,
                "calibrated_sensor_token": calib_token,
                "timestamp": int(times_us[i]),
                "fileformat": "jpg",
                "is_key_frame": key,
                "height": camera.height_px,
                "width": camera.width_px,
                "filename": f"{folder}/{CHANNEL}/{logfile}__{CHANNEL}__{int(times_us[i])}.jpg",
                "prev": sd_tokens[i - 1] if i > 0 else "",
                "next": sd_tokens[i + 1] if i + 1 < n_frames else "",
            }
        )
        ego_poses.append(
            {
                "token": ego_token,
                "timestamp": int(times_us[i]),
                "rotation": [float(q) for q in quats[i]],
                "translation": [float(track.xy_m[i, 0]), float(track.xy_m[i, 1]), 0.0],
            }
        )
    scene = {
        "token": scene_token,
        "log_token": log_token,
        "nbr_samples": n_samples,
        "first_sample_token": sample_tokens[0],
        "last_sample_token": sample_tokens[-1],
        "name": spec.name,
        "description": "synthetic, " + ", ".join(name for name, _, _ in track.segments),
    }
    return {
        "calibrated_sensor": [calib],
        "scene": [scene],
        "sample": samples,
        "sample_data": sample_data,
        "ego_pose": ego_poses,
    }


def _render_scene(
    root: Path,
    spec: SceneSpec,
    k: int,
    seed: int,
    camera: PinholeCamera,
    sample_data: list[dict],
    jpeg_quality: int,
) -> None:
    track = spec.track
    offset = ego_lane_offset_m(track.timestamps_s, track.yaw_rad, track.speed_mps, track.segments)
    world = build_world(track.xy_m, track.yaw_rad, int(token(seed, "world", k)[:8], 16), lane_offset_m=offset)
    renderer = RoadRenderer(world, camera)
    for i, sd in enumerate(sample_data):
        frame = renderer.render(float(track.xy_m[i, 0]), float(track.xy_m[i, 1]), float(track.yaw_rad[i]))
        write_image(root / sd["filename"], frame, quality=jpeg_quality)


def generate(
    out_dir: Path,
    n: int,
    seed: int,
    *,
    width_px: int = 800,
    height_px: int = 450,
    segments_per_scene: int = 6,
) -> Path:
    """`n` scenes of `segments_per_scene` x 3 s (default 18 s, 37 keyframes) at `width_px` x `height_px`."""
    return write_nuscenes(
        out_dir, plan_scenes(n, seed, segments_per_scene), seed, width_px=width_px, height_px=height_px
    )
