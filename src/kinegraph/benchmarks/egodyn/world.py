"""`kinegraph synth egodyn`: EgoDyn-Bench's Hugging Face layout from synthetic worlds.

The nuScenes half goes through the path real data takes: a synthetic nuScenes dataroot
(`<out>/nuscenes/`) is read back with the devkit-free reader and cut into backward-looking 3 s clips
at every keyframe, then kinematics, arrays and the oracle's QA rows. The CARLA half mimics the
Frenetix replay logs: exact 10 Hz poses in non-overlapping 3 s windows (31 frames, stride 30), each
rendered to `carla_videos_simulation/<clip_id>.mp4`. Layout:

    nuscenes/                      v1.0-mini tables, samples/ and sweeps/ CAM_FRONT JPEGs
    nuscenes_clips/                clips_index.jsonl, arrays/<clip_id>.npz, qa.jsonl, metadata.json
    carla_clips/                   clips_index.jsonl, arrays/<clip_id>.npz, qa.jsonl
    carla_videos_simulation/       <clip_id>.mp4 (CommonRoad-style ids, 10 fps)
    selected_clips.json            [{id, source, answers, features}] for every clip
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.benchmarks.egodyn.extract import (
    carla_clip_record,
    extract_nuscenes_clips,
    save_clip_arrays,
    selected_entry,
    write_jsonl,
    write_qa,
)
from kinegraph.benchmarks.nuscenes.loader import NuScenesTables
from kinegraph.benchmarks.nuscenes.world import plan_scenes, plan_track, write_nuscenes
from kinegraph.benchmarks.synthetic.camera_variation import CameraRig, body_pitch_rad, degrade, draw_camera
from kinegraph.benchmarks.synthetic.conditions import Conditions
from kinegraph.benchmarks.synthetic.maneuvers import EgoTrack
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_users import Road, RoadUser, movers_when, traffic_users
from kinegraph.benchmarks.synthetic.road_world import (
    LANE_WIDTH_M,
    asphalt_detail,
    build_world,
    ego_lane_offset_m,
)
from kinegraph.media import write_video
from kinegraph.tools.kinematics import clip_kinematics

CARLA_FPS = 10.0
CARLA_WINDOW_FRAMES = 31  # 3 s at 10 Hz, fencepost included; windows share their end frame
CARLA_WINDOWS_PER_SCENARIO = 4
CARLA_BEHAVIORS = ("Balanced", "Comfort", "Default", "Sporty", "Safety")


def nuscenes_segments_for(n_clips: int) -> int:
    """Segments per scene: 6 (18 s, 31 clips per scene) unless fewer clips are asked for.
    A scene of S segments has 6S+1 keyframes; the first six lack 3 s of history, leaving 6S-5 clips."""
    return 6 if n_clips > 31 else max(2, math.ceil((n_clips + 5) / 6))


def write_carla_clips(
    out_dir: Path,
    n_clips: int,
    seed: int,
    *,
    width_px: int = 640,
    height_px: int = 360,
    varied: bool = False,
    camera_rows: bool = True,
    conditions: Conditions | None = None,
) -> list[dict[str, Any]]:
    """`n_clips` CARLA-style clips: records, arrays and videos; returns the records.

    `varied` draws a camera rig per scenario (`camera_variation.draw_camera`: optics, mounting, body
    pitch, blur, noise, compression) instead of the nuScenes-like camera at `width_px` x `height_px`;
    `camera_rows` writes each clip's camera as the optional `camera` object of its clips_index row.
    `conditions` (implies `varied`) overrides the drawn rig and sets the frame rate and frame times
    (`synthetic.conditions`); the true arrays and answers stay EgoDyn's 31 poses at 10 Hz.
    """
    if conditions is not None:
        varied, camera_rows = True, camera_rows and conditions.camera_given
    clips_dir = out_dir / "carla_clips"
    clips_dir.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    stride = CARLA_WINDOW_FRAMES - 1
    for k in range(math.ceil(n_clips / CARLA_WINDOWS_PER_SCENARIO)):
        rng = np.random.default_rng([seed, k, 11])
        scene = f"SYN_Kinegraph-{k + 1}_1_T-1"
        behavior = CARLA_BEHAVIORS[int(rng.integers(len(CARLA_BEHAVIORS)))]
        track = plan_track([seed, k, 11], CARLA_WINDOWS_PER_SCENARIO, rate_hz=50.0)
        log_t = np.arange(CARLA_WINDOWS_PER_SCENARIO * stride + 1) / CARLA_FPS  # exact 10 Hz log
        xy = np.column_stack([np.interp(log_t, track.timestamps_s, track.xy_m[:, i]) for i in (0, 1)])
        yaw = np.interp(log_t, track.timestamps_s, track.yaw_rad)
        offset = ego_lane_offset_m(track.timestamps_s, track.yaw_rad, track.speed_mps, track.segments)
        world = build_world(track.xy_m, track.yaw_rad, int(rng.integers(2**31)), lane_offset_m=offset)
        traffic = _traffic(track, offset, conditions.traffic if conditions else 0, [seed, k, 19])
        rig = draw_camera(np.random.default_rng([seed, k, 13])) if varied else None
        if rig is not None and conditions is not None:
            rig = conditions.applied_to(rig)
        if rig is not None:  # another renderer's road texture: its own grain contrast and pattern
            world = replace(world, detail=asphalt_detail(rig.asphalt_grain, rig.asphalt_seed))
        camera = rig.camera if rig else PinholeCamera.nuscenes_front(width_px, height_px)
        renderer = RoadRenderer(world, camera)
        accel = np.gradient(track.speed_mps, track.timestamps_s)
        noise_rng = np.random.default_rng([seed, k, 17])
        for w in range(CARLA_WINDOWS_PER_SCENARIO):
            if len(records) >= n_clips:
                break
            window = slice(w * stride, w * stride + CARLA_WINDOW_FRAMES)
            window_t = np.arange(CARLA_WINDOW_FRAMES) / CARLA_FPS
            kinematics = clip_kinematics(window_t, xy[window], yaw[window], clip_s=float(window_t[-1]))
            clip_id = f"{scene}__{behavior}__w{w}"
            array_ref = save_clip_arrays(clips_dir, clip_id, kinematics)
            record = carla_clip_record(clip_id, scene, behavior, w, array_ref, kinematics.features)
            if camera_rows:
                record["camera"] = camera.as_row()
            records.append(record)
            if conditions is None or (conditions.fps == CARLA_FPS and not conditions.frame_jitter):
                times, fps = log_t[window], CARLA_FPS
            else:
                times = log_t[w * stride] + conditions.frame_times_s(float(window_t[-1]), noise_rng)
                fps = conditions.fps
                if conditions.frame_jitter:
                    record["frame_times_s"] = [round(float(t - times[0]), 6) for t in times]
            blur_s = rig.motion_blur_s if rig is not None else 0.0
            frames = [_exposed(renderer, track, t, blur_s, rig, accel, traffic) for t in times]
            if rig is not None:
                frames = [degrade(f, rig, noise_rng, float(t)) for f, t in zip(frames, times, strict=True)]
            write_video(out_dir / "carla_videos_simulation" / f"{clip_id}.mp4", frames, fps)
    write_jsonl(clips_dir / "clips_index.jsonl", records)
    return records


def _exposed(
    renderer: RoadRenderer,
    track: EgoTrack,
    time_s: float,
    exposure_s: float,
    rig: CameraRig | None,
    accel_mps2: np.ndarray,
    traffic: Sequence[RoadUser] = (),
) -> np.ndarray:
    """The frame at `time_s`, averaged over an exposure of `exposure_s` centred on it (motion blur);
    the body pitches with the track's acceleration `accel_mps2` (per track sample) where a rig says so,
    and the `traffic` moves on through the exposure too."""
    times = [time_s] if exposure_s <= 0 else time_s + np.linspace(-exposure_s / 2, exposure_s / 2, 5)
    images = []
    for t in times:
        x, y = (float(np.interp(t, track.timestamps_s, track.xy_m[:, i])) for i in (0, 1))
        yaw = float(np.interp(t, track.timestamps_s, track.yaw_rad))
        pitch = 0.0
        if rig is not None:
            a = np.interp(t, track.timestamps_s, accel_mps2)
            pitch = float(body_pitch_rad(rig, np.array([a]))[0])
        images.append(renderer.render(x, y, yaw, pitch, movers_when(traffic, float(t))))
    if len(images) == 1:
        return images[0]
    return np.clip(np.mean(images, axis=0) + 0.5, 0, 255).astype(np.uint8)


def _traffic(track: EgoTrack, lane_offset_m: np.ndarray, n: int, seed: list[int]) -> list[RoadUser]:
    """`n` vehicles in the lanes beside those the ego drives in (`road_users.traffic_users`)."""
    if n == 0:
        return []
    road = Road.around_ego(track.xy_m, track.yaw_rad, lane_offset_m)
    lanes = np.round(lane_offset_m / LANE_WIDTH_M).astype(int)
    s_ego = float(road.locate(track.xy_m[:1])[0][0])
    duration = float(track.timestamps_s[-1])
    mean_speed = float(np.mean(track.speed_mps))
    outer = (int(lanes.min()) - 1, int(lanes.max()) + 1)
    return traffic_users(road, duration, s_ego, outer, mean_speed, n, np.random.default_rng(seed))


def generate(
    out_dir: Path,
    n: int,
    seed: int,
    *,
    width_px: int = 800,
    height_px: int = 450,
    carla_width_px: int = 640,
    carla_height_px: int = 360,
) -> Path:
    """`n` nuScenes clips and `n` CARLA-style clips in EgoDyn's HF layout under `out_dir`."""
    if n < 1:
        raise ValueError(f"need at least one clip, got n={n}")
    out = Path(out_dir)
    segments = nuscenes_segments_for(n)
    n_scenes = math.ceil(n / (6 * segments - 5))
    write_nuscenes(
        out / "nuscenes", plan_scenes(n_scenes, seed, segments), seed, width_px=width_px, height_px=height_px
    )
    nusc = NuScenesTables(out / "nuscenes")
    nuscenes_records = extract_nuscenes_clips(nusc, out / "nuscenes_clips", max_clips=n)
    nuscenes_qa = write_qa(nuscenes_records, out / "nuscenes_clips")
    carla_records = write_carla_clips(out, n, seed, width_px=carla_width_px, height_px=carla_height_px)
    carla_qa = write_qa(carla_records, out / "carla_clips")
    selected = []
    for source, records, qa in (
        ("nuscenes", nuscenes_records, nuscenes_qa),
        ("carla", carla_records, carla_qa),
    ):
        answers: dict[str, dict[str, Any]] = {}
        for row in qa:
            answers.setdefault(row["clip_id"], {})[row["question_id"]] = row["answer"]
        selected.extend(selected_entry(r, source, answers[r["clip_id"]]) for r in records)
    (out / "selected_clips.json").write_text(json.dumps(selected, indent=1))
    return out
